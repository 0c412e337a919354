package config

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

// Every flag is named after its variable (GRAPHQL_COST_BUDGET:
// --graphql-cost-budget); a former name still sets the same value and is
// not shown in help; help goes to stdout, a bad flag to stderr.
func TestFlagsNamedAfterVariables(t *testing.T) {
	for _, s := range all {
		if s.Flag != "" && s.Flag != strings.ToLower(strings.ReplaceAll(s.Env, "_", "-")) {
			t.Errorf("%s: flag --%s", s.Env, s.Flag)
		}
	}
	fs := flag.NewFlagSet("shipgraph serve", flag.ContinueOnError)
	vs := bind(fs, Serve, func(string) (string, bool) { return "", false })
	var out, errOut bytes.Buffer
	if err := Parse(fs, []string{"--cost-budget", "7", "--keepalive", "3s"}, &out, &errOut, false); err != nil {
		t.Fatal(err)
	}
	if vs.Int(GraphQLCostBudget) != 7 || vs.Duration(SubscriptionKeepalive).String() != "3s" {
		t.Errorf("former names: budget %d, keepalive %v", vs.Int(GraphQLCostBudget), vs.Duration(SubscriptionKeepalive))
	}
	out.Reset()
	if err := Parse(fs, []string{"--help"}, &out, &errOut, false); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	help := out.String()
	if !strings.Contains(help, "--graphql-cost-budget int") || strings.Contains(help, "--cost-budget") || errOut.Len() != 0 {
		t.Errorf("help on stdout %q, stderr %q", help, errOut.String())
	}
	if !strings.Contains(help, "(default 0: 4 × CHANGE_LOG_RETENTION)") {
		t.Errorf("the webhook ceiling's default is not shown as it is:\n%s", help)
	}
	out.Reset()
	if err := Parse(fs, []string{"--nope"}, &out, &errOut, false); !errors.Is(err, ErrUsage) || out.Len() != 0 || !strings.Contains(errOut.String(), "nope") {
		t.Errorf("a bad flag: %v, stdout %q, stderr %q", err, out.String(), errOut.String())
	}
}
