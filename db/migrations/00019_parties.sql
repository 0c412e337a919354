-- Parties (issue 28, point 2): an account's customers, the resource of
-- /v2/parties (list, create, get) and GraphQL, and the `customer`
-- relationship of shipments and tracking requests. A company name is
-- unique in an account, whatever its case ("'X' already exists in
-- Account", the OpenAPI's 422). A tracking request created with a customer
-- passes it to the shipment it creates or finds (the poller, db/tracking_poll.go).
-- Deleting a party (no API does yet) leaves its shipments and requests
-- without a customer.

-- +goose Up
CREATE TABLE parties (
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    id           uuid NOT NULL DEFAULT gen_random_uuid(),
    company_name text NOT NULL CHECK (btrim(company_name) <> '' AND length(company_name) <= 255),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, id)
);
COMMENT ON TABLE parties IS 'shipgraph:tenant';
CREATE INDEX parties_id_idx ON parties (id);
CREATE INDEX parties_account_created_idx ON parties (account_id, created_at, id);
-- lower() under the ICU root collation: the database's C locale lower-cases
-- ASCII only ("Ärger" and "ärger" would both pass).
CREATE UNIQUE INDEX parties_account_name_idx ON parties (account_id, lower(company_name COLLATE "und-x-icu"));

ALTER TABLE shipments ADD COLUMN customer_id uuid,
    ADD FOREIGN KEY (account_id, customer_id) REFERENCES parties (account_id, id) ON DELETE SET NULL (customer_id);
CREATE INDEX shipments_customer_idx ON shipments (account_id, customer_id) WHERE customer_id IS NOT NULL;
ALTER TABLE tracking_requests ADD COLUMN customer_id uuid,
    ADD FOREIGN KEY (account_id, customer_id) REFERENCES parties (account_id, id) ON DELETE SET NULL (customer_id);
CREATE INDEX tracking_requests_customer_idx ON tracking_requests (account_id, customer_id) WHERE customer_id IS NOT NULL;

CREATE TRIGGER parties_notify_change AFTER INSERT OR UPDATE OR DELETE ON parties
    FOR EACH ROW EXECUTE FUNCTION shipgraph_notify_change('party', '');

-- +goose Down
DROP TRIGGER parties_notify_change ON parties;
ALTER TABLE tracking_requests DROP COLUMN customer_id;
ALTER TABLE shipments DROP COLUMN customer_id;
DROP TABLE parties;
