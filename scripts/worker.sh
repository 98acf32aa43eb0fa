#!/usr/bin/env bash
# Celery workers, one command line per queue (README "Workers" and "Capacity").
#
#   bash scripts/worker.sh turns    # turns: wait on the model for seconds → threads, many per process
#   bash scripts/worker.sh outbox   # deliveries: wait on the provider's HTTP API → threads
#   bash scripts/worker.sh bulk     # CPU-bound work (quality runs) + unrouted tasks → prefork
#   bash scripts/worker.sh beat     # the periodic schedule: exactly ONE in the whole deployment
#   bash scripts/worker.sh --print turns   # print the command line instead of running it
#
# Needs CELERY_BROKER_URL and DATABASE_URL (plus DATABASE_APP_ROLE, as for the web server).
# Extra arguments after the queue name go to celery as they are.
#
# Knobs (environment): TURN_THREADS (default 32) and OUTBOX_THREADS (8) per process;
# BULK_CONCURRENCY (the number of cores); DB_POOL_MAX_SIZE for the thread pools (default:
# their thread count; config/settings/work.py explains why a pool and why that size);
# CELERY_BEAT_SCHEDULE_FILE (beat's state file). Scale turns by adding processes (one per
# core) before adding threads: the GIL caps one process at about one core of non-model work.
#
# Run each one under a supervisor that restarts it (systemd Restart=always, a Kubernetes
# Deployment): Celery/kombu 5.7 end a worker that holds unacknowledged tasks when the Redis
# connection drops ("Unrecoverable error") instead of reconnecting. Nothing is lost (the
# sweeper re-drives committed work), but the process must come back. Beat: one replica.
#
# Thread pools do not enforce Celery's time limits (only prefork can kill a task): a turn is
# bounded by its own network timeouts (ANTHROPIC_TIMEOUT_S × retries, BILLING_API_TIMEOUT_S)
# and the outbox by OUTBOX_PROVIDER_TIMEOUT_S.
set -euo pipefail
cd "$(dirname "$0")/.."
PRINT=0
if [ "${1:-}" = "--print" ]; then
  PRINT=1
  shift
fi
KIND=${1:-}
[ $# -gt 0 ] && shift
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings}
PYTHON=${PYTHON:-.venv/bin/python}
CELERY=("$PYTHON" -m celery -A config)
LOG=(-l "${LOG_LEVEL:-info}")
# No mingle/gossip: workers need not know each other, and every worker would otherwise
# chat with every other one through the broker as the deployment grows.
QUIET=(--without-mingle --without-gossip)
DEFAULT_QUEUE=${CELERY_QUEUE:-retaguarda}

case "$KIND" in
  turns)
    threads=${TURN_THREADS:-32}
    export DB_POOL_MAX_SIZE=${DB_POOL_MAX_SIZE:-$threads}
    cmd=("${CELERY[@]}" worker -Q "${CELERY_TURNS_QUEUE:-turns}" -P threads -c "$threads"
      -n "turns-$$@%h" "${QUIET[@]}" "${LOG[@]}")
    ;;
  outbox)
    threads=${OUTBOX_THREADS:-8}
    export DB_POOL_MAX_SIZE=${DB_POOL_MAX_SIZE:-$threads}
    cmd=("${CELERY[@]}" worker -Q "${CELERY_OUTBOX_QUEUE:-outbox}" -P threads -c "$threads"
      -n "outbox-$$@%h" "${QUIET[@]}" "${LOG[@]}")
    ;;
  bulk)
    # Prefork: CPU-bound work needs its own cores; Celery closes a pool after every
    # prefork task, so these processes connect per task (DB_POOL_MAX_SIZE=0).
    export DB_POOL_MAX_SIZE=0
    cmd=("${CELERY[@]}" worker -Q "${CELERY_BULK_QUEUE:-bulk},$DEFAULT_QUEUE" -P prefork
      -c "${BULK_CONCURRENCY:-$(nproc)}" --max-tasks-per-child 200 -O fair
      -n "bulk-$$@%h" "${QUIET[@]}" "${LOG[@]}")
    ;;
  beat)
    # One beat per deployment, or every periodic task runs once per beat.
    cmd=("${CELERY[@]}" beat -s "${CELERY_BEAT_SCHEDULE_FILE:-/tmp/retaguarda-celerybeat-schedule}"
      "${LOG[@]}")
    ;;
  *)
    echo "usage: scripts/worker.sh [--print] turns|outbox|bulk|beat [celery args...]" >&2
    exit 2
    ;;
esac

cmd+=("$@")
# Its database connections, by name in pg_stat_activity (retaguarda-turns, -outbox, ...).
export DATABASE_APPLICATION_NAME=${DATABASE_APPLICATION_NAME:-retaguarda-$KIND}
if [ "$PRINT" = "1" ]; then
  prefix="DATABASE_APPLICATION_NAME=$DATABASE_APPLICATION_NAME "
  [ "$KIND" != "beat" ] && prefix="${prefix}DB_POOL_MAX_SIZE=$DB_POOL_MAX_SIZE "
  printf '%s%s\n' "$prefix" "${cmd[*]}"
  exit 0
fi
exec "${cmd[@]}"
