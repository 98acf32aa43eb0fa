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
# Two processes of two threads per core. A webhook ack is ~3.5 ms of Python, so threads of
# one process mostly wait on each other's GIL: at 200 acks/s on 2 cores (bench/load.py,
# 20 s of acks, the web tier alone) the ack p99 was 71-107 ms with 2 processes x 8 threads,
# 50 ms with 4 x 4, 184 ms with 5 x 4 (the old default, 2 x cores + 1 of 4), 29 ms with 3 x 2
# and 25, 27 and once 268 ms with 4 x 2, at the same p50 (5-7 ms) and 170 MB per process.
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
worker_class = "gthread"
threads = int(os.environ.get("WEB_THREADS", "2"))
timeout = int(os.environ.get("WEB_TIMEOUT_S", "30"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak in any library can't grow without bound — but
# rarely: a recycled worker imports the app again and opens its connections, and while it
# boots the others carry its share. At 200 webhooks/s on 2 cores, recycling every 2,000
# requests (the old default) put a restart in every 20 s of acks and their p99 at 0.6-1.9 s;
# with no recycling, 0.11-0.17 s (bench/load.py --ack-seconds 20, alternating runs). 50,000
# requests is a restart every few minutes per worker at that rate, outside the p99.
max_requests = int(os.environ.get("WEB_MAX_REQUESTS", "50000"))
max_requests_jitter = max_requests // 10
# Django's JSON logs carry the request id; gunicorn's own access log is off unless asked for.
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
errorlog = "-"
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
