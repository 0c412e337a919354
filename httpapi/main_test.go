package httpapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"shipgraph/app"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/httpapi"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// instance is one server: a store of its own (its own pool and key
// listener) on a shared test database, the chain, a real listener on
// 127.0.0.1:0, and the chain's log.
type instance struct {
	store *db.DB
	h     *httpapi.Handler
	url   string
	log   *testkit.Log
}

// seeded gives the test a database with demo data; it returns its URL and
// the demo keys by "account/role".
func seeded(t *testing.T) (string, map[string]string) {
	t.Helper()
	d := pg.New(t, 3)
	return d.URL, d.Keys
}

// seedAt loads the demo data into the database at url and returns the demo
// keys by "account/role".
func seedAt(t *testing.T, url string) map[string]string {
	t.Helper()
	d := pg.At(t, url)
	d.Seed(t, 3)
	return d.Keys
}

// open is a store of its own on the database at url.
func open(t *testing.T, url string) *db.DB { return pg.At(t, url).Store }

// start runs the chain with c (the server's defaults when nil) over a store
// of its own on url, behind a real HTTP listener.
func start(t *testing.T, url string, c *app.ChainConfig) *instance {
	t.Helper()
	cfg := testkit.Defaults()
	if c != nil {
		cfg = *c
	}
	return serveOn(t, open(t, url), cfg)
}

// serveOn runs the chain with cfg over store behind a real HTTP listener,
// its log kept in the instance.
func serveOn(t *testing.T, store *db.DB, cfg app.ChainConfig) *instance {
	t.Helper()
	in := &instance{store: store, log: &testkit.Log{}}
	cfg.Logger = slog.New(slog.NewJSONHandler(in.log, nil))
	in.h = testkit.Start(t, store, cfg)
	srv := httptest.NewServer(in.h)
	t.Cleanup(srv.Close)
	in.url = srv.URL
	return in
}

// reply is what a request got, and the statements the access log says it
// cost.
type reply struct {
	status     int
	header     http.Header
	body       []byte
	statements int
}

var seq sync.Map

// do sends a request with key ("" for none) and extra header pairs.
func (in *instance) do(t *testing.T, method, path, key, body string, header ...string) *reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, in.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Token "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	n, _ := seq.LoadOrStore(t.Name(), new(int))
	*n.(*int)++
	id := fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "."), *n.(*int))
	req.Header.Set("X-Request-Id", id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return &reply{status: res.StatusCode, header: res.Header, body: b, statements: statements(t, in.log, id)}
}

// gql posts a GraphQL query.
func (in *instance) gql(t *testing.T, key, query string, header ...string) *reply {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"query": query})
	return in.do(t, http.MethodPost, "/graphql", key, string(b), header...)
}

// authorized reports whether key is accepted on /v2 (200) or refused
// (401); anything else fails the test.
func (in *instance) authorized(t *testing.T, key string) bool {
	t.Helper()
	r := in.do(t, http.MethodGet, "/v2/shipments?page[size]=1", key, "")
	switch r.status {
	case http.StatusOK:
		return true
	case http.StatusUnauthorized:
		return false
	}
	t.Fatalf("GET /v2/shipments: %d %s", r.status, r.body)
	return false
}

// statements reads the access-log line of request id: its SQL statement
// count. The line is written before the response ends, so it is there.
func statements(t *testing.T, l *testkit.Log, id string) int {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string
			ID      string
			Queries int
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "request" && line.ID == id {
			return line.Queries
		}
	}
	t.Fatalf("no access-log line for request %s in:\n%s", id, l.String())
	return 0
}

// queriesTotal scrapes shipgraph_db_queries_total from /metrics, summed
// over its targets (primary, replica).
func queriesTotal(t *testing.T) float64 {
	t.Helper()
	return testkit.QueriesTotal(t)
}

// serverDefaults is the chain's configuration as the server builds it from
// the declared defaults, response cache included.
func serverDefaults() app.ChainConfig { return app.HTTPConfig(config.Defaults(config.Serve), nil) }
