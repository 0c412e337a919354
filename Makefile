# Shipgraph. `make run` serves the demo; `make test` runs every test against
# real PostgreSQL. See README.md.
GO          ?= go
BIN         := bin/shipgraph
export CGO_ENABLED ?= 0

.PHONY: all build assets ops run test s3server duckdb test-browser audit generate check-generate lint bench bench-scale clean settings budgets stress image deploy-test chart-docs test-citus

all: build

# GraphiQL assets come from the npm registry at build time and are embedded;
# without npm the binary falls back to a CDN-hosted playground page.
assets:
	@echo "make: fetching the playground's assets (npm; cached after the first time)"
	@scripts/fetch-playground-assets.sh || echo "warning: playground assets not fetched; the playground will load GraphiQL from a CDN" >&2

# The operations page (/ops): its TypeScript and operations, bundled with
# esbuild from pinned npm packages into web/ops/dist/ and embedded; without
# npm the binary still builds and /ops says the page was not built.
ops:
	@echo "make: bundling the operations page (npm, esbuild; cached after the first time)"
	@scripts/build-ops.sh || echo "warning: the operations page was not built; /ops will say so" >&2

build: assets ops
	@if [ ! -x $(BIN) ]; then echo "make: building $(BIN); the first build compiles every dependency and takes a few minutes"; fi
	$(GO) build -tags grpcnotrace -o $(BIN) .

# Build, start the embedded PostgreSQL if DATABASE_URL is unset, migrate,
# seed the demo data when the database is empty, print the demo keys, serve.
run: build
	@scripts/run.sh

# The playground's assets are fetched first: with npm there (CI installs
# it) they must arrive and TestEmbeddedAssets must run (it fails rather
# than skips under SHIPGRAPH_REQUIRE_ASSETS=1); without npm it skips, saying why.
test: s3server
	@if command -v npm >/dev/null; then scripts/fetch-playground-assets.sh; scripts/build-ops.sh; scripts/duckdb.sh --install; fi
	@if command -v npm >/dev/null; then export SHIPGRAPH_REQUIRE_ASSETS=1; fi; $(GO) test -count=1 -timeout 25m ./...

# The test suite against a Citus coordinator and two workers on loopback
# (scripts/citus-cluster.sh starts them, installing ../shared/citus), every
# test database distributed by account; scripts/citus-skip.txt names the
# tests skipped there and why. docs/scaling.md, "Distributed PostgreSQL".
test-citus: s3server
	@scripts/test-citus.sh

# The settings table (docs/settings.md), rewritten from config/settings.go
# (a test fails when they differ).
settings:
	$(GO) run ./config/readme docs/settings.md

# The statement-budget table (docs/scale.md), rewritten from
# testkit/budgets, the budgets the tests hold (a test fails when they differ).
budgets:
	$(GO) run ./testkit/budgets/budgetsdoc docs/scale.md

# The images localhost/shipgraph (FROM scratch, static binary, user 65532)
# and localhost/shipgraph-demo (Debian's PostgreSQL 15 + make run), built
# with podman pulling nothing (docs/deploy.md). IMAGES=shipgraph: the server only.
image:
	@scripts/image.sh

# Both images, then the Helm chart's rendered Deployment and migration Job
# under podman kube play against PostgreSQL and Redis pods (docs/deploy.md).
deploy-test: image
	@scripts/deploy-test.sh

# The chart's values table (docs/deploy.md), rewritten from
# deploy/helm/shipgraph/values.yaml (a test fails when they differ).
chart-docs:
	$(GO) run ./deploy/valuesdoc docs/deploy.md

# The timing-sensitive tests, 20 times each under -race, with the CPU kept
# busy (stress-ng, or two busy loops without it), one package at a time.
# Not in CI: it takes minutes. STRESS_COUNT=5 for a quicker round.
STRESS_COUNT ?= 20
stress:
	@scripts/stress.sh $(STRESS_COUNT)

# DuckDB (npm @duckdb/node-api) in a cache directory outside the repository:
# the data sync's tests read its Parquet files back with it.
duckdb:
	@scripts/duckdb.sh --install

# The real S3-compatible server of the file tests (versitygw, pinned in
# tools/s3server's own go.mod), built into bin/ before the tests need it.
s3server:
	cd tools/s3server && $(GO) build -o ../../bin/versitygw github.com/versity/versitygw/cmd/versitygw

# The playground in headless Chromium (Debian's chromium package) against
# the real server with no network beyond loopback; the npm checks (the
# graphql-http audit, the Apollo Federation gateway composition, Apollo Client
# 4 reading @defer: scripts/apollo-defer-client.sh; the official MCP clients,
# TypeScript SDK and Inspector CLI: scripts/mcp-client.sh) too.
test-browser: assets ops
	@scripts/ensure-chromium.sh
	$(GO) test -count=1 -tags browser -run Browser -v ./graph/playground/... ./testkit/browsertest .

# GraphQL-over-HTTP audit alone (npm graphql-http) against the real server on
# a private database; make test-browser runs it too.
audit:
	$(GO) test -count=1 -tags browser -run 'BrowserGraphQLHTTPAudit' -v .

generate:
	scripts/generate.sh

check-generate: generate
	@git diff --exit-code -- . || (echo "generated code is stale: run 'make generate' and commit" >&2; exit 1)
	@test -z "$$(git status --porcelain --untracked-files=all -- graph schema.graphqls)" || (git status --porcelain -- graph; echo "generate left untracked files" >&2; exit 1)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); test -z "$$out" || (echo "gofmt needed:" $$out >&2; exit 1)
	$(GO) vet ./...
	$(GO) vet -tags browser ./...
	$(GO) tool staticcheck ./...

# Go benchmarks, then the list latencies at 20,000 and 1,000,000 shipments
# (bench-scale; SCALE=0 skips it).
# ns/op, B/op, allocs/op, statements and goroutines per request through the
# whole chain (graph/bench_test.go), then the list latencies at scale.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 200x ./...
	@if [ "$(SCALE)" != 0 ]; then $(MAKE) --no-print-directory bench-scale; fi

# One request at a time against a private PostgreSQL under SCALE_DIR
# (default /var/tmp/shipgraph-scale), seeded once per size (a 1 M seed
# takes minutes: docs/scale.md, "Seeding") and reused; prints medians. See scripts/bench-scale.sh.
bench-scale: build
	@BIN=$(BIN) scripts/bench-scale.sh

clean:
	rm -rf bin
