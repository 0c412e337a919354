#!/usr/bin/env bash
# make generate: gqlgen, then list marshalling in the request's goroutine,
# then the /v2 attributes.
#
# gqlgen marshals every list element in a goroutine of its own
# (graphql.MarshalSliceConcurrently), for resolvers that block. Shipgraph's
# list elements never block (the load plan attaches relationships before
# marshalling; see graph/executor/slices.go), so the generated calls are pointed at
# executor.marshalSlice, which marshals them in order. The rewrite is checked:
# if gqlgen's output changes shape, this fails instead of silently keeping
# the goroutines.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./tools/gqlgen
f=graph/executor/generated.go
from='graphql.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context.Context, i int) graphql.Marshaler {'
n=$(grep -cF "$from" "$f" || true)
if [ "$n" -eq 0 ]; then
  echo "generate: $f has no '$from' to rewrite; gqlgen's output changed, update scripts/generate.sh and graph/executor/slices.go" >&2
  exit 1
fi
sed -i 's/graphql\.MarshalSliceConcurrently(ctx, len(v), 0, false, func(ctx context\.Context, i int) graphql\.Marshaler {/marshalSlice(ctx, len(v), func(ctx context.Context, i int) graphql.Marshaler {/' "$f"
if grep -q 'MarshalSliceConcurrently' "$f"; then
  echo "generate: $f still calls MarshalSliceConcurrently in a shape scripts/generate.sh does not know" >&2
  exit 1
fi
gofmt -w "$f"
# The /v2 attributes derived from the model (rest/model_attributes_gen.go:
# structs, copies and writers from the model fields' jsonapi tags), then the
# writers of the attribute structs still written in rest/ (rest/attributes_gen.go,
# from their fields and json tags, by a test that can also check them). In
# this order: the test compiles package rest, which needs the first file.
go run ./tools/attrgen
go test -count=1 -run '^TestAttributeWritersGenerated$' ./rest -update-writers >/dev/null
