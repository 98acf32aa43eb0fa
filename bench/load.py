"""Load at a real model latency: the production server and real workers, the model a fake.

    python bench/load.py                          # 1.0 s model latency, defaults below
    python bench/load.py --model-latency 2.0 --conversations 160 --turn-threads 40
    python bench/load.py --pgbouncer --no-prepared-statements --turn-threads 64

Sizing (the defaults): a turn waits ~1 s on the model (one call: the accepted
``send_message`` ends it). The closed loop's customers write again the moment they are
answered (no time to read or type), so by Little's law the mean first reply is *customers ÷
turns per second*, whatever the code does: 120 customers at 40 turns/s wait 3 s on average.
60 customers keep enough turns in flight for 40 turns/s at ~1.5 s a reply (up to ~50 turns/s
before the customers, not the cores, are the limit). Measured on the 2-core machine,
alternating runs: 60 customers 31.8 / 29.36 turns/s, first reply p99 2.784 / 2.659 s; 120
customers 30.88 / 29.88 turns/s, p99 6.034 / 5.37 s — the same capacity, twice the queue.
``--conversations 120`` (the default before) shows that queue. Every thread holds a
database connection for its task; web and workers go straight to PostgreSQL (default 100
connections): 2 turn processes × 28 threads (56 turns in flight), 4 web workers × 2 (the
production default on 2 cores), 1 outbox worker × 8 — 72 connections. Straight to
PostgreSQL, psycopg's prepared statements (``DB_PREPARED_STATEMENTS``) spare the server
parsing and planning the hot path's same few statements again and again. ``--pgbouncer``
puts PgBouncer in transaction mode in between instead (the tenant walls are transaction-local,
``tests/serving/test_pooled_tenant_context.py``), 40 server connections for everything, and
then needs ``--no-prepared-statements``: PgBouncer before 1.21 (Debian 12 ships 1.18) hands a
transaction any server connection, where a statement prepared on another does not exist.

What runs, all on 127.0.0.1, all stopped by the bench (``--max-seconds`` is a hard cap):

- PostgreSQL database ``--db-name`` (default ``retaguarda_load``, dropped and re-created),
  migrated by the owner role; the web server and the workers run as the application role
  (``scripts/db_roles.sh``), so row-level security binds them as in production.
- Redis database ``--redis-db`` (default 9, flushed) as broker and cache.
- A fake Anthropic API in its own process: the recorded ``tool_use`` wire format
  (``send_message``) after ``--model-latency`` seconds, then — to the request carrying the
  tool result — the recorded end-of-turn answer after ``--follow-up-latency`` (default: the
  same). The orchestrator's turn ends at the accepted ``send_message``, so a turn is one
  model call (``model_calls_per_turn`` prints it).
- gunicorn with ``config/gunicorn.conf.py`` and ``DJANGO_ENV=production``; the workers
  with ``scripts/worker.sh turns`` / ``outbox`` (thread pools), plus a probe per task
  (``bench/_load_probe.py``: wall, CPU, SQL).

Phases: warm-up; closed loop — ``--conversations`` customers, each sends a line, waits for
the reply, sends the next (burst window 0), for ``--duration`` s; then webhook acks at
``--ack-rate`` req/s open loop, first with the workers paused (the web tier alone), then
with them running (draining what the first part queued), the web server given the CPU
before the workers and their PostgreSQL backends (``ingress_first``; needs root for the
backends, and ``--equal-priority`` leaves them all alike).

Prints JSON lines {"name", "value", "unit", "n"}: first machine_python_loop_2m_cpu (how fast
the machine runs Python today, before anything starts: read every figure beside it),
turns_per_second_at_model_latency,
first_reply_p50_s / p99_s (webhook sent → reply delivered), webhook_ack_p50_ms / p99_ms,
non_model_ms_per_turn_p50 (turn task wall time minus its model calls),
cpu_ms_per_turn_all_processes (the machine's CPU during the closed loop, by role),
sql_queries_per_turn, rss_mb_per_worker; webhook_ack_sequential_p50_ms (one request at a time,
first-time customers, with the returning customers' p50 beside it: the web tier's service
time with the workers paused). Never asserts timings.
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import queue
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from _django import emit, emit_machine_line, percentile, setup_django

ROOT = Path(__file__).resolve().parent.parent
OWNER, APP = "retaguarda_owner", "retaguarda_app"
SECRET = "load-secret"
SENDERS = 48  # open loop: threads posting on their own keep-alive connections
LATE_LIMIT_S = 15.0  # open loop: a request this late is dropped (and counted as failed)


# --- the fake model (its own process) ------------------------------------------------------


def serve_fake_model(latency: float, follow_up_latency: float) -> None:
    """Answer Messages API calls like the real one, after a delay; print the port. The fault
    drills' fake (``tests.faults.stack.FakeModel``): the recorded ``send_message`` call, the
    end of the turn, and the before-send promise check, as a model answers them."""
    sys.path.insert(0, str(ROOT))
    from tests.faults.stack import FakeModel

    with FakeModel(latency_s=latency, follow_up_s=follow_up_latency) as model:
        print(model.port, flush=True)
        threading.Event().wait()


# --- processes -----------------------------------------------------------------------------


@dataclass
class Procs:
    web: subprocess.Popen[bytes] | None = None
    turns: list[subprocess.Popen[bytes]] = field(default_factory=list)
    outbox: list[subprocess.Popen[bytes]] = field(default_factory=list)
    helpers: list[subprocess.Popen[bytes]] = field(default_factory=list)  # the fake model
    logs: Path = Path("/tmp")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _spawn(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    # A session of its own: the bench stops the whole group it started, by its id.
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
    )


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None or process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGCONT)
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except (subprocess.TimeoutExpired, ProcessLookupError):
        try:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass


def _signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(process.pid, sig)


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _cpu_seconds_by_role(procs: Procs) -> dict[str, float]:
    """CPU seconds (user + system) used so far by every process of the run, by role: the
    bench's own process groups (``start_new_session``) and the shared servers by name.
    Postgres and Redis serve everything else on the machine too: run the bench alone."""
    groups = {
        **({procs.web.pid: "web"} if procs.web else {}),
        **{p.pid: "turn_workers" for p in procs.turns},
        **{p.pid: "outbox_workers" for p in procs.outbox},
        **{p.pid: "fake_model" for p in procs.helpers},
    }
    names = {"postgres": "postgres", "pgbouncer": "pgbouncer", "redis-server": "redis"}
    tick = os.sysconf("SC_CLK_TCK")
    used: dict[str, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            head, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        fields = rest.split()
        comm = head.split("(", 1)[1]
        pid = int(stat.parent.name)
        role = "bench_driver" if pid == os.getpid() else groups.get(int(fields[2]))
        role = role or names.get(comm)
        if role:
            used[role] = used.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return used


# --- the database, the broker, the world ---------------------------------------------------


def prepare_database(args: argparse.Namespace) -> str:
    """Drop and re-create the bench database (owned by the owner role) and migrate it."""
    import psycopg

    env = {**os.environ, "DB_APP_ROLE": APP, "DB_OWNER_ROLE": OWNER, "DB_NAME": args.db_name}
    subprocess.run(["bash", "scripts/db_roles.sh"], cwd=ROOT, env=env, check=True)
    with psycopg.connect(
        f"host=127.0.0.1 port={args.pg_port} user=postgres dbname=postgres", autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{args.db_name}" WITH (FORCE)')
    subprocess.run(["bash", "scripts/db_roles.sh"], cwd=ROOT, env=env, check=True)
    owner_url = f"postgres://{OWNER}@127.0.0.1:{args.pg_port}/{args.db_name}"
    migrate_env = {**os.environ, "DATABASE_URL": owner_url, "DATABASE_APP_ROLE": APP}
    migrate_env.pop("DB_POOL_MAX_SIZE", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
        cwd=ROOT,
        env=migrate_env,
        check=True,
    )
    return owner_url


def flush_redis(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


@dataclass(frozen=True)
class Line:
    channel_id: str
    phone: str


def seed(args: argparse.Namespace) -> list[Line]:
    """``--orgs`` organizations, one simulator channel each, answered by an Anthropic agent."""
    from tests import factories

    channels = []
    for i in range(args.orgs):
        org = factories.make_org(f"Carga {i}")
        agent = factories.make_agent(org, "Atendimento", provider="anthropic")
        channels.append(factories.make_channel(org, agent=agent, webhook_secret=SECRET))
    seed_history(channels, args.history)
    return [
        Line(str(channels[i % len(channels)].pk), f"5511{7000_0000 + i:08d}")
        for i in range(args.conversations)
    ]


def seed_history(channels: list[Any], per_channel: int) -> None:
    """A business that has been running: ``per_channel`` past customers per number, each with
    a closed conversation of four messages, then ``ANALYZE`` — the planner statistics a live
    database has. Against empty, never-analysed tables PostgreSQL plans the webhook's and the
    turn's lookups as nested loops over every row (it believes the tables hold one), which
    costs a fresh bench database milliseconds of server CPU per query that no running
    installation pays."""
    from django.db import connection
    from django.utils import timezone

    from conversation.models import Contact, Conversation, ConversationStatus, Message

    now = timezone.now()
    for channel in channels:
        org = channel.organization_id
        contacts = Contact.objects.bulk_create(
            Contact(organization_id=org, phone=f"5561{i:09d}", name=f"Cliente {i}")
            for i in range(per_channel)
        )
        conversations = Conversation.objects.bulk_create(
            Conversation(
                organization_id=org,
                channel=channel,
                contact=contact,
                status=ConversationStatus.CLOSED,
                last_message_at=now,
                last_inbound_at=now,
            )
            for contact in contacts
        )
        Message.objects.bulk_create(
            Message(
                organization_id=org,
                conversation=conversation,
                channel=channel,
                direction=direction,
                sender_kind=sender,
                body="mensagem antiga",
                provider_message_id=f"hist-{conversation.pk.hex}-{n}",
                status=status,
            )
            for conversation in conversations
            for n, (direction, sender, status) in enumerate(
                [("inbound", "customer", "received"), ("outbound", "ai", "delivered")] * 2
            )
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


# --- HTTP to the web server ----------------------------------------------------------------


class Poster:
    """One keep-alive connection to gunicorn; a signed simulator webhook per call."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn: http.client.HTTPConnection | None = None

    def post(self, line: Line, text: str) -> int:
        body = json.dumps({"from": line.phone, "text": text, "id": uuid.uuid4().hex}).encode()
        headers = {
            "Content-Type": "application/json",
            "X-Simulator-Secret": SECRET,
            # A TLS-terminating proxy in front, as in production (SECURE_SSL_REDIRECT).
            "X-Forwarded-Proto": "https",
            "Host": "127.0.0.1",
        }
        for attempt in (1, 2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                self.conn.request("POST", f"/webhooks/simulator/{line.channel_id}", body, headers)
                response = self.conn.getresponse()
                response.read()
                return response.status
            except (OSError, http.client.HTTPException):
                self.conn = None  # the server closed an idle keep-alive connection
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def sequential_acks(port: int, lines: list[Line], prefix: str) -> list[float]:
    """Latency (ms) of 50 webhooks sent one at a time on one keep-alive connection, from the
    50 phones ``prefix`` names: first-time customers the first time, returning ones after."""
    poster = Poster(port)
    latencies = []
    for i in range(50):
        line = Line(lines[i % len(lines)].channel_id, f"{prefix}{9000_0000 + i:08d}")
        started = time.perf_counter()
        poster.post(line, "oi")
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def wait_ready(port: int, deadline: float, procs: Procs) -> None:
    while time.monotonic() < deadline:
        if procs.web is not None and procs.web.poll() is not None:
            raise SystemExit(f"gunicorn exited; see {procs.logs / 'web.log'}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health/ready/", headers={"X-Forwarded-Proto": "https"})
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit("the web server never became ready")


# --- the closed loop -----------------------------------------------------------------------


# Rows commit out of their timestamp order: the watcher looks back this far past the latest
# delivery it saw (sent_at), and this far for the reply's row itself (created_at).
SENT_LOOK_BACK_S = 2.0
CREATED_LOOK_BACK_S = 20.0


class Replies:
    """Watches the database for delivered AI replies; wakes the customer waiting on one."""

    def __init__(self) -> None:
        self.events: dict[str, threading.Event] = {}
        self.delivered: dict[str, list[float]] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.seen: set[Any] = set()

    def expect(self, phone: str) -> threading.Event:
        event = threading.Event()
        with self.lock:
            self.events[phone] = event
        return event

    def run(self) -> None:
        """Poll for the replies of the waiting customers' conversations.

        By conversation and creation time (the messages' ``(conversation, created_at)``
        index): a poll costs a few index probes (4 ms here). Polling by ``sent_at`` alone,
        which has no index, scanned the whole message table 20 times a second (32-40 ms a
        poll by the end of a run), CPU the product under test could not use. A reply
        delivered more than ``CREATED_LOOK_BACK_S`` after its row was written is not seen,
        and counts as a reply timeout."""
        from django.db import close_old_connections

        from conversation.models import Conversation, Message

        conversations: dict[Any, str] = {}  # conversation id → the customer's phone
        resolved_at = 0.0
        since = None
        while not self.stop.is_set():
            with self.lock:
                waiting = set(self.events)
            if waiting - set(conversations.values()) or time.monotonic() - resolved_at > 2:
                # New customers, and now and then everyone (a conversation may be replaced).
                phones = waiting | set(conversations.values())
                conversations.update(
                    Conversation.objects.filter(contact__phone__in=phones).values_list(
                        "pk", "contact__phone"
                    )
                )
                resolved_at = time.monotonic()
            rows = Message.objects.filter(
                conversation_id__in=list(conversations), direction="outbound", sender_kind="ai"
            ).exclude(sent_at=None)
            if since is not None:
                rows = rows.filter(
                    created_at__gte=since - timedelta(seconds=CREATED_LOOK_BACK_S),
                    sent_at__gte=since - timedelta(seconds=SENT_LOOK_BACK_S),
                )
            latest = since
            for pk, conversation_id, sent_at in rows.values_list(
                "pk", "conversation_id", "sent_at"
            ):
                if pk in self.seen:
                    continue
                self.seen.add(pk)
                phone = conversations[conversation_id]
                with self.lock:
                    self.delivered.setdefault(phone, []).append(sent_at.timestamp())
                    event = self.events.pop(phone, None)
                if event is not None:
                    event.set()
                latest = sent_at if latest is None or sent_at > latest else latest
            if latest is not None:
                since = latest
            close_old_connections()
            self.stop.wait(0.05)


def closed_loop(
    port: int, lines: list[Line], duration: float, replies: Replies, reply_timeout: float
) -> tuple[list[float], int, int]:
    """Each customer: send, wait for the reply, send again; until ``duration`` is over."""
    first_reply: list[float] = []
    errors = {"http": 0, "timeout": 0}
    lock = threading.Lock()
    end = time.monotonic() + duration
    texts = ["oi, tudo bem?", "qual o prazo de entrega?", "aceitam pix?", "obrigado!"]

    def customer(line: Line, offset: float) -> None:
        time.sleep(offset)  # spread the first lines over a second
        poster = Poster(port)
        n = 0
        while time.monotonic() < end:
            event = replies.expect(line.phone)
            sent = time.time()
            status = poster.post(line, texts[n % len(texts)])
            n += 1
            if status != 200:
                with lock:
                    errors["http"] += 1
                continue
            if not event.wait(reply_timeout):
                with lock:
                    errors["timeout"] += 1
                continue
            with replies.lock:
                delivered = replies.delivered[line.phone][-1]
            with lock:
                first_reply.append(delivered - sent)

    threads = [
        threading.Thread(target=customer, args=(line, i / max(len(lines), 1)), daemon=True)
        for i, line in enumerate(lines)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=duration + reply_timeout + 30)
    return first_reply, errors["http"], errors["timeout"]


# --- the open loop (webhook acks) ----------------------------------------------------------


def open_loop(
    port: int, lines: list[Line], rate: float, seconds: float
) -> tuple[list[float], int, list[float]]:
    """POST at ``rate`` per second for ``seconds``; latency from each request's scheduled
    start (a late sender counts its wait, so a slow server cannot hide behind the client).
    Returns the latencies, how many requests failed or were dropped (``LATE_LIMIT_S``), and
    each latency's scheduled second of the phase (to see whether slow acks cluster)."""
    total = int(rate * seconds)
    work: queue.Queue[tuple[float, Line] | None] = queue.Queue()
    latencies: list[float] = []
    scheduled: list[float] = []
    failures = [0]
    dropped = [0]
    lock = threading.Lock()

    def sender() -> None:
        poster = Poster(port)
        while True:
            item = work.get()
            if item is None:
                return
            due, line = item
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            elif -delay > LATE_LIMIT_S:
                # The server fell that far behind: count the request as not sent, so the
                # phase ends in bounded time instead of draining a backlog for minutes.
                with lock:
                    dropped[0] += 1
                continue
            try:
                status = poster.post(line, "oi")
            except (OSError, http.client.HTTPException):
                status = 0
            elapsed = (time.perf_counter() - due) * 1000
            with lock:
                latencies.append(elapsed)
                scheduled.append(due - start)
                failures[0] += status != 200

    senders = [threading.Thread(target=sender, daemon=True) for _ in range(SENDERS)]
    for thread in senders:
        thread.start()
    start = time.perf_counter() + 0.2
    for i in range(total):
        work.put((start + i / rate, lines[i % len(lines)]))
    for _ in senders:
        work.put(None)
    for thread in senders:
        thread.join(timeout=seconds + 60)
    return latencies, failures[0] + dropped[0], scheduled


# --- figures from the database and the probe -----------------------------------------------


def probe_records(redis_url: str) -> list[dict[str, Any]]:
    import redis

    client = redis.Redis.from_url(redis_url)
    return [json.loads(raw) for raw in client.lrange("load:probe", 0, -1)]


def turn_figures(records: list[dict[str, Any]]) -> tuple[list[float], list[float], list[int]]:
    """Per answered turn task: wall minus its model calls (ms), CPU (ms), SQL statements."""
    from django.db.models import Sum

    from conversation.models import LlmCall, TriggerKind, Turn

    turns = {
        r["arg"]: r for r in records if r["task"] == "conversation.run_inbound_turn" and r["arg"]
    }
    by_key = dict(
        Turn.objects.filter(
            trigger_kind=TriggerKind.INBOUND, trigger_key__in=list(turns), outcome="replied"
        ).values_list("trigger_key", "pk")
    )
    model_ms = dict(
        LlmCall.objects.filter(turn_id__in=list(by_key.values()))
        .values("turn_id")
        .annotate(ms=Sum("latency_ms"))
        .values_list("turn_id", "ms")
    )
    non_model, cpu, queries = [], [], []
    for key, turn_id in by_key.items():
        record = turns[key]
        non_model.append(record["wall_ms"] - (model_ms.get(turn_id) or 0))
        cpu.append(record["cpu_ms"])
        queries.append(record["queries"])
    return non_model, cpu, queries


# --- main ----------------------------------------------------------------------------------


@contextmanager
def watchdog(seconds: float, on_expiry: Callable[[], None]) -> Iterator[None]:
    """A hard cap on the whole run: stop everything and exit, whatever is stuck."""
    done = threading.Event()

    def guard() -> None:
        if not done.wait(seconds):
            print(json.dumps({"error": f"bench exceeded --max-seconds={seconds}"}), flush=True)
            on_expiry()
            os._exit(3)

    threading.Thread(target=guard, daemon=True).start()
    try:
        yield
    finally:
        done.set()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    add = parser.add_argument
    add("--model-latency", type=float, default=1.0, help="seconds per model call")
    add("--follow-up-latency", type=float, default=None, help="the call after a tool result")
    add("--conversations", type=int, default=60, help="concurrent customers (closed loop)")
    add("--duration", type=float, default=30.0, help="seconds of closed loop")
    add("--warmup", type=float, default=8.0, help="seconds of closed loop not counted")
    add("--orgs", type=int, default=4)
    add("--history", type=int, default=1000, help="past customers per number (then ANALYZE)")
    add("--turn-workers", type=int, default=2, help="turn worker processes")
    add("--turn-threads", type=int, default=28, help="threads per turn worker")
    add("--outbox-workers", type=int, default=1)
    add("--outbox-threads", type=int, default=8)
    # The production defaults (config/gunicorn.conf.py): two processes of two threads a core.
    add("--web-workers", type=int, default=2 * (os.cpu_count() or 1))
    add("--web-threads", type=int, default=2)
    add("--no-db-pool", action="store_true", help="connect per task/request (no psycopg pool)")
    add(
        "--pgbouncer",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="web and workers through PgBouncer (default: straight to PostgreSQL)",
    )
    add("--pgbouncer-pool-size", type=int, default=40)
    add("--pgbouncer-mode", choices=["transaction", "session"], default="transaction")
    add(
        "--prepared-statements",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="DB_PREPARED_STATEMENTS=1 for web and workers (default; not through PgBouncer "
        "before 1.21 in transaction mode)",
    )
    add("--ack-rate", type=float, default=200.0)
    add("--ack-seconds", type=float, default=10.0)
    add(
        "--equal-priority",
        action="store_true",
        help="leave the web server and the workers at the same CPU priority while the acks "
        "meet the workers' backlog (the default gives the web server the CPU first)",
    )
    add("--reply-timeout", type=float, default=30.0)
    add("--db-name", default="retaguarda_load")
    add("--pg-port", type=int, default=5432)
    add("--redis-db", type=int, default=9)
    add("--max-seconds", type=float, default=900.0, help="hard cap on the whole run")
    add("--profile", default="", help="directory: cProfile every worker task, dumped per process")
    add("--fake-model", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.prepared_statements and args.pgbouncer and args.pgbouncer_mode == "transaction":
        raise SystemExit(
            "--pgbouncer in transaction mode needs --no-prepared-statements (PgBouncer before "
            "1.21 cannot carry prepared statements)"
        )
    follow_up = args.model_latency if args.follow_up_latency is None else args.follow_up_latency
    if args.fake_model:
        serve_fake_model(args.model_latency, follow_up)
        return
    emit_machine_line()  # before anything starts: the machine's own speed today
    procs = Procs(logs=Path(f"/tmp/retaguarda-load-{os.getpid()}"))
    procs.logs.mkdir(parents=True, exist_ok=True)
    redis_url = f"redis://127.0.0.1:6379/{args.redis_db}"
    stack = ExitStack()

    def stop_all() -> None:
        for process in [procs.web, *procs.turns, *procs.outbox, *procs.helpers]:
            _stop(process)

    with watchdog(args.max_seconds, stop_all), stack:
        stack.callback(stop_all)
        owner_url = prepare_database(args)
        flush_redis(redis_url)
        # One key for the bench and its servers: channel secrets are stored encrypted.
        field_key = base64.urlsafe_b64encode(os.urandom(32)).decode()
        setup_django(
            owner_url,
            DATABASE_APP_ROLE="",
            TURN_BURST_WINDOW_S="0",
            FIELD_ENCRYPTION_KEYS=field_key,
        )
        lines = seed(args)

        fake = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--fake-model",
                "--model-latency",
                str(args.model_latency),
                "--follow-up-latency",
                str(follow_up),
            ],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        procs.helpers.append(fake)
        assert fake.stdout is not None
        model_port = int(fake.stdout.readline())

        if args.pgbouncer:
            sys.path.insert(0, str(ROOT))
            from tests.serving.pgbouncer import pgbouncer

            bouncer_port = stack.enter_context(
                pgbouncer(
                    users=[APP],
                    pool_mode=args.pgbouncer_mode,
                    pool_size=args.pgbouncer_pool_size,
                    max_client_conn=2000,
                )
            )
            # Behind transaction pooling the app logs in as the application role (no SET ROLE).
            app_db = {
                "DATABASE_URL": f"postgres://{APP}@127.0.0.1:{bouncer_port}/{args.db_name}",
                "DATABASE_APP_ROLE": "",
            }
        else:
            app_db = {"DATABASE_URL": owner_url, "DATABASE_APP_ROLE": APP}

        from django.conf import settings

        routed = bool(getattr(settings, "CELERY_TASK_ROUTES", None))
        web_port = _free_port()
        base_env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(
                ("DATABASE_", "CELERY_", "DJANGO_", "ANTHROPIC_", "DB_POOL", "DB_PREPARE")
            )
        }
        base_env.update(
            app_db,
            DJANGO_SETTINGS_MODULE="config.settings",
            DJANGO_ENV="production",
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            FIELD_ENCRYPTION_KEYS=field_key,
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            CELERY_BROKER_URL=redis_url,
            REDIS_URL=redis_url,
            ANTHROPIC_API_KEY="load-bench-key",
            ANTHROPIC_BASE_URL=f"http://127.0.0.1:{model_port}",
            ANTHROPIC_MAX_RETRIES="0",
            TURN_BURST_WINDOW_S="0",
            WEBHOOK_RATE_LIMIT_PER_MINUTE="100000000",
            LOG_LEVEL="WARNING",
            PYTHON=sys.executable,
            PYTHONPATH=f"{ROOT / 'bench'}:{ROOT}",
            LOAD_PROBE_REDIS_URL=redis_url,
            LOAD_PROFILE_DIR=args.profile or "",
        )
        if not routed:  # no per-queue routes configured: every task on the default queue
            base_env.update(CELERY_TURNS_QUEUE="retaguarda", CELERY_OUTBOX_QUEUE="retaguarda")
        pool = {} if not args.no_db_pool else {"DB_POOL_MAX_SIZE": "0"}
        if args.prepared_statements:
            base_env["DB_PREPARED_STATEMENTS"] = "1"

        web_env = {
            **base_env,
            **pool,
            "BIND": f"127.0.0.1:{web_port}",
            "WEB_CONCURRENCY": str(args.web_workers),
            "WEB_THREADS": str(args.web_threads),
            "DATABASE_APPLICATION_NAME": "retaguarda-web",
        }
        if not args.no_db_pool:
            web_env["DB_POOL_MAX_SIZE"] = str(args.web_threads)
        # As scripts/serve.sh does: production serves hashed static files from the manifest,
        # and readiness (/health/ready/, "static") fails on a checkout never collected.
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=web_env,
            check=True,
        )
        procs.web = _spawn(
            [sys.executable, "-m", "gunicorn", "config.wsgi", "-c", "config/gunicorn.conf.py"],
            web_env,
            procs.logs / "web.log",
        )
        for i in range(args.turn_workers):
            env = {**base_env, **pool, "TURN_THREADS": str(args.turn_threads)}
            procs.turns.append(
                _spawn(
                    ["bash", "scripts/worker.sh", "turns", "-I", "_load_probe"],
                    env,
                    procs.logs / f"turns-{i}.log",
                )
            )
        for i in range(args.outbox_workers):
            env = {**base_env, **pool, "OUTBOX_THREADS": str(args.outbox_threads)}
            procs.outbox.append(
                _spawn(
                    ["bash", "scripts/worker.sh", "outbox", "-I", "_load_probe"],
                    env,
                    procs.logs / f"outbox-{i}.log",
                )
            )
        wait_ready(web_port, time.monotonic() + 120, procs)
        time.sleep(3)  # workers connect to the broker

        replies = Replies()
        watcher = threading.Thread(target=replies.run, daemon=True)
        watcher.start()
        stack.callback(replies.stop.set)

        # Warm-up: imports, SDK clients, pools.
        closed_loop(web_port, lines, args.warmup, replies, args.reply_timeout)
        flush_redis_list(redis_url)
        cpu_before = _cpu_seconds_by_role(procs)
        started = time.time()
        first_reply, http_errors, timeouts = closed_loop(
            web_port, lines, args.duration, replies, args.reply_timeout
        )
        finished = time.time()
        cpu_after = _cpu_seconds_by_role(procs)
        time.sleep(1.0)
        records = probe_records(redis_url)

        from conversation.models import LlmCall, Turn

        window = Turn.objects.filter(
            outcome="replied",
            finished_at__gte=_aware(started),
            finished_at__lt=_aware(started + args.duration),
        )
        done = window.count()
        calls = LlmCall.objects.filter(turn__in=window).count()
        common = {
            "model_latency_s": args.model_latency,
            "follow_up_latency_s": follow_up,
            "model_calls_per_turn": round(calls / done, 2) if done else float("nan"),
            "conversations": args.conversations,
            "turn_workers": args.turn_workers,
            "turn_threads": args.turn_threads,
            "pgbouncer": args.pgbouncer_mode if args.pgbouncer else False,
            "db_pool": not args.no_db_pool,
            "prepared_statements": args.prepared_statements,
        }
        emit(
            "turns_per_second_at_model_latency",
            done / args.duration,
            "turns/s",
            done,
            **common,
        )
        emit("first_reply_p50_s", percentile(first_reply, 50), "s", len(first_reply), **common)
        emit(
            "first_reply_p99_s",
            percentile(first_reply, 99),
            "s",
            len(first_reply),
            http_errors=http_errors,
            reply_timeouts=timeouts,
            closed_loop_s=round(finished - started, 1),
        )
        non_model, cpu, queries = turn_figures(records)
        emit(
            "non_model_ms_per_turn_p50",
            percentile(non_model, 50),
            "ms",
            len(non_model),
            p99=round(percentile(non_model, 99), 1),
        )
        emit("non_model_cpu_ms_per_turn_p50", percentile(cpu, 50), "ms", len(cpu))
        emit(
            "sql_queries_per_turn",
            max(queries) if queries else float("nan"),
            "queries",
            len(queries),
            p50=percentile(queries, 50),
        )
        deliveries = [r for r in records if r["task"] == "conversation.deliver_outbox"]
        emit(
            "sql_queries_per_delivery",
            percentile([r["queries"] for r in deliveries], 50),
            "queries",
            len(deliveries),
        )
        # Where the machine's CPU went during the closed loop, per replied turn.
        by_role = {
            role: round((cpu_after.get(role, 0.0) - spent) * 1000 / max(done, 1), 1)
            for role, spent in cpu_before.items()
        }
        emit(
            "cpu_ms_per_turn_all_processes",
            sum(by_role.values()),
            "ms",
            done,
            cores=os.cpu_count(),
            **by_role,
        )
        rss = [_rss_mb(p.pid) for p in procs.turns]
        emit(
            "rss_mb_per_worker",
            sum(rss) / len(rss),
            "MB",
            len(rss),
            max=round(max(rss), 1),
            threads=args.turn_threads,
        )
        web_rss = [_rss_mb(pid) for pid in _children(procs.web.pid)] if procs.web else []
        if web_rss:
            emit("rss_mb_per_web_worker", sum(web_rss) / len(web_rss), "MB", len(web_rss))

        # Acks: the web tier alone (workers paused), then with the workers draining.
        ack_lines = [
            Line(line.channel_id, f"5521{9000_0000 + i:08d}") for i, line in enumerate(lines * 4)
        ]
        workers = [*procs.turns, *procs.outbox]
        for process in workers:
            _signal_group(process, signal.SIGSTOP)
        try:
            # The web tier's service time, one request at a time (no queueing), on a quiet
            # machine: measured before the workers started it shared the cores with their
            # boot (model loading, the promise detector's training) and read 19-37 ms.
            first_time = sequential_acks(web_port, lines, "5541")
            returning = sequential_acks(web_port, lines, "5541")
            ack_cpu_before = _cpu_seconds_by_role(procs)
            alone, failed_alone, alone_at = open_loop(
                web_port, ack_lines, args.ack_rate, args.ack_seconds
            )
            ack_cpu_after = _cpu_seconds_by_role(procs)
        finally:
            for process in workers:
                _signal_group(process, signal.SIGCONT)
        busy_lines = [Line(line.channel_id, "5531" + line.phone[4:]) for line in ack_lines]
        priority = {} if args.equal_priority else ingress_first(procs, owner_url)
        busy, failed_busy, busy_at = open_loop(
            web_port, busy_lines, args.ack_rate, args.ack_seconds
        )
        emit(
            "webhook_ack_sequential_p50_ms",
            percentile(first_time, 50),
            "ms",
            len(first_time),
            customers="first-time",
            returning_p50_ms=round(percentile(returning, 50), 2),
        )
        # What one ack costs the machine (web tier alone): at ``--ack-rate`` it must stay
        # well under cores / rate, or the requests queue.
        ack_by_role = {
            role: round((ack_cpu_after.get(role, 0.0) - spent) * 1000 / max(len(alone), 1), 2)
            for role, spent in ack_cpu_before.items()
            if role not in ("turn_workers", "outbox_workers", "fake_model")
        }
        emit(
            "cpu_ms_per_ack_all_processes",
            sum(ack_by_role.values()),
            "ms",
            len(alone),
            cores=os.cpu_count(),
            **ack_by_role,
        )
        for name, values, failed in (
            ("", busy, failed_busy),
            ("_web_only", alone, failed_alone),
        ):
            extra = {"rate_per_s": args.ack_rate, "non_200_or_dropped": failed}
            if not name:
                extra["ingress_priority"] = priority or "equal"
            emit(f"webhook_ack_p50_ms{name}", percentile(values, 50), "ms", len(values), **extra)
            emit(f"webhook_ack_p99_ms{name}", percentile(values, 99), "ms", len(values), **extra)
        # Where a tail comes from: the p99 of each second of the phase (a stall shows as one
        # or two slow seconds; a saturated tier as every second slow).
        for name, values, at in (("", busy, busy_at), ("_web_only", alone, alone_at)):
            seconds_p99 = _p99_by_second(values, at)
            emit(
                f"webhook_ack_p99_ms{name}_worst_second",
                max(seconds_p99, default=0.0),
                "ms",
                len(values),
                by_second=seconds_p99,
            )
        print(json.dumps({"logs": str(procs.logs)}), file=sys.stderr)
        stop_all()  # before the pooler and the fake model go away


def _p99_by_second(values: list[float], at: list[float]) -> list[float]:
    by_second: dict[int, list[float]] = {}
    for second, ms in zip(at, values, strict=True):
        by_second.setdefault(int(second), []).append(ms)
    return [round(percentile(by_second[k], 99), 1) for k in sorted(by_second)]


# The customer-facing ingress first, the backlog with what is left (README "Capacity": on a
# shared machine, give the web server the CPU before the workers, e.g. systemd CPUWeight=).
# Each process the bench starts leads its own session, and Linux shares the CPU between
# sessions ("autogroups") before it looks at a process's nice value, so the weights go on the
# autogroups; the workers' PostgreSQL backends (found by application_name) share the server's
# autogroup with the web's and get the same low weight inside it.
WEB_AUTOGROUP_NICE = -10
WORKER_NICE = 19


def ingress_first(procs: Procs, owner_url: str) -> dict[str, object]:
    """Give the web server the CPU before the workers and their database backends; returns
    what was set (printed with the figures it shapes). Needs root for the web's weight and
    the backends (owned by postgres); without it, says what it could not set."""
    done: dict[str, object] = {}

    def autogroup(pid: int, nice: int) -> bool:
        try:
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))
        except OSError:
            return False
        return True

    if procs.web is not None:
        done["web_autogroup_nice"] = (
            WEB_AUTOGROUP_NICE if autogroup(procs.web.pid, WEB_AUTOGROUP_NICE) else 0
        )
    workers = [*procs.turns, *procs.outbox]
    set_ = sum(autogroup(process.pid, WORKER_NICE) for process in workers)
    done["worker_autogroups_at_nice_19"] = f"{set_}/{len(workers)}"
    import psycopg

    with psycopg.connect(owner_url) as db:
        rows = db.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name IN (%s, %s)",
            ("retaguarda-turns", "retaguarda-outbox"),
        ).fetchall()
    reniced = 0
    for (pid,) in rows:
        with suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, WORKER_NICE)
            reniced += 1
    done["worker_db_backends_at_nice_19"] = f"{reniced}/{len(rows)}"
    return done


def flush_redis_list(redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).delete("load:probe")


def _aware(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


if __name__ == "__main__":
    main()
