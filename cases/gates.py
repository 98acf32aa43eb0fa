"""The case-promise gate wired into the turn's before-send chain (human-cases §6).

``case_promise_send_gate`` runs inside ``send_message`` before anything reaches the
outbox, under the conversation lock the turn holds. It feeds the pure chain
(``cases.guardrail.run_gates``) with what only the database knows — whether the lead has
an open case, whether this turn opened one, how many times this turn was vetoed — and
carries out its verdict:

* veto → the teaching error goes back to the model (the turn records the code);
* auto-fallback (second promise in the turn) → a minimal case is opened
  (``source=guardrail_autofallback``, event ``opened``) and the message goes. If that
  case cannot be opened, the message does not go: the customer never receives a promise
  of a human without an open case.

A case reply turn relays the team's own words about its own case, so that case covers
any promise in the relay.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, transaction

from cases import services
from cases.guardrail import (
    CASE_PROMISE_TEACHING_PT,
    CASE_PROMISE_WITHOUT_CASE,
    GATE_CHAIN_VERSION,
    GateContext,
    VerdictKind,
    run_gates,
)
from cases.models import CaseSource
from cases.tools import TurnState
from conversation.llm.offline import trim
from conversation.models import TriggerKind

log = logging.getLogger(__name__)


def case_promise_send_gate(ctx: TurnState, text: str) -> str | None:
    """None to let ``text`` go; a teaching error for the model otherwise."""
    agent = ctx.agent
    if agent is None or not agent.cases_enabled:
        return None  # §5.3: guardrail off
    covering = ctx.turn.trigger_kind == TriggerKind.CASE_REPLY
    verdict = run_gates(
        GateContext(
            body=text,
            has_open_case_for_lead=covering or services.has_open_case_for_lead(ctx.conversation),
            case_opened_this_turn=bool(ctx.trace.get("cases_opened")),
            prior_vetoes_this_turn=list(ctx.trace.get("vetoes", [])).count(
                CASE_PROMISE_WITHOUT_CASE
            ),
            cases_enabled=True,
        )
    )
    if verdict.kind is VerdictKind.ALLOW:
        return None
    ctx.trace["gate_chain"] = GATE_CHAIN_VERSION
    if verdict.promise is not None:
        ctx.trace.setdefault("promise_rules", []).append(verdict.promise.rule_id)
    if verdict.kind is VerdictKind.VETO:
        return verdict.error_message or CASE_PROMISE_TEACHING_PT
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
        return CASE_PROMISE_TEACHING_PT
    ctx.trace.setdefault("cases_opened", []).append(str(case.pk))
    ctx.trace["case_autofallback"] = str(case.pk)
    return None


# The turn records a veto under this code (``getattr(gate, "code", ...)``).
case_promise_send_gate.code = CASE_PROMISE_WITHOUT_CASE  # type: ignore[attr-defined]


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
