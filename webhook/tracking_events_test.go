package webhook_test

import (
	"context"
	"testing"

	"shipgraph/model"
	"shipgraph/webhook"
)

// TestTrackingRequestEvents: each transition of a tracking request's
// status, written to its row, raises its event through the change log and
// the fan-out, with the request as the reference; stopping a shipment's
// tracking (through the store, or plain SQL) stops its request in the
// same transaction, which raises tracking_stopped (and a resume,
// succeeded).
func TestTrackingRequestEvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	hook := e.webhook(t, e.acme, "https://hooks.example.com/", webhook.EventTrackingSucceeded, webhook.EventTrackingFailed,
		webhook.EventTrackingAwaitingManifest, webhook.EventTrackingStopped)
	f := webhook.NewFanOut(e.Store, e.config(webhook.Config{}), nil)
	drain(t, f) // the seed's changes, if any

	req := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: "MEDUEVENTS1", Scac: "MSCU"}
	if err := e.Store.CreateTrackingRequest(ctx, e.acme, req, nil, nil); err != nil {
		t.Fatal(err)
	}
	raised := func(want ...string) {
		t.Helper()
		drain(t, f)
		rows, err := e.Store.SQL().Query(`SELECT event, reference_type, reference_id FROM webhook_notifications
			WHERE webhook_id = $1 ORDER BY change_id, event`, hook)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var ev, typ, id string
			if err := rows.Scan(&ev, &typ, &id); err != nil {
				t.Fatal(err)
			}
			got = append(got, ev)
			if typ != model.TrackingRequestType {
				t.Errorf("%s: reference %s %s, want the tracking request", ev, typ, id)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("notifications %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("notifications %v, want %v", got, want)
			}
		}
	}
	raised() // created pending: nothing yet
	set := func(status, reason string) {
		t.Helper()
		var r any
		if reason != "" {
			r = reason
		}
		e.Exec(t, `UPDATE tracking_requests SET status = $3, failed_reason = $4, updated_at = now() WHERE account_id = $1 AND id = $2`,
			e.acme, req.ID, status, r)
	}
	set("awaiting_manifest", "")
	raised(webhook.EventTrackingAwaitingManifest)
	e.Exec(t, `UPDATE tracking_requests SET retry_count = 2, is_retrying = true WHERE id = $1 AND account_id = $2`, req.ID, e.acme)
	raised(webhook.EventTrackingAwaitingManifest) // a retry is no transition
	set("failed", "not_found")
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed)
	set("pending", "")
	set("created", "")
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded)

	// stop_tracking and resume_tracking of a shipment, through the store.
	var ship, seeded string
	e.one(t, `SELECT s.id, r.id FROM shipments s JOIN tracking_requests r ON r.account_id = s.account_id AND r.shipment_id = s.id
		WHERE s.account_id = '`+e.acme+`' AND s.line_tracking_stopped_at IS NULL AND r.status = 'created' ORDER BY s.id LIMIT 1`, &ship, &seeded)
	if _, err := e.Store.StopTracking(ctx, e.acme, ship, nil); err != nil {
		t.Fatal(err)
	}
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
	var status, ref string
	e.one(t, `SELECT r.status, n.reference_id FROM tracking_requests r JOIN webhook_notifications n ON n.account_id = r.account_id
		WHERE r.account_id = '`+e.acme+`' AND r.id = '`+seeded+`' AND n.event = 'tracking_request.tracking_stopped'`, &status, &ref)
	if status != "tracking_stopped" || ref != seeded {
		t.Errorf("stopped request: status %s, notification about %s, want %s", status, ref, seeded)
	}
	if _, err := e.Store.ResumeTracking(ctx, e.acme, ship); err != nil {
		t.Fatal(err)
	}
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped,
		webhook.EventTrackingSucceeded)
	// The shipping line's stop written with plain SQL: the same rule.
	e.Exec(t, `UPDATE shipments SET line_tracking_stopped_at = now(), line_tracking_stopped_reason = 'past_arrival_window'
		WHERE account_id = $1 AND id = $2`, e.acme, ship)
	raised(webhook.EventTrackingAwaitingManifest, webhook.EventTrackingFailed, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped,
		webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)
}
