package db

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// changeChannelPrefix starts the NOTIFY channel of each account's changes
// (migration 00004); the account id follows without dashes, which keeps the
// name within PostgreSQL's 63-byte identifiers.
const changeChannelPrefix = "shipgraph_changes_"

// ChangeChannel is the NOTIFY channel on which the database wakes the
// readers of one account's change log (changelog.go) when changes of its
// shipments, containers, custom fields, custom field definitions and
// options, and documents were logged: once per transaction, with an empty
// payload. The log is the truth; the wake-up only says "read it".
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

// Change is one change as a subscription sees it: what changed, never the
// row itself. Subscribers read the record through the store, scoped to
// their account as every read is. The live hub makes one of each logged
// change (ChangeOf); a wake-up (FeedChange) carries only AccountID.
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
	// Columns are the columns an UPDATE changed.
	Columns []string `json:"c,omitempty"`
	// Was holds the previous values of the columns a subscription filters
	// on (a container's current_status, pod_terminal_id, shipment_id) when
	// the UPDATE changed them.
	Was map[string]*string `json:"was,omitempty"`
	// Log is the change's public log id; Cursor its position in the log.
	Log    int64  `json:"l,omitempty"`
	Cursor Cursor `json:"-"`
	// WAL is a primary WAL position the change's commit is before (0:
	// unknown): re-reads of its record may use a replica that replayed it
	// (WithReadAt).
	WAL   uint64    `json:"-"`
	WALAt time.Time `json:"-"` // when WAL was read
}

// wasColumns are the columns whose previous values Change.Was carries.
var wasColumns = [...]string{"current_status", "pod_terminal_id", "shipment_id"}

// ChangeOf is the Change of a logged change.
func ChangeOf(l *LoggedChange) *Change {
	c := &Change{AccountID: l.AccountID, Type: l.Type, ID: l.RecordID, Op: l.Op, Parent: l.Parent,
		Columns: l.Changed, Log: l.ID, Cursor: l.Cursor, WAL: l.WAL, WALAt: l.WALAt}
	if l.Type != "container" || len(l.Old) == 0 {
		return c
	}
	var old struct {
		CurrentStatus json.RawMessage `json:"current_status"`
		PodTerminalID json.RawMessage `json:"pod_terminal_id"`
		ShipmentID    json.RawMessage `json:"shipment_id"`
	}
	if json.Unmarshal(l.Old, &old) != nil {
		return c
	}
	for i, raw := range [...]json.RawMessage{old.CurrentStatus, old.PodTerminalID, old.ShipmentID} {
		if raw == nil {
			continue
		}
		if c.Was == nil {
			c.Was = make(map[string]*string, 3)
		}
		var v *string
		_ = json.Unmarshal(raw, &v)
		c.Was[wasColumns[i]] = v
	}
	return c
}

// parseChange reads a notification on an account's change channel (or on
// ChangeLogChannel: a wake-up of every account, AccountID ""); one that is
// not is dropped. The empty payload is a wake-up; a JSON payload (the
// trigger of migration 00004, before the log) is read as the change.
func parseChange(n *pq.Notification) (FeedEvent, bool) {
	if n.Channel == ChangeLogChannel {
		return FeedEvent{Kind: FeedChange, Change: &Change{}}, true
	}
	account := accountOfChannel(n.Channel)
	if account == "" {
		return FeedEvent{}, false
	}
	c := &Change{AccountID: account}
	if n.Extra != "" && (json.Unmarshal([]byte(n.Extra), c) != nil || c.ID == "") {
		return FeedEvent{}, false
	}
	return FeedEvent{Kind: FeedChange, Change: c}, true
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
