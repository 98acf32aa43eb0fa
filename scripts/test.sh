#!/usr/bin/env bash
# One command: set up and run every check — ruff, mypy, and the whole test suite on
# PostgreSQL + Redis (started if needed), incl. the Celery worker and browser tests.
# The suite connects as the owner role (it creates and migrates the test database) and the
# application runs as the non-owner role DATABASE_APP_ROLE, so row-level security binds it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
bash scripts/services.sh
bash scripts/browser.sh
# PgBouncer (Debian) for the pooled tenant-context test
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
fi
export DB_OWNER_ROLE=${DB_OWNER_ROLE:-retaguarda_owner}
export DATABASE_APP_ROLE=${DATABASE_APP_ROLE:-retaguarda_app}
DB_APP_ROLE=$DATABASE_APP_ROLE DB_NAME=${DB_NAME:-retaguarda} TEST_DB_NAME=test_${DB_NAME:-retaguarda} \
  bash scripts/db_roles.sh
export DATABASE_URL=${DATABASE_URL:-postgres://$DB_OWNER_ROLE@127.0.0.1:5432/${DB_NAME:-retaguarda}}
export CELERY_TEST_BROKER_URL=${CELERY_TEST_BROKER_URL:-redis://127.0.0.1:6379/15}
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy .
.venv/bin/python manage.py makemigrations --check --dry-run >/dev/null
.venv/bin/python -m pytest "$@"
# The whole suite (no test paths among the arguments): then the hot path once more with
# prepared statements on (DB_PREPARED_STATEMENTS, docs/operations.md) — webhooks, the
# production server, the pooled tenant walls, the compiled lookups and the fault drills with
# real workers.
only_options=1
value_of=""
for arg in "$@"; do
  if [ -n "$value_of" ]; then value_of=""; continue; fi  # the value of -p/-k/-m
  case "$arg" in
    -p | -k | -m) value_of=$arg ;;
    -*) ;;
    *) only_options=0 ;;
  esac
done
if [ "$only_options" = 1 ]; then
  DB_PREPARED_STATEMENTS=1 .venv/bin/python -m pytest -q "$@" tests/serving tests/channels \
    tests/accounts/test_compiled_query.py tests/faults
fi
