package graph_test

import (
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// deferredDashboard shows shipments at once and defers the grouped count.
const deferredDashboard = `query Dashboard {
	shipments(first: 3) { nodes { billOfLadingNumber } }
	... @defer(label: "stats") { containerStats(groupBy: [STATUS]) { status count } }
}`

// sendMultipart sends query to the real server asking for multipart/mixed
// as Apollo Client does for an operation with @defer: over POST as a JSON
// body, over GET in the query string. The body is left to read part by part.
func sendMultipart(t *testing.T, env *testkit.Env, method, key, query string) *http.Response {
	t.Helper()
	req := env.NewRequest(t, http.MethodPost, key, "", testkit.JSON(t, map[string]any{"query": query}))
	if method == http.MethodGet {
		req = env.NewRequest(t, http.MethodGet, key, url.Values{"query": {query}}.Encode(), nil)
	}
	req.Header.Set("Accept", "multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestDefer reads a deferred dashboard from the real server part by part:
// the shipments first with hasNext, then the grouped count as an
// incremental part under its label, whose counts add up to the account's
// containers (plain SQL), and the closing boundary.
func TestDefer(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{Shipments: 30})
	checkDeferred(t, env, sendMultipart(t, env, http.MethodPost, env.Key(t, acmeViewer), deferredDashboard))

	// No key: one JSON error, as on the plain transport.
	resp := sendMultipart(t, env, http.MethodPost, "", deferredDashboard)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"UNAUTHENTICATED"`) {
		t.Fatalf("no key: %d %s", resp.StatusCode, b)
	}
}

// TestDeferGET: a query with @defer sent over GET that asks for
// multipart/mixed is delivered incrementally as over POST; a mutation over
// GET is refused with 405 as on the plain transport.
func TestDeferGET(t *testing.T) {
	t.Parallel()
	env := testkit.New(t, testkit.Options{Shipments: 30})
	checkDeferred(t, env, sendMultipart(t, env, http.MethodGet, env.Key(t, acmeViewer), deferredDashboard))
	resp := sendMultipart(t, env, http.MethodGet, env.Key(t, acmeAdmin), `mutation { deleteCustomField(id: "00000000-0000-0000-0000-000000000000") { id } }`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("a mutation over GET: %d Allow %q %s", resp.StatusCode, resp.Header.Get("Allow"), b)
	}
}

// checkDeferred reads the deferred dashboard's answer part by part.
func checkDeferred(t *testing.T, env *testkit.Env, resp *http.Response) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || err != nil || mt != "multipart/mixed" || params["deferspec"] != "20220824" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	mr := multipart.NewReader(resp.Body, params["boundary"])
	var parts []map[string]json.RawMessage
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("part %d: %v", len(parts), err)
		}
		if ct := p.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("part %d: Content-Type %q", len(parts), ct)
		}
		var v map[string]json.RawMessage
		if err := json.NewDecoder(p).Decode(&v); err != nil {
			t.Fatalf("part %d: %v", len(parts), err)
		}
		parts = append(parts, v)
	}
	if len(parts) != 2 {
		t.Fatalf("%d parts; want the initial answer and one deferred: %v", len(parts), parts)
	}
	var initial struct {
		Shipments struct {
			Nodes []struct{ BillOfLadingNumber string }
		}
		ContainerStats []any
	}
	if err := json.Unmarshal(parts[0]["data"], &initial); err != nil || len(initial.Shipments.Nodes) != 3 ||
		initial.ContainerStats != nil || string(parts[0]["hasNext"]) != "true" {
		t.Fatalf("initial part: %v (%v); want 3 shipments, no stats, hasNext true", parts[0], err)
	}
	var later []struct {
		Data struct {
			ContainerStats []struct {
				Status string
				Count  int
			}
		}
		Label string
		Path  []any
	}
	if err := json.Unmarshal(parts[1]["incremental"], &later); err != nil || len(later) != 1 ||
		later[0].Label != "stats" || string(parts[1]["hasNext"]) != "false" {
		t.Fatalf("deferred part: %v (%v); want one incremental result labelled stats, hasNext false", parts[1], err)
	}
	sum := 0
	for _, g := range later[0].Data.ContainerStats {
		sum += g.Count
	}
	var want int
	env.SQL(t, &want, `SELECT count(*) FROM containers c JOIN accounts a ON a.id = c.account_id WHERE a.slug = 'acme'`)
	if sum != want || want == 0 {
		t.Fatalf("deferred counts add up to %d; the account has %d containers", sum, want)
	}
}
