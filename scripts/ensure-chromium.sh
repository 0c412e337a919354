#!/usr/bin/env bash
# Installs Debian's chromium for the browser test when it is missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM:-}" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is not installed: apt-get install chromium (as root), or set CHROMIUM" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
