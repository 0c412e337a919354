-- +goose Up
-- The whole resource model of the seed spec. Reference data (ports, metro
-- areas, terminals, rail terminals, shipping lines) is shared by all
-- accounts; everything else carries account_id and is always read scoped to it.

CREATE TABLE accounts (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    slug         text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9_-]*$'),
    company_name text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email      text NOT NULL UNIQUE,
    first_name text NOT NULL DEFAULT '',
    last_name  text NOT NULL DEFAULT '',
    role       text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_account_id_idx ON users (account_id);

-- API keys are stored as the sha256 of the key, never the key itself. The
-- prefix (first characters) is kept so people can tell keys apart.
CREATE TABLE api_tokens (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id      uuid REFERENCES users (id) ON DELETE CASCADE,
    role         text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    token_sha256 bytea NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
    prefix       text NOT NULL,
    name         text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_account_id_idx ON api_tokens (account_id);
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);

CREATE TABLE ports (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    code         text NOT NULL UNIQUE CHECK (code ~ '^[A-Z]{2}[A-Z0-9]{3}$'),
    name         text NOT NULL,
    city         text,
    state_abbr   text,
    country_code text NOT NULL CHECK (length(country_code) = 2),
    time_zone    text NOT NULL,
    latitude     double precision,
    longitude    double precision,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE metro_areas (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    code         text NOT NULL UNIQUE,
    name         text NOT NULL,
    state_abbr   text,
    country_code text NOT NULL CHECK (length(country_code) = 2),
    time_zone    text NOT NULL,
    latitude     double precision,
    longitude    double precision,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE terminals (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    port_id           uuid NOT NULL REFERENCES ports (id) ON DELETE RESTRICT,
    name              text NOT NULL,
    nickname          text,
    firms_code        text UNIQUE,
    smdg_code         text,
    bic_facility_code text,
    street            text,
    city              text,
    state             text,
    state_abbr        text,
    zip               text,
    country           text,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX terminals_port_id_idx ON terminals (port_id);

CREATE TABLE rail_terminals (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    port_id       uuid REFERENCES ports (id) ON DELETE SET NULL,
    metro_area_id uuid REFERENCES metro_areas (id) ON DELETE SET NULL,
    name          text NOT NULL,
    nickname      text,
    firms_code    text UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rail_terminals_port_id_idx ON rail_terminals (port_id);
CREATE INDEX rail_terminals_metro_area_id_idx ON rail_terminals (metro_area_id);

CREATE TABLE shipping_lines (
    id                                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    scac                              text NOT NULL UNIQUE CHECK (length(scac) = 4),
    name                              text NOT NULL,
    short_name                        text NOT NULL,
    bill_of_lading_prefix             text,
    alternative_scacs                 text[] NOT NULL DEFAULT '{}',
    bill_of_lading_tracking_support   boolean NOT NULL DEFAULT true,
    booking_number_tracking_support   boolean NOT NULL DEFAULT true,
    container_number_tracking_support boolean NOT NULL DEFAULT true,
    created_at                        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE shipments (
    id                              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id                      uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    bill_of_lading_number           text NOT NULL,
    normalized_number               text NOT NULL,
    ref_numbers                     text[],
    tags                            text[] NOT NULL DEFAULT '{}',
    shipping_line_id                uuid REFERENCES shipping_lines (id) ON DELETE SET NULL,
    shipping_line_scac              text NOT NULL,
    shipping_line_name              text NOT NULL,
    shipping_line_short_name        text NOT NULL,
    port_of_lading_id               uuid REFERENCES ports (id) ON DELETE SET NULL,
    port_of_lading_locode           text,
    port_of_lading_name             text,
    port_of_discharge_id            uuid REFERENCES ports (id) ON DELETE SET NULL,
    port_of_discharge_locode        text,
    port_of_discharge_name          text,
    -- destination is a port or a metro area, never both
    destination_port_id             uuid REFERENCES ports (id) ON DELETE SET NULL,
    destination_metro_area_id       uuid REFERENCES metro_areas (id) ON DELETE SET NULL,
    destination_locode              text,
    destination_name                text,
    pod_terminal_id                 uuid REFERENCES terminals (id) ON DELETE SET NULL,
    -- destination terminal is a terminal or a rail terminal, never both
    destination_terminal_id         uuid REFERENCES terminals (id) ON DELETE SET NULL,
    destination_rail_terminal_id    uuid REFERENCES rail_terminals (id) ON DELETE SET NULL,
    customer_name                   text,
    pod_vessel_name                 text,
    pod_vessel_imo                  text,
    pod_voyage_number               text,
    pol_etd_at                      timestamptz,
    pol_atd_at                      timestamptz,
    pod_eta_at                      timestamptz,
    pod_original_eta_at             timestamptz,
    pod_ata_at                      timestamptz,
    destination_eta_at              timestamptz,
    destination_ata_at              timestamptz,
    pol_timezone                    text,
    pod_timezone                    text,
    destination_timezone            text,
    line_tracking_last_attempted_at timestamptz,
    line_tracking_last_succeeded_at timestamptz,
    line_tracking_stopped_at        timestamptz,
    line_tracking_stopped_reason    text CHECK (line_tracking_stopped_reason IN (
        'all_containers_terminated', 'past_arrival_window', 'past_full_out_window',
        'no_updates_at_line', 'cancelled_by_user', 'booking_cancelled')),
    line_tracking_stopped_by_user_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at                      timestamptz NOT NULL DEFAULT now(),
    updated_at                      timestamptz NOT NULL DEFAULT now(),
    CHECK (num_nonnulls(destination_port_id, destination_metro_area_id) <= 1),
    CHECK (num_nonnulls(destination_terminal_id, destination_rail_terminal_id) <= 1)
);
-- Lists are keyset-paginated on (sort column, id) within an account.
CREATE INDEX shipments_account_created_idx ON shipments (account_id, created_at, id);
CREATE INDEX shipments_account_stopped_idx ON shipments (account_id) WHERE line_tracking_stopped_at IS NOT NULL;
-- Nullable sort keys are ordered through coalesce(…, 'infinity') so keyset
-- row comparisons work and unknown dates sort last ascending.
CREATE INDEX shipments_account_eta_idx ON shipments (account_id, coalesce(pod_eta_at, 'infinity'::timestamptz), id);
CREATE INDEX shipments_account_bol_sort_idx ON shipments (account_id, bill_of_lading_number, id);
-- Tracked numbers are matched case-insensitively (upper(col) = upper(input),
-- and prefix search with LIKE on upper(col)), so the indexes are on upper(…).
CREATE INDEX shipments_account_normalized_idx ON shipments (account_id, upper(normalized_number));
CREATE INDEX shipments_account_bol_idx ON shipments (account_id, upper(bill_of_lading_number) text_pattern_ops);
CREATE INDEX shipments_account_scac_idx ON shipments (account_id, shipping_line_scac);
CREATE INDEX shipments_ref_numbers_idx ON shipments USING gin (ref_numbers);
CREATE INDEX shipments_tags_idx ON shipments USING gin (tags);
CREATE INDEX shipments_shipping_line_id_idx ON shipments (shipping_line_id);
CREATE INDEX shipments_port_of_lading_id_idx ON shipments (port_of_lading_id);
CREATE INDEX shipments_port_of_discharge_id_idx ON shipments (port_of_discharge_id);
CREATE INDEX shipments_destination_port_id_idx ON shipments (destination_port_id);
CREATE INDEX shipments_destination_metro_area_id_idx ON shipments (destination_metro_area_id);
CREATE INDEX shipments_pod_terminal_id_idx ON shipments (pod_terminal_id);
CREATE INDEX shipments_destination_terminal_id_idx ON shipments (destination_terminal_id);
CREATE INDEX shipments_destination_rail_terminal_id_idx ON shipments (destination_rail_terminal_id);
CREATE INDEX shipments_line_tracking_stopped_by_user_id_idx ON shipments (line_tracking_stopped_by_user_id);

CREATE TABLE containers (
    id                                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id                        uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    shipment_id                       uuid NOT NULL REFERENCES shipments (id) ON DELETE CASCADE,
    number                            text NOT NULL,
    ref_numbers                       text[] NOT NULL DEFAULT '{}',
    equipment_type                    text CHECK (equipment_type IN ('dry', 'reefer', 'open top', 'flat rack', 'bulk', 'tank')),
    equipment_length                  integer CHECK (equipment_length IN (10, 20, 40, 45)),
    equipment_height                  text CHECK (equipment_height IN ('standard', 'high_cube')),
    weight_in_lbs                     double precision CHECK (weight_in_lbs >= 0),
    seal_number                       text,
    pod_terminal_id                   uuid REFERENCES terminals (id) ON DELETE SET NULL,
    pickup_facility_id                uuid REFERENCES terminals (id) ON DELETE SET NULL,
    pickup_appointment_at             timestamptz,
    availability_known                boolean NOT NULL DEFAULT false,
    available_for_pickup              boolean,
    pod_arrived_at                    timestamptz,
    pod_discharged_at                 timestamptz,
    pod_full_out_at                   timestamptz,
    terminal_checked_at               timestamptz,
    pod_full_out_chassis_number       text,
    location_at_pod_terminal          text,
    final_destination_full_out_at     timestamptz,
    empty_terminated_at               timestamptz,
    -- Holds and fees are small arrays always read with their container:
    -- jsonb keeps them in the same row (no extra statement per page).
    holds_at_pod_terminal             jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(holds_at_pod_terminal) = 'array'),
    fees_at_pod_terminal              jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(fees_at_pod_terminal) = 'array'),
    pod_timezone                      text,
    final_destination_timezone        text,
    empty_terminated_timezone         text,
    pod_rail_carrier_scac             text,
    ind_rail_carrier_scac             text,
    pod_last_tracking_request_at      timestamptz,
    shipment_last_tracking_request_at timestamptz,
    pod_rail_loaded_at                timestamptz,
    pod_rail_departed_at              timestamptz,
    ind_eta_at                        timestamptz,
    ind_ata_at                        timestamptz,
    ind_rail_unloaded_at              timestamptz,
    ind_facility_lfd_on               timestamptz,
    pickup_lfd_terminal               timestamptz,
    pickup_lfd_rail                   timestamptz,
    pickup_lfd_line                   timestamptz,
    -- pickup_lfd coalesces the import deadlines, preferring the line's.
    pickup_lfd                        timestamptz GENERATED ALWAYS AS (coalesce(pickup_lfd_line, pickup_lfd_terminal, pickup_lfd_rail)) STORED,
    has_holds                         boolean GENERATED ALWAYS AS (jsonb_array_length(holds_at_pod_terminal) > 0) STORED,
    current_status                    text NOT NULL DEFAULT 'new' CHECK (current_status IN (
        'new', 'on_ship', 'available', 'not_available', 'grounded', 'on_rail', 'picked_up',
        'off_dock', 'delivered', 'dropped', 'loaded', 'empty_returned', 'awaiting_inland_transfer')),
    created_at                        timestamptz NOT NULL DEFAULT now(),
    updated_at                        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX containers_shipment_id_idx ON containers (shipment_id, created_at, id);
CREATE INDEX containers_account_created_idx ON containers (account_id, created_at, id);
CREATE INDEX containers_account_lfd_idx ON containers (account_id, coalesce(pickup_lfd, 'infinity'::timestamptz), id);
CREATE INDEX containers_account_status_idx ON containers (account_id, current_status);
CREATE INDEX containers_account_number_idx ON containers (account_id, number, id);
CREATE INDEX containers_account_upper_number_idx ON containers (account_id, upper(number));
CREATE INDEX containers_ref_numbers_idx ON containers USING gin (ref_numbers);
CREATE INDEX containers_pod_terminal_id_idx ON containers (pod_terminal_id);
CREATE INDEX containers_pickup_facility_id_idx ON containers (pickup_facility_id);
CREATE INDEX containers_account_holds_idx ON containers (account_id) WHERE has_holds;

CREATE TABLE email_submissions (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id      uuid REFERENCES users (id) ON DELETE SET NULL,
    subject      text,
    body         text,
    body_preview text,
    from_addresses text[] NOT NULL DEFAULT '{}',
    to_addresses   text[] NOT NULL DEFAULT '{}',
    cc_addresses   text[] NOT NULL DEFAULT '{}',
    message_id   text,
    sent_at      timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX email_submissions_account_id_idx ON email_submissions (account_id);
CREATE INDEX email_submissions_user_id_idx ON email_submissions (user_id);

CREATE TABLE documents (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id           uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id              uuid REFERENCES users (id) ON DELETE SET NULL,
    email_submission_id  uuid REFERENCES email_submissions (id) ON DELETE SET NULL,
    last_document_representation_id uuid,
    name                 text NOT NULL,
    document_type        text NOT NULL,
    document_type_manual text,
    classification_notes text,
    source               text NOT NULL CHECK (source IN ('upload', 'api', 'email', 'split_document')),
    file_name            text NOT NULL,
    file_content_type    text,
    file_size_bytes      bigint CHECK (file_size_bytes >= 0),
    -- Full-text filter on the file name: split on separators so
    -- "BL_MAEU123.pdf" matches "maeu123" and "bl".
    file_name_tsv        tsvector GENERATED ALWAYS AS (
        to_tsvector('simple', regexp_replace(lower(file_name), '[^a-z0-9]+', ' ', 'g'))) STORED,
    -- The adding user's "first last" name ('' without a user), kept by the
    -- triggers below: sorting by who added a document must not join and sort
    -- the whole account's documents, so the name lives in the indexed row.
    added_by_name        text NOT NULL DEFAULT '',
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_account_created_idx ON documents (account_id, created_at, id);
CREATE INDEX documents_account_type_idx ON documents (account_id, document_type, id);
-- The type filter matches the manual type too (an OR: both need an index).
CREATE INDEX documents_account_type_manual_idx ON documents (account_id, document_type_manual);
CREATE INDEX documents_user_id_idx ON documents (user_id);
CREATE INDEX documents_email_submission_id_idx ON documents (email_submission_id);
CREATE INDEX documents_last_document_representation_id_idx ON documents (last_document_representation_id);
CREATE INDEX documents_file_name_tsv_idx ON documents USING gin (file_name_tsv);
CREATE INDEX documents_account_added_by_idx ON documents (account_id, added_by_name, id);

-- +goose StatementBegin
CREATE FUNCTION documents_set_added_by_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.added_by_name := coalesce(
        (SELECT btrim(u.first_name || ' ' || u.last_name) FROM users u WHERE u.id = NEW.user_id), '');
    RETURN NEW;
END
$$;
-- +goose StatementEnd
-- Also fires for the ON DELETE SET NULL of a deleted user.
CREATE TRIGGER documents_added_by_name BEFORE INSERT OR UPDATE OF user_id ON documents
    FOR EACH ROW EXECUTE FUNCTION documents_set_added_by_name();

-- +goose StatementBegin
CREATE FUNCTION users_rename_documents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE documents SET added_by_name = btrim(NEW.first_name || ' ' || NEW.last_name)
    WHERE user_id = NEW.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER users_rename_documents AFTER UPDATE OF first_name, last_name ON users
    FOR EACH ROW WHEN (OLD.first_name IS DISTINCT FROM NEW.first_name OR OLD.last_name IS DISTINCT FROM NEW.last_name)
    EXECUTE FUNCTION users_rename_documents();

CREATE TABLE document_representations (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    document_id    uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    schema_version text NOT NULL,
    payload        jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(payload) = 'object'),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX document_representations_document_id_idx ON document_representations (document_id);
CREATE INDEX document_representations_account_id_idx ON document_representations (account_id);
ALTER TABLE documents ADD CONSTRAINT documents_last_document_representation_id_fkey
    FOREIGN KEY (last_document_representation_id) REFERENCES document_representations (id)
    ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED;

CREATE TABLE document_shipments (
    document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    shipment_id uuid NOT NULL REFERENCES shipments (id) ON DELETE CASCADE,
    PRIMARY KEY (document_id, shipment_id)
);
CREATE INDEX document_shipments_shipment_id_idx ON document_shipments (shipment_id);

CREATE TABLE document_containers (
    document_id  uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    container_id uuid NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    PRIMARY KEY (document_id, container_id)
);
CREATE INDEX document_containers_container_id_idx ON document_containers (container_id);

CREATE TABLE custom_field_definitions (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id     uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    entity_type    text NOT NULL CHECK (entity_type IN ('Shipment', 'Container')),
    api_slug       text NOT NULL CHECK (api_slug ~ '^[a-z0-9][a-z0-9_]*$'),
    display_name   text NOT NULL,
    description    text,
    data_type      text NOT NULL CHECK (data_type IN (
        'short_text', 'number', 'date', 'datetime', 'boolean', 'enum', 'enum_multi', 'reference')),
    reference_type text,
    validation     jsonb,
    default_format text,
    default_value  jsonb,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, entity_type, api_slug)
);
CREATE INDEX custom_field_definitions_account_name_idx ON custom_field_definitions (account_id, lower(display_name) text_pattern_ops);
CREATE INDEX custom_field_definitions_account_created_idx ON custom_field_definitions (account_id, created_at, id);
CREATE INDEX custom_field_definitions_account_display_idx ON custom_field_definitions (account_id, display_name, id);

CREATE TABLE custom_field_options (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    definition_id uuid NOT NULL REFERENCES custom_field_definitions (id) ON DELETE CASCADE,
    label         text NOT NULL CHECK (label <> ''),
    value         text NOT NULL CHECK (value <> ''),
    position      integer,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (definition_id, value)
);
CREATE INDEX custom_field_options_definition_position_idx ON custom_field_options (definition_id, position, id);

-- One value per definition and entity. The entity is a shipment or a
-- container; two real foreign keys (exactly one set) keep deletes honest.
CREATE TABLE custom_fields (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    definition_id uuid NOT NULL REFERENCES custom_field_definitions (id) ON DELETE CASCADE,
    shipment_id   uuid REFERENCES shipments (id) ON DELETE CASCADE,
    container_id  uuid REFERENCES containers (id) ON DELETE CASCADE,
    entity_id     uuid GENERATED ALWAYS AS (coalesce(shipment_id, container_id)) STORED,
    value         jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (num_nonnulls(shipment_id, container_id) = 1),
    UNIQUE (definition_id, entity_id)
);
CREATE INDEX custom_fields_entity_id_idx ON custom_fields (entity_id);
CREATE INDEX custom_fields_shipment_id_idx ON custom_fields (shipment_id);
CREATE INDEX custom_fields_container_id_idx ON custom_fields (container_id);
CREATE INDEX custom_fields_account_id_idx ON custom_fields (account_id);

-- +goose Down
DROP TABLE custom_fields, custom_field_options, custom_field_definitions,
    document_containers, document_shipments, document_representations, documents,
    email_submissions, containers, shipments, shipping_lines, rail_terminals,
    terminals, metro_areas, ports, api_tokens, users, accounts CASCADE;
DROP FUNCTION documents_set_added_by_name(), users_rename_documents();
