package db

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
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

// wasColumns are the columns whose previous values model.Change.Was
// carries.
var wasColumns = [...]string{"current_status", "pod_terminal_id", "shipment_id"}

// ChangeOf is the change a subscription sees of a logged change (its
// position in the log stays with l.Cursor).
func ChangeOf(l *LoggedChange) *model.Change {
	c := &model.Change{AccountID: l.AccountID, Type: l.Type, ID: l.RecordID, Op: l.Op, Parent: l.Parent,
		Columns: l.Changed, Log: l.ID, WAL: l.WAL, WALAt: l.WALAt}
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
		return FeedEvent{Kind: FeedChange, Change: &model.Change{}}, true
	}
	account := accountOfChannel(n.Channel)
	if account == "" {
		return FeedEvent{}, false
	}
	c := &model.Change{AccountID: account}
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
	if err := sqlx.SelectContext(ctx, db.read(""), &live,
		`SELECT id FROM api_tokens WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL`, pq.Array(ids)); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(live))
	for _, id := range live {
		out[id] = true
	}
	return out, nil
}
