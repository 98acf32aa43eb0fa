#!/usr/bin/env bash
# Production: install the runtime set, migrate, compile translations, collect static files
# and serve with gunicorn (config/gunicorn.conf.py). Needs DJANGO_SECRET_KEY,
# DJANGO_ALLOWED_HOSTS, DATABASE_URL and, for workers, CELERY_BROKER_URL (see the README).
# MIGRATE_DATABASE_URL, when set, is the table owner's URL used for migrations only; then
# DATABASE_URL logs in as the application role itself (DATABASE_APP_ROLE, the same name), so
# no query can RESET ROLE above the tenant walls (README "Tenant isolation").
set -euo pipefail
cd "$(dirname "$0")/.."
export DJANGO_ENV=${DJANGO_ENV:-production}
export DJANGO_SETTINGS_MODULE=config.settings
# Its database connections, by name in pg_stat_activity.
export DATABASE_APPLICATION_NAME=${DATABASE_APPLICATION_NAME:-retaguarda-web}
if [ "${SKIP_SETUP:-0}" != "1" ]; then
  bash scripts/setup.sh
fi
# Refuse to start on a deployment error before touching the database: the checks tagged
# for deployment (channel secrets without FIELD_ENCRYPTION_KEYS, accounts.E010) run only
# under --deploy, which nothing else in this script runs. Warnings are printed, not fatal.
.venv/bin/python manage.py check --deploy --fail-level ERROR
if [ -n "${MIGRATE_DATABASE_URL:-}" ]; then
  # DATABASE_APP_ROLE stays set: migrate runs as the owner and then grants that role the
  # tables (accounts.db.grant_application_role), which the app then logs in as.
  DATABASE_URL=$MIGRATE_DATABASE_URL .venv/bin/python manage.py migrate --noinput
else
  .venv/bin/python manage.py migrate --noinput
fi
.venv/bin/python manage.py compilemessages --ignore=.venv >/dev/null
.venv/bin/python manage.py collectstatic --noinput >/dev/null
exec .venv/bin/gunicorn config.wsgi -c config/gunicorn.conf.py
