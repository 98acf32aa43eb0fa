"""The case-promise gate: one of the turn's before-send gates (human-cases §6, DESIGN §10.3).

``case_promise_send_gate`` runs inside ``send_message`` (and on the runtime's reply) before
anything reaches the outbox. Every AI text of every turn passes it — inbound, case reply —
whatever the agent's ``cases_enabled`` says: the guarantee "the customer never receives a
promise of human action without an open case of that conversation" holds for every agent.

The promise verdict is the detector's (``cases.guardrail.promise_check.decide_promise``):
rules, the learned stage and — only for the uncertain band, when the workspace has a model —
a closed-schema check through the model seam (purpose ``promise_check``, its own LlmCall
row), which fails closed (an error, a timeout or a malformed answer counts as a promise).
The check runs on ``PROMISE_CHECK_MODEL`` when the organization enables it, else on the
organization's generic model (``conversation.agents.generic_model``: its default model, the
platform's, or the first it enables), as a turn does for an agent model it no longer enables;
the substitution is on the trace (``promise_check_model_substituted``). A workspace with no
model (no API key, or an offline agent) decides on the local stages alone; one with a model
this turn may not call (the organization is past its AI budget, ``spend_stopped``) fails
closed, as a check that errors does.

A veto's teaching error is in the agent's language (``cases.guardrail.teaching``).

What happens to a promise with no open case of the conversation:

* cases on → the guard chain (``cases.guardrail.run_guard_chain``): first a veto with the
  teaching error; on the second promise of the turn a minimal case is auto-opened
  (``source=guardrail_autofallback``) and the message goes. If the case cannot be opened, the
  message does not go.
* cases off → ``GateHandoff``: the promise is NOT sent and the turn performs the canonical
  handoff (reason ``unbacked_promise``), sending the handoff notice instead (see
  ``conversation.turns.tools.send_through_gates``). Why a handoff and not "replace the
  text and let the AI go on": without cases nobody is tasked with what the model promised,
  and a veto alone would only teach the model to reword the same promise. The handoff is
  the one canonical way to get a person to act; its notice is a promise the Handoff row
  backs (the item in the team's inbox), so what the customer is told is true, and the
  customer is not left in silence.

A case that covers a promise (of this conversation, seen open or opened by this turn) is
checked again, locked, in the turn's finish just before the text is written: one the team
closed meanwhile is replaced by the fail-safe case (``_cover_again_at_send``).

A case reply turn is covered only while its case is still open. A relay of a resolved case
that still promises human action (the team wrote "vamos te ligar amanhã" and resolved) gets a
case of its own at once, with no teaching veto first: the promise is the team's own word,
so tracking it is right, and a veto would risk losing the team's answer (a model that gives
up after a veto would relay nothing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, transaction

from cases import selectors, services
from cases.guardrail import (
    CASE_PROMISE_WITHOUT_CASE,
    GUARD_CHAIN_VERSION,
    GuardContext,
    VerdictKind,
    run_guard_chain,
)
from cases.guardrail.promise import assess_promise
from cases.guardrail.promise_check import (
    PROMISE_CHECK_TOOL_NAME,
    PromiseCheckCall,
    PromiseCheckRequest,
    PromiseDecision,
    decide_promise,
)
from cases.guardrail.teaching import case_promise_teaching
from cases.models import OPEN_STATUSES, Case, CaseSource
from cases.tools import TurnState
from conversation import model_calls
from conversation.agents import generic_model
from conversation.llm.base import (
    ChatMessage,
    LlmBadResponse,
    LlmUnavailable,
    ModelRequest,
    ToolChoice,
    ToolSpec,
)
from conversation.llm.catalog import enabled_models
from conversation.models import HandoffReason, TriggerKind
from conversation.text import trim

log = logging.getLogger(__name__)

UNBACKED_PROMISE = HandoffReason.UNBACKED_PROMISE.value
# The tool result the model gets when its promise was replaced by a handoff (cases off).
UNBACKED_PROMISE_RESULT_PT = (
    "Mensagem NÃO enviada: ela prometia a ação de uma pessoa da equipe e este agente não abre "
    "casos. A conversa foi passada para a equipe humana e o cliente foi avisado."
)


@dataclass(frozen=True)
class GateHandoff:
    """The gate's verdict for a promise of an agent without cases: do not send the text;
    hand the conversation to the team (``reason_code``) and send the handoff notice."""

    code: str
    problem: str
    reason: str


def case_promise_send_gate(ctx: TurnState, text: str) -> str | GateHandoff | None:
    """None to let ``text`` go; a teaching error for the model, or a ``GateHandoff``."""
    agent = ctx.agent
    cases_on = agent is not None and agent.cases_enabled
    # The free local stages first: a text they clear for sure costs no query and no call.
    local = assess_promise(text)
    if not local.promise and not local.uncertain:
        return None
    # A case this turn opened, or an open case of this conversation, covers any promise.
    if ctx.cases_opened or selectors.has_open_case_in_conversation(ctx.conversation):
        _cover_again_at_send(ctx, text)
        return None
    decision = decide_promise(
        text, promise_check_call(ctx), timeout_s=settings.PROMISE_CHECK_TIMEOUT_S
    )
    _record(ctx, decision)
    if not decision.promise:
        return None
    ctx.trace["gate_chain"] = GUARD_CHAIN_VERSION
    if decision.match is not None:
        ctx.trace.setdefault("promise_rules", []).append(decision.match.rule_id)
    if not cases_on:
        return GateHandoff(
            code=UNBACKED_PROMISE,
            problem=UNBACKED_PROMISE_RESULT_PT,
            reason="A IA prometeu a ação de uma pessoa e o agente não tem casos humanos.",
        )
    assert agent is not None
    teaching = case_promise_teaching(agent.prompt)
    verdict = run_guard_chain(
        GuardContext(
            body=text,
            has_open_case_for_lead=False,  # checked above, for this conversation only
            case_opened_this_turn=False,
            prior_vetoes_this_turn=_prior_vetoes(ctx),
            cases_enabled=True,
            detect=lambda _body: decision.match,
            teaching=teaching,
        )
    )
    if verdict.kind is VerdictKind.ALLOW:
        return None
    if verdict.kind is VerdictKind.VETO:
        return verdict.error_message or teaching
    try:
        with transaction.atomic():  # a savepoint: a failure leaves the turn usable
            case = services.case_open(
                conversation=ctx.conversation,
                source=CaseSource.GUARDRAIL_AUTOFALLBACK,
                agent_id=agent.agent_id,
                turn_id=ctx.turn.pk,
                **autofallback_fields(ctx.customer_text(), text),
            )
    except (DatabaseError, services.CaseError):
        log.exception("guardrail auto-open failed", extra={"turn_id": str(ctx.turn.pk)})
        return teaching
    ctx.cases_opened.append(str(case.pk))
    ctx.trace["case_autofallback"] = str(case.pk)
    return None


# The turn records a veto under this code (``getattr(gate, "code", ...)``).
case_promise_send_gate.code = CASE_PROMISE_WITHOUT_CASE  # type: ignore[attr-defined]


def _cover_again_at_send(ctx: TurnState, text: str) -> None:
    """The open case was seen with no lock held (the decide step, DESIGN §5); the team may
    close it before the finish writes the text. So the finish, just before the text's outbox
    row (an effect deferred ahead of it), locks the conversation's open cases again; if none
    is left, it opens the §6 fail-safe case there, so the invariant "never a promise without
    an open case" holds at the send. No network in the finish: the text's local verdict
    (promise or uncertain) is enough for a case that may be one too many, never one too few.
    A failure raises: the finish rolls back and the turn is decided again, never sent bare."""
    customer_text = ctx.customer_text()
    agent_id = ctx.agent.agent_id if ctx.agent is not None else None

    def cover() -> None:
        still_open = Case.objects.select_for_update().filter(
            organization_id=ctx.conversation.organization_id,
            conversation_id=ctx.conversation.pk,
            status__in=OPEN_STATUSES,
        )
        if still_open.values_list("pk", flat=True)[:1]:
            return
        case = services.case_open(
            conversation=ctx.conversation,
            source=CaseSource.GUARDRAIL_AUTOFALLBACK,
            agent_id=agent_id,
            turn_id=ctx.turn.pk,
            **autofallback_fields(customer_text, text),
        )
        ctx.cases_opened.append(str(case.pk))
        log.warning("covering case closed before the send", extra={"case_id": str(case.pk)})

    ctx.defer(cover)


def _prior_vetoes(ctx: TurnState) -> int:
    vetoes = ctx.vetoes.count(CASE_PROMISE_WITHOUT_CASE)
    if ctx.turn.trigger_kind == TriggerKind.CASE_REPLY:
        return max(vetoes, 1)  # the team's own promise: open its case now (module docstring)
    return vetoes


def _record(ctx: TurnState, decision: PromiseDecision) -> None:
    """Which stage found a promise, and how the model check went (codes only)."""
    if not decision.promise and decision.check is None:
        return  # a plain allow leaves the trace as it was
    entry = {"stage": decision.stage.value, "promise": decision.promise}
    if decision.check is not None:
        entry["check"] = decision.check.outcome.value
    ctx.trace.setdefault("promise_checks", []).append(entry)


def promise_check_call(ctx: TurnState) -> PromiseCheckCall | None:
    """The model check through the model seam, or None when the workspace has no model.

    One attempt (no SDK retries: a retry would only push the send past its deadline, and
    a failure already fails closed); the call is recorded on the turn's ledger under its
    own purpose, so it writes an LlmCall row with the turn's. A workspace that has a model
    this turn may not call (past its AI budget) gets a check that fails: a promise."""
    provider = ctx.agent.provider if ctx.agent is not None else "anthropic"
    if model_calls.provider_name(provider) == "offline":
        return _cannot_run if model_calls.stopped_by_spend(provider) else None
    ledger = getattr(ctx, "ledger", None)
    recorder = ledger if ledger is not None else _drop
    client = model_calls.model_client(recorder, provider=provider, max_retries=0)
    context = model_calls.record_context(
        organization_id=ctx.conversation.organization_id,
        conversation_id=ctx.conversation.pk,
        turn_id=ctx.turn.pk,
    )

    def call(request: PromiseCheckRequest) -> object:
        tool = request.tool
        response = client.complete(
            ModelRequest(
                purpose=request.purpose,
                model=check_model(ctx),
                system=(request.system,),
                messages=(ChatMessage(role="user", content=request.message),),
                tools=(ToolSpec(tool["name"], tool["description"], tool["input_schema"]),),
                tool_choice=ToolChoice(type="tool", name=PROMISE_CHECK_TOOL_NAME),
                max_tokens=request.max_tokens,
                temperature=0.0,
                timeout_s=request.timeout_s,
                context=context,
            )
        )
        answer = response.tool_input(PROMISE_CHECK_TOOL_NAME)
        if answer is None:
            raise LlmBadResponse("promise check: no forced tool call in the answer")
        return dict(answer)

    return call


def _cannot_run(request: PromiseCheckRequest) -> object:
    # Only the spend stop makes a workspace with a model offline for a turn.
    raise LlmUnavailable("promise check: the organization is past its AI budget")


def check_model(ctx: TurnState) -> str:
    """``PROMISE_CHECK_MODEL`` when the organization enables it (or restricts nothing), else
    its generic model — the substitution a turn makes for an agent model the organization no
    longer enables (``conversation.turns.orchestration``), traced the same way."""
    configured: str = settings.PROMISE_CHECK_MODEL
    org_settings = ctx.conversation.organization.settings
    allowed = enabled_models(org_settings)
    if allowed is None or configured in allowed:
        return configured
    used = generic_model(org_settings)
    ctx.trace["promise_check_model_substituted"] = {"configured": configured, "used": used}
    log.warning(
        "promise check model not enabled for the organization",
        extra={"configured": configured, "used": used, "turn_id": str(ctx.turn.pk)},
    )
    return used


def _drop(record: object) -> None:
    return None


def autofallback_fields(customer_text: str, promise: str) -> dict[str, str]:
    """Title, summary and blocker of the fail-safe case, derived from the turn."""
    asked = trim(customer_text, 300) if customer_text.strip() else ""
    title = f"Verificar: {trim(customer_text, 80)}" if asked else "Verificar promessa ao cliente"
    summary = (
        f"O cliente pediu: “{asked}”.\n" if asked else ""
    ) + f"A IA respondeu prometendo a ação de uma pessoa: “{trim(promise, 500)}”."
    blocker = (
        "Aberto automaticamente pela trava de promessa: a IA prometeu que alguém da equipe "
        "vai agir e não abriu o caso. Confira o pedido e responda."
    )
    return {"title": title, "summary": summary, "blocker": blocker}
