package tracking_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPayloadAsTheCarrierSentIt: a stored raw event's payload is the
// carrier's JSON of the event as sent (a field the standard does not name
// kept), except where PostgreSQL's jsonb could refuse what Go's decoder
// took (a lone surrogate escape, a number past numeric's range): those
// events' JSON is made again from what was decoded, and the poll is
// written whole instead of failing on one event.
func TestPayloadAsTheCarrierSentIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const page = `[
 {"eventID":"ev-1","eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T08:00:00Z",
  "eventCreatedDateTime":"2026-03-01T08:05:00Z","equipmentEventTypeCode":"GTOT","emptyIndicatorCode":"EMPTY",
  "equipmentReference":"MSKU1234565","ISOEquipmentCode":"42G1","eventLocation":{"UNLocationCode":"DEHAM"},
  "carrierSpecific":{"gate":"4","lane":[1,2]}},
 {"eventID":"ev-2","eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-02T08:00:00Z",
  "eventCreatedDateTime":"2026-03-02T08:05:00Z","equipmentEventTypeCode":"GTIN","emptyIndicatorCode":"LADEN",
  "equipmentReference":"MSKU1234565","eventLocation":{"UNLocationCode":"DEHAM","locationName":"Gate \ud800"}},
 {"eventID":"ev-3","eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-03T08:00:00Z",
  "eventCreatedDateTime":"2026-03-03T08:05:00Z","equipmentEventTypeCode":"GTOT","emptyIndicatorCode":"LADEN",
  "equipmentReference":"MSKU1234565","eventLocation":{"UNLocationCode":"DEHAM"},"grossWeight":1e5000}
]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(srv.Close)
	c := e.config()
	for i := range c.Carriers {
		if c.Carriers[i].SCAC == "MAEU" {
			c.Carriers[i].BaseURL = srv.URL
		}
	}
	id := e.request("bill_of_lading", "PAYLOAD0001", "MAEU")
	e.engine(c)
	if r := e.waitFor(id, func(r reqRow) bool { return r.Status != "pending" }); r.Status != "created" {
		t.Fatalf("request %+v", r)
	}
	rows, err := e.store.SQL().Query(`SELECT carrier_event_id, payload FROM raw_events WHERE account_id = $1 ORDER BY carrier_event_id`, e.acct)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]map[string]any{}
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got[id] = m
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("raw events %v", got)
	}
	if cs, _ := got["ev-1"]["carrierSpecific"].(map[string]any); cs["gate"] != "4" {
		t.Errorf("ev-1: the carrier's own field lost: %v", got["ev-1"])
	}
	if loc, _ := got["ev-2"]["eventLocation"].(map[string]any); loc["locationName"] != "Gate \uFFFD" {
		t.Errorf("ev-2: %v", got["ev-2"])
	}
	if _, ok := got["ev-3"]["grossWeight"]; ok || got["ev-3"]["equipmentEventTypeCode"] != "GTOT" {
		t.Errorf("ev-3: %v", got["ev-3"])
	}
}
