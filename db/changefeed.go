package db

import (
	"context"
	"encoding/json"
	"strings"

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

// parseChange reads a notification on an account's change channel; one
// that is not is dropped.
func parseChange(n *pq.Notification) (FeedEvent, bool) {
	account := accountOfChannel(n.Channel)
	c := &Change{AccountID: account}
	if account == "" || json.Unmarshal([]byte(n.Extra), c) != nil || c.ID == "" {
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
