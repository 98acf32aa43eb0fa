#!/usr/bin/env bash
# Debian's Chromium for the browser tests (Playwright drives it; it never downloads one).
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium chromium-driver >/dev/null
fi
