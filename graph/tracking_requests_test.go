package graph_test

import (
	"strings"
	"testing"

	"shipgraph/testkit"
)

type trackingRequestResult struct {
	ID            string
	RequestNumber string
	RequestType   string
	Scac          string
	Status        string
	FailedReason  *string
	IsRetrying    bool
	RetryCount    int
	RefNumbers    []string
	Tags          []string
	TrackedObject *struct{ ID string }
}

const trackingRequestFields = `id requestNumber requestType scac status failedReason isRetrying retryCount refNumbers tags trackedObject { id }`

// TestTrackingRequestsGraphQL: the list with its filters and count, one
// request by id and as a node, the shipment's requests, creating and
// editing through the same rules as /v2, and the tenant and role checks.
func TestTrackingRequestsGraphQL(t *testing.T) {
	t.Parallel()
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)

	var list struct {
		TrackingRequests struct {
			TotalCount int
			Nodes      []trackingRequestResult
		}
	}
	e.Must(t, k, `{ trackingRequests(first: 50) { totalCount nodes { `+trackingRequestFields+` } } }`, nil, &list)
	var ships int
	e.SQL(t, &ships, `SELECT count(*) FROM shipments WHERE account_id = $1`, f.acme)
	if list.TrackingRequests.TotalCount != ships || len(list.TrackingRequests.Nodes) != ships {
		t.Fatalf("%d requests (%d nodes), want one per shipment (%d)", list.TrackingRequests.TotalCount, len(list.TrackingRequests.Nodes), ships)
	}
	seeded := list.TrackingRequests.Nodes[0]
	if seeded.TrackedObject == nil || seeded.RequestType != "bill_of_lading" || seeded.Status == "" || seeded.Tags == nil {
		t.Errorf("seeded request: %+v", seeded)
	}

	// Filters and order.
	var filtered struct {
		TrackingRequests struct{ TotalCount int }
	}
	e.Must(t, k, `query($n: String!) { trackingRequests(filter: {requestNumber: $n, statuses: [CREATED, TRACKING_STOPPED]}, orderBy: {field: UPDATED_AT, direction: DESC}) { totalCount } }`,
		testkit.Vars{"n": seeded.RequestNumber}, &filtered)
	if filtered.TrackingRequests.TotalCount != 1 {
		t.Errorf("by number: %d", filtered.TrackingRequests.TotalCount)
	}
	e.Must(t, k, `{ trackingRequests(filter: {statuses: [PENDING]}) { totalCount } }`, nil, &filtered)
	if filtered.TrackingRequests.TotalCount != 0 {
		t.Errorf("pending before any create: %d", filtered.TrackingRequests.TotalCount)
	}

	// By id, as a node, and from its shipment.
	var one struct {
		TrackingRequest *trackingRequestResult
		Node            *struct{ ID string }
		Shipment        *struct {
			TrackingRequests []struct{ ID string }
		}
	}
	e.Must(t, k, `query($id: ID!, $s: ID!) { trackingRequest(id: $id) { `+trackingRequestFields+` } node(id: $id) { ... on TrackingRequest { id } }
		shipment(id: $s) { trackingRequests { id } } }`, testkit.Vars{"id": seeded.ID, "s": seeded.TrackedObject.ID}, &one)
	if one.TrackingRequest == nil || one.TrackingRequest.ID != seeded.ID || one.Node == nil || one.Node.ID != seeded.ID ||
		one.Shipment == nil || len(one.Shipment.TrackingRequests) != 1 || one.Shipment.TrackingRequests[0].ID != seeded.ID {
		t.Errorf("by id: %+v", one)
	}

	// Create, then edit.
	var created struct{ CreateTrackingRequest trackingRequestResult }
	e.Must(t, k, `mutation { createTrackingRequest(input: {requestType: "container", requestNumber: "mscu 123456-6", scac: "MSCU", refNumbers: ["PO1"], tags: ["t"]}) { `+trackingRequestFields+` } }`, nil, &created)
	c := created.CreateTrackingRequest
	if c.Status != "PENDING" || c.RequestNumber != "MSCU1234566" || c.TrackedObject != nil || len(c.RefNumbers) != 1 || c.RetryCount != 0 {
		t.Errorf("created: %+v", c)
	}
	var updated struct{ UpdateTrackingRequest trackingRequestResult }
	e.Must(t, k, `mutation($id: ID!) { updateTrackingRequest(id: $id, input: {tags: ["a", "b"]}) { `+trackingRequestFields+` } }`, testkit.Vars{"id": c.ID}, &updated)
	if u := updated.UpdateTrackingRequest; len(u.Tags) != 2 || len(u.RefNumbers) != 1 || u.RefNumbers[0] != "PO1" {
		t.Errorf("updated: %+v", u)
	}

	// The rules, with the member they name.
	for _, r := range []struct {
		input testkit.Vars
		field string
	}{
		{testkit.Vars{"requestType": "container", "requestNumber": "MSCU1234566", "scac": "MSCU"}, "request_number"}, // duplicate
		{testkit.Vars{"requestType": "container", "requestNumber": "MSCU1234567", "scac": "MSCU"}, "request_number"}, // check digit
		{testkit.Vars{"requestType": "parcel", "requestNumber": "X1", "scac": "MSCU"}, "request_type"},
		{testkit.Vars{"requestType": "bill_of_lading", "requestNumber": "X1", "scac": "NOPE"}, "scac"},
	} {
		res := e.Do(t, k, `mutation($in: TrackingRequestInput!) { createTrackingRequest(input: $in) { id } }`, testkit.Vars{"in": r.input})
		if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != r.field {
			t.Errorf("%v: %s", r.input, res)
		}
	}
	// A viewer may read but not write; another account's request is null.
	viewer := e.Key(t, acmeViewer)
	res := e.Do(t, viewer, `mutation($id: ID!) { updateTrackingRequest(id: $id, input: {tags: []}) { id } }`, testkit.Vars{"id": c.ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "FORBIDDEN" {
		t.Errorf("viewer update: %s", res)
	}
	res = e.Do(t, viewer, `mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "MEDU1", scac: "MSCU"}) { id } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Code() != "FORBIDDEN" {
		t.Errorf("viewer create: %s", res)
	}
	other := e.Key(t, globexAdmin)
	var theirs struct {
		TrackingRequest *struct{ ID string }
		Node            *struct{ ID string }
	}
	e.Must(t, other, `query($id: ID!) { trackingRequest(id: $id) { id } node(id: $id) { id } }`, testkit.Vars{"id": c.ID}, &theirs)
	if theirs.TrackingRequest != nil || theirs.Node != nil {
		t.Errorf("globex reads acme's request: %+v", theirs)
	}
	res = e.Do(t, other, `mutation($id: ID!) { updateTrackingRequest(id: $id, input: {tags: []}) { id } }`, testkit.Vars{"id": c.ID})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "NOT_FOUND" {
		t.Errorf("globex update: %s", res)
	}

	// inferTrackingNumber.
	var inf struct {
		InferTrackingNumber struct {
			NumberType string
			Decision   string
			Selected   *struct{ Scac string }
			Validation struct{ CheckDigitPassed *bool }
		}
	}
	e.Must(t, viewer, `{ inferTrackingNumber(number: "MSCU1234566") { numberType decision selected { scac } validation { checkDigitPassed } } }`, nil, &inf)
	if i := inf.InferTrackingNumber; i.NumberType != "container" || i.Decision != "auto_select" || i.Selected == nil || i.Selected.Scac != "MSCU" ||
		i.Validation.CheckDigitPassed == nil || !*i.Validation.CheckDigitPassed {
		t.Errorf("infer: %+v", i)
	}
}

// TestShipmentTrackingRequestsStatements: Shipment.trackingRequests is one
// batched statement per level, whatever the page size.
func TestShipmentTrackingRequestsStatements(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	k := e.Key(t, acmeViewer)
	const q = `query($n: Int!) { shipments(first: $n) { nodes { id trackingRequests { id status trackedObject { id } } } } }`
	e.Must(t, k, q, testkit.Vars{"n": 12}, nil) // warm
	counts := map[int]int64{}
	for _, n := range []int{2, 12} {
		var d struct {
			Shipments struct {
				Nodes []struct {
					ID               string
					TrackingRequests []struct {
						ID            string
						TrackedObject *struct{ ID string }
					}
				}
			}
		}
		res := e.Must(t, k, q, testkit.Vars{"n": n}, &d)
		counts[n] = res.Statements
		for _, s := range d.Shipments.Nodes {
			if len(s.TrackingRequests) != 1 || s.TrackingRequests[0].TrackedObject == nil || s.TrackingRequests[0].TrackedObject.ID != s.ID {
				t.Errorf("shipment %s: requests %+v", s.ID, s.TrackingRequests)
			}
		}
	}
	t.Logf("statements: first 2: %d, first 12: %d", counts[2], counts[12])
	if counts[2] != counts[12] || counts[12] > 4 {
		t.Errorf("Shipment.trackingRequests costs %v statements by page size; want the same few at any size", counts)
	}
}

// TestCreateTrackingRequestRefusesInvalidText: the create refuses what
// infer_number calls invalid, as /v2 does (BAD_USER_INPUT naming the
// member): a number that is not a string, SQL-ish text, a bidi control, a
// lone surrogate (escaped in the query or the variables) in the number, a
// tag or a party's company name.
func TestCreateTrackingRequestRefusesInvalidText(t *testing.T) {
	t.Parallel()
	e := newWriteEnv(t)
	loadFixture(t, e)
	k := e.Key(t, acmeMember)
	for _, c := range []struct {
		query string
		field string
	}{
		{`mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "'; DROP TABLE tracking_requests; --", scac: "MSCU"}) { id } }`, "request_number"},
		{`mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "!!", scac: "MSCU"}) { id } }`, "request_number"},
		{`mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "MEDU\u202eFR030802", scac: "MSCU"}) { id } }`, "request_number"},
		{`mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "MEDU\ud800FR030802", scac: "MSCU"}) { id } }`, "request_number"},
		{`mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: "MEDUFR030802", scac: "MSCU", tags: ["a\ud800"]}) { id } }`, "tags"},
		{`mutation { createParty(input: {companyName: "Acme \ud800 Ltd"}) { id } }`, "company_name"},
	} {
		res := e.Do(t, k, c.query, nil)
		if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != c.field {
			t.Errorf("%s: %s", c.query, res)
		}
	}
	// In variables (JSON decodes \ud800 to U+FFFD before GraphQL sees it).
	res := e.Do(t, k, `mutation($in: TrackingRequestInput!) { createTrackingRequest(input: $in) { id } }`,
		testkit.Vars{"in": testkit.Vars{"requestType": "bill_of_lading", "requestNumber": "MEDU\ufffdFR030802", "scac": "MSCU"}})
	if len(res.Errors) != 1 || res.Errors[0].Code() != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != "request_number" {
		t.Errorf("U+FFFD in variables: %s", res)
	}
	// A number that is not a string: refused, as a literal and a variable.
	res = e.Do(t, k, `mutation { createTrackingRequest(input: {requestType: "bill_of_lading", requestNumber: 5, scac: "MSCU"}) { id } }`, nil)
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "requestNumber") && !strings.Contains(res.Errors[0].Message, "String") {
		t.Errorf("requestNumber: 5: %s", res)
	}
	res = e.Do(t, k, `mutation($in: TrackingRequestInput!) { createTrackingRequest(input: $in) { id } }`,
		testkit.Vars{"in": testkit.Vars{"requestType": "bill_of_lading", "requestNumber": 5, "scac": "MSCU"}})
	if len(res.Errors) == 0 {
		t.Errorf("requestNumber 5 in variables: %s", res)
	}
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM tracking_requests WHERE request_number LIKE 'MEDUFR0308%' OR request_number = '5' OR request_number LIKE '%DROP%'`)
	if n != 0 {
		t.Errorf("refused creates stored %d requests", n)
	}
}
