#!/usr/bin/env bash
# make image: builds localhost/shipgraph and localhost/shipgraph-demo with
# podman, pulling no base image (no registry is reachable here):
#   shipgraph       FROM scratch: the static binary (CGO_ENABLED=0, time zones
#                   compiled in), the CA certificates of this machine's
#                   ca-certificates package, user 65532; ENTRYPOINT
#                   ["/shipgraph"], CMD ["serve"], ADDR=0.0.0.0:8080.
#   shipgraph-demo  a Debian bookworm root file system with postgresql-15,
#                   made with mmdebstrap and imported as a base, plus the
#                   binary and scripts/run.sh (what `make run` does).
# Both are tagged :latest and :$VERSION. Layers are reproducible: the binary
# is built with -trimpath and no build id, every timestamp is
# SOURCE_DATE_EPOCH (the commit's time) and no identity label is added.
# The Debian root file system is cached in IMAGE_CACHE
# (/var/cache/shipgraph-image), never in the repository; it changes when
# Debian publishes new package versions (docs/deploy.md).
# IMAGES="shipgraph" builds only the server.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/podman-env.sh

IMAGES=${IMAGES:-shipgraph shipgraph-demo}
IMAGE_CACHE=${IMAGE_CACHE:-/var/cache/shipgraph-image}
REVISION=$(git rev-parse HEAD)
VERSION=${VERSION:-$(git describe --tags --always --dirty)}
IMAGE_SOURCE=${IMAGE_SOURCE:-$(git config --get remote.origin.url || echo shipgraph)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH

# The playground's assets and the operations page, embedded when npm is here.
make --no-print-directory assets ops

ctx=$(mktemp -d)
# packedmigrations: the migrations gzipped into db/migrations/packed for the
# build and removed after (db/migrations_packed.go): 64 KB of the binary
# instead of 350 KB of SQL, which grows with every migration.
trap 'rm -rf "$ctx" db/migrations/packed' EXIT
scripts/pack-migrations.sh db/migrations/packed
echo "building the binary ($VERSION)"
# grpcnotrace: gRPC (linked only through the OTLP packages; Shipgraph serves
# and dials no gRPC) otherwise imports golang.org/x/net/trace, whose
# html/template pages disable the linker's dead-method elimination: 54.6 MB
# instead of 36 MB (docs/deploy.md).
CGO_ENABLED=0 go build -tags grpcnotrace,packedmigrations -trimpath -ldflags='-s -w -buildid=' -o "$ctx/shipgraph" .
mkdir -p "$ctx/etc/ssl/certs" "$ctx/data"
cp /etc/ssl/certs/ca-certificates.crt "$ctx/etc/ssl/certs/"
printf 'root:x:0:0:root:/:/sbin/nologin\nshipgraph:x:65532:65532:shipgraph:/data:/sbin/nologin\n' >"$ctx/etc/passwd"
printf 'root:x:0:\nshipgraph:x:65532:\n' >"$ctx/etc/group"
cp scripts/run.sh "$ctx/run.sh"
# Every file of the context carries the commit's time, so COPY writes the
# same bytes on every build.
find "$ctx" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

labels=(--label "org.opencontainers.image.version=$VERSION"
        --label "org.opencontainers.image.revision=$REVISION"
        --label "org.opencontainers.image.source=$IMAGE_SOURCE"
        --label "org.opencontainers.image.title=shipgraph"
        --label "org.opencontainers.image.created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)")
build=(build --timestamp "$SOURCE_DATE_EPOCH" --identity-label=false --omit-history --layers=false "${labels[@]}")

for image in $IMAGES; do
  case $image in
  shipgraph)
    P "${build[@]}" -t "localhost/shipgraph:$VERSION" -t localhost/shipgraph:latest \
      -f deploy/image/Containerfile "$ctx"
    ;;
  shipgraph-demo)
    base=$(scripts/demo-base.sh)
    P "${build[@]}" --build-arg "BASE=$base" -t "localhost/shipgraph-demo:$VERSION" \
      -t localhost/shipgraph-demo:latest -f deploy/image/Containerfile.demo "$ctx"
    ;;
  *) echo "unknown image $image" >&2; exit 2 ;;
  esac
done
P images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^localhost/shipgraph(-demo)?:$VERSION " || true
