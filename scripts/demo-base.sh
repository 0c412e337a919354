#!/usr/bin/env bash
# Prints the name of the demo's base image (Debian bookworm minbase with
# postgresql-15 and redis-server: the deploy test's PostgreSQL and Redis pods
# run it too), importing it when podman lacks it. The root file system is
# made with mmdebstrap from Debian's mirror (about 2 minutes) and cached as a
# tarball in IMAGE_CACHE, keyed by the package list: a warm cache costs an
# import (seconds); `rm -rf /var/cache/shipgraph-image` starts over.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/podman-env.sh
IMAGE_CACHE=${IMAGE_CACHE:-/var/cache/shipgraph-image}
packages=postgresql-15,redis-server,ca-certificates,tzdata
# Documentation, manual pages and translations are left out (a third of the size).
excludes=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
          --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*')
key=$(printf '%s\n' bookworm "$packages" "${excludes[@]}" | sha256sum | cut -c1-12)
name=localhost/shipgraph-pg15-base:$key
if P image exists "$name"; then echo "$name"; exit 0; fi
tar=$IMAGE_CACHE/pg15-bookworm-$key.tar
if [ ! -s "$tar" ]; then
  mkdir -p "$IMAGE_CACHE"
  echo "making the demo's root file system with mmdebstrap into $tar (about 2 minutes)" >&2
  # The root file system's timestamps are the commit's (reproducible tar).
  SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)} \
    mmdebstrap --quiet --format=tar --variant=minbase --include="$packages" "${excludes[@]}" \
      bookworm "$tar.tmp" >&2
  mv "$tar.tmp" "$tar"
fi
P import --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/bin:/bin' \
  --change 'USER postgres' "$tar" "$name" >/dev/null
echo "$name"
