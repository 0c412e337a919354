package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"shipgraph/httpapi"
	"shipgraph/respcache"
)

// The default Accept headers of GraphQL clients, as they send them.
var clientAccepts = map[string]string{
	"urql":            "application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed",
	"apollo client":   "application/graphql-response+json,application/json;q=0.9",
	"graphql-request": "application/graphql-response+json, application/json",
}

// TestGraphQLClientDefaults: with each client's default Accept, a plain
// query over POST and over GET is one JSON result (not a stream), with an
// ETag, and the same request again is an answer from the response cache.
func TestGraphQLClientDefaults(t *testing.T) {
	url, keys := seeded(t)
	in := cached(t, url)
	k := keys["acme/admin"]
	q := `query Few { shipments(first: 3) { nodes { id billOfLadingNumber } } }`
	post, _ := json.Marshal(map[string]string{"query": q, "operationName": "Few"})
	get := "/graphql?operationName=Few&query=" + url_(q)
	for client, accept := range clientAccepts {
		for _, m := range []struct{ method, path, body string }{{http.MethodPost, "/graphql", string(post)}, {http.MethodGet, get, ""}} {
			first := in.do(t, m.method, m.path, k, m.body, "Accept", accept)
			ct := first.header.Get("Content-Type")
			if first.status != http.StatusOK || !strings.HasPrefix(ct, "application/graphql-response+json") {
				t.Fatalf("%s %s: %d %q\n%s", client, m.method, first.status, ct, first.body)
			}
			if first.header.Get("ETag") == "" || !bytes.HasPrefix(first.body, []byte(`{"data":`)) {
				t.Fatalf("%s %s: ETag %q, body %s", client, m.method, first.header.Get("ETag"), first.body)
			}
			again := in.do(t, m.method, m.path, k, m.body, "Accept", accept)
			if again.statements != 0 || !bytes.Equal(again.body, first.body) || again.header.Get("ETag") != first.header.Get("ETag") {
				t.Errorf("%s %s again: %d statements (want an answer from the cache), same body %v", client, m.method, again.statements, bytes.Equal(again.body, first.body))
			}
		}
	}
}

// TestGraphQLStreamsOnlyWhenAsked: @defer from a client that accepts no
// stream gets the whole result at once (no hasNext left unkept); with
// multipart/mixed it still streams. A subscription over POST that accepts
// multipart/mixed (no SSE) is answered at once, not left hanging.
func TestGraphQLStreamsOnlyWhenAsked(t *testing.T) {
	url, keys := seeded(t)
	in := uncached(t, url)
	k := keys["acme/admin"]
	deferred, _ := json.Marshal(map[string]string{"query": `{ shipments(first: 2) { nodes { id ... @defer(label: "more") { billOfLadingNumber } } } }`})
	for _, accept := range []string{"", "application/json", clientAccepts["graphql-request"]} {
		r := in.do(t, http.MethodPost, "/graphql", k, string(deferred), "Accept", accept)
		if r.status != http.StatusOK || bytes.Contains(r.body, []byte("hasNext")) || !bytes.Contains(r.body, []byte(`"billOfLadingNumber"`)) ||
			strings.HasPrefix(r.header.Get("Content-Type"), "multipart/") {
			t.Fatalf("@defer with Accept %q: %d %s\n%s", accept, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	r := in.do(t, http.MethodPost, "/graphql", k, string(deferred), "Accept", "multipart/mixed, application/json")
	if !strings.HasPrefix(r.header.Get("Content-Type"), "multipart/mixed") || !bytes.Contains(r.body, []byte(`"hasNext":false`)) {
		t.Fatalf("@defer with multipart/mixed: %s\n%s", r.header.Get("Content-Type"), r.body)
	}
	sub, _ := json.Marshal(map[string]string{"query": `subscription { changes { id } }`})
	for _, accept := range []string{"multipart/mixed", "multipart/mixed, application/json", "application/graphql-response+json"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, in.url+"/graphql", bytes.NewReader(sub))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		req.Header.Set("Authorization", "Token "+k)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("subscription with Accept %q: %v (no answer)", accept, err)
		}
		var body struct {
			Errors []struct{ Extensions struct{ Code string } }
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		cancel()
		if err != nil || len(body.Errors) != 1 || body.Errors[0].Extensions.Code != "NOT_ACCEPTABLE" {
			t.Fatalf("subscription with Accept %q: %d %v %+v", accept, res.StatusCode, err, body)
		}
	}
}

// TestCostBudgetCachedAnswers: an answer from the response cache is
// charged to the caller's cost budget like any other, with the caller's
// current budget headers; the budget refuses once spent. Every paginated
// list weighs its page size.
func TestCostBudgetCachedAnswers(t *testing.T) {
	url, keys := seeded(t)
	k := keys["acme/admin"]
	probe := func(in *instance, q string) (*reply, int) {
		t.Helper()
		r := in.gql(t, k, q)
		n, err := strconv.Atoi(r.header.Get("Query-Cost"))
		if r.status != http.StatusOK || err != nil {
			t.Fatalf("%s: %d Query-Cost %q %s", q, r.status, r.header.Get("Query-Cost"), r.body)
		}
		return r, n
	}
	big := httpapi.DefaultConfig
	big.CostBudget = 1 << 30
	wide := start(t, url, &big)
	for _, list := range []string{"shipments", "trackingRequests", "parties", "webhooks", "emailSubmissions", "shippingLines"} {
		_, one := probe(wide, `{ `+list+`(first: 1) { nodes { id } } }`)
		_, hundred := probe(wide, `{ `+list+`(first: 100) { nodes { id } } }`)
		if hundred < 100 || hundred <= one {
			t.Errorf("%s: first: 1 costs %d, first: 100 costs %d (the page size is not weighed)", list, one, hundred)
		}
	}
	q := `{ shipments(first: 100) { nodes { id } } }`
	_, cost := probe(wide, q)
	cfg := httpapi.DefaultConfig
	cfg.CostBudget = cost*5/2 + 1 // two answers, not three
	cfg.ResponseCacheBytes = respcache.DefaultBytes
	in := start(t, url, &cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for !in.h.ResponseCacheLive() {
		if err := in.h.WaitResponseCache(ctx, "", 0); err != nil {
			t.Fatal(err)
		}
	}
	first, _ := probe(in, q)
	second, _ := probe(in, q)
	if second.statements != 0 {
		t.Fatalf("the second answer cost %d statements: not from the cache", second.statements)
	}
	r1, _ := strconv.Atoi(first.header.Get("Query-Cost-Remaining"))
	r2, _ := strconv.Atoi(second.header.Get("Query-Cost-Remaining"))
	if r2 >= r1 || r1-r2 < cost-cost/10 {
		t.Errorf("remaining after the first %d, after the cached second %d (cost %d): the cached answer was not charged", r1, r2, cost)
	}
	third := in.gql(t, k, q)
	if third.status != http.StatusTooManyRequests || third.header.Get("Retry-After") == "" || !bytes.Contains(third.body, []byte("COST_BUDGET_EXCEEDED")) {
		t.Fatalf("the third: %d Retry-After %q %s", third.status, third.header.Get("Retry-After"), third.body)
	}
}

// TestKnownPersistedDocuments: a document the server knows in advance
// (the operations page's) is answered from its persisted-query id alone,
// on the first request; an unknown id is still PERSISTED_QUERY_NOT_FOUND.
func TestKnownPersistedDocuments(t *testing.T) {
	url, keys := seeded(t)
	q := `query Known { shipments(first: 1) { nodes { id } } }`
	sum := sha256.Sum256([]byte(q))
	id := hex.EncodeToString(sum[:])
	cfg := httpapi.DefaultConfig
	cfg.GraphQL.KnownDocuments = map[string]string{id: q}
	in := start(t, url, &cfg)
	ext := func(h string) string {
		return "/graphql?operationName=Known&extensions=" + url_(`{"persistedQuery":{"version":1,"sha256Hash":"`+h+`"}}`)
	}
	accept := "application/graphql-response+json, application/json"
	r := in.do(t, http.MethodGet, ext(id), keys["acme/admin"], "", "Accept", accept)
	if r.status != http.StatusOK || !bytes.HasPrefix(r.body, []byte(`{"data":{"shipments"`)) {
		t.Fatalf("a known document by its id: %d %s", r.status, r.body)
	}
	other := sha256.Sum256([]byte("query Other { shipments { nodes { id } } }"))
	r = in.do(t, http.MethodGet, ext(hex.EncodeToString(other[:])), keys["acme/admin"], "", "Accept", accept)
	if !bytes.Contains(r.body, []byte("PERSISTED_QUERY_NOT_FOUND")) {
		t.Fatalf("an unknown id: %d %s", r.status, r.body)
	}
}
