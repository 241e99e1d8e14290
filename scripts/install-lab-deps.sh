#!/usr/bin/env bash
# Installs what `make lab` needs besides Go: node and npm (the harnesses come
# from the npm registry) and ripgrep and fd, which pi's grep and find tools run
# (pi would otherwise try to download them). Debian packages; idempotent; needs
# root (or sudo) only when something must be installed.
set -euo pipefail
missing=()
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v fdfind >/dev/null 2>&1 || command -v fd >/dev/null 2>&1 || missing+=(fd-find)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing ${missing[*]} from Debian packages for the harness lab" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "run as root, or install them yourself: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
