package files

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // s3:// bucket URLs
	"gocloud.dev/gcerrors"
)

// Config configures a Store. Start from DefaultConfig.
type Config struct {
	// URL is the bucket URL (gocloud.dev/blob): empty means fileblob under
	// Dir; file:///path is fileblob there; s3://bucket?endpoint=…&region=…
	// (or any other registered scheme) is a store that presigns its own URLs.
	URL string
	// Dir is the directory of the default fileblob bucket.
	Dir string
	// Secret signs Shipgraph's own URLs and the signed ids of uploads; at
	// least 32 bytes.
	Secret []byte
	// MaxSize is the largest file in bytes.
	MaxSize int64
	// UploadTTL is how long a direct-upload URL stays valid.
	UploadTTL time.Duration
	// DownloadTTL is how long a download URL stays valid.
	DownloadTTL time.Duration
	// UploadLifetime is how long an upload may wait to become a document:
	// its signed id expires then, and the sweep removes it after.
	UploadLifetime time.Duration
	// PublicBaseURL is the scheme and host of Shipgraph's own URLs; empty
	// takes them from the request (WithBaseURL).
	PublicBaseURL string
}

// DefaultConfig holds the defaults: 50 MB files, 10-minute upload URLs,
// 5-minute download URLs, uploads that live a day.
var DefaultConfig = Config{
	MaxSize:        50 << 20,
	UploadTTL:      10 * time.Minute,
	DownloadTTL:    5 * time.Minute,
	UploadLifetime: 24 * time.Hour,
}

// Prefix is the path under which Handler serves Shipgraph's signed URLs.
const Prefix = "/files/"

// Store is the file store: one bucket and the signing secret.
type Store struct {
	bucket  *blob.Bucket
	local   bool
	cfg     Config
	secret  []byte
	handler http.Handler
}

// Open opens the bucket of c.
func Open(ctx context.Context, c Config) (*Store, error) {
	if len(c.Secret) < 32 {
		return nil, errors.New("files: the signing secret must have at least 32 bytes")
	}
	d := DefaultConfig
	if c.MaxSize <= 0 {
		c.MaxSize = d.MaxSize
	}
	// Zero takes the default; a negative duration signs URLs and ids that
	// are expired already (tests).
	if c.UploadTTL == 0 {
		c.UploadTTL = d.UploadTTL
	}
	if c.DownloadTTL == 0 {
		c.DownloadTTL = d.DownloadTTL
	}
	if c.UploadLifetime == 0 {
		c.UploadLifetime = d.UploadLifetime
	}
	s := &Store{cfg: c, secret: c.Secret}
	var err error
	switch {
	case c.URL == "" || strings.HasPrefix(c.URL, "file://"):
		dir := c.Dir
		if c.URL != "" {
			u, perr := url.Parse(c.URL)
			if perr != nil {
				return nil, fmt.Errorf("files: BLOB_URL: %w", perr)
			}
			dir = u.Path
		}
		if dir == "" {
			return nil, errors.New("files: no directory for the local store")
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		s.bucket, err = fileblob.OpenBucket(dir, &fileblob.Options{CreateDir: true, NoTempDir: true})
		s.local = true
	default:
		s.bucket, err = blob.OpenBucket(ctx, c.URL)
	}
	if err != nil {
		return nil, fmt.Errorf("files: open bucket: %w", err)
	}
	s.handler = s.newHandler()
	return s, nil
}

// Close closes the bucket.
func (s *Store) Close() error { return s.bucket.Close() }

// MaxSize is the largest file in bytes.
func (s *Store) MaxSize() int64 { return s.cfg.MaxSize }

// UploadLifetime is how long an upload may wait to become a document.
func (s *Store) UploadLifetime() time.Duration { return s.cfg.UploadLifetime }

// Local reports whether Shipgraph serves the file URLs itself.
func (s *Store) Local() bool { return s.local }

// NewKey returns a fresh random storage key.
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "uploads/" + h[:2] + "/" + h
}

// Upload is what a client announced about a file it will upload.
type Upload struct {
	Key         string
	ContentType string
	ByteSize    int64
	// Checksum is the base64 of the MD5 of the bytes.
	Checksum string
}

// UploadURL returns the signed URL the client PUTs the bytes to and the
// headers it must send with them.
func (s *Store) UploadURL(ctx context.Context, u Upload) (string, map[string]string, error) {
	headers := map[string]string{"Content-Type": u.ContentType, "Content-MD5": u.Checksum}
	if s.local {
		q := url.Values{}
		q.Set("k", u.Key)
		q.Set("t", u.ContentType)
		q.Set("s", strconv.FormatInt(u.ByteSize, 10))
		q.Set("m", u.Checksum)
		return s.signed(ctx, http.MethodPut, "upload", q, s.cfg.UploadTTL), headers, nil
	}
	md5 := u.Checksum
	ct := u.ContentType
	size := u.ByteSize
	link, err := s.bucket.SignedURL(ctx, u.Key, &blob.SignedURLOptions{
		Expiry: s.cfg.UploadTTL,
		Method: http.MethodPut,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.PutObjectInput
			if as(&in) {
				in.ContentMD5 = aws.String(md5)
				in.ContentType = aws.String(ct)
				in.ContentLength = aws.Int64(size)
			}
			return nil
		},
	})
	return link, headers, err
}

// DownloadURL returns a signed URL serving the object key with the given
// content type, as an attachment named filename.
func (s *Store) DownloadURL(ctx context.Context, key, contentType, filename string) (string, error) {
	disposition := Disposition(filename)
	if s.local {
		q := url.Values{}
		q.Set("k", key)
		q.Set("t", contentType)
		q.Set("n", filename)
		return s.signed(ctx, http.MethodGet, "download", q, s.cfg.DownloadTTL), nil
	}
	return s.bucket.SignedURL(ctx, key, &blob.SignedURLOptions{
		Expiry: s.cfg.DownloadTTL,
		Method: http.MethodGet,
		BeforeSign: func(as func(any) bool) error {
			var in *s3.GetObjectInput
			if as(&in) {
				in.ResponseContentType = aws.String(contentType)
				in.ResponseContentDisposition = aws.String(disposition)
			}
			return nil
		},
	})
}

// Disposition is the Content-Disposition of a download named filename
// (RFC 6266; a non-ASCII name goes in filename*).
func Disposition(filename string) string {
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": filename}); v != "" {
		return v
	}
	return "attachment"
}

// ErrMismatch is Check's error when the stored object is missing or is
// not the announced file.
var ErrMismatch = errors.New("files: the stored file is missing or differs from the announced one")

// Check verifies that the object key exists with the announced size and
// MD5 (base64), as the store reports them.
func (s *Store) Check(ctx context.Context, key string, size int64, checksum string) error {
	a, err := s.bucket.Attributes(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return ErrMismatch
	} else if err != nil {
		return err
	}
	if a.Size != size {
		return ErrMismatch
	}
	if len(a.MD5) > 0 && base64.StdEncoding.EncodeToString(a.MD5) != checksum {
		return ErrMismatch
	}
	return nil
}

// Delete removes the object key; a missing one is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.bucket.Delete(ctx, key)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil
	}
	return err
}

// Put writes data under key (the demo seeder's and tests' way in).
func (s *Store) Put(ctx context.Context, key, contentType string, data []byte) error {
	return s.bucket.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: contentType})
}

// Signed ids: base64url(16-byte id, 8-byte expiry) "--" base64url(mac).

// SignID returns the signed id of the upload id (a UUID), valid for the
// upload lifetime.
func (s *Store) SignID(id string, now time.Time) string {
	raw, ok := uuidBytes(id)
	if !ok {
		return ""
	}
	var b [24]byte
	copy(b[:], raw[:])
	binary.BigEndian.PutUint64(b[16:], uint64(now.Add(s.cfg.UploadLifetime).Unix()))
	body := base64.RawURLEncoding.EncodeToString(b[:])
	return body + "--" + base64.RawURLEncoding.EncodeToString(s.mac("id", body)[:20])
}

// VerifyID returns the upload id of a signed id, or false when it is
// malformed, tampered with or expired.
func (s *Store) VerifyID(signed string, now time.Time) (string, bool) {
	// The body is 24 bytes in unpadded base64url, 32 characters, which
	// may themselves hold "--": split by position, not by the separator.
	const bodyLen = 32
	if len(signed) < bodyLen+2 || signed[bodyLen:bodyLen+2] != "--" {
		return "", false
	}
	body, sig := signed[:bodyLen], signed[bodyLen+2:]
	got, err := base64.RawURLEncoding.Strict().DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("id", body)[:20]) {
		return "", false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(body)
	if err != nil || len(b) != 24 {
		return "", false
	}
	if now.Unix() > int64(binary.BigEndian.Uint64(b[16:])) {
		return "", false
	}
	h := hex.EncodeToString(b[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

func uuidBytes(id string) ([16]byte, bool) {
	var out [16]byte
	h := strings.ReplaceAll(id, "-", "")
	if len(h) != 32 {
		return out, false
	}
	if _, err := hex.Decode(out[:], []byte(h)); err != nil {
		return out, false
	}
	return out, true
}

func (s *Store) mac(purpose, msg string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// signed returns Shipgraph's own signed URL of op with the parameters q:
// the signature covers the method, op, every parameter and the expiry.
func (s *Store) signed(ctx context.Context, method, op string, q url.Values, ttl time.Duration) string {
	q.Set("e", strconv.FormatInt(time.Now().Add(ttl).Unix(), 10))
	q.Set("sig", hex.EncodeToString(s.mac(method+" "+op, q.Encode())))
	return baseURL(ctx, s.cfg.PublicBaseURL) + Prefix + op + "?" + q.Encode()
}

// verify checks the signature and expiry of a signed request.
func (s *Store) verify(method, op string, q url.Values, now time.Time) bool {
	sig, err := hex.DecodeString(q.Get("sig"))
	if err != nil || len(q["sig"]) != 1 {
		return false
	}
	rest := url.Values{}
	for k, v := range q {
		if k != "sig" {
			rest[k] = v
		}
	}
	if !hmac.Equal(sig, s.mac(method+" "+op, rest.Encode())) {
		return false
	}
	exp, err := strconv.ParseInt(q.Get("e"), 10, 64)
	return err == nil && now.Unix() <= exp
}

type baseKey struct{}

// WithBaseURL returns ctx carrying the scheme and host of the request, for
// the absolute URLs of a store with no PublicBaseURL.
func WithBaseURL(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, baseKey{}, strings.TrimRight(base, "/"))
}

// RequestBaseURL is scheme://host of r (X-Forwarded-Proto honoured).
func RequestBaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := strings.ToLower(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}

func baseURL(ctx context.Context, public string) string {
	if public != "" {
		return strings.TrimRight(public, "/")
	}
	v, _ := ctx.Value(baseKey{}).(string)
	return v
}

// LoadSecret reads the signing secret from path, creating a random one
// (0600) the first time.
func LoadSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	return b, nil
}

// Write streams exactly size bytes of body into the bucket under key and
// returns the base64 MD5 of them; a body of another size keeps nothing.
func (s *Store) Write(ctx context.Context, key, contentType string, size int64, body io.Reader) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.bucket.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
	if err != nil {
		return "", err
	}
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(body, size+1))
	if err != nil || n != size {
		cancel()
		_ = w.Close()
		if err == nil {
			err = ErrMismatch
		}
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// Read returns the bytes stored under key, refusing more than the largest
// accepted file (the document processing jobs' way in).
func (s *Store) Read(ctx context.Context, key string) ([]byte, error) {
	r, err := s.bucket.NewReader(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, s.cfg.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > s.cfg.MaxSize {
		return nil, ErrMismatch
	}
	return b, nil
}
