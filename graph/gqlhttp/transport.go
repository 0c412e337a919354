package gqlhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"shipgraph/graph/executor"
	"shipgraph/model"
	"shipgraph/respcache"
)

// Media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// Transport serves GraphQL over HTTP (GET and POST) per the
// GraphQL-over-HTTP spec, including its SHOULDs: with application/json every
// well-formed request gets 200 and its errors in the body (Apollo Client
// treats any other status as an opaque failure); 4xx is used only for
// application/graphql-response+json and for requests that are not
// GraphQL-over-HTTP requests at all (bad JSON, bad parameters).
// gqlgen's own transports answer 422 for application/json validation errors
// and 406 for mutations over GET, which the spec does not allow.
type Transport struct{}

var _ graphql.Transport = Transport{}

// Supports takes every request but protocol upgrades (websockets), so that
// other methods get a GraphQL-over-HTTP 405 from Do rather than gqlgen's
// bare 400 "transport not supported".
func (Transport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == ""
}

// rawRequest is the request body or query string: members are decoded
// loosely first so a wrong type is a clear 400, not a decode failure.
type rawRequest struct {
	Query         json.RawMessage `json:"query"`
	OperationName json.RawMessage `json:"operationName"`
	Variables     json.RawMessage `json:"variables"`
	Extensions    json.RawMessage `json:"extensions"`
	DocumentID    json.RawMessage `json:"documentId"`
}

func (Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media := negotiate(r.Header.Get("Accept"))
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		if media == "" {
			media = mediaJSON
		}
		w.Header().Set("Allow", "GET, POST")
		writeGraphQLError(w, media, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"send GraphQL requests with GET or POST")
		return
	}
	if media == "" {
		writeGraphQLError(w, mediaJSON, http.StatusNotAcceptable, "NOT_ACCEPTABLE",
			"responses are application/graphql-response+json or application/json")
		return
	}
	start := graphql.Now()
	params, status, msg := readParams(r)
	if msg != "" {
		writeGraphQLError(w, media, status, "BAD_REQUEST", msg)
		return
	}
	if model.PrincipalFrom(ctx) == nil {
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusUnauthorized
		}
		w.Header().Set("WWW-Authenticate", `Token realm="shipgraph"`)
		writeGraphQLError(w, media, status, "UNAUTHENTICATED",
			"a valid API key is required: send the header 'Authorization: Token <key>'")
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	ctx, cost := withCostNote(ctx)
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	refused := cost.header(w) // budget.go: the charge's headers
	if errs != nil {
		status := http.StatusOK
		if media == mediaGraphQLResponse {
			status = http.StatusBadRequest
		}
		if refused != 0 {
			status = refused
		}
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		writeResponse(w, media, status, resp)
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		w.Header().Set("Allow", "POST")
		writeGraphQLError(w, media, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			"only queries may be sent with GET; send mutations with POST")
		return
	}
	if opCtx.Operation.Operation == ast.Subscription {
		refuseSubscription(w, media) // it needs a stream: WebSocket or SSE
		return
	}
	if strings.Contains(opCtx.RawQuery, "@defer") {
		// The client accepts no stream: the deferred parts come in the
		// one answer, never promised by a hasNext that nothing keeps.
		opCtx.Doc, opCtx.Operation = withoutDefer(opCtx.Doc, opCtx.Operation)
	}
	if opCtx.Operation.Operation == ast.Query {
		respcache.MarkQuery(ctx) // a query's answer may be kept (httpapi's response cache)
	}
	ctx, out := executor.WithOutput(ctx)
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	if resp := responses(ctx); resp != nil {
		writeResponse(w, media, http.StatusOK, resp)
	} else {
		// No answer: the request's context ended (its client left, or its
		// deadline passed) before the operation gave one.
		writeGraphQLError(w, media, http.StatusServiceUnavailable, "UNAVAILABLE", "the request ended before its answer was ready")
	}
	out.Release()
}

// readParams reads the GraphQL request from the query string (GET) or the
// JSON body (POST). A non-empty message means the request is not a
// GraphQL-over-HTTP request; status says how to answer it.
func readParams(r *http.Request) (*graphql.RawParams, int, string) {
	var raw rawRequest
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, http.StatusBadRequest, "the query string is not valid"
		}
		quote := func(k string) json.RawMessage {
			if !q.Has(k) {
				return nil
			}
			b, _ := json.Marshal(q.Get(k))
			return b
		}
		raw.Query, raw.OperationName, raw.DocumentID = quote("query"), quote("operationName"), quote("documentId")
		if q.Has("variables") {
			raw.Variables = json.RawMessage(q.Get("variables"))
		}
		if q.Has("extensions") {
			raw.Extensions = json.RawMessage(q.Get("extensions"))
		}
	} else {
		mt, prm, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != mediaJSON {
			return nil, http.StatusUnsupportedMediaType, "send the request as application/json"
		}
		if cs, ok := prm["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
			return nil, http.StatusUnsupportedMediaType, "the request must be encoded in utf-8"
		}
		body, err := io.ReadAll(r.Body)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, "the request body is larger than " + strconv.FormatInt(tooBig.Limit, 10) + " bytes"
		} else if err != nil {
			return nil, http.StatusBadRequest, "the request body could not be read"
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, http.StatusBadRequest, "the request body is empty"
		}
		// encoding/json would replace invalid UTF-8 by U+FFFD and the
		// resolvers would store that: refuse it.
		if !utf8.Valid(body) {
			return nil, http.StatusBadRequest, "the request body is not valid UTF-8"
		}
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, http.StatusBadRequest, "the request body is not a JSON object"
		}
	}
	p := &graphql.RawParams{}
	if !isNull(raw.Query) {
		if err := json.Unmarshal(raw.Query, &p.Query); err != nil {
			return nil, http.StatusBadRequest, "query must be a string"
		}
	}
	if !isNull(raw.OperationName) {
		if err := json.Unmarshal(raw.OperationName, &p.OperationName); err != nil {
			return nil, http.StatusBadRequest, "operationName must be a string"
		}
	}
	if !isNull(raw.Variables) {
		if err := decodeObject(raw.Variables, &p.Variables); err != nil {
			return nil, http.StatusBadRequest, "variables must be a JSON object"
		}
	}
	if !isNull(raw.Extensions) {
		if err := decodeObject(raw.Extensions, &p.Extensions); err != nil {
			return nil, http.StatusBadRequest, "extensions must be a JSON object"
		}
	}
	if !isNull(raw.DocumentID) {
		var id string
		if err := json.Unmarshal(raw.DocumentID, &id); err != nil || id == "" {
			return nil, http.StatusBadRequest, "documentId must be a non-empty string"
		}
		if p.Query != "" {
			return nil, http.StatusBadRequest, "send either query or documentId, not both"
		}
		if msg := useDocumentID(p, id); msg != "" {
			return nil, http.StatusBadRequest, msg
		}
	}
	if p.Query == "" && p.Extensions["persistedQuery"] == nil {
		return nil, http.StatusBadRequest, "query (or documentId) is required"
	}
	return p, 0, ""
}

// useDocumentID turns a GraphQL-over-HTTP persisted document request
// (the spec's Appendix A: {"documentId": "sha256:<hex>", …}, or
// ?documentId=… over GET) into the Apollo persisted-query extension the
// trusted documents and APQ read, so an id is served, refused or unknown
// the same whichever way it came. A SHA-256 hex identifier gives its hex
// (Apollo's ids are that hex); a custom identifier (no colon: a bare hash,
// a Codegen id) and any other prefixed one are looked up as they are sent.
// An extension naming another id as well is a contradiction: 400.
func useDocumentID(p *graphql.RawParams, id string) string {
	if hexID, ok := strings.CutPrefix(id, "sha256:"); ok {
		if len(hexID) != 64 || strings.Trim(hexID, "0123456789abcdef") != "" {
			return "documentId: a sha256: identifier is followed by 64 lower-case hexadecimal digits"
		}
		id = hexID
	}
	if prev, sent := persistedID(p.Extensions); sent {
		if prev != id {
			return "documentId and extensions.persistedQuery.sha256Hash name different documents"
		}
		return ""
	}
	if p.Extensions == nil {
		p.Extensions = map[string]any{}
	}
	p.Extensions["persistedQuery"] = map[string]any{"version": int64(1), "sha256Hash": id}
	return ""
}

func isNull(b json.RawMessage) bool {
	return len(b) == 0 || string(bytes.TrimSpace(b)) == "null"
}

// decodeObject decodes a JSON object keeping numbers exact (json.Number),
// as gqlgen's own transports do.
func decodeObject(b json.RawMessage, into *map[string]any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if *into == nil {
		return errors.New("not an object")
	}
	return nil
}

// negotiate picks the response media type from Accept: the highest-q
// supported type; no Accept, */* or application/* mean application/json
// (what older clients expect). "" means nothing acceptable.
func negotiate(accept string) string {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON
	}
	type choice struct {
		media string
		q     float64
		i     int
	}
	var cs []choice
	for i, part := range strings.Split(accept, ",") {
		mt, prm, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := prm["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case mediaGraphQLResponse, mediaJSON:
		case "*/*", "application/*":
			mt = mediaJSON
		default:
			continue
		}
		if q > 0 {
			cs = append(cs, choice{mt, q, i})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].q > cs[b].q })
	return cs[0].media
}

// requestError is the body of a response to a request that never reached
// execution (unparsable, invalid, refused): the spec says such a response
// has no data entry at all, not "data": null.
type requestError struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

func writeResponse(w http.ResponseWriter, media string, status int, resp *graphql.Response) {
	if len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil && resp.Data != nil {
		// The common answer is the data gqlgen already wrote as JSON:
		// sent as it is, not validated and copied again by json.Marshal.
		w.Header().Set("Content-Type", media+"; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"data":`)
		_, _ = w.Write(resp.Data)
		_, _ = io.WriteString(w, "}")
		return
	}
	var body any = resp
	if resp.Data == nil && len(resp.Errors) > 0 {
		body = requestError{Errors: resp.Errors, Extensions: resp.Extensions}
	}
	b, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"errors":[{"message":"internal server error","extensions":{"code":"INTERNAL_SERVER_ERROR"}}]}`)
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeGraphQLError(w http.ResponseWriter, media string, status int, code, msg string) {
	writeResponse(w, media, status, &graphql.Response{Errors: gqlerror.List{{
		Message: msg, Extensions: map[string]any{"code": code},
	}}})
}
