package app

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"log/slog"
	"path/filepath"
	"strings"

	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/files"
	"shipgraph/model"
)

// OpenFileStore opens the store of document files (BLOB_URL, FILE_*).
func OpenFileStore(ctx context.Context, v *config.Values) (*files.Store, error) {
	dataDir := v.String(config.DataDir)
	secret := []byte(v.String(config.FileURLSecret))
	if len(secret) == 0 {
		var err error
		if secret, err = files.LoadSecret(filepath.Join(dataDir, "file-url-secret")); err != nil {
			return nil, err
		}
	}
	fc := files.DefaultConfig
	fc.URL, fc.Dir, fc.Secret = v.String(config.BlobURL), filepath.Join(dataDir, "files"), secret
	if v.Applies(config.PublicBaseURL) {
		fc.PublicBaseURL = v.String(config.PublicBaseURL)
	}
	if n := v.Int64(config.FileMaxSize); n > 0 {
		fc.MaxSize = n
	}
	if d := v.Duration(config.DownloadURLTTL); d > 0 {
		fc.DownloadTTL = d
	}
	return files.Open(ctx, fc)
}

// SeedFiles gives a few seeded documents of each account a real small
// file (PDF or PNG, generated now), so downloads work in the demo.
func SeedFiles(ctx context.Context, v *config.Values, store *db.DB, log *slog.Logger) (int, error) {
	fs, err := OpenFileStore(ctx, v)
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
