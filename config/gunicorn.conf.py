"""gunicorn settings for production (``scripts/serve.sh``). Every value can be set from the
environment; the defaults suit a small machine behind a reverse proxy that ends TLS.

Threaded workers (gthread): a page or a webhook spends most of its time waiting on
PostgreSQL, so a few threads per process serve more requests than more processes would, at
a fraction of the memory. Webhooks only store and enqueue — the turns run on Celery — so the
request timeout stays short.
"""

from __future__ import annotations

import multiprocessing
import os

bind = os.environ.get("BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2 + 1))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "4"))
timeout = int(os.environ.get("WEB_TIMEOUT_S", "30"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak in any library can't grow without bound.
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", "2000"))
max_requests_jitter = 200
# Django's JSON logs carry the request id; gunicorn's own access log is off unless asked for.
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
