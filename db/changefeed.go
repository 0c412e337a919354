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
// ChangeLogChannel: the account in the payload, or AccountID "" for any);
// one that is not is dropped. The empty payload is a wake-up; a JSON payload (the
// trigger of migration 00004, before the log) is read as the change.
func parseChange(n *pq.Notification) (FeedEvent, bool) {
	if n.Channel == ChangeLogChannel {
		// The payload names the account written (wakeup.go); empty: any.
		c := &model.Change{}
		if validUUID(n.Extra) {
			c.AccountID = n.Extra
		}
		return FeedEvent{Kind: FeedChange, Change: c}, true
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

// CurrentKey is what an API key stands for now (CurrentKeys).
type CurrentKey struct {
	Principal model.Principal
	Hash      []byte // sha256 of the key
}

// CurrentKeys returns what each of the token ids stands for now, for those
// not revoked: the key caches' floor check (a key changed with plain SQL
// announces nothing: wakeup.go).
func (db *DB) CurrentKeys(ctx context.Context, ids []string) (map[string]CurrentKey, error) {
	rows, err := db.read("").QueryContext(ctx, `SELECT id, account_id, user_id, role, token_sha256 FROM api_tokens
WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL`, pq.Array(validUUIDs(ids)))
	if err != nil {
		return nil, mapErr(err)
	}
	defer rows.Close()
	out := make(map[string]CurrentKey, len(ids))
	for rows.Next() {
		var k CurrentKey
		if err := rows.Scan(&k.Principal.TokenID, &k.Principal.AccountID, &k.Principal.UserID, &k.Principal.Role, &k.Hash); err != nil {
			return nil, mapErr(err)
		}
		out[k.Principal.TokenID] = k
	}
	return out, mapErr(rows.Err())
}
