#!/bin/bash
# usage: dupcount.sh REV  -> duplicates over accounts config conversation routers cases, no migrations
rev=$1; d=/tmp/dup_$rev; rm -rf $d; mkdir -p $d
cd /work/main
git archive $rev accounts config conversation routers cases | tar -x -C $d
find $d -path '*/migrations/*' -delete 2>/dev/null; find $d -type d -name migrations -exec rm -rf {} + 2>/dev/null
duplicates --repo $d --most 200 --seconds 120 | head -1
