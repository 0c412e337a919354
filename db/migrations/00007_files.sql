-- +goose Up
-- Document files (issue 16): an upload is a file announced by a direct
-- upload, stored under a random key in the blob store; a document created
-- from it references it. Uploads that no document references are removed
-- by the sweep (Shipgraph's serve loop) a day after they were announced.
CREATE TABLE uploads (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    account_id    uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id       uuid REFERENCES users (id) ON DELETE SET NULL,
    -- The storage key: random, never derived from the file name.
    key           text NOT NULL UNIQUE,
    filename      text NOT NULL,
    content_type  text NOT NULL,
    byte_size     bigint NOT NULL CHECK (byte_size >= 0),
    -- base64 of the MD5 of the bytes, as the client announced it.
    checksum      text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, id)
);
-- The duplicate check: the account's uploads with the same bytes.
CREATE INDEX uploads_account_checksum_idx ON uploads (account_id, checksum, byte_size);
-- The sweep walks uploads by age.
CREATE INDEX uploads_created_idx ON uploads (created_at);

-- A document's file; the key carries the account (tenant keys do), and an
-- upload serves one document at most.
ALTER TABLE documents ADD COLUMN upload_id uuid;
ALTER TABLE documents ADD CONSTRAINT documents_upload_fk
    FOREIGN KEY (account_id, upload_id) REFERENCES uploads (account_id, id);
CREATE UNIQUE INDEX documents_upload_id_idx ON documents (upload_id) WHERE upload_id IS NOT NULL;

-- +goose Down
DROP INDEX documents_upload_id_idx;
ALTER TABLE documents DROP CONSTRAINT documents_upload_fk;
ALTER TABLE documents DROP COLUMN upload_id;
DROP TABLE uploads;
