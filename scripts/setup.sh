#!/usr/bin/env bash
# Creates .venv and installs the pinned requirements. Idempotent and quiet when up to date.
#   scripts/setup.sh        the runtime set only (requirements.txt): what the demo and production need
#   scripts/setup.sh --dev  the runtime set and the development/test tools (requirements-dev.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
files=(requirements.txt)
if [ "${1:-}" = "--dev" ]; then
  files+=(requirements-dev.txt)
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements-${#files[@]}.sha
want=$(cat "${files[@]}" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r "${files[-1]}"
  echo "$want" > "$stamp"
fi
