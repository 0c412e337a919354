// Command shipgraph serves the shipment-tracking resource model as GraphQL
// (with a GraphiQL playground) and as the /v2 JSON:API of existing clients,
// from one binary in front of PostgreSQL.
//
//	shipgraph serve | migrate | seed | token create | token revoke | carrier-sim | psql
//
// main parses the command line and hands it to the verb; the verbs live in
// package verb, the process is built in one place (package app), every
// setting is declared once (package config).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	// Time zones compiled in: the image has no /usr/share/zoneinfo.
	_ "time/tzdata"

	"shipgraph/app"
	"shipgraph/carrier/sim"
	"shipgraph/verb"
)

// verbs is every verb: its name, its synopsis in the usage and its
// function. Adding a verb is one line here.
var verbs = []struct {
	name, synopsis string
	run            func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}{
	{"serve", "serve   [flags]   migrate, then serve HTTP on ADDR", verb.Serve},
	{"migrate", "migrate [flags]   apply database migrations (idempotent)", verb.Migrate},
	{"seed", "seed    [flags]   fill an empty database with demo data; prints the demo API keys", verb.Seed},
	{"token", "token create --account ID|SLUG --role admin|member|viewer\n                              create an API key and print it once\n  shipgraph token revoke --account ID|SLUG --id TOKEN_ID\n                              revoke an API key", verb.Token},
	{"carrier-sim", "carrier-sim --addr HOST:PORT --seed N\n                              a carrier simulator speaking DCSA Track & Trace v2.2 (tests, demos: docs/carriers.md)", sim.Main},
	{"mcp", "mcp     [--shipgraph-url URL]\n                              MCP over stdio for desktop clients, forwarded to a Shipgraph /mcp (key: SHIPGRAPH_API_KEY)", verb.MCP},
	{"psql", "psql    [flags] [-- PSQL_ARGS]\n                              psql session on the database (the embedded one when DATABASE_URL is unset)", verb.Psql},
}

func usage() string {
	var b strings.Builder
	b.WriteString("shipgraph: GraphQL and /v2 JSON:API over shipment-tracking data.\n\nUsage:\n")
	for _, v := range verbs {
		fmt.Fprintf(&b, "  shipgraph %s\n", v.synopsis)
	}
	b.WriteString("\nRun 'shipgraph VERB --help' for the flags of a verb. Every flag also reads an\nenvironment variable (shown in its help).\n")
	return b.String()
}

func main() {
	app.GCDefaults()
	// SIGTERM cancels ctx and the server drains (SHUTDOWN_DELAY); SIGINT
	// (Ctrl-C) cancels it with app.ErrInterrupted: it stops at once after the
	// requests in flight. The embedded PostgreSQL stops, a seed in
	// progress rolls back. Signals stay caught until the verb returns (a
	// Ctrl-C in psql belongs to psql).
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			if s == os.Interrupt {
				cancel(app.ErrInterrupted)
			} else {
				cancel(errors.New("terminated"))
			}
		}
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel(nil)
	os.Exit(code)
}

// run executes one verb and returns the process exit code: 0 ok, 1 failure,
// 2 usage error. Errors are reported as one line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 0 {
			fmt.Fprint(stderr, usage())
			return 2
		}
		fmt.Fprint(stdout, usage())
		return 0
	}
	for _, v := range verbs {
		if v.name != args[0] {
			continue
		}
		err := v.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, verb.ErrUsage):
			return 2
		}
		fmt.Fprintf(stderr, "shipgraph %s: %v\n", args[0], err)
		return 1
	}
	fmt.Fprintf(stderr, "shipgraph: unknown verb %q\n\n%s", args[0], usage())
	return 2
}
