package app

import (
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"

	"shipgraph/carrier/tracking"
	"shipgraph/config"
	"shipgraph/db"
	"shipgraph/files"
	"shipgraph/graph/gqlhttp"
	"shipgraph/live"
	"shipgraph/load"
	"shipgraph/resolve"
	"shipgraph/webhook"
)

// TestDefaultsAgree holds the declared defaults (config/settings.go and
// docs/settings.md's table) equal to the packages' own DefaultConfig values, which
// their tests use: a default changed in one place fails here.
func TestDefaultsAgree(t *testing.T) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, s := range config.All() {
			if k == s.Env && s.Flag != "" {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
		}
	}
	v := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), config.Serve)
	hc := HTTPConfig(v, slog.Default())
	tc, err := trackingConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	td := tracking.Default
	g := gqlhttp.DefaultHandlerConfig
	type pair struct {
		name      string
		got, want any
	}
	for _, p := range []pair{
		{"GRAPHQL_INTROSPECTION", hc.GraphQL.Introspection, g.Introspection},
		{"GRAPHQL_FAST_PATH", hc.GraphQL.NoFastPath, g.NoFastPath},
		{"GRAPHQL_COMPLEXITY_LIMIT", hc.GraphQL.ComplexityLimit, g.ComplexityLimit},
		{"GRAPHQL_DEPTH_LIMIT", hc.GraphQL.DepthLimit, g.DepthLimit},
		{"GRAPHQL_ALIAS_LIMIT", hc.GraphQL.AliasLimit, g.AliasLimit},
		{"GRAPHQL_TOKEN_LIMIT", hc.GraphQL.TokenLimit, g.TokenLimit},
		{"GRAPHQL_FIELD_LIMIT", hc.GraphQL.FieldLimit, g.FieldLimit},
		{"LOADER_WAIT", hc.Resolver.Loaders.Wait, load.DefaultLoaderConfig.Wait},
		{"SUBSCRIPTION_LIMIT", hc.Live.MaxPerKey, live.DefaultConfig.MaxPerKey},
		{"SUBSCRIPTION_QUEUE", hc.Live.Queue, live.DefaultConfig.Queue},
		{"SUBSCRIPTION_KEEPALIVE", hc.Live.KeepAlive, live.DefaultConfig.KeepAlive},
		{"WEBHOOK_LIMIT", hc.Resolver.Webhooks.Limit, resolve.DefaultWebhookLimit},
		{"WEBHOOK_WORKERS", v.Int(config.WebhookWorkers), webhook.Defaults.Workers},
		{"WEBHOOK_TIMEOUT", v.Duration(config.WebhookTimeout), webhook.Defaults.Timeout},
		{"WEBHOOK_RETRY_BASE", v.Duration(config.WebhookRetryBase), webhook.Defaults.RetryBase},
		{"WEBHOOK_QUEUE_LIMIT", v.Int(config.WebhookQueueLimit), webhook.Defaults.QueueLimit},
		{"FILE_MAX_SIZE", v.Int64(config.FileMaxSize), files.DefaultConfig.MaxSize},
		{"DOWNLOAD_URL_TTL", v.Duration(config.DownloadURLTTL), files.DefaultConfig.DownloadTTL},
		{"DB_CONNECT_TIMEOUT", v.Duration(config.DBConnectTimeout), db.DefaultOptions.ConnectTimeout},
		{"DB_STATEMENT_TIMEOUT", v.Duration(config.DBStatementTimeout), db.DefaultOptions.StatementTimeout},
		{"DB_KEEPALIVE", v.Duration(config.DBKeepalive), db.DefaultOptions.KeepAlive},
		{"DATABASE_REPLICA_WAIT", v.Duration(config.DatabaseReplicaWait), db.DefaultReplicaWait},
		{"DATABASE_REPLICA_MAX_LAG", v.Duration(config.DatabaseReplicaMaxLag), db.DefaultReplicaMaxLag},
		{"TRACKING_WORKERS", tc.Workers, td.Workers},
		{"TRACKING_WRITERS", tc.Writers, td.Writers},
		{"TRACKING_POLL_INTERVAL", tc.PollInterval, td.PollInterval},
		{"TRACKING_AWAITING_INTERVAL", tc.AwaitingInterval, td.AwaitingInterval},
		{"TRACKING_RETRY_BASE", tc.RetryBase, td.RetryBase},
		{"TRACKING_MAX_ATTEMPTS", tc.MaxAttempts, td.MaxAttempts},
		{"TRACKING_SCHEDULE_EVERY", tc.ScheduleEvery, td.ScheduleEvery},
		{"TRACKING_POLL_TIMEOUT", tc.PollTimeout, td.PollTimeout},
		{"TRACKING_RESCUE_AFTER", tc.RescueAfter, td.RescueAfter},
		{"TRACKING_STOP_AFTER_ARRIVAL", tc.StopAfterArrival, td.StopAfterArrival},
		{"TRACKING_MAX_RESPONSE", tc.MaxResponse, td.MaxResponse},
		{"TRACKING_MAX_EVENTS", tc.MaxEvents, td.MaxEvents},
		{"TRACKING_REFRESH_LIMIT", tc.RefreshLimit, td.RefreshLimit},
	} {
		if p.got != p.want {
			t.Errorf("%s: declared default gives %v, the package's default is %v", p.name, p.got, p.want)
		}
	}
}

// TestTrackingConfig: CARRIERS and each carrier's CARRIER_<SCAC>_* family
// members reach the engine's configuration; a bad value is an error that
// names the setting.
func TestTrackingConfig(t *testing.T) {
	t.Setenv("CARRIERS", "maeu=http://127.0.0.1:9/MAEU, MSCU=https://tnt.example/api/")
	t.Setenv("CARRIER_MAEU_API_KEY", "k1")
	t.Setenv("CARRIER_MAEU_RATE", "5")
	t.Setenv("CARRIER_MSCU_CLIENT_ID", "id")
	t.Setenv("CARRIER_MSCU_CLIENT_SECRET", "secret")
	t.Setenv("CARRIER_MSCU_TOKEN_URL", "https://tnt.example/token")
	v := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), config.Serve)
	c, err := trackingConfig(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Carriers) != 2 {
		t.Fatalf("carriers %+v", c.Carriers)
	}
	m, s := c.Carriers[0], c.Carriers[1]
	if m.SCAC != "MAEU" || m.BaseURL != "http://127.0.0.1:9/MAEU" || m.APIKey != "k1" || m.APIKeyHeader != "API-Key" || m.RatePerMinute != 5 ||
		m.Concurrency != tracking.DefaultCarrier.Concurrency {
		t.Errorf("MAEU: %+v", m)
	}
	if s.SCAC != "MSCU" || s.BaseURL != "https://tnt.example/api" || s.ClientID != "id" || s.ClientSecret != "secret" || s.TokenURL != "https://tnt.example/token" {
		t.Errorf("MSCU: %+v", s)
	}
	for env, val := range map[string]string{"CARRIERS": "MAEU", "CARRIER_MAEU_TIMEOUT": "soon"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, val)
			v := config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), config.Serve)
			if _, err := trackingConfig(v); err == nil || !strings.Contains(err.Error(), env) {
				t.Errorf("%s=%s: err %v, want one naming %s", env, val, err, env)
			}
		})
	}
}
