package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"shipgraph/carrier/dcsa"
	"shipgraph/carrier/sim"
	"shipgraph/db/dbtest"
	"shipgraph/testkit"
	"shipgraph/testkit/simtest"
	"shipgraph/webhook"
)

// TestTrackingEndToEnd is the tracking issue's "Done when", through the
// real binary's serve: the carrier simulator on 127.0.0.1, serve polling
// it (CARRIERS), a tracking request through /v2 that ends created, every
// read of what it found answering 200 in the OpenAPI document's shapes
// with what the simulator published, signed webhooks and a live
// subscription hearing it, the failures (unknown number, duplicate, roles,
// another account), and the same flow through GraphQL. Every wait is for
// an event (a webhook delivery, an SSE event) with a deadline.
func TestTrackingEndToEnd(t *testing.T) {
	begin := time.Now()
	// The carrier simulator, in process, on its own listener.
	s, err := sim.New(sim.Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	simURL := simtest.Serve(t, s)
	var carriers []string
	for _, scac := range sim.DefaultSCACs {
		carriers = append(carriers, scac+"="+simURL+"/"+scac)
	}

	// Two bills of lading the simulator publishes now with containers and a
	// vessel (one for /v2, one for GraphQL), and what it says of them.
	known := publishedBLs(t, s, simURL, 2)
	bl, gqlBL := known[0], known[1]

	dbURL := dbtest.NewDB(t)
	keys := seedKeys(t, dbURL, "3")
	base := serve(t, "--database-url", dbURL, "--carriers", strings.Join(carriers, ","),
		"--tracking-retry-base", "20ms", "--tracking-fetch-interval", "50ms", "--tracking-schedule-every", "200ms",
		"--webhook-allow-private-urls", "--webhook-retry-base", "20ms")
	admin, viewer, globex := keys["acme admin"], keys["acme viewer"], keys["globex admin"]

	// Every answer is recorded: none may be a 5xx.
	call := func(method, path, key string, body any) (int, []byte) {
		t.Helper()
		var b []byte
		if body != nil {
			b = testkit.JSON(t, body)
		}
		r := testkit.Send(t, method, base+path, key, b)
		if r.Status >= 500 {
			t.Errorf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r.Status, r.Body
	}
	// ok calls as acme's admin, wants 200 and a body valid against schema
	// ("" for an answer the OpenAPI document lacks), and decodes it.
	ok := func(method, path string, body any, schema string, into any) {
		t.Helper()
		status, b := call(method, path, admin, body)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		if schema != "" {
			validateOpenAPI(t, schema, b)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("%s %s: %v %s", method, path, err, b)
		}
	}

	// The webhook receiver on 127.0.0.1: every delivery, in order.
	hooks := testkit.NewFeed[delivery]()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks.Add(parseDelivery(b, r.Header.Get("X-T49-Webhook-Signature")))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	events := append([]string{"tracking_request.succeeded", "tracking_request.failed"}, webhook.JourneyEvents...)
	status, b := call(http.MethodPost, "/v2/webhooks", admin, map[string]any{"data": map[string]any{"type": "webhook",
		"attributes": map[string]any{"url": recv.URL + "/t49", "events": events}}})
	var hook struct {
		Data struct{ Attributes struct{ Secret string } }
	}
	if status != http.StatusCreated || json.Unmarshal(b, &hook) != nil || hook.Data.Attributes.Secret == "" {
		t.Fatalf("POST /v2/webhooks: %d %s", status, b)
	}
	validateOpenAPI(t, "post-webhooks-201", b)
	secret := hook.Data.Attributes.Secret

	// The live subscription, over Server-Sent Events, of every change of
	// acme. It is listening once it hears a marker change made after it
	// opened: an SSE stream's headers come before its subscription is in,
	// so a marker made in between is not heard, and another is made.
	live := subscribeSSE(t, base, admin, `subscription { changes { operation logId type id parentId changedFields } }`)
	var ships struct {
		Data []struct{ ID string }
	}
	ok(http.MethodGet, "/v2/shipments?page[size]=1", nil, "get-shipments-200", &ships)
	if len(ships.Data) == 0 {
		t.Fatal("acme has no shipment")
	}
	marker := ships.Data[0].ID
	for i := 1; ; i++ {
		var patched any
		ok(http.MethodPatch, "/v2/shipments/"+marker, map[string]any{"data": map[string]any{"type": "shipment", "id": marker,
			"attributes": map[string]any{"tags": []string{fmt.Sprintf("e2e-marker-%d", i)}}}}, "patch-shipment-200", &patched)
		if _, heard := live.WaitFor(2*time.Second, func(c change) bool {
			return c.Type == "SHIPMENT" && c.ID == marker && c.Operation == "UPDATE"
		}); heard {
			if i > 1 {
				t.Logf("the subscription heard marker change %d", i)
			}
			break
		}
		if i == 10 {
			live.Wait(t, 0, "a marker change on the subscription (10 made)", func(change) bool { return false })
		}
	}

	// ---------------------------------------------------------- the request
	status, b = call(http.MethodPost, "/v2/tracking_requests", admin, trackingRequestBody(bl.number, bl.scac))
	if status != http.StatusCreated {
		t.Fatalf("POST /v2/tracking_requests %s: %d %s", bl.number, status, b)
	}
	validateOpenAPI(t, "post-tracking-requests-201", b)
	var created trackingDoc
	if err := json.Unmarshal(b, &created); err != nil || created.Data.Attributes.Status != "pending" {
		t.Fatalf("created: %v %s", err, b)
	}
	reqID := created.Data.ID

	// Created: the webhook says so, signed.
	succeeded := hooks.Wait(t, 30*time.Second, "tracking_request.succeeded for "+reqID, func(d delivery) bool {
		return d.Event == "tracking_request.succeeded" && d.RefID == reqID
	})
	checkSignature(t, secret, succeeded)
	var tr trackingDoc
	ok(http.MethodGet, "/v2/tracking_requests/"+reqID, nil, "get-tracking-request-200", &tr)
	a := tr.Data.Attributes
	shipID := tr.Data.Relationships.TrackedObject.Data.ID
	if a.Status != "created" || a.RequestNumber != bl.number || a.SCAC != bl.scac || shipID == "" ||
		tr.Data.Relationships.TrackedObject.Data.Type != "shipment" {
		t.Fatalf("request after succeeded: %+v", tr.Data)
	}

	// The shipment and its containers: the simulator's numbers.
	var ship struct {
		Data struct {
			Attributes struct {
				BillOfLading string `json:"bill_of_lading_number"`
				SCAC         string `json:"shipping_line_scac"`
				PODVesselIMO string `json:"pod_vessel_imo"`
			}
			Relationships struct {
				Containers struct{ Data []struct{ ID string } }
			}
		}
	}
	ok(http.MethodGet, "/v2/shipments/"+shipID, nil, "get-shipment-200", &ship)
	if ship.Data.Attributes.BillOfLading != bl.number || ship.Data.Attributes.SCAC != bl.scac {
		t.Errorf("shipment %s: %+v, want %s of %s", shipID, ship.Data.Attributes, bl.number, bl.scac)
	}
	if imo := ship.Data.Attributes.PODVesselIMO; imo != "" && !bl.imos[imo] {
		t.Errorf("shipment's pod_vessel_imo %s, the simulator's vessels %v", imo, bl.imos)
	}
	containers := map[string]string{} // number → id
	for _, number := range bl.containers {
		var list struct {
			Data []struct {
				ID            string
				Attributes    struct{ Number string }
				Relationships struct {
					Shipment struct{ Data struct{ ID string } }
				}
			}
		}
		ok(http.MethodGet, "/v2/containers?filter[number]="+url.QueryEscape(number), nil, "get-containers-200", &list)
		for _, c := range list.Data {
			if c.Attributes.Number == number && c.Relationships.Shipment.Data.ID == shipID {
				containers[number] = c.ID
			}
		}
		if containers[number] == "" {
			t.Errorf("container %s of %s not listed with its shipment: %+v", number, bl.number, list.Data)
		}
	}
	var shipContainers []string
	for _, c := range ship.Data.Relationships.Containers.Data {
		shipContainers = append(shipContainers, c.ID)
	}
	for n, id := range containers {
		if !slices.Contains(shipContainers, id) {
			t.Errorf("container %s (%s) not among the shipment's %v", n, id, shipContainers)
		}
	}
	if len(shipContainers) != len(bl.containers) {
		t.Errorf("shipment has %d containers, the simulator published %d: %v", len(shipContainers), len(bl.containers), bl.containers)
	}
	if t.Failed() {
		t.FailNow()
	}

	// One container's journey.
	number := bl.containers[0]
	cid := containers[number]
	var evs struct {
		Data []struct {
			ID         string
			Attributes struct{ Event, Timestamp string }
		}
		Included []struct{ Type string }
	}
	ok(http.MethodGet, "/v2/containers/"+cid+"/transport_events?include=location,terminal&page[size]=100", nil, "get-container-transport-events-200", &evs)
	if len(evs.Data) == 0 {
		t.Fatalf("container %s has no transport events", number)
	}
	eventIDs := map[string]bool{}
	recorded := map[string]bool{} // event and time
	for _, e := range evs.Data {
		eventIDs[e.ID] = true
		recorded[e.Attributes.Event+" "+e.Attributes.Timestamp] = true
		if !strings.HasPrefix(e.Attributes.Event, "container.transport.") {
			t.Errorf("transport event %s named %q", e.ID, e.Attributes.Event)
		}
	}
	if !slices.ContainsFunc(evs.Included, func(i struct{ Type string }) bool { return i.Type == "port" }) {
		t.Errorf("include=location,terminal included no port: %+v", evs.Included)
	}
	var raw struct {
		Data []struct {
			Attributes struct {
				VesselIMO string `json:"vessel_imo"`
			}
		}
	}
	ok(http.MethodGet, "/v2/containers/"+cid+"/raw_events", nil, "get-container-raw-events-200", &raw)
	if len(raw.Data) == 0 {
		t.Errorf("container %s has no raw events", number)
	}
	for _, r := range raw.Data {
		if imo := r.Attributes.VesselIMO; imo != "" && !bl.imos[imo] {
			t.Errorf("raw event's vessel_imo %s, the simulator's vessels %v", imo, bl.imos)
		}
	}
	var route struct {
		Data struct {
			Type          string
			Relationships map[string]struct{ Data json.RawMessage }
		}
		Included []struct {
			ID         string
			Type       string
			Attributes map[string]any
		}
	}
	ok(http.MethodGet, "/v2/containers/"+cid+"/route", nil, "", &route)
	vesselID, vesselIMO := "", ""
	for _, inc := range route.Included {
		if inc.Type == "vessel" {
			imo, _ := inc.Attributes["imo"].(string)
			if !bl.imos[imo] {
				t.Errorf("route's vessel %s has IMO %q, the simulator's %v", inc.ID, imo, bl.imos)
			}
			vesselID, vesselIMO = inc.ID, imo
		}
	}
	if route.Data.Type != "route" || vesselID == "" {
		t.Fatalf("route of %s: type %q, no vessel included: %+v", number, route.Data.Type, route)
	}
	var geo struct {
		Type     string
		Features []struct{ Properties map[string]any }
	}
	ok(http.MethodGet, "/v2/containers/"+cid+"/map_geojson", nil, "get-container-map-geojson-200", &geo)
	if geo.Type != "FeatureCollection" || len(geo.Features) == 0 {
		t.Errorf("map of %s: %+v", number, geo)
	}
	status, b = call(http.MethodPatch, "/v2/containers/"+cid+"/refresh", admin, nil)
	if status != http.StatusOK {
		t.Fatalf("PATCH /v2/containers/{id}/refresh: %d %s", status, b)
	}
	testkit.SchemaText(refreshSchema).Validate(t, "", b) // PATCH /v2/containers/{id}/refresh
	var vessel struct {
		Data struct {
			ID         string
			Attributes struct{ IMO, Name string }
		}
	}
	ok(http.MethodGet, "/v2/vessels/"+vesselID, nil, "get-vessel-200", &vessel)
	if vessel.Data.ID != vesselID || vessel.Data.Attributes.IMO != vesselIMO {
		t.Errorf("vessel %s: %+v, want IMO %s", vesselID, vessel.Data, vesselIMO)
	}
	ok(http.MethodGet, "/v2/vessels/"+vesselIMO, nil, "get-vessel-by-imo-200", &vessel)
	if vessel.Data.ID != vesselID || bl.vesselNames[vesselIMO] != vessel.Data.Attributes.Name {
		t.Errorf("vessel by IMO %s: %+v, the simulator's name %q", vesselIMO, vessel.Data, bl.vesselNames[vesselIMO])
	}

	// The request: read, changed, listed; a number inferred.
	var patchedTR trackingDoc
	ok(http.MethodPatch, "/v2/tracking_requests/"+reqID, map[string]any{"data": map[string]any{"type": "tracking_request", "id": reqID,
		"attributes": map[string]any{"ref_numbers": []string{"PO-E2E"}, "tags": []string{"e2e"}}}}, "patch-tracking-request-200", &patchedTR)
	if patchedTR.Data.Attributes.Status != "created" || !slices.Equal(patchedTR.Data.Attributes.RefNumbers, []string{"PO-E2E"}) {
		t.Errorf("PATCH tracking request: %+v", patchedTR.Data.Attributes)
	}
	var list struct {
		Data []struct{ ID string }
	}
	ok(http.MethodGet, "/v2/tracking_requests?filter[request_number]="+bl.number, nil, "get-tracking-requests-200", &list)
	if len(list.Data) != 1 || list.Data[0].ID != reqID {
		t.Errorf("list by number %s: %+v", bl.number, list.Data)
	}
	ok(http.MethodGet, "/v2/tracking_requests", nil, "get-tracking-requests-200", &list)
	var inferred struct {
		Data struct {
			Attributes struct {
				NumberType string `json:"number_type"`
			}
		}
	}
	ok(http.MethodPost, "/v2/tracking_requests/infer_number", map[string]any{"number": number}, "post-tracking-requests-infer-number-200", &inferred)
	if inferred.Data.Attributes.NumberType != "container" {
		t.Errorf("infer_number %s: %+v", number, inferred.Data.Attributes)
	}

	// The receiver hears the container's journey, signed: notifications
	// about its transport events, with the container included. (The
	// reference object's id is the notification's event id, not the
	// record's: docs/decisions.md, "Journey notifications refer to the
	// record"; the event and its time are the record's.)
	journey := hooks.Wait(t, 30*time.Second, "a container.transport.* notification of "+number, func(d delivery) bool {
		return strings.HasPrefix(d.Event, "container.transport.") && d.RefType == "transport_event" && slices.Contains(d.Containers, cid)
	})
	if !recorded[journey.Event+" "+journey.Timestamp] {
		t.Errorf("%s at %s: not one of the container's transport events %v", journey, journey.Timestamp, recorded)
	}
	checkSignature(t, secret, journey)
	// The subscription saw the request created and succeeding, its
	// shipment arrive and the container's transport events.
	live.Wait(t, 15*time.Second, "the request "+reqID+" inserted", func(c change) bool {
		return c.Type == "TRACKING_REQUEST" && c.ID == reqID && c.Operation == "INSERT"
	})
	live.Wait(t, 15*time.Second, "the request "+reqID+" created", func(c change) bool {
		return c.Type == "TRACKING_REQUEST" && c.ID == reqID && c.Operation == "UPDATE" && c.ParentID == shipID &&
			slices.Contains(c.ChangedFields, "status")
	})
	live.Wait(t, 15*time.Second, "the shipment "+shipID+" inserted", func(c change) bool {
		return c.Type == "SHIPMENT" && c.ID == shipID && c.Operation == "INSERT"
	})
	live.Wait(t, 15*time.Second, "a transport event of "+number, func(c change) bool {
		return c.Type == "TRANSPORT_EVENT" && c.ParentID == cid && c.Operation == "INSERT" && eventIDs[c.ID]
	})

	// ---------------------------------------------------------- failures
	unknown := bl.scac[:4] + "999999999"
	status, b = call(http.MethodPost, "/v2/tracking_requests", admin, trackingRequestBody(unknown, bl.scac))
	if status != http.StatusCreated {
		t.Fatalf("POST an unknown number: %d %s", status, b)
	}
	var unk trackingDoc
	_ = json.Unmarshal(b, &unk)
	failed := hooks.Wait(t, 30*time.Second, "tracking_request.failed for "+unknown, func(d delivery) bool {
		return d.Event == "tracking_request.failed" && d.RefID == unk.Data.ID
	})
	checkSignature(t, secret, failed)
	ok(http.MethodGet, "/v2/tracking_requests/"+unk.Data.ID, nil, "get-tracking-request-200", &tr)
	if tr.Data.Attributes.Status != "failed" || tr.Data.Attributes.FailedReason == nil || *tr.Data.Attributes.FailedReason != "not_found" {
		t.Errorf("unknown number: %+v", tr.Data.Attributes)
	}
	status, b = call(http.MethodPost, "/v2/tracking_requests", admin, trackingRequestBody(strings.ToLower(bl.number), bl.scac))
	if status != http.StatusUnprocessableEntity {
		t.Errorf("duplicate: %d %s", status, b)
	} else {
		validateOpenAPI(t, "post-tracking-requests-422", b)
	}
	if status, b = call(http.MethodPost, "/v2/tracking_requests", viewer, trackingRequestBody(gqlBL.number, gqlBL.scac)); status != http.StatusForbidden {
		t.Errorf("viewer's POST: %d %s", status, b)
	}
	if status, b = call(http.MethodPost, "/v2/tracking_requests", "", trackingRequestBody(gqlBL.number, gqlBL.scac)); status != http.StatusUnauthorized {
		t.Errorf("POST without a key: %d %s", status, b)
	}
	for _, p := range []string{"/v2/tracking_requests/" + reqID, "/v2/shipments/" + shipID,
		"/v2/containers/" + cid + "/transport_events", "/v2/containers/" + cid + "/route"} {
		if status, b := call(http.MethodGet, p, globex, nil); status != http.StatusNotFound {
			t.Errorf("globex GET %s: %d %s", p, status, b)
		}
		if status, b := call(http.MethodGet, p, "", nil); status != http.StatusUnauthorized {
			t.Errorf("GET %s without a key: %d %s", p, status, b)
		}
	}

	// ---------------------------------------------------------- GraphQL
	gql := func(query string, vars map[string]any, into any) {
		t.Helper()
		status, b := call(http.MethodPost, "/graphql", admin, map[string]any{"query": query, "variables": vars})
		var env struct {
			Data   json.RawMessage
			Errors []any
		}
		if status != http.StatusOK || json.Unmarshal(b, &env) != nil || len(env.Errors) > 0 {
			t.Fatalf("GraphQL %s: %d %s", query, status, b)
		}
		if err := json.Unmarshal(env.Data, into); err != nil {
			t.Fatalf("GraphQL %s: %v %s", query, err, b)
		}
	}
	var gc struct {
		CreateTrackingRequest struct{ ID, Status string }
	}
	gql(`mutation($in: TrackingRequestInput!) { createTrackingRequest(input: $in) { id status } }`,
		map[string]any{"in": map[string]any{"requestType": "bill_of_lading", "requestNumber": gqlBL.number, "scac": gqlBL.scac}}, &gc)
	gid := gc.CreateTrackingRequest.ID
	if gid == "" || gc.CreateTrackingRequest.Status != "PENDING" {
		t.Fatalf("createTrackingRequest: %+v", gc)
	}
	hooks.Wait(t, 30*time.Second, "tracking_request.succeeded for "+gid, func(d delivery) bool {
		return d.Event == "tracking_request.succeeded" && d.RefID == gid
	})
	var gr struct {
		TrackingRequest struct {
			Status        string
			TrackedObject *struct {
				Containers []struct {
					Number          string
					TransportEvents []struct{ Event string }
				}
			}
		}
	}
	gql(`query($id: ID!) { trackingRequest(id: $id) { status trackedObject { containers { number transportEvents { event } } } } }`,
		map[string]any{"id": gid}, &gr)
	if gr.TrackingRequest.Status != "CREATED" || gr.TrackingRequest.TrackedObject == nil {
		t.Fatalf("trackingRequest %s: %+v", gid, gr)
	}
	var gotNumbers []string
	for _, c := range gr.TrackingRequest.TrackedObject.Containers {
		gotNumbers = append(gotNumbers, c.Number)
		if len(c.TransportEvents) == 0 {
			t.Errorf("GraphQL: container %s has no transport events", c.Number)
		}
		for _, e := range c.TransportEvents {
			if !strings.HasPrefix(e.Event, "container.transport.") {
				t.Errorf("GraphQL: container %s event %q", c.Number, e.Event)
			}
		}
	}
	slices.Sort(gotNumbers)
	if !slices.Equal(gotNumbers, gqlBL.containers) {
		t.Errorf("GraphQL: containers %v, the simulator published %v", gotNumbers, gqlBL.containers)
	}

	// Every delivery was signed with the webhook's secret.
	for _, d := range hooks.All() {
		checkSignature(t, secret, d)
	}
	t.Logf("end to end in %s: %d webhook deliveries, %d live changes", time.Since(begin).Round(time.Millisecond), len(hooks.All()), len(live.All()))
}

// published is what the simulator publishes now for one bill of lading.
type published struct {
	number, scac string
	containers   []string // sorted
	imos         map[string]bool
	vesselNames  map[string]string // by IMO
}

// publishedBLs asks the simulator, as a carrier's client would, for the
// first n bills of lading it knows whose answer now has containers and a
// vessel that departed (so transport events exist), and returns them.
func publishedBLs(t *testing.T, s *sim.Sim, simURL string, n int) []published {
	t.Helper()
	var out []published
	for _, num := range s.Numbers() {
		if num.RequestType != "bill_of_lading" || num.State != "tracked" {
			continue
		}
		c, err := dcsa.New(dcsa.Config{BaseURL: simURL + "/" + num.SCAC, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := c.Events(context.Background(), dcsa.Query{TransportDocumentReference: num.RequestNumber})
		if err != nil {
			continue
		}
		p := published{number: num.RequestNumber, scac: num.SCAC, imos: map[string]bool{}, vesselNames: map[string]string{}}
		departed := false
		for _, e := range evs {
			if e.EventType == dcsa.EventTypeEquipment && e.EquipmentReference != "" && !slices.Contains(p.containers, e.EquipmentReference) {
				p.containers = append(p.containers, e.EquipmentReference)
			}
			if e.TransportCall != nil && e.TransportCall.Vessel != nil && e.TransportCall.Vessel.VesselIMONumber != "" {
				p.imos[e.TransportCall.Vessel.VesselIMONumber] = true
				p.vesselNames[e.TransportCall.Vessel.VesselIMONumber] = e.TransportCall.Vessel.VesselName
			}
			if e.EventType == dcsa.EventTypeTransport && e.TransportEventTypeCode == dcsa.TransportDeparted &&
				e.EventClassifierCode == dcsa.ClassifierActual {
				departed = true
			}
		}
		if len(p.containers) == 0 || len(p.imos) == 0 || !departed {
			continue
		}
		slices.Sort(p.containers)
		out = append(out, p)
		if len(out) == n {
			return out
		}
	}
	t.Fatalf("the simulator publishes %d departed bills of lading with containers, want %d", len(out), n)
	return nil
}

func trackingRequestBody(number, scac string) map[string]any {
	return map[string]any{"data": map[string]any{"type": "tracking_request", "attributes": map[string]any{
		"request_type": "bill_of_lading", "request_number": number, "scac": scac}}}
}

// trackingDoc is a single tracking request document.
type trackingDoc struct {
	Data struct {
		ID         string
		Attributes struct {
			Status        string
			RequestNumber string   `json:"request_number"`
			SCAC          string   `json:"scac"`
			FailedReason  *string  `json:"failed_reason"`
			RefNumbers    []string `json:"ref_numbers"`
		}
		Relationships struct {
			TrackedObject struct {
				Data struct{ ID, Type string }
			} `json:"tracked_object"`
		}
	}
}

// ---------------------------------------------------------------- webhooks

// delivery is one webhook delivery as the receiver got it.
type delivery struct {
	Body           []byte
	Signature      string
	Event          string
	RefType, RefID string
	Timestamp      string   // the reference object's
	Containers     []string // ids of the containers included
	ParseFailure   string
}

func parseDelivery(body []byte, sig string) delivery {
	d := delivery{Body: body, Signature: sig}
	var doc struct {
		Data struct {
			Type          string
			Attributes    struct{ Event string }
			Relationships struct {
				ReferenceObject struct {
					Data struct{ ID, Type string }
				} `json:"reference_object"`
			}
		}
		Included []struct {
			ID, Type   string
			Attributes struct{ Timestamp string }
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.Data.Type != "webhook_notification" {
		d.ParseFailure = fmt.Sprintf("not a webhook_notification (%v)", err)
		return d
	}
	d.Event = doc.Data.Attributes.Event
	d.RefType, d.RefID = doc.Data.Relationships.ReferenceObject.Data.Type, doc.Data.Relationships.ReferenceObject.Data.ID
	for _, inc := range doc.Included {
		if inc.Type == "container" {
			d.Containers = append(d.Containers, inc.ID)
		}
		if inc.Type == d.RefType && inc.ID == d.RefID {
			d.Timestamp = inc.Attributes.Timestamp
		}
	}
	return d
}

func (d delivery) String() string {
	if d.ParseFailure != "" {
		return d.ParseFailure + ": " + string(d.Body)
	}
	return d.Event + " " + d.RefType + " " + d.RefID
}

// checkSignature is the receiver's check (docs/webhooks.md): HMAC-SHA256 of
// the exact body keyed by the webhook's secret, hex, in
// X-T49-Webhook-Signature.
func checkSignature(t *testing.T, secret string, d delivery) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(d.Body)
	if want := hex.EncodeToString(m.Sum(nil)); d.Signature != want {
		t.Errorf("%s: signature %q, want %q", d, d.Signature, want)
	}
}

// ---------------------------------------------------------------- live

// change is one event of the changes subscription.
type change struct {
	Operation, LogID, Type, ID, ParentID string
	ChangedFields                        []string
}

func (c change) String() string {
	return c.Operation + " " + c.Type + " " + c.ID + " (parent " + c.ParentID + ")"
}

// changeOf decodes a message of the changes subscription; ok is false for
// one that is not a change (an error, a broken body).
func changeOf(payload []byte) (c change, ok bool) {
	var r struct {
		Data   struct{ Changes change }
		Errors []any
	}
	if json.Unmarshal(payload, &r) != nil || len(r.Errors) > 0 {
		return change{}, false
	}
	return r.Data.Changes, true
}

// subscribeSSE opens a subscription over Server-Sent Events (the kit's
// client) and returns the feed of its changes; it ends with the test.
func subscribeSSE(t *testing.T, base, key, query string) *testkit.Feed[change] {
	t.Helper()
	events, stop := testkit.SubscribeSSE(t, base, key, query)
	f := testkit.NewFeed[change]()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for data := range events {
			c, ok := changeOf(data)
			if !ok {
				c = change{Operation: "BROKEN " + string(data)}
			}
			f.Add(c)
		}
		f.Add(change{Operation: "STREAM ENDED"})
	}()
	t.Cleanup(func() { stop(); <-done })
	return f
}

// ---------------------------------------------------------------- schemas

// openAPI holds the OpenAPI document's response schemas, as rest's tests
// do (rest/testdata/openapi-schemas.json, extracted by
// rest/testdata/extract).
var openAPI = testkit.SchemaFile(filepath.Join("rest", "testdata", "openapi-schemas.json"))

// validateOpenAPI checks body against a response schema of the OpenAPI
// document.
func validateOpenAPI(t *testing.T, schema string, body []byte) {
	t.Helper()
	openAPI.Validate(t, "/$defs/"+schema, body)
}

// refreshSchema is the OpenAPI document's answer to PATCH
// /containers/{id}/refresh (200), which the extract does not carry: an
// object with a string message.
const refreshSchema = `{"type":"object","required":["message"],"properties":{"message":{"type":"string"}}}`
