package webhook_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
	"shipgraph/webhook"
)

func TestMain(m *testing.M) { pg.Main(m) }

// env is a seeded database of the test's own.
type env struct {
	*pg.DB
	acme, globex string // account ids
}

func newEnv(t testing.TB) *env {
	t.Helper()
	d := pg.New(t, 4)
	return &env{DB: d, acme: d.Account(t, "acme"), globex: d.Account(t, "globex")}
}

// one reads one row of plain SQL into dest.
func (e *env) one(t testing.TB, q string, dest ...any) {
	t.Helper()
	e.One(t, dest, q)
}

// webhook creates a webhook of account for events, with secret "secret-<url>".
func (e *env) webhook(t testing.TB, account, url string, events ...string) string {
	t.Helper()
	var id string
	err := e.Store.SQL().QueryRowContext(context.Background(), `INSERT INTO webhooks (account_id, url, events, secret, headers)
VALUES ($1, $2, $3, $4, '[{"name":"X-Custom","value":"yes"},{"name":"Content-Type","value":"text/evil"}]') RETURNING id`,
		account, url, "{"+join(events)+"}", "secret-"+url).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// payload renders a small document of the notification (the engine's
// tests do not depend on the /v2 renderer; server_test covers the wiring).
func (e *env) payload() webhook.PayloadFunc {
	return func(ctx context.Context, account, id string) ([]byte, error) {
		var event string
		var p []byte
		err := e.Store.SQL().QueryRowContext(ctx, `SELECT event, coalesce(payload, '{}') FROM webhook_notifications WHERE account_id = $1 AND id = $2`,
			account, id).Scan(&event, &p)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, model.NotFound("webhook notification")
		}
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"data": map[string]any{"id": id, "type": "webhook_notification",
			"attributes": map[string]any{"event": event}}, "included": []any{map[string]any{"attributes": json.RawMessage(p)}}})
	}
}

func (e *env) config(c webhook.Config) webhook.Config {
	if c.Payload == nil {
		c.Payload = e.payload()
	}
	if c.Poll == 0 {
		c.Poll = 50 * time.Millisecond
	}
	if c.RetryBase == 0 {
		c.RetryBase = time.Millisecond
	}
	c.AllowPrivate = c.AllowPrivate || c.Resolve == nil
	return c
}

// start runs a fan-out and a dispatcher until the test ends.
func (e *env) start(t testing.TB, store *db.DB, c webhook.Config) (*webhook.Dispatcher, context.CancelFunc) {
	t.Helper()
	c = e.config(c)
	d := webhook.NewDispatcher(store, c)
	f := webhook.NewFanOut(store, c, d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.Run(ctx) }()
	go func() { defer wg.Done(); f.Run(ctx) }()
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return d, stop
}

// delivery is one request a receiver got.
type delivery struct {
	at        time.Time
	id, event string
	body      []byte
	header    http.Header
}

// receiver is a webhook endpoint on 127.0.0.1 whose deliveries are
// handed out in order by wait.
type receiver struct {
	*testkit.Receiver
	mu   sync.Mutex
	next int // how many deliveries wait has returned
}

func newReceiver(t testing.TB) *receiver {
	return &receiver{Receiver: testkit.NewReceiver(t, http.StatusOK, `{"ok":true}`)}
}

// parse is a request the receiver got, as a delivery.
func parse(got testkit.Received) delivery {
	var doc struct {
		Data struct {
			ID         string `json:"id"`
			Attributes struct {
				Event string `json:"event"`
			} `json:"attributes"`
		} `json:"data"`
	}
	_ = json.Unmarshal(got.Body, &doc)
	return delivery{at: got.At, id: doc.Data.ID, event: doc.Data.Attributes.Event, body: got.Body, header: got.Header}
}

func (r *receiver) deliveries() []delivery {
	var out []delivery
	for _, got := range r.Got.All() {
		out = append(out, parse(got))
	}
	return out
}

// wait returns the next delivery, failing after timeout.
func (r *receiver) wait(t testing.TB, timeout time.Duration) delivery {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	all, ok := r.Got.WaitN(timeout, r.next+1)
	if !ok {
		t.Fatalf("no delivery within %s", timeout)
	}
	r.next++
	return parse(all[r.next-1])
}

// newRedirector answers every request with a 307 to target.
func newRedirector(t testing.TB, target string) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(s.Close)
	return s.URL
}
