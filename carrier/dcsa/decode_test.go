package dcsa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodePageV1 is decodePage as it was with encoding/json (json.Unmarshal
// of the page, each event's Raw kept by Event.UnmarshalJSON): what the
// one-pass decoder must accept, refuse and decode alike.
func decodePageV1(body []byte) ([]Event, error) {
	if bytes.Contains(body, []byte(`\u0000`)) {
		return nil, errors.New("a string holds a NUL character")
	}
	var events []Event
	if err := json.Unmarshal(body, &events); err != nil {
		return nil, fmt.Errorf("not a JSON array of DCSA events: %w", err)
	}
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return nil, fmt.Errorf("event %d (%q): %w", i, events[i].EventID, err)
		}
	}
	return events, nil
}

// FuzzDecodePage: no input makes the page decoder (JSON, then Validate on
// each event) or the error object reader panic, what it accepts passes
// Validate, and it accepts exactly what encoding/json's decode of the page
// accepted (decodePageV1), with the same events and each its same Raw.
// Run longer with: go test -fuzz FuzzDecodePage ./carrier/dcsa/
func FuzzDecodePage(f *testing.F) {
	seeds := []string{
		`[]`, `null`, `{}`, `[null]`, `[{}]`, `"x"`, `[1,2]`, ``, `[`,
		`[{"eventID":"4a7f0e0e-1b1c-4f45-9d0a-2f2e3b1c9d11","eventType":"SHIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","shipmentEventTypeCode":"CONF","documentTypeCode":"BKG","documentID":"123"}]`,
		`[{"eventType":"TRANSPORT","eventClassifierCode":"EST","eventDateTime":"2026-03-01T00:00:00+08:30","eventCreatedDateTime":"2026-03-01T00:00:00Z","transportEventTypeCode":"ARRI","transportCall":{"transportCallID":"x","modeOfTransport":"VESSEL","vessel":{"vesselIMONumber":"9321483"},"location":{"latitude":"1"}}}]`,
		`[{"eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","equipmentEventTypeCode":"LOAD","emptyIndicatorCode":"LADEN","seals":[{"sealNumber":"1","sealType":"BLT"}],"transportCall":{"transportCallID":"x","modeOfTransport":"RAIL","vessel":{}}}]`,
		`[{"eventID":42,"eventType":["EQUIPMENT"],"eventDateTime":1700000000}]`,
		`[{"eventType":"SHIPMENT","documentID":"\u0000"}]`,
		// encoding/json's leniencies, kept: names in any case, the
		// last of duplicate names, invalid UTF-8; and what it refused:
		// more after the array, a second array.
		`[{"EVENTID":"x","eventtype":"SHIPMENT","eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00.5-01:00","equipmentEventTypeCode":"LOAD","emptyIndicatorCode":"LADEN","equipmentReference":"` + "\xff\xfe" + `","seals":null,"references":[]}]`,
		`[] x`, `[] []`, `null null`, ` [ ] `, `[{"eventType":"SHIPMENT"},]`, `[{"eventDateTime":"2026-03-01T00:00:00"}]`,
		`[{"eventDateTime":"2026-03-01 00:00:00Z"}]`, `[{"eventDateTime":null,"transportCall":null,"seals":[null]}]`,
		`[{"transportCall":{"transportCallSequenceNumber":1.5}}]`, `[{"transportCall":{"transportCallSequenceNumber":"1"}}]`,
		`{"httpMethod":"GET","requestUri":"/v2/events","statusCode":404,"statusCodeText":"Not Found","errorDateTime":"x","errors":[{"reason":"notFound","message":"m"}]}`,
	}
	// Where the one pass alone would differ from encoding/json (decodePage
	// hands these to encoding/json): a repeated name (encoding/json merges
	// into the first value: a later null keeps it, a later array reuses its
	// elements), a name with '_' or '-' (the one pass's case-insensitive
	// match ignores them), a time with an escape (time.Time.UnmarshalJSON
	// reads the string as sent).
	ship := `"eventType":"SHIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","shipmentEventTypeCode":"CONF","documentTypeCode":"BKG","documentID":"123"`
	for _, member := range []string{
		`"eventID":"x","eventID":null`, `"eventID":"x","EVENTID":null`, `"event_ID":"x"`, `"event-id":"x"`, `"event\u005fID":"x"`,
		`"eventDateTime":null`, `"eventID":"x","EventId":"y"`, `"ſeals":[]`,
		`"transportCall":{"transportCallID":"a"},"transportCall":{"modeOfTransport":"RAIL"}`,
		`"transportCall":{"transportCallSequenceNumber":1},"transportCall":{"transportCallSequenceNumber":null}`,
		`"seals":[{"sealNumber":"1","sealType":"X"}],"seals":[{"sealNumber":"2"}]`, `"seals":[{"sealNumber":"1"}],"seals":null`,
		`"x-y":1,"x-y":2`, `"reason":"a-b\\","changeRemark":"\"c_d\":"`,
	} {
		seeds = append(seeds, `[{`+ship+`,`+member+`}]`)
	}
	seeds = append(seeds, `[{`+strings.Replace(ship, `00Z","eventCreated`, `00\u005a","eventCreated`, 1)+`}]`)
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		events, err := decodePage(body)
		want, werr := decodePageV1(body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("one pass: %v; encoding/json: %v", err, werr)
		}
		if err == nil && !reflect.DeepEqual(events, want) && (len(events) > 0 || len(want) > 0) {
			t.Fatalf("one pass: %+v\nencoding/json: %+v", events, want)
		}
		if err == nil {
			for i := range events {
				if verr := events[i].Validate(); verr != nil {
					t.Fatalf("accepted an invalid event: %v", verr)
				}
				var again Event
				if raw := events[i].Raw; raw == nil || json.Unmarshal(raw, &again) != nil || again.EventID != events[i].EventID {
					t.Fatalf("event %d: Raw %q is not its JSON", i, raw)
				}
			}
		}
		_, _ = errorDetail(body)
		_ = retryAfter(string(body), time.Unix(0, 0))
	})
}

func TestDecodePage(t *testing.T) {
	ok := `[{"eventID":"a","eventType":"SHIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","shipmentEventTypeCode":"CONF","documentTypeCode":"BKG","documentID":"123"}]`
	if ev, err := decodePage([]byte(ok)); err != nil || len(ev) != 1 || ev[0].DocumentID != "123" {
		t.Fatalf("%v %v", ev, err)
	}
	for _, bad := range []string{
		`{}`, `[1]`, `[`,
		strings.Replace(ok, `"ACT"`, `"NOW"`, 1),
		strings.Replace(ok, `"documentID":"123"`, `"documentID":"1\u0000"`, 1),
		strings.Replace(ok, `"2026-03-01T00:00:00Z","shipment`, `"yesterday","shipment`, 1),
		`[{"eventType":"TRANSPORT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","transportEventTypeCode":"ARRI"}]`,
		`[{"eventType":"EQUIPMENT","eventClassifierCode":"ACT","eventDateTime":"2026-03-01T00:00:00Z","eventCreatedDateTime":"2026-03-01T00:00:00Z","equipmentEventTypeCode":"LOAD"}]`,
	} {
		if _, err := decodePage([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	two := " [ " + ok[1:len(ok)-1] + " ,\n\t" + strings.Replace(ok[1:len(ok)-1], `"a"`, `"b\"]}"`, 1) + "\n] "
	if ev, err := decodePage([]byte(two)); err != nil || len(ev) != 2 || string(ev[0].Raw) != ok[1:len(ok)-1] ||
		string(ev[1].Raw) != strings.Replace(ok[1:len(ok)-1], `"a"`, `"b\"]}"`, 1) || ev[1].EventID != `b"]}` {
		t.Fatalf("each event's own JSON: %v %v", ev, err)
	}
	// A refused page says where: the member's JSON pointer, the offset of
	// a syntax error, what the body was instead of an array.
	for bad, want := range map[string]string{
		strings.Replace(ok, `"a"`, `42`, 1):                                                 `"/0/eventID"`,
		strings.Replace(ok, `"ACT"`, `"ACT",}`, 1):                                          `after offset`,
		strings.Replace(ok, `"2026-03-01T00:00:00Z","shipment`, `"yesterday","shipment`, 1): `"/0/eventCreatedDateTime": parsing time "yesterday"`,
		ok + ` x`: `after offset`,
		`{}`:      `a JSON object, not an array`,
		` `:       `an empty body`,
	} {
		if _, err := decodePage([]byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want it to say %s", bad, err, want)
		}
	}
	if ev, err := decodePage([]byte(`null`)); err != nil || len(ev) != 0 {
		t.Errorf("null: %v %v", ev, err)
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{"": 0, "120": 2 * time.Minute, "x": 0, "-5": 0, "Sun, 01 Mar 2026 00:01:00 GMT": time.Minute, "999999999": 24 * time.Hour} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", h, got, want)
		}
	}
}

func TestDocumentReference(t *testing.T) {
	e := Event{EventType: EventTypeTransport, DocumentReferences: []DocumentReference{{DocumentReferenceBooking, "B1"}, {DocumentReferenceTransportDocument, "T1"}}}
	if e.DocumentReference(DocumentReferenceBooking) != "B1" || e.DocumentReference(DocumentReferenceTransportDocument) != "T1" {
		t.Fatalf("%+v", e)
	}
	s := Event{EventType: EventTypeShipment, DocumentTypeCode: DocumentTransportDocument, DocumentID: "T2"}
	if s.DocumentReference(DocumentReferenceTransportDocument) != "T2" || s.DocumentReference(DocumentReferenceBooking) != "" {
		t.Fatalf("%+v", s)
	}
}

// TestReadBody: a body is read whole whatever its Content-Length says
// (exact, short, absent), and one past the limit is read to limit+1
// bytes, so the caller sees it is over.
func TestReadBody(t *testing.T) {
	body := strings.Repeat("x", 1000)
	for _, c := range []struct {
		size, limit int64
		want        int
	}{{1000, 4096, 1000}, {10, 4096, 1000}, {-1, 4096, 1000}, {0, 4096, 1000}, {1000, 999, 1000}, {1000, 500, 501}, {-1, 500, 501}} {
		b, err := readBody(strings.NewReader(body), c.size, c.limit)
		if err != nil || len(b) != c.want || strings.Trim(string(b), "x") != "" {
			t.Errorf("size %d, limit %d: %d bytes, %v; want %d", c.size, c.limit, len(b), err, c.want)
		}
	}
}

// BenchmarkDecodePage: a page of 41 events (40 KB) as the simulator
// serves it (testdata/page.json), decoded in one pass and, for the pair,
// by encoding/json as before.
func BenchmarkDecodePage(b *testing.B) {
	page, err := os.ReadFile("testdata/page.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []struct {
		name   string
		decode func([]byte) ([]Event, error)
	}{{"one-pass", decodePage}, {"encoding-json", decodePageV1}} {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				if ev, err := d.decode(page); err != nil || len(ev) != 41 {
					b.Fatal(len(ev), err)
				}
			}
		})
	}
}

// TestPlainPage: a page with an escape or a member name holding '_' or '-'
// is not plain (encoding/json decodes it); dates, ids and negative numbers
// in values are.
func TestPlainPage(t *testing.T) {
	for body, want := range map[string]bool{
		`[{"eventID":"4a7f0e0e-1b1c","eventDateTime":"2026-03-01T00:00:00-01:00","n":-1,"r":"a_b"}]`: true,
		`[]`: true, ``: true, `-`: true, `"-`: true,
		`[{"a_b":1}]`: false, `[{"a-b" :1}]`: false, `[{"a":-1,"-b":2}]`: false, `[{"a":"x-","_":2}]`: false,
		"[{\"a-\"\n\t:1}]": false, `[{"a":"\u0041"}]`: false, `[{"a":"\""}]`: false,
	} {
		if got := plainPage([]byte(body)); got != want {
			t.Errorf("%s: plain %v, want %v", body, got, want)
		}
	}
}
