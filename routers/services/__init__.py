"""Writes of the routers app: routers, their members, the labelled phrases and quality
runs. Each service is one transaction ending with its AuditLog row; side effects (the
quality run task) are scheduled by task name on commit.

The package by topic: ``editing`` (routers and their intents), ``phrases`` (the labelled
set), ``dry_run`` (the classification test: it writes no decision, though its model calls
still land in the LlmCall ledger, since they cost the same), ``quality_runs`` (queue and
execute a run), ``suggestions`` (LLM verdicts an admin accepts into the labelled set).
Reads live in ``routers.selectors`` and ``routers.loaders``; the pure
scoring of a run in ``routers.quality``. Callers import this package:
``services.router_create(...)``.
"""

from __future__ import annotations

from .dry_run import RouterTestResult, router_classify_test
from .editing import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLES,
    MAX_MEMBERS,
    MemberSpec,
    router_create,
    router_delete,
    router_members_replace,
    router_save,
    router_update,
)
from .phrases import (
    MAX_LABELLED_PHRASES,
    labelled_phrase_delete,
    labelled_phrases_add,
    labelled_phrases_replace,
)
from .quality_runs import quality_run_execute, quality_run_start
from .suggestions import (
    MAX_PENDING_SUGGESTIONS,
    suggestion_accept,
    suggestion_record,
    suggestion_reject,
)

__all__ = [
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "MAX_LABELLED_PHRASES",
    "MAX_MEMBERS",
    "MAX_PENDING_SUGGESTIONS",
    "MemberSpec",
    "RouterTestResult",
    "labelled_phrase_delete",
    "labelled_phrases_add",
    "labelled_phrases_replace",
    "quality_run_execute",
    "quality_run_start",
    "router_classify_test",
    "router_create",
    "router_delete",
    "router_members_replace",
    "router_save",
    "router_update",
    "suggestion_accept",
    "suggestion_record",
    "suggestion_reject",
]
