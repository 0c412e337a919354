package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"shipgraph/carrier/sim"
	"shipgraph/testkit"
	"shipgraph/testkit/simtest"
)

// epoch anchors every test's voyages.
var epoch = simtest.Epoch

// server is a simulator on 127.0.0.1:0 over real HTTP.
type server = simtest.Server

// start serves a simulator of o, its clock at the epoch.
func start(t testing.TB, o sim.Options) *server { return simtest.Start(t, o, time.Time{}) }

// param is the query parameter of a request type of /sim/numbers.
var param = map[string]string{
	"bill_of_lading": "transportDocumentReference",
	"booking_number": "carrierBookingReference",
	"container":      "equipmentReference",
}

// get fetches a URL with header (name, value pairs) and returns the
// response and its body.
func get(t *testing.T, u string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req := testkit.Request(t, http.MethodGet, u, "", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return testkit.Fetch(t, req)
}

func eventsURL(base string, n sim.Number, extra string) string {
	return base + "/" + n.SCAC + "/v2/events?" + param[n.RequestType] + "=" + url.QueryEscape(n.RequestNumber) + extra
}

// ev is the part of an event the tests look at.
type ev struct {
	EventID                string `json:"eventID"`
	EventType              string `json:"eventType"`
	EventClassifierCode    string `json:"eventClassifierCode"`
	EventDateTime          string `json:"eventDateTime"`
	EventCreatedDateTime   string `json:"eventCreatedDateTime"`
	TransportEventTypeCode string `json:"transportEventTypeCode"`
	EquipmentEventTypeCode string `json:"equipmentEventTypeCode"`
	EquipmentReference     string `json:"equipmentReference"`
	TransportCall          *struct {
		TransportCallID string `json:"transportCallID"`
		ModeOfTransport string `json:"modeOfTransport"`
		Vessel          *struct {
			VesselIMONumber string `json:"vesselIMONumber"`
		} `json:"vessel"`
	} `json:"transportCall"`
}

// all follows Next-Page from u and returns every event and the raw pages.
func all(t *testing.T, u string) ([]ev, [][]byte) {
	t.Helper()
	var out []ev
	var pages [][]byte
	for u != "" && len(pages) < 1000 {
		res, b := get(t, u)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s %s", u, res.Status, b)
		}
		if res.Header.Get("Current-Page") == "" {
			t.Fatalf("GET %s: no Current-Page header", u)
		}
		var page []ev
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		out = append(out, page...)
		pages = append(pages, b)
		u = res.Header.Get("Next-Page")
	}
	return out, pages
}

// schemas compiles the DCSA v2.2 document's schema of a GET /v2/events
// answer and of its error object. The copy in testdata is the reference
// document unchanged; one slip of it is mended here: the enum of
// documentReferenceType lists "BKG (Booking)" and "TRD (Transport
// Document)" (the description pasted into the values), where every
// carrier, and the standard's own example, sends "BKG" and "TRD".
func schemas(t *testing.T) (events, errorObject *jsonschema.Schema) {
	t.Helper()
	y, err := os.ReadFile("testdata/dcsa-tnt-v2.2.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	inner := doc.(map[string]any)["components"].(map[string]any)["schemas"].(map[string]any)["documentReferences_inner"]
	prop := inner.(map[string]any)["properties"].(map[string]any)["documentReferenceType"].(map[string]any)
	if e := prop["enum"].([]any); len(e) != 2 || e[0] != "BKG (Booking)" {
		t.Fatalf("documentReferenceType enum %v: the slip this test mends is gone; drop the mend", e)
	}
	prop["enum"] = []any{"BKG", "TRD"}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "$date-time", Validate: func(any) error { return nil }}) // another slip: "format: $date-time"
	const loc = "https://dcsa.example/tnt-v2.2.0.json"
	if err := c.AddResource(loc, doc); err != nil {
		t.Fatal(err)
	}
	events, err = c.Compile(loc + "#/paths/~1v2~1events/get/responses/200/content/application~1json/schema")
	if err != nil {
		t.Fatal(err)
	}
	errorObject, err = c.Compile(loc + "#/components/schemas/error")
	if err != nil {
		t.Fatal(err)
	}
	return events, errorObject
}

func validate(t *testing.T, s *jsonschema.Schema, what string, body []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", what, err)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%s: not DCSA v2.2: %v\n%.2000s", what, err, body)
	}
}
