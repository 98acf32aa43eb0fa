"""Worker-side probe of bench/load.py, imported by the bench's workers (``celery -I``).

Per task, on the thread that runs it: wall time (prerun → postrun), the thread's CPU time,
and the SQL statements Django executed (savepoints aside; the tenant-context statements run
on the raw connection and are not counted, as in bench/turns.py). One JSON line per task on
a Redis list the bench reads back. Nothing here changes what a task does.
"""

from __future__ import annotations

import atexit
import cProfile
import json
import os
import pstats
import threading
import time
from typing import Any

import redis
from celery import signals
from django.db import connections

KEY = "load:probe"
_local = threading.local()
_redis = redis.Redis.from_url(os.environ["LOAD_PROBE_REDIS_URL"])
# ``bench/load.py --profile DIR``: every task runs under cProfile on its own thread; the
# process writes the sum of its tasks' profiles (thread CPU time) to DIR every 200 tasks
# and when it exits.
_PROFILE_DIR = os.environ.get("LOAD_PROFILE_DIR", "")
_profiles: list[cProfile.Profile] = []
_profiles_lock = threading.Lock()


def _dump_profiles() -> None:
    with _profiles_lock:
        if not _profiles:
            return
        stats = pstats.Stats(_profiles[0])
        for profile in _profiles[1:]:
            stats.add(profile)
    stats.dump_stats(os.path.join(_PROFILE_DIR, f"worker-{os.getpid()}.prof"))


if _PROFILE_DIR:
    atexit.register(_dump_profiles)


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
    if _PROFILE_DIR:
        # Thread CPU time, not wall: what a task costs the machine, not what it waited for.
        _local.profile = cProfile.Profile(time.thread_time)
        _local.profile.enable()


@signals.task_postrun.connect
def _finished(task: Any = None, args: Any = None, **_: Any) -> None:
    profile = getattr(_local, "profile", None)
    if profile is not None:
        profile.disable()
        _local.profile = None
        with _profiles_lock:
            _profiles.append(profile)
            checkpoint = len(_profiles) % 200 == 0
        if checkpoint:  # a worker killed at the end still leaves its profile
            _dump_profiles()
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
