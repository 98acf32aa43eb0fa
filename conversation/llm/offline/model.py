"""``OfflineModel``: the orchestrator policy of the package docstring, rule by rule."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from conversation.text import trim

from ..base import (
    CallRecorder,
    ChatMessage,
    ModelRequest,
    ModelResponse,
    ReportingClient,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    null_recorder,
)
from ..protocol import (
    CASE_AWAITING_LEAD_MARKER,
    CASE_OPEN_MARKER,
    OPEN_HUMAN_CASE,
    ORCHESTRATOR_PURPOSE,
    PROVIDE_CASE_UPDATE,
    REQUEST_HUMAN_HANDOFF,
    SEARCH_KNOWLEDGE,
    SEND_MESSAGE,
)
from ..schema_defaults import minimal_input
from .inputs import SEND_TEXT_FIELDS, fill, handoff_input, with_text
from .reading import (
    agent_name,
    asks_for_person,
    best_passage,
    case_ids,
    human_only_request,
    is_greeting_only,
    latest_user_text,
    normalize,
    note_lines,
    relay_text,
    says_nothing_found,
    strip_note_lines,
    tool_results,
    tool_use_inputs,
    tool_use_names,
)
from .replies import (
    CASE_ALREADY_OPEN_REPLY,
    CASE_BLOCKER,
    CASE_OPENED_REPLY,
    CASE_UPDATE_REPLY,
    FOUND_TEMPLATE,
    GENERIC_REPLY,
    GREETING_NO_NAME,
    GREETING_TEMPLATE,
    MAX_ANSWER_CHARS,
    NOT_FOUND_REPLY,
    OFFLINE_MODEL,
    RELEVANCE_THRESHOLD,
)


class OfflineModel(ReportingClient):
    """``ModelClient`` that answers from deterministic rules (see the package docstring)."""

    name = "offline"

    def __init__(self, recorder: CallRecorder = null_recorder) -> None:
        self._recorder = recorder

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        if request.purpose == ORCHESTRATOR_PURPOSE:
            response = _orchestrate(request)
        else:
            response = _forced_tool_answer(request)
        self._report(request, started, model=OFFLINE_MODEL)
        return response


# --- orchestrator ----------------------------------------------------------------------


def _orchestrate(request: ModelRequest) -> ModelResponse:
    tools = {t.name: t for t in request.tools}
    reply = _Reply(request, tools)
    messages = request.messages

    last = messages[-1] if messages else None
    results = tool_results(last) if last is not None and last.role == "user" else []
    if results:
        names = tool_use_names(messages)
        search = [r for r in results if names.get(r.tool_use_id) == SEARCH_KNOWLEDGE]
        if not search:
            return reply.stop()
        return reply.send(_answer_from_search(search[0], _search_query(messages, search[0])))

    relay = relay_text(request)
    if relay:
        return reply.send(relay)

    text = strip_note_lines(latest_user_text(messages))
    normalized = normalize(text)
    if REQUEST_HUMAN_HANDOFF in tools and asks_for_person(normalized):
        return reply.call(
            REQUEST_HUMAN_HANDOFF,
            handoff_input(tools[REQUEST_HUMAN_HANDOFF]),
        )
    if is_greeting_only(normalized):
        name = agent_name(request.system)
        greeting = GREETING_TEMPLATE.format(name=name) if name else GREETING_NO_NAME
        return reply.send(greeting)
    notes = note_lines(latest_user_text(messages))
    awaiting = case_ids(notes, CASE_AWAITING_LEAD_MARKER)
    if awaiting and PROVIDE_CASE_UPDATE in tools and normalized:
        spec = tools[PROVIDE_CASE_UPDATE]
        return reply.calls(
            (PROVIDE_CASE_UPDATE, fill(spec, {"case_id": awaiting[0], "info": text.strip()})),
            *reply.send_inputs(CASE_UPDATE_REPLY),
        )
    asked = human_only_request(normalized)
    if asked is not None and OPEN_HUMAN_CASE in tools:
        request_title, what = asked
        if case_ids(notes, CASE_OPEN_MARKER):
            return reply.send(CASE_ALREADY_OPEN_REPLY)
        summary = f"O cliente pediu: “{trim(text, 300)}”"
        case_input = fill(
            tools[OPEN_HUMAN_CASE],
            {
                "title": request_title,
                "titulo": request_title,
                "summary": summary,
                "resumo": summary,
                "blocker": CASE_BLOCKER,
                "bloqueio": CASE_BLOCKER,
            },
        )
        return reply.calls(
            (OPEN_HUMAN_CASE, case_input),
            *reply.send_inputs(CASE_OPENED_REPLY.format(what=what)),
        )
    if SEARCH_KNOWLEDGE in tools and normalized:
        spec = tools[SEARCH_KNOWLEDGE]
        return reply.call(SEARCH_KNOWLEDGE, with_text(spec, text.strip(), ("query",)))
    return reply.send(GENERIC_REPLY)


def _search_query(messages: Sequence[ChatMessage], result: ToolResultBlock) -> str:
    """What was searched: the query of the model's own call, else the customer's text."""
    query = tool_use_inputs(messages).get(result.tool_use_id, {}).get("query")
    return str(query) if query else strip_note_lines(latest_user_text(messages[:-1]))


def _answer_from_search(result: ToolResultBlock, query: str) -> str:
    if result.is_error or says_nothing_found(result.content):
        return NOT_FOUND_REPLY
    passage = best_passage(query, result.content, threshold=RELEVANCE_THRESHOLD)
    if not passage:
        return NOT_FOUND_REPLY
    return FOUND_TEMPLATE.format(passage=trim(passage, MAX_ANSWER_CHARS))


class _Reply:
    """Builds responses for one request, with deterministic, conversation-unique ids."""

    def __init__(self, request: ModelRequest, tools: Mapping[str, ToolSpec]) -> None:
        self._request = request
        self._tools = tools

    def stop(self) -> ModelResponse:
        return ModelResponse(content=(), stop_reason="end_turn", model=OFFLINE_MODEL)

    def send(self, text: str) -> ModelResponse:
        spec = self._tools.get(SEND_MESSAGE)
        if spec is None:
            return ModelResponse(
                content=(TextBlock(text=text),), stop_reason="end_turn", model=OFFLINE_MODEL
            )
        return self.call(SEND_MESSAGE, with_text(spec, text, SEND_TEXT_FIELDS))

    def call(self, name: str, tool_input: Mapping[str, Any]) -> ModelResponse:
        return self.calls((name, tool_input))

    def calls(self, *uses: tuple[str, Mapping[str, Any]]) -> ModelResponse:
        """Several tool calls in one response, run by the loop in this order."""
        blocks = tuple(
            ToolUseBlock(id=tool_use_id(self._request, i), name=name, input=tool_input)
            for i, (name, tool_input) in enumerate(uses)
        )
        return ModelResponse(content=blocks, stop_reason="tool_use", model=OFFLINE_MODEL)

    def send_inputs(self, text: str) -> tuple[tuple[str, Mapping[str, Any]], ...]:
        """A ``send_message`` call with ``text``, or nothing when it is not offered."""
        spec = self._tools.get(SEND_MESSAGE)
        if spec is None:
            return ()
        return ((SEND_MESSAGE, with_text(spec, text, SEND_TEXT_FIELDS)),)


def tool_use_id(request: ModelRequest, index: int) -> str:
    """A deterministic id, unique within a conversation.

    The message count grows by one per assistant turn, so it alone separates the calls of
    one conversation; the digest of the messages keeps ids apart even when a history
    window keeps the count constant. Only [A-Za-z0-9_] so the API accepts it in replays.
    """
    digest = hashlib.sha256(_canonical_messages(request.messages).encode()).hexdigest()[:12]
    return f"toolu_offline_{len(request.messages):04d}_{index}_{digest}"


def _canonical_messages(messages: Sequence[ChatMessage]) -> str:
    def block(b: object) -> object:
        if isinstance(b, TextBlock):
            return ["text", b.text]
        if isinstance(b, ToolUseBlock):
            return ["tool_use", b.id, b.name, dict(b.input)]
        if isinstance(b, ToolResultBlock):
            return ["tool_result", b.tool_use_id, b.content, b.is_error]
        return ["other", repr(b)]

    rows = [
        [m.role, m.content if isinstance(m.content, str) else [block(b) for b in m.content]]
        for m in messages
    ]
    return json.dumps(rows, ensure_ascii=False, sort_keys=True, default=repr)


def _forced_tool_answer(request: ModelRequest) -> ModelResponse:
    choice = request.tool_choice
    spec: ToolSpec | None = None
    if choice is not None and choice.type == "tool":
        spec = next((t for t in request.tools if t.name == choice.name), None)
    elif choice is not None and choice.type == "any" and request.tools:
        spec = request.tools[0]
    if spec is None:
        return ModelResponse(content=(), stop_reason="end_turn", model=OFFLINE_MODEL)
    block = ToolUseBlock(
        id=tool_use_id(request, 0), name=spec.name, input=minimal_input(spec.input_schema)
    )
    return ModelResponse(content=(block,), stop_reason="tool_use", model=OFFLINE_MODEL)
