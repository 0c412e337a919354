package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest"
	"shipgraph/webhook"
)

// The server's wiring: the body is rest.NotificationPayload's document.
func TestPayloadIsTheV2Document(t *testing.T) {
	e := newEnv(t)
	r := newReceiver(t)
	c1, s1 := e.containerOf(t, e.acme, 0)
	e.Exec(t, `UPDATE containers SET current_status = 'on_ship' WHERE id = $1`, c1)
	e.webhook(t, e.acme, r.URL, webhook.EventContainerUpdated, webhook.EventTransportAvailable, webhook.EventShipmentEstimatedArrival)
	res := resolve.New(e.Store, resolve.Deps{})
	e.start(t, e.Store, webhook.Config{Payload: func(ctx context.Context, account, id string) ([]byte, error) {
		return rest.NotificationPayload(ctx, res, rest.Config{}, account, id)
	}})
	e.Exec(t, `UPDATE containers SET current_status = 'available', pickup_appointment_at = '2026-03-05T08:30:00Z' WHERE id = $1`, c1)
	e.Exec(t, `UPDATE shipments SET pod_eta_at = '2026-04-01T00:00:00Z' WHERE id = $1`, s1)
	type resource struct {
		ID            string          `json:"id"`
		Type          string          `json:"type"`
		Attributes    json.RawMessage `json:"attributes"`
		Relationships map[string]struct {
			Data json.RawMessage `json:"data"`
		} `json:"relationships"`
	}
	got := map[string]bool{}
	for len(got) < 3 {
		d := r.wait(t, 15*time.Second)
		var doc struct {
			Data     resource   `json:"data"`
			Included []resource `json:"included"`
		}
		if err := json.Unmarshal(d.body, &doc); err != nil {
			t.Fatalf("%v: %s", err, d.body)
		}
		if !webhook.Verify("secret-"+r.URL, d.body, d.header.Get(webhook.SignatureHeader)) {
			t.Errorf("signature does not verify")
		}
		var attrs struct {
			Event string `json:"event"`
		}
		_ = json.Unmarshal(doc.Data.Attributes, &attrs)
		if doc.Data.Type != "webhook_notification" {
			t.Fatalf("primary data %s", d.body)
		}
		got[attrs.Event] = true
		types := map[string]json.RawMessage{}
		for _, inc := range doc.Included {
			types[inc.Type] = inc.Attributes
		}
		switch attrs.Event {
		case webhook.EventContainerUpdated:
			var a struct {
				Changeset map[string][2]any `json:"changeset"`
			}
			_ = json.Unmarshal(types["container_updated_event"], &a)
			if v := a.Changeset["pickup_appointment_at"]; v[1] != "2026-03-05T08:30:00Z" {
				t.Errorf("container_updated_event changeset %v in %s", a.Changeset, d.body)
			}
			if types["container"] == nil {
				t.Errorf("the container is not included: %s", d.body)
			}
		case webhook.EventTransportAvailable:
			if types["transport_event"] == nil || types["container"] == nil {
				t.Errorf("transport_event or container missing: %s", d.body)
			}
		case webhook.EventShipmentEstimatedArrival:
			var a struct {
				Estimated string `json:"estimated_timestamp"`
			}
			_ = json.Unmarshal(types["estimated_event"], &a)
			if a.Estimated != "2026-04-01T00:00:00Z" || types["shipment"] == nil {
				t.Errorf("estimated_event %s", d.body)
			}
		default:
			t.Errorf("unexpected event %q: %s", attrs.Event, d.body)
		}
	}
}

// TestTrackingPayloadAsOfEvent: a tracking request that succeeds and stops
// in one transaction is tracking_stopped when its notifications are
// rendered; the /v2 body of each still shows the request as of its event
// (succeeded: created; tracking_stopped: tracking_stopped).
func TestTrackingPayloadAsOfEvent(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
	req := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUASOF1", Scac: "MSCU"}
	if err := e.Store.CreateTrackingRequest(ctx, e.acme, req, nil, nil); err != nil {
		t.Fatal(err)
	}
	tx, err := e.Store.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"created", "tracking_stopped"} {
		if _, err := tx.ExecContext(ctx, `UPDATE tracking_requests SET status = $3 WHERE account_id = $1 AND id = $2`, e.acme, req.ID, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	drain(t, webhook.NewFanOut(e.Store, e.config(webhook.Config{}), nil))
	res := resolve.New(e.Store, resolve.Deps{})
	rows, err := e.Store.SQL().QueryContext(ctx, `SELECT id, event FROM webhook_notifications WHERE account_id = $1 AND reference_id = $2
		ORDER BY change_id`, e.acme, req.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id, event string
		if err := rows.Scan(&id, &event); err != nil {
			t.Fatal(err)
		}
		body, err := rest.NotificationPayload(ctx, res, rest.Config{}, e.acme, id)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Included []struct {
				Type       string `json:"type"`
				ID         string `json:"id"`
				Attributes struct {
					Status string `json:"status"`
				} `json:"attributes"`
			} `json:"included"`
		}
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatal(err)
		}
		status := "(not included)"
		for _, inc := range doc.Included {
			if inc.Type == model.TrackingRequestType && inc.ID == req.ID {
				status = inc.Attributes.Status
			}
		}
		got = append(got, event+" "+status)
	}
	want := []string{webhook.EventTrackingSucceeded + " created", webhook.EventTrackingStopped + " tracking_stopped"}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("rendered %q, want %q", got, want)
	}
}
