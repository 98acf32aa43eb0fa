#!/bin/sh
# Copy the front-end assets pinned in package.json into static/vendor/.
# The copies are committed, so the app runs without npm; run this only to upgrade:
#   npm ci && sh scripts/vendor_static.sh
set -eu
cd "$(dirname "$0")/.."
if [ ! -f node_modules/htmx.org/dist/htmx.min.js ]; then
    npm ci --no-audit --no-fund
fi
mkdir -p static/vendor
cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js
echo "static/vendor/htmx.min.js <- htmx.org $(node -p "require('./node_modules/htmx.org/package.json').version")"
