"""The turn package: the one place where the pipeline reads top to bottom.

    guards:  opt-out · human owns the conversation                     (``guards``)
    route:   the turn's agent                                          (``pipeline``)
    guard:   handoff keywords → perform_human_handoff                  (``guards``)
    agent:   conversation runtime (agent versions with a runtime profile) (``runtime_step``),
             then orchestrator (LLM tool loop: send_message, request_human_handoff,
             search_knowledge; open_human_case, provide_case_update when cases_enabled)
                                                                       (``orchestration``)
    send:    before-send gate chain (case-promise gate) → outbox       (``tools``)

Each turn is claim → decide → finish (``pipeline``'s docstring): the claim and its lease
(``claim``), the burst window (``burst``), the organization across the turn's own short
transactions (``tenancy``), the model down (``unavailable``).

Cases re-enter here too: ``run_case_reply_turn`` (a person answered a case) and
``run_follow_up_turn`` (``follow_up``: a case waiting for the customer is due a
follow-up). The Celery wrappers of all three turns are in ``conversation/tasks.py``.

Only this package knows routers, the runtime and cases together; nothing below the entry
points imports it.
"""

from __future__ import annotations

from .context import TurnContext
from .follow_up import run_follow_up_turn
from .guards import (
    HANDOFF_NOTICE,
    OPT_IN_CONFIRMATION,
    OPT_IN_KEYWORDS,
    OPT_OUT_CONFIRMATION,
    OPT_OUT_KEYWORDS,
)
from .orchestration import build_history
from .pipeline import (
    resolve_turn_agent,
    run_case_reply_turn,
    run_inbound_turn,
)
from .tools import (
    REQUEST_HUMAN_HANDOFF,
    SEARCH_KNOWLEDGE,
    SEND_MESSAGE,
    Gate,
    Vetoed,
    send_through_gates,
)

__all__ = [
    "HANDOFF_NOTICE",
    "OPT_IN_CONFIRMATION",
    "OPT_IN_KEYWORDS",
    "OPT_OUT_CONFIRMATION",
    "OPT_OUT_KEYWORDS",
    "REQUEST_HUMAN_HANDOFF",
    "SEARCH_KNOWLEDGE",
    "SEND_MESSAGE",
    "Gate",
    "TurnContext",
    "Vetoed",
    "build_history",
    "resolve_turn_agent",
    "run_case_reply_turn",
    "run_follow_up_turn",
    "run_inbound_turn",
    "send_through_gates",
]
