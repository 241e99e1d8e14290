#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: the HTML report's browser
# test renders every bundled example in a headless Chromium (locally it is
# skipped without one; under CI=true it fails). Idempotent; needs root (or
# sudo) only when something must be installed.
set -euo pipefail
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then exit 0; fi
done
echo "chromium not found; installing it from Debian packages (for the HTML report's browser test)" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "run as root, or install it yourself: apt-get install -y chromium" >&2
    exit 1
  fi
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
