#!/usr/bin/env bash
# pack-migrations.sh DIR: gzips each db/migrations/*.sql into DIR/NAME.sql.gz
# (DIR emptied first), for a build with -tags packedmigrations (the server
# image's: scripts/image.sh; db/migrations_packed.go). -n: no name or time
# in the header, so the same SQL packs to the same bytes.
set -euo pipefail
out=${1:?usage: pack-migrations.sh DIR}
cd "$(dirname "$0")/.."
rm -rf "$out"
mkdir -p "$out"
for f in db/migrations/*.sql; do
  gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done
