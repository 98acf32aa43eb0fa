"""The fault harness: a private broker, a fake WAHA provider, signed webhooks, and the tally.

Used by the fault tests (small scale) and ``bench/faults.py`` (200 conversations). Needs
Django set up on PostgreSQL (worker processes share the database) and ``redis-server`` on
PATH. Nothing here changes product behaviour: it drives the product and counts.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SEND_PATH = "/api/sendText"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the broker -----------------------------------------------------------------------------


class BrokerProcess:
    """A private ``redis-server`` (no persistence) that a scenario may stop and start again.

    Restarted, it is empty: "the broker lost its queue" is the same fault as "down"."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        if self._proc is not None:
            return
        self._proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no"),  # no persistence: restarted = empty
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not listen on {self.port}")

    def stop(self) -> None:
        if self._proc is None:
            return
        self._proc.send_signal(signal.SIGCONT)  # a paused server cannot act on SIGTERM
        self._proc.terminate()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._proc = None

    def pause(self) -> None:
        """Stalled, not down: the socket stays open and the kernel still accepts connections,
        but the server answers nothing until ``resume`` (SIGSTOP / SIGCONT)."""
        assert self._proc is not None
        self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self._proc is not None
        self._proc.send_signal(signal.SIGCONT)

    def __enter__(self) -> BrokerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- the provider ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    tag: str  # which channel (the path prefix of its api_base_url)
    chat_id: str
    text: str
    provider_id: str
    at: float  # time.monotonic() when received


class FakeProvider:
    """A WAHA ``/api/sendText`` per channel tag: ``http://127.0.0.1:<port>/t/<tag>``.
    Other WAHA calls (``sendSeen``, typing) are answered and not recorded.

    Modes per tag: ``ok`` records the send and answers an id; ``down`` answers 503 (retryable);
    ``hang`` holds the request ``hang_s`` seconds and answers 504 (the adapter's timeout
    should give up first)."""

    def __init__(self, *, hang_s: float = 60.0) -> None:
        self.hang_s = hang_s
        self.sends: list[Send] = []
        self.refused = 0  # sends answered 503 while a tag was ``down``
        self._modes: dict[str, str] = {}
        self._lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                provider._handle(self)

            def log_message(self, *args: Any) -> None:  # quiet
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def url_for(self, tag: str) -> str:
        return f"http://127.0.0.1:{self.port}/t/{tag}"

    def set_mode(self, tag: str, mode: str) -> None:
        assert mode in ("ok", "down", "hang")
        with self._lock:
            self._modes[tag] = mode

    def sends_for(self, tag: str) -> list[Send]:
        with self._lock:
            return [s for s in self.sends if s.tag == tag]

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        parts = request.path.split("/")  # "", "t", tag, "api", "sendText"
        tag = parts[2] if len(parts) > 4 and parts[1] == "t" else ""
        length = int(request.headers.get("Content-Length") or 0)
        payload = json.loads(request.rfile.read(length) or b"{}")
        with self._lock:
            mode = self._modes.get(tag, "ok")
        sending = request.path.endswith(SEND_PATH)
        if mode == "down":
            with self._lock:
                self.refused += sending
            self._answer(request, 503, {"message": "provider down (fault)"})
            return
        if mode == "hang":
            time.sleep(self.hang_s)
            self._answer(request, 504, {"message": "provider hung (fault)"})
            return
        if not sending:  # read receipts, typing: answered, not counted as replies
            self._answer(request, 200, {})
            return
        chat = str(payload.get("chatId", ""))
        provider_id = f"true_{chat}_{uuid.uuid4().hex[:20].upper()}"
        with self._lock:
            self.sends.append(
                Send(tag, chat, str(payload.get("text", "")), provider_id, time.monotonic())
            )
        self._answer(request, 201, {"id": provider_id})

    @staticmethod
    def _answer(request: BaseHTTPRequestHandler, status: int, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        with contextlib.suppress(OSError):  # the client may have timed out and gone
            request.wfile.write(data)

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


# -- webhooks -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Posted:
    """One customer line the driver posted."""

    channel_id: str
    phone: str
    provider_message_id: str
    burst: int  # the burst's index within its conversation
    at: float  # time.monotonic() just before the POST
    status_code: int


def waha_event(*, session: str, phone: str, text: str, message_id: str) -> dict[str, Any]:
    """A WEBJS ``message`` event shaped like tests/fixtures/whatsapp/waha/event_message.jsonc."""
    return {
        "event": "message",
        "session": session,
        "engine": "WEBJS",
        "payload": {
            "id": message_id,
            "timestamp": int(time.time()),
            "from": f"{phone}@c.us",
            "fromMe": False,
            "to": None,
            "body": text,
            "hasMedia": False,
            "_data": {"notifyName": "Cliente"},
        },
    }


def post_waha(client: Any, channel: Any, event: Mapping[str, Any]) -> int:
    """POST ``event`` signed like WAHA signs it (HMAC-SHA512 of the raw body)."""
    body = json.dumps(event).encode()
    digest = hmac.new(channel.webhook_secret.encode(), body, hashlib.sha512).hexdigest()
    response = client.post(
        f"/webhooks/waha/{channel.pk}",
        data=body,
        content_type="application/json",
        HTTP_X_WEBHOOK_HMAC=digest,
        HTTP_X_WEBHOOK_HMAC_ALGORITHM="sha512",
        SERVER_NAME="localhost",
    )
    return int(response.status_code)


def post_line(client: Any, channel: Any, phone: str, text: str, burst: int) -> Posted:
    message_id = f"false_{phone}@c.us_{uuid.uuid4().hex[:24].upper()}"
    at = time.monotonic()
    event = waha_event(session=channel.external_id, phone=phone, text=text, message_id=message_id)
    code = post_waha(client, channel, event)
    return Posted(str(channel.pk), phone, message_id, burst, at, code)


# -- the scenario ---------------------------------------------------------------------------


@dataclass
class Stack:
    """What a fault may act on while a scenario runs."""

    broker: BrokerProcess
    provider: FakeProvider
    workers: list[subprocess.Popen[bytes]]
    channels: list[Any]  # ChannelSession rows, one tag each (tag = str(channel.pk))
    notes: dict[str, float] = field(default_factory=dict)  # e.g. fault start/end times


Fault = Callable[[Stack, int], None]  # called before each burst wave with the wave index


@dataclass(frozen=True)
class Scenario:
    name: str
    conversations: int
    bursts: int = 1  # bursts per conversation
    lines_per_burst: int = 1
    line_gap_s: float = 0.1  # between lines of one burst
    burst_gap_s: float = 1.0  # between waves of bursts
    deadline_s: float = 120.0  # after the last post: stop waiting, count what is missing
    worker_env: Mapping[str, str] = field(default_factory=dict)
    before_wave: Fault | None = None
    after_posting: Callable[[Stack], None] | None = None


TEXTS = ("oi", "qual o prazo de entrega?", "aceitam pix?", "qual o horário de atendimento?")


def drive(scenario: Scenario, stack: Stack, client: Any) -> list[Posted]:
    """Post the scenario's bursts round-robin over its channels' conversations."""
    posted: list[Posted] = []
    for wave in range(scenario.bursts):
        if scenario.before_wave is not None:
            scenario.before_wave(stack, wave)
        for conv in range(scenario.conversations):
            channel = stack.channels[conv % len(stack.channels)]
            phone = f"55119{conv:08d}"
            for line in range(scenario.lines_per_burst):
                text = TEXTS[(wave + line) % len(TEXTS)]
                posted.append(post_line(client, channel, phone, text, wave))
                if line + 1 < scenario.lines_per_burst:
                    time.sleep(scenario.line_gap_s)
        if wave + 1 < scenario.bursts:
            time.sleep(scenario.burst_gap_s)
    if scenario.after_posting is not None:
        scenario.after_posting(stack)
    return posted


def wait_until_answered(posted: list[Posted], provider: FakeProvider, deadline_s: float) -> None:
    """Until every conversation's last burst has a reply at the provider, or the deadline."""
    last: dict[tuple[str, str], float] = {}
    for line in posted:
        key = (line.channel_id, f"{line.phone}@c.us")
        last[key] = max(last.get(key, 0.0), line.at)
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        with provider._lock:
            replied = {(s.tag, s.chat_id): s.at for s in provider.sends}
        if all(replied.get(key, -1.0) >= at for key, at in last.items()):
            time.sleep(1.0)  # let late duplicates show up before counting
            return
        time.sleep(0.2)


# -- the tally ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tally:
    scenario: str
    messages: int
    answered_once: int
    lost: int
    duplicated: int
    out_of_order: int
    max_first_reply_s: float | None  # None: no burst got a reply
    webhook_5xx: int

    def lines(self) -> Iterator[dict[str, Any]]:
        """bench/ JSON lines: {"name", "value", "unit", "n"}."""
        n = self.messages
        for name, value, unit in (
            ("messages", self.messages, "messages"),
            ("answered_once", self.answered_once, "messages"),
            ("lost", self.lost, "messages"),
            ("duplicated", self.duplicated, "messages"),
            ("out_of_order", self.out_of_order, "pairs"),
            ("max_first_reply_s", self.max_first_reply_s, "s"),
            ("webhook_5xx", self.webhook_5xx, "responses"),
        ):
            yield {"name": f"faults_{self.scenario}_{name}", "value": value, "unit": unit, "n": n}


def tally(scenario: str, posted: list[Posted], provider: FakeProvider) -> Tally:
    """Count from the database and the provider's record (see tests/faults/__init__.py)."""
    from conversation.models import Direction, Message, Turn

    ids = [p.provider_message_id for p in posted]
    inbound = list(
        Message.objects.filter(direction=Direction.INBOUND, provider_message_id__in=ids).values(
            "pk", "channel_id", "provider_message_id", "turn_id", "conversation_id"
        )
    )
    stored_twice = sum(
        n - 1
        for n in Counter((m["channel_id"], m["provider_message_id"]) for m in inbound).values()
    )
    by_id = {m["provider_message_id"]: m for m in inbound}
    conversations = {m["conversation_id"] for m in inbound}
    outbound = list(
        Message.objects.filter(
            direction=Direction.OUTBOUND, conversation_id__in=conversations
        ).values("pk", "turn_id", "conversation_id", "provider_message_id", "created_at", "status")
    )
    with provider._lock:
        sends = list(provider.sends)
    received = {s.provider_id: s for s in sends}
    rows_by_provider_id = {
        o["provider_message_id"]: o for o in outbound if o["provider_message_id"]
    }

    # Sends beyond one per outbound row, per conversation (a resent row keeps only its last id).
    sends_per_conv: Counter[str] = Counter()
    for send in sends:
        row = rows_by_provider_id.get(send.provider_id)
        if row is not None:
            sends_per_conv[str(row["conversation_id"])] += 1
    rows_sent_per_conv = Counter(
        str(o["conversation_id"]) for o in outbound if o["provider_message_id"] in received
    )
    unmatched_sends = sum(1 for s in sends if s.provider_id not in rows_by_provider_id)
    extra_sends = unmatched_sends + sum(
        max(0, sends_per_conv[c] - rows_sent_per_conv[c]) for c in sends_per_conv
    )

    replying_turns = {o["turn_id"] for o in outbound if o["turn_id"] is not None}
    answered_turns = {m["turn_id"] for m in inbound if m["turn_id"] is not None}
    turns_answering_nothing = Turn.objects.filter(
        pk__in=replying_turns - answered_turns, trigger_kind="inbound_message"
    ).count()

    delivered_turns = {
        o["turn_id"] for o in outbound if o["provider_message_id"] in received and o["turn_id"]
    }
    turn_of = {pid: m["turn_id"] for pid, m in by_id.items()}
    answered = [p for p in posted if turn_of.get(p.provider_message_id) in delivered_turns]
    dup_convs = {c for c in sends_per_conv if sends_per_conv[c] > rows_sent_per_conv[c]}
    answered_once = [
        p for p in answered if str(by_id[p.provider_message_id]["conversation_id"]) not in dup_convs
    ]

    # Out of order: adjacent receipts of one conversation whose rows were written the other way.
    receipts: dict[str, list[tuple[float, Any]]] = defaultdict(list)
    for send in sends:
        row = rows_by_provider_id.get(send.provider_id)
        if row is not None:
            receipts[str(row["conversation_id"])].append((send.at, row["created_at"]))
    out_of_order = 0
    for items in receipts.values():
        written = [created for _, created in sorted(items, key=lambda item: item[0])]
        out_of_order += sum(1 for a, b in itertools.pairwise(written) if a > b)

    # First reply per burst: from its first line to the first receipt on that chat after it.
    first_line: dict[tuple[str, str, int], float] = {}
    for p in posted:
        key = (p.channel_id, f"{p.phone}@c.us", p.burst)
        first_line[key] = min(first_line.get(key, p.at), p.at)
    delays = []
    for (channel_id, chat, _), started in first_line.items():
        later = [
            s.at for s in sends if s.tag == channel_id and s.chat_id == chat and s.at >= started
        ]
        if later:
            delays.append(min(later) - started)

    return Tally(
        scenario=scenario,
        messages=len(posted),
        answered_once=len(answered_once),
        lost=len(posted) - len(answered),
        duplicated=extra_sends + turns_answering_nothing + stored_twice,
        out_of_order=out_of_order,
        max_first_reply_s=round(max(delays), 3) if delays else None,
        webhook_5xx=sum(1 for p in posted if p.status_code >= 500),
    )
