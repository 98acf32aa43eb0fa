#!/usr/bin/env bash
# Starts PostgreSQL and Redis on this machine if they are not already answering.
set -uo pipefail
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 1; done
fi
pg_isready -h 127.0.0.1 -p 5432 || { echo "PostgreSQL is not running" >&2; exit 1; }
redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || { echo "Redis is not running" >&2; exit 1; }
