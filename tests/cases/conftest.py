"""Fixtures for the cases tests: the shared world with cases enabled on org A's agent."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
from django.db import transaction
from django.test import Client

from cases import services
from cases.models import Case
from conversation import model_calls
from conversation.llm import ScriptedModel
from conversation.llm.base import LlmError, ModelRequest, ModelResponse, TextBlock, ToolUseBlock
from conversation.models import AgentVersion, Conversation, Message
from tests import factories
from tests.conftest import simulator_post

PHONE = "5511988887777"


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    # The world creates six users; the default hasher dominates these tests' time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def enable_cases(agent: Any, *, enabled: bool = True, **fields: Any) -> AgentVersion:
    """Publish a new version of ``agent`` with ``cases_enabled``."""
    latest = agent.versions.order_by("-number").first()
    version = AgentVersion.objects.create(
        organization=agent.organization,
        agent=agent,
        number=latest.number + 1,
        prompt=latest.prompt,
        provider="offline",
        handoff_keywords=latest.handoff_keywords,
        cases_enabled=enabled,
        **fields,
    )
    agent.published_version = version
    agent.save(update_fields=["published_version"])
    return version


@pytest.fixture
def cases_world(world: Any) -> Any:
    enable_cases(world.agent_a)
    return world


@pytest.fixture
def conversation(cases_world: Any) -> Conversation:
    conv = factories.make_conversation(cases_world.channel_a, phone=PHONE)
    factories.make_message(conv, "Quero o reembolso do pedido 123")
    return conv


def open_case(conversation: Conversation, **fields: Any) -> Case:
    values = {
        "title": "Reembolso do pedido 123",
        "summary": "O cliente quer o reembolso do pedido 123.",
        "blocker": "Reembolso exige o financeiro.",
        "agent_id": conversation.channel.agent_id,
    }
    values.update(fields)
    with transaction.atomic():
        return services.case_open(conversation=conversation, **values)


def say(channel: Any, text: str, msg_id: str, capture: Any, phone: str = PHONE) -> Any:
    with capture(execute=True):
        return simulator_post(Client(), channel, text, msg_id=msg_id, phone=phone)


def outbound_bodies(conversation: Conversation | None = None) -> list[str]:
    rows = Message.objects.filter(direction="outbound").order_by("created_at")
    if conversation is not None:
        rows = rows.filter(conversation=conversation)
    return list(rows.values_list("body", flat=True))


# --- scripted model -----------------------------------------------------------------------


def tool(name: str, tool_input: dict[str, Any], n: int = 0) -> ModelResponse:
    return ModelResponse(
        content=(ToolUseBlock(id=f"toolu_{name}_{n}", name=name, input=tool_input),),
        stop_reason="tool_use",
        model="scripted",
    )


def tools(*uses: tuple[str, dict[str, Any]], n: int = 0) -> ModelResponse:
    return ModelResponse(
        content=tuple(
            ToolUseBlock(id=f"toolu_{name}_{n}_{i}", name=name, input=data)
            for i, (name, data) in enumerate(uses)
        ),
        stop_reason="tool_use",
        model="scripted",
    )


def end(text: str = "") -> ModelResponse:
    content = (TextBlock(text),) if text else ()
    return ModelResponse(content=content, stop_reason="end_turn", model="scripted")


class Script:
    """A scripted model installed for every model call while the block runs."""

    def __init__(
        self,
        responses: Iterable[ModelResponse],
        promise_check: Callable[[ModelRequest], ModelResponse | LlmError] | None = None,
    ) -> None:
        self.model = ScriptedModel(list(responses))
        # The send gate's model check (uncertain band only) is answered apart, so it never
        # takes a scripted orchestrator step: by ``promise_check``, else "a promise" (what a
        # failing check counts as, too).
        self.promise_check = promise_check or (lambda _request: promise_check_answer(True))
        self.checks: list[ModelRequest] = []

    def __enter__(self) -> ScriptedModel:
        self._cm = model_calls.use_model_client(self._factory)
        self._cm.__enter__()
        return self.model

    def __exit__(self, *exc: Any) -> None:
        self._cm.__exit__(*exc)

    def _factory(self, recorder: Callable[..., Any]) -> Any:
        return _ByPurpose(self, recorder)


class _ByPurpose:
    """The scripted orchestrator, with the promise check answered by the script's oracle."""

    name = "scripted"

    def __init__(self, script: Script, recorder: Callable[..., Any]) -> None:
        self.script, self.recorder = script, recorder

    def complete(self, request: ModelRequest) -> ModelResponse:
        if request.purpose != "promise_check":
            return self.script.model.complete(request)
        self.script.checks.append(request)
        answer = self.script.promise_check(request)
        checker = ScriptedModel([answer], recorder=self.recorder)
        return checker.complete(request)


def promise_check_answer(promise: bool) -> ModelResponse:
    """The forced ``classify_promise`` call of a model that says ``promise``."""
    who = "team_or_person" if promise else "nobody"
    return ModelResponse(
        content=(
            ToolUseBlock(
                id="toolu_check",
                name="classify_promise",
                input={"promise": promise, "who_acts": who},
            ),
        ),
        stop_reason="tool_use",
        model="scripted",
    )
