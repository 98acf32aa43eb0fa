"""Cases are born and change only in the engine (human-cases §8.2): services and tasks write
them; no page, form, API payload or admin screen does, and the timeline is append-only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib import admin
from django.test import RequestFactory

from cases.models import (
    Case,
    CaseEvent,
    CaseFollowUp,
    CaseNotice,
    CaseNoticeAttempt,
    CaseReminder,
)
from tests.cases.conftest import open_case

ROOT = Path(__file__).resolve().parents[2]
# The only modules allowed to create, update or delete cases and their events (the services
# package, every module of it, and the notices).
ENGINE = {"cases/services", "cases/notifications.py"}
WRITES = {
    "create",
    "update",
    "delete",
    "bulk_create",
    "bulk_update",
    "get_or_create",
    "update_or_create",
    "save",
}


def _writes_to_case_tables(path: Path) -> list[str]:
    found = []
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in WRITES:
            continue
        chain = ast.unparse(node.func.value)
        if chain.startswith(("Case.objects", "CaseEvent.objects")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} {chain}.{node.func.attr}")
    return found


def _in_engine(path: Path) -> bool:
    relative = path.relative_to(ROOT)
    return str(relative) in ENGINE or any(str(p) in ENGINE for p in relative.parents)


def test_only_the_engine_writes_cases_and_events():
    sources = [
        p
        for folder in ("cases", "conversation", "accounts", "routers", "config")
        for p in (ROOT / folder).rglob("*.py")
        if "migrations" not in p.parts
    ]
    offenders = [
        hit for path in sources if not _in_engine(path) for hit in _writes_to_case_tables(path)
    ]
    assert offenders == []


@pytest.mark.parametrize("model", [Case, CaseEvent, CaseFollowUp, CaseReminder, CaseNotice])
def test_the_admin_reads_engine_rows_but_never_writes_them(model, cases_world):
    request = RequestFactory().get("/admin/")
    cases_world.admin.is_superuser = cases_world.admin.is_staff = True
    request.user = cases_world.admin
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_the_timeline_is_append_only(conversation):
    case = open_case(conversation)
    event = case.events.get()

    with pytest.raises(TypeError):
        event.save()
    with pytest.raises(TypeError):
        event.delete()
    with pytest.raises(TypeError):
        CaseEvent.objects.filter(case=case).update(body="reescrito")
    with pytest.raises(TypeError):
        CaseEvent.objects.filter(case=case).delete()
    assert CaseEvent.objects.get(pk=event.pk).body == ""


def test_deleting_a_case_still_cascades_to_its_events(conversation):
    case = open_case(conversation)
    case.delete()
    assert not CaseEvent.objects.exists() and not CaseNoticeAttempt.objects.exists()


def test_the_api_offers_no_way_to_create_or_edit_a_case(conversation, cases_world):
    case = open_case(conversation)
    client = cases_world.client_for(cases_world.admin)
    body = {"title": "x", "summary": "x", "blocker": "x", "status": "resolved"}

    assert client.post("/api/v1/ai/cases", body, content_type="application/json").status_code == 405
    for method in (client.put, client.patch, client.delete):
        response = method(f"/api/v1/ai/cases/{case.pk}", body, content_type="application/json")
        assert response.status_code == 405
    case.refresh_from_db()
    assert (case.title, case.status) != ("x", "resolved")
