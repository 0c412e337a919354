package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/webhook"
)

// orderedHit is one request the ordering receiver got.
type orderedHit struct {
	event, status, record string
	code                  int
}

// TestOneRecordsEventsInOrder: a tracking request that succeeds and stops
// in one transaction (a poll finding a voyage that ended) raises
// tracking_request.succeeded then .tracking_stopped; the receiver fails
// the succeeded notification until another record's notification has
// arrived. tracking_stopped must not be delivered before succeeded is
// (the earlier, in backoff, holds the later of the same record), the
// other record is not held by it, and the succeeded payload says created
// (the request's status as of that event), not tracking_stopped.
func TestOneRecordsEventsInOrder(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	request := func(number string) string {
		t.Helper()
		r := &model.TrackingRequest{RequestType: "bill_of_lading", RequestNumber: number, Scac: "MSCU"}
		if err := e.Store.CreateTrackingRequest(ctx, e.acme, r, nil, nil); err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	a, b := request("MEDUORDER1"), request("MEDUORDER2")

	var mu sync.Mutex
	var hits []orderedHit
	otherSeen, aFailed := false, false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var doc struct {
			Data struct {
				Attributes struct {
					Event, Record string
				} `json:"attributes"`
			} `json:"data"`
			Included []struct {
				Attributes struct {
					Status string `json:"status"`
				} `json:"attributes"`
			} `json:"included"`
		}
		_ = json.Unmarshal(body, &doc)
		h := orderedHit{event: doc.Data.Attributes.Event, record: doc.Data.Attributes.Record, code: 200}
		if len(doc.Included) > 0 {
			h.status = doc.Included[0].Attributes.Status
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case h.record == b:
			otherSeen = true
		case h.event == webhook.EventTrackingSucceeded && (!otherSeen || !aFailed):
			h.code, aFailed = 500, true
		}
		hits = append(hits, h)
		w.WriteHeader(h.code)
	}))
	t.Cleanup(srv.Close)
	e.webhook(t, e.acme, srv.URL, webhook.EventTrackingSucceeded, webhook.EventTrackingStopped)

	// Both transitions of a in one transaction, then b's.
	tx, err := e.Store.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"created", "tracking_stopped"} {
		if _, err := tx.ExecContext(ctx, `UPDATE tracking_requests SET status = $3, updated_at = now() WHERE account_id = $1 AND id = $2`,
			e.acme, a, st); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tracking_requests SET status = 'created', updated_at = now() WHERE account_id = $1 AND id = $2`,
		e.acme, b); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	// The payload says which record, and the reference object's frozen
	// attributes (the request's status as of the event).
	payload := func(ctx context.Context, account, id string) ([]byte, error) {
		var event, ref string
		var p []byte
		if err := e.Store.SQL().QueryRowContext(ctx, `SELECT event, reference_id, coalesce(payload, '{}') FROM webhook_notifications
			WHERE account_id = $1 AND id = $2`, account, id).Scan(&event, &ref, &p); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"data": map[string]any{"id": id, "attributes": map[string]any{"event": event, "record": ref}},
			"included": []any{map[string]any{"attributes": json.RawMessage(p)}}})
	}
	e.start(t, e.Store, webhook.Config{Payload: payload, PerWebhook: 2})

	delivered := func() []orderedHit {
		mu.Lock()
		defer mu.Unlock()
		var out []orderedHit
		for _, h := range hits {
			if h.code == 200 {
				out = append(out, h)
			}
		}
		return out
	}
	testkit.WaitFor(t, 30*time.Second, "three notifications delivered", func() bool { return len(delivered()) >= 3 })

	mu.Lock()
	all := append([]orderedHit(nil), hits...)
	mu.Unlock()
	var ofA []orderedHit
	for _, h := range all {
		if h.record == a {
			ofA = append(ofA, h)
		}
	}
	// Every attempt of a's succeeded comes before its tracking_stopped.
	if n := len(ofA); n < 3 || ofA[n-1].event != webhook.EventTrackingStopped || ofA[n-1].code != 200 {
		t.Fatalf("request a's requests %+v: want succeeded failed, succeeded delivered, then tracking_stopped", ofA)
	}
	for _, h := range ofA[:len(ofA)-1] {
		if h.event != webhook.EventTrackingSucceeded {
			t.Fatalf("request a's requests %+v: tracking_stopped before succeeded was delivered", ofA)
		}
		if h.status != "created" {
			t.Errorf("succeeded's reference object says status %q, want created (as of the event)", h.status)
		}
	}
	if last := ofA[len(ofA)-1]; last.status != "tracking_stopped" {
		t.Errorf("tracking_stopped's reference object says status %q", last.status)
	}
	// b was not held by a's failing notification: it arrived before a's
	// succeeded was delivered.
	firstB, aOK := -1, -1
	for i, h := range all {
		if h.record == b && firstB < 0 {
			firstB = i
		}
		if h.record == a && h.code == 200 && aOK < 0 {
			aOK = i
		}
	}
	if firstB < 0 || firstB > aOK {
		t.Errorf("requests %+v: b's notification waited for a's", all)
	}
}
