package gqlhttp

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"shipgraph/model"
)

// MultipartMixed delivers operations with @defer incrementally: the first
// part carries what is not deferred, each later part what a deferred
// fragment resolved to, as the executor finishes it (the multipart/mixed
// format of the 2022-08-24 incremental delivery draft, which Apollo Client
// reads: {"data", "hasNext"} first, then {"incremental": [{"data", "path",
// "label"}], "hasNext"}). A client asks for it with Accept: multipart/mixed
// on a JSON POST or a GET (the query string, queries only); a dashboard defers its slow parts (counts, stats,
// documents) and shows the rest at once.
//
// gqlgen's own transport.MultipartMixed is not used: it writes the parts
// from a ticker goroutine of its own, where the chain's response cap (a
// panic that aborts the connection, httpapi.capResponse) would take the
// process down rather than the request; it answers no key and validation
// errors differently from Transport (401 and 422, which Apollo Client
// treats as opaque failures). Here every part is written and flushed by
// the request's goroutine as the executor hands it over.
//
// Operations with @defer never run on the fast path (executor.FastQueries
// hands them to gqlgen's executor, which alone implements @defer).
type MultipartMixed struct{}

var _ graphql.Transport = MultipartMixed{}

// boundary separates the parts of a multipart answer.
const boundary = "graphql"

// Supports takes JSON POSTs and GETs with a query string that accept
// multipart/mixed.
func (MultipartMixed) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" || !strings.Contains(r.Header.Get("Accept"), "multipart/mixed") {
		return false
	}
	if r.Method == http.MethodGet {
		return r.URL.RawQuery != "" && Streams(r)
	}
	if r.Method != http.MethodPost {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == mediaJSON && Streams(r)
}

func (MultipartMixed) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	start := graphql.Now()
	params, status, msg := readParams(r)
	if msg != "" {
		writeGraphQLError(w, mediaJSON, status, "BAD_REQUEST", msg)
		return
	}
	if model.PrincipalFrom(ctx) == nil {
		w.Header().Set("WWW-Authenticate", `Token realm="shipgraph"`)
		writeGraphQLError(w, mediaJSON, http.StatusOK, "UNAUTHENTICATED",
			"a valid API key is required: send the header 'Authorization: Token <key>'")
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		// One JSON answer, 200 as Transport gives application/json.
		writeResponse(w, mediaJSON, http.StatusOK, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		writeGraphQLError(w, mediaJSON, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"only queries may be sent with GET; send mutations with POST")
		return
	}
	if opCtx.Operation.Operation == ast.Subscription {
		// Subscriptions stream over the WebSocket and SSE transports;
		// refused at once rather than left waiting for a first event.
		media := negotiate(r.Header.Get("Accept"))
		if media == "" {
			media = mediaJSON
		}
		refuseSubscription(w, media)
		return
	}
	w.Header().Set("Content-Type", `multipart/mixed; boundary="`+boundary+`"; deferSpec=20220824`)
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "--"+boundary+"\r\n")
	rc := http.NewResponseController(w)

	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	first := true
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		hasNext := resp.HasNext != nil && *resp.HasNext
		var body any
		if first {
			resp.HasNext = &hasNext
			body = resp
		} else {
			path := resp.Path
			if path == nil {
				path = ast.Path{} // the root: [] (graphql.Response leaves an empty path out)
			}
			body = struct {
				Incremental []incremental `json:"incremental"`
				HasNext     bool          `json:"hasNext"`
			}{[]incremental{{resp.Data, path, resp.Label, resp.Errors, resp.Extensions}}, hasNext}
		}
		first = false
		b, err := json.Marshal(body)
		if err != nil {
			panic(err) // data is JSON the executor wrote; errors are plain values
		}
		_, _ = io.WriteString(w, "Content-Type: application/json; charset=utf-8\r\n\r\n")
		_, _ = w.Write(b)
		if hasNext {
			_, _ = io.WriteString(w, "\r\n--"+boundary+"\r\n")
		} else {
			_, _ = io.WriteString(w, "\r\n--"+boundary+"--\r\n")
		}
		_ = rc.Flush()
	}
}

// incremental is one deferred result; its path is always written.
type incremental struct {
	Data       json.RawMessage `json:"data"`
	Path       ast.Path        `json:"path"`
	Label      string          `json:"label,omitempty"`
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}
