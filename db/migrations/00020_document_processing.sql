-- Documents that are processed (issue 28, point 4): a River job per
-- document (package docproc) extracts its text, classifies it, links it
-- to the account's shipments and containers by the numbers in the text and
-- records the extracted fields as a document representation.
--
-- documents.extraction_status is where the processing stands: NULL for a
-- document never processed (records imported without a file), pending
-- while a job will run, extracted or failed after; extraction_error says
-- why it failed (a stable code, then the reason). An UPDATE of documents is
-- logged by the change-log trigger with the changed columns' values, so
-- the status becoming extracted or failed raises document.extracted and
-- document.extraction_failed (webhook/events.go).
--
-- The text lives in document_texts, apart from documents: it is large,
-- and a column of documents would be copied into change_log (old and new
-- values) by every later update of the row. It goes with its document.

-- +goose Up
ALTER TABLE documents
    ADD COLUMN extraction_status text CHECK (extraction_status IN ('pending', 'extracted', 'failed')),
    ADD COLUMN extraction_error text;

CREATE TABLE document_texts (
    account_id   uuid        NOT NULL,
    document_id  uuid        NOT NULL,
    text         text        NOT NULL,
    extractor    text        NOT NULL,
    extracted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (account_id, document_id),
    FOREIGN KEY (account_id, document_id) REFERENCES documents (account_id, id) ON DELETE CASCADE
);
COMMENT ON TABLE document_texts IS 'shipgraph:tenant';

-- +goose Down
DROP TABLE document_texts;
ALTER TABLE documents DROP COLUMN extraction_error, DROP COLUMN extraction_status;
