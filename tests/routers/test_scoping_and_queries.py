"""Every id a router URL names is looked up inside the caller's organization and, for a
router's rows (phrases, runs), inside that router: another organization's ids, or another
router's rows, are the same 404 as a missing one, and nothing changes. List endpoints
read a fixed number of queries however many rows they list."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from routers.models import LabelledPhrase, QualityRun, Router
from tests import factories
from tests.routers.factories import SUPORTE, VENDAS, data_queries, make_router

BASE = "/api/v1/ai/routers"


def _phrase(router: Router, text: str, intent: str = "suporte") -> LabelledPhrase:
    return LabelledPhrase.objects.create(
        organization=router.organization, router=router, text=text, intent_name=intent
    )


@pytest.fixture
def theirs(world):
    """Organization B's router, with a phrase and a finished run."""
    router = make_router(world.channel_b, [(world.agent_b, SUPORTE)], name="Deles")
    _phrase(router, "frase deles")
    QualityRun.objects.create(organization=world.org_b, router=router, status="done")
    return router


def test_another_organizations_router_rows_are_404_in_the_api(world, theirs):
    client = world.client_for(world.admin)  # org A's admin: every role lets them through
    run = QualityRun.objects.get(router=theirs)
    put = json.dumps({"phrases": []})
    responses = [
        client.get(f"{BASE}/{theirs.pk}/labelled-phrases"),
        client.put(
            f"{BASE}/{theirs.pk}/labelled-phrases", data=put, content_type="application/json"
        ),
        client.post(f"{BASE}/{theirs.pk}/quality-runs"),
        client.get(f"{BASE}/{theirs.pk}/quality-runs/{run.pk}"),
    ]
    assert [r.status_code for r in responses] == [404] * 4
    assert {r.json()["error"]["code"] for r in responses} == {"not_found"}
    assert LabelledPhrase.objects.filter(router=theirs).count() == 1
    assert QualityRun.objects.filter(router=theirs).count() == 1


def test_another_organizations_router_pages_are_404(world, theirs):
    client = world.client_for(world.admin)
    phrase, run = LabelledPhrase.objects.get(router=theirs), QualityRun.objects.get()
    base = f"/roteadores/{theirs.pk}"
    responses = [
        client.get(f"{base}/decisoes/"),
        client.get(f"{base}/qualidade/"),
        client.post(f"{base}/qualidade/frases/", {"text": "x", "intent_name": "suporte"}),
        client.post(f"{base}/qualidade/colar/", {"lines": "x;suporte"}),
        client.post(f"{base}/qualidade/frases/{phrase.pk}/excluir/"),
        client.post(f"{base}/qualidade/rodar/"),
        client.get(f"{base}/qualidade/{run.pk}/"),
        client.post(f"{base}/qualidade/{run.pk}/aplicar/"),
    ]
    assert [r.status_code for r in responses] == [404] * 8
    assert LabelledPhrase.objects.filter(router=theirs).count() == 1
    assert QualityRun.objects.count() == 1


def test_a_row_of_another_router_of_the_same_organization_is_404(world):
    mine = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    other = make_router(factories.make_channel(world.org_a), [(world.agent_a, SUPORTE)])
    phrase = _phrase(other, "do outro")
    run = QualityRun.objects.create(organization=world.org_a, router=other, status="done")
    client = world.client_for(world.admin)

    deleted = client.post(f"/roteadores/{mine.pk}/qualidade/frases/{phrase.pk}/excluir/")
    progress = client.get(f"/roteadores/{mine.pk}/qualidade/{run.pk}/")
    api = client.get(f"{BASE}/{mine.pk}/quality-runs/{run.pk}")

    assert (deleted.status_code, progress.status_code, api.status_code) == (404, 404, 404)
    assert LabelledPhrase.objects.filter(pk=phrase.pk).exists()


@pytest.mark.parametrize("size", [1, 6])
def test_api_lists_read_a_fixed_number_of_queries(world, size):
    agents = [factories.make_agent(world.org_a, f"Agente {i}") for i in range(size)]
    intents = [(a, (f"intent{i}", "x", ["y"])) for i, a in enumerate(agents)]
    routers = [
        make_router(factories.make_channel(world.org_a), intents, name=f"R{i}") for i in range(size)
    ]
    for i in range(size):
        _phrase(routers[0], f"frase {i}", "intent0")
    client = world.client_for(world.agent)
    expected = {
        # session · user · membership · routers with channel and intent count
        BASE: 4,
        # session · user · membership · the router · its intents
        f"{BASE}/{routers[0].pk}": 5,
        # session · user · membership · the router · its phrases
        f"{BASE}/{routers[0].pk}/labelled-phrases": 5,
    }
    for url, count in expected.items():
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url).status_code == 200
        assert len(data_queries(ctx)) == count, "\n".join(data_queries(ctx))


def test_quality_page_reads_a_fixed_number_of_queries(world):
    vendas = factories.make_agent(world.org_a, "Vendas")
    router = make_router(world.channel_a, [(vendas, VENDAS), (world.agent_a, SUPORTE)])
    client = world.client_for(world.manager)

    def count() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/roteadores/{router.pk}/qualidade/").status_code == 200
        return len(data_queries(ctx))

    few = count()
    for i in range(30):
        _phrase(router, f"frase {i}")
    QualityRun.objects.create(organization=world.org_a, router=router, status="failed")
    # session · user · membership · router · latest run · intents · phrases · memberships
    assert few == count() == 8
