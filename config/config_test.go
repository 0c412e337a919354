package config

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

// TestREADMETable fails when the settings table (docs/settings.md, which
// the README links to) is not the one the declaration gives: run make
// settings.
func TestREADMETable(t *testing.T) {
	if b, err := os.ReadFile("../README.md"); err != nil || !bytes.Contains(b, []byte("(docs/settings.md)")) {
		t.Fatalf("README.md does not link to docs/settings.md (%v)", err)
	}
	b, err := os.ReadFile("../docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := ReplaceTable(string(b))
	if !ok {
		t.Fatalf("docs/settings.md has no settings markers %q … %q", BeginMarker, EndMarker)
	}
	if want != string(b) {
		t.Fatalf("docs/settings.md's table differs from config/settings.go: run make settings (go generate ./config)")
	}
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestParsingRules holds the README's rules: a flag over its variable over
// the default; booleans only on exactly "true"; numbers and durations that
// do not parse fall back to the default.
func TestParsingRules(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	v := bind(fs, Serve, env(map[string]string{
		"EMBEDDED_FAST":          "1",
		"GRAPHQL_INTROSPECTION":  "TRUE",
		"RATE_LIMIT":             "lots",
		"SHUTDOWN_DELAY":         "2s",
		"SUBSCRIPTION_KEEPALIVE": "soon",
		"ADDR":                   "127.0.0.1:1",
		"BODY_LIMIT":             "77",
	}))
	if err := fs.Parse([]string{"--addr", "127.0.0.1:2", "--webhook-allow-private-urls"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got, want any
		what      string
	}{
		{v.Bool(EmbeddedFast), false, "EMBEDDED_FAST=1"},
		{v.Bool(GraphQLIntrospection), false, "GRAPHQL_INTROSPECTION=TRUE"},
		{v.Bool(GraphQLFastPath), true, "GRAPHQL_FAST_PATH unset"},
		{v.Bool(WebhookAllowPrivateURLs), true, "--webhook-allow-private-urls"},
		{v.Int(RateLimit), 6000, "RATE_LIMIT=lots"},
		{v.Int64(BodyLimit), int64(77), "BODY_LIMIT=77"},
		{v.Duration(ShutdownDelay), 2 * time.Second, "SHUTDOWN_DELAY=2s"},
		{v.Duration(SubscriptionKeepalive), 25 * time.Second, "SUBSCRIPTION_KEEPALIVE=soon"},
		{v.String(Addr), "127.0.0.1:2", "--addr over ADDR"},
		{v.String(DataDir), "./.data", "DATA_DIR unset"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	// A flag that does not parse is a usage error, not a fallback.
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(&bytes.Buffer{})
	bind(fs, Serve, env(nil))
	if err := fs.Parse([]string{"--rate-limit", "lots"}); err == nil {
		t.Error("--rate-limit lots: no error")
	}
}

// TestVerbs: a verb gets the flags of its settings and no others, and
// --help lists the variables read from the environment only.
func TestVerbs(t *testing.T) {
	fs := flag.NewFlagSet("shipgraph migrate", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	bind(fs, Migrate, env(nil))
	if fs.Lookup("database-url") == nil || fs.Lookup("addr") != nil || fs.Lookup("shipments") != nil {
		t.Errorf("migrate's flags: database-url %v, addr %v, shipments %v", fs.Lookup("database-url") != nil, fs.Lookup("addr") != nil, fs.Lookup("shipments") != nil)
	}
	fs.Usage()
	if !strings.Contains(out.String(), "GOGC") || !strings.Contains(out.String(), "(DATABASE_URL)") {
		t.Errorf("--help:\n%s", out.String())
	}
	fs = flag.NewFlagSet("shipgraph seed", flag.ContinueOnError)
	bind(fs, Seed, env(nil))
	for _, f := range []string{"shipments", "seed", "blob-url", "data-dir"} {
		if fs.Lookup(f) == nil {
			t.Errorf("seed has no --%s", f)
		}
	}
}

// TestFamily: a family's members by the rest of their names.
func TestFamily(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "x")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	v := Bind(fs, Serve)
	if got := v.Family(OTel)["SERVICE_NAME"]; got != "x" {
		t.Errorf("OTEL_SERVICE_NAME: got %q", got)
	}
}

// TestDeclarations: every setting has a meaning and verbs, flags are
// lower-case with dashes, variables upper-case.
func TestDeclarations(t *testing.T) {
	for _, s := range All() {
		if s.Meaning == "" || s.Verbs == 0 {
			t.Errorf("%s: no meaning or no verbs", s.Env)
		}
		if s.Env != strings.ToUpper(s.Env) || s.Flag != strings.ToLower(s.Flag) || strings.Contains(s.Flag, "_") {
			t.Errorf("%s / --%s: variables are UPPER_CASE, flags lower-case", s.Env, s.Flag)
		}
	}
}
