package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// TestResponseLimit: a GraphQL response past ResponseLimit is aborted, not
// sent whole; smaller ones pass.
func TestResponseLimit(t *testing.T) {
	url, keys := seeded(t)
	c := testkit.Defaults()
	c.ResponseLimit = 300
	in := start(t, url, &c)
	k := keys["acme/admin"]
	if r := in.gql(t, k, `{ viewer { role } }`); r.status != http.StatusOK {
		t.Fatalf("a small response: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest(http.MethodPost, in.url+"/graphql",
		strings.NewReader(`{"query":"{ shipments(first: 50) { nodes { id number: billOfLadingNumber containers { number } } } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Token "+k)
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		body, rerr := io.ReadAll(res.Body)
		res.Body.Close()
		if rerr == nil && len(body) > 300 {
			t.Errorf("a response past the limit was sent whole: %d bytes", len(body))
		}
	}
	if !strings.Contains(in.log.String(), "response too large") {
		t.Error("the aborted response is not logged")
	}
}
