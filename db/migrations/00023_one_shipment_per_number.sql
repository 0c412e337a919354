-- One shipment per carrier reference per account, one container per
-- number per shipment, enforced by the database.
--
-- Two polls of one shipment (two container requests, or a bill of lading
-- and one of its containers) that ran at the same moment could each
-- create it: the advisory lock meant to prevent it was taken inside the
-- statement that looked for the shipment, whose snapshot predated the
-- wait. A unique index now makes a second shipment of a number impossible;
-- the poll inserts with ON CONFLICT DO NOTHING and, when another poll won,
-- reads the winner's row in its next statement.
--
-- Existing doubles are merged first, within each account: the oldest
-- shipment of a (shipping line, number) keeps its id, and everything that
-- pointed at a younger one moves to it (containers, raw and transport
-- events, tracking requests, document links, custom field values; its tags
-- and reference numbers are added, its customer kept when the keeper has
-- none); then the younger one is deleted. Containers are merged the same
-- way per (shipment, number), after the shipments: an event both copies
-- hold (same carrier event id) is kept once, a custom field value both
-- hold keeps the keeper's.

-- +goose Up
CREATE TEMPORARY TABLE shipment_merge ON COMMIT DROP AS
SELECT account_id, id AS dup, keep FROM (
    SELECT account_id, id, first_value(id) OVER (PARTITION BY account_id, shipping_line_scac, upper(normalized_number)
        ORDER BY created_at, id) AS keep
    FROM shipments) s
WHERE id <> keep;

UPDATE shipments k SET
    tags = ARRAY(SELECT DISTINCT t FROM unnest(k.tags || d.tags) AS t ORDER BY t),
    ref_numbers = nullif(ARRAY(SELECT DISTINCT r FROM unnest(coalesce(k.ref_numbers, '{}') || d.ref_numbers) AS r ORDER BY r), '{}'),
    customer_id = coalesce(k.customer_id, d.customer_id),
    customer_name = coalesce(nullif(btrim(k.customer_name), ''), d.customer_name)
FROM (SELECT m.account_id, m.keep, array_agg(t) FILTER (WHERE t IS NOT NULL) AS tags,
             (SELECT array_agg(r) FROM shipments s2 JOIN shipment_merge m2 ON m2.account_id = s2.account_id AND m2.dup = s2.id,
                  unnest(s2.ref_numbers) AS r WHERE m2.account_id = m.account_id AND m2.keep = m.keep) AS ref_numbers,
             (array_agg(s.customer_id) FILTER (WHERE s.customer_id IS NOT NULL))[1] AS customer_id,
             (array_agg(s.customer_name) FILTER (WHERE nullif(btrim(s.customer_name), '') IS NOT NULL))[1] AS customer_name
      FROM shipment_merge m JOIN shipments s ON s.account_id = m.account_id AND s.id = m.dup
      LEFT JOIN LATERAL unnest(s.tags) AS t ON true
      GROUP BY m.account_id, m.keep) d
WHERE k.account_id = d.account_id AND k.id = d.keep;

UPDATE containers c SET shipment_id = m.keep
FROM shipment_merge m WHERE c.account_id = m.account_id AND c.shipment_id = m.dup;
UPDATE raw_events e SET shipment_id = m.keep
FROM shipment_merge m WHERE e.account_id = m.account_id AND e.shipment_id = m.dup;
UPDATE transport_events e SET shipment_id = m.keep
FROM shipment_merge m WHERE e.account_id = m.account_id AND e.shipment_id = m.dup;
UPDATE tracking_requests r SET shipment_id = m.keep
FROM shipment_merge m WHERE r.account_id = m.account_id AND r.shipment_id = m.dup;
INSERT INTO document_shipments (account_id, document_id, shipment_id)
SELECT d.account_id, d.document_id, m.keep
FROM document_shipments d JOIN shipment_merge m ON m.account_id = d.account_id AND m.dup = d.shipment_id
ON CONFLICT DO NOTHING;
UPDATE custom_fields f SET shipment_id = m.keep
FROM shipment_merge m
WHERE f.account_id = m.account_id AND f.shipment_id = m.dup
  AND NOT EXISTS (SELECT 1 FROM custom_fields k WHERE k.account_id = m.account_id AND k.shipment_id = m.keep
                  AND k.definition_id = f.definition_id)
  AND f.id = (SELECT min(f2.id::text)::uuid FROM custom_fields f2 JOIN shipment_merge m2
              ON m2.account_id = f2.account_id AND m2.dup = f2.shipment_id
              WHERE m2.account_id = m.account_id AND m2.keep = m.keep AND f2.definition_id = f.definition_id);
-- What still points at a younger shipment (a document link or custom
-- field value the keeper holds already) goes with it.
DELETE FROM shipments s USING shipment_merge m WHERE s.account_id = m.account_id AND s.id = m.dup;

CREATE TEMPORARY TABLE container_merge ON COMMIT DROP AS
SELECT account_id, id AS dup, keep FROM (
    SELECT account_id, id, first_value(id) OVER (PARTITION BY account_id, shipment_id, number ORDER BY created_at, id) AS keep
    FROM containers) c
WHERE id <> keep;

DELETE FROM transport_events e USING container_merge m
WHERE e.account_id = m.account_id AND e.container_id = m.dup
  AND EXISTS (SELECT 1 FROM transport_events k WHERE k.account_id = m.account_id AND k.container_id = m.keep
              AND k.scac = e.scac AND k.carrier_event_id = e.carrier_event_id);
DELETE FROM raw_events e USING container_merge m
WHERE e.account_id = m.account_id AND e.container_id = m.dup
  AND EXISTS (SELECT 1 FROM raw_events k WHERE k.account_id = m.account_id AND k.container_id = m.keep
              AND k.scac = e.scac AND k.carrier_event_id = e.carrier_event_id);
-- Two younger copies may hold one event too: one copy's (the same for
-- the raw event and its transport event) stays.
DELETE FROM transport_events e USING container_merge m
WHERE e.account_id = m.account_id AND e.container_id = m.dup
  AND EXISTS (SELECT 1 FROM transport_events o JOIN container_merge m2 ON m2.account_id = o.account_id AND m2.dup = o.container_id
              WHERE o.account_id = m.account_id AND m2.keep = m.keep AND o.scac = e.scac
                AND o.carrier_event_id = e.carrier_event_id AND o.container_id::text < e.container_id::text);
DELETE FROM raw_events e USING container_merge m
WHERE e.account_id = m.account_id AND e.container_id = m.dup
  AND EXISTS (SELECT 1 FROM raw_events o JOIN container_merge m2 ON m2.account_id = o.account_id AND m2.dup = o.container_id
              WHERE o.account_id = m.account_id AND m2.keep = m.keep AND o.scac = e.scac
                AND o.carrier_event_id = e.carrier_event_id AND o.container_id::text < e.container_id::text);
UPDATE raw_events e SET container_id = m.keep
FROM container_merge m WHERE e.account_id = m.account_id AND e.container_id = m.dup;
UPDATE transport_events e SET container_id = m.keep
FROM container_merge m WHERE e.account_id = m.account_id AND e.container_id = m.dup;
INSERT INTO document_containers (account_id, document_id, container_id)
SELECT d.account_id, d.document_id, m.keep
FROM document_containers d JOIN container_merge m ON m.account_id = d.account_id AND m.dup = d.container_id
ON CONFLICT DO NOTHING;
UPDATE custom_fields f SET container_id = m.keep
FROM container_merge m
WHERE f.account_id = m.account_id AND f.container_id = m.dup
  AND NOT EXISTS (SELECT 1 FROM custom_fields k WHERE k.account_id = m.account_id AND k.container_id = m.keep
                  AND k.definition_id = f.definition_id)
  AND f.id = (SELECT min(f2.id::text)::uuid FROM custom_fields f2 JOIN container_merge m2
              ON m2.account_id = f2.account_id AND m2.dup = f2.container_id
              WHERE m2.account_id = m.account_id AND m2.keep = m.keep AND f2.definition_id = f.definition_id);
DELETE FROM containers c USING container_merge m WHERE c.account_id = m.account_id AND c.id = m.dup;

CREATE UNIQUE INDEX shipments_account_line_number_key ON shipments (account_id, shipping_line_scac, upper(normalized_number));
CREATE UNIQUE INDEX containers_account_shipment_number_key ON containers (account_id, shipment_id, number);

-- +goose Down
DROP INDEX containers_account_shipment_number_key;
DROP INDEX shipments_account_line_number_key;
