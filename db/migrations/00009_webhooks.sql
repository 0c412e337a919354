-- Webhooks (issue 17): an account's endpoints, the notifications raised for
-- them from the change log, and every delivery attempt. Every key carries
-- account_id, as tenant keys do.
--
-- webhooks: an endpoint. events are the webhook event names it wants
-- (container.updated, shipment.estimated.arrival, …); secret keys the
-- HMAC-SHA256 signature of each body (hex, X-T49-Webhook-Signature);
-- headers are extra request headers, a JSON array of {"name","value"}.
--
-- webhook_notifications: one event for one webhook. The columns the
-- delivery reads and writes:
--   event           the webhook event name (container.updated, …)
--   change_id       the change_log id that raised it (NULL: raised another
--                   way); (account, webhook, change_id, event) is unique, so
--                   re-deriving a change never raises it twice
--   reference_type  the record the event is about: 'container' or 'shipment'
--                   (the change log's record type)
--   reference_id    that record's id
--   payload         the attributes of the notification's reference object,
--                   frozen when it was raised, a JSON object rendered as is:
--                   for container_updated_event {"changeset": {attr: [old,
--                   new]}, "timestamp", "timezone", "data_source"}; for
--                   transport_event {"event", "timestamp", "timezone",
--                   "location_locode", "voyage_number", "data_source",
--                   "created_at"}; for estimated_event {"event",
--                   "estimated_timestamp", "timezone", "location_locode",
--                   "voyage_number", "data_source", "created_at"}. The
--                   reference object's JSON:API type follows from the event
--                   name (model.WebhookEventObjectType).
--   delivery_status pending until delivered (succeeded) or given up (failed)
--   attempts, next_attempt_at, claimed_by, claimed_until, delivered_at:
--                   the dispatcher's bookkeeping.
--
-- webhook_delivery_attempts: one row per HTTP attempt; response_body keeps
-- at most 4 KiB.

-- +goose Up
CREATE TABLE webhooks (
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id         uuid NOT NULL DEFAULT gen_random_uuid(),
    url        text NOT NULL,
    active     boolean NOT NULL DEFAULT true,
    events     text[] NOT NULL CHECK (cardinality(events) > 0),
    secret     text NOT NULL,
    headers    jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(headers) = 'array'),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id)
);
-- Lookups by id whatever the account. Not unique: a distributed table
-- enforces uniqueness only with account_id (the primary key does); ids are
-- unique by how they are made (gen_random_uuid()).
CREATE INDEX webhooks_id_idx ON webhooks (id);
-- The list, in creation order.
CREATE INDEX webhooks_account_created_idx ON webhooks (account_id, created_at, id);

CREATE TABLE webhook_notifications (
    account_id      uuid NOT NULL,
    id              uuid NOT NULL DEFAULT gen_random_uuid(),
    webhook_id      uuid NOT NULL,
    event           text NOT NULL,
    change_id       bigint,
    reference_type  text NOT NULL,
    reference_id    uuid NOT NULL,
    payload         jsonb,
    delivery_status text NOT NULL DEFAULT 'pending'
                    CHECK (delivery_status IN ('pending', 'succeeded', 'failed')),
    attempts        int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claimed_by      text,
    claimed_until   timestamptz,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, webhook_id) REFERENCES webhooks (account_id, id) ON DELETE CASCADE,
    UNIQUE (account_id, webhook_id, change_id, event)
);
CREATE INDEX webhook_notifications_id_idx ON webhook_notifications (id);
-- The dispatcher: what is due, oldest first.
CREATE INDEX webhook_notifications_due_idx ON webhook_notifications (next_attempt_at)
    WHERE delivery_status = 'pending';
-- The list, newest first, whole account or one webhook.
CREATE INDEX webhook_notifications_account_created_idx
    ON webhook_notifications (account_id, created_at DESC, id DESC);
CREATE INDEX webhook_notifications_webhook_created_idx
    ON webhook_notifications (account_id, webhook_id, created_at DESC, id DESC);

CREATE TABLE webhook_delivery_attempts (
    account_id      uuid NOT NULL,
    id              uuid NOT NULL DEFAULT gen_random_uuid(),
    notification_id uuid NOT NULL,
    attempted_at    timestamptz NOT NULL DEFAULT now(),
    duration_ms     int NOT NULL DEFAULT 0,
    status_code     int,
    error           text,
    response_body   text CHECK (octet_length(response_body) <= 4096),
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, notification_id)
        REFERENCES webhook_notifications (account_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_delivery_attempts_notification_idx
    ON webhook_delivery_attempts (account_id, notification_id, attempted_at);

-- Account data (db/distribution_test.go judges every table by its mark).
COMMENT ON TABLE webhooks IS 'shipgraph:tenant';
COMMENT ON TABLE webhook_notifications IS 'shipgraph:tenant';
COMMENT ON TABLE webhook_delivery_attempts IS 'shipgraph:tenant';

-- +goose Down
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_notifications;
DROP TABLE webhooks;
