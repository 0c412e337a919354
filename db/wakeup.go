package db

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/lib/pq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Wake-ups of the change log's readers (migration 00035). The logging
// triggers do not NOTIFY: on a distributed PostgreSQL they run on the node
// that holds the account's shard, where nobody listens, and a transaction
// that ran NOTIFY cannot PREPARE, which fails every two-phase commit. The
// server sends the wake-ups itself, on its own connection to the node its
// listeners are on (the coordinator, or the one server), once the write
// committed: after a statement of a write scope (DB.write) or a
// transaction (DB.inTx) of an account succeeded, that account's channel
// (ChangeChannel) is notified, and ChangeLogChannel with the account's id
// as the payload.
//
// Off the request path: the accounts written are gathered and sent in one
// statement by one goroutine, so a burst of writes costs one NOTIFY
// statement, never one per write, and a write never waits for it. A
// wake-up may arrive for a write that logged nothing (harmless: the reader
// reads nothing). What writes without the server — plain SQL from another
// system — wakes nobody; the readers look at the log at least every
// WakeFloor for that (Listener), as they do after a wake-up was lost.

// WakeFloor is how often the listener reports FeedTick: readers then look
// at the change log (or the keys) whether or not a wake-up came, so a
// change made without the server is seen within about this long.
const WakeFloor = time.Second

// WakeupsTotal counts the NOTIFY statements the server sent after writes
// (beside QueriesTotal, which counts the statements of requests).
var WakeupsTotal = promauto.NewCounter(prometheus.CounterOpts{
	Name: "shipgraph_db_wakeups_total",
	Help: "NOTIFY statements sent after committed writes to wake the change log's readers (each covers every account written since the last).",
})

// waker sends the wake-ups of committed writes.
type waker struct {
	db *sql.DB

	mu       sync.Mutex
	accounts map[string]struct{}
	tokens   []string // in the order they changed
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newWaker(db *sql.DB) *waker {
	w := &waker{db: db, accounts: map[string]struct{}{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// wrote notes that a write of account committed.
func (w *waker) wrote(account string) {
	if w == nil || account == "" {
		return
	}
	w.mu.Lock()
	w.accounts[account] = struct{}{}
	w.mu.Unlock()
	w.poke()
}

// tokenChanged notes that what API key id stands for changed (committed).
func (w *waker) tokenChanged(id string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.tokens = append(w.tokens, id)
	w.mu.Unlock()
	w.poke()
}

func (w *waker) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *waker) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			w.send() // what was noted before Close
			return
		case <-w.kick:
		}
		w.send()
	}
}

// send notifies the channels of every account and key noted since the
// last send, in one statement. A failure drops them: the readers' floor
// (WakeFloor) reads what they would have woken for.
func (w *waker) send() {
	w.mu.Lock()
	channels := make([]string, 0, len(w.accounts)+1)
	payloads := make([]string, 0, len(w.accounts)+1)
	for a := range w.accounts {
		channels, payloads = append(channels, ChangeChannel(a), ChangeLogChannel), append(payloads, "", a)
	}
	for _, t := range w.tokens {
		channels, payloads = append(channels, TokenChannel), append(payloads, t)
	}
	clear(w.accounts)
	w.tokens = nil
	w.mu.Unlock()
	if len(channels) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	WakeupsTotal.Inc()
	_, _ = w.db.ExecContext(ctx, `SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)`,
		pq.Array(channels), pq.Array(payloads))
}

// close sends what is noted and stops.
func (w *waker) close() {
	if w == nil {
		return
	}
	w.once.Do(func() { close(w.stop) })
	<-w.done
}
