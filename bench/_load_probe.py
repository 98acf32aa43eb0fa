"""Worker-side probe of bench/load.py, imported by the bench's workers (``celery -I``).

Per task, on the thread that runs it: wall time (prerun → postrun), the thread's CPU time,
and the SQL statements Django executed (savepoints aside; the tenant-context statements run
on the raw connection and are not counted, as in bench/turns.py). One JSON line per task on
a Redis list the bench reads back. Nothing here changes what a task does.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import redis
from celery import signals
from django.db import connections

KEY = "load:probe"
_local = threading.local()
_redis = redis.Redis.from_url(os.environ["LOAD_PROBE_REDIS_URL"])


def _count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    if not sql.startswith(("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT")):
        _local.queries += 1
    return execute(sql, params, many, context)


@signals.task_prerun.connect
def _started(task: Any = None, **_: Any) -> None:
    _local.queries = 0
    _local.wall = time.perf_counter()
    _local.cpu = time.thread_time()
    connections["default"].execute_wrappers.append(_count)


@signals.task_postrun.connect
def _finished(task: Any = None, args: Any = None, **_: Any) -> None:
    wrappers = connections["default"].execute_wrappers
    if _count in wrappers:
        wrappers.remove(_count)
    record = {
        "task": getattr(task, "name", ""),
        "arg": str(args[0]) if args else "",
        "wall_ms": (time.perf_counter() - _local.wall) * 1000,
        "cpu_ms": (time.thread_time() - _local.cpu) * 1000,
        "queries": _local.queries,
        "pid": os.getpid(),
    }
    _redis.rpush(KEY, json.dumps(record))
