#!/bin/bash
# usage: dupcount_wt.sh [--most N] -> duplicates over the WORKING TREE of accounts config conversation
# routers cases (tracked + untracked non-ignored files), migrations left out. Prints the rows too.
d=$(mktemp -d /tmp/dupwt.XXXX)
cd /work/main
{ git ls-files accounts config conversation routers cases; git ls-files --others --exclude-standard accounts config conversation routers cases; } \
  | grep -v /migrations/ | while read -r f; do [ -f "$f" ] && mkdir -p "$d/$(dirname "$f")" && cp "$f" "$d/$f"; done
duplicates --repo "$d" --most "${2:-200}" --seconds 120
rm -rf "$d"
