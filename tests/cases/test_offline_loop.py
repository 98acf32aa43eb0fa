"""The whole cases loop with the offline model (no API key), through the webhook and the
services, as the demo and the browser test drive it."""

from __future__ import annotations

from cases import services
from cases.models import Case, CaseStatus
from conversation.llm.offline import CASE_UPDATE_REPLY
from tests.cases.conftest import outbound_bodies, say


def test_the_offline_model_drives_the_loop_deterministically(
    cases_world, django_capture_on_commit_callbacks
):
    capture = django_capture_on_commit_callbacks
    say(cases_world.channel_a, "Quero o reembolso do pedido 123", "loop-1", capture)

    case = Case.objects.get()
    assert (case.status, case.title) == (CaseStatus.AWAITING_HUMAN, "Pedido de reembolso")
    assert "nossa equipe" in outbound_bodies()[-1]

    with capture(execute=True):
        services.case_answer(
            case=case, actor=cases_world.agent, action="need_lead_info", text="o CPF do titular"
        )
    assert outbound_bodies()[-1].endswith("preciso de uma informação sua: o CPF do titular")

    say(cases_world.channel_a, "123.456.789-00", "loop-2", capture)
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert case.events.get(kind="lead_provided").body == "123.456.789-00"
    assert outbound_bodies()[-1] == CASE_UPDATE_REPLY

    with capture(execute=True):
        services.case_answer(
            case=case, actor=cases_world.agent, action="resolved", text="Reembolso aprovado."
        )
    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED
    assert outbound_bodies()[-1].endswith("Reembolso aprovado.")
    assert list(case.events.values_list("kind", flat=True).order_by("created_at")) == [
        "opened",
        "human_replied",
        "lead_asked",
        "lead_provided",
        "human_replied",
        "resolved",
    ]
    assert Case.objects.count() == 1
