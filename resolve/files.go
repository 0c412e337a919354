package resolve

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/model"
	"shipgraph/respcache"
)

// Document files: direct uploads, documents created from an
// upload, download URLs and the sweep of uploads no document took. The
// bytes live in r.Files (package files); the records in db.
//
// Error order of CreateUpload: the key may write (403), the input the
// transport could not decode, then the announced file: filename,
// content_type (one of AllowedContentTypes), byte_size (positive; beyond
// the maximum a 413 before any byte is stored), checksum (base64 of an
// MD5).
//
// Error order of CreateDocument: the key may write (403), the decoding
// errors, name, the file (attached_document: a signed id that is
// malformed, tampered with, expired, another account's or already used;
// an upload whose bytes never arrived or differ), the linked shipments and
// containers (404 for one that is not the account's), then a file the
// account already has as a document (409 duplicate_document).

// AllowedContentTypes are the content types a file may have: PDF, images,
// common office formats, plain text and CSV.
var AllowedContentTypes = map[string]bool{
	"application/pdf":          true,
	"image/png":                true,
	"image/jpeg":               true,
	"image/gif":                true,
	"image/webp":               true,
	"image/tiff":               true,
	"image/heic":               true,
	"text/plain":               true,
	"text/csv":                 true,
	"application/msword":       true,
	"application/vnd.ms-excel": true,
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":       true,
	"application/vnd.oasis.opendocument.text":                                 true,
	"application/vnd.oasis.opendocument.spreadsheet":                          true,
}

// CreateUpload is a direct upload's announcement of a file.
type CreateUpload struct {
	Filename    string
	ContentType string
	ByteSize    int64
	Checksum    string
	Invalid     error
}

// DirectUpload is the answer to CreateUpload: the recorded upload, its
// signed id and where (with which headers) the client PUTs the bytes.
type DirectUpload struct {
	Upload   *model.Upload
	SignedID string
	URL      string
	Headers  map[string]string
}

func (r *Resolver) files() (*files.Store, error) {
	if r.Files == nil {
		return nil, model.Errorf(model.EUNAVAILABLE, "this server stores no files")
	}
	return r.Files, nil
}

// CreateUpload records an announced upload and signs its upload URL.
func (r *Resolver) CreateUpload(ctx context.Context, p *model.Principal, c CreateUpload) (*DirectUpload, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, err := mayWrite(p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	fs, err := r.files()
	if err != nil {
		return nil, err
	}
	if err := checkFile(fs, c.Filename, c.ContentType, c.ByteSize); err != nil {
		return nil, err
	}
	if sum, err := base64.StdEncoding.DecodeString(c.Checksum); err != nil || len(sum) != 16 {
		return nil, invalidField("checksum", "checksum must be the base64 of the MD5 of the file's bytes")
	}
	u, err := r.DB.CreateUpload(ctx, model.Upload{
		AccountID: p.AccountID, UserID: p.UserID, Key: files.NewKey(),
		Filename: c.Filename, ContentType: c.ContentType, ByteSize: c.ByteSize, Checksum: c.Checksum,
	})
	if err != nil {
		return nil, err
	}
	link, headers, err := fs.UploadURL(ctx, files.Upload{Key: u.Key, ContentType: u.ContentType, ByteSize: u.ByteSize, Checksum: u.Checksum})
	if err != nil {
		return nil, err
	}
	return &DirectUpload{Upload: u, SignedID: fs.SignID(u.ID, time.Now()), URL: link, Headers: headers}, nil
}

// checkFile applies the rules of a file's name, type and size.
func checkFile(fs *files.Store, filename, contentType string, size int64) error {
	if strings.TrimSpace(filename) == "" || len(filename) > 255 || !utf8.ValidString(filename) || strings.ContainsAny(filename, "\x00\r\n") {
		return invalidField("filename", "filename must be 1 to 255 characters of one line")
	}
	if !AllowedContentTypes[contentType] {
		return invalidField("content_type", "content_type %q is not accepted: PDF, images (PNG, JPEG, GIF, WebP, TIFF, HEIC), Word, Excel, OpenDocument, plain text or CSV", contentType)
	}
	if size <= 0 {
		return invalidField("byte_size", "byte_size must be a positive number of bytes")
	}
	if size > fs.MaxSize() {
		return model.Errorf(model.ETOOLARGE, "the file has %d bytes; the largest accepted is %d", size, fs.MaxSize()).AtField("byte_size")
	}
	return nil
}

// NewFile is a file whose bytes come with the request (GraphQL's
// multipart upload) rather than from a direct upload.
type NewFile struct {
	Filename    string
	ContentType string
	Size        int64
	Body        io.Reader
}

// CreateDocument creates a document from an uploaded file.
type CreateDocument struct {
	Name string
	// SignedID is a direct upload's signed id; File the bytes themselves.
	// Exactly one is given.
	SignedID     string
	File         *NewFile
	ShipmentIDs  []string
	ContainerIDs []string
	Invalid      error
}

// CreateDocument runs c and returns the new document (source api).
func (r *Resolver) CreateDocument(ctx context.Context, p *model.Principal, c CreateDocument) (*model.Document, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	name := strings.TrimSpace(c.Name)
	if name == "" || len(name) > 255 {
		return nil, invalidField("name", "name must be 1 to 255 characters")
	}
	fs, err := r.files()
	if err != nil {
		return nil, err
	}
	var u *model.Upload
	switch {
	case c.File != nil && c.SignedID != "":
		return nil, invalidField("attached_document", "give either a signed id or a file, not both")
	case c.File != nil:
		if u, err = r.storeFile(ctx, fs, p, c.File); err != nil {
			return nil, err
		}
	default:
		if u, err = r.uploadOf(ctx, fs, p, c.SignedID); err != nil {
			return nil, err
		}
	}
	// From here on, a failure leaves an upload no document uses: the
	// sweep removes it (and at once for a file of this request).
	fail := func(err error) (*model.Document, error) {
		if c.File != nil {
			r.removeUpload(context.WithoutCancel(ctx), fs, u)
		}
		return nil, err
	}
	for _, id := range c.ShipmentIDs {
		s, err := loadByID(ctx, l.ShipmentByID, model.NormalizeID(id))
		if err != nil {
			return fail(err)
		} else if s == nil {
			return fail(model.NotFound("shipment"))
		}
	}
	for _, id := range c.ContainerIDs {
		s, err := loadByID(ctx, l.ContainerByID, model.NormalizeID(id))
		if err != nil {
			return fail(err)
		} else if s == nil {
			return fail(model.NotFound("container"))
		}
	}
	dupID, dupName, err := r.DB.DocumentWithFile(ctx, p.AccountID, u.Checksum, u.ByteSize)
	if err != nil {
		return fail(err)
	}
	if dupID != "" {
		return fail(model.DuplicateDocument(dupID, dupName))
	}
	d, err := r.DB.CreateDocument(ctx, db.NewDocument{
		AccountID: p.AccountID, UserID: p.UserID, Name: name, DocumentType: "other", Source: "api",
		Upload: u, ShipmentIDs: normalizeIDs(c.ShipmentIDs), ContainerIDs: normalizeIDs(c.ContainerIDs),
		Enqueue: r.enqueueExtraction(p),
	})
	if model.ErrorCode(err) == model.ECONFLICT {
		// Another request took the upload first.
		return fail(invalidField("attached_document", "attached_document was already used"))
	} else if err != nil {
		return fail(err)
	}
	l.DocumentByID.Prime(d.ID, d)
	l.DocumentsByShipmentID.ClearAll()
	l.DocumentsByContainerID.ClearAll()
	return d, nil
}

func normalizeIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = model.NormalizeID(id)
	}
	return out
}

// uploadOf returns the unused upload of a signed id, its bytes checked.
func (r *Resolver) uploadOf(ctx context.Context, fs *files.Store, p *model.Principal, signed string) (*model.Upload, error) {
	bad := func(why string) error {
		return invalidField("attached_document", "attached_document %s", why)
	}
	if signed == "" {
		return nil, bad("is required: the signed_id of a direct upload")
	}
	id, ok := fs.VerifyID(signed, time.Now())
	if !ok {
		return nil, bad("is not a valid signed id (unknown, tampered with or expired)")
	}
	u, err := r.DB.UnusedUpload(ctx, p.AccountID, id)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, bad("is unknown or was already used")
	}
	if err := fs.Check(ctx, u.Key, u.ByteSize, u.Checksum); errors.Is(err, files.ErrMismatch) {
		return nil, bad("has no uploaded file, or the uploaded bytes differ from the announced ones")
	} else if err != nil {
		return nil, err
	}
	return u, nil
}

// storeFile writes a request's file under a new key and records it as an
// upload; a failure keeps nothing.
func (r *Resolver) storeFile(ctx context.Context, fs *files.Store, p *model.Principal, f *NewFile) (*model.Upload, error) {
	if err := checkFile(fs, f.Filename, f.ContentType, f.Size); err != nil {
		return nil, err
	}
	key := files.NewKey()
	sum, err := fs.Write(ctx, key, f.ContentType, f.Size, f.Body)
	if err != nil {
		return nil, err
	}
	u, err := r.DB.CreateUpload(ctx, model.Upload{
		AccountID: p.AccountID, UserID: p.UserID, Key: key,
		Filename: f.Filename, ContentType: f.ContentType, ByteSize: f.Size, Checksum: sum,
	})
	if err != nil {
		_ = fs.Delete(context.WithoutCancel(ctx), key)
		return nil, err
	}
	return u, nil
}

// removeUpload deletes an upload's file, then its record (best effort: the
// sweep retries what fails).
func (r *Resolver) removeUpload(ctx context.Context, fs *files.Store, u *model.Upload) {
	if err := fs.Delete(ctx, u.Key); err != nil {
		slog.WarnContext(ctx, "file not removed; the sweep retries", "upload", u.ID, "err", err)
		return
	}
	if _, err := r.DB.DeleteUpload(ctx, u.AccountID, u.ID); err != nil {
		slog.WarnContext(ctx, "upload record not removed; the sweep retries", "upload", u.ID, "err", err)
	}
}

// DownloadURL returns the signed download URL of a document's file: not
// found for another account's document, and for one that has no file.
func (r *Resolver) DownloadURL(ctx context.Context, p *model.Principal, documentID string) (string, error) {
	p, l, err := principal(ctx, p)
	if err != nil {
		return "", err
	}
	d, err := loadByID(ctx, l.DocumentByID, documentID)
	if err != nil {
		return "", err
	}
	if d == nil {
		return "", model.NotFound("document")
	}
	u, err := r.DB.DocumentFile(ctx, p.AccountID, d.ID)
	if err != nil {
		return "", err
	}
	return r.downloadURL(ctx, d, u)
}

func (r *Resolver) downloadURL(ctx context.Context, d *model.Document, u *model.Upload) (string, error) {
	if u == nil {
		return "", model.Errorf(model.ENOTFOUND, "document %s has no file: its record was imported without one", d.ID)
	}
	fs, err := r.files()
	if err != nil {
		return "", err
	}
	respcache.NoStore(ctx) // the URL expires: the answer is not a function of the data
	return fs.DownloadURL(ctx, u.Key, u.ContentType, u.Filename)
}

// DownloadURLs returns the download URLs of the account's documents (by
// document id; documents without a file are absent), in one statement.
func (r *Resolver) DownloadURLs(ctx context.Context, p *model.Principal, docs []*model.Document) (map[string]string, error) {
	p, err := authenticated(p)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	ups, err := r.DB.DocumentFiles(ctx, p.AccountID, ids)
	if err != nil || len(ups) == 0 {
		return nil, err
	}
	fs, err := r.files()
	if err != nil {
		return nil, err
	}
	respcache.NoStore(ctx) // the URLs expire
	out := make(map[string]string, len(ups))
	for id, u := range ups {
		link, err := fs.DownloadURL(ctx, u.Key, u.ContentType, u.Filename)
		if err != nil {
			return nil, err
		}
		out[id] = link
	}
	return out, nil
}

// SweepUploads removes uploads no document took within the upload
// lifetime and an hour (their signed ids expired by then), and files of deleted documents a removal missed): their files,
// then their records. It returns how many it removed.
func (r *Resolver) SweepUploads(ctx context.Context, now time.Time) (int, error) {
	fs, err := r.files()
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		stale, err := r.DB.StaleUploads(ctx, now.Add(-fs.UploadLifetime()-time.Hour), 500)
		if err != nil {
			return n, err
		}
		for i := range stale {
			u := &stale[i]
			if err := fs.Delete(ctx, u.Key); err != nil {
				return n, err
			}
			if ok, err := r.DB.DeleteUpload(ctx, u.AccountID, u.ID); err != nil {
				return n, err
			} else if ok {
				n++
			}
		}
		if len(stale) < 500 {
			return n, nil
		}
	}
}
