package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTrackingRequestReads: the seeded requests (one per shipment) listed,
// filtered, paged and read one by one, in the OpenAPI document's shapes.
func TestTrackingRequestReads(t *testing.T) {
	e := newEnv(t, envOptions{})
	ships := int(obj(e.get("/v2/shipments?page[size]=1"), "meta")["total"].(float64))
	stopped := int(obj(e.get("/v2/shipments?filter[tracking_stopped]=true&page[size]=1"), "meta")["total"].(float64))

	r := e.do("acme/viewer", "GET", "/v2/tracking_requests?include=tracked_object,customer&page[size]=5", nil)
	doc := wantDocument(t, r, http.StatusOK, "get-tracking-requests-200")
	if total := int(obj(doc, "meta")["total"].(float64)); total != ships {
		t.Errorf("meta.total %d, want one request per shipment (%d)", total, ships)
	}
	data := doc["data"].([]any)
	if len(data) != 5 || len(doc["included"].([]any)) != 5 {
		t.Fatalf("5 requests with their shipments, got %d and %d included", len(data), len(doc["included"].([]any)))
	}
	first := data[0].(map[string]any)
	if obj(first, "relationships", "tracked_object", "data")["type"] != "shipment" ||
		obj(first, "relationships", "customer")["data"] != nil || obj(first, "links")["self"] != publicBase+"/v2/tracking_requests/"+first["id"].(string) {
		t.Errorf("request resource: %v", first)
	}
	// Newest first.
	for i := 1; i < len(data); i++ {
		a, b := obj(data[i-1], "attributes")["created_at"].(string), obj(data[i], "attributes")["created_at"].(string)
		if a < b {
			t.Errorf("not newest first: %s before %s", a, b)
		}
	}

	count := func(query string) int {
		t.Helper()
		return int(obj(e.get("/v2/tracking_requests?page[size]=1&"+query), "meta")["total"].(float64))
	}
	if n := count("filter[status]=tracking_stopped"); n != stopped {
		t.Errorf("filter[status]=tracking_stopped: %d, want %d", n, stopped)
	}
	if n := count("filter[status]=created,tracking_stopped"); n != ships {
		t.Errorf("two statuses: %d, want %d", n, ships)
	}
	if n := count("filter[status]=pending"); n != 0 {
		t.Errorf("pending: %d", n)
	}
	attrs := obj(first, "attributes")
	number, scac := attrs["request_number"].(string), attrs["scac"].(string)
	if n := count("filter[request_number]=" + url.QueryEscape(strings.ToLower(number))); n != 1 {
		t.Errorf("filter[request_number]=%s: %d", number, n)
	}
	if n := count("filter[scac]=" + scac); n < 1 || n > ships {
		t.Errorf("filter[scac]=%s: %d", scac, n)
	}
	if n := count("filter[request_type]=container"); n != 0 {
		t.Errorf("filter[request_type]=container: %d", n)
	}
	if n := count("filter[created_at][start]=2999-01-01T00:00:00Z"); n != 0 {
		t.Errorf("created in the future: %d", n)
	}
	if n := count("filter[created_at][end]=2999-01-01T00:00:00Z&filter[created_at][start]=2000-01-01"); n != ships {
		t.Errorf("created since 2000: %d", n)
	}
	for _, c := range []struct{ query, param string }{
		{"filter[status]=done", "filter[status]"},
		{"filter[request_type]=bol", "filter[request_type]"},
		{"filter[created_at][start]=yesterday", "filter[created_at][start]"},
		{"sort=request_number", "sort"},
		{"include=shipment", "include"},
		{"filter[nope]=1", "filter[nope]"},
	} {
		wantError(t, e.do("acme/viewer", "GET", "/v2/tracking_requests?"+c.query, nil), http.StatusBadRequest, "parameter", c.param)
	}

	// One request, with its shipment; the golden file holds its shape.
	id := first["id"].(string)
	r = e.do("acme/viewer", "GET", "/v2/tracking_requests/"+id+"?include=tracked_object", nil)
	wantDocument(t, r, http.StatusOK, "get-tracking-request-200")
	golden(t, "get-tracking-request", r)
	if r := e.do("acme/viewer", "GET", "/v2/tracking_requests/"+strings.ToUpper(id), nil); r.status != http.StatusOK {
		t.Errorf("an upper-case id: %d", r.status)
	}
}

// TestTrackingRequestCreate: the rules of a create, each refused with a 422
// at its attribute, the duplicate, and the pending request stored for the
// poller.
func TestTrackingRequestCreate(t *testing.T) {
	e := newEnv(t, envOptions{})
	post := func(who string, attrs map[string]any) *response {
		t.Helper()
		return e.do(who, "POST", "/v2/tracking_requests", resource("tracking_request", attrs))
	}
	r := post("acme/member", map[string]any{"request_type": "bill_of_lading", "request_number": " medu-fr 030802 ", "scac": "mscu",
		"ref_numbers": []string{"PO1", "PO1", " HBL2 "}, "shipment_tags": []string{"camembert"}})
	data := obj(wantDocument(t, r, http.StatusCreated, "post-tracking-requests-201"), "data")
	id := data["id"].(string)
	a := obj(data, "attributes")
	if a["request_number"] != "MEDUFR030802" || a["scac"] != "MSCU" || a["status"] != "pending" || a["failed_reason"] != nil ||
		!equalList(a["ref_numbers"], "PO1", "HBL2") || !equalList(a["tags"], "camembert") || a["is_retrying"] != false ||
		obj(data, "relationships", "tracked_object")["data"] != nil {
		t.Errorf("created: %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != publicBase+"/v2/tracking_requests/"+id {
		t.Errorf("Location %q", loc)
	}
	// Stored for the poller: due now, made by the member's user.
	var due, byUser bool
	if err := e.store.SQL().QueryRowContext(context.Background(),
		`SELECT next_poll_at <= now(), user_id IS NOT NULL FROM tracking_requests WHERE id = $1`, id).Scan(&due, &byUser); err != nil || !due || !byUser {
		t.Errorf("stored request: due %v, by a user %v, %v", due, byUser, err)
	}
	if got := obj(e.get("/v2/tracking_requests/"+id), "data", "attributes"); got["status"] != "pending" {
		t.Errorf("read back: %v", got)
	}

	// The same number, type and SCAC again (in any spelling): a duplicate.
	e422 := wantError(t, post("acme/admin", map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUFR030802", "scac": "MSCU"}),
		http.StatusUnprocessableEntity, "pointer", "/data/attributes/request_number")
	if !strings.Contains(fmt.Sprint(e422["detail"]), "already being tracked") {
		t.Errorf("duplicate: %v", e422["detail"])
	}
	// Another account may track it.
	if r := post("globex/admin", map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUFR030802", "scac": "MSCU"}); r.status != http.StatusCreated {
		t.Errorf("another account's: %d %s", r.status, r.body)
	}
	// Once the first failed, the number may be asked again.
	if _, err := e.store.SQL().ExecContext(context.Background(),
		`UPDATE tracking_requests SET status = 'failed', failed_reason = 'not_found' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if r := post("acme/admin", map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUFR030802", "scac": "MSCU"}); r.status != http.StatusCreated {
		t.Errorf("after a failure: %d %s", r.status, r.body)
	}

	// A valid container number; its check digit wrong is a 422.
	if r := post("acme/member", map[string]any{"request_type": "container", "request_number": "MSCU 123456-6", "scac": "MSCU"}); r.status != http.StatusCreated {
		t.Errorf("container: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		attrs  map[string]any
		member string
		detail string
	}{
		{map[string]any{"request_number": "X1", "scac": "MSCU"}, "request_type", "Request type can't be blank"},
		{map[string]any{"request_type": "awb", "request_number": "X1", "scac": "MSCU"}, "request_type", "Request type 'awb' is not valid"},
		{map[string]any{"request_type": "bill_of_lading", "scac": "MSCU"}, "request_number", "Request number can't be blank"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": " - ", "scac": "MSCU"}, "request_number", "Request number can't be blank"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "X1"}, "scac", "Scac can't be blank"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "X1", "scac": "XXXX"}, "scac", "Scac 'XXXX' is not recognized"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "X1", "scac": "WHLC"}, "scac", "Scac 'WHLC' is not supported. We do not currently integrate with Wan Hai Lines"},
		{map[string]any{"request_type": "container", "request_number": "HDMU1234561", "scac": "HDMU"}, "scac", "Scac 'HDMU' is not supported"},
		{map[string]any{"request_type": "container", "request_number": "MSCU1234567", "scac": "MSCU"}, "request_number", "is not a valid container number: its check digit should be 6"},
		{map[string]any{"request_type": "container", "request_number": "MEDUFR030802", "scac": "MSCU"}, "request_number", "is not a container number"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "X1", "scac": "MSCU", "ref_numbers": "PO1"}, "ref_numbers", "ref_numbers"},
		{map[string]any{"request_type": 5, "request_number": "X1", "scac": "MSCU"}, "request_type", "request_type"},
	} {
		r := post("acme/member", c.attrs)
		e422 := wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
		if !strings.Contains(fmt.Sprint(e422["detail"]), c.detail) {
			t.Errorf("%v: detail %q, want it to contain %q", c.attrs, e422["detail"], c.detail)
		}
		validate(t, "post-tracking-requests-422", r.body)
	}
	// The key's role is checked first, then the body's shape.
	valid := map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUVIEWER1", "scac": "MSCU"}
	wantError(t, post("acme/viewer", valid), http.StatusForbidden, "", "")
	wantError(t, post("acme/viewer", map[string]any{}), http.StatusForbidden, "", "")
	wantError(t, e.do("", "POST", "/v2/tracking_requests", resource("tracking_request", valid)), http.StatusUnauthorized, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/tracking_requests", map[string]any{"data": map[string]any{"type": "shipment", "attributes": valid}}),
		http.StatusBadRequest, "pointer", "/data/type")
	if n := int(obj(e.get("/v2/tracking_requests?filter[request_number]=MEDUVIEWER1"), "meta")["total"].(float64)); n != 0 {
		t.Errorf("a refused create stored %d requests", n)
	}
}

// TestTrackingRequestUpdate: PATCH ref_numbers (or the OpenAPI document's
// ref_number) and tags; other attributes are refused.
func TestTrackingRequestUpdate(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.firstID("/v2/tracking_requests?page[size]=1")
	self := "/v2/tracking_requests/" + id
	r := e.do("acme/member", "PATCH", self+"?include=tracked_object", resource("tracking_request", map[string]any{"ref_numbers": []string{"R1", "R2"}, "tags": []string{"hot"}}))
	doc := wantDocument(t, r, http.StatusOK, "patch-tracking-request-200")
	if a := obj(doc, "data", "attributes"); !equalList(a["ref_numbers"], "R1", "R2") || !equalList(a["tags"], "hot") || len(doc["included"].([]any)) != 1 {
		t.Errorf("PATCH: %s", r.body)
	}
	r = e.do("acme/member", "PATCH", self, resource("tracking_request", map[string]any{"ref_number": "R9"}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || !equalList(a["ref_numbers"], "R9") || !equalList(a["tags"], "hot") {
		t.Errorf("ref_number: %d %s", r.status, r.body)
	}
	r = e.do("acme/member", "PATCH", self, resource("tracking_request", map[string]any{"tags": nil}))
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusOK || !equalList(a["tags"]) {
		t.Errorf("clear tags: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		attrs  map[string]any
		member string
	}{
		{map[string]any{"scac": "MAEU"}, "scac"},
		{map[string]any{"status": "created"}, "status"},
		{map[string]any{"tags": "hot"}, "tags"},
		{map[string]any{"ref_number": 5}, "ref_number"},
	} {
		wantError(t, e.do("acme/member", "PATCH", self, resource("tracking_request", c.attrs)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
	}
	wantError(t, e.do("acme/viewer", "PATCH", self, resource("tracking_request", map[string]any{"tags": []string{"x"}})), http.StatusForbidden, "", "")
	wantError(t, e.do("", "PATCH", self, resource("tracking_request", map[string]any{"tags": []string{"x"}})), http.StatusUnauthorized, "", "")
	wantError(t, e.do("acme/member", "PATCH", "/v2/tracking_requests/00000000-0000-4000-8000-000000000000", resource("tracking_request", map[string]any{"scac": 1})), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "DELETE", self, nil), http.StatusMethodNotAllowed, "", "")
}

// TestTrackingRequestTenants: another account's request is not found on
// every path, and never listed.
func TestTrackingRequestTenants(t *testing.T) {
	e := newEnv(t, envOptions{})
	acme := e.firstID("/v2/tracking_requests?page[size]=1")
	for _, who := range []string{"globex/admin", "globex/viewer"} {
		wantError(t, e.do(who, "GET", "/v2/tracking_requests/"+acme, nil), http.StatusNotFound, "", "")
		wantError(t, e.do(who, "GET", "/v2/tracking_requests/"+acme+"?include=tracked_object", nil), http.StatusNotFound, "", "")
	}
	wantError(t, e.do("globex/admin", "PATCH", "/v2/tracking_requests/"+acme, resource("tracking_request", map[string]any{"tags": []string{"x"}})), http.StatusNotFound, "", "")
	for _, d := range e.getAs("globex/admin", "/v2/tracking_requests?page[size]=100")["data"].([]any) {
		if d.(map[string]any)["id"] == acme {
			t.Errorf("globex lists acme's request %s", acme)
		}
	}
	if n := int(obj(e.getAs("globex/admin", "/v2/tracking_requests?filter[request_number]="+
		obj(e.get("/v2/tracking_requests/"+acme), "data", "attributes")["request_number"].(string)), "meta")["total"].(float64)); n != 0 {
		t.Errorf("globex finds acme's number: %d", n)
	}
	wantError(t, e.do("", "GET", "/v2/tracking_requests", nil), http.StatusUnauthorized, "", "")
	wantError(t, e.do("", "GET", "/v2/tracking_requests/"+acme, nil), http.StatusUnauthorized, "", "")
}

// TestInferNumber: container numbers by owner code and check digit, bills
// of lading by the lines' prefixes, bookings, and the 422 of a number that
// is not one.
func TestInferNumber(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, c := range []struct {
		number, numberType, decision, selected string
		valid, checkDigit                      any
		candidates                             []string
	}{
		{"MSCU1234566", "container", "auto_select", "MSCU", true, true, []string{"MSCU"}},
		{"mscu 123456-7", "container", "needs_confirmation", "", false, false, []string{"MSCU"}},
		{"WHLU1234560", "container", "needs_confirmation", "", true, true, []string{"WHLC"}},
		{"MEDUFR030802", "bill_of_lading", "auto_select", "MSCU", true, nil, []string{"MSCU"}},
		{"EGLV084900042045", "bill_of_lading", "auto_select", "EGLV", true, nil, []string{"EGLV"}},
		{"212157148", "booking", "no_prediction", "", true, nil, []string{}},
		{"QQQQ99", "bill_of_lading", "no_prediction", "", true, nil, []string{}},
	} {
		r := e.do("acme/viewer", "POST", "/v2/tracking_requests/infer_number", map[string]any{"number": c.number})
		data := obj(wantDocument(t, r, http.StatusOK, "post-tracking-requests-infer-number-200"), "data")
		a := obj(data, "attributes")
		v, line := obj(a, "validation"), obj(a, "shipping_line")
		var cands []string
		for _, x := range line["candidates"].([]any) {
			cands = append(cands, x.(map[string]any)["scac"].(string))
		}
		sel := ""
		if s, ok := line["selected"].(map[string]any); ok {
			sel = s["scac"].(string)
		}
		if data["type"] != "infer_number_results" || a["number_type"] != c.numberType || line["decision"] != c.decision || sel != c.selected ||
			v["is_valid"] != c.valid || v["check_digit_passed"] != c.checkDigit || fmt.Sprint(cands) != fmt.Sprint(c.candidates) && len(c.candidates)+len(cands) > 0 {
			t.Errorf("%s: %s", c.number, r.body)
		}
	}
	for _, body := range []any{map[string]any{"number": ""}, map[string]any{"number": "AB/12"}, map[string]any{}} {
		wantError(t, e.do("acme/viewer", "POST", "/v2/tracking_requests/infer_number", body), http.StatusUnprocessableEntity, "pointer", "/number")
	}
	wantError(t, e.do("", "POST", "/v2/tracking_requests/infer_number", map[string]any{"number": "MSCU1234566"}), http.StatusUnauthorized, "", "")
}

// TestTrackingRequestRefusesWhatInferCalls: every number infer_number
// calls invalid is a 422 at request_number on create too (never stored in
// a mangled form), free text refuses control and bidi characters and the
// U+FFFD a lone surrogate decodes to, and null members of ref_numbers and
// tags are refused rather than dropped.
func TestTrackingRequestRefusesWhatInferCalls(t *testing.T) {
	e := newEnv(t, envOptions{})
	for _, number := range []string{
		"!!", "MEDU\x07FR030802", "MEDU\u202eFR030802", "MEDU\u2066FR0308", "MEDU🚢030802", "'; DROP TABLE tracking_requests; --",
		"MEDU%", "MEDU_FR030802", "../../etc/passwd", "<script>alert(1)</script>", "MEDU\tFR030802", "MEDU\ufffd0308",
	} {
		r := e.do("acme/viewer", "POST", "/v2/tracking_requests/infer_number", map[string]any{"number": number})
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/number")
		r = e.do("acme/member", "POST", "/v2/tracking_requests", resource("tracking_request", map[string]any{"request_type": "bill_of_lading", "request_number": number, "scac": "MSCU"}))
		e422 := wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/request_number")
		if d := fmt.Sprint(e422["detail"]); !strings.Contains(d, "is not valid") || strings.ContainsAny(d, "\u202e\u2066\x07") {
			t.Errorf("%q: detail %q", number, d)
		}
		validate(t, "post-tracking-requests-422", r.body)
	}
	// A lone surrogate, escaped in the JSON (encoding/json would store
	// U+FFFD), in the number, a reference number, a tag.
	for _, c := range []struct{ body, member string }{
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDU\ud800FR030802","scac":"MSCU"}}}`, "request_number"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDUFR030802","scac":"MSCU","ref_numbers":["PO\udc00"]}}}`, "ref_numbers"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDUFR030802","scac":"MSCU","tags":["a\u202eb"]}}}`, "tags"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDUFR030802","scac":"MSCU","ref_numbers":[null]}}}`, "ref_numbers"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDUFR030802","scac":"MSCU","tags":[null]}}}`, "tags"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":"MEDUFR030802","scac":"MSCU","shipment_tags":["ok",null]}}}`, "shipment_tags"},
		{`{"data":{"type":"tracking_request","attributes":{"request_type":"bill_of_lading","request_number":5,"scac":"MSCU"}}}`, "request_number"},
	} {
		r := e.do("acme/member", "POST", "/v2/tracking_requests", c.body)
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
		validate(t, "post-tracking-requests-422", r.body)
	}
	if n := int(obj(e.get("/v2/tracking_requests?filter[request_number]=MEDUFR030802"), "meta")["total"].(float64)); n != 0 {
		t.Errorf("refused creates stored %d requests", n)
	}
	// A party's company name: a lone surrogate, a bidi control.
	for _, body := range []string{
		`{"data":{"type":"party","attributes":{"company_name":"Acme \ud800 Ltd"}}}`,
		`{"data":{"type":"party","attributes":{"company_name":"Acme \u202e Ltd"}}}`,
	} {
		wantError(t, e.do("acme/member", "POST", "/v2/parties", body), http.StatusUnprocessableEntity, "pointer", "/data/attributes/company_name")
	}
	// PATCH: a null member of the lists is refused, not dropped.
	id := e.firstID("/v2/tracking_requests?page[size]=1")
	before := fmt.Sprint(obj(e.get("/v2/tracking_requests/"+id), "data", "attributes")["tags"])
	for _, member := range []string{"ref_numbers", "tags"} {
		wantError(t, e.do("acme/member", "PATCH", "/v2/tracking_requests/"+id, `{"data":{"type":"tracking_request","attributes":{"`+member+`":["x",null]}}}`),
			http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+member)
	}
	if after := fmt.Sprint(obj(e.get("/v2/tracking_requests/"+id), "data", "attributes")["tags"]); after != before {
		t.Errorf("tags %s after refused PATCHes, were %s", after, before)
	}
}

// TestTrackingRequestAutoDetectScac: with auto_detect_vocc_scac and no
// scac, the create takes the shipping line infer_number selects; a number
// no line can be inferred from is a 422 at auto_detect_vocc_scac; without
// the flag a missing scac is still refused; a given scac wins.
func TestTrackingRequestAutoDetectScac(t *testing.T) {
	e := newEnv(t, envOptions{})
	post := func(attrs map[string]any) *response {
		t.Helper()
		return e.do("acme/member", "POST", "/v2/tracking_requests", resource("tracking_request", attrs))
	}
	r := post(map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUAD771234", "auto_detect_vocc_scac": true})
	if a := obj(wantDocument(t, r, http.StatusCreated, "post-tracking-requests-201"), "data", "attributes"); a["scac"] != "MSCU" || a["status"] != "pending" {
		t.Errorf("auto-detected: %s", r.body)
	}
	r = post(map[string]any{"request_type": "container", "request_number": "MSCU1234566", "auto_detect_vocc_scac": true})
	if a := obj(r.json(t), "data", "attributes"); r.status != http.StatusCreated || a["scac"] != "MSCU" {
		t.Errorf("auto-detected container: %d %s", r.status, r.body)
	}
	r = post(map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUAD771235", "scac": "MSCU", "auto_detect_vocc_scac": true})
	if r.status != http.StatusCreated {
		t.Errorf("given scac with the flag: %d %s", r.status, r.body)
	}
	for _, c := range []struct {
		attrs  map[string]any
		member string
	}{
		{map[string]any{"request_type": "bill_of_lading", "request_number": "QQ123456789", "auto_detect_vocc_scac": true}, "auto_detect_vocc_scac"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUAD771236", "auto_detect_vocc_scac": false}, "scac"},
		{map[string]any{"request_type": "bill_of_lading", "request_number": "MEDUAD771236", "auto_detect_vocc_scac": "yes"}, "auto_detect_vocc_scac"},
	} {
		r := post(c.attrs)
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.member)
		validate(t, "post-tracking-requests-422", r.body)
	}
}

// TestTrackingRequestInitialCustomFields: initial_custom_fields (the
// OpenAPI document's shape) is checked at the create against the account's
// definitions and stored on the request by definition id; an unknown slug,
// a slug of the other entity type, a value its data type refuses, a
// missing value and a malformed shape are 422s pointing at the member.
func TestTrackingRequestInitialCustomFields(t *testing.T) {
	e := newEnv(t, envOptions{})
	post := func(number string, initial any) *response {
		t.Helper()
		return e.do("acme/member", "POST", "/v2/tracking_requests", resource("tracking_request", map[string]any{
			"request_type": "bill_of_lading", "request_number": number, "scac": "MSCU", "initial_custom_fields": initial}))
	}
	r := post("MEDUIC100001", map[string]any{
		"shipment": []any{map[string]any{"api_slug": "customer_po", "value": "PO-1"}, map[string]any{"api_slug": "priority_level", "value": "high"}},
		"containers": []any{
			map[string]any{"api_slug": "yard_slot", "value": "A-1", "number": "mscu1234566"},
			map[string]any{"api_slug": "yard_slot", "value": "B-all", "number": ""},
			map[string]any{"api_slug": "chassis_provider", "value": "dcli"},
		},
	})
	id := obj(wantDocument(t, r, http.StatusCreated, "post-tracking-requests-201"), "data")["id"].(string)
	var stored []struct {
		DefinitionID string          `json:"definition_id"`
		Entity       string          `json:"entity"`
		Value        json.RawMessage `json:"value"`
		Number       string          `json:"number"`
	}
	var raw []byte
	if err := e.store.SQL().QueryRow(`SELECT initial_custom_fields FROM tracking_requests WHERE id = $1`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var got []string
	for _, s := range stored {
		var slug string
		if err := e.store.SQL().QueryRow(`SELECT api_slug FROM custom_field_definitions WHERE id = $1`, s.DefinitionID).Scan(&slug); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s=%s %s", s.Entity, slug, s.Value, s.Number))
	}
	want := []string{`shipment customer_po="PO-1" `, `shipment priority_level="high" `, `container yard_slot="A-1" MSCU1234566`,
		`container yard_slot="B-all" `, `container chassis_provider="dcli" `}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("stored %q, want %q", got, want)
	}
	// Without initial_custom_fields nothing is staged.
	r = post("MEDUIC100002", nil)
	if r.status != http.StatusCreated {
		t.Fatalf("create without: %d\n%s", r.status, r.body)
	}
	if err := e.store.SQL().QueryRow(`SELECT initial_custom_fields FROM tracking_requests WHERE id = $1`,
		obj(r.json(t), "data")["id"]).Scan(&raw); err != nil || raw != nil {
		t.Errorf("staged without initial_custom_fields: %s %v", raw, err)
	}

	for i, c := range []struct {
		initial any
		pointer string
	}{
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "no_such_field", "value": "x"}}}, "initial_custom_fields/shipment/0/api_slug"},
		// A container definition named for the shipment.
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "yard_slot", "value": "x"}}}, "initial_custom_fields/shipment/0/api_slug"},
		{map[string]any{"containers": []any{map[string]any{"api_slug": "yard_slot", "value": "x"}, map[string]any{"api_slug": "chassis_provider", "value": "nope"}}}, "initial_custom_fields/containers/1/value"},
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "declared_value_usd", "value": "lots"}}}, "initial_custom_fields/shipment/0/value"},
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "customer_po"}}}, "initial_custom_fields/shipment/0/value"},
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "customer_po", "value": "x", "number": "MSCU1234566"}}}, "initial_custom_fields/shipment/0/number"},
		{map[string]any{"shipment": []any{map[string]any{"api_slug": "customer_po", "value": "x"}, map[string]any{"api_slug": "customer_po", "value": "y"}}}, "initial_custom_fields/shipment/1/api_slug"},
		{map[string]any{"shipment": "customer_po"}, "initial_custom_fields/shipment"},
		{map[string]any{"shipments": []any{}}, "initial_custom_fields/shipments"},
		{map[string]any{"containers": []any{"x"}}, "initial_custom_fields/containers/0"},
		{map[string]any{"containers": []any{map[string]any{"api_slug": 5, "value": "x"}}}, "initial_custom_fields/containers/0/api_slug"},
		{[]any{}, "initial_custom_fields"},
	} {
		r := post(fmt.Sprintf("MEDUIC2%05d", i), c.initial)
		wantError(t, r, http.StatusUnprocessableEntity, "pointer", "/data/attributes/"+c.pointer)
		validate(t, "post-tracking-requests-422", r.body)
	}
}

// newRequestDefinition creates a TrackingRequest definition of acme
// (short_text) through /v2 and returns its id.
func newRequestDefinition(t *testing.T, e *env, slug string) string {
	t.Helper()
	r := e.do("acme/admin", "POST", "/v2/custom_field_definitions", newDefinition("TrackingRequest", slug, "short_text"))
	if a := obj(wantDocument(t, r, http.StatusCreated, "post-custom-field-definition-201"), "data", "attributes"); a["entity_type"] != "TrackingRequest" || a["api_slug"] != slug {
		t.Fatalf("definition: %v", a)
	}
	return obj(r.json(t), "data")["id"].(string)
}

// TestTrackingRequestCustomFields: POST, GET (the self link), PATCH and
// DELETE of a value by slug under /v2/tracking_requests/{id}, as
// TestEntityCustomFields does for shipments and containers, and its
// tenancy and roles.
func TestTrackingRequestCustomFields(t *testing.T) {
	e := newEnv(t, envOptions{})
	const slug = "internal_ref"
	def := newRequestDefinition(t, e, slug)
	id := e.firstID("/v2/tracking_requests?page[size]=1")
	base := "/v2/tracking_requests/" + id + "/custom_fields"
	self := base + "/" + slug

	// Nothing set yet: an empty list, valid.
	list := e.do("acme/viewer", "GET", base, nil)
	if list.status != http.StatusOK || len(list.json(t)["data"].([]any)) != 0 {
		t.Fatalf("GET before: %d\n%s", list.status, list.body)
	}
	validate(t, "get-tracking-request-custom-fields-200", list.body)

	// Create: 201, Location is the self link, which answers GET.
	r := e.do("acme/member", "POST", base, newCF(slug, "REF-1"))
	data := obj(wantDocument(t, r, http.StatusCreated, "post-tracking-request-custom-field-201"), "data")
	created := data["id"].(string)
	if loc := r.header.Get("Location"); loc != publicBase+self || obj(data, "links")["self"] != loc {
		t.Errorf("Location %q, self %v, want %s", loc, obj(data, "links")["self"], publicBase+self)
	}
	if ent := obj(data, "relationships", "entity", "data"); ent["type"] != "tracking_request" || ent["id"] != id {
		t.Errorf("entity %v, want tracking_request %s", ent, id)
	}
	golden(t, "custom_field_create_tracking_requests", r, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")
	g := e.do("acme/viewer", "GET", self, nil)
	if g.status != http.StatusOK || obj(g.json(t), "data")["id"] != created {
		t.Fatalf("GET self: %d\n%s", g.status, g.body)
	}
	validate(t, "get-custom-field-200", g.body)
	if up := e.do("acme/viewer", "GET", strings.Replace(self, id, strings.ToUpper(id), 1), nil); up.status != http.StatusOK || !sameData(t, up, g) {
		t.Errorf("GET with an upper-case id: %d\n%s", up.status, up.body)
	}

	// A second POST updates the value it has: 201, the same record.
	r = e.do("acme/member", "POST", base, newCF(slug, "REF-2"))
	if d := obj(wantDocument(t, r, http.StatusCreated, "post-tracking-request-custom-field-201"), "data"); d["id"] != created || obj(d, "attributes")["value"] != "REF-2" {
		t.Errorf("second POST: %v, want id %s and value REF-2", d, created)
	}
	if n := countSlug(t, e, base, slug); n != 1 {
		t.Errorf("after the second POST %s is listed %d times", slug, n)
	}

	// Update.
	r = e.do("acme/member", "PATCH", self, cfBody("REF-3"))
	if a := obj(wantDocument(t, r, http.StatusOK, "patch-tracking-request-custom-field-200"), "data", "attributes"); a["value"] != "REF-3" {
		t.Errorf("PATCH: %v", a)
	}
	list = e.do("acme/viewer", "GET", base, nil)
	validate(t, "get-tracking-request-custom-fields-200", list.body)
	golden(t, "tracking_request_custom_fields", list, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")

	// Another account's request is not found, to read and to write; a
	// viewer may read but not write.
	globex := "globex/admin"
	wantError(t, e.do(globex, "GET", base, nil), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "GET", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "POST", base, newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "PATCH", self, cfBody("x")), http.StatusNotFound, "", "")
	wantError(t, e.do(globex, "DELETE", self, nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/viewer", "POST", base, newCF(slug, "x")), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/viewer", "PATCH", self, cfBody("x")), http.StatusForbidden, "", "")
	wantError(t, e.do("acme/viewer", "DELETE", self, nil), http.StatusForbidden, "", "")
	if got := obj(e.get(self), "data", "attributes")["value"]; got != "REF-3" {
		t.Errorf("after refused writes the value is %v", got)
	}

	// Clear with null: 204, gone.
	if r := e.do("acme/member", "PATCH", self, cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", self, nil), http.StatusNotFound, "", "")
	// PATCH of an unset value sets it (as for shipments).
	if r := e.do("acme/member", "PATCH", self, cfBody("REF-4")); r.status != http.StatusOK {
		t.Fatalf("PATCH unset: %d\n%s", r.status, r.body)
	}

	deleteCustomField(t, e, self, created)
	if n := countSlug(t, e, base, slug); n != 0 {
		t.Errorf("deleted value still listed %d times", n)
	}

	// Bad input: 404 before 422, 422 for the attributes.
	wantError(t, e.do("acme/member", "POST", base, newCF("no_such_field", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", base, newCF(slug, nil)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	wantError(t, e.do("acme/member", "POST", base, newCF(slug, 12)), http.StatusUnprocessableEntity, "pointer", "/data/attributes/value")
	wantError(t, e.do("acme/member", "POST", base, cfBody("x")), http.StatusUnprocessableEntity, "pointer", "/data/attributes/api_slug")
	unknown := strings.Replace(base, id, "00000000-0000-4000-8000-000000000000", 1)
	wantError(t, e.do("acme/member", "POST", unknown, newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", unknown, nil), http.StatusNotFound, "", "")

	// A shipment's id under /v2/tracking_requests, and a request's under
	// /v2/shipments, are not found; a shipment definition's slug on a
	// request (and the reverse) is not found.
	s := shipmentWithout(t, e, "customer_po")
	wantError(t, e.do("acme/member", "POST", "/v2/tracking_requests/"+s+"/custom_fields", newCF(slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "GET", "/v2/tracking_requests/"+s+"/custom_fields", nil), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/shipments/"+id+"/custom_fields", newCF("customer_po", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", base, newCF("customer_po", "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/member", "POST", "/v2/shipments/"+s+"/custom_fields", newCF(slug, "x")), http.StatusNotFound, "", "")
}

// TestTrackingRequestCustomFieldsResource: /v2/custom_fields and
// /v2/custom_field_definitions take the tracking request entity: create
// on relationships.entity of type tracking_request, the entity_type
// filters, read, update and delete by id.
func TestTrackingRequestCustomFieldsResource(t *testing.T) {
	e := newEnv(t, envOptions{})
	const slug = "desk"
	def := newRequestDefinition(t, e, slug)
	id := e.firstID("/v2/tracking_requests?page[size]=1")

	// Definitions: the filter names the new type, in either spelling.
	for _, q := range []string{"TrackingRequest", "tracking_request", "trackingrequest"} {
		r := e.do("acme/viewer", "GET", "/v2/custom_field_definitions?filter[entity_type]="+q, nil)
		data := wantDocument(t, r, http.StatusOK, "get-custom-field-definitions-200")["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != def {
			t.Errorf("definitions of %s: %v, want only %s", q, data, def)
		}
	}

	// Create on the entity of the relationship.
	r := e.do("acme/member", "POST", "/v2/custom_fields", newEntityCF("tracking_request", strings.ToUpper(id), slug, "D-1"))
	created := obj(wantDocument(t, r, http.StatusCreated, "post-custom-field-201"), "data")["id"].(string)
	golden(t, "custom_field_create_tracking_request", r, created, "<created-id>", id, "<entity-id>", def, "<definition-id>")
	if loc := r.header.Get("Location"); loc != publicBase+"/v2/tracking_requests/"+id+"/custom_fields/"+slug {
		t.Errorf("Location %q", loc)
	}
	for _, c := range []struct {
		body    any
		status  int
		pointer string
	}{
		{newEntityCF("tracking_request", id, slug, "x"), http.StatusUnprocessableEntity, "/data/attributes/api_slug"},
		{newEntityCF("tracking_request", id, "customer_po", "x"), http.StatusNotFound, ""},
		{newEntityCF("shipment", id, slug, "x"), http.StatusNotFound, ""},
		{newEntityCF("tracking_request", "00000000-0000-4000-8000-000000000000", slug, "x"), http.StatusNotFound, ""},
		{newEntityCF("trackingrequest", id, slug, "x"), http.StatusBadRequest, "/data/relationships/entity/data/type"},
	} {
		r := e.do("acme/member", "POST", "/v2/custom_fields", c.body)
		if c.pointer != "" {
			wantError(t, r, c.status, "pointer", c.pointer)
		} else {
			wantError(t, r, c.status, "", "")
		}
	}
	wantError(t, e.do("globex/admin", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "x")), http.StatusNotFound, "", "")
	wantError(t, e.do("acme/viewer", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "x")), http.StatusForbidden, "", "")

	// The list's entity_type filter, in either spelling, and entity_id.
	for _, q := range []string{"filter[entity_type]=tracking_request", "filter[entity_type]=TrackingRequest", "filter[entity_id]=" + id} {
		r := e.do("acme/viewer", "GET", "/v2/custom_fields?"+q, nil)
		data := wantDocument(t, r, http.StatusOK, "get-custom-fields-200")["data"].([]any)
		if len(data) != 1 || data[0].(map[string]any)["id"] != created {
			t.Errorf("GET %s: %s, want only %s", q, r.body, created)
		}
	}
	for _, d := range e.get("/v2/custom_fields?filter[entity_type]=shipment&page[size]=100")["data"].([]any) {
		if obj(d, "relationships", "entity", "data")["type"] != "shipment" {
			t.Errorf("filter[entity_type]=shipment lists %v", d)
		}
	}
	wantError(t, e.do("acme/viewer", "GET", "/v2/custom_fields?filter[entity_type]=vessel", nil), http.StatusBadRequest, "parameter", "filter[entity_type]")
	meta := obj(e.get("/v2/custom_fields?page[size]=1"), "meta")
	total := 0.0
	for _, typ := range []string{"Shipment", "Container", "TrackingRequest"} {
		total += obj(e.get("/v2/custom_fields?page[size]=1&filter[entity_type]="+typ), "meta")["total"].(float64)
	}
	if meta["total"] != total {
		t.Errorf("total %v, the three types %v", meta["total"], total)
	}

	// By id: read (the self link answers the same), update, clear, delete.
	one := "/v2/custom_fields/" + created
	g := e.do("acme/viewer", "GET", one, nil)
	selfLink := strings.TrimPrefix(obj(wantDocument(t, g, http.StatusOK, "get-custom-field-200"), "data", "links")["self"].(string), publicBase)
	if s := e.do("acme/viewer", "GET", selfLink, nil); s.status != http.StatusOK || !sameData(t, s, g) {
		t.Errorf("GET %s: %d\n%s", selfLink, s.status, s.body)
	}
	wantError(t, e.do("globex/admin", "GET", one, nil), http.StatusNotFound, "", "")
	r = e.do("acme/member", "PATCH", one, cfBody("D-2"))
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["value"] != "D-2" {
		t.Fatalf("PATCH: %d\n%s", r.status, r.body)
	}
	validate(t, "patch-custom-field-200", r.body)
	if got := obj(e.get(selfLink), "data", "attributes")["value"]; got != "D-2" {
		t.Errorf("after PATCH by id the request's value is %v", got)
	}
	if r := e.do("acme/member", "PATCH", one, cfBody(nil)); r.status != http.StatusNoContent {
		t.Fatalf("clear: %d\n%s", r.status, r.body)
	}
	wantError(t, e.do("acme/member", "GET", one, nil), http.StatusNotFound, "", "")

	r = e.do("acme/member", "POST", "/v2/custom_fields", newEntityCF("tracking_request", id, slug, "D-3"))
	if r.status != http.StatusCreated {
		t.Fatalf("POST again: %d\n%s", r.status, r.body)
	}
	again := "/v2/custom_fields/" + obj(r.json(t), "data")["id"].(string)
	r = e.do("acme/member", "DELETE", again, nil)
	if r.status != http.StatusOK || obj(r.json(t), "data", "attributes")["value"] != "D-3" {
		t.Fatalf("DELETE: %d\n%s", r.status, r.body)
	}
	validate(t, "get-custom-field-200", r.body)
	wantError(t, e.do("acme/member", "GET", again, nil), http.StatusNotFound, "", "")
}
