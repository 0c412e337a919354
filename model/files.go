package model

import "time"

// ETOOLARGE is the code of a file beyond the maximum size (/v2: 413).
const ETOOLARGE = "too_large"

// Upload is a file announced by a direct upload: its bytes live
// in the blob store under Key, a random storage key; Filename is display
// data only. A document created from it references it.
type Upload struct {
	ID          string    `db:"id"`
	AccountID   string    `db:"account_id"`
	UserID      *string   `db:"user_id"`
	Key         string    `db:"key"`
	Filename    string    `db:"filename"`
	ContentType string    `db:"content_type"`
	ByteSize    int64     `db:"byte_size"`
	Checksum    string    `db:"checksum"`
	CreatedAt   time.Time `db:"created_at"`
}

// DuplicateDocumentError is the conflict of a document created from a file
// the account already has as a document: /v2 answers 409 with code
// duplicate_document and the existing document in meta.
type DuplicateDocumentError struct {
	Err          *Error
	ExistingID   string
	ExistingName string
}

func (e *DuplicateDocumentError) Error() string { return e.Err.Error() }

// Unwrap returns the coded error (ECONFLICT).
func (e *DuplicateDocumentError) Unwrap() error { return e.Err }

// DuplicateDocument returns the conflict naming the existing document.
func DuplicateDocument(id, name string) *DuplicateDocumentError {
	return &DuplicateDocumentError{
		Err:          Errorf(ECONFLICT, "this file was already uploaded as document %s (%s)", id, name),
		ExistingID:   id,
		ExistingName: name,
	}
}
