package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vektah/gqlparser/v2/ast"

	"shipgraph/model"
)

// Path is where the chain mounts the server.
const Path = "/mcp"

// Config is what the server runs on.
type Config struct {
	// Schema is the GraphQL schema the operations are validated against
	// and their input and output schemas derived from.
	Schema *ast.Schema
	// Version is the server's version in initialize's serverInfo.
	Version string
	// Logger gets the SDK's log; nil discards it.
	Logger *slog.Logger
}

// Server is the MCP server: its tools and resources, built once; Handler
// serves it over a chain's GraphQL handler.
type Server struct {
	c Config
}

// New checks that every tool's operation loads and its schemas derive
// (they are embedded: a failure is a bug of the build, reported at start).
func New(c Config) (*Server, error) {
	if c.Schema == nil {
		return nil, errors.New("mcp: the GraphQL schema is required")
	}
	if _, err := newService(c, http.NotFoundHandler()); err != nil {
		return nil, err
	}
	return &Server{c: c}, nil
}

// Documents are the texts of every operation the tools send: the chain
// trusts them when it runs trusted documents only (GRAPHQL_TRUSTED_ONLY).
func (s *Server) Documents() []string {
	var out []string
	for _, f := range append([]string{"infer_number"}, toolFiles()...) {
		if op, err := loadOperation(s.c.Schema, f); err == nil {
			out = append(out, op.text)
		}
	}
	return out
}

func toolFiles() []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.file)
	}
	return out
}

// Handler is the /mcp handler over graphql, the chain's routes after
// authentication (they serve POST /graphql): each tool's operation takes
// the way any GraphQL request takes (response cache, loaders, complexity
// and depth limits, cost budget). Mount it behind authentication: every
// request has a principal. It is Streamable HTTP, stateless (no session
// lives in one instance: every request carries what it needs, so any
// instance behind a load balancer answers any request), with JSON answers.
func (s *Server) Handler(graphql http.Handler) http.Handler {
	svc, err := newService(s.c, graphql)
	if err != nil {
		panic(err) // New built the same service
	}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if p := model.PrincipalFrom(r.Context()); p != nil && p.Role == model.RoleViewer {
			return svc.read
		}
		return svc.full
	}, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.c.Logger,
		// The SDK refuses a request that reaches a loopback address with
		// another Host (DNS rebinding of a local server without auth): a
		// reverse proxy on the same host sends exactly that. Every request
		// here needs an API key, which a rebinding page does not have.
		DisableLocalhostProtection: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if model.PrincipalFrom(r.Context()) == nil {
			// Every method needs the key: tools/list depends on its role.
			w.Header().Set("WWW-Authenticate", `Bearer realm="shipgraph"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"UNAUTHENTICATED: send a valid API key as Authorization: Token <key> (or Bearer <key>)"}}`))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// service holds the operations, resolved schemas and the two servers (all
// tools; read tools for viewer keys).
type service struct {
	graphql http.Handler
	schema  *ast.Schema
	infer   *operation
	full    *sdk.Server
	read    *sdk.Server
}

func newService(c Config, graphql http.Handler) (*service, error) {
	s := &service{graphql: graphql, schema: c.Schema}
	var err error
	if s.infer, err = loadOperation(c.Schema, "infer_number"); err != nil {
		return nil, err
	}
	impl := &sdk.Implementation{Name: "shipgraph", Title: "Shipgraph", Version: c.Version}
	opts := func(readOnly bool) *sdk.ServerOptions {
		instr := "Shipgraph: container and shipment tracking of your account. Find records with search_container, then read them with get_container / get_shipment_details; ids are UUIDs."
		if readOnly {
			instr += " This key is read-only: track_container is not available."
		}
		return &sdk.ServerOptions{Instructions: instr, Logger: c.Logger}
	}
	s.full, s.read = sdk.NewServer(impl, opts(false)), sdk.NewServer(impl, opts(true))
	for _, t := range tools {
		st, h, err := s.build(t)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %w", t.name, err)
		}
		s.full.AddTool(st, h)
		if !t.write {
			s.read.AddTool(st, h)
		}
	}
	// A viewer calling a write tool gets a tool error, not a protocol one.
	s.read.AddReceivingMiddleware(refuseWrites)
	getContainer, err := loadOperation(c.Schema, "get_container")
	if err != nil {
		return nil, err
	}
	for _, srv := range []*sdk.Server{s.full, s.read} {
		s.addResources(srv, getContainer)
	}
	return s, nil
}

// refuseWrites answers a viewer's call of a write tool with a tool error.
func refuseWrites(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
				for _, t := range tools {
					if t.write && t.name == p.Name {
						return errorResult(failure("FORBIDDEN", "%s needs an admin or member key: this API key is read-only (viewer)", t.name)), nil
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// build derives the tool's schemas from its operation and returns its
// handler: validate the arguments against the input schema (defaults
// applied), map them onto variables, run the operation, shape the answer.
func (s *service) build(t *tool) (*sdk.Tool, sdk.ToolHandler, error) {
	op, err := loadOperation(s.schema, t.file)
	if err != nil {
		return nil, nil, err
	}
	vars, err := variableSchema(s.schema, op.op)
	if err != nil {
		return nil, nil, err
	}
	in := t.inputSchema(vars)
	inResolved, err := in.Resolve(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("input schema: %w", err)
	}
	out := t.output
	if out == nil {
		out = outputSchema(s.schema, op.op.SelectionSet)
		if t.list {
			out = listSchema(out)
		}
	}
	if t.name == "list_tracking_requests" {
		out.Properties["unsupportedFilters"] = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}
	}
	st := &sdk.Tool{
		Name: t.name, Title: t.title, Description: t.description,
		InputSchema: in, OutputSchema: out,
		Annotations: &sdk.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    !t.write,
			DestructiveHint: new(false),
			IdempotentHint:  !t.write,
			OpenWorldHint:   new(t.openWorld),
		},
	}
	h := func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := map[string]any{}
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult(failure("BAD_USER_INPUT", "arguments must be a JSON object")), nil
			}
			if args == nil { // null: no arguments
				args = map[string]any{}
			}
		}
		if err := inResolved.ApplyDefaults(&args); err != nil {
			return errorResult(failure("BAD_USER_INPUT", "arguments: %v", err)), nil
		}
		if err := inResolved.Validate(args); err != nil {
			return errorResult(failure("BAD_USER_INPUT", "arguments: %v", err)), nil
		}
		t.applyFlags(args)
		if t.prepare != nil {
			if err := t.prepare(ctx, s, args); err != nil {
				return errorResult(err), nil
			}
		}
		data, err := s.execute(ctx, op, graphQLVariables(s.schema, op.op, args))
		if err != nil {
			return errorResult(err), nil
		}
		for _, f := range fields(op.op.SelectionSet) {
			if data[f.Alias] == nil {
				return errorResult(failure("NOT_FOUND", "%s %v not found in this account", notFoundName(f.Name), args["id"])), nil
			}
		}
		res := shape(s.schema, data, op.op.SelectionSet)
		if t.list {
			res = asListResult(res, args)
		}
		if t.result != nil {
			if res, err = t.result(args, res); err != nil {
				return errorResult(err), nil
			}
		}
		if u, ok := args["unsupportedFilters"]; ok {
			res["unsupportedFilters"] = orEmptyList(u)
		}
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: t.summary(res)}},
			StructuredContent: res,
		}, nil
	}
	return st, h, nil
}

func notFoundName(field string) string {
	if field == "container" || field == "shipment" {
		return field
	}
	return "record"
}

func orEmptyList(v any) any {
	if l, ok := v.([]any); ok && l != nil {
		return l
	}
	return []any{}
}

// listSchema is the output schema of a list tool: {items, meta}.
func listSchema(derived *jsonschema.Schema) *jsonschema.Schema {
	var nodes *jsonschema.Schema
	for _, root := range derived.Properties {
		nodes = root.Properties["nodes"]
	}
	if nodes == nil {
		nodes = &jsonschema.Schema{Type: "array"}
	}
	return &jsonschema.Schema{Type: "object", Required: []string{"items", "meta"}, Properties: map[string]*jsonschema.Schema{
		"items": nodes,
		"meta": {Type: "object", Properties: map[string]*jsonschema.Schema{
			"total": {Type: "integer"}, "page": {Type: "integer"}, "page_size": {Type: "integer"},
		}},
	}}
}

// asListResult turns {root: {total_count, nodes}} into {items, meta}.
func asListResult(res map[string]any, args map[string]any) map[string]any {
	for _, v := range res {
		conn, _ := v.(map[string]any)
		items := orEmptyList(conn["nodes"])
		return map[string]any{"items": items, "meta": map[string]any{"total": conn["total_count"], "page": args["page"], "page_size": args["page_size"]}}
	}
	return res
}

// errorResult is a tool result reporting err: the API's code and message
// (anything else is an internal error: the message says no more).
func errorResult(err error) *sdk.CallToolResult {
	var te *toolError
	if !errors.As(err, &te) {
		te = failure("INTERNAL", "internal error")
	}
	r := &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: te.Error()}}}
	return r
}

// Resource URIs.
const (
	containerTemplate = "shipgraph://container/{id}"
	glossaryURI       = "shipgraph://docs/milestone-glossary"
)

func (s *service) addResources(srv *sdk.Server, getContainer *operation) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name: "container", Title: "Container", URITemplate: containerTemplate, MIMEType: "application/json",
		Description: "A container of the account with its shipment and terminal, as get_container answers with include shipment and pod_terminal.",
	}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		id := strings.TrimPrefix(req.Params.URI, "shipgraph://container/")
		data, err := s.execute(ctx, getContainer, map[string]any{"id": id, "shipment": true, "pod_terminal": true})
		var te *toolError
		switch {
		case errors.As(err, &te) && te.code == "BAD_USER_INPUT":
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		case err != nil:
			return nil, err
		case data["container"] == nil:
			return nil, sdk.ResourceNotFoundError(req.Params.URI)
		}
		b, err := json.Marshal(shape(s.schema, data, getContainer.op.SelectionSet)["container"])
		if err != nil {
			return nil, err
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
	})
	srv.AddResource(&sdk.Resource{
		Name: "milestone-glossary", Title: "Milestone Glossary", URI: glossaryURI, MIMEType: "text/markdown",
		Description: "What each transport event, container status and notification means, from Shipgraph's catalogue of events.",
	}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: glossaryURI, MIMEType: "text/markdown", Text: Glossary()}}}, nil
	})
}

// Glossary is the milestone glossary: the catalogue of events
// (model.WebhookEventCategories) and the container statuses, in Markdown.
func Glossary() string {
	var b strings.Builder
	b.WriteString("# Shipgraph milestone glossary\n\nThe events Shipgraph records and raises, by category, from its catalogue of events. ")
	b.WriteString("Transport events (`container.transport.*`) are the milestones get_container_transport_events lists; `estimated.*` events move a plan, not a fact.\n")
	for _, c := range model.WebhookEventCategories {
		fmt.Fprintf(&b, "\n## %s\n\n| Event | Meaning |\n|---|---|\n", c.Name)
		for _, e := range c.Events {
			fmt.Fprintf(&b, "| `%s` | %s |\n", e.Name, e.Description)
		}
	}
	b.WriteString("\n## Container statuses (current_status)\n\n| Status | Meaning |\n|---|---|\n")
	for _, st := range containerStatuses {
		fmt.Fprintf(&b, "| `%s` | %s |\n", st[0], st[1])
	}
	return b.String()
}

var containerStatuses = [][2]string{
	{"new", "Tracked, not yet loaded on a vessel."},
	{"loaded", "Loaded on the vessel at the port of lading."},
	{"on_ship", "On the ocean leg."},
	{"not_available", "At the port of discharge, not available for pickup (holds, not yet discharged)."},
	{"available", "At the port of discharge and available for pickup."},
	{"grounded", "Discharged and grounded at the terminal."},
	{"on_rail", "On a rail leg to an inland destination."},
	{"awaiting_inland_transfer", "Waiting for the inland move."},
	{"off_dock", "At an off-dock facility."},
	{"picked_up", "Picked up (full out) at the terminal."},
	{"delivered", "Delivered."},
	{"dropped", "Dropped at the consignee."},
	{"empty_returned", "The empty container was returned: the journey is over."},
}
