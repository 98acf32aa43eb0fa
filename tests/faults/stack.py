"""The real processes of a fault scenario: workers and beat started with ``scripts/worker.sh``
(the documented command lines) on a private broker, a loopback fake of the Anthropic
Messages API, and the routing of the test process's own publishes to the same queue.

Used by tests/faults and bench/faults.py. The settings of a scenario (short leases, a 1 s
sweep, short backoff) reach the workers through their environment, exactly as a deployment
would set them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
REPLY_TEXT = "Olá! Recebi sua mensagem e já vou te ajudar com isso."
ROUTED_QUEUE_SETTINGS = ("CELERY_TURNS_QUEUE", "CELERY_OUTBOX_QUEUE", "CELERY_BULK_QUEUE")

# The fault settings every scenario starts from (each may override some): a sweep every
# second, a line no task took re-driven a second after its window, a lease of seconds.
FAST_RECOVERY: dict[str, str] = {
    "SWEEP_INTERVAL_S": "1",
    "TURN_BURST_WINDOW_S": "0",
    "TURN_SWEEP_GRACE_S": "1",
    "TURN_LEASE_S": "5",
    "TURN_BUSY_RETRY_S": "0.3",
    "TURN_LLM_RETRY_DELAY_S": "1",
    "OUTBOX_SWEEP_GRACE_S": "2",
    "OUTBOX_BACKOFF_BASE_S": "0.3",
    "OUTBOX_BACKOFF_MAX_S": "1.5",
    "OUTBOX_BREAKER_THRESHOLD": "3",
    "OUTBOX_BREAKER_COOLDOWN_S": "1",
    "OUTBOX_PROVIDER_TIMEOUT_S": "2",
    "OUTBOX_DELIVERY_LEASE_S": "5",
    "ANTHROPIC_API_KEY": "fault-test-key",
    "ANTHROPIC_MAX_RETRIES": "0",
    "ANTHROPIC_TIMEOUT_S": "1",
    "TURN_THREADS": "4",
    # INFO: the workers' "ready" line (``Processes.wait_ready``), and logs worth reading
    # when a drill fails (``Processes.log_tail``).
    "LOG_LEVEL": "INFO",
}


# -- the model ------------------------------------------------------------------------------


class _ModelServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # bench/load.py keeps ~100 turns waiting on it at once


class FakeModel:
    """The Messages API on 127.0.0.1: a ``send_message`` tool call (the recorded wire
    format), then — to the request carrying the tool result — the end of the turn.

    ``set_mode(marker, mode)``: requests whose body contains ``marker`` (e.g. the agent's
    name, which is in its system prompt) are answered by ``mode`` — ``ok`` after
    ``latency_s`` (the follow-up after ``follow_up_s``), ``broken`` (200 with a truncated
    JSON body), ``hang`` (no answer for ``hang_s``). ``calls`` counts requests per marker.
    ``searches``: that many ``search_knowledge`` steps (each after ``latency_s``) before the
    ``send_message``, for turns of several model calls."""

    def __init__(
        self, *, latency_s: float = 0.0, follow_up_s: float = 0.0, hang_s: float = 30.0
    ) -> None:
        from tests.fakes.anthropic_bodies import text_response, tool_use_response

        self.latency_s, self.follow_up_s, self.hang_s = latency_s, follow_up_s, hang_s
        self._first = tool_use_response("send_message", {"text": REPLY_TEXT})
        self._search = tool_use_response("search_knowledge", {"query": "prazo de entrega"})
        self.searches = 0
        self._last = text_response("Pronto.")
        # The before-send promise check (a forced tool call) on that reply, as a model
        # reads it: the assistant helps now, nobody else is promised.
        self._check = tool_use_response(
            "classify_promise", {"promise": False, "who_acts": "ai_now"}
        )
        self._modes: dict[str, str] = {}
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                model._handle(self)

            def log_message(self, *args: Any) -> None:
                return

        self._server = _ModelServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def set_mode(self, marker: str, mode: str) -> None:
        assert mode in ("ok", "broken", "hang")
        with self._lock:
            self._modes[marker] = mode

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("content-length") or 0)
        raw = request.rfile.read(length) if length else b"{}"
        text = raw.decode("utf-8", "replace")
        with self._lock:
            marker = next((m for m in self._modes if m in text), "")
            mode = self._modes.get(marker, "ok")
            self.calls[marker] += 1
        if mode == "hang":
            self._stopping.wait(self.hang_s)
            request.close_connection = True
            return
        if mode == "broken":
            self._write(request, b'{"id": "msg_broken", "type": "message", "content": [')
            return
        body_in = json.loads(raw or b"{}")
        messages = body_in.get("messages") or [{}]
        results = sum(
            1
            for m in messages
            if isinstance(m.get("content"), list)
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        )
        follow_up = results > self.searches  # the send_message was answered
        forced = (body_in.get("tool_choice") or {}).get("name")
        answer = self._check if forced == "classify_promise" else None
        step = self._search if results < self.searches else self._first
        body = json.loads(json.dumps(answer or (self._last if follow_up else step)))
        body["id"] = f"msg_{uuid.uuid4().hex[:24]}"
        if not follow_up:
            body["content"][0]["id"] = f"toolu_{uuid.uuid4().hex[:24]}"
        if self._stopping.wait(self.follow_up_s if follow_up else self.latency_s):
            return
        self._write(request, json.dumps(body).encode())

    @staticmethod
    def _write(request: BaseHTTPRequestHandler, payload: bytes) -> None:
        with contextlib.suppress(OSError):  # the client timed out and went away
            request.send_response(200)
            request.send_header("content-type", "application/json")
            request.send_header("request-id", f"req_{uuid.uuid4().hex[:16]}")
            request.send_header("content-length", str(len(payload)))
            request.end_headers()
            request.wfile.write(payload)

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()


# -- workers and beat -----------------------------------------------------------------------


class Processes:
    """Workers and beat of one scenario, each ``scripts/worker.sh <kind>`` in its own
    session, every routed queue on one private queue name (so one threads worker serves
    turns, deliveries and the sweep). Logs under ``logs``; everything stopped on exit."""

    def __init__(
        self, *, database_url: str, broker_url: str, env: Mapping[str, str] | None = None
    ) -> None:
        self.queue = f"faults-{uuid.uuid4().hex[:8]}"
        self.broker_url = broker_url
        self.logs = Path(tempfile.mkdtemp(prefix="retaguarda-faults-"))
        self.env: dict[str, str] = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "CELERY_BROKER_URL": broker_url,
            "CELERY_QUEUE": self.queue,
            **dict.fromkeys(ROUTED_QUEUE_SETTINGS, self.queue),
            "PYTHON": sys.executable,
            **FAST_RECOVERY,
            **(env or {}),
        }
        self.env.pop("REDIS_URL", None)  # the cache stays per process (locmem)
        self.workers: list[subprocess.Popen[bytes]] = []
        self._log_of: dict[int, Path] = {}
        self._killed: set[int] = set()
        self._replaced: set[subprocess.Popen[bytes]] = set()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self.restarts = 0  # workers the supervisor started again
        self.beat: subprocess.Popen[bytes] | None = None

    def start_worker(self) -> subprocess.Popen[bytes]:
        index = len(self.workers)
        proc = self._spawn(["bash", "scripts/worker.sh", "turns"], f"worker-{index}.log")
        self.workers.append(proc)
        return proc

    def start_beat(self) -> subprocess.Popen[bytes]:
        schedule = self.logs / "celerybeat-schedule"
        env = {"CELERY_BEAT_SCHEDULE_FILE": str(schedule)}
        self.beat = self._spawn(["bash", "scripts/worker.sh", "beat"], "beat.log", env)
        return self.beat

    def _spawn(
        self, command: list[str], log: str, env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        with (self.logs / log).open("ab") as handle:
            proc = subprocess.Popen(
                command,
                cwd=ROOT,
                env={**self.env, **(env or {})},
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._log_of[proc.pid] = self.logs / log
        return proc

    def wait_ready(self, *procs: subprocess.Popen[bytes], timeout: float = 90.0) -> None:
        """Until each worker logged that it is ready: after its ``worker_ready`` handlers
        (they load the router's encoder and the promise detector, seconds of CPU), so a
        fault injected next meets a worker that is consuming, not still starting."""
        deadline = time.monotonic() + timeout
        waiting = {proc.pid: proc for proc in procs}
        while waiting and time.monotonic() < deadline:
            for pid, proc in list(waiting.items()):
                if proc.poll() is not None:
                    raise RuntimeError(f"worker {pid} exited; see {self.logs}")
                log = self._log_of.get(pid)
                text = log.read_text(errors="replace") if log is not None else ""
                if any(f"turns-{pid}@" in line and " ready." in line for line in text.splitlines()):
                    del waiting[pid]
            time.sleep(0.2)
        if waiting:
            raise RuntimeError(f"workers not ready after {timeout} s; see {self.logs}")

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """``kill -9`` of the worker's main process (no warm shutdown, no acks). The
        supervisor leaves it dead: the scenario decides who replaces it."""
        self._killed.add(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)

    def supervise(self) -> None:
        """Restart a worker that exits on its own, as systemd's ``Restart=on-failure`` or a
        Kubernetes pod would (README "Workers"): Celery 5.7/kombu 5.7 end the worker
        process with an "Unrecoverable error" when the Redis connection drops while it
        holds unacknowledged messages (kombu's ``restore_unacked`` on a closed channel)."""
        if self._supervisor is not None:
            return

        def watch() -> None:
            while not self._stopping.wait(0.5):
                for proc in list(self.workers):
                    if proc.poll() is None or proc.pid in self._killed or proc in self._replaced:
                        continue
                    self._replaced.add(proc)
                    self.restarts += 1
                    self.start_worker()

        self._supervisor = threading.Thread(target=watch, daemon=True)
        self._supervisor.start()

    def stop(self) -> None:
        """Cold shutdown (``SIGQUIT``): a drill is over, nothing in flight is worth the
        seconds of a warm one; ``SIGKILL`` for a process that does not go."""
        self._stopping.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=5)
        procs = [p for p in [*self.workers, self.beat] if p is not None and p.poll() is None]
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGQUIT)
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)

    def log_tail(self, lines: int = 40) -> str:
        out = []
        for path in sorted(self.logs.glob("*.log")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def routed_to(processes: Processes) -> Iterator[None]:
    """This process publishes to the scenario's broker and queue (the webhooks' tasks),
    with no in-process runner — the workers do the work."""
    from django.test import override_settings

    from config.celery import app

    previous = (app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue)
    _drop_broker_pools(app)
    app.conf.broker_url, app.conf.task_always_eager = processes.broker_url, False
    app.conf.task_default_queue = processes.queue
    try:
        with override_settings(
            TASKS_IN_PROCESS=False, **dict.fromkeys(ROUTED_QUEUE_SETTINGS, processes.queue)
        ):
            yield
    finally:
        _drop_broker_pools(app)
        app.conf.broker_url, app.conf.task_always_eager, app.conf.task_default_queue = previous


def _drop_broker_pools(app: Any) -> None:
    """Celery caches its connection and producer pools with the broker URL they were made
    for; each scenario has a broker of its own (another port)."""
    with contextlib.suppress(Exception):
        if app._pool is not None:
            app._pool.force_close_all()
    app._pool = None
    app.amqp._producer_pool = None


def database_url() -> str:
    """The test database, as the workers must reach it (the owner login; the workers
    ``SET ROLE`` to ``DATABASE_APP_ROLE`` from the environment, walls up)."""
    from django.db import connection

    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
