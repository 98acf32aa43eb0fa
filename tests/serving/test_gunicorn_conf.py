"""``config/gunicorn.conf.py`` sizes the web tier by the cores the process may really use —
a container's CPU quota, a cpuset — not by the host's."""

from __future__ import annotations

import multiprocessing
import os
import runpy
from pathlib import Path
from typing import Any

import pytest

CONF = Path(__file__).resolve().parents[2] / "config" / "gunicorn.conf.py"


def _conf(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    for name in ("WEB_CONCURRENCY", "WEB_THREADS", "WEB_ACCESS_LOG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(CONF))


def test_workers_follow_the_cores_this_process_may_use_not_the_hosts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A 64-core host; this process may run on two of them (a cpuset, `taskset`, a pod).
    monkeypatch.setattr(multiprocessing, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    conf = _conf(monkeypatch)
    assert conf["workers"] <= 2 * 2


def test_a_container_cpu_quota_caps_the_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    available_cpus = _conf(monkeypatch)["available_cpus"]
    # cgroup v2: this service's group allows 1.5 cores (rounded up), its parent 4.
    own = tmp_path / "system.slice" / "retaguarda-web.service"
    own.mkdir(parents=True)
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "system.slice" / "cpu.max").write_text("400000 100000\n")
    (own / "cpu.max").write_text("150000 100000\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text("0::/system.slice/retaguarda-web.service\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    assert available_cpus(cgroup_root=tmp_path, proc_cgroup=proc) == 2
    # No quota anywhere: the affinity decides.
    (own / "cpu.max").write_text("max 100000\n")
    (tmp_path / "system.slice" / "cpu.max").write_text("max 100000\n")
    assert available_cpus(cgroup_root=tmp_path, proc_cgroup=proc) == 16


def test_a_cgroup_v1_quota_caps_the_cores_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    available_cpus = _conf(monkeypatch)["available_cpus"]
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(32)))
    assert available_cpus(cgroup_root=tmp_path, proc_cgroup=tmp_path / "missing") == 3


def test_web_concurrency_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _conf(monkeypatch, WEB_CONCURRENCY="7")["workers"] == 7
