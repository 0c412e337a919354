package datasync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"

	"shipgraph/datasync/parquetfile"
	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/netguard"
)

// An object-store destination: a prefix of a bucket (gocloud.dev/blob
// URLs as BLOB_URL takes them) that receives, per table and per batch, a
// Parquet file and a manifest:
//
//	<prefix>/<table>/<position, 20 digits>-<b|f>[-<key>].parquet
//	<prefix>/<table>/<same name>.manifest.json
//	<prefix>/_transfer_status/<table>.parquet
//
// Every row carries _position, the change-log position its values are at
// least as recent as, and _deleted (a deleted key: the other columns are
// null), so that a reader keeps, per key, the row of the largest
// _position. A batch's name is a function of where it starts in the log
// (or, in a backfill, after which key): a batch written again after a
// crash replaces its first copy instead of adding a second.

// Columns every Parquet row carries besides the table's.
const (
	colPosition = "_position"
	colDeleted  = "_deleted"
)

// objectURL is an object-store destination's URL, parsed.
type objectURL struct {
	scheme string // s3 or file
	bucket string // s3: the bucket; file: the directory
	prefix string // "" or ending in /
	// s3 only
	access, secret, region, endpoint string
	pathStyle                        bool
}

// parseObjectURL reads s3://ACCESS_KEY:SECRET@bucket/prefix?region=…&
// endpoint=…&use_path_style=true&disable_https=true (prefix= works too, as
// in BLOB_URL) or file:///directory.
func parseObjectURL(raw string) (*objectURL, error) {
	bad := func(format string, args ...any) error {
		return model.Errorf(model.EINVALID, format, args...).AtField("url")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, bad("url must be s3://ACCESS_KEY:SECRET@bucket/prefix?region=… or file:///directory")
	}
	q := u.Query()
	o := &objectURL{scheme: u.Scheme}
	prefix := strings.Trim(q.Get("prefix"), "/")
	switch u.Scheme {
	case "s3":
		o.bucket = u.Host
		if o.bucket == "" {
			return nil, bad("url must name a bucket: s3://ACCESS_KEY:SECRET@bucket/prefix")
		}
		if p := strings.Trim(u.Path, "/"); p != "" {
			prefix = strings.Trim(p+"/"+prefix, "/")
		}
		if u.User == nil {
			return nil, bad("url must carry the bucket's credentials: s3://ACCESS_KEY:SECRET@bucket")
		}
		o.access = u.User.Username()
		o.secret, _ = u.User.Password()
		if o.access == "" || o.secret == "" {
			return nil, bad("url must carry the bucket's credentials: s3://ACCESS_KEY:SECRET@bucket")
		}
		o.region = q.Get("region")
		if o.region == "" {
			o.region = "us-east-1"
		}
		o.pathStyle = q.Get("use_path_style") == "true"
		if ep := q.Get("endpoint"); ep != "" {
			if !strings.Contains(ep, "://") {
				if q.Get("disable_https") == "true" {
					ep = "http://" + ep
				} else {
					ep = "https://" + ep
				}
			}
			e, err := url.Parse(ep)
			if err != nil || e.Host == "" || (e.Scheme != "http" && e.Scheme != "https") {
				return nil, bad("endpoint must be host:port or http(s)://host:port")
			}
			o.endpoint = e.Scheme + "://" + e.Host
		}
	case "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, bad("a file url is file:///absolute/directory")
		}
		o.bucket = u.Path
	default:
		return nil, bad("an object_store url is s3://ACCESS_KEY:SECRET@bucket/prefix?region=… (or file:///directory for local demos)")
	}
	if prefix != "" {
		o.prefix = prefix + "/"
	}
	return o, nil
}

// host is the address the destination's connections go to ("" for AWS's
// own endpoints, which are public).
func (o *objectURL) host() string {
	if o.endpoint == "" {
		return ""
	}
	u, _ := url.Parse(o.endpoint)
	return u.Hostname()
}

// display is the URL without the secret.
func (o *objectURL) display() string {
	if o.scheme == "file" {
		return "file://" + o.bucket + "/" + strings.TrimSuffix(o.prefix, "/")
	}
	u := url.URL{Scheme: "s3", User: url.User(o.access), Host: o.bucket, Path: "/" + strings.TrimSuffix(o.prefix, "/")}
	q := url.Values{"region": {o.region}}
	if o.endpoint != "" {
		q.Set("endpoint", o.endpoint)
	}
	if o.pathStyle {
		q.Set("use_path_style", "true")
	}
	u.RawQuery = q.Encode()
	return strings.TrimSuffix(u.String(), "/")
}

// checkObjectStore checks a new object-store destination's URL: its
// endpoint's host passes the webhook address rule, and a directory of
// the server (file://) is only for local demos and tests (private
// addresses allowed).
func (s *Syncer) checkObjectStore(ctx context.Context, raw string) (string, error) {
	o, err := parseObjectURL(raw)
	if err != nil {
		return "", err
	}
	if !s.c.AllowPrivate {
		if o.scheme == "file" {
			return "", model.Errorf(model.EINVALID, "file:// destinations write to the server's own disk: only for local demos (WEBHOOK_ALLOW_PRIVATE_URLS)").AtField("url")
		}
		if h := o.host(); h != "" {
			if err := checkHost(ctx, h); err != nil {
				return "", err
			}
		}
	}
	return o.display(), nil
}

// An S3 upload's buffers. The transfer manager's defaults hold up to six
// 8 MiB parts per upload (five in flight and one filling) after a first
// read of up to 16 MiB (io.ReadAll, which copies as it grows): about
// 100 MiB of heap once a file passes 16 MiB, as a backfill file of 100
// pages does, and per destination being copied. One part of S3's smallest
// size, uploaded while the next fills, holds a file's upload to about
// 15 MiB whatever the file's size.
const (
	uploadPartBytes = 5 << 20
	uploadParts     = 1
)

// openBucket opens the destination's bucket under its prefix. Its
// connections pass netguard's Control (after DNS) unless private
// addresses are allowed. beforeWrite, for an S3 bucket, bounds an
// upload's buffers (WriterOptions.BeforeWrite of a file's writer).
func (o *objectURL) openBucket(ctx context.Context, allowPrivate bool) (b *blob.Bucket, beforeWrite func(func(any) bool) error, err error) {
	switch o.scheme {
	case "file":
		if err := os.MkdirAll(o.bucket, 0o700); err != nil {
			return nil, nil, err
		}
		b, err = fileblob.OpenBucket(o.bucket, &fileblob.Options{CreateDir: true})
	case "s3":
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		if !allowPrivate {
			dialer.Control = netguard.Control
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = dialer.DialContext
		tr.Proxy = nil
		opts := s3.Options{
			Region:       o.region,
			UsePathStyle: o.pathStyle,
			HTTPClient:   &http.Client{Transport: tr},
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: o.access, SecretAccessKey: o.secret}, nil
			}),
		}
		if o.endpoint != "" {
			opts.BaseEndpoint = aws.String(o.endpoint)
		}
		client := s3.New(opts)
		b, err = s3blob.OpenBucket(ctx, client, o.bucket, nil)
		// s3blob makes each writer's transfer manager from the buffer
		// size and concurrency of WriterOptions but leaves the first
		// read's 16 MiB threshold as it is; its BeforeWrite hands out the
		// writer's manager, replaced here by one of bounded buffers (the
		// checksum setting left unset as s3blob leaves it without options).
		// Were the hook to stop handing it out, TestObjectStoreUploadBounded
		// fails.
		beforeWrite = func(as func(any) bool) error {
			var tm *transfermanager.Client
			if as(&tm) && tm != nil {
				*tm = *transfermanager.New(client, func(opt *transfermanager.Options) {
					opt.PartSizeBytes = uploadPartBytes
					opt.MultipartUploadThreshold = uploadPartBytes
					opt.Concurrency = uploadParts
				})
			}
			return nil
		}
	default:
		return nil, nil, fmt.Errorf("datasync: object store scheme %q", o.scheme)
	}
	if err != nil {
		return nil, nil, err
	}
	if o.prefix != "" {
		b = blob.PrefixedBucket(b, o.prefix)
	}
	return b, beforeWrite, nil
}

// objectTarget writes Parquet batches to a bucket.
type objectTarget struct {
	b *blob.Bucket
	// beforeWrite bounds the buffers of a file's upload (nil: none to
	// bound).
	beforeWrite func(func(any) bool) error
}

func openObjectTarget(ctx context.Context, raw string, allowPrivate bool) (*objectTarget, error) {
	o, err := parseObjectURL(raw)
	if err != nil {
		return nil, err
	}
	if o.scheme == "file" && !allowPrivate {
		return nil, errors.New("datasync: file:// destinations need WEBHOOK_ALLOW_PRIVATE_URLS")
	}
	b, beforeWrite, err := o.openBucket(ctx, allowPrivate)
	if err != nil {
		return nil, err
	}
	return &objectTarget{b: b, beforeWrite: beforeWrite}, nil
}

func (t *objectTarget) Close() error { return t.b.Close() }

// Prepare has nothing to make: objects need no table.
func (t *objectTarget) Prepare(context.Context, []*db.SyncTable) error { return nil }

// Reset removes the table's files (a copy from scratch starts): a key
// deleted since the last copy must not survive in an older file.
func (t *objectTarget) Reset(ctx context.Context, tb *db.SyncTable) error {
	it := t.b.List(&blob.ListOptions{Prefix: tb.Name + "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if err := t.b.Delete(ctx, obj.Key); err != nil {
			return err
		}
	}
	return nil
}

// parquetColumns are the table's Parquet columns: its columns in their
// order, all optional (a deleted key's row has only its key), then
// _position and _deleted.
func parquetColumns(tb *db.SyncTable) []parquetfile.Column {
	cols := make([]parquetfile.Column, 0, len(tb.Columns)+2)
	for _, c := range tb.Columns {
		k := parquetfile.String
		switch c.Type {
		case "timestamp":
			k = parquetfile.Timestamp
		case "integer", "bigint":
			k = parquetfile.Int64
		}
		cols = append(cols, parquetfile.Column{Name: c.Name, Kind: k, Optional: true})
	}
	return append(cols,
		parquetfile.Column{Name: colPosition, Kind: parquetfile.Int64},
		parquetfile.Column{Name: colDeleted, Kind: parquetfile.Bool})
}

// batchFile streams one batch of a table into one Parquet object: each
// Write is a row group, so memory holds one page whatever the batch's size.
type batchFile struct {
	t      *objectTarget
	tb     *db.SyncTable
	name   string
	pos    int64
	cancel context.CancelFunc
	out    *blob.Writer
	pw     *parquetfile.Writer
	rows   int
	dels   int
}

// fileTimeout bounds the writing of one file.
const fileTimeout = 5 * time.Minute

// begin opens the batch name of table tb, whose rows are as of position
// pos.
func (t *objectTarget) begin(ctx context.Context, tb *db.SyncTable, name string, pos int64) (*batchFile, error) {
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	out, err := t.b.NewWriter(ctx, tb.Name+"/"+name+".parquet", &blob.WriterOptions{ContentType: "application/vnd.apache.parquet",
		BeforeWrite: t.beforeWrite})
	if err != nil {
		cancel()
		return nil, err
	}
	pw, err := parquetfile.NewWriter(out, tb.Name, parquetColumns(tb))
	if err != nil {
		cancel()
		_ = out.Close()
		return nil, err
	}
	return &batchFile{t: t, tb: tb, name: name, pos: pos, cancel: cancel, out: out, pw: pw}, nil
}

// write adds rows (upserts) and deleted keys as one row group.
func (f *batchFile) write(rows []db.SyncRow, deletes []string) error {
	n := len(f.tb.Columns)
	out := make([][]any, 0, len(rows)+len(deletes))
	// One backing array for the page's values.
	vals := make([]any, (n+2)*(len(rows)+len(deletes)))
	next := func(deleted bool) []any {
		r := vals[: n+2 : n+2]
		vals = vals[n+2:]
		r[n], r[n+1] = f.pos, deleted
		return r
	}
	for _, row := range rows {
		r := next(false)
		for j := range f.tb.Columns {
			switch v := row[j].(type) {
			case nil, string, time.Time, int64:
				r[j] = v
			case bool:
				r[j] = "No"
				if v {
					r[j] = "Yes"
				}
			default:
				r[j] = fmt.Sprint(v)
			}
		}
		out = append(out, r)
	}
	for _, k := range deletes {
		r := next(true)
		r[0] = k // the key is the first column
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil
	}
	if err := f.pw.WriteRowGroup(out); err != nil {
		return err
	}
	f.rows += len(rows)
	f.dels += len(deletes)
	return nil
}

// abort drops the file (nothing of it is visible).
func (f *batchFile) abort() {
	f.cancel()
	_ = f.out.Close()
}

// manifest describes one batch file.
type manifest struct {
	Table         string    `json:"table"`
	File          string    `json:"file"`
	Position      int64     `json:"position"`
	Phase         string    `json:"phase"`
	Rows          int       `json:"rows"`
	Deletes       int       `json:"deletes"`
	Columns       []string  `json:"columns"`
	TransferredAt time.Time `json:"transferred_at"`
}

// commit closes the file, then writes its manifest and the table's
// _transfer_status (after the data: a manifest names only a whole file).
func (f *batchFile) commit(ctx context.Context, at time.Time) error {
	defer f.cancel()
	if err := f.pw.Close(); err != nil {
		f.abort()
		return err
	}
	if err := f.out.Close(); err != nil {
		return err
	}
	phase := "follow"
	if strings.Contains(f.name, "-b") {
		phase = "backfill"
	}
	m := manifest{Table: f.tb.Name, File: f.tb.Name + "/" + f.name + ".parquet", Position: f.pos, Phase: phase,
		Rows: f.rows, Deletes: f.dels, TransferredAt: at.UTC()}
	for _, c := range f.tb.Columns {
		m.Columns = append(m.Columns, c.Name)
	}
	m.Columns = append(m.Columns, colPosition, colDeleted)
	body, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := f.t.b.WriteAll(ctx, f.tb.Name+"/"+f.name+".manifest.json", body, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return err
	}
	return f.t.writeTransferStatus(ctx, f.tb.Name, at)
}

// writeTransferStatus writes the one-row _transfer_status file of table.
func (t *objectTarget) writeTransferStatus(ctx context.Context, table string, at time.Time) error {
	var buf bytes.Buffer
	w, err := parquetfile.NewWriter(&buf, db.SyncTransferStatus, []parquetfile.Column{
		{Name: "data_model_name", Kind: parquetfile.String},
		{Name: "transfer_last_updated_at", Kind: parquetfile.TimestampUTC},
	})
	if err != nil {
		return err
	}
	if err := w.WriteRowGroup([][]any{{table, at.UTC()}}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return t.b.WriteAll(ctx, db.SyncTransferStatus+"/"+table+".parquet", buf.Bytes(), &blob.WriterOptions{ContentType: "application/vnd.apache.parquet"})
}

// Apply writes one batch as one file.
func (t *objectTarget) Apply(ctx context.Context, tb *db.SyncTable, b batch) error {
	if len(b.rows)+len(b.deletes) == 0 {
		return nil
	}
	f, err := t.begin(ctx, tb, b.name, b.pos)
	if err != nil {
		return err
	}
	if err := f.write(b.rows, b.deletes); err != nil {
		f.abort()
		return err
	}
	return f.commit(ctx, b.at)
}

// batchName is the name of a batch: the position it starts at (20
// digits, so names sort as positions do), b for a backfill page (with the
// key it starts after) or f-after for a page of the log (its changes after
// the position). Pages of the log were once named by the position they
// end at ("-f"): the first batch after those starts at the last one's end,
// and its name must not replace that file.
func batchName(pos int64, backfill bool, after string) string {
	if !backfill {
		return fmt.Sprintf("%020d-f-after", pos)
	}
	if after == "" {
		after = "start"
	}
	return fmt.Sprintf("%020d-b-%s", pos, after)
}
