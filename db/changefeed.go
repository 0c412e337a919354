package db

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// changeChannelPrefix starts the NOTIFY channel of each account's changes
// (migration 00004); the account id follows without dashes, which keeps the
// name within PostgreSQL's 63-byte identifiers.
const changeChannelPrefix = "shipgraph_changes_"

// ChangeChannel is the NOTIFY channel on which the database announces the
// changes of one account's shipments, containers, custom fields, custom
// field definitions and options, and documents.
func ChangeChannel(accountID string) string {
	return changeChannelPrefix + strings.ReplaceAll(accountID, "-", "")
}

// accountOfChannel is the inverse of ChangeChannel ("" for other channels).
func accountOfChannel(ch string) string {
	hex, ok := strings.CutPrefix(ch, changeChannelPrefix)
	if !ok || len(hex) != 32 {
		return ""
	}
	return hex[0:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:32]
}

// FeedApplicationName is the application_name of the change feed's
// connection, so that it can be told apart in pg_stat_activity.
const FeedApplicationName = "shipgraph-live"

// withApplicationName sets application_name in a connection URL or
// key=value connection string.
func withApplicationName(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		q.Set("application_name", name)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " application_name=" + name
}

// Change is one change announced by the database: what changed, never the
// row itself. Subscribers read the record through the store, scoped to
// their account as every read is.
type Change struct {
	AccountID string `json:"-"`
	// Type is shipment, container, custom_field, custom_field_definition,
	// custom_field_option or document.
	Type string `json:"t"`
	ID   string `json:"id"`
	// Op is INSERT, UPDATE or DELETE.
	Op string `json:"op"`
	// Parent is the container's shipment, the custom field's entity (a
	// shipment or container), the option's definition; "" for the others.
	Parent string `json:"p,omitempty"`
	// Columns are the columns an UPDATE changed; nil when the database
	// could not fit them in the payload.
	Columns []string `json:"c,omitempty"`
	// Was holds the previous values of the columns a subscription filters
	// on (a container's current_status, pod_terminal_id, shipment_id) when
	// the UPDATE changed them.
	Was map[string]*string `json:"was,omitempty"`
}

// FeedEventKind says what a FeedEvent reports.
type FeedEventKind int

const (
	// FeedListening: the listener (re)connected and listens on every
	// channel asked for. After a reconnection (Resync) changes made
	// while it was down went unheard.
	FeedListening FeedEventKind = iota
	// FeedDown: the listener lost its connection; Err says why.
	FeedDown
	// FeedChange: Change was committed.
	FeedChange
	// FeedToken: the API key TokenID changed (revoked, deleted …), or
	// every key did when TokenID is "*".
	FeedToken
)

// FeedEvent is one report of a ChangeFeed.
type FeedEvent struct {
	Kind    FeedEventKind
	Resync  bool    // FeedListening after a reconnection
	Change  *Change // FeedChange
	TokenID string  // FeedToken
	Err     error   // FeedDown
}

// ChangeFeed is one connection (lib/pq's Listener, which reconnects by
// itself) listening on the change channels of the accounts asked for and
// on TokenChannel. A process needs one, whatever its number of
// subscribers: its reader fans the events out.
type ChangeFeed struct {
	l      *pq.Listener
	events chan FeedEvent
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	closed bool
}

// ListenChanges opens the change feed. Events arrive in commit order on
// Events until Close; the reader must keep reading (the feed buffers 4096
// events). ping is how often the connection is pinged so a silently dead
// one is noticed.
func (db *DB) ListenChanges(ping time.Duration) *ChangeFeed {
	ctx, cancel := context.WithCancel(context.Background())
	f := &ChangeFeed{events: make(chan FeedEvent, 4096), cancel: cancel, done: make(chan struct{})}
	states := make(chan FeedEvent, 16)
	report := func(e FeedEvent) {
		select {
		case states <- e:
		case <-ctx.Done():
		}
	}
	f.l = pq.NewListener(withApplicationName(db.url, FeedApplicationName), 50*time.Millisecond, 2*time.Second, func(ev pq.ListenerEventType, err error) {
		switch ev {
		case pq.ListenerEventDisconnected, pq.ListenerEventConnectionAttemptFailed:
			report(FeedEvent{Kind: FeedDown, Err: err})
		}
		// Reconnected: the nil notification that follows it on the
		// notification channel reports it, in order with the
		// notifications.
	})
	go func() {
		if err := f.l.Listen(TokenChannel); err == nil {
			report(FeedEvent{Kind: FeedListening})
		} else if ctx.Err() == nil {
			report(FeedEvent{Kind: FeedDown, Err: err})
		}
	}()
	go func() {
		t := time.NewTicker(ping)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := f.l.Ping(); err != nil {
				report(FeedEvent{Kind: FeedDown, Err: err})
			}
		}
	}()
	go func() {
		defer close(f.done)
		defer close(f.events)
		send := func(e FeedEvent) bool {
			select {
			case f.events <- e:
				return true
			case <-ctx.Done():
				return false
			}
		}
		notify := f.l.NotificationChannel()
		for {
			var e FeedEvent
			select {
			case <-ctx.Done():
				shutdown(f.l)
				return
			case e = <-states:
			case n, ok := <-notify:
				if !ok {
					return
				}
				var keep bool
				if e, keep = parseNotification(n); !keep {
					continue
				}
			}
			if !send(e) {
				shutdown(f.l)
				return
			}
		}
	}()
	return f
}

func parseNotification(n *pq.Notification) (FeedEvent, bool) {
	if n == nil {
		return FeedEvent{Kind: FeedListening, Resync: true}, true
	}
	if n.Channel == TokenChannel {
		return FeedEvent{Kind: FeedToken, TokenID: n.Extra}, true
	}
	account := accountOfChannel(n.Channel)
	c := &Change{AccountID: account}
	if account == "" || json.Unmarshal([]byte(n.Extra), c) != nil || c.ID == "" {
		return FeedEvent{}, false
	}
	return FeedEvent{Kind: FeedChange, Change: c}, true
}

// Events is the feed's reports; it is closed after Close.
func (f *ChangeFeed) Events() <-chan FeedEvent { return f.events }

// Listen starts listening to the changes of account. It returns once
// the server acknowledged (so every change committed after it returns is
// reported), or at once while the connection is down: the reconnection
// listens again and reports FeedListening with Resync.
func (f *ChangeFeed) Listen(accountID string) error {
	err := f.l.Listen(ChangeChannel(accountID))
	if errors.Is(err, pq.ErrChannelAlreadyOpen) {
		return nil
	}
	return err
}

// Unlisten stops listening to account's changes.
func (f *ChangeFeed) Unlisten(accountID string) error {
	err := f.l.Unlisten(ChangeChannel(accountID))
	if errors.Is(err, pq.ErrChannelNotOpen) {
		return nil
	}
	return err
}

// Close stops the feed and closes its connection.
func (f *ChangeFeed) Close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	for range f.events { // let the loop see ctx while draining
	}
	<-f.done
}

// ActiveTokens returns which of the token ids still stand for a key that
// is not revoked: after the feed was down, a revocation may have gone
// unheard.
func (db *DB) ActiveTokens(ctx context.Context, ids []string) (map[string]bool, error) {
	var live []string
	if err := sqlx.SelectContext(ctx, db.q, &live,
		`SELECT id FROM api_tokens WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL`, pq.Array(ids)); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(live))
	for _, id := range live {
		out[id] = true
	}
	return out, nil
}
