package live

import (
	"context"
	"fmt"
	"testing"
	"time"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// env is a seeded database of the test's own, a hub on it, and the demo
// keys' principals by "account/role".
type env struct {
	store *db.DB
	db    *pg.DB
	hub   *Hub
	who   map[string]*model.Principal
}

func newEnv(t *testing.T, cfg Config) *env {
	t.Helper()
	d := pg.New(t, 3)
	e := &env{store: d.Store, db: d, who: d.Principals(t)}
	listener := d.Store.Listen(time.Second)
	t.Cleanup(listener.Close)
	e.hub = New(d.Store, listener, cfg, nil)
	t.Cleanup(e.hub.Close)
	return e
}

func (e *env) subscribe(t *testing.T, who string, after *int64) *Sub {
	t.Helper()
	s, err := e.hub.Subscribe(context.Background(), e.who[who], after)
	if err != nil {
		t.Fatalf("subscribe %s: %v", who, err)
	}
	t.Cleanup(func() { e.hub.Unsubscribe(s) })
	return s
}

// container is the id of the account's (by slug) n-th container.
func (e *env) container(t *testing.T, account string, n int) string {
	t.Helper()
	return e.db.Text(t, `SELECT c.id FROM containers c JOIN accounts a ON a.id = c.account_id
		WHERE a.slug = $1 ORDER BY c.id OFFSET $2 LIMIT 1`, account, n)
}

// change commits one update of container id (one change-log entry).
func (e *env) change(t *testing.T, id string, i int) {
	t.Helper()
	e.db.Exec(t, `UPDATE containers SET pickup_lfd_terminal = $2 WHERE id = $1`, id, pg.SeedNow.AddDate(10, 0, i))
}

// take waits for n changes on s (failing after 10 s, or if s ends) and
// returns them.
func take(t *testing.T, s *Sub, n int) []*model.Change {
	t.Helper()
	var got []*model.Change
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for len(got) < n {
		select {
		case <-s.Ready():
			for _, ev := range s.Take() {
				if ev.Change == nil {
					t.Fatalf("a RESYNC after %d of %d changes", len(got), n)
				}
				got = append(got, ev.Change)
			}
		case <-s.Done():
			t.Fatalf("the subscription ended (%s) after %d of %d changes", s.Reason().Text, len(got), n)
		case <-deadline.C:
			t.Fatalf("%d of %d changes within 10s", len(got), n)
		}
	}
	if len(got) > n {
		t.Fatalf("%d changes, want %d: %s", len(got), n, ids(got))
	}
	return got
}

func ids(cs []*model.Change) string {
	out := ""
	for _, c := range cs {
		out += fmt.Sprintf(" %s:%d", c.ID, c.Log)
	}
	return out
}

// Every subscription of an account hears every change of it, once, in log
// order; another account's subscription hears none of them.
func TestFanOutInLogOrder(t *testing.T) {
	e := newEnv(t, Config{})
	a1 := e.subscribe(t, "acme/viewer", nil)
	a2 := e.subscribe(t, "acme/admin", nil)
	g := e.subscribe(t, "globex/viewer", nil)
	if n := e.hub.Count(); n != 3 {
		t.Fatalf("Count = %d, want 3", n)
	}
	c0, c1 := e.container(t, "acme", 0), e.container(t, "acme", 1)
	const n = 20
	for i := range n {
		e.change(t, []string{c0, c1}[i%2], i)
	}
	first := take(t, a1, n)
	second := take(t, a2, n)
	for i := range n {
		c := first[i]
		if want := []string{c0, c1}[i%2]; c.ID != want || c.Type != "container" || c.Op != "UPDATE" {
			t.Fatalf("change %d: %s %s %s, want an UPDATE of container %s", i, c.Op, c.Type, c.ID, want)
		}
		if i > 0 && c.Log <= first[i-1].Log {
			t.Fatalf("not in log order:%s", ids(first))
		}
		if second[i].Log != c.Log {
			t.Fatalf("the two subscriptions heard different changes:%s\n%s", ids(first), ids(second))
		}
	}
	// globex's subscription heard nothing of acme's: its first change is
	// its own.
	gc := e.container(t, "globex", 0)
	e.change(t, gc, 0)
	if got := take(t, g, 1); got[0].ID != gc {
		t.Fatalf("globex heard %s, want its container %s", ids(got), gc)
	}
}

// A subscription that falls a whole queue behind is ended as a slow
// consumer, without holding the others back.
func TestSlowConsumerEnded(t *testing.T) {
	e := newEnv(t, Config{Queue: 4})
	slow := e.subscribe(t, "acme/viewer", nil)
	fast := e.subscribe(t, "acme/admin", nil)
	id := e.container(t, "acme", 0)
	got := 0
	for i := range 10 {
		e.change(t, id, i)
		got += len(take(t, fast, 1)) // fast keeps up: one at a time
	}
	wantEnded(t, slow, EndSlow, "the slow subscription")
	if n := len(slow.Take()); n > 4 {
		t.Fatalf("the slow subscription held %d events, beyond its queue of 4", n)
	}
	select {
	case <-fast.Done():
		t.Fatalf("the fast subscription ended too: %s", fast.Reason().Text)
	default:
	}
}

// A subscription resumed after a log id gets the changes after it from
// CatchUp, in order, and then the live ones, each once; an id not in the
// account's log makes CatchUp's first event a RESYNC.
func TestResumeFromLogID(t *testing.T) {
	e := newEnv(t, Config{})
	id := e.container(t, "acme", 0)
	first := e.subscribe(t, "acme/viewer", nil)
	for i := range 3 {
		e.change(t, id, i)
	}
	seen := take(t, first, 3)
	e.hub.Unsubscribe(first)
	for i := 3; i < 5; i++ { // missed while away
		e.change(t, id, i)
	}
	after := seen[1].Log
	s := e.subscribe(t, "acme/viewer", &after)
	e.change(t, id, 5) // live
	var caught []*model.Change
	for {
		evs := e.hub.CatchUp(context.Background(), s)
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Change == nil {
				t.Fatal("a RESYNC on resuming from an id in the log")
			}
			caught = append(caught, ev.Change)
		}
	}
	live := take(t, s, 4-len(caught))
	all := append(caught, live...)
	if len(all) != 4 || all[0].Log != seen[2].Log {
		t.Fatalf("resumed after %d: caught up%s, then live%s; want the 3rd change (%d) and the three after it, once each",
			after, ids(caught), ids(live), seen[2].Log)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Log <= all[i-1].Log {
			t.Fatalf("not in log order:%s", ids(all))
		}
	}

	// An id that is not the account's: RESYNC first.
	other := e.container(t, "globex", 0)
	e.change(t, other, 0)
	globexLog := int64(e.db.Count(t, `SELECT max(l.id) FROM change_log l JOIN accounts a ON a.id = l.account_id WHERE a.slug = 'globex'`))
	r := e.subscribe(t, "acme/viewer", &globexLog)
	if evs := e.hub.CatchUp(context.Background(), r); len(evs) != 1 || evs[0].Change != nil {
		t.Fatalf("resuming after another account's id: %d events, want one RESYNC", len(evs))
	}
}

// Revoking a key ends its subscriptions, and only its.
func TestRevokedKeyEnds(t *testing.T) {
	e := newEnv(t, Config{})
	viewer := e.subscribe(t, "acme/viewer", nil)
	admin := e.subscribe(t, "acme/admin", nil)
	p := e.who["acme/viewer"]
	if err := e.store.RevokeToken(context.Background(), p.AccountID, p.TokenID); err != nil {
		t.Fatal(err)
	}
	wantEnded(t, viewer, EndRevoked, "the revoked key's subscription")
	// The other key's still hears changes.
	id := e.container(t, "acme", 0)
	e.change(t, id, 0)
	take(t, admin, 1)
}

// A key may hold MaxPerKey subscriptions; EndAll ends them all and the
// hub refuses new ones.
func TestLimitAndShutdown(t *testing.T) {
	e := newEnv(t, Config{MaxPerKey: 2})
	a := e.subscribe(t, "acme/viewer", nil)
	b := e.subscribe(t, "acme/viewer", nil)
	if _, err := e.hub.Subscribe(context.Background(), e.who["acme/viewer"], nil); model.ErrorCode(err) != model.ERATELIMITED {
		t.Fatalf("a third subscription of the key: %v, want %s", err, model.ERATELIMITED)
	}
	e.hub.Unsubscribe(b)
	c := e.subscribe(t, "acme/viewer", nil) // its place is free again
	e.hub.EndAll()
	for _, s := range []*Sub{a, c} {
		select {
		case <-s.Done():
		default:
			t.Fatal("EndAll left a subscription open")
		}
		if s.Reason() != EndShutdown {
			t.Fatalf("ended with %+v, want EndShutdown", s.Reason())
		}
	}
	if _, err := e.hub.Subscribe(context.Background(), e.who["acme/admin"], nil); model.ErrorCode(err) != model.EUNAVAILABLE {
		t.Fatalf("subscribing after EndAll: %v, want %s", err, model.EUNAVAILABLE)
	}
}

// wantEnded waits up to 10 s for the subscription (what) to end, for the
// reason want.
func wantEnded(t *testing.T, s *Sub, want EndReason, what string) {
	t.Helper()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not end within 10s", what)
	}
	if s.Reason() != want {
		t.Fatalf("%s ended with %+v, want %+v", what, s.Reason(), want)
	}
}
