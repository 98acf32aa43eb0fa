#!/usr/bin/env bash
# One command: set up, migrate, seed the demo and run it on the embedded default
# (SQLite, tasks in-process, offline model). Open http://127.0.0.1:8000/ and log in.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DJANGO_SETTINGS_MODULE=config.settings
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py compilemessages --ignore=.venv >/dev/null 2>&1 || true
.venv/bin/python manage.py seed_demo
echo
echo "Retaguarda em http://127.0.0.1:${PORT:-8000}/  —  simulador: /simulador/"
exec .venv/bin/python manage.py runserver "127.0.0.1:${PORT:-8000}"
