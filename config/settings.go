package config

// The settings of the binary, each declared once, in the order of the
// settings table (docs/settings.md, generated from here: make settings).
// The verbs that read each are its Verbs; where the process is built
// (package app) reads them.
var (
	DatabaseURL = declare(Setting{Env: "DATABASE_URL", Flag: "database-url", Kind: String, Default: "", Verbs: AllVerbs,
		Meaning: "PostgreSQL URL or key=value string, several hosts allowed (`postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write`, [failures](docs/failures.md)). Empty: run a private PostgreSQL under `DATA_DIR` ([operations](docs/operations.md))."})
	DatabasePooler = declare(Setting{Env: "DATABASE_POOLER", Flag: "database-pooler", Kind: String, Default: "", Verbs: AllVerbs,
		Meaning: "`pgbouncer`: `DATABASE_URL` goes through PgBouncer in transaction mode: no prepared statements, one round trip per statement, `statement_timeout` set on the role or database instead ([scaling](docs/scaling.md))."})
	DatabaseDirectURL = declare(Setting{Env: "DATABASE_DIRECT_URL", Flag: "database-direct-url", Kind: String, Default: "", Verbs: AllVerbs,
		Meaning: "PostgreSQL itself, bypassing the pooler, for `LISTEN` and migrations; required with `DATABASE_POOLER`."})
	DatabaseReplicaURLs = declare(Setting{Env: "DATABASE_REPLICA_URLS", Flag: "database-replica-urls", Kind: String, Default: "", Verbs: Serve,
		Meaning: "Comma-separated URLs (or key=value strings) of streaming read replicas (hot standbys). Reads of GraphQL requests and `/v2` GETs go to one that has replayed the account's last write (read-your-writes: per instance, over every instance with `REDIS_URL`); writes, transactions, `LISTEN` and migrations use the primary; a subscription's re-read of a changed record goes to a replica that has replayed the change. A replica down or lagging is skipped; `/readyz` lists replicas without failing on them ([scaling](docs/scaling.md))."})
	DatabaseReplicaWait = declare(Setting{Env: "DATABASE_REPLICA_WAIT", Flag: "database-replica-wait", Kind: Duration, Default: "50ms", Verbs: Serve,
		Meaning: "How long a read waits for a replica to replay the account's last write before it reads from the primary; `0` is no wait."})
	DatabaseReplicaMaxLag = declare(Setting{Env: "DATABASE_REPLICA_MAX_LAG", Flag: "database-replica-max-lag", Kind: Duration, Default: "5s", Verbs: Serve,
		Meaning: "A replica further behind the primary than this (or not heard from for as long) is skipped."})
	DataDir = declare(Setting{Env: "DATA_DIR", Flag: "data-dir", Kind: String, Default: "./.data", Verbs: AllVerbs,
		Meaning: "Home of the private PostgreSQL, its lock, `demo-keys.txt` and, by default, document files (`files/`)."})
	LogLevel = declare(Setting{Env: "LOG_LEVEL", Flag: "log-level", Kind: String, Default: "info", Verbs: AllVerbs,
		Meaning: "`debug`, `info`, `warn` or `error`."})
	LogFormat = declare(Setting{Env: "LOG_FORMAT", Flag: "log-format", Kind: String, Default: "text", Verbs: AllVerbs,
		Meaning: "`text` or `json`; one access-log line per request with its id, status, duration and SQL statement count."})
	Addr = declare(Setting{Env: "ADDR", Flag: "addr", Kind: String, Default: "127.0.0.1:8080", Verbs: Serve,
		Meaning: "Listen address."})
	PublicBaseURL = declare(Setting{Env: "PUBLIC_BASE_URL", Flag: "public-base-url", Kind: String, Default: "", Verbs: Serve,
		ShownDefault: "*(from the request)*",
		Meaning:      "Scheme and host of absolute links in `/v2` documents."})
	BodyLimit = declare(Setting{Env: "BODY_LIMIT", Flag: "body-limit", Kind: Int, Default: "1048576", Verbs: Serve,
		Meaning: "Largest request body in bytes (413 beyond)."})
	RateLimit = declare(Setting{Env: "RATE_LIMIT", Flag: "rate-limit", Kind: Int, Default: "6000", Verbs: Serve,
		Meaning: "Requests per minute per API key, bursts of a tenth (429 with `Retry-After` beyond); `0` is off. Counted per process, or over every instance with `REDIS_URL`."})
	GraphQLIntrospection = declare(Setting{Env: "GRAPHQL_INTROSPECTION", Flag: "graphql-introspection", Aliases: []string{"introspection"}, Kind: Bool, Default: "true", Verbs: Serve,
		Meaning: "Allow introspection."})
	GraphQLFastPath = declare(Setting{Env: "GRAPHQL_FAST_PATH", Flag: "graphql-fast-path", Aliases: []string{"fast-path"}, Kind: Bool, Default: "true", Verbs: Serve,
		Meaning: "Write query results on the generated fast path; `false` runs every query on gqlgen's executor alone ([GraphQL](docs/graphql.md))."})
	GraphQLComplexityLimit = declare(Setting{Env: "GRAPHQL_COMPLEXITY_LIMIT", Flag: "graphql-complexity-limit", Aliases: []string{"complexity-limit"}, Kind: Int, Default: "20000", Verbs: Serve,
		Meaning: "Largest operation complexity (lists multiply by `first`/`last`/`page.size`, nested to-many relations by 5)."})
	GraphQLDepthLimit = declare(Setting{Env: "GRAPHQL_DEPTH_LIMIT", Flag: "graphql-depth-limit", Aliases: []string{"depth-limit"}, Kind: Int, Default: "12", Verbs: Serve,
		Meaning: "Deepest selection (introspection fields not counted)."})
	GraphQLAliasLimit = declare(Setting{Env: "GRAPHQL_ALIAS_LIMIT", Flag: "graphql-alias-limit", Aliases: []string{"alias-limit"}, Kind: Int, Default: "15", Verbs: Serve,
		Meaning: "Most aliases in one operation."})
	GraphQLTokenLimit = declare(Setting{Env: "GRAPHQL_TOKEN_LIMIT", Flag: "graphql-token-limit", Aliases: []string{"token-limit"}, Kind: Int, Default: "10000", Verbs: Serve,
		Meaning: "Most parser tokens in one document."})
	LoaderWait = declare(Setting{Env: "LOADER_WAIT", Flag: "loader-wait", Kind: Duration, Default: "250µs", Verbs: Serve,
		Meaning: "How long a loader batch collects keys of single root loads (`shipment(id:)`, `node`); the load plan never waits."})
	PlaygroundAPIKey = declare(Setting{Env: "PLAYGROUND_API_KEY", Flag: "playground-api-key", Aliases: []string{"playground-key"}, Kind: String, Default: "", Verbs: Serve,
		Meaning: "Key prefilled in the playground (`make run` sets the demo admin key)."})
	ReferenceCacheTTL = declare(Setting{Env: "REFERENCE_CACHE_TTL", Flag: "reference-cache-ttl", Kind: Duration, Default: "1m", Verbs: Serve,
		Meaning: "How long reference rows (ports, metro areas, terminals, rail terminals, shipping lines) stay in memory; `0` reads them every time."})
	// 64 MiB holds about 1,700 dashboard answers of 38 KB (hundreds of
	// accounts' screens with a few variables each) and bounds what the
	// cache adds to the process' RSS.
	ResponseCacheBytes = declare(Setting{Env: "RESPONSE_CACHE_BYTES", Flag: "response-cache-bytes", Kind: Int, Default: "67108864", Verbs: Serve,
		Meaning: "Memory for answers of GraphQL queries and `/v2` GETs kept until the data they read changes (the change log drops them; least recently used out beyond it); `0` keeps none. ETags and 304s work either way ([operations](docs/operations.md))."})
	KeyCache = declare(Setting{Env: "KEY_CACHE", Flag: "key-cache", Kind: Int, Default: "10000", Verbs: Serve,
		Meaning: "API keys kept resolved in memory; revocations are pushed by the database. `0` looks every key up."})
	SubscriptionLimit = declare(Setting{Env: "SUBSCRIPTION_LIMIT", Flag: "subscription-limit", Kind: Int, Default: "100", Verbs: Serve,
		Meaning: "Subscriptions one key may hold open on one process (on all instances together with `REDIS_URL`); `0` is no limit."})
	RedisURL = declare(Setting{Env: "REDIS_URL", Flag: "redis-url", Kind: String, Default: "", Verbs: Serve,
		Meaning: "`redis://host:port/db`: count `RATE_LIMIT` and `SUBSCRIPTION_LIMIT` in Redis over every instance, and share accounts' last write positions for read replicas. Unreachable: per process until it answers, logged and counted in `shipgraph_redis_fallback_total` ([scaling](docs/scaling.md))."})
	SubscriptionQueue = declare(Setting{Env: "SUBSCRIPTION_QUEUE", Flag: "subscription-queue", Kind: Int, Default: "4096", Verbs: Serve,
		Meaning: "Events a subscription may fall behind before it is closed as a slow consumer."})
	SubscriptionKeepalive = declare(Setting{Env: "SUBSCRIPTION_KEEPALIVE", Flag: "subscription-keepalive", Aliases: []string{"keepalive"}, Kind: Duration, Default: "25s", Verbs: Serve,
		Meaning: "Keep-alive interval of WebSocket and SSE connections."})
	ChangeLogRetention = declare(Setting{Env: "CHANGE_LOG_RETENTION", Flag: "change-log-retention", Kind: Duration, Default: "168h", Verbs: Serve,
		Meaning: "How long the change log keeps changes for subscriptions to resume from (and webhooks to read); older ones are pruned in the background by one instance at a time, except those the webhook fan-out has not read yet (up to `CHANGE_LOG_WEBHOOK_CEILING`); `0` never prunes ([live updates](docs/live.md))."})
	ChangeLogWebhookCeiling = declare(Setting{Env: "CHANGE_LOG_WEBHOOK_CEILING", Flag: "change-log-webhook-ceiling", Kind: Duration, Default: "0", Verbs: Serve,
		ShownDefault: "`0` (4 × `CHANGE_LOG_RETENTION`)",
		Meaning:      "How long pruning keeps changes the webhook fan-out has not read; older ones are pruned anyway, logged at ERROR with their accounts and counted in `shipgraph_webhook_changes_lost_total{reason=\"pruned_unread\"}`. At least the retention; equal to it, pruning does not wait for the fan-out ([webhooks](docs/webhooks.md#what-can-be-lost-and-when))."})
	DemoActivity = declare(Setting{Env: "DEMO_ACTIVITY", Flag: "demo-activity", Kind: Duration, Default: "0", Verbs: Serve,
		ShownDefault: "`0` (off)",
		Meaning:      "Move a few demo containers one status step this often (`make run`: `4s`). Changes data: demos only."})
	BlobURL = declare(Setting{Env: "BLOB_URL", Flag: "blob-url", Kind: String, Default: "", Verbs: Serve | Seed,
		Meaning: "Store of document files: empty keeps them under `DATA_DIR/files` and Shipgraph serves their signed URLs; `s3://bucket?endpoint=…&region=…` uses S3 or an S3-compatible store and its presigned URLs ([files](docs/files.md))."})
	FileMaxSize = declare(Setting{Env: "FILE_MAX_SIZE", Flag: "file-max-size", Kind: Int, Default: "52428800", Verbs: Serve | Seed,
		Meaning: "Largest document file in bytes (413 beyond)."})
	DownloadURLTTL = declare(Setting{Env: "DOWNLOAD_URL_TTL", Flag: "download-url-ttl", Kind: Duration, Default: "5m", Verbs: Serve | Seed,
		Meaning: "How long a file download URL stays valid."})
	FileURLSecret = declare(Setting{Env: "FILE_URL_SECRET", Flag: "file-url-secret", Kind: String, Default: "", Verbs: Serve | Seed,
		Meaning: "Secret (32+ bytes) signing file URLs and upload ids; empty: a random one kept in `DATA_DIR/file-url-secret`."})
	WebhookLimit = declare(Setting{Env: "WEBHOOK_LIMIT", Flag: "webhook-limit", Kind: Int, Default: "25", Verbs: Serve,
		Meaning: "Most webhooks one account may have (422 beyond); `0` is no limit ([webhooks](docs/webhooks.md))."})
	WebhookAllowPrivateURLs = declare(Setting{Env: "WEBHOOK_ALLOW_PRIVATE_URLS", Flag: "webhook-allow-private-urls", Kind: Bool, Default: "false", Verbs: Serve,
		Meaning: "Let webhook URLs be `http` and point at loopback, private, link-local or metadata addresses, at creation and at delivery; local demos and tests only ([webhooks](docs/webhooks.md))."})
	WebhookWorkers = declare(Setting{Env: "WEBHOOK_WORKERS", Flag: "webhook-workers", Kind: Int, Default: "8", Verbs: Serve,
		Meaning: "Webhook deliveries in flight per process (at most 2 per webhook over all processes); `0`: this process delivers none ([webhooks](docs/webhooks.md#delivery))."})
	WebhookTimeout = declare(Setting{Env: "WEBHOOK_TIMEOUT", Flag: "webhook-timeout", Kind: Duration, Default: "10s", Verbs: Serve,
		Meaning: "How long one webhook delivery attempt may take."})
	WebhookRetryBase = declare(Setting{Env: "WEBHOOK_RETRY_BASE", Flag: "webhook-retry-base", Kind: Duration, Default: "30s", Verbs: Serve,
		Meaning: "Longest wait before the first retry, doubling per attempt (full jitter); the 12th failure is final."})
	WebhookQueueLimit = declare(Setting{Env: "WEBHOOK_QUEUE_LIMIT", Flag: "webhook-queue-limit", Kind: Int, Default: "10000", Verbs: Serve,
		Meaning: "Pending webhook notifications per account; beyond it new ones are recorded `failed` with the reason."})
	Carriers = declare(Setting{Env: "CARRIERS", Flag: "carriers", Kind: String, Default: "", Verbs: Serve,
		Meaning: "Comma-separated `SCAC=URL`: the carriers tracked, each with the base of its DCSA Track & Trace v2.2 API (before `/v2/events`); a request for a SCAC not listed is refused at create (422 at `scac`), and one created before its SCAC left the list fails (`shipping_line_unreachable`). `make run` points the demo SCACs at the carrier simulator ([tracking](docs/tracking.md), [carriers](docs/carriers.md))."})
	Carrier = declare(Setting{Env: "CARRIER_", Family: true, Verbs: Serve, Shown: "`CARRIER_<SCAC>_*`", ShownDefault: "*(see meaning)*",
		Meaning: "Per carrier of `CARRIERS`: `_API_KEY` and `_API_KEY_HEADER` (default `API-Key`), or OAuth2 client credentials `_CLIENT_ID`, `_CLIENT_SECRET`, `_TOKEN_URL`; `_RATE` requests a minute (600) and `_CONCURRENCY` in flight (8), over every instance with `REDIS_URL`; `_TIMEOUT` per request (30s)."})
	TrackingWorkers = declare(Setting{Env: "TRACKING_WORKERS", Flag: "tracking-workers", Kind: Int, Default: "50", Verbs: Serve,
		Meaning: "Carrier polls running at once in this process (most of them wait on the carrier or for their account's batch to commit: enough that a batch fills while the one before commits); `0`: this process polls nothing (it still enqueues)."})
	TrackingWriters = declare(Setting{Env: "TRACKING_WRITERS", Flag: "tracking-writers", Kind: Int, Default: "2", Verbs: Serve,
		Meaning: "Transactions writing finished polls at once in this process, each a batch of the queued polls of several accounts (up to 32); about the cores the database gives this process: each transaction is one backend on one core, and more make smaller batches that wait on each other's locks. On Citus each account has a transaction of its own, unbounded."})
	TrackingPollInterval = declare(Setting{Env: "TRACKING_POLL_INTERVAL", Flag: "tracking-poll-interval", Kind: Duration, Default: "1h", Verbs: Serve,
		Meaning: "How often a tracked request is polled again, until tracking stops."})
	TrackingAwaitingInterval = declare(Setting{Env: "TRACKING_AWAITING_INTERVAL", Flag: "tracking-awaiting-interval", Kind: Duration, Default: "30m", Verbs: Serve,
		Meaning: "How often a request awaiting its manifest is polled again."})
	TrackingRetryBase = declare(Setting{Env: "TRACKING_RETRY_BASE", Flag: "tracking-retry-base", Kind: Duration, Default: "10s", Verbs: Serve,
		Meaning: "Delay before the first retry after a carrier failure, doubling per failure (jittered)."})
	TrackingMaxAttempts = declare(Setting{Env: "TRACKING_MAX_ATTEMPTS", Flag: "tracking-max-attempts", Kind: Int, Default: "14", Verbs: Serve,
		Meaning: "Failed polls in a row that end a request never tracked (`failed`, `retries_exhausted`): about a day at the default base."})
	TrackingScheduleEvery = declare(Setting{Env: "TRACKING_SCHEDULE_EVERY", Flag: "tracking-schedule-every", Kind: Duration, Default: "5s", Verbs: Serve,
		Meaning: "How often one instance (the leader) enqueues the polls of requests due; every instance that polls also enqueues one round as its job engine starts, without waiting for the leader."})
	TrackingPollTimeout = declare(Setting{Env: "TRACKING_POLL_TIMEOUT", Flag: "tracking-poll-timeout", Kind: Duration, Default: "1m", Verbs: Serve,
		Meaning: "Deadline of one poll (carrier and database)."})
	TrackingRescueAfter = declare(Setting{Env: "TRACKING_RESCUE_AFTER", Flag: "tracking-rescue-after", Kind: Duration, Default: "5m", Verbs: Serve,
		Meaning: "A poll still running this long (its process died) runs again; more than `TRACKING_POLL_TIMEOUT`."})
	TrackingFetchInterval = declare(Setting{Env: "TRACKING_FETCH_INTERVAL", Flag: "tracking-fetch-interval", Kind: Duration, Default: "1s", Verbs: Serve,
		Meaning: "How often a process looks for jobs (polls, document processing) enqueued by other instances."})
	TrackingStopAfterArrival = declare(Setting{Env: "TRACKING_STOP_AFTER_ARRIVAL", Flag: "tracking-stop-after-arrival", Kind: Duration, Default: "1080h", Verbs: Serve,
		Meaning: "Tracking stops this long after the shipment arrived (`past_arrival_window`); `0` never."})
	TrackingMaxResponse = declare(Setting{Env: "TRACKING_MAX_RESPONSE", Flag: "tracking-max-response", Kind: Int, Default: "8388608", Verbs: Serve,
		Meaning: "Largest carrier answer page in bytes; beyond it the poll writes nothing and is retried."})
	TrackingMaxEvents = declare(Setting{Env: "TRACKING_MAX_EVENTS", Flag: "tracking-max-events", Kind: Int, Default: "5000", Verbs: Serve,
		Meaning: "Most events of one carrier answer; beyond it the poll writes nothing and is retried."})
	TrackingRefreshLimit = declare(Setting{Env: "TRACKING_REFRESH_LIMIT", Flag: "tracking-refresh-limit", Kind: Int, Default: "10", Verbs: Serve,
		Meaning: "Container refreshes (`PATCH /v2/containers/{id}/refresh`) a minute per API key (429 with `Retry-After` beyond), over every instance with `REDIS_URL`."})
	DocumentWorkers = declare(Setting{Env: "DOCUMENT_WORKERS", Flag: "document-workers", Kind: Int, Default: "2", Verbs: Serve,
		Meaning: "Document processing jobs (text extraction, classification, linking, rotation; [decisions](docs/decisions.md)) running at once in this process, on the process' one job engine (River); `0`: this process processes none (uploads still enqueue)."})
	SyncWorkers = declare(Setting{Env: "SYNC_WORKERS", Flag: "sync-workers", Kind: Int, Default: "4", Verbs: Serve,
		Meaning: "Data sync destinations synced at once by this process, on the process' one job engine; `0`: this process syncs none ([data sync](docs/datasync.md))."})
	SyncSecretKey = declare(Setting{Env: "SYNC_SECRET_KEY", Flag: "sync-secret-key", Kind: String, Default: "", Verbs: Serve,
		Meaning: "32 bytes in base64 (`openssl rand -base64 32`) sealing data sync destination URLs (AES-256-GCM) in the database; empty: no destination can be added ([data sync](docs/datasync.md))."})
	ShutdownTimeout = declare(Setting{Env: "SHUTDOWN_TIMEOUT", Flag: "shutdown-timeout", Kind: Duration, Default: "10s", Verbs: Serve,
		Meaning: "How long `serve` drains requests on SIGINT/SIGTERM."})
	ShutdownDelay = declare(Setting{Env: "SHUTDOWN_DELAY", Flag: "shutdown-delay", Kind: Duration, Default: "5s", Verbs: Serve,
		Meaning: "On SIGTERM, keep serving this long with `/readyz` 503 and keep-alives off, then shut down ([failures](docs/failures.md))."})
	BodyTimeout = declare(Setting{Env: "BODY_TIMEOUT", Flag: "body-timeout", Kind: Duration, Default: "30s", Verbs: Serve,
		Meaning: "How long a request body may take to arrive after its headers; `0` is no limit."})
	RequestTimeout = declare(Setting{Env: "REQUEST_TIMEOUT", Flag: "request-timeout", Kind: Duration, Default: "30s", Verbs: Serve,
		Meaning: "Deadline of one API request (subscriptions excepted): its statements are cancelled and it answers 503; `0` is none."})
	DBStatementTimeout = declare(Setting{Env: "DB_STATEMENT_TIMEOUT", Flag: "db-statement-timeout", Kind: Duration, Default: "30s", Verbs: Serve,
		Meaning: "`statement_timeout` of the server's database sessions; `0` is none."})
	DBConnectTimeout = declare(Setting{Env: "DB_CONNECT_TIMEOUT", Flag: "db-connect-timeout", Kind: Duration, Default: "5s", Verbs: AllVerbs,
		Meaning: "How long a new database connection may take, handshake included."})
	DBKeepalive = declare(Setting{Env: "DB_KEEPALIVE", Flag: "db-keepalive", Kind: Duration, Default: "30s", Verbs: AllVerbs,
		Meaning: "TCP keepalive idle time of database connections; `0` is the system's."})
	EmbeddedFast = declare(Setting{Env: "EMBEDDED_FAST", Flag: "embedded-fast", Kind: Bool, Default: "false", Verbs: AllVerbs,
		Meaning: "Run the private PostgreSQL without `fsync`, `synchronous_commit` and `full_page_writes` (demos only: a crash can lose acknowledged writes)."})
	GraphQLFieldLimit = declare(Setting{Env: "GRAPHQL_FIELD_LIMIT", Flag: "graphql-field-limit", Aliases: []string{"field-limit"}, Kind: Int, Default: "5000", Verbs: Serve,
		Meaning: "Most fields of one operation once its fragments are expanded, counted before validation."})
	GraphQLResponseLimit = declare(Setting{Env: "GRAPHQL_RESPONSE_LIMIT", Flag: "graphql-response-limit", Aliases: []string{"response-limit"}, Kind: Int, Default: "33554432", Verbs: Serve,
		Meaning: "Largest GraphQL response in bytes; the connection is aborted past it; `0` is no cap."})
	GraphQLTrustedDocuments = declare(Setting{Env: "GRAPHQL_TRUSTED_DOCUMENTS", Flag: "graphql-trusted-documents", Aliases: []string{"trusted-documents"}, Kind: String, Default: "", Verbs: Serve,
		Meaning: "Path of a trusted documents manifest (`@apollo/generate-persisted-query-manifest`'s, or GraphQL Codegen's persisted documents): its operations run by id (`extensions.persistedQuery.sha256Hash`, POST or GET). Checked against the schema at start ([GraphQL](docs/graphql.md))."})
	GraphQLTrustedOnly = declare(Setting{Env: "GRAPHQL_TRUSTED_ONLY", Flag: "graphql-trusted-only", Aliases: []string{"trusted-only"}, Kind: Bool, Default: "false", Verbs: Serve,
		Meaning: "Run only the operations of `GRAPHQL_TRUSTED_DOCUMENTS`; others are refused (`PERSISTED_QUERY_NOT_IN_LIST`, `QUERY_NOT_IN_SAFELIST`)."})
	GraphQLTrustedExemptAdmin = declare(Setting{Env: "GRAPHQL_TRUSTED_EXEMPT_ADMIN", Flag: "graphql-trusted-exempt-admin", Aliases: []string{"trusted-exempt-admin"}, Kind: Bool, Default: "false", Verbs: Serve,
		Meaning: "With `GRAPHQL_TRUSTED_ONLY`, admin keys may still run any operation (the playground, scripts)."})
	GraphQLCostBudget = declare(Setting{Env: "GRAPHQL_COST_BUDGET", Flag: "graphql-cost-budget", Aliases: []string{"cost-budget"}, Kind: Int, Default: "0", Verbs: Serve,
		Meaning: "Complexity a key may spend a minute, all of it at once: each operation is charged its complexity (`Query-Cost`, `Query-Cost-Remaining`, `Query-Cost-Limit` headers), 429 `COST_BUDGET_EXCEEDED` with `Retry-After` beyond; `0` is off. Counted per process, or over every instance with `REDIS_URL`."})
	OTel = declare(Setting{Env: "OTEL_", Family: true, Verbs: Serve,
		Shown:        "`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, …",
		ShownDefault: "*(unset: no tracing)*",
		Meaning:      "OpenTelemetry traces (HTTP request, GraphQL operation, SQL statement spans) over OTLP/HTTP; on when any `OTEL_*` variable is set ([tracing](docs/tracing.md))."})
	GOGC = declare(Setting{Env: "GOGC", Flag: "", Kind: String, Default: "400", Verbs: AllVerbs,
		Meaning: "The Go runtime's own variable; unset, Shipgraph uses 400 instead of 100 ([scale](docs/scale.md))."})
	GOMEMLIMIT = declare(Setting{Env: "GOMEMLIMIT", Flag: "", Kind: String, Default: "1GiB", Verbs: AllVerbs,
		Meaning: "The Go runtime's soft memory limit; unset, Shipgraph sets 1 GiB."})
	MCPURL = declare(Setting{Env: "SHIPGRAPH_URL", Flag: "shipgraph-url", Aliases: []string{"url"}, Kind: String, Default: "http://127.0.0.1:8080/mcp", Verbs: MCP,
		Meaning: "The `/mcp` endpoint `shipgraph mcp` forwards stdio to ([MCP](docs/mcp.md))."})
	MCPAPIKey = declare(Setting{Env: "SHIPGRAPH_API_KEY", Flag: "", Kind: String, Default: "", Verbs: MCP,
		Meaning: "The API key `shipgraph mcp` sends; from the environment only (a flag would show in `ps`)."})
	SeedShipments = declare(Setting{Env: "SEED_SHIPMENTS", Flag: "seed-shipments", Aliases: []string{"shipments"}, Kind: Int, Default: "200", Verbs: Seed,
		Meaning: "Demo shipments written by `seed`."})
	DemoSeed = declare(Setting{Env: "SEED", Flag: "seed", Kind: Int, Default: "1", Verbs: Seed,
		Meaning: "Seed of the demo data and keys."})
)
