"""Non-trivial reads of the routers app: lists with counts, decision telemetry for the
decisions page and its chart, and the routers that drive an agent."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from accounts.models import Membership, Organization
from conversation.llm.catalog import choosable_models
from conversation.models import Agent
from routers.loaders import parse_router_config
from routers.models import (
    DecisionOutcome,
    LabelledPhrase,
    QualityRun,
    Router,
    RouterDecision,
    RouterMember,
    RouterSuggestion,
    SuggestionStatus,
)

CHART_DAYS = 14
LATEST_DECISIONS = 50


def router_list(membership: Membership) -> QuerySet[Router]:
    """The organization's routers with their channel, fallback and intent count. 1 query."""
    return (
        Router.objects.filter(organization_id=membership.organization_id)
        .select_related("channel", "fallback_agent")
        .annotate(member_count=Count("members"))
        .order_by("name")
    )


def router_members(router: Router) -> list[RouterMember]:
    return list(router.members.select_related("agent").order_by("position", "intent_name"))


def router_version(router: Router, members: Sequence[RouterMember]) -> str:
    """A fingerprint of everything the edit page shows and saves (the router's fields, its
    config, its intents in order): the page sends back the one it showed, and a save over
    a router that changed since is refused (``services.router_save``). Labelled phrases are
    not part of it: the page does not save them."""
    state = {
        "name": router.name,
        "channel": str(router.channel_id),
        "fallback": str(router.fallback_agent_id or ""),
        "active": router.is_active,
        "config": parse_router_config(router.config).as_json(),
        "members": [
            [str(m.agent_id), m.intent_name, m.intent_description, list(m.examples or ())]
            for m in members
        ],
    }
    blob = json.dumps(state, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:32]


def router_intent_names(router: Router) -> list[str]:
    """The router's intents in their order (the members' one query)."""
    return [m.intent_name for m in router_members(router)]


def routers_driving_agent(agent: Agent) -> list[Router]:
    """Active routers where ``agent`` answers an intent or is the fallback. 1 query."""
    return list(
        Router.objects.filter(organization_id=agent.organization_id, is_active=True)
        .filter(Q(members__agent=agent) | Q(fallback_agent=agent))
        .select_related("channel")
        .distinct()
        .order_by("name")
    )


def labelled_phrases(router: Router) -> QuerySet[LabelledPhrase]:
    return LabelledPhrase.objects.filter(router=router).order_by("-created_at")


def latest_quality_run(router: Router) -> QualityRun | None:
    return QualityRun.objects.filter(router=router).order_by("-created_at").first()


# --- decisions telemetry ---------------------------------------------------------------------


@dataclass(frozen=True)
class OutcomeCount:
    outcome: str
    label: str
    count: int


# Outcomes where no intent got the message: the chart counts them as such, never under
# the intent the classifier scored too low (three greetings are not "financeiro: 3").
UNROUTED_OUTCOMES = frozenset(
    {DecisionOutcome.FALLBACK, DecisionOutcome.NO_MATCH, DecisionOutcome.CLASSIFIER_FAILED}
)


@dataclass(frozen=True)
class DecisionStats:
    since: dt.date
    days: tuple[dt.date, ...]
    total: int
    outcomes: tuple[OutcomeCount, ...]
    # intent ("" = no intent: fallback or generic) -> one count per day of ``days``
    intent_mix: dict[str, list[int]]
    # who decided the classified messages, per day: "local" and "llm" -> counts
    stage_mix: dict[str, list[int]]

    @property
    def local_share(self) -> float | None:
        """Of the messages a classifier decided, the share the local stage decided."""
        local, llm = sum(self.stage_mix.get("local", ())), sum(self.stage_mix.get("llm", ()))
        return local / (local + llm) if local + llm else None

    @property
    def local_percent(self) -> int | None:
        share = self.local_share
        return None if share is None else round(100 * share)


def decision_stats(router: Router, *, days: int = CHART_DAYS) -> DecisionStats:
    """Outcome counts, the intent mix and the deciding stage per day over the last
    ``days`` days. 2 queries."""
    today = timezone.localdate()
    since = today - dt.timedelta(days=days - 1)
    tz = timezone.get_current_timezone()
    start = dt.datetime.combine(since, dt.time.min, tzinfo=tz)
    window = RouterDecision.objects.filter(router=router, created_at__gte=start)
    by_outcome = dict(
        window.order_by().values_list("outcome").annotate(n=Count("pk")).values_list("outcome", "n")
    )
    labels = dict(DecisionOutcome.choices)
    outcomes = tuple(
        OutcomeCount(value, str(labels[value]), by_outcome.get(value, 0))
        for value in DecisionOutcome.values
    )
    day_list = tuple(since + dt.timedelta(days=i) for i in range(days))
    index = {d: i for i, d in enumerate(day_list)}
    mix: dict[str, list[int]] = {}
    stages: dict[str, list[int]] = {"local": [0] * days, "llm": [0] * days}
    rows = (
        window.annotate(day=TruncDate("created_at", tzinfo=tz))
        .order_by()
        .values_list("day", "intent_name", "outcome", "stage")
        .annotate(n=Count("pk"))
    )
    for day, intent, outcome, stage, n in rows:
        if day not in index:
            continue
        subject = "" if outcome in UNROUTED_OUTCOMES else (intent or "")
        mix.setdefault(subject, [0] * days)[index[day]] += n
        if stage in stages:
            stages[stage][index[day]] += n
    return DecisionStats(
        since=since,
        days=day_list,
        total=sum(by_outcome.values()),
        outcomes=outcomes,
        intent_mix=dict(sorted(mix.items(), key=lambda kv: (kv[0] == "", kv[0]))),
        stage_mix=stages,
    )


def latest_decisions(router: Router, limit: int = LATEST_DECISIONS) -> list[RouterDecision]:
    return list(
        RouterDecision.objects.filter(router=router)
        .select_related("agent")
        .order_by("-created_at")[:limit]
    )


PENDING_SUGGESTIONS_SHOWN = 20


def pending_suggestions(
    router: Router, limit: int = PENDING_SUGGESTIONS_SHOWN
) -> list[RouterSuggestion]:
    """The newest suggestions waiting for an admin."""
    return list(
        RouterSuggestion.objects.filter(router=router, status=SuggestionStatus.PENDING).order_by(
            "-created_at"
        )[:limit]
    )


def pending_suggestion_count(router: Router) -> int:
    return RouterSuggestion.objects.filter(router=router, status=SuggestionStatus.PENDING).count()


def classifier_models(organization: Organization, *, keep: str = "") -> list[str]:
    """The models a router's LLM stage may be set to: the ones an agent may use (the SDK's,
    within the organization's enabled list, none past its end of life), plus ``keep`` (the
    router's current model, so saving other fields never forces a change). A name outside
    them would make the stage fail on every message the local stage is unsure of."""
    today = timezone.localdate()
    return [name for name, _ in choosable_models(organization.settings, today, keep=keep)]
