#!/usr/bin/env bash
# Creates the two PostgreSQL roles of the tenant walls (idempotent):
#   retaguarda_owner  logs in, owns the tables, runs migrations, creates the test database;
#   retaguarda_app    owns nothing, so row-level security binds it; the owner SET ROLEs to it
#                     (DATABASE_APP_ROLE). NOBYPASSRLS, NOSUPERUSER: the policies apply.
# Usage: bash scripts/db_roles.sh   (as a PostgreSQL superuser: psql -h 127.0.0.1 -U postgres)
# Optional: DB_OWNER_ROLE, DB_APP_ROLE, DB_OWNER_PASSWORD, DB_APP_PASSWORD, PGHOST,
#   DB_NAME (create that database, owned by the owner role),
#   TEST_DB_NAME (a leftover test database of another owner is handed to the owner role, so
#   pytest-django, connecting as the owner, can drop and recreate it).
set -euo pipefail
OWNER=${DB_OWNER_ROLE:-retaguarda_owner}
APP=${DB_APP_ROLE:-retaguarda_app}
PSQL=(psql -h "${PGHOST:-127.0.0.1}" -p "${PGPORT:-5432}" -U "${PGSUPERUSER:-postgres}" -v ON_ERROR_STOP=1 -qAt)

"${PSQL[@]}" -d postgres \
  -v owner="$OWNER" -v app="$APP" \
  -v owner_pw="${DB_OWNER_PASSWORD:-}" -v app_pw="${DB_APP_PASSWORD:-}" <<'SQL'
SELECT format('CREATE ROLE %I', :'owner')
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'owner') \gexec
SELECT format('CREATE ROLE %I', :'app')
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'app') \gexec
SELECT format('ALTER ROLE %I LOGIN CREATEDB NOSUPERUSER NOBYPASSRLS NOCREATEROLE', :'owner') \gexec
SELECT format('ALTER ROLE %I LOGIN NOCREATEDB NOSUPERUSER NOBYPASSRLS NOCREATEROLE', :'app') \gexec
SELECT format('ALTER ROLE %I PASSWORD %L', :'owner', :'owner_pw') WHERE :'owner_pw' <> '' \gexec
SELECT format('ALTER ROLE %I PASSWORD %L', :'app', :'app_pw') WHERE :'app_pw' <> '' \gexec
-- The owner may SET ROLE to the application role (DATABASE_APP_ROLE), never the reverse.
SELECT format('GRANT %I TO %I', :'app', :'owner')
  WHERE NOT pg_has_role(:'owner', :'app', 'MEMBER') \gexec
SQL

# The application database itself, owned by the owner role (the test database is created
# from DATABASE_URL by pytest-django as that same owner).
if [ -n "${DB_NAME:-}" ]; then
  "${PSQL[@]}" -d postgres -v db="$DB_NAME" -v owner="$OWNER" <<'SQL'
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'owner')
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \gexec
SQL
fi

if [ -n "${TEST_DB_NAME:-}" ]; then
  "${PSQL[@]}" -d postgres -v db="$TEST_DB_NAME" -v owner="$OWNER" <<'SQL'
SELECT format('ALTER DATABASE %I OWNER TO %I', :'db', :'owner')
  FROM pg_database d WHERE d.datname = :'db' AND d.datdba::regrole::text <> :'owner' \gexec
SQL
fi
