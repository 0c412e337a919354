package gqlhttp

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Streams reports whether the GraphQL request r is answered as a stream
// (a WebSocket, Server-Sent Events or multipart/mixed) rather than as one
// result. A client may accept streams for every request (urql's default
// Accept lists text/event-stream and multipart/mixed after the JSON types):
// only a subscription or an operation that defers parts streams; any other
// single result goes out in the first acceptable non-streaming type, so
// that it can be kept by the response cache and carry an ETag. When no
// non-streaming type is acceptable, the request streams as it asks.
//
// It reads a POST's JSON body (and puts it back).
func Streams(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return true
	}
	accept := r.Header.Get("Accept")
	if !strings.Contains(accept, "text/event-stream") && !strings.Contains(accept, "multipart/mixed") {
		return false
	}
	if negotiate(accept) == "" {
		return true
	}
	sub, deferred := operationKind(r)
	return sub || deferred
}

// operationKind parses the operation r names (as the transports will) and
// says whether it is a subscription and whether it defers any part. A
// request whose document cannot be read here (a persisted query sent by
// its hash, a body that is not JSON) is neither: the transports answer it
// as one result, or with the error it has.
func operationKind(r *http.Request) (subscription, deferred bool) {
	var req struct {
		Query         string `json:"query"`
		OperationName string `json:"operationName"`
	}
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		req.Query, req.OperationName = q.Get("query"), q.Get("operationName")
	case http.MethodPost:
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != mediaJSON || r.Body == nil {
			return false, false
		}
		b, err := io.ReadAll(r.Body)
		if err != nil {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errorReader{err}))
			return false, false
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if json.Unmarshal(b, &req) != nil {
			return false, false
		}
	default:
		return false, false
	}
	if req.Query == "" {
		return false, false
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: req.Query})
	if err != nil {
		return false, false
	}
	var op *ast.OperationDefinition
	if req.OperationName == "" && len(doc.Operations) == 1 {
		op = doc.Operations[0]
	} else {
		op = doc.Operations.ForName(req.OperationName)
	}
	if op == nil {
		return false, false
	}
	if op.Operation == ast.Subscription {
		return true, false
	}
	return false, defers(doc, op.SelectionSet, map[string]bool{})
}

// defers reports whether a selection set (with the fragments it spreads)
// carries @defer.
func defers(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool) bool {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if defers(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.InlineFragment:
			if s.Directives.ForName("defer") != nil || defers(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Directives.ForName("defer") != nil {
				return true
			}
			if f := doc.Fragments.ForName(s.Name); f != nil && !seen[s.Name] {
				seen[s.Name] = true
				if defers(doc, f.SelectionSet, seen) {
					return true
				}
			}
		}
	}
	return false
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// withoutDefer returns a copy of the operation and of the document's
// fragments with every @defer left out, for a client that accepts no
// stream: its answer is the whole result at once. The parsed document is
// shared (the query cache's) and stays as it was.
func withoutDefer(doc *ast.QueryDocument, op *ast.OperationDefinition) (*ast.QueryDocument, *ast.OperationDefinition) {
	d := *doc
	d.Fragments = make(ast.FragmentDefinitionList, len(doc.Fragments))
	for i, f := range doc.Fragments {
		c := *f
		c.SelectionSet = stripDefer(f.SelectionSet)
		d.Fragments[i] = &c
	}
	o := *op
	o.SelectionSet = stripDefer(op.SelectionSet)
	d.Operations = make(ast.OperationList, len(doc.Operations))
	for i, x := range doc.Operations {
		if x == op {
			d.Operations[i] = &o
		} else {
			d.Operations[i] = x
		}
	}
	return &d, &o
}

func stripDefer(set ast.SelectionSet) ast.SelectionSet {
	if set == nil {
		return nil
	}
	out := make(ast.SelectionSet, len(set))
	for i, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			c := *s
			c.SelectionSet = stripDefer(s.SelectionSet)
			out[i] = &c
		case *ast.InlineFragment:
			c := *s
			c.Directives = dropDefer(s.Directives)
			c.SelectionSet = stripDefer(s.SelectionSet)
			out[i] = &c
		case *ast.FragmentSpread:
			c := *s
			c.Directives = dropDefer(s.Directives)
			out[i] = &c
		default:
			out[i] = s
		}
	}
	return out
}

func dropDefer(ds ast.DirectiveList) ast.DirectiveList {
	if ds.ForName("defer") == nil {
		return ds
	}
	out := make(ast.DirectiveList, 0, len(ds))
	for _, d := range ds {
		if d.Name != "defer" {
			out = append(out, d)
		}
	}
	return out
}

// refuseSubscription answers a subscription sent where no stream serves
// it, at once: 200 with the error for application/json (as every
// well-formed request), 406 for application/graphql-response+json.
func refuseSubscription(w http.ResponseWriter, media string) {
	status := http.StatusOK
	if media == mediaGraphQLResponse {
		status = http.StatusNotAcceptable
	}
	writeGraphQLError(w, media, status, "NOT_ACCEPTABLE",
		"subscriptions are served over WebSocket (graphql-transport-ws) or Server-Sent Events (POST with Accept: text/event-stream)")
}
