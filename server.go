// Command shipgraph serves the shipment-tracking resource model as GraphQL
// (with a GraphiQL playground) and as the /v2 JSON:API of existing clients,
// from one binary in front of PostgreSQL.
//
//	shipgraph serve | migrate | seed | token create | token revoke
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"shipgraph/db"
	"shipgraph/db/pgembed"
	"shipgraph/db/seed"
	"shipgraph/httpapi"
	"shipgraph/model"
	"shipgraph/sharedlimit"
	"shipgraph/tracing"
	"shipgraph/webhook"
)

// Config is every setting of the binary. Each comes from an environment
// variable and can be overridden by the flag of the same name.
type Config struct {
	DatabaseURL    string
	DBPooler       string // "pgbouncer": DATABASE_URL is a pooler in transaction mode
	DBDirectURL    string // PostgreSQL itself, for LISTEN and migrations behind a pooler
	Addr           string
	DataDir        string
	EmbeddedFast   bool // embedded PostgreSQL without fsync: demos only
	PublicBaseURL  string
	LogLevel       string
	LogFormat      string
	BodyLimit      int64
	BodyTimeout    time.Duration // how long a request body may take to arrive
	RequestTimeout time.Duration // deadline of one API request; 0 = none
	ResponseLimit  int64         // bytes of one GraphQL response; 0 = no cap
	// The database's bounds (db.Options): connection with handshake,
	// statement_timeout (serve only: seeding and migrating are not
	// bounded), TCP keepalive.
	DBConnectTimeout   time.Duration
	DBStatementTimeout time.Duration
	DBKeepAlive        time.Duration
	RateLimit          int // requests per minute per API key; 0 = off
	Introspection      bool
	FastPath           bool
	Complexity         int
	Depth              int
	Aliases            int
	Tokens             int
	Fields             int
	LoaderWait         time.Duration
	PlaygroundKey      string
	KeyCache           int           // API keys kept resolved in memory; 0 = off
	ReferenceTTL       time.Duration // how long reference rows are kept; 0 = off
	ShutdownPeriod     time.Duration
	ShutdownDelay      time.Duration // serve on, not ready, before shutting down
	SubLimit           int           // concurrent subscriptions per API key; 0 = no limit
	SubQueue           int           // events a subscription may fall behind
	KeepAlive          time.Duration // WebSocket/SSE keep-alive interval
	DemoActivity       time.Duration // move demo containers this often; 0 = off
	ChangeLogRetention time.Duration // how long the change log keeps changes; 0 = for ever
	RedisURL           string        // shared rate and subscription limits; empty = per process
	Files              FilesConfig   // document files (server_files.go)
	// Webhooks: the API's limit and address rule, and the delivery
	// (server_webhooks.go).
	Webhooks WebhooksConfig

	// Read replicas (db.Options.Replicas): comma-separated URLs, how long
	// a read waits for one to replay the account's last write, and the lag
	// beyond which one is skipped.
	DBReplicaURLs   string
	DBReplicaWait   time.Duration
	DBReplicaMaxLag time.Duration
}

// env returns the value of an environment variable or a default.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(env(name, "")); err == nil {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(env(name, "")); err == nil {
		return v
	}
	return def
}

// bindConfig registers the flags of the settings a verb uses, defaulting to
// the environment.
func bindConfig(fs *flag.FlagSet, c *Config, serve bool) {
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL (DATABASE_URL); empty runs a private PostgreSQL under --data-dir")
	fs.StringVar(&c.DBPooler, "database-pooler", env("DATABASE_POOLER", ""), "pgbouncer: DATABASE_URL goes through PgBouncer in transaction mode (no prepared statements; needs DATABASE_DIRECT_URL); empty: a direct connection (DATABASE_POOLER)")
	fs.StringVar(&c.DBDirectURL, "database-direct-url", env("DATABASE_DIRECT_URL", ""), "PostgreSQL itself, bypassing the pooler, for LISTEN and migrations; required with DATABASE_POOLER (DATABASE_DIRECT_URL)")
	fs.StringVar(&c.DataDir, "data-dir", env("DATA_DIR", "./.data"), "directory of the embedded PostgreSQL (DATA_DIR)")
	fs.BoolVar(&c.EmbeddedFast, "embedded-fast", env("EMBEDDED_FAST", "false") == "true", "run the embedded PostgreSQL without fsync, synchronous_commit and full_page_writes: faster writes, but a crash can lose acknowledged writes; for demos only (EMBEDDED_FAST)")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (LOG_FORMAT)")
	fs.DurationVar(&c.DBConnectTimeout, "db-connect-timeout", envDuration("DB_CONNECT_TIMEOUT", db.DefaultOptions.ConnectTimeout), "how long a new database connection may take, handshake included (DB_CONNECT_TIMEOUT)")
	fs.DurationVar(&c.DBKeepAlive, "db-keepalive", envDuration("DB_KEEPALIVE", db.DefaultOptions.KeepAlive), "TCP keepalive idle time of database connections; 0 = the system's (DB_KEEPALIVE)")
	if !serve {
		return
	}
	hc := httpapi.DefaultConfig.GraphQL
	fs.StringVar(&c.Addr, "addr", env("ADDR", "127.0.0.1:8080"), "listen address (ADDR)")
	fs.StringVar(&c.PublicBaseURL, "public-base-url", env("PUBLIC_BASE_URL", ""), "scheme://host for absolute links in /v2 documents; empty: from the request (PUBLIC_BASE_URL)")
	fs.Int64Var(&c.BodyLimit, "body-limit", int64(envInt("BODY_LIMIT", int(httpapi.DefaultConfig.BodyLimit))), "maximum request body in bytes (BODY_LIMIT)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", envDuration("BODY_TIMEOUT", httpapi.DefaultConfig.BodyTimeout), "how long a request body may take to arrive; a client still sending is cut, 0 = no limit (BODY_TIMEOUT)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", envDuration("REQUEST_TIMEOUT", httpapi.DefaultConfig.RequestTimeout), "deadline of one API request (subscriptions excepted); its statements are cancelled and it answers 503; 0 = none (REQUEST_TIMEOUT)")
	fs.DurationVar(&c.DBStatementTimeout, "db-statement-timeout", envDuration("DB_STATEMENT_TIMEOUT", db.DefaultOptions.StatementTimeout), "statement_timeout of the server's database sessions; 0 = none (DB_STATEMENT_TIMEOUT)")
	fs.IntVar(&c.RateLimit, "rate-limit", envInt("RATE_LIMIT", httpapi.DefaultConfig.RateLimit), "requests per minute per API key, 0 = off (RATE_LIMIT)")
	fs.BoolVar(&c.Introspection, "introspection", env("GRAPHQL_INTROSPECTION", "true") == "true", "allow GraphQL introspection (GRAPHQL_INTROSPECTION)")
	fs.BoolVar(&c.FastPath, "fast-path", env("GRAPHQL_FAST_PATH", "true") == "true", "write GraphQL queries on the fast path; false runs them on gqlgen's executor alone (GRAPHQL_FAST_PATH)")
	fs.IntVar(&c.Complexity, "complexity-limit", envInt("GRAPHQL_COMPLEXITY_LIMIT", hc.ComplexityLimit), "maximum GraphQL operation complexity (GRAPHQL_COMPLEXITY_LIMIT)")
	fs.IntVar(&c.Depth, "depth-limit", envInt("GRAPHQL_DEPTH_LIMIT", hc.DepthLimit), "maximum GraphQL selection depth (GRAPHQL_DEPTH_LIMIT)")
	fs.IntVar(&c.Aliases, "alias-limit", envInt("GRAPHQL_ALIAS_LIMIT", hc.AliasLimit), "maximum aliases in one GraphQL operation (GRAPHQL_ALIAS_LIMIT)")
	fs.Int64Var(&c.ResponseLimit, "response-limit", int64(envInt("GRAPHQL_RESPONSE_LIMIT", int(httpapi.DefaultConfig.ResponseLimit))), "maximum bytes of one GraphQL response; the connection is aborted past it; 0 = no cap (GRAPHQL_RESPONSE_LIMIT)")
	fs.IntVar(&c.Fields, "field-limit", envInt("GRAPHQL_FIELD_LIMIT", hc.FieldLimit), "maximum fields of one GraphQL operation once its fragments are expanded, counted before validation (GRAPHQL_FIELD_LIMIT)")
	fs.IntVar(&c.Tokens, "token-limit", envInt("GRAPHQL_TOKEN_LIMIT", hc.TokenLimit), "maximum parser tokens of one GraphQL document (GRAPHQL_TOKEN_LIMIT)")
	fs.DurationVar(&c.LoaderWait, "loader-wait", envDuration("LOADER_WAIT", httpapi.DefaultConfig.Loader.Wait), "how long a loader batch collects keys (LOADER_WAIT)")
	fs.StringVar(&c.PlaygroundKey, "playground-key", env("PLAYGROUND_API_KEY", ""), "API key prefilled in the playground; for demos only (PLAYGROUND_API_KEY)")
	fs.DurationVar(&c.ReferenceTTL, "reference-cache-ttl", envDuration("REFERENCE_CACHE_TTL", time.Minute), "how long reference rows (ports, terminals, metro areas, rail terminals, shipping lines) are kept in memory; 0 reads them every time (REFERENCE_CACHE_TTL)")
	fs.IntVar(&c.KeyCache, "key-cache", envInt("KEY_CACHE", httpapi.DefaultConfig.KeyCache), "API keys kept resolved in memory (revocations are pushed by the database); 0 looks every key up (KEY_CACHE)")
	lc := httpapi.DefaultConfig.Live
	fs.IntVar(&c.SubLimit, "subscription-limit", envInt("SUBSCRIPTION_LIMIT", lc.MaxPerKey), "concurrent GraphQL subscriptions per API key, 0 = no limit (SUBSCRIPTION_LIMIT)")
	fs.IntVar(&c.SubQueue, "subscription-queue", envInt("SUBSCRIPTION_QUEUE", lc.Queue), "events a subscription may fall behind before it is ended as a slow consumer (SUBSCRIPTION_QUEUE)")
	fs.DurationVar(&c.KeepAlive, "keepalive", envDuration("SUBSCRIPTION_KEEPALIVE", lc.KeepAlive), "keep-alive interval of WebSocket and SSE connections (SUBSCRIPTION_KEEPALIVE)")
	fs.StringVar(&c.DBReplicaURLs, "database-replica-urls", env("DATABASE_REPLICA_URLS", ""), "comma-separated PostgreSQL URLs of streaming read replicas: reads go there once the account's last write is replayed; empty reads from the primary (DATABASE_REPLICA_URLS)")
	fs.DurationVar(&c.DBReplicaWait, "database-replica-wait", envDuration("DATABASE_REPLICA_WAIT", db.DefaultReplicaWait), "how long a read waits for a replica to replay the account's last write before it reads from the primary; 0 = no wait (DATABASE_REPLICA_WAIT)")
	fs.DurationVar(&c.DBReplicaMaxLag, "database-replica-max-lag", envDuration("DATABASE_REPLICA_MAX_LAG", db.DefaultReplicaMaxLag), "a replica lagging further behind the primary than this is skipped (DATABASE_REPLICA_MAX_LAG)")
	fs.StringVar(&c.RedisURL, "redis-url", env("REDIS_URL", ""), "Redis counting the rate and subscription limits over every instance (redis://host:port/db); empty counts them per process; unreachable falls back to per process (REDIS_URL)")
	fs.DurationVar(&c.ChangeLogRetention, "change-log-retention", envDuration("CHANGE_LOG_RETENTION", 168*time.Hour), "how long the change log keeps changes (subscriptions resume, webhooks read it); older ones are pruned in the background; 0 = never pruned (CHANGE_LOG_RETENTION)")
	fs.DurationVar(&c.DemoActivity, "demo-activity", envDuration("DEMO_ACTIVITY", 0), "move a few demo containers through status changes this often, for live demos; 0 = off (DEMO_ACTIVITY)")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", envDuration("SHUTDOWN_DELAY", 5*time.Second), "on SIGTERM, how long to keep serving (with /readyz 503 and keep-alives off) before shutting down, so load balancers stop sending first (SHUTDOWN_DELAY)")
	bindFilesConfig(fs, &c.Files)
	bindWebhooksConfig(fs, &c.Webhooks)
	fs.DurationVar(&c.ShutdownPeriod, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", 10*time.Second), "how long to drain requests on shutdown (SHUTDOWN_TIMEOUT)")
}

const usage = `shipgraph: GraphQL and /v2 JSON:API over shipment-tracking data.

Usage:
  shipgraph serve   [flags]   migrate, then serve HTTP on ADDR
  shipgraph migrate [flags]   apply database migrations (idempotent)
  shipgraph seed    [flags]   fill an empty database with demo data; prints the demo API keys
  shipgraph token create --account ID|SLUG --role admin|member|viewer
                              create an API key and print it once
  shipgraph token revoke --account ID|SLUG --id TOKEN_ID
                              revoke an API key
  shipgraph psql    [flags] [-- PSQL_ARGS]
                              psql session on the database (the embedded one when DATABASE_URL is unset)

Run 'shipgraph VERB --help' for the flags of a verb. Every flag also reads an
environment variable (shown in its help).
`

func main() {
	gcDefaults()
	// SIGINT/SIGTERM cancel ctx: the server drains, the embedded PostgreSQL
	// stops, a seed in progress rolls back.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Garbage collector defaults, when the runtime's own GOGC and GOMEMLIMIT
// are not set: a request allocates a few megabytes that are garbage as soon
// as it is answered, while the live heap is small, so at GOGC=100 the
// collector runs every few requests. 400 lets the heap grow to five times
// what is live between collections (tens of MB); the soft limit makes the
// collector work harder before the heap passes 1 GiB whatever GOGC allows.
// Measured with make bench: /v2/documents with includes 24 -> 19.5 ms per
// request; see the README for the load-run numbers.
const (
	defaultGOGC       = 400
	defaultGOMEMLIMIT = 1 << 30
)

func gcDefaults() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGOGC)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultGOMEMLIMIT)
	}
}

// run executes one verb and returns the process exit code: 0 ok, 1 failure,
// 2 usage error. Errors are reported as one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = cmdMigrate(ctx, args[1:], stdout, stderr)
	case "seed":
		err = cmdSeed(ctx, args[1:], stdout, stderr)
	case "token":
		err = cmdToken(ctx, args[1:], stdout, stderr)
	case "psql":
		err = cmdPsql(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "shipgraph: unknown verb %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintf(stderr, "shipgraph %s: %v\n", args[0], err)
	return 1
}

// errUsage marks an error already reported by the flag package.
var errUsage = errors.New("usage")

func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	return nil
}

func newLogger(c *Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("LOG_LEVEL %q: use debug, info, warn or error", c.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("LOG_FORMAT %q: use text or json", c.LogFormat)
}

// openStore connects to DATABASE_URL, or starts the embedded PostgreSQL
// under DATA_DIR when it is empty. The returned close function closes the
// pool and stops the embedded server; call it exactly once.
func openStore(ctx context.Context, c *Config, log *slog.Logger) (*db.DB, func(), error) {
	switch {
	case c.DBPooler != "" && c.DBPooler != "pgbouncer":
		return nil, nil, fmt.Errorf("DATABASE_POOLER %q: use pgbouncer, or leave it empty", c.DBPooler)
	case c.DBPooler != "" && c.DatabaseURL == "":
		return nil, nil, errors.New("DATABASE_POOLER needs DATABASE_URL (the embedded PostgreSQL has no pooler)")
	}
	url := c.DatabaseURL
	var pg *pgembed.Server
	if url == "" {
		var err error
		pg, err = pgembed.Start(ctx, pgembed.Options{DataDir: c.DataDir, Fast: c.EmbeddedFast, Logf: func(f string, a ...any) {
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
		log.Info("embedded PostgreSQL running", "data_dir", c.DataDir, "cluster", pg.Home(), "socket", pg.SocketDir())
	}
	o := db.Options{ConnectTimeout: c.DBConnectTimeout, StatementTimeout: c.DBStatementTimeout, KeepAlive: c.DBKeepAlive}
	o.Pooler, o.DirectURL = c.DBPooler == "pgbouncer", c.DBDirectURL
	if c.DBReplicaURLs != "" {
		o.Replicas = strings.Split(c.DBReplicaURLs, ",")
		o.ReplicaWait, o.ReplicaMaxLag = c.DBReplicaWait, c.DBReplicaMaxLag
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

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := flag.NewFlagSet("shipgraph migrate", flag.ContinueOnError)
	bindConfig(fs, &c, false)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	log, err := newLogger(&c, stderr)
	if err != nil {
		return err
	}
	store, closeStore, err := openStore(ctx, &c, log)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

// cmdPsql opens an interactive psql on the database: DATABASE_URL when set,
// else the embedded cluster of DATA_DIR through its private socket — the one
// a running shipgraph serves, or one started for the session and stopped
// after it. The embedded cluster has no TCP port to point psql at, and only
// its owner (and root) may use its socket.
func cmdPsql(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := flag.NewFlagSet("shipgraph psql", flag.ContinueOnError)
	bindConfig(fs, &c, false)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		dir, err := pgembed.FindBinDir()
		if err != nil {
			return errors.New("psql not found: install the PostgreSQL client (e.g. apt-get install postgresql-client)")
		}
		psql = filepath.Join(dir, "psql")
	}
	target := c.DatabaseURL
	if target == "" {
		if url, ok := pgembed.Running(c.DataDir); ok {
			target = url("shipgraph")
		} else {
			pg, err := pgembed.Start(ctx, pgembed.Options{DataDir: c.DataDir, Fast: c.EmbeddedFast})
			if err != nil {
				return err
			}
			defer func() { _ = pg.Stop() }()
			if err := db.EnsureDatabase(ctx, pg.URL("postgres"), "shipgraph"); err != nil {
				return err
			}
			target = pg.URL("shipgraph")
		}
	}
	// Not CommandContext: Ctrl-C belongs to psql (it cancels the running
	// query); our own SIGINT handling only keeps us alive meanwhile.
	cmd := exec.Command(psql, append([]string{target}, fs.Args()...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	return cmd.Run()
}

func cmdSeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := flag.NewFlagSet("shipgraph seed", flag.ContinueOnError)
	bindConfig(fs, &c, false)
	shipments := fs.Int("shipments", envInt("SEED_SHIPMENTS", 200), "number of demo shipments (SEED_SHIPMENTS)")
	seedN := fs.Int64("seed", int64(envInt("SEED", 1)), "random seed: the same seed gives the same data and keys (SEED)")
	bindFilesConfig(fs, &c.Files)
	force := fs.Bool("force", false, "replace the data of a non-empty database")
	ifEmpty := fs.Bool("if-empty", false, "do nothing (and succeed) when the database already has data")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if *shipments < 1 {
		return fmt.Errorf("--shipments must be at least 1")
	}
	log, err := newLogger(&c, stderr)
	if err != nil {
		return err
	}
	store, closeStore, err := openStore(ctx, &c, log)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	if *ifEmpty {
		empty, err := store.IsEmpty(ctx)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintln(stderr, "database already has data; not seeding")
			return nil
		}
	}
	opts := seed.Options{Shipments: *shipments, Seed: *seedN, Force: *force}
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		opts.Progress = stderr
	}
	tokens, stats, err := seed.Run(ctx, store, opts)
	if err != nil {
		return err
	}
	if _, err := seedFiles(ctx, &c, store, log); err != nil {
		return fmt.Errorf("demo files: %w", err)
	}
	for _, t := range tokens {
		fmt.Fprintf(stdout, "token %s %s %s\n", t.Account, t.Role, t.Key)
	}
	secs := stats.Duration.Seconds()
	fmt.Fprintf(stderr, "seeded %d shipments (%d rows) in %.1fs (%.0f rows/s); demo keys are for demos only\n",
		*shipments, stats.Rows, secs, float64(stats.Rows)/max(secs, 1e-9))
	return nil
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "revoke") {
		fmt.Fprint(stderr, "usage: shipgraph token create --account ID|SLUG --role admin|member|viewer\n       shipgraph token revoke --account ID|SLUG --id TOKEN_ID\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return errUsage
	}
	verb := args[0]
	var c Config
	fs := flag.NewFlagSet("shipgraph token "+verb, flag.ContinueOnError)
	bindConfig(fs, &c, false)
	account := fs.String("account", "", "account id or slug (required)")
	role := fs.String("role", "", "admin, member or viewer (create)")
	name := fs.String("name", "", "a note to tell keys apart (create)")
	id := fs.String("id", "", "id of the key to revoke (revoke)")
	if err := parseFlags(fs, args[1:], stderr); err != nil {
		return err
	}
	if *account == "" {
		return fmt.Errorf("--account is required")
	}
	if verb == "create" && !model.ValidRole(*role) {
		return fmt.Errorf("--role must be admin, member or viewer")
	}
	if verb == "revoke" && *id == "" {
		return fmt.Errorf("--id is required")
	}
	log, err := newLogger(&c, stderr)
	if err != nil {
		return err
	}
	store, closeStore, err := openStore(ctx, &c, log)
	if err != nil {
		return err
	}
	defer closeStore()
	if err := store.Migrate(ctx); err != nil {
		return err
	}
	acct, err := store.FindAccount(ctx, *account)
	if err != nil {
		return fmt.Errorf("account %q: %s", *account, model.ErrorMessage(err))
	}
	if verb == "revoke" {
		if err := store.RevokeToken(ctx, acct.ID, *id); err != nil {
			return fmt.Errorf("key %q: %s", *id, model.ErrorMessage(err))
		}
		fmt.Fprintf(stdout, "revoked %s\n", *id)
		return nil
	}
	in := db.TokenInput{AccountID: acct.ID, Role: *role, Name: *name}
	if u, err := store.FirstUserWithRole(ctx, acct.ID, *role); err == nil {
		in.UserID = &u.ID
	} else if model.ErrorCode(err) != model.ENOTFOUND {
		return err
	}
	if in.Key, err = db.NewAPIKey(rand.Reader); err != nil {
		return err
	}
	tok, err := store.CreateToken(ctx, in)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token %s %s %s\n", acct.Slug, *role, in.Key)
	fmt.Fprintf(stderr, "key id %s; store the key now: it is shown only once\n", tok.ID)
	return nil
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c Config
	fs := flag.NewFlagSet("shipgraph serve", flag.ContinueOnError)
	bindConfig(fs, &c, true)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	log, err := newLogger(&c, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)
	var shared *sharedlimit.Limits
	if c.RedisURL != "" {
		if shared, err = sharedlimit.Open(c.RedisURL, log); err != nil {
			return err
		}
		// Deferred first, so it closes after the chain.
		defer shared.Close()
	}
	// Listen first: a port in use is reported before the database starts.
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", c.Addr, err)
	}
	defer ln.Close()
	// Serve at once: until the database is there and migrated, /healthz
	// answers 200 and everything else 503 with Retry-After.
	var handler swapHandler
	handler.set(httpapi.Waiting("waiting for the database"))
	srv := &http.Server{
		Handler:           &handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	store, closeStore, err := connectStore(ctx, &c, log)
	if err != nil {
		_ = srv.Close()
		if ctx.Err() != nil {
			return nil // stopped while waiting
		}
		return err
	}
	defer closeStore()
	store.SetReferenceTTL(c.ReferenceTTL)
	// Traces only when the OTEL_* variables ask (docs/tracing.md).
	tp, err := tracing.FromEnv(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	fileStore, err := openFiles(ctx, &c, store, log)
	if err != nil {
		return err
	}
	defer fileStore.Close()
	hc := httpConfig(&c, log)
	hc.Shared = shared
	hc.Tracing = tp.Provider()
	hc.Files = fileStore
	chain := httpapi.New(store, hc)
	// Deferred after closeStore, so it runs before it and after the
	// server drained: the key listener stops, the last key uses are
	// recorded, then the store closes.
	defer chain.Close()
	// Subscriptions never drain by themselves: end them when the
	// shutdown begins.
	srv.RegisterOnShutdown(chain.EndSubscriptions)
	// Nor do bodies a client trickles: cut them.
	srv.RegisterOnShutdown(chain.CutBodies)
	handler.set(chain)
	if c.DemoActivity > 0 {
		go demoActivity(ctx, store, c.DemoActivity, log)
	}
	// One instance prunes at a time (an advisory lock); the others skip.
	go store.PruneChangeLogLoop(ctx, c.ChangeLogRetention, c.Webhooks.LogCeiling, min(time.Minute, max(c.ChangeLogRetention/10, time.Second)), webhook.PruneReport(log))
	// Deferred after closeStore: the deliveries in flight finish before
	// the store closes.
	defer startWebhooks(ctx, &c, store, chain.Listener(), log, tp.Provider())()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "shipgraph listening on %s\n  GraphQL:    %s/graphql\n  playground: %s/playground\n  REST:       %s/v2/documents\n", base, base, base, base)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The drain: /readyz says 503 so load balancers stop sending, while
	// requests are still served, each closing its connection; then the
	// shutdown, which closes only connections left idle all that time.
	chain.Drain()
	if c.ShutdownDelay > 0 {
		log.Info("draining: not ready, serving on", "for", c.ShutdownDelay)
		select {
		case err := <-errc:
			return err
		case <-time.After(c.ShutdownDelay):
		}
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownPeriod)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown", "err", err)
	}
	return nil
}

// swapHandler serves the handler set last: the waiting answers, then the
// chain.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// connectStore opens the store and migrates it. An external database
// (DATABASE_URL) that cannot be reached, or cannot be migrated for want of
// the database, is waited for: retried with backoff (up to 15 s between
// attempts), each failure logged with what is awaited, until it answers or
// ctx ends. The embedded PostgreSQL is ours to start: its failure is final.
func connectStore(ctx context.Context, c *Config, log *slog.Logger) (*db.DB, func(), error) {
	backoff := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		store, closeStore, err := openStore(ctx, c, log)
		if err == nil {
			if err = store.Migrate(ctx); err == nil {
				if attempt > 1 {
					log.Info("database reached; serving", "attempts", attempt)
				}
				return store, closeStore, nil
			}
			closeStore()
		}
		if c.DatabaseURL == "" || model.ErrorCode(err) != model.EUNAVAILABLE || ctx.Err() != nil {
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

// httpConfig is the HTTP chain's share of the configuration.
func httpConfig(c *Config, log *slog.Logger) httpapi.Config {
	hc := httpapi.DefaultConfig
	hc.BodyLimit, hc.BodyTimeout, hc.RateLimit = c.BodyLimit, c.BodyTimeout, c.RateLimit
	hc.RequestTimeout, hc.ResponseLimit = c.RequestTimeout, c.ResponseLimit
	hc.GraphQL.Introspection = c.Introspection
	hc.GraphQL.NoFastPath = !c.FastPath
	hc.GraphQL.ComplexityLimit, hc.GraphQL.DepthLimit, hc.GraphQL.AliasLimit, hc.GraphQL.TokenLimit = c.Complexity, c.Depth, c.Aliases, c.Tokens
	hc.GraphQL.FieldLimit = c.Fields
	hc.GraphQL.Logger = log
	if c.LoaderWait > 0 {
		hc.Loader.Wait = c.LoaderWait
	}
	hc.PlaygroundKey = c.PlaygroundKey
	hc.PublicBaseURL = c.PublicBaseURL
	hc.Logger = log
	hc.KeyCache = c.KeyCache
	hc.Webhooks = c.Webhooks.apiConfig()
	hc.Live.MaxPerKey, hc.Live.Queue = c.SubLimit, c.SubQueue
	if c.KeepAlive > 0 {
		hc.Live.KeepAlive = c.KeepAlive
	}
	return hc
}

// demoActivity moves a few demo containers one step along a realistic
// journey (on ship → discharged with holds → available → picked up →
// empty returned, then round again) every interval, through the store, so
// subscribers of the demo data see events arrive. Only for demos: it
// changes data. Off unless --demo-activity (make run sets it).
func demoActivity(ctx context.Context, store *db.DB, every time.Duration, log *slog.Logger) {
	log.Info("demo activity: moving demo containers", "every", every)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		moved, err := store.DemoActivity(ctx, 3)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("demo activity", "err", err)
			}
			continue
		}
		for _, m := range moved {
			log.Info("demo activity", "container", m.Number, "status", m.Status)
		}
	}
}
