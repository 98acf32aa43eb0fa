"""Drive multi-turn dialogues through the public pipeline and judge what happened.

A dialogue (``dialogues.yaml``) is a list of steps: customer lines sent to the simulator
webhook (one line, or a burst of lines answered by one turn) and out-of-band events (staff
takeover, a staff message, give-back, the kill switch, a billing outage, a runtime error,
a case reply). Every customer line runs the real turn: router-less channel → runtime
adapters → the pure runtime → outbox, with either the offline classifier or a scripted
closed-schema classifier behind the Anthropic SDK at the HTTP level (``ScriptedClaude``).

What is judged comes from the system's own records, never from the runtime's verdicts:
actions from the backend's log (``RuntimeAction`` rows for the demo backend, the fake
billing system's own list for the HTTP backend), closure from the stored runtime state,
reply properties from the outbound messages.

No pytest here: ``bench/runtime.py`` runs the same dialogues.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from unittest import mock

import time_machine
import yaml
from django.db.models import F
from django.test import Client, TestCase, override_settings

from conversation import dispatch
from conversation.models import Conversation, Message, RuntimeAction
from conversation.runtime import DemoBackend
from conversation.turns.runtime_note import ACTIONS_HEADER
from tests import factories
from tests.fakes import anthropic_bodies as bodies
from tests.fakes.anthropic_server import FakeAnthropicServer, ReceivedRequest, Reply

HERE = Path(__file__).resolve().parent
DIALOGUES_PATH = HERE / "dialogues.yaml"
INVOICE_PATH = HERE.parent / "fixtures" / "runtime" / "demo_invoice.json"
HOLDER_PHONE = "5511987654321"  # line final 4321 (the holder's)
HANDOFF_KEYWORDS = ["falar com atendente", "quero um humano"]
MODES = ("offline", "llm")
BURST_WINDOW_S = 2.0
ORCHESTRATOR_TEXT = "Certo! Posso ajudar com mais alguma coisa na sua fatura?"
# Invoice item names a reply may name (to check a confirmation names exactly its items).
_phones = itertools.count(1)


def load_invoice() -> dict[str, Any]:
    data = json.loads(INVOICE_PATH.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def invoice_item_names(invoice: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for line, sections in invoice.items():
        if line == "Fatura Resumo" or not isinstance(sections, Mapping):
            continue
        for section, entries in sections.items():
            if section == "Plano":
                continue
            for entry in entries:
                if entry["desc"] not in names:
                    names.append(entry["desc"])
    return names


# --- the dialogue file -------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    lines: tuple[str, ...] = ()  # customer lines (one turn for all of them)
    event: str = ""
    text: str = ""  # the staff / case message of an event
    expect: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def label(self) -> str:
        return " + ".join(self.lines) if self.lines else f"<{self.event}>"


@dataclass(frozen=True)
class Dialogue:
    id: str
    covers: str
    steps: tuple[Step, ...]
    modes: tuple[str, ...] = MODES
    backend: str = "demo"  # demo | billing
    phone: str = HOLDER_PHONE


@dataclass(frozen=True)
class Suite:
    dialogues: tuple[Dialogue, ...]
    llm: Mapping[str, Mapping[str, Any]]
    matcher: Mapping[str, Sequence[str]]


def load_suite(path: Path = DIALOGUES_PATH) -> Suite:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    dialogues = []
    for d in raw["dialogues"]:
        steps = []
        for s in d["steps"]:
            if "say" in s:
                lines: tuple[str, ...] = (str(s["say"]),)
            elif "burst" in s:
                lines = tuple(str(x) for x in s["burst"])
            else:
                lines = ()
            steps.append(
                Step(
                    lines=lines,
                    event=str(s.get("event", "")),
                    text=str(s.get("text", "")),
                    expect=dict(s.get("expect") or {}),
                )
            )
        dialogues.append(
            Dialogue(
                id=str(d["id"]),
                covers=str(d.get("covers", "")),
                steps=tuple(steps),
                modes=tuple(d.get("modes", MODES)),
                backend=str(d.get("backend", "demo")),
                phone=str(d.get("phone", HOLDER_PHONE)),
            )
        )
    ids = [d.id for d in dialogues]
    assert len(ids) == len(set(ids)), "dialogue ids must be unique"
    return Suite(
        dialogues=tuple(dialogues),
        llm={_key(k): v for k, v in (raw.get("llm") or {}).items()},
        matcher={_key(k): v for k, v in (raw.get("matcher") or {}).items()},
    )


def _key(text: str) -> str:
    return " ".join(str(text).split()).lower()


# --- a scripted closed-schema model behind the real SDK -----------------------------------


class ScriptedClaude(FakeAnthropicServer):
    """Answers each request from what it asks, in the recorded wire format.

    Classifier calls (forced ``classificar_intencao``) get the suite's classification of
    the customer's message (read from the prompt the runtime built), or ``unknown``;
    matcher calls get the suite's picks; the send gate's promise check hears "no
    promise"; the orchestrator sends one fixed message, after what the runtime's note
    says was done this turn (as a model that follows the note would)."""

    def __init__(self, suite: Suite) -> None:
        super().__init__()
        self.suite = suite
        base = bodies.recorded("response_tool_use_intent_classifier.json", "runtime_adapters")
        self._base = base
        self.unscripted: list[str] = []

    def _next_reply(self, received: ReceivedRequest) -> Reply:
        with self._lock:
            self.requests.append(received)
        body = received.json or {}
        tools = [t.get("name") for t in body.get("tools") or []]
        messages = body.get("messages") or []
        if tools == ["classificar_intencao"]:
            text = _customer_text(messages)
            payload = self.suite.llm.get(_key(text))
            if payload is None:
                self.unscripted.append(text)
                payload = {"kind": "unknown"}
            return _json_reply(
                bodies.tool_use_response("classificar_intencao", dict(payload), base=self._base)
            )
        if tools == ["classify_promise"]:
            # The send gate's promise check (cases): the runtime's texts report what the
            # runtime itself did or asks; none promises a person's follow-up.
            verdict = {"promise": False, "who_acts": "ai_now"}
            return _json_reply(
                bodies.tool_use_response("classify_promise", verdict, base=self._base)
            )
        if tools == ["escolher_itens"]:
            prompt = _content_text(messages[-1]) if messages else ""
            found = re.search(r"Menção do cliente: (\".*\")", prompt)
            mention = json.loads(found.group(1)) if found else ""
            picks = list(self.suite.matcher.get(_key(mention), []))
            return _json_reply(
                bodies.tool_use_response("escolher_itens", {"matches": picks}, base=self._base)
            )
        # The orchestrator's tool loop: one message, then the end of the turn.
        last = messages[-1] if messages else {}
        content = last.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return _json_reply(bodies.text_response())
        told = runtime_told(messages)
        text = f"{told} {ORCHESTRATOR_TEXT}" if told else ORCHESTRATOR_TEXT
        return _json_reply(bodies.tool_use_response("send_message", {"text": text}))


def runtime_told(messages: Sequence[Mapping[str, Any]]) -> str:
    """The actions the runtime's note tells the orchestrator this turn made, if any."""
    prompt = _content_text(messages[-1]) if messages else ""
    if ACTIONS_HEADER not in prompt:
        return ""
    block = prompt.split(ACTIONS_HEADER, 1)[1].strip().split("\n\n", 1)[0]
    return "; ".join(line.lstrip("- ").strip() for line in block.splitlines() if line.strip())


def _json_reply(body: Mapping[str, Any]) -> Reply:
    return Reply(200, json.dumps(body).encode(), {"content-type": "application/json"})


def _content_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, Mapping))


def _customer_text(messages: Sequence[Mapping[str, Any]]) -> str:
    prompt = _content_text(messages[-1]) if messages else ""
    marker = "[MENSAGEM DO CLIENTE]"
    if marker not in prompt:
        return ""
    tail = prompt.split(marker, 1)[1].strip().splitlines()
    try:
        return str(json.loads(tail[0])) if tail else ""
    except ValueError:
        return tail[0]


# --- a billing system whose retention asks a free-text question ----------------------------

FREE_TEXT_QUESTION = "Antes de cancelar, conta pra gente: por que você quer sair do {names}?"


class FreeTextRetention(DemoBackend):
    """Strategic cancellations pause on a free-text question (any reason is accepted); the
    resume completes them."""

    def vas_strategic(
        self, *, items: list[dict[str, Any]], workflow_input: dict[str, Any], action_id: str = ""
    ) -> dict[str, Any]:
        self._record("vas_strategic", items, "name")
        execution_id = f"exec-{len(self._paused) + 1}"
        self._paused[execution_id] = list(items)
        names = " e ".join(i["name"] for i in items)
        return {
            "aguardando_resposta": True,
            "execution_id": execution_id,
            "expected_input_key": "motivo",
            "normalize": "free_text",
            "question": FREE_TEXT_QUESTION.format(names=names),
        }

    def resume_workflow(
        self, *, tool: str, execution_id: str, input_key: str, value: str
    ) -> dict[str, Any]:
        super().resume_workflow(
            tool=tool, execution_id=execution_id, input_key=input_key, value=value
        )
        return {"success": True, "message": "Registrei o cancelamento do HBO Max."}


@contextmanager
def free_text_retention() -> Iterator[None]:
    """While the block runs, the fake billing system (``FakeBilling``) asks the free-text
    question of ``FreeTextRetention``."""
    with mock.patch(f"{__name__}.DemoBackend", FreeTextRetention):
        yield


# --- a fake billing system over HTTP (for outages and pausing workflows) -------------------


class FakeBilling:
    """The billing contract of ``billing_http`` over a ``DemoBackend`` with a retention
    offer (strategic cancellations pause on a question). ``down`` answers 503 to all.

    Like a real billing system it honours ``Idempotency-Key``: a POST with a key it already
    answered gets the stored answer again and acts on nothing. ``lose_next_reply`` makes
    the next action act but answer 503 (its reply lost on the way back); ``promise`` is
    appended to the message of every action that succeeds."""

    def __init__(self, invoice: Mapping[str, Any]) -> None:
        self.invoice = dict(invoice)
        self.backend = DemoBackend(invoice, strategic_retention_offer=True)
        self.down = False
        self.actions_down = False  # only the action endpoints fail
        self.lose_next_reply = False
        self.promise = ""
        self.answered: dict[str, tuple[int, Any]] = {}  # by Idempotency-Key
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeBilling:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def answer(
        self, method: str, path: str, body: Mapping[str, Any], key: str = ""
    ) -> tuple[int, Any]:
        if self.down or (self.actions_down and method == "POST"):
            return 503, {"error": "indisponível"}
        if method == "POST" and key in self.answered:
            return self.answered[key]
        status, data = self._act(method, path, body)
        if method == "POST":
            if key:
                self.answered[key] = (status, data)
            if self.promise and isinstance(data, dict) and data.get("success"):
                data = {**data, "message": f"{data.get('message', '')} {self.promise}".strip()}
            if self.lose_next_reply:
                self.lose_next_reply = False
                return 503, {"error": "resposta perdida"}
        return status, data

    def _act(self, method: str, path: str, body: Mapping[str, Any]) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]
        b = self.backend
        if method == "GET" and parts[:1] == ["customers"]:
            return 200, self.invoice
        if method == "GET" and parts[:1] == ["invoices"]:
            return 200, b.invoice_explanation(msisdn=parts[1])
        if parts == ["vas", "cancel"]:
            return 200, b.cancelar_vas_single(items=body["items"], workflow_input={})
        if parts == ["vas", "strategic"]:
            return 200, b.vas_strategic(items=body["items"], workflow_input={})
        if parts[:1] == ["workflows"]:
            return 200, b.resume_workflow(
                tool=body["tool"],
                execution_id=parts[1],
                input_key=body["input_key"],
                value=body["value"],
            )
        return 404, {"error": "not found"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                status, data = fake.answer(
                    self.command,
                    self.path,
                    json.loads(raw or b"{}"),
                    self.headers.get("idempotency-key") or "",
                )
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _serve
            do_POST = _serve

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        return Handler


# --- observations and judgement ----------------------------------------------------------


@dataclass(frozen=True)
class Action:
    tool: str
    items: tuple[str, ...]
    msisdns: tuple[str, ...]
    outcome: str
    answer: str = ""

    def names(self) -> list[str]:
        return [f"{n}@{m[-4:]}" for n, m in zip(self.items, self.msisdns, strict=False)]


@dataclass(frozen=True)
class Observation:
    step: Step
    replies: tuple[str, ...]
    actions: tuple[Action, ...]  # backend calls made during the step
    status: str  # the stored runtime state's status after the step ("" when none)
    pending: tuple[str, ...]  # items of the stored pending confirmation ("name@final")
    finalized_as: str  # the stored finalization status ("" when none)
    human_owned: bool  # before the step: a person owned the conversation
    told: str = ""  # the actions the runtime's note told the orchestrator (llm mode)

    @property
    def reply(self) -> str:
        return "\n".join(self.replies)


@dataclass(frozen=True)
class Failure:
    kind: str  # wrong_action | dead_end | expectation
    step: int
    message: str


@dataclass
class Run:
    dialogue: Dialogue
    mode: str
    observations: list[Observation] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)


class Driver:
    """One dialogue against a fresh organization (call inside a test transaction)."""

    def __init__(self, dialogue: Dialogue, mode: str, suite: Suite) -> None:
        self.dialogue = dialogue
        self.mode = mode
        self.suite = suite
        self.invoice = load_invoice()
        self.names = invoice_item_names(self.invoice)
        self._n = 0
        self._overrides: dict[str, Any] = {"CONVERSATION_RUNTIME_ENABLED": True}
        self._raise_next = False
        self.billing: FakeBilling | None = None
        self.claude: ScriptedClaude | None = None

    # --- set-up ------------------------------------------------------------------------

    @contextmanager
    def running(self) -> Iterator[Driver]:
        with ExitStack() as stack:
            # The dialogue's own clock: a burst waits out the burst window by moving it on.
            self._clock = stack.enter_context(time_machine.travel(datetime.now(UTC), tick=True))
            if self.dialogue.backend == "billing":
                self.billing = stack.enter_context(FakeBilling(self.invoice))
                self._overrides.update(
                    BILLING_API_URL=self.billing.base_url,
                    BILLING_API_TOKEN="token-de-teste",
                    BILLING_API_TIMEOUT_S=2.0,
                )
            if self.mode == "llm":
                self.claude = claude = ScriptedClaude(self.suite)
                stack.enter_context(claude)
                self._overrides.update(
                    ANTHROPIC_API_KEY="sk-ant-test",
                    ANTHROPIC_BASE_URL=claude.base_url,
                    ANTHROPIC_MAX_RETRIES=0,
                    ANTHROPIC_TIMEOUT_S=5.0,
                )
            self._setup()
            yield self

    def _setup(self) -> None:
        from conversation.runtime_adapters.demo import INVOICE_KNOWLEDGE
        from conversation.runtime_adapters.invoices import demo_invoice_save
        from conversation.services import knowledge_document_save

        self.org = factories.make_org(f"Fatura {self.dialogue.id}")
        version: dict[str, Any] = {}
        if self.mode == "llm":
            version = {"provider": "anthropic", "model": "claude-haiku-4-5"}
        self.agent = factories.make_agent(
            self.org,
            "Atendimento de fatura",
            runtime_profile="invoice_support",
            runtime_mode="on",
            handoff_keywords=HANDOFF_KEYWORDS,
            **version,
        )
        self.channel = factories.make_channel(self.org, agent=self.agent)
        self.staff = factories.make_user(self.org, "agent")
        demo_invoice_save(organization=self.org, phone=None, detail=self.invoice, actor=None)
        for title, body in INVOICE_KNOWLEDGE:
            knowledge_document_save(organization=self.org, actor=None, title=title, body=body)
        # A distinct phone per run keeps runs apart when several share one transaction.
        self.phone = self.dialogue.phone
        self._msg_prefix = f"{self.dialogue.id}-{self.mode}-{next(_phones)}"

    # --- steps -------------------------------------------------------------------------

    def run(self) -> Run:
        result = Run(self.dialogue, self.mode)
        for index, step in enumerate(self.dialogue.steps):
            observation = self.step(step)
            result.observations.append(observation)
            result.failures.extend(judge(self, index, observation))
        return result

    def step(self, step: Step) -> Observation:
        before_msgs = set(self._messages().values_list("pk", flat=True))
        before_actions = self._action_mark()
        before_calls = len(self.claude.requests) if self.claude is not None else 0
        current = self.conversation()
        owned = current is not None and (
            current.contact.force_human or current.bot_silenced_until is not None
        )
        if step.lines:
            self._say(step.lines)
        else:
            self._event(step)
        replies = tuple(
            self._messages()
            .filter(direction="outbound")
            .exclude(pk__in=before_msgs)
            .order_by("created_at")
            .values_list("body", flat=True)
        )
        status, pending, reason = _stored_state(self.conversation())
        return Observation(
            step=step,
            replies=replies,
            actions=self._actions_since(before_actions),
            status=status,
            pending=pending,
            finalized_as=reason,
            human_owned=owned,
            told=self._told_since(before_calls),
        )

    def _told_since(self, mark: int) -> str:
        if self.claude is None:
            return ""
        told = [
            runtime_told((r.json or {}).get("messages") or [])
            for r in self.claude.requests[mark:]
            if "send_message" in [t.get("name") for t in (r.json or {}).get("tools") or []]
        ]
        return " ".join(t for t in told if t)

    def _say(self, lines: Sequence[str]) -> None:
        with override_settings(**self._overrides), ExitStack() as stack:
            if self._raise_next:
                from conversation.runtime.runtime import ConversationRuntime

                stack.enter_context(
                    mock.patch.object(
                        ConversationRuntime,
                        "try_handle",
                        side_effect=RuntimeError("injected runtime failure"),
                    )
                )
                self._raise_next = False
            if len(lines) > 1:
                # Typed together: one burst, answered once the burst window closes.
                stack.enter_context(override_settings(TURN_BURST_WINDOW_S=BURST_WINDOW_S))
            with TestCase.captureOnCommitCallbacks(execute=True):
                for line in lines:
                    self._post_line(line)
            if len(lines) > 1:
                self._clock.shift(timedelta(seconds=BURST_WINDOW_S + 1))
                with TestCase.captureOnCommitCallbacks(execute=True):
                    dispatch.run_delayed()

    def _post_line(self, text: str) -> None:
        """The customer's line through the signed simulator webhook."""
        self._n += 1
        response = Client().post(
            f"/webhooks/simulator/{self.channel.pk}",
            data=json.dumps(
                {"from": self.phone, "text": text, "id": f"{self._msg_prefix}-{self._n}"}
            ),
            content_type="application/json",
            HTTP_X_SIMULATOR_SECRET=self.channel.webhook_secret,
        )
        assert response.status_code == 200, response.content

    def _event(self, step: Step) -> None:
        from conversation import handoff

        event = step.event
        conversation = self.conversation()
        if event == "kill_switch_off":
            self._overrides["CONVERSATION_RUNTIME_ENABLED"] = False
        elif event == "kill_switch_on":
            self._overrides["CONVERSATION_RUNTIME_ENABLED"] = True
        elif event == "billing_down":
            assert self.billing is not None, "billing events need backend: billing"
            self.billing.down = True
        elif event == "billing_actions_down":
            assert self.billing is not None, "billing events need backend: billing"
            self.billing.actions_down = True
        elif event == "billing_up":
            assert self.billing is not None
            self.billing.down = self.billing.actions_down = False
        elif event == "billing_loses_next_reply":
            assert self.billing is not None, "billing events need backend: billing"
            self.billing.lose_next_reply = True
        elif event == "billing_promises":
            assert self.billing is not None, "billing events need backend: billing"
            self.billing.promise = step.text
        elif event == "runtime_error":
            self._raise_next = True
        elif event == "typed_before_reply":
            # ``text`` was typed before the runtime's last reply was stored (a second "sim"
            # tapped while the turn ran) and reaches its own turn only now.
            assert conversation is not None
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=False) as pending_turns,
            ):
                self._post_line(step.text)
            reply = Message.objects.filter(conversation=conversation, direction="outbound").latest(
                "created_at"
            )
            Message.objects.filter(
                conversation=conversation, direction="inbound", turn__isnull=True
            ).update(created_at=reply.created_at - timedelta(seconds=1))
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                for callback in pending_turns:
                    callback()
        elif event == "time_passes":
            # ``text``: hours; everything said so far moves that far into the past.
            assert conversation is not None
            Message.objects.filter(conversation=conversation).update(
                created_at=F("created_at") - timedelta(hours=float(step.text))
            )
        elif event == "takeover":
            assert conversation is not None
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                handoff.conversation_take_over(conversation=conversation, actor=self.staff)
        elif event == "staff_says":
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                handoff.handoff_reply(
                    handoff=self._open_handoff(), actor=self.staff, text=step.text
                )
        elif event == "give_back":
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                handoff.handoff_return_to_ai(handoff=self._open_handoff(), actor=self.staff)
        elif event == "case_reply":
            from cases import services as case_services

            assert conversation is not None
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                case = case_services.case_open(
                    conversation=conversation,
                    title="Dúvida sobre o plano",
                    summary="Cliente quer saber sobre o plano.",
                    blocker="Precisa da equipe de planos.",
                )
            with (
                override_settings(**self._overrides),
                TestCase.captureOnCommitCallbacks(execute=True),
            ):
                case_services.case_answer(
                    case=case, actor=self.staff, action="need_lead_info", text=step.text
                )
        else:
            raise ValueError(f"unknown event {event!r}")

    # --- records -----------------------------------------------------------------------

    def conversation(self) -> Conversation | None:
        return (
            Conversation.objects.filter(channel=self.channel, contact__phone=self.phone)
            .select_related("contact")
            .first()
        )

    def _messages(self) -> Any:
        return Message.objects.filter(
            conversation__channel=self.channel, conversation__contact__phone=self.phone
        )

    def _open_handoff(self) -> Any:
        from conversation.models import Handoff

        conversation = self.conversation()
        found = Handoff.objects.filter(conversation=conversation, status="open").first()
        assert found is not None, "no open handoff: take the conversation over first"
        return found

    def _action_mark(self) -> int:
        if self.billing is not None:
            return len(self.billing.backend.executed)
        return RuntimeAction.objects.filter(conversation__channel=self.channel).count()

    def _actions_since(self, mark: int) -> tuple[Action, ...]:
        if self.billing is not None:
            # The billing system's own list: what it did, whatever the turn recorded.
            done = self.billing.backend.executed[mark:]
            return tuple(
                Action(
                    tool=a.tool,
                    items=a.items,
                    msisdns=a.msisdns,
                    outcome="called",
                    answer=a.value,
                )
                for a in done
            )
        rows = RuntimeAction.objects.filter(conversation__channel=self.channel).order_by(
            "created_at", "sequence"
        )[mark:]
        return tuple(
            Action(
                tool=r.tool,
                items=tuple(r.items),
                msisdns=tuple(r.msisdns),
                outcome=r.outcome,
                answer=r.answer,
            )
            for r in rows
        )


def _stored_state(conversation: Conversation | None) -> tuple[str, tuple[str, ...], str]:
    if conversation is None:
        return "", (), ""
    conversation.refresh_from_db(fields=["runtime_state"])
    raw = conversation.runtime_state
    live = raw.get("live") if isinstance(raw, dict) else None
    if not isinstance(live, dict):
        return "", (), ""
    pending = live.get("pending_confirmation") or {}
    queue = pending.get("authorized_queue") or {}
    items = tuple(
        f"{i['canonical_name']}@{str(i['msisdn'])[-4:]}"
        for step in (queue.get("steps") or [])[int(queue.get("cursor") or 0) :]
        for i in step.get("items") or []
    )
    return str(live.get("status", "")), items, str(live.get("last_finalization_reason") or "")


# --- judgement ---------------------------------------------------------------------------

ACTING_TOOLS = {"cancelar_vas_single", "vas_strategic", "pro_rata"}
CONFIRMATION_MARKERS = ("você confirma", "correto?", "confirma?")
LINE_QUESTION = re.compile(r"linha|n[uú]mero", re.IGNORECASE)


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _matches(expected: str, actual: str) -> bool:
    """``"Aya Ensina"`` matches any line; ``"Aya Ensina@5678"`` only that line."""
    name, _, final = expected.partition("@")
    a_name, _, a_final = actual.partition("@")
    return fold(name) == fold(a_name) and (not final or final == a_final)


def _same_items(expected: Sequence[str], actual: Sequence[str]) -> bool:
    remaining = list(actual)
    for e in expected:
        hit = next((a for a in remaining if _matches(e, a)), None)
        if hit is None:
            return False
        remaining.remove(hit)
    return not remaining


def named_items(reply: str, names: Sequence[str]) -> list[str]:
    """Invoice items a reply names (longest names first, so "Aya Ensina" is not "Aya")."""
    text = fold(reply)
    found = []
    for name in sorted(names, key=len, reverse=True):
        folded = fold(name)
        if folded in text:
            found.append(name)
            text = text.replace(folded, " ")
    return found


def is_confirmation(reply: str) -> bool:
    return any(m in reply.lower() for m in CONFIRMATION_MARKERS)


def judge(driver: Driver, index: int, obs: Observation) -> list[Failure]:
    """Expectation failures of one step, each classified for the bench."""
    e = obs.step.expect
    out: list[Failure] = []

    def fail(kind: str, message: str) -> None:
        out.append(Failure(kind, index, f"[{obs.step.label}] {message}"))

    acted = [a for a in obs.actions if a.tool in ACTING_TOOLS]
    acted_names = [n for a in acted for n in a.names()]
    expected_exec = [str(x) for x in e.get("executed", [])]
    if not _same_items(expected_exec, acted_names):
        extra = [n for n in acted_names if not any(_matches(x, n) for x in expected_exec)]
        missing = [x for x in expected_exec if not any(_matches(x, n) for n in acted_names)]
        if extra:
            fail("wrong_action", f"executed without consent: {extra}")
        if missing:
            fail("dead_end", f"expected to execute {missing}, executed {acted_names}")
    done = [a for a in acted if a.outcome in {"success", "partial", "called"}]
    untold = [n for a in done for n in a.items if fold(n) not in fold(obs.reply)]
    if untold:
        # Acting without telling the customer leaves them where they started.
        fail("dead_end", f"executed {untold} but the reply does not say so: {obs.replies}")
    if "resumed" in e:
        answers = [a.answer for a in obs.actions if a.tool == "resume_workflow"]
        if answers != [str(e["resumed"])]:
            fail("dead_end", f"expected the workflow resumed with {e['resumed']!r}: {answers}")
    elif any(a.tool == "resume_workflow" for a in obs.actions):
        fail("wrong_action", "a paused workflow was resumed without being answered")

    closes = bool(e.get("closed", False))
    if (obs.status == "closed") != closes:
        kind = "dead_end" if obs.status == "closed" else "expectation"
        fail(kind, f"closed={obs.status == 'closed'}, expected closed={closes}")

    replied = bool(obs.replies)
    # Events send what they send (a staff message, a relayed case answer); only customer
    # lines owe a reply, and only while the AI owns the conversation.
    wants_reply = e.get("replied", not obs.human_owned) if obs.step.lines else e.get("replied")
    if wants_reply is not None and replied != wants_reply:
        kind = "dead_end" if wants_reply else "expectation"
        fail(kind, f"replied={replied}, expected replied={wants_reply}: {obs.replies}")

    if "finalized_as" in e and obs.finalized_as != str(e["finalized_as"]):
        fail("expectation", f"finalized as {obs.finalized_as!r}, expected {e['finalized_as']!r}")

    reply = obs.reply
    if "asks_confirmation" in e:
        want = [str(x) for x in e["asks_confirmation"]]
        named = named_items(reply, driver.names)
        bare = list(dict.fromkeys(w.partition("@")[0] for w in want))
        if not is_confirmation(reply) or not _same_items(bare, named):
            fail(
                "dead_end" if not is_confirmation(reply) else "expectation",
                f"expected a confirmation naming exactly {want}, got: {reply!r}",
            )
        for w in want:
            _, _, final = w.partition("@")
            if final and final not in reply:
                fail("expectation", f"confirmation should name line final {final}: {reply!r}")
    if e.get("no_confirmation") and is_confirmation(reply):
        fail("expectation", f"no confirmation expected, got: {reply!r}")
    if "asks_which_line" in e:
        finals = [str(x) for x in e["asks_which_line"]]
        if not ("?" in reply and LINE_QUESTION.search(reply) and all(f in reply for f in finals)):
            fail("dead_end", f"expected a question naming lines {finals}, got: {reply!r}")
        if is_confirmation(reply):
            fail("expectation", f"a line question is not a confirmation: {reply!r}")
    if "pending" in e:
        want_pending = [str(x) for x in e["pending"]]
        if not _same_items(want_pending, list(obs.pending)):
            fail("expectation", f"pending {list(obs.pending)}, expected {want_pending}")
    for name in e.get("orchestrator_told", []):
        if fold(str(name)) not in fold(obs.told):
            fail("dead_end", f"the orchestrator was not told about {name}: {obs.told!r}")
    for needle in e.get("reply_contains", []):
        if fold(str(needle)) not in fold(reply):
            fail("expectation", f"reply should contain {needle!r}: {reply!r}")
    for needle in e.get("reply_excludes", []):
        if fold(str(needle)) in fold(reply):
            fail("expectation", f"reply should not contain {needle!r}: {reply!r}")
    if "not_names" in e:
        named = named_items(reply, driver.names)
        bad = [n for n in e["not_names"] if n in named]
        if bad:
            fail("expectation", f"reply should not name {bad}: {reply!r}")
    return out


def run_dialogue(dialogue: Dialogue, mode: str, suite: Suite) -> Run:
    driver = Driver(dialogue, mode, suite)
    with driver.running():
        return driver.run()


def describe(run: Run) -> str:
    lines = [f"dialogue {run.dialogue.id} ({run.mode}): {run.dialogue.covers}"]
    for i, obs in enumerate(run.observations):
        lines.append(f"  {i}. {obs.step.label}")
        for r in obs.replies:
            lines.append(f"     ← {r}")
        for a in obs.actions:
            lines.append(f"     ⚙ {a.tool} {a.names()} {a.outcome} {a.answer}")
        lines.append(f"     state={obs.status} pending={list(obs.pending)}")
    lines.extend(f"  ✗ step {f.step}: {f.kind}: {f.message}" for f in run.failures)
    return "\n".join(lines)
