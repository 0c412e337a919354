package main

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"flag"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/files"
	"shipgraph/model"
	"shipgraph/resolve"
)

// FilesConfig is the configuration of document files (issue 16).
type FilesConfig struct {
	BlobURL     string        // bucket URL; empty: fileblob under DATA_DIR/files
	MaxSize     int64         // largest file in bytes
	DownloadTTL time.Duration // how long a download URL stays valid
	Secret      string        // signing secret; empty: DATA_DIR/file-url-secret
}

func bindFilesConfig(fs *flag.FlagSet, c *FilesConfig) {
	d := files.DefaultConfig
	fs.StringVar(&c.BlobURL, "blob-url", env("BLOB_URL", ""), "bucket of document files: empty stores them under DATA_DIR/files and serves their signed URLs; s3://bucket?endpoint=…&region=… hands out the store's presigned URLs (BLOB_URL)")
	fs.Int64Var(&c.MaxSize, "file-max-size", int64(envInt("FILE_MAX_SIZE", int(d.MaxSize))), "largest document file in bytes (FILE_MAX_SIZE)")
	fs.DurationVar(&c.DownloadTTL, "download-url-ttl", envDuration("DOWNLOAD_URL_TTL", d.DownloadTTL), "how long a file download URL stays valid (DOWNLOAD_URL_TTL)")
	fs.StringVar(&c.Secret, "file-url-secret", env("FILE_URL_SECRET", ""), "secret (32+ bytes) signing file URLs and upload ids; empty: a random one kept in DATA_DIR/file-url-secret (FILE_URL_SECRET)")
}

// openFiles opens the file store and starts the hourly sweep of uploads
// that never became documents; it stops with ctx.
func openFiles(ctx context.Context, c *Config, store *db.DB, log *slog.Logger) (*files.Store, error) {
	fs, err := openFileStore(ctx, c)
	if err != nil {
		return nil, err
	}
	go sweepUploads(ctx, &resolve.Resolver{DB: store, Files: fs}, time.Hour, log)
	return fs, nil
}

// openFileStore opens the store of c.Files.
func openFileStore(ctx context.Context, c *Config) (*files.Store, error) {
	secret := []byte(c.Files.Secret)
	if len(secret) == 0 {
		var err error
		if secret, err = files.LoadSecret(filepath.Join(c.DataDir, "file-url-secret")); err != nil {
			return nil, err
		}
	}
	fc := files.DefaultConfig
	fc.URL, fc.Dir, fc.Secret, fc.PublicBaseURL = c.Files.BlobURL, filepath.Join(c.DataDir, "files"), secret, c.PublicBaseURL
	if c.Files.MaxSize > 0 {
		fc.MaxSize = c.Files.MaxSize
	}
	if c.Files.DownloadTTL > 0 {
		fc.DownloadTTL = c.Files.DownloadTTL
	}
	return files.Open(ctx, fc)
}

// sweepUploads removes stale uploads now and then every interval.
func sweepUploads(ctx context.Context, res *resolve.Resolver, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := res.SweepUploads(ctx, time.Now())
		if err != nil && ctx.Err() == nil {
			log.Warn("upload sweep", "err", err)
		} else if n > 0 {
			log.Info("upload sweep: removed uploads no document took", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// seedFiles gives a few seeded documents of each account a real small
// file (PDF or PNG, generated now), so downloads work in the demo.
func seedFiles(ctx context.Context, c *Config, store *db.DB, log *slog.Logger) (int, error) {
	fs, err := openFileStore(ctx, c)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	docs, err := store.DemoDocumentsWithoutFile(ctx, 6)
	if err != nil {
		return 0, err
	}
	nth := map[string]int{}
	for i, d := range docs {
		name := d.FileName
		nth[d.AccountID]++
		if nth[d.AccountID]%3 == 2 {
			// Every third demo file is an image (a photo of a seal, say).
			name = strings.TrimSuffix(name, filepath.Ext(name)) + ".png"
		}
		data, ct := seed.DemoFile(name, d.Name, "Document "+d.ID, "Shipgraph demo file")
		sum := md5.Sum(data)
		u := model.Upload{AccountID: d.AccountID, UserID: d.UserID, Key: files.NewKey(), Filename: d.FileName,
			ContentType: ct, ByteSize: int64(len(data)), Checksum: base64.StdEncoding.EncodeToString(sum[:])}
		if err := fs.Put(ctx, u.Key, ct, data); err != nil {
			return i, err
		}
		if err := store.AttachUpload(ctx, d.ID, u); err != nil {
			_ = fs.Delete(ctx, u.Key)
			return i, err
		}
	}
	log.Debug("demo files stored", "files", len(docs))
	return len(docs), nil
}
