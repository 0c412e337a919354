package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/db/pgembed"
	"shipgraph/model"
)

// NewLogger is the process' logger, by LOG_LEVEL and LOG_FORMAT.
func NewLogger(v *config.Values, w interface{ Write([]byte) (int, error) }) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(v.String(config.LogLevel))); err != nil {
		return nil, fmt.Errorf("LOG_LEVEL %q: use debug, info, warn or error", v.String(config.LogLevel))
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f := v.String(config.LogFormat); f {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("LOG_FORMAT %q: use text or json", f)
	}
}

// GCDefaults sets the garbage collector's defaults (GOGC and GOMEMLIMIT as
// declared) when the runtime's own variables are not set: a request
// allocates a few megabytes that are garbage as soon as it is answered,
// while the live heap is small, so at GOGC=100 the collector runs every few
// requests. 400 lets the heap grow to five times what is live between
// collections (tens of MB); the soft limit makes the collector work harder
// before the heap passes 1 GiB whatever GOGC allows. Measured with make
// bench: /v2/documents with includes 24 -> 19.5 ms per request.
func GCDefaults() {
	if os.Getenv(config.GOGC.Env) == "" {
		if n, err := strconv.Atoi(config.GOGC.Default); err == nil {
			debug.SetGCPercent(n)
		}
	}
	if os.Getenv(config.GOMEMLIMIT.Env) == "" {
		if n, err := strconv.ParseInt(strings.TrimSuffix(config.GOMEMLIMIT.Default, "GiB"), 10, 64); err == nil {
			debug.SetMemoryLimit(n << 30)
		}
	}
}

// OpenStore connects to DATABASE_URL, or starts the embedded PostgreSQL
// under DATA_DIR when it is empty. The returned close function closes the
// pool and stops the embedded server; call it exactly once.
func OpenStore(ctx context.Context, v *config.Values, log *slog.Logger) (*db.DB, func(), error) {
	url, pooler := v.String(config.DatabaseURL), v.String(config.DatabasePooler)
	switch {
	case pooler != "" && pooler != "pgbouncer":
		return nil, nil, fmt.Errorf("DATABASE_POOLER %q: use pgbouncer, or leave it empty", pooler)
	case pooler != "" && url == "":
		return nil, nil, errors.New("DATABASE_POOLER needs DATABASE_URL (the embedded PostgreSQL has no pooler)")
	}
	urls, err := normalizeURLs(v)
	if err != nil {
		return nil, nil, err
	}
	if url != "" {
		url = urls.primary
	}
	var pg *pgembed.Server
	if url == "" {
		var err error
		dataDir := v.String(config.DataDir)
		pg, err = pgembed.Start(ctx, pgembed.Options{DataDir: dataDir, Fast: v.Bool(config.EmbeddedFast), Logf: func(f string, a ...any) {
			log.Info(fmt.Sprintf(f, a...))
		}})
		if err != nil {
			return nil, nil, err
		}
		if err := db.EnsureDatabase(ctx, pg.URL("postgres"), "shipgraph"); err != nil {
			_ = pg.Stop()
			return nil, nil, err
		}
		url = pg.URL("shipgraph")
		log.Info("embedded PostgreSQL running", "data_dir", dataDir, "cluster", pg.Home(), "socket", pg.SocketDir())
	}
	o := db.Options{ConnectTimeout: v.Duration(config.DBConnectTimeout), KeepAlive: v.Duration(config.DBKeepalive)}
	if v.Applies(config.DBStatementTimeout) {
		// serve only: seeding and migrating are not bounded.
		o.StatementTimeout = v.Duration(config.DBStatementTimeout)
	}
	o.Pooler, o.DirectURL = pooler == "pgbouncer", urls.direct
	if len(urls.replicas) > 0 {
		o.Replicas = urls.replicas
		o.ReplicaWait, o.ReplicaMaxLag = v.Duration(config.DatabaseReplicaWait), v.Duration(config.DatabaseReplicaMaxLag)
		if o.ReplicaWait == 0 {
			o.ReplicaWait = -1 // 0 here means no wait
		}
	}
	store, err := db.OpenWith(ctx, url, o)
	if err != nil {
		if pg != nil {
			_ = pg.Stop()
		}
		return nil, nil, err
	}
	var once sync.Once
	return store, func() {
		once.Do(func() {
			_ = store.Close()
			if pg != nil {
				if err := pg.Stop(); err != nil {
					log.Error("stopping embedded PostgreSQL", "err", err)
				}
			}
		})
	}, nil
}

// dsns are the connection strings of DATABASE_URL, DATABASE_DIRECT_URL
// and DATABASE_REPLICA_URLS in the key=value form (db.NormalizeDSN).
type dsns struct {
	primary, direct string
	replicas        []string
}

// normalizeURLs reads the database settings once, in either form libpq
// documents (a URL with several hosts, or key=value), and answers a bad
// value with an error naming the setting: it is final, never retried.
func normalizeURLs(v *config.Values) (dsns, error) {
	var d dsns
	var err error
	norm := func(s *config.Setting, raw string) (string, error) {
		if raw == "" {
			return "", nil
		}
		n, err := db.NormalizeDSN(raw)
		if err != nil {
			return "", fmt.Errorf("%s: %w", s.Env, err)
		}
		return n, nil
	}
	if d.primary, err = norm(config.DatabaseURL, v.String(config.DatabaseURL)); err != nil {
		return d, err
	}
	if d.direct, err = norm(config.DatabaseDirectURL, v.String(config.DatabaseDirectURL)); err != nil {
		return d, err
	}
	if v.Applies(config.DatabaseReplicaURLs) && v.String(config.DatabaseReplicaURLs) != "" {
		for i, raw := range db.SplitDSNList(v.String(config.DatabaseReplicaURLs)) {
			if raw == "" {
				continue
			}
			n, err := norm(config.DatabaseReplicaURLs, raw)
			if err != nil {
				return d, fmt.Errorf("%w (replica %d of the list)", err, i+1)
			}
			d.replicas = append(d.replicas, n)
		}
	}
	return d, nil
}

// connectStore opens the store and migrates it. An external database
// (DATABASE_URL) that cannot be reached, or cannot be migrated for want of
// the database, is waited for: retried with backoff (up to 15 s between
// attempts), each failure logged with what is awaited, until it answers or
// ctx ends. The embedded PostgreSQL is ours to start: its failure is final.
func connectStore(ctx context.Context, v *config.Values, log *slog.Logger) (*db.DB, func(), error) {
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		store, closeStore, err := OpenStore(ctx, v, log)
		if err == nil {
			if err = store.Migrate(ctx); err == nil {
				if attempt > 1 {
					log.Info("database reached; serving", "attempts", attempt)
				}
				return store, closeStore, nil
			}
			closeStore()
		}
		if v.String(config.DatabaseURL) == "" || model.ErrorCode(err) != model.EUNAVAILABLE || ctx.Err() != nil {
			return nil, nil, err
		}
		log.Warn("waiting for the database: answering 503 until it is reachable and migrated",
			"attempt", attempt, "retry_in", backoff, "err", err)
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 15*time.Second)
	}
}
