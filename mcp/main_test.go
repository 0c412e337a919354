package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"shipgraph/graph/executor"
	"shipgraph/graph/gqlhttp"
	"shipgraph/httpapi"
	"shipgraph/load"
	"shipgraph/mcp"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// server is the HTTP chain with /mcp mounted as the composition root
// mounts it, on 127.0.0.1, over env's database.
func server(t *testing.T, env *testkit.Env, edit func(*httpapi.Config)) string {
	t.Helper()
	srv, err := mcp.New(mcp.Config{Schema: executor.NewExecutableSchema(executor.Config{}).Schema(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.Config(gqlhttp.DefaultHandlerConfig, load.DefaultLoaderConfig)
	c.MCP = srv.Handler
	if edit != nil {
		edit(&c.Config)
	}
	h := testkit.Start(t, env.Store, c)
	ts := httptest.NewUnstartedServer(h)
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.URL
}

// keyed adds the API key to every request, as "Token" or "Bearer".
type keyed struct {
	scheme, key string
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", k.scheme+" "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a go-sdk client session to base's /mcp with key.
func connect(t *testing.T, base, scheme, key string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "shipgraph-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + mcp.Path, HTTPClient: &http.Client{Transport: keyed{scheme, key}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call calls a tool and returns its result with the structured content
// decoded.
func call(t *testing.T, s *sdk.ClientSession, name string, args map[string]any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
	}
	return res, out
}

func text(r *sdk.CallToolResult) string {
	if len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}
