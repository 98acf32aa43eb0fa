"""The LLM tool loop: the model talks to the customer only through tools.

``run_tool_loop`` knows no model rows and no channel: the turn hands it a model
client, the request prefix, the history and the tools (name → handler). Plain model
text is discarded — ``send_message`` is the only way to reach the customer. A model that
answers in plain text with nothing sent is asked once, in the same loop, to answer through a
tool (``PLAIN_TEXT_NUDGE_PT``): otherwise the customer would be left with no reply at all.
A model that still does not (or has no step left for the nudge) ends the loop ``plain_text``,
and one that spends every step on tools ends it ``max_steps``: with nothing sent, the turn
treats either as an unusable answer (``loop_outcome``), never as silence.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conversation.llm.base import (
    ChatMessage,
    LlmBadResponse,
    LlmError,
    ModelClient,
    ModelRequest,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
)

log = logging.getLogger(__name__)

# Model-facing (not UI copy): the model wrote its answer as plain text, which never reaches
# the customer; an accepted send ends the loop, so nothing was sent yet.
PLAIN_TEXT_NUDGE_PT = (
    "Esse texto NÃO chegou ao cliente: só a ferramenta send_message entrega mensagens. "
    "Responda ao cliente usando uma ferramenta."
)


@dataclass(frozen=True)
class ToolOutcome:
    content: str
    is_error: bool = False
    terminal: bool = False  # ends the loop after this step (e.g. a handoff)


ToolHandler = Callable[[Mapping[str, Any]], ToolOutcome]


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    handler: ToolHandler


# The error code of a loop that spent every step on tools (the turn's ``error_code``).
MAX_STEPS_CODE = "llm_max_steps"


@dataclass
class LoopResult:
    steps: int = 0
    stop: str = "end_turn"  # end_turn | max_steps | terminal_tool | llm_error | plain_text
    error_code: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)  # [{"tool", "error"}] — no text
    discarded_text_chars: int = 0
    nudged: bool = False  # asked once to answer through a tool after plain text


def validate_tool_input(schema: Mapping[str, Any], data: Mapping[str, Any]) -> str | None:
    """Strict validation for our flat tool schemas: known keys only, required present,
    strings/booleans/numbers/enums as declared. Returns a teaching error or None."""
    props: Mapping[str, Any] = schema.get("properties", {})
    unknown = sorted(set(data) - set(props))
    if unknown:
        return f"Campos desconhecidos: {', '.join(unknown)}. Use apenas: {', '.join(props)}."
    missing = [k for k in schema.get("required", []) if k not in data]
    if missing:
        return f"Campos obrigatórios ausentes: {', '.join(missing)}."
    kinds: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "boolean": bool,
        "integer": int,
        "number": (int, float),
    }
    for key, value in data.items():
        spec = props[key]
        expected = kinds.get(spec.get("type", ""))
        if expected is not None and not isinstance(value, expected):
            return f"O campo {key} deve ser do tipo {spec['type']}."
        if "enum" in spec and value not in spec["enum"]:
            return f"O campo {key} deve ser um de: {', '.join(map(str, spec['enum']))}."
        if spec.get("type") == "string" and spec.get("minLength") and not str(value).strip():
            return f"O campo {key} não pode ser vazio."
        if spec.get("maxLength") and isinstance(value, str) and len(value) > spec["maxLength"]:
            return f"O campo {key} passa de {spec['maxLength']} caracteres."
    return None


def run_tool_loop(
    *,
    client: ModelClient,
    base_request: ModelRequest,
    history: Sequence[ChatMessage],
    tools: Sequence[Tool],
    max_steps: int,
) -> LoopResult:
    by_name = {t.spec.name: t for t in tools}
    messages = list(history)
    result = LoopResult()
    tool_choice = base_request.tool_choice
    for _step in range(max_steps):
        request = ModelRequest(
            purpose=base_request.purpose,
            model=base_request.model,
            system=base_request.system,
            messages=tuple(messages),
            tools=tuple(t.spec for t in tools),
            tool_choice=tool_choice,
            max_tokens=base_request.max_tokens,
            temperature=base_request.temperature,
            timeout_s=base_request.timeout_s,
            context=base_request.context,
        )
        try:
            response = client.complete(request)
        except LlmError as exc:
            log.warning("model call failed", extra={"error_code": exc.code, **base_request.context})
            result.stop, result.error_code = "llm_error", exc.code
            return result
        result.steps += 1
        uses = response.tool_uses()
        result.discarded_text_chars += len(response.text())
        if not uses:
            answered_in_text = bool(response.text().strip())
            if result.nudged or (answered_in_text and result.steps >= max_steps):
                # Plain text again after the nudge (or with no step left for one): the model
                # will not answer through a tool. Its text is not sent — plain text never
                # reaches the customer (human-cases §4.3), and a text the model was told went
                # nowhere may be anything but an answer — so it is an unusable answer, like a
                # refusal: the turn takes the model-down path (``turns.unavailable``: a short
                # notice and the handoff; a retry would ask the same model again), never
                # silence. Every call so far was reported to the recorder: all are billed.
                result.stop, result.error_code = "plain_text", LlmBadResponse.code
                return result
            if not answered_in_text:
                result.stop = "end_turn"  # nothing written: the model chose not to answer
                return result
            # Once: the answer as plain text, then the same turn through a tool (forced).
            tool_choice = ToolChoice("any")
            result.nudged = True
            messages.append(ChatMessage(role="assistant", content=response.text()))
            messages.append(ChatMessage(role="user", content=PLAIN_TEXT_NUDGE_PT))
            continue
        messages.append(ChatMessage(role="assistant", content=tuple(response.content)))
        outcomes: list[ToolResultBlock] = []
        terminal = False
        for use in uses:
            outcome = _call_tool(by_name.get(use.name), use.name, use.input)
            result.calls.append({"tool": use.name, "error": outcome.is_error})
            outcomes.append(ToolResultBlock(use.id, outcome.content, outcome.is_error))
            terminal = terminal or outcome.terminal
        messages.append(ChatMessage(role="user", content=tuple(outcomes)))
        if terminal:
            result.stop = "terminal_tool"
            return result
    # Every step spent on tools and none ended the turn: if nothing reached the customer, the
    # turn takes the model-down path (``loop_outcome``), never silence.
    result.stop, result.error_code = "max_steps", MAX_STEPS_CODE
    return result


def _call_tool(tool: Tool | None, name: str, data: Mapping[str, Any]) -> ToolOutcome:
    if tool is None:
        return ToolOutcome(f"Ferramenta desconhecida: {name}.", is_error=True)
    if not isinstance(data, Mapping):
        return ToolOutcome("A entrada da ferramenta deve ser um objeto JSON.", is_error=True)
    problem = validate_tool_input(tool.spec.input_schema, data)
    if problem:
        return ToolOutcome(problem, is_error=True)
    return tool.handler(data)
