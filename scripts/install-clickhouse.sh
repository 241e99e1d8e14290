#!/usr/bin/env bash
# Installs Debian's clickhouse-server and clickhouse-client when they are missing.
# Idempotent; needs root (or sudo) only when something must be installed.
set -euo pipefail
if command -v clickhouse-server >/dev/null 2>&1 || [ -x /usr/sbin/clickhouse-server ]; then
  exit 0
fi
echo "clickhouse-server not found; installing it from Debian packages" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "run as root, or install it yourself: apt-get install -y clickhouse-server clickhouse-client" >&2
    exit 1
  fi
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y clickhouse-server clickhouse-client
