-- A schema ready for a PostgreSQL distributed by account (issue 18, part
-- 4; docs/scaling.md, "Distributed PostgreSQL (Citus)"), in place, on
-- existing data.
--
-- Every table says what it is, in its comment, so the rule check
-- (db/distribution_test.go) and an operator know where it goes:
--
--   shipgraph:tenant     one account's rows: account_id NOT NULL, and every
--                        primary key, unique constraint and foreign key to
--                        another account-owned table includes it. Citus:
--                        create_distributed_table(…, 'account_id'), colocated.
--   shipgraph:reference  data shared by every account (ports, terminals …):
--                        no account_id, no key to account data. Citus:
--                        create_reference_table.
--   shipgraph:global     identity: accounts, users, API keys. Found without
--                        knowing the account (authentication by key hash,
--                        a user by email), so their global uniques cannot
--                        carry account_id. Small and rarely written. Citus:
--                        reference tables (or coordinator-local tables).
--
-- The keys between account-owned tables become composite: PRIMARY KEY
-- (account_id, id), FOREIGN KEY (account_id, shipment_id) REFERENCES
-- shipments (account_id, id). Besides being what Citus requires, the
-- database itself now refuses a container that points at another account's
-- shipment. Keys to reference tables stay single-column.
--
-- Existing data: the link tables and options get their parent's account.
-- A row that already points across accounts (possible only through plain
-- SQL: Shipgraph's writes check the account) makes the migration fail on
-- the foreign key that names it; fix or delete that row and migrate again.
--
-- Locks: the keys are rebuilt with ACCESS EXCLUSIVE locks inside one
-- transaction (goose's), so writers and readers wait while it runs; at a
-- million shipments that is minutes (docs/scaling.md says how to build the
-- indexes CONCURRENTLY first on a big installation).

-- +goose Up

-- Backfills must not announce (or log) a change per row: the rows did not
-- change for anyone. User triggers are switched off for the backfill
-- alone; foreign keys stay enforced.
ALTER TABLE document_shipments ADD COLUMN account_id uuid;
ALTER TABLE document_shipments DISABLE TRIGGER USER;
UPDATE document_shipments ds SET account_id = d.account_id FROM documents d WHERE d.id = ds.document_id;
ALTER TABLE document_shipments ENABLE TRIGGER USER;
ALTER TABLE document_shipments ALTER COLUMN account_id SET NOT NULL;

ALTER TABLE document_containers ADD COLUMN account_id uuid;
ALTER TABLE document_containers DISABLE TRIGGER USER;
UPDATE document_containers dc SET account_id = d.account_id FROM documents d WHERE d.id = dc.document_id;
ALTER TABLE document_containers ENABLE TRIGGER USER;
ALTER TABLE document_containers ALTER COLUMN account_id SET NOT NULL;

ALTER TABLE custom_field_options ADD COLUMN account_id uuid;
ALTER TABLE custom_field_options DISABLE TRIGGER USER;
UPDATE custom_field_options o SET account_id = d.account_id FROM custom_field_definitions d WHERE d.id = o.definition_id;
ALTER TABLE custom_field_options ENABLE TRIGGER USER;
ALTER TABLE custom_field_options ALTER COLUMN account_id SET NOT NULL;

-- Every foreign key into an account-owned table's id goes first: the
-- primary keys they lean on are rebuilt below.
ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_user_id_fkey;
ALTER TABLE shipments DROP CONSTRAINT shipments_line_tracking_stopped_by_user_id_fkey;
ALTER TABLE containers DROP CONSTRAINT containers_shipment_id_fkey;
ALTER TABLE email_submissions DROP CONSTRAINT email_submissions_user_id_fkey;
ALTER TABLE documents DROP CONSTRAINT documents_user_id_fkey,
    DROP CONSTRAINT documents_email_submission_id_fkey,
    DROP CONSTRAINT documents_last_document_representation_id_fkey,
    DROP CONSTRAINT documents_upload_fk;
ALTER TABLE document_representations DROP CONSTRAINT document_representations_document_id_fkey;
ALTER TABLE document_shipments DROP CONSTRAINT document_shipments_document_id_fkey,
    DROP CONSTRAINT document_shipments_shipment_id_fkey;
ALTER TABLE document_containers DROP CONSTRAINT document_containers_document_id_fkey,
    DROP CONSTRAINT document_containers_container_id_fkey;
ALTER TABLE custom_field_options DROP CONSTRAINT custom_field_options_definition_id_fkey;
ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_definition_id_fkey,
    DROP CONSTRAINT custom_fields_shipment_id_fkey,
    DROP CONSTRAINT custom_fields_container_id_fkey;
ALTER TABLE uploads DROP CONSTRAINT uploads_user_id_fkey;

-- Keys. users keeps its primary key (a global table) and gains the
-- (account_id, id) key that account-owned rows point at, so a document
-- cannot name another account's user either.
ALTER TABLE users ADD CONSTRAINT users_account_id_id_key UNIQUE (account_id, id);
DROP INDEX users_account_id_idx; -- led by account_id in users_account_id_id_key

ALTER TABLE shipments DROP CONSTRAINT shipments_pkey, ADD CONSTRAINT shipments_pkey PRIMARY KEY (account_id, id);
ALTER TABLE containers DROP CONSTRAINT containers_pkey, ADD CONSTRAINT containers_pkey PRIMARY KEY (account_id, id);
ALTER TABLE email_submissions DROP CONSTRAINT email_submissions_pkey, ADD CONSTRAINT email_submissions_pkey PRIMARY KEY (account_id, id);
ALTER TABLE documents DROP CONSTRAINT documents_pkey, ADD CONSTRAINT documents_pkey PRIMARY KEY (account_id, id);
ALTER TABLE document_representations DROP CONSTRAINT document_representations_pkey,
    ADD CONSTRAINT document_representations_pkey PRIMARY KEY (account_id, id);
ALTER TABLE document_shipments DROP CONSTRAINT document_shipments_pkey,
    ADD CONSTRAINT document_shipments_pkey PRIMARY KEY (account_id, document_id, shipment_id);
ALTER TABLE document_containers DROP CONSTRAINT document_containers_pkey,
    ADD CONSTRAINT document_containers_pkey PRIMARY KEY (account_id, document_id, container_id);
ALTER TABLE custom_field_definitions DROP CONSTRAINT custom_field_definitions_pkey,
    ADD CONSTRAINT custom_field_definitions_pkey PRIMARY KEY (account_id, id);
ALTER TABLE custom_field_options DROP CONSTRAINT custom_field_options_pkey,
    ADD CONSTRAINT custom_field_options_pkey PRIMARY KEY (account_id, id),
    DROP CONSTRAINT custom_field_options_definition_id_value_key,
    ADD CONSTRAINT custom_field_options_definition_id_value_key UNIQUE (account_id, definition_id, value);
ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_pkey,
    ADD CONSTRAINT custom_fields_pkey PRIMARY KEY (account_id, id),
    DROP CONSTRAINT custom_fields_definition_id_entity_id_key,
    ADD CONSTRAINT custom_fields_definition_id_entity_id_key UNIQUE (account_id, definition_id, entity_id);
-- uploads had (id) and (account_id, id); the second becomes the key. The
-- storage key is random, unique within its account.
ALTER TABLE uploads DROP CONSTRAINT uploads_pkey, DROP CONSTRAINT uploads_account_id_id_key,
    ADD CONSTRAINT uploads_pkey PRIMARY KEY (account_id, id),
    DROP CONSTRAINT uploads_key_key,
    ADD CONSTRAINT uploads_key_key UNIQUE (account_id, key);
DROP INDEX documents_upload_id_idx;
CREATE UNIQUE INDEX documents_upload_id_idx ON documents (account_id, upload_id) WHERE upload_id IS NOT NULL;

-- Foreign keys between account-owned tables, on (account_id, …). A
-- composite ON DELETE SET NULL names its column: the account stays.
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_user_id_fkey
    FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE CASCADE;
ALTER TABLE shipments ADD CONSTRAINT shipments_line_tracking_stopped_by_user_id_fkey
    FOREIGN KEY (account_id, line_tracking_stopped_by_user_id) REFERENCES users (account_id, id)
    ON DELETE SET NULL (line_tracking_stopped_by_user_id);
ALTER TABLE containers ADD CONSTRAINT containers_shipment_id_fkey
    FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE;
ALTER TABLE email_submissions ADD CONSTRAINT email_submissions_user_id_fkey
    FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE SET NULL (user_id);
ALTER TABLE documents
    ADD CONSTRAINT documents_user_id_fkey
        FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE SET NULL (user_id),
    ADD CONSTRAINT documents_email_submission_id_fkey
        FOREIGN KEY (account_id, email_submission_id) REFERENCES email_submissions (account_id, id)
        ON DELETE SET NULL (email_submission_id),
    ADD CONSTRAINT documents_last_document_representation_id_fkey
        FOREIGN KEY (account_id, last_document_representation_id) REFERENCES document_representations (account_id, id)
        ON DELETE SET NULL (last_document_representation_id) DEFERRABLE INITIALLY DEFERRED,
    ADD CONSTRAINT documents_upload_fk
        FOREIGN KEY (account_id, upload_id) REFERENCES uploads (account_id, id);
ALTER TABLE document_representations ADD CONSTRAINT document_representations_document_id_fkey
    FOREIGN KEY (account_id, document_id) REFERENCES documents (account_id, id) ON DELETE CASCADE;
ALTER TABLE document_shipments
    ADD CONSTRAINT document_shipments_account_id_fkey
        FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE,
    ADD CONSTRAINT document_shipments_document_id_fkey
        FOREIGN KEY (account_id, document_id) REFERENCES documents (account_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT document_shipments_shipment_id_fkey
        FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE;
ALTER TABLE document_containers
    ADD CONSTRAINT document_containers_account_id_fkey
        FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE,
    ADD CONSTRAINT document_containers_document_id_fkey
        FOREIGN KEY (account_id, document_id) REFERENCES documents (account_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT document_containers_container_id_fkey
        FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE;
ALTER TABLE custom_field_options
    ADD CONSTRAINT custom_field_options_account_id_fkey
        FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE,
    ADD CONSTRAINT custom_field_options_definition_id_fkey
        FOREIGN KEY (account_id, definition_id) REFERENCES custom_field_definitions (account_id, id) ON DELETE CASCADE;
ALTER TABLE custom_fields
    ADD CONSTRAINT custom_fields_definition_id_fkey
        FOREIGN KEY (account_id, definition_id) REFERENCES custom_field_definitions (account_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT custom_fields_shipment_id_fkey
        FOREIGN KEY (account_id, shipment_id) REFERENCES shipments (account_id, id) ON DELETE CASCADE,
    ADD CONSTRAINT custom_fields_container_id_fkey
        FOREIGN KEY (account_id, container_id) REFERENCES containers (account_id, id) ON DELETE CASCADE;
ALTER TABLE uploads ADD CONSTRAINT uploads_user_id_fkey
    FOREIGN KEY (account_id, user_id) REFERENCES users (account_id, id) ON DELETE SET NULL (user_id);

-- Indexes that led with a parent id now lead with (account_id, parent id):
-- the reads name the account, and the composite keys' cascades look rows
-- up by both. Single-column account_id indexes the new primary keys lead
-- with are gone.
DROP INDEX api_tokens_user_id_idx;
CREATE INDEX api_tokens_user_id_idx ON api_tokens (account_id, user_id);
DROP INDEX shipments_line_tracking_stopped_by_user_id_idx;
CREATE INDEX shipments_line_tracking_stopped_by_user_id_idx ON shipments (account_id, line_tracking_stopped_by_user_id);
DROP INDEX containers_shipment_id_idx;
CREATE INDEX containers_shipment_id_idx ON containers (account_id, shipment_id, created_at, id);
DROP INDEX email_submissions_account_id_idx, email_submissions_user_id_idx;
CREATE INDEX email_submissions_user_id_idx ON email_submissions (account_id, user_id);
DROP INDEX documents_user_id_idx, documents_email_submission_id_idx, documents_last_document_representation_id_idx;
CREATE INDEX documents_user_id_idx ON documents (account_id, user_id);
CREATE INDEX documents_email_submission_id_idx ON documents (account_id, email_submission_id);
CREATE INDEX documents_last_document_representation_id_idx ON documents (account_id, last_document_representation_id);
DROP INDEX document_representations_account_id_idx, document_representations_document_id_idx;
CREATE INDEX document_representations_document_id_idx ON document_representations (account_id, document_id);
DROP INDEX document_shipments_shipment_id_idx;
CREATE INDEX document_shipments_shipment_id_idx ON document_shipments (account_id, shipment_id);
DROP INDEX document_containers_container_id_idx;
CREATE INDEX document_containers_container_id_idx ON document_containers (account_id, container_id);
DROP INDEX custom_field_options_definition_position_idx;
CREATE INDEX custom_field_options_definition_position_idx ON custom_field_options (account_id, definition_id, position, id);
DROP INDEX custom_fields_account_id_idx, custom_fields_entity_id_idx, custom_fields_shipment_id_idx,
    custom_fields_container_id_idx, custom_fields_definition_created_idx;
CREATE INDEX custom_fields_entity_id_idx ON custom_fields (account_id, entity_id);
CREATE INDEX custom_fields_shipment_id_idx ON custom_fields (account_id, shipment_id);
CREATE INDEX custom_fields_container_id_idx ON custom_fields (account_id, container_id);
CREATE INDEX custom_fields_definition_created_idx ON custom_fields (account_id, definition_id, created_at, id);

-- Triggers that look a row up by id alone now name the account too: on a
-- distributed database the statement then goes to the account's shard.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION documents_set_added_by_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.added_by_name := coalesce(
        (SELECT btrim(u.first_name || ' ' || u.last_name) FROM users u
         WHERE u.account_id = NEW.account_id AND u.id = NEW.user_id), '');
    RETURN NEW;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_rename_documents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE documents SET added_by_name = btrim(NEW.first_name || ' ' || NEW.last_name)
    WHERE account_id = NEW.account_id AND user_id = NEW.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
-- shipgraph_notify_change (00004, and the change log's) finds an option's
-- account through its definition only when the row has none: options now
-- carry it, so that lookup is no longer taken.

COMMENT ON TABLE accounts IS 'shipgraph:global';
COMMENT ON TABLE users IS 'shipgraph:global';
COMMENT ON TABLE api_tokens IS 'shipgraph:global';
COMMENT ON TABLE ports IS 'shipgraph:reference';
COMMENT ON TABLE metro_areas IS 'shipgraph:reference';
COMMENT ON TABLE terminals IS 'shipgraph:reference';
COMMENT ON TABLE rail_terminals IS 'shipgraph:reference';
COMMENT ON TABLE shipping_lines IS 'shipgraph:reference';
COMMENT ON TABLE shipments IS 'shipgraph:tenant';
COMMENT ON TABLE containers IS 'shipgraph:tenant';
COMMENT ON TABLE email_submissions IS 'shipgraph:tenant';
COMMENT ON TABLE documents IS 'shipgraph:tenant';
COMMENT ON TABLE document_representations IS 'shipgraph:tenant';
COMMENT ON TABLE document_shipments IS 'shipgraph:tenant';
COMMENT ON TABLE document_containers IS 'shipgraph:tenant';
COMMENT ON TABLE custom_field_definitions IS 'shipgraph:tenant';
COMMENT ON TABLE custom_field_options IS 'shipgraph:tenant';
COMMENT ON TABLE custom_fields IS 'shipgraph:tenant';
COMMENT ON TABLE list_counts IS 'shipgraph:tenant';
COMMENT ON TABLE uploads IS 'shipgraph:tenant';

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['accounts', 'users', 'api_tokens', 'ports', 'metro_areas', 'terminals',
        'rail_terminals', 'shipping_lines', 'shipments', 'containers', 'email_submissions', 'documents',
        'document_representations', 'document_shipments', 'document_containers', 'custom_field_definitions',
        'custom_field_options', 'custom_fields', 'list_counts', 'uploads'] LOOP
        IF to_regclass('public.' || t) IS NOT NULL THEN
            EXECUTE format('COMMENT ON TABLE %I IS NULL', t);
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION documents_set_added_by_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.added_by_name := coalesce(
        (SELECT btrim(u.first_name || ' ' || u.last_name) FROM users u WHERE u.id = NEW.user_id), '');
    RETURN NEW;
END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION users_rename_documents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE documents SET added_by_name = btrim(NEW.first_name || ' ' || NEW.last_name)
    WHERE user_id = NEW.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

DROP INDEX api_tokens_user_id_idx, shipments_line_tracking_stopped_by_user_id_idx, containers_shipment_id_idx,
    email_submissions_user_id_idx, documents_user_id_idx, documents_email_submission_id_idx,
    documents_last_document_representation_id_idx, document_representations_document_id_idx,
    document_shipments_shipment_id_idx, document_containers_container_id_idx,
    custom_field_options_definition_position_idx, custom_fields_entity_id_idx, custom_fields_shipment_id_idx,
    custom_fields_container_id_idx, custom_fields_definition_created_idx;
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);
CREATE INDEX shipments_line_tracking_stopped_by_user_id_idx ON shipments (line_tracking_stopped_by_user_id);
CREATE INDEX containers_shipment_id_idx ON containers (shipment_id, created_at, id);
CREATE INDEX email_submissions_account_id_idx ON email_submissions (account_id);
CREATE INDEX email_submissions_user_id_idx ON email_submissions (user_id);
CREATE INDEX documents_user_id_idx ON documents (user_id);
CREATE INDEX documents_email_submission_id_idx ON documents (email_submission_id);
CREATE INDEX documents_last_document_representation_id_idx ON documents (last_document_representation_id);
CREATE INDEX document_representations_account_id_idx ON document_representations (account_id);
CREATE INDEX document_representations_document_id_idx ON document_representations (document_id);
CREATE INDEX document_shipments_shipment_id_idx ON document_shipments (shipment_id);
CREATE INDEX document_containers_container_id_idx ON document_containers (container_id);
CREATE INDEX custom_field_options_definition_position_idx ON custom_field_options (definition_id, position, id);
CREATE INDEX custom_fields_account_id_idx ON custom_fields (account_id);
CREATE INDEX custom_fields_entity_id_idx ON custom_fields (entity_id);
CREATE INDEX custom_fields_shipment_id_idx ON custom_fields (shipment_id);
CREATE INDEX custom_fields_container_id_idx ON custom_fields (container_id);
CREATE INDEX custom_fields_definition_created_idx ON custom_fields (definition_id, created_at, id);

ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_user_id_fkey;
ALTER TABLE shipments DROP CONSTRAINT shipments_line_tracking_stopped_by_user_id_fkey;
ALTER TABLE containers DROP CONSTRAINT containers_shipment_id_fkey;
ALTER TABLE email_submissions DROP CONSTRAINT email_submissions_user_id_fkey;
ALTER TABLE documents DROP CONSTRAINT documents_user_id_fkey,
    DROP CONSTRAINT documents_email_submission_id_fkey,
    DROP CONSTRAINT documents_last_document_representation_id_fkey,
    DROP CONSTRAINT documents_upload_fk;
ALTER TABLE document_representations DROP CONSTRAINT document_representations_document_id_fkey;
ALTER TABLE document_shipments DROP CONSTRAINT document_shipments_account_id_fkey,
    DROP CONSTRAINT document_shipments_document_id_fkey,
    DROP CONSTRAINT document_shipments_shipment_id_fkey;
ALTER TABLE document_containers DROP CONSTRAINT document_containers_account_id_fkey,
    DROP CONSTRAINT document_containers_document_id_fkey,
    DROP CONSTRAINT document_containers_container_id_fkey;
ALTER TABLE custom_field_options DROP CONSTRAINT custom_field_options_account_id_fkey,
    DROP CONSTRAINT custom_field_options_definition_id_fkey;
ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_definition_id_fkey,
    DROP CONSTRAINT custom_fields_shipment_id_fkey,
    DROP CONSTRAINT custom_fields_container_id_fkey;
ALTER TABLE uploads DROP CONSTRAINT uploads_user_id_fkey;

DROP INDEX documents_upload_id_idx;
CREATE UNIQUE INDEX documents_upload_id_idx ON documents (upload_id) WHERE upload_id IS NOT NULL;
ALTER TABLE uploads DROP CONSTRAINT uploads_key_key, ADD CONSTRAINT uploads_key_key UNIQUE (key),
    DROP CONSTRAINT uploads_pkey, ADD CONSTRAINT uploads_pkey PRIMARY KEY (id),
    ADD CONSTRAINT uploads_account_id_id_key UNIQUE (account_id, id);
ALTER TABLE custom_fields DROP CONSTRAINT custom_fields_definition_id_entity_id_key,
    ADD CONSTRAINT custom_fields_definition_id_entity_id_key UNIQUE (definition_id, entity_id),
    DROP CONSTRAINT custom_fields_pkey, ADD CONSTRAINT custom_fields_pkey PRIMARY KEY (id);
ALTER TABLE custom_field_options DROP CONSTRAINT custom_field_options_definition_id_value_key,
    ADD CONSTRAINT custom_field_options_definition_id_value_key UNIQUE (definition_id, value),
    DROP CONSTRAINT custom_field_options_pkey, ADD CONSTRAINT custom_field_options_pkey PRIMARY KEY (id);
ALTER TABLE custom_field_definitions DROP CONSTRAINT custom_field_definitions_pkey,
    ADD CONSTRAINT custom_field_definitions_pkey PRIMARY KEY (id);
ALTER TABLE document_containers DROP CONSTRAINT document_containers_pkey,
    ADD CONSTRAINT document_containers_pkey PRIMARY KEY (document_id, container_id);
ALTER TABLE document_shipments DROP CONSTRAINT document_shipments_pkey,
    ADD CONSTRAINT document_shipments_pkey PRIMARY KEY (document_id, shipment_id);
ALTER TABLE document_representations DROP CONSTRAINT document_representations_pkey,
    ADD CONSTRAINT document_representations_pkey PRIMARY KEY (id);
ALTER TABLE documents DROP CONSTRAINT documents_pkey, ADD CONSTRAINT documents_pkey PRIMARY KEY (id);
ALTER TABLE email_submissions DROP CONSTRAINT email_submissions_pkey, ADD CONSTRAINT email_submissions_pkey PRIMARY KEY (id);
ALTER TABLE containers DROP CONSTRAINT containers_pkey, ADD CONSTRAINT containers_pkey PRIMARY KEY (id);
ALTER TABLE shipments DROP CONSTRAINT shipments_pkey, ADD CONSTRAINT shipments_pkey PRIMARY KEY (id);
ALTER TABLE users DROP CONSTRAINT users_account_id_id_key;
CREATE INDEX users_account_id_idx ON users (account_id);

ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE;
ALTER TABLE shipments ADD CONSTRAINT shipments_line_tracking_stopped_by_user_id_fkey
    FOREIGN KEY (line_tracking_stopped_by_user_id) REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE containers ADD CONSTRAINT containers_shipment_id_fkey
    FOREIGN KEY (shipment_id) REFERENCES shipments (id) ON DELETE CASCADE;
ALTER TABLE email_submissions ADD CONSTRAINT email_submissions_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE documents
    ADD CONSTRAINT documents_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL,
    ADD CONSTRAINT documents_email_submission_id_fkey
        FOREIGN KEY (email_submission_id) REFERENCES email_submissions (id) ON DELETE SET NULL,
    ADD CONSTRAINT documents_last_document_representation_id_fkey
        FOREIGN KEY (last_document_representation_id) REFERENCES document_representations (id)
        ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED,
    ADD CONSTRAINT documents_upload_fk FOREIGN KEY (account_id, upload_id) REFERENCES uploads (account_id, id);
ALTER TABLE document_representations ADD CONSTRAINT document_representations_document_id_fkey
    FOREIGN KEY (document_id) REFERENCES documents (id) ON DELETE CASCADE;
ALTER TABLE document_shipments
    ADD CONSTRAINT document_shipments_document_id_fkey FOREIGN KEY (document_id) REFERENCES documents (id) ON DELETE CASCADE,
    ADD CONSTRAINT document_shipments_shipment_id_fkey FOREIGN KEY (shipment_id) REFERENCES shipments (id) ON DELETE CASCADE;
ALTER TABLE document_containers
    ADD CONSTRAINT document_containers_document_id_fkey FOREIGN KEY (document_id) REFERENCES documents (id) ON DELETE CASCADE,
    ADD CONSTRAINT document_containers_container_id_fkey FOREIGN KEY (container_id) REFERENCES containers (id) ON DELETE CASCADE;
ALTER TABLE custom_field_options ADD CONSTRAINT custom_field_options_definition_id_fkey
    FOREIGN KEY (definition_id) REFERENCES custom_field_definitions (id) ON DELETE CASCADE;
ALTER TABLE custom_fields
    ADD CONSTRAINT custom_fields_definition_id_fkey
        FOREIGN KEY (definition_id) REFERENCES custom_field_definitions (id) ON DELETE CASCADE,
    ADD CONSTRAINT custom_fields_shipment_id_fkey FOREIGN KEY (shipment_id) REFERENCES shipments (id) ON DELETE CASCADE,
    ADD CONSTRAINT custom_fields_container_id_fkey FOREIGN KEY (container_id) REFERENCES containers (id) ON DELETE CASCADE;
ALTER TABLE uploads ADD CONSTRAINT uploads_user_id_fkey
    FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE SET NULL;

ALTER TABLE custom_field_options DROP COLUMN account_id;
ALTER TABLE document_containers DROP COLUMN account_id;
ALTER TABLE document_shipments DROP COLUMN account_id;
