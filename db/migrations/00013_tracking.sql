-- Tracking (issue 26): tracking requests as records, the journey of every
-- container (transport events, raw events) and the vessels met in them.
--
-- tracking_requests: a number an account asked to track, with its public
-- lifecycle (pending → created | awaiting_manifest | failed |
-- tracking_stopped). request_number is stored normalised (upper case, no
-- spaces); shipment_id is the tracked object once the carrier answered.
-- retry_count counts failed polls of the current attempt; is_retrying is
-- true while a retry is scheduled. next_poll_at is when the poller looks
-- again (NULL: never, a request that ended). One live request per number
-- in an account: a second one is refused (422, duplicate) unless the first
-- failed.
--
-- Existing shipments were tracked before requests were records: each gets
-- one created request (or tracking_stopped, as its shipment), whose id is
-- the one webhook payloads already used for it (model.TrackingRequestID:
-- the shipment id XOR a fixed mask), so nothing a receiver stored changes
-- meaning.
--
-- raw_events: each event a carrier published about a container, kept once
-- per (account, container, carrier event id): a poll repeated after a
-- crash, or by two instances, adds nothing. payload is the carrier's event
-- as received (DCSA Track & Trace v2.2).
--
-- transport_events: the public milestones derived from raw events
-- (container.transport.vessel_departed …), one per raw event that maps to
-- one, keyed the same way.
--
-- vessels: shared by every account (reference data), met in events, keyed
-- by IMO number.

-- +goose Up
CREATE TABLE vessels (
    id                           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    imo                          text UNIQUE CHECK (imo ~ '^[0-9]{7}$'),
    mmsi                         text,
    name                         text NOT NULL,
    call_sign                    text,
    flag                         text,
    latitude                     double precision,
    longitude                    double precision,
    nautical_speed_knots         double precision,
    navigational_heading_degrees double precision,
    position_timestamp           timestamptz,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    updated_at                   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE vessels IS 'shipgraph:reference';

CREATE TABLE tracking_requests (
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id             uuid NOT NULL DEFAULT gen_random_uuid(),
    request_type   text NOT NULL CHECK (request_type IN ('bill_of_lading', 'booking_number', 'container')),
    request_number text NOT NULL CHECK (request_number <> ''),
    scac           text NOT NULL CHECK (length(scac) = 4),
    ref_numbers    text[] NOT NULL DEFAULT '{}',
    tags           text[] NOT NULL DEFAULT '{}',
    status         text NOT NULL DEFAULT 'pending' CHECK (status IN (
        'pending', 'awaiting_manifest', 'created', 'failed', 'tracking_stopped')),
    failed_reason  text CHECK (failed_reason IN (
        'booking_cancelled', 'duplicate', 'expired', 'internal_processing_error', 'invalid_number',
        'not_found', 'retries_exhausted', 'shipping_line_unreachable', 'unrecognized_response',
        'data_unavailable', 'scac_auto_detect_failed')),
    is_retrying    boolean NOT NULL DEFAULT false,
    retry_count    integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
    shipment_id    uuid,
    user_id        uuid,
    last_polled_at timestamptz,
    next_poll_at   timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE SET NULL (shipment_id),
    FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE SET NULL (user_id),
    CHECK ((status = 'failed') = (failed_reason IS NOT NULL))
);
COMMENT ON TABLE tracking_requests IS 'shipgraph:tenant';
CREATE INDEX tracking_requests_id_idx ON tracking_requests (id);
CREATE INDEX tracking_requests_account_created_idx ON tracking_requests (account_id, created_at, id);
CREATE INDEX tracking_requests_account_shipment_idx ON tracking_requests (account_id, shipment_id);
CREATE INDEX tracking_requests_account_status_idx ON tracking_requests (account_id, status);
CREATE INDEX tracking_requests_account_number_idx ON tracking_requests (account_id, request_number text_pattern_ops);
CREATE INDEX tracking_requests_tags_idx ON tracking_requests USING gin (tags);
-- The poller's queue: requests due for a look, whatever the account.
CREATE INDEX tracking_requests_due_idx ON tracking_requests (next_poll_at) WHERE next_poll_at IS NOT NULL;
-- One live request per number and carrier in an account.
CREATE UNIQUE INDEX tracking_requests_live_number_idx ON tracking_requests (account_id, request_type, request_number, scac)
    WHERE status <> 'failed';
CREATE INDEX tracking_requests_user_id_idx ON tracking_requests (account_id, user_id);

CREATE TABLE raw_events (
    account_id       uuid NOT NULL,
    id               uuid NOT NULL DEFAULT gen_random_uuid(),
    container_id     uuid NOT NULL,
    shipment_id      uuid NOT NULL,
    scac             text NOT NULL,
    carrier_event_id text NOT NULL,
    event            text NOT NULL,
    original_event   text,
    estimated        boolean NOT NULL DEFAULT false,
    event_at         timestamptz,
    timezone         text,
    location_name    text,
    location_locode  text,
    port_id          uuid REFERENCES ports (id) ON DELETE SET NULL,
    vessel_id        uuid REFERENCES vessels (id) ON DELETE SET NULL,
    vessel_name      text,
    vessel_imo       text,
    voyage_number    text,
    position         integer NOT NULL DEFAULT 0,
    payload          jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, container_id, scac, carrier_event_id),
    FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE raw_events IS 'shipgraph:tenant';
CREATE INDEX raw_events_account_container_idx ON raw_events (account_id, container_id, position, id);
CREATE INDEX raw_events_account_shipment_idx ON raw_events (account_id, shipment_id);
CREATE INDEX raw_events_port_id_idx ON raw_events (port_id);
CREATE INDEX raw_events_vessel_id_idx ON raw_events (vessel_id);

CREATE TABLE transport_events (
    account_id       uuid NOT NULL,
    id               uuid NOT NULL DEFAULT gen_random_uuid(),
    container_id     uuid NOT NULL,
    shipment_id      uuid NOT NULL,
    raw_event_id     uuid,
    scac             text NOT NULL,
    carrier_event_id text NOT NULL,
    event            text NOT NULL CHECK (event LIKE 'container.%'),
    event_at         timestamptz,
    timezone         text,
    location_locode  text,
    port_id          uuid REFERENCES ports (id) ON DELETE SET NULL,
    terminal_id      uuid REFERENCES terminals (id) ON DELETE SET NULL,
    rail_terminal_id uuid REFERENCES rail_terminals (id) ON DELETE SET NULL,
    vessel_id        uuid REFERENCES vessels (id) ON DELETE SET NULL,
    voyage_number    text,
    data_source      text NOT NULL DEFAULT 'shipping_line' CHECK (data_source IN ('shipping_line', 'terminal', 'ais')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id),
    UNIQUE (account_id, container_id, scac, carrier_event_id),
    FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE,
    FOREIGN KEY (account_id, raw_event_id) REFERENCES raw_events (account_id, id) ON DELETE SET NULL (raw_event_id)
);
COMMENT ON TABLE transport_events IS 'shipgraph:tenant';
CREATE INDEX transport_events_id_idx ON transport_events (id);
CREATE INDEX transport_events_account_container_idx ON transport_events (account_id, container_id, event_at, id);
CREATE INDEX transport_events_account_shipment_idx ON transport_events (account_id, shipment_id);
CREATE INDEX transport_events_account_raw_idx ON transport_events (account_id, raw_event_id);
CREATE INDEX transport_events_port_id_idx ON transport_events (port_id);
CREATE INDEX transport_events_terminal_id_idx ON transport_events (terminal_id);
CREATE INDEX transport_events_rail_terminal_id_idx ON transport_events (rail_terminal_id);
CREATE INDEX transport_events_vessel_id_idx ON transport_events (vessel_id);

-- Changes to requests and transport events reach the change log (webhooks,
-- subscriptions) like any write.
CREATE TRIGGER tracking_requests_notify_change AFTER INSERT OR UPDATE OR DELETE ON tracking_requests
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('tracking_request', 'shipment_id');
CREATE TRIGGER transport_events_notify_change AFTER INSERT OR UPDATE OR DELETE ON transport_events
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('transport_event', 'container_id');

-- The backfill: one request per existing shipment, under the id webhook
-- payloads already gave it. It announces nothing: no request changed for
-- anyone.
SET LOCAL shipgraph.notify = 'off';
INSERT INTO tracking_requests (account_id, id, request_type, request_number, scac, ref_numbers, tags, status,
                               shipment_id, created_at, updated_at)
SELECT s.account_id,
       (lpad(to_hex(('x' || substr(h, 1, 16))::bit(64)::bigint # ('x' || '3be471c9520d0a8e')::bit(64)::bigint), 16, '0') ||
        lpad(to_hex(('x' || substr(h, 17, 16))::bit(64)::bigint # ('x' || '0f26d8936c174fa2')::bit(64)::bigint), 16, '0'))::uuid,
       'bill_of_lading', upper(replace(s.bill_of_lading_number, ' ', '')), s.shipping_line_scac,
       coalesce(s.ref_numbers, '{}'), s.tags,
       CASE WHEN s.line_tracking_stopped_at IS NULL THEN 'created' ELSE 'tracking_stopped' END,
       s.id, s.created_at, coalesce(s.line_tracking_stopped_at, s.updated_at)
FROM (SELECT *, replace(id::text, '-', '') AS h FROM shipments) s
WHERE length(s.shipping_line_scac) = 4
ON CONFLICT DO NOTHING;
RESET shipgraph.notify;

-- +goose Down
DROP TABLE transport_events;
DROP TABLE raw_events;
DROP TABLE tracking_requests;
DROP TABLE vessels;
