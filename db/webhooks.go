package db

import (
	"context"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"shipgraph/model"
)

// Webhooks and their notifications (migration 00009): the API's
// reads and writes. The delivery (raising and sending notifications) has its
// own statements. The secret column is written here and never read back but
// by the delivery: reads select webhookCols, which leave it out.

const (
	webhookCols             = `w.id, w.account_id, w.url, w.active, w.events, w.headers, w.created_at, w.updated_at`
	webhookReturning        = `id, account_id, url, active, events, headers, created_at, updated_at`
	webhookNotificationCols = `n.id, n.account_id, n.webhook_id, n.event, n.reference_type, n.reference_id,
	n.delivery_status, n.attempts, n.delivered_at, n.created_at,
	CASE WHEN n.reference_type = 'tracking_request' THEN n.payload END AS ref_state`
)

var webhookList = &listSpec{
	plural: "webhooks",
	from:   "webhooks w",
	alias:  "w",
	cols:   webhookCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "w.created_at", typ: "timestamptz"},
	},
}

var webhookNotificationList = &listSpec{
	plural: "webhook notifications",
	from:   "webhook_notifications n",
	alias:  "n",
	cols:   webhookNotificationCols,
	orders: map[string]sortSpec{
		"created_at": {expr: "n.created_at", typ: "timestamptz"},
	},
}

type webhookRow struct {
	model.Webhook
	pageMeta
}

type webhookNotificationRow struct {
	model.WebhookNotification
	pageMeta
}

// WebhooksByIDs reads webhooks of the account.
func (db *DB) WebhooksByIDs(ctx context.Context, accountID string, ids []string) ([]*model.Webhook, error) {
	return byIDs[model.Webhook](ctx, db.read(accountID),
		`SELECT `+webhookCols+` FROM webhooks w WHERE w.id = ANY($1) AND w.account_id = $2`, ids, accountID)
}

// ListWebhooks reads one page of the account's webhooks.
func (db *DB) ListWebhooks(ctx context.Context, accountID string, p model.PageRequest) (*model.Page[*model.Webhook], error) {
	if !validUUID(accountID) {
		return &model.Page[*model.Webhook]{Items: []*model.Webhook{}, Keys: []*string{}}, nil
	}
	c := &conds{}
	c.add("w.account_id = %s", accountID)
	st, err := webhookList.pageQuery(c, p, webhookList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *webhookRow) (*model.Webhook, *pageMeta) { return &r.Webhook, &r.pageMeta })
}

// CountWebhooks counts the account's webhooks.
func (db *DB) CountWebhooks(ctx context.Context, accountID string) (int, error) {
	if !validUUID(accountID) {
		return 0, nil
	}
	c := &conds{}
	c.add("w.account_id = %s", accountID)
	return count(ctx, db.read(accountID), webhookList, c)
}

// CreateWebhook stores w (its URL, active, events and headers) with secret
// for the account, unless the account has limit webhooks already (limit
// 0: no limit): then it answers a conflict. The account's row is locked
// while it counts, so concurrent creates cannot pass the limit together.
// The count names the account parameter itself: joined only to the locked
// row, Citus could not tell its shard and counted on every shard.
func (db *DB) CreateWebhook(ctx context.Context, accountID string, w *model.Webhook, secret string, limit int) error {
	if !validUUID(accountID) {
		return model.NotFound("account")
	}
	return db.inTx(ctx, accountID, func(q ext) error {
		if limit > 0 {
			var n int
			if err := sqlx.GetContext(ctx, q, &n, `WITH a AS (SELECT id FROM accounts WHERE id = $1 FOR UPDATE)
				SELECT count(*) FROM webhooks w, a WHERE w.account_id = $1 AND w.account_id = a.id`, accountID); err != nil {
				return mapErr(err)
			}
			if n >= limit {
				return model.Errorf(model.ECONFLICT, "the account has %d webhooks, the most it may have (WEBHOOK_LIMIT); delete one first", n)
			}
		}
		err := sqlx.GetContext(ctx, q, w, `INSERT INTO webhooks (account_id, url, active, events, secret, headers)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+webhookReturning,
			accountID, w.URL, w.Active, pq.StringArray(w.EventList), secret, w.HeaderList)
		return mapErr(err)
	})
}

// WebhookPatch are the columns of a webhook update; nil is unchanged.
type WebhookPatch struct {
	URL     *string
	Active  *bool
	Events  []string
	Headers model.WebhookHeaders
	// Secret, when set, replaces the secret.
	Secret *string
}

// UpdateWebhook changes one of the account's webhooks and returns it.
func (db *DB) UpdateWebhook(ctx context.Context, accountID, id string, p WebhookPatch) (*model.Webhook, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("webhook")
	}
	args := []any{id, accountID}
	set := []string{"updated_at = now()"}
	col := func(name string, v any) {
		args = append(args, v)
		set = append(set, name+" = $"+strconv.Itoa(len(args)))
	}
	if p.URL != nil {
		col("url", *p.URL)
	}
	if p.Active != nil {
		col("active", *p.Active)
	}
	if p.Events != nil {
		col("events", pq.StringArray(p.Events))
	}
	if p.Headers != nil {
		col("headers", p.Headers)
	}
	if p.Secret != nil {
		col("secret", *p.Secret)
	}
	return getOne[model.Webhook](ctx, db.write(accountID), "webhook",
		`UPDATE webhooks SET `+strings.Join(set, ", ")+` WHERE id = $1 AND account_id = $2 RETURNING `+webhookReturning, args...)
}

// DeleteWebhook deletes one of the account's webhooks with its
// notifications and their attempts (the keys cascade), and returns it.
func (db *DB) DeleteWebhook(ctx context.Context, accountID, id string) (*model.Webhook, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, model.NotFound("webhook")
	}
	return getOne[model.Webhook](ctx, db.write(accountID), "webhook",
		`DELETE FROM webhooks WHERE id = $1 AND account_id = $2 RETURNING `+webhookReturning, id, accountID)
}

// WebhookNotificationsByIDs reads notifications of the account.
func (db *DB) WebhookNotificationsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.WebhookNotification, error) {
	return byIDs[model.WebhookNotification](ctx, db.read(accountID),
		`SELECT `+webhookNotificationCols+` FROM webhook_notifications n WHERE n.id = ANY($1) AND n.account_id = $2`, ids, accountID)
}

func webhookNotificationFilter(accountID string, f model.WebhookNotificationFilter) *conds {
	c := &conds{}
	c.add("n.account_id = %s", accountID)
	if f.WebhookID != nil {
		if !validUUID(*f.WebhookID) {
			c.add("false")
		} else {
			c.add("n.webhook_id = %s", *f.WebhookID)
		}
	}
	if f.DeliveryStatus != nil {
		c.add("n.delivery_status = %s", string(*f.DeliveryStatus))
	}
	return c
}

// ListWebhookNotifications reads one page of the account's notifications
// that f keeps.
func (db *DB) ListWebhookNotifications(ctx context.Context, accountID string, f model.WebhookNotificationFilter, p model.PageRequest) (*model.Page[*model.WebhookNotification], error) {
	if !validUUID(accountID) {
		return &model.Page[*model.WebhookNotification]{Items: []*model.WebhookNotification{}, Keys: []*string{}}, nil
	}
	st, err := webhookNotificationList.pageQuery(webhookNotificationFilter(accountID, f), p, webhookNotificationList.cols)
	if err != nil {
		return nil, err
	}
	return readPage(ctx, db.read(accountID), st, func(r *webhookNotificationRow) (*model.WebhookNotification, *pageMeta) {
		return &r.WebhookNotification, &r.pageMeta
	})
}

// CountWebhookNotifications counts the account's notifications that f keeps.
func (db *DB) CountWebhookNotifications(ctx context.Context, accountID string, f model.WebhookNotificationFilter) (int, error) {
	if !validUUID(accountID) {
		return 0, nil
	}
	return count(ctx, db.read(accountID), webhookNotificationList, webhookNotificationFilter(accountID, f))
}

// WebhookEventsByIDs reads the reference objects of notifications by their
// ids (model.WebhookEventID of the notification's): the frozen attributes,
// and the keys of their related records as they are now: the container (a
// container event) and its terminal at the port of discharge, the
// shipment (the container's, or the event's own) and its port of
// discharge; for a notification raised from a transport event record, the
// record's container, port, terminal, rail terminal and vessel.
func (db *DB) WebhookEventsByIDs(ctx context.Context, accountID string, ids []string) ([]*model.WebhookEvent, error) {
	notes := make([]string, len(ids))
	for i, id := range ids {
		notes[i] = model.WebhookEventID(id)
	}
	rows, err := byIDs[model.WebhookEvent](ctx, db.read(accountID),
		`SELECT n.id, n.account_id, n.event, n.payload, n.created_at,
		        c.id AS container_id, s.id AS shipment_id,
		        CASE WHEN te.id IS NULL THEN coalesce(c.pod_terminal_id, s.pod_terminal_id) ELSE te.terminal_id END AS terminal_id,
		        CASE WHEN te.id IS NULL THEN s.port_of_discharge_id ELSE te.port_id END AS port_id,
		        te.rail_terminal_id, te.vessel_id
		 FROM webhook_notifications n
		 LEFT JOIN transport_events te ON n.reference_type = 'transport_event' AND te.account_id = n.account_id AND te.id = n.reference_id
		 LEFT JOIN containers c ON c.account_id = n.account_id
		      AND c.id = CASE n.reference_type WHEN 'container' THEN n.reference_id WHEN 'transport_event' THEN te.container_id END
		 LEFT JOIN shipments s ON s.account_id = n.account_id
		      AND s.id = CASE WHEN n.reference_type = 'shipment' THEN n.reference_id ELSE c.shipment_id END
		 WHERE n.id = ANY($1) AND n.account_id = $2`, notes, accountID)
	for _, r := range rows {
		r.ID = model.WebhookEventID(r.NotificationID)
	}
	return rows, err
}
