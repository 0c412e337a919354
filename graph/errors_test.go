package graph_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"shipgraph/graph"
	"shipgraph/graph/gqlhttp"
	"shipgraph/resolve"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// TestInternalErrors: a failing database is an INTERNAL_SERVER_ERROR with
// a generic message; what failed goes to the log with the request id,
// never to the client. Authentication runs on a store of its own so the
// request gets past it and the resolvers meet the closed one.
func TestInternalErrors(t *testing.T) {
	d := pg.New(t, 4)
	auth, k := d.Store, d.Key(t, "acme/admin")
	broken := d.Open(t)
	var ship string
	d.One(t, []any{&ship}, `SELECT id FROM shipments WHERE account_id = $1 ORDER BY id LIMIT 1`, d.Account(t, "acme"))

	var logs testkit.Log
	hc := gqlhttp.DefaultHandlerConfig
	hc.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	hc.RequestID = func(context.Context) string { return "req-42" }
	res := resolve.New(broken, resolve.Deps{})
	gql := gqlhttp.NewHandler(&graph.Resolver{Res: res}, hc)
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := auth.Authenticate(r.Context(), strings.TrimPrefix(r.Header.Get("Authorization"), "Token "))
		if err != nil {
			t.Errorf("authenticate: %v", err)
			return
		}
		gql.ServeHTTP(w, r.WithContext(res.Session(r.Context(), p)))
	}))
	e := testkit.On(t, d, h)

	// Works while the store is open...
	e.Must(t, k, `query($id: ID!) { shipment(id: $id) { id containers { id } } }`, testkit.Vars{"id": ship}, nil)
	// ...and then the database goes away.
	if err := broken.Close(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		query string
		vars  testkit.Vars
	}{
		"root list":     {`{ shipments { totalCount nodes { id } } }`, nil},
		"root by id":    {`query($id: ID!) { shipment(id: $id) { id } }`, testkit.Vars{"id": ship}},
		"node":          {`query($id: ID!) { node(id: $id) { id } }`, testkit.Vars{"id": ship}},
		"viewer":        {`{ viewer { account { companyName } } }`, nil},
		"count":         {`{ containers(first: 0) { totalCount } }`, nil},
		"mutation":      {`mutation($id: ID!) { updateShipmentCustomField(shipmentId: $id, apiSlug: "customer_po", value: "x") { id } }`, testkit.Vars{"id": ship}},
		"create option": {`mutation { createCustomFieldOption(definitionId: "00000000-0000-0000-0000-000000000001", input: {label: "a", value: "a"}) { id } }`, nil},
	} {
		res := e.Do(t, k, c.query, c.vars)
		if len(res.Errors) == 0 {
			t.Errorf("%s: no error with the database closed: %s", name, res)
			continue
		}
		for _, er := range res.Errors {
			if er.Code() != "INTERNAL_SERVER_ERROR" || er.Message != "internal server error" {
				t.Errorf("%s: error %+v; want INTERNAL_SERVER_ERROR with a generic message", name, er)
			}
			if er.Extensions["requestId"] != "req-42" {
				t.Errorf("%s: error %+v without the request id", name, er)
			}
		}
		if s := res.String(); strings.Contains(s, "sql") || strings.Contains(s, "closed") {
			t.Errorf("%s: the response leaks internals: %s", name, s)
		}
	}
	if l := logs.String(); !strings.Contains(l, "database is closed") || !strings.Contains(l, "req-42") {
		t.Errorf("the log does not have the cause and request id:\n%s", l)
	}
}
