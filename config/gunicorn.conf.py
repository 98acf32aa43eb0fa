"""gunicorn settings for production (``scripts/serve.sh``). Every value can be set from the
environment; the defaults suit a small machine behind a reverse proxy that ends TLS.

Threaded workers (gthread): a page or a webhook spends most of its time waiting on
PostgreSQL, so a few threads per process serve more requests than more processes would, at
a fraction of the memory. Webhooks only store and enqueue — the turns run on Celery — so the
request timeout stays short.
"""

from __future__ import annotations

import logging
import math
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from gunicorn import glogging


def _cgroup_cpu_limit(cgroup_root: Path, proc_cgroup: Path) -> float | None:
    """The tightest CPU quota (in cores) over this process's cgroup and its parents —
    cgroup v2 ``cpu.max`` (``200000 100000`` = 2 cores), else v1 ``cpu.cfs_quota_us`` —
    or None when nothing limits it. A container started with ``--cpus 2`` sees the host's
    cores everywhere else."""
    limits: list[float] = []
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        lines = []
    own = next((line.split(":", 2)[2] for line in lines if line.startswith("0::")), "/")
    directory = cgroup_root / own.lstrip("/")
    while True:
        try:
            quota, period = (directory / "cpu.max").read_text().split()[:2]
            if quota != "max" and int(period) > 0:
                limits.append(int(quota) / int(period))
        except (OSError, ValueError):
            pass
        if directory == cgroup_root or cgroup_root not in directory.parents:
            break
        directory = directory.parent
    try:  # cgroup v1
        quota_us = int((cgroup_root / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup_root / "cpu" / "cpu.cfs_period_us").read_text())
        if quota_us > 0 and period_us > 0:
            limits.append(quota_us / period_us)
    except (OSError, ValueError):
        pass
    return min(limits) if limits else None


def available_cpus(
    cgroup_root: Path = Path("/sys/fs/cgroup"), proc_cgroup: Path = Path("/proc/self/cgroup")
) -> int:
    """The cores this process may really use: its CPU affinity (``taskset``, a cpuset),
    capped by its cgroup's CPU quota, rounded up. ``multiprocessing.cpu_count()`` counts the
    host's: on a 64-core host a container limited to 2 cores started 128 workers of ~170 MB
    each and was killed for memory before it served a page."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    limit = _cgroup_cpu_limit(cgroup_root, proc_cgroup)
    if limit is not None:
        cpus = min(cpus, math.ceil(limit))
    return max(1, cpus)


bind = os.environ.get("BIND", "0.0.0.0:8000")
# Two processes of two threads per core. A webhook ack is ~3.5 ms of Python, so threads of
# one process mostly wait on each other's GIL: at 200 acks/s on 2 cores (bench/load.py,
# 20 s of acks, the web tier alone) the ack p99 was 71-107 ms with 2 processes x 8 threads,
# 50 ms with 4 x 4, 184 ms with 5 x 4 (the old default, 2 x cores + 1 of 4), 29 ms with 3 x 2
# and 25, 27 and once 268 ms with 4 x 2, at the same p50 (5-7 ms) and 170 MB per process.
workers = int(os.environ.get("WEB_CONCURRENCY", available_cpus() * 2))
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


class JsonLogger(glogging.Logger):
    """gunicorn's own lines as the project's JSON. gunicorn writes its error log (boot,
    worker timeouts and kills, "Error handling request <uri>") in plain text and its access
    log as Apache's combined format, whose request line and Referer carry query strings — a
    password-reset token (``?t=``), an invitation code (``?c=``), Meta's
    ``hub.verify_token``. Here both are one JSON object a line (``accounts.logging``)
    through the application's redacting filter (``config/settings/log_redaction.py``), and
    an access line holds the method, the path without its query, the status, the duration,
    the bytes sent and the request id the application answered with (``X-Request-Id``).
    The project is imported when the arbiter builds its logger, after gunicorn has put the
    working directory on the import path."""

    def setup(self, cfg: Any) -> None:
        super().setup(cfg)
        from accounts.logging import JsonFormatter
        from config.settings.log_redaction import RedactingFilter

        formatter = JsonFormatter()
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(formatter)
                if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                    handler.addFilter(RedactingFilter())

    def access(self, resp: Any, req: Any, environ: dict[str, Any], request_time: timedelta) -> None:
        if not self.access_log_enabled:
            return
        status = str(resp.status or "").split(None, 1)[0]
        request_id = next(
            (str(v) for k, v in (resp.headers or []) if str(k).lower() == "x-request-id"), ""
        )
        self.access_log.log(
            logging.INFO,
            "request",
            extra={
                "method": environ.get("REQUEST_METHOD", ""),
                "path": environ.get("PATH_INFO", ""),
                "status": int(status) if status.isdigit() else status,
                "duration_ms": round(request_time.total_seconds() * 1000, 1),
                "bytes": getattr(resp, "sent", None),
                "request_id": request_id,
            },
        )


# Django's JSON logs carry the request id; gunicorn's own access log is off unless asked for
# (WEB_ACCESS_LOG=- or a file). Both gunicorn logs are JSON lines without query strings.
accesslog = os.environ.get("WEB_ACCESS_LOG") or None
errorlog = "-"
logger_class = JsonLogger
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
