#!/usr/bin/env bash
# Installs chDB — ClickHouse 26.7 as an in-process library, the second engine
# the tests run every statement on — from the npm package that ships
# libchdb.so, into CTXAUDIT_CHDB_DIR (default /var/cache/ctxaudit/chdb, shared
# by every checkout on the machine: the package is about 540 MB).
# Idempotent: does nothing when that version is already there. Tests only;
# the ctxaudit binary does not use it.
set -euo pipefail
pkg="@chdb/lib-linux-x64-gnu"
version="26.7.3-stable.1"
dir="${CTXAUDIT_CHDB_DIR:-/var/cache/ctxaudit/chdb}"
lib="$dir/node_modules/$pkg/libchdb.so"
manifest="$dir/node_modules/$pkg/package.json"
if [ -f "$lib" ] && grep -q "\"version\": *\"$version\"" "$manifest" 2>/dev/null; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "npm not found; installing it from Debian packages" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
      echo "run as root, or install npm yourself: apt-get install -y npm" >&2
      exit 1
    fi
  fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y npm
fi
echo "installing $pkg@$version into $dir" >&2
mkdir -p "$dir"
npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$dir" "$pkg@$version" >&2
test -f "$lib"
