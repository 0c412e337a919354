// Package docproc processes documents: River jobs, on
// the process's one River client (the tracking engine's, through
// tracking.WithQueue; app wires it), that read a document's file and keep
// what they find with the document, through db.
//
//   - extract.go: the text of a file — a PDF's text layer
//     (github.com/ledongthuc/pdf, pure Go, no network, no model), a PNG's
//     tEXt/zTXt/iTXt chunks, a JPEG's comments, XMP description and EXIF
//     ImageDescription/XPComment, plain text and CSV. A file without text
//     (a scan, a photo) or of another format is a *NoTextError: reading
//     printed text needs an OCR model Shipgraph does not have, and the
//     document is recorded failed saying so (document.extraction_failed).
//   - classify.go: THE table of rules (titles, and field labels of each
//     type's layout) that picks a code of model.DocumentTypes, with notes
//     saying why.
//   - refs.go: bill of lading, booking and ISO 6346 container numbers
//     (check digit: carrier/numbers) that link the document to the
//     account's shipments and containers (db.LinkDocument; links are only
//     added).
//   - fields.go, schemas.go: the fields each type extracts (numbers,
//     parties, places, dates) and their JSON Schema
//     (GET /v2/document_schemas/{type}@2026-03-23), recorded as a document
//     representation.
//   - rotate.go: a real rotation of PNG, JPEG and GIF files, keeping their
//     embedded text.
//   - jobs.go: the job (JobArgs: account, document, step) and the
//     Processor that runs it; the extraction job of an upload is inserted
//     in the transaction that inserts the document (db.CreateDocument's
//     Enqueue), reextract's in the one that makes it pending again. River
//     retries a failing job (MaxAttempts); the last failure is recorded.
//   - samples.go: a typical document of each type, for the tests and the
//     demo data (db/seed).
package docproc
