#!/usr/bin/env bash
# One command: set up and run every check — ruff, mypy, and the whole test suite on
# PostgreSQL + Redis (started if needed), incl. the Celery worker and browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/services.sh
bash scripts/browser.sh
export DATABASE_URL=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/retaguarda}
export CELERY_TEST_BROKER_URL=${CELERY_TEST_BROKER_URL:-redis://127.0.0.1:6379/15}
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy .
.venv/bin/python manage.py makemigrations --check --dry-run >/dev/null
.venv/bin/python -m pytest "$@"
