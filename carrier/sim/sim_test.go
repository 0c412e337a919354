package sim_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"shipgraph/carrier/numbers"
	"shipgraph/carrier/sim"
)

// TestAnswersAreDCSA validates every answer against the DCSA v2.2 document:
// every number the simulator knows at the epoch, and a sample of them at
// points in time from before their booking to long after delivery.
func TestAnswersAreDCSA(t *testing.T) {
	evSchema, errSchema := schemas(t)
	s := start(t, sim.Options{Seed: 7})
	ns := s.Numbers()
	times := []time.Duration{0, -50 * 24 * time.Hour, -10 * 24 * time.Hour, 5 * 24 * time.Hour, 20 * 24 * time.Hour, 90 * 24 * time.Hour}
	checked, events := 0, 0
	for ti, d := range times {
		s.Clock.Set(epoch.Add(d))
		for i, n := range ns {
			if ti > 0 && i%5 != ti%5 {
				continue
			}
			got, pages := all(t, eventsURL(s.URL, n, "&limit=250"))
			for pi, p := range pages {
				validate(t, evSchema, fmt.Sprintf("%s %s at %s page %d", n.SCAC, n.RequestNumber, d, pi), p)
			}
			if d == 0 && len(got) == 0 {
				t.Errorf("%s %s (%s, %s): no events at the epoch", n.SCAC, n.RequestNumber, n.RequestType, n.State)
			}
			checked++
			events += len(got)
		}
	}
	t.Logf("%d answers, %d events valid", checked, events)
	// The validator has teeth: a classifier outside the table, or a
	// transport event without its transport call, is refused.
	for _, bad := range []string{
		`[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"TRANSPORT","eventClassifierCode":"XXX","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","transportEventTypeCode":"ARRI","transportCall":{"transportCallID":"x","modeOfTransport":"VESSEL"}}]`,
		`[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"TRANSPORT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","transportEventTypeCode":"ARRI"}]`,
		`[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"yesterday","eventCreatedDateTime":"2026-03-01T00:00:00Z","equipmentEventTypeCode":"LOAD","emptyIndicatorCode":"LADEN"}]`,
	} {
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
		if evSchema.Validate(v) == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
	// Errors are the standard's error object.
	for _, u := range []string{"/MAEU/v2/events", "/MAEU/v2/events?transportDocumentReference=X&limit=0", "/XXXX/v2/events?carrierBookingReference=1", "/MAEU/v2/events?cursor=nope", "/MAEU/v2/events?cursor=eyJxIjp7ImxpbWl0IjoxfX0"} {
		res, b := get(t, s.URL+u)
		if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %s, want 400 or 404", u, res.Status)
		}
		validate(t, errSchema, u, b)
	}
}

// TestNumbers checks the numbers: states, ISO 6346 and IMO check digits,
// BOL prefixes, and that any other number is not known.
func TestNumbers(t *testing.T) {
	s := start(t, sim.Options{Seed: 3})
	ns := s.Numbers()
	states := map[string]int{}
	types := map[string]int{}
	lines := map[string]string{"MAEU": "MAEU", "MSCU": "MEDU", "CMDU": "CMDU", "HLCU": "HLCU", "ONEY": "ONEY", "EGLV": "EISU", "COSU": "CCMJ", "ZIMU": "ZIMU"}
	seen := map[string]bool{}
	for _, n := range ns {
		states[n.State]++
		types[n.RequestType]++
		key := n.SCAC + "/" + n.RequestNumber
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		switch n.RequestType {
		case "container":
			if !numbers.ValidContainer(n.RequestNumber) {
				t.Errorf("%s: not a valid ISO 6346 number", n.RequestNumber)
			}
		case "bill_of_lading":
			if !strings.HasPrefix(n.RequestNumber, lines[n.SCAC]) || !numbers.ValidReference(n.RequestNumber) {
				t.Errorf("%s %s: not the line's BOL prefix and digits", n.SCAC, n.RequestNumber)
			}
		case "booking_number":
			if !numbers.ValidReference(n.RequestNumber) {
				t.Errorf("%s: not a valid reference", n.RequestNumber)
			}
		default:
			t.Errorf("request type %q", n.RequestType)
		}
	}
	if states["tracked"] == 0 || states["awaiting_manifest"] == 0 || types["container"] == 0 || types["bill_of_lading"] == 0 || types["booking_number"] == 0 {
		t.Fatalf("states %v, types %v: every state and type wanted", states, types)
	}
	// /sim/numbers says the same over HTTP.
	res, b := get(t, s.URL+"/sim/numbers")
	var over []sim.Number
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &over) != nil || !slices.Equal(over, ns) {
		t.Fatalf("/sim/numbers: %s, %d numbers, want the %d of Numbers()", res.Status, len(over), len(ns))
	}

	// Every vessel of every event has a valid IMO number; containers carry
	// ISO 6346 numbers.
	s.Clock.Set(epoch.Add(60 * 24 * time.Hour))
	vessels, rail, transship := 0, 0, 0
	for _, n := range ns {
		if n.RequestType != "bill_of_lading" {
			continue
		}
		got, _ := all(t, eventsURL(s.URL, n, "&limit=1000"))
		imos := map[string]bool{}
		for _, e := range got {
			if e.EquipmentReference != "" && !numbers.ValidContainer(e.EquipmentReference) {
				t.Errorf("%s: equipment %s not ISO 6346", n.RequestNumber, e.EquipmentReference)
			}
			if e.TransportCall == nil {
				continue
			}
			if e.TransportCall.ModeOfTransport == "RAIL" {
				rail++
			}
			if v := e.TransportCall.Vessel; v != nil {
				vessels++
				imos[v.VesselIMONumber] = true
				if !numbers.ValidIMO(v.VesselIMONumber) {
					t.Errorf("%s: vessel IMO %s not valid", n.RequestNumber, v.VesselIMONumber)
				}
			}
		}
		if len(imos) > 1 {
			transship++
		}
	}
	if vessels == 0 || rail == 0 || transship == 0 {
		t.Errorf("vessel calls %d, rail events %d, transshipped shipments %d: each wanted", vessels, rail, transship)
	}

	// Numbers nobody booked are not known: an empty list, as the standard's
	// filter semantics give.
	for _, u := range []string{
		"/MAEU/v2/events?equipmentReference=CSQU3054383",
		"/MAEU/v2/events?transportDocumentReference=MAEU000000001",
		"/MAEU/v2/events?carrierBookingReference=123",
	} {
		res, b := get(t, s.URL+u)
		if res.StatusCode != http.StatusOK || string(b) != "[]" {
			t.Errorf("%s: %s %s, want 200 []", u, res.Status, b)
		}
	}
	// A number of one carrier is not known to another.
	n := ns[0]
	other := "MSCU"
	if n.SCAC == other {
		other = "MAEU"
	}
	if res, b := get(t, strings.Replace(eventsURL(s.URL, n, ""), "/"+n.SCAC+"/", "/"+other+"/", 1)); string(b) != "[]" {
		t.Errorf("%s asked of %s: %s %s, want []", n.RequestNumber, other, res.Status, b)
	}
}

// TestDeterministic: the same seed gives the same numbers and the same
// events with the same ids; another seed other numbers.
func TestDeterministic(t *testing.T) {
	a, b := start(t, sim.Options{Seed: 11}), start(t, sim.Options{Seed: 11})
	c := start(t, sim.Options{Seed: 12})
	if !slices.Equal(a.Numbers(), b.Numbers()) {
		t.Fatal("same seed, different numbers")
	}
	if slices.Equal(a.Numbers(), c.Numbers()) {
		t.Fatal("different seeds, same numbers")
	}
	for i, n := range a.Numbers() {
		if i%9 != 0 {
			continue
		}
		_, pa := all(t, eventsURL(a.URL, n, "&limit=1000"))
		_, pb := all(t, eventsURL(b.URL, n, "&limit=1000"))
		if !bytes.Equal(bytes.Join(pa, nil), bytes.Join(pb, nil)) {
			t.Fatalf("%s: same seed, different events", n.RequestNumber)
		}
	}
}

// TestClockAdvances: published events never change or vanish; estimated
// arrivals move (new EST events, new ids) and actual events appear as the
// clock passes them; a booking awaiting its manifest gets its containers.
func TestClockAdvances(t *testing.T) {
	s := start(t, sim.Options{Seed: 5})
	ns := s.Numbers()
	var bls, waiting []sim.Number
	for _, n := range ns {
		switch {
		case n.RequestType == "bill_of_lading":
			bls = append(bls, n)
		case n.State == "awaiting_manifest":
			waiting = append(waiting, n)
		}
	}
	step := 2 * 24 * time.Hour
	prev := map[string]map[string]string{} // number → eventID → JSON
	moved, actualsAppeared := 0, 0
	for at := epoch.Add(-30 * 24 * time.Hour); at.Before(epoch.Add(80 * 24 * time.Hour)); at = at.Add(step) {
		s.Clock.Set(at)
		for _, n := range bls[:12] {
			res, b := get(t, eventsURL(s.URL, n, "&limit=1000"))
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %s", n.RequestNumber, res.Status)
			}
			var raws []json.RawMessage
			var got []ev
			_ = json.Unmarshal(b, &raws)
			_ = json.Unmarshal(b, &got)
			now := map[string]string{}
			for i, e := range got {
				now[e.EventID] = string(raws[i])
				created, err := time.Parse(time.RFC3339, e.EventCreatedDateTime)
				if err != nil || created.After(at) {
					t.Fatalf("%s: event %s created %s, after the clock %s", n.RequestNumber, e.EventID, e.EventCreatedDateTime, at)
				}
				if e.EventClassifierCode == "ACT" {
					if happened, _ := time.Parse(time.RFC3339, e.EventDateTime); happened.After(at) {
						t.Fatalf("%s: actual event %s in the future", n.RequestNumber, e.EventID)
					}
					if _, was := prev[n.RequestNumber][e.EventID]; !was && len(prev[n.RequestNumber]) > 0 {
						actualsAppeared++
					}
				}
				if e.EventClassifierCode == "EST" && e.TransportEventTypeCode == "ARRI" {
					if _, was := prev[n.RequestNumber][e.EventID]; !was && len(prev[n.RequestNumber]) > 0 {
						moved++
					}
				}
			}
			for id, j := range prev[n.RequestNumber] {
				if now[id] != j {
					t.Fatalf("%s: event %s changed or vanished as the clock moved to %s", n.RequestNumber, id, at)
				}
			}
			prev[n.RequestNumber] = now
		}
	}
	if moved == 0 || actualsAppeared == 0 {
		t.Fatalf("new arrival estimates %d, actual events appearing %d: both wanted", moved, actualsAppeared)
	}
	t.Logf("%d new arrival estimates, %d actual events appeared", moved, actualsAppeared)

	// Awaiting the manifest: only shipment events at the epoch, equipment later.
	s.Clock.Set(epoch)
	n := waiting[0]
	got, _ := all(t, eventsURL(s.URL, n, ""))
	if len(got) == 0 {
		t.Fatalf("%s: booking not known at the epoch", n.RequestNumber)
	}
	for _, e := range got {
		if e.EventType != "SHIPMENT" {
			t.Fatalf("%s awaiting its manifest: a %s event at the epoch", n.RequestNumber, e.EventType)
		}
	}
	s.Clock.Set(epoch.Add(30 * 24 * time.Hour))
	got, _ = all(t, eventsURL(s.URL, n, ""))
	boxes := 0
	for _, e := range got {
		if e.EventType == "EQUIPMENT" {
			boxes++
		}
	}
	if boxes == 0 {
		t.Fatalf("%s: no equipment events 30 days after the epoch", n.RequestNumber)
	}
}

// TestPages: following Next-Page gives every event once, as one big page
// does, even when the clock moves between pages; the filters hold.
func TestPages(t *testing.T) {
	s := start(t, sim.Options{Seed: 2})
	s.Clock.Set(epoch.Add(40 * 24 * time.Hour))
	for i, n := range s.Numbers() {
		if i%4 != 0 {
			continue
		}
		whole, pages := all(t, eventsURL(s.URL, n, "&limit=1000"))
		if len(pages) != 1 {
			t.Fatalf("%s: %d pages at limit 1000", n.RequestNumber, len(pages))
		}
		// Pages of 7, the clock moving on while they are read.
		u := eventsURL(s.URL, n, "&limit=7")
		var paged []ev
		for p := 0; u != ""; p++ {
			res, b := get(t, u)
			var page []ev
			if res.StatusCode != http.StatusOK || json.Unmarshal(b, &page) != nil || len(page) > 7 {
				t.Fatalf("%s page %d: %s %s", n.RequestNumber, p, res.Status, b)
			}
			paged = append(paged, page...)
			u = res.Header.Get("Next-Page")
			s.Clock.Set(s.Clock.Now().Add(24 * time.Hour))
		}
		s.Clock.Set(epoch.Add(40 * 24 * time.Hour))
		if len(paged) != len(whole) {
			t.Fatalf("%s: %d events over pages, %d in one", n.RequestNumber, len(paged), len(whole))
		}
		ids := map[string]bool{}
		for k := range paged {
			if paged[k].EventID != whole[k].EventID || ids[paged[k].EventID] {
				t.Fatalf("%s: event %d differs or repeats across pages", n.RequestNumber, k)
			}
			ids[paged[k].EventID] = true
		}
	}
	// A forged cursor with numbers that would overflow the page bounds is
	// served an empty page, not a panic.
	var booking sim.Number
	for _, n := range s.Numbers() {
		if n.RequestType == "booking_number" {
			booking = n
			break
		}
	}
	forged := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"q":{"bkg":%q,"limit":9223372036854775807},"t":"2026-04-01T00:00:00Z","o":9223372036854775000}`, booking.RequestNumber))
	if res, b := get(t, s.URL+"/"+booking.SCAC+"/v2/events?cursor="+forged); res.StatusCode != 200 || string(b) != "[]" {
		t.Fatalf("forged cursor: %s %s", res.Status, b)
	}
	// eventType and code filters.
	n := s.Numbers()[0]
	got, _ := all(t, eventsURL(s.URL, n, "&eventType=TRANSPORT,SHIPMENT&transportEventTypeCode=ARRI"))
	if len(got) == 0 {
		t.Fatal("no TRANSPORT or SHIPMENT events")
	}
	for _, e := range got {
		if e.EventType == "EQUIPMENT" || (e.EventType == "TRANSPORT" && e.TransportEventTypeCode != "ARRI") {
			t.Fatalf("filter eventType=TRANSPORT,SHIPMENT&transportEventTypeCode=ARRI let through %+v", e)
		}
	}
	since := epoch.Add(10 * 24 * time.Hour).Format(time.RFC3339)
	got, _ = all(t, eventsURL(s.URL, n, "&eventCreatedDateTime:gte="+since))
	for _, e := range got {
		if e.EventCreatedDateTime < since {
			t.Fatalf("eventCreatedDateTime:gte=%s let through %s", since, e.EventCreatedDateTime)
		}
	}
}

// TestNumbersVoyage: each number says where its voyage is on the
// simulator's clock (not_departed, at_sea, finished, from its first
// departure and last arrival), over HTTP too, and it moves with the clock;
// AtSea names a bill of lading at sea.
func TestNumbersVoyage(t *testing.T) {
	s := start(t, sim.Options{Seed: 3})
	count := func() map[string]int {
		t.Helper()
		now := s.Clock.Now()
		out := map[string]int{}
		for _, n := range s.Numbers() {
			out[n.Voyage]++
			want := sim.VoyageFinished
			switch {
			case now.Before(n.DepartsAt):
				want = sim.VoyageNotDeparted
			case now.Before(n.ArrivesAt):
				want = sim.VoyageAtSea
			}
			if n.Voyage != want || !n.DepartsAt.Before(n.ArrivesAt) {
				t.Errorf("%s at %s: voyage %q (departs %s, arrives %s), want %q", n.RequestNumber, now, n.Voyage, n.DepartsAt, n.ArrivesAt, want)
			}
		}
		return out
	}
	at := count()
	if at[sim.VoyageAtSea] == 0 || at[sim.VoyageFinished]+at[sim.VoyageNotDeparted] == 0 {
		t.Fatalf("at the epoch: %v; some at sea and some not wanted", at)
	}
	n, ok := s.AtSea()
	if !ok || n.Voyage != sim.VoyageAtSea || n.RequestType != "bill_of_lading" {
		t.Fatalf("AtSea: %+v %v", n, ok)
	}
	res, b := get(t, s.URL+"/sim/numbers")
	var over []map[string]any
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &over) != nil || len(over) == 0 || over[0]["voyage"] == nil || over[0]["arrives_at"] == nil {
		t.Fatalf("/sim/numbers: %s %.300s", res.Status, b)
	}
	s.Clock.Set(s.Clock.Now().Add(365 * 24 * time.Hour))
	if late := count(); late[sim.VoyageFinished] != len(s.Numbers()) {
		t.Errorf("a year on: %v, want every voyage finished", late)
	}
}
