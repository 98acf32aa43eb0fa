"""The analytics pages: who sees them, what they show, CSV, and their pinned queries."""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from analytics import rollups
from analytics.budgets import BudgetConfig
from analytics.models import ModelPrice
from tests.analytics import world as small

QUERY = "?de=2026-12-01&ate=2026-12-15"


@pytest.fixture
def built(world):
    return small.build(world)


def _get(user, url):
    """GET at the world's "now" (logged in then: a session from today would have expired)."""
    with time_machine.travel(small.NOW, tick=False):
        client = Client()
        client.force_login(user)
        return client.get(url)


def test_the_outcomes_page_shows_the_figures_to_a_manager(world, built):
    response = _get(world.manager, "/resultados/" + QUERY)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="kpi-conversations"><strong>5<' in html
    assert 'id="kpi-turns"><strong>6<' in html
    assert 'id="kpi-ai-alone"><strong>40,0%<' in html
    assert 'id="kpi-handoff-rate"><strong>40,0%<' in html
    assert 'id="kpi-runtime-fallback"><strong>33,3%<' in html
    assert 'id="route-fallback-share">25,0%<' in html
    assert 'id="route-local-share">50,0%<' in html
    assert 'id="cases-opened"><strong>2<' in html
    assert "45 min" in html  # the median first answer (2700 s)
    assert "<svg" in html and "style=" not in html and "<script>" not in html


def test_the_viewer_and_the_agent_may_not_see_outcomes(world, built):
    for user in (world.viewer, world.agent):
        assert _get(user, "/resultados/").status_code == 403


def test_the_outcomes_page_makes_the_same_queries_however_much_data(world, built):
    with time_machine.travel(small.NOW, tick=False):
        rollups.roll_up(world.org_a.pk)
        client = Client()
        client.force_login(world.manager)
        client.get("/resultados/" + QUERY)  # warm up
        with CaptureQueriesContext(connection) as first:
            client.get("/resultados/" + QUERY)
    small._turn(built.conversations["c3"], small.at(12, 15, 11), {"route": {"source": "channel"}})
    small._turn(built.conversations["c4"], small.at(12, 10, 11), {"route": {"source": "channel"}})
    with time_machine.travel(small.NOW, tick=False), CaptureQueriesContext(connection) as second:
        client.get("/resultados/" + QUERY)
    # session · user · membership · memberships (menu) · the channel and agent choices (2) ·
    # rollup state · daily outcomes · daily usage · rollup state again (no roll-up in
    # between) · the live tail (turns, handoffs, follow-ups, unresponsive, model calls) ·
    # the period's conversations · prices · names (2) · cases (2)
    assert len(first) == len(second)
    assert len(first) == 21, "\n".join(q["sql"] for q in first.captured_queries)


def test_the_csv_export_carries_every_figure(world, built):
    response = _get(world.manager, "/resultados/csv/" + QUERY)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    values = {(r[0], r[1]): r[3] for r in rows[1:]}
    assert values[("totais", "conversations")] == "5"
    assert values[("totais", "turns")] == "6"
    assert values[("taxas", "ai_alone_share")] == "0.4000"
    assert values[("taxas", "runtime_fallback_rate")] == "0.3333"
    assert values[("custo", "total_usd")] == "0.0275"
    assert values[("casos", "first_answer:median_s")] == "2700.0000"
    assert values[("casos", "first_answer:p90_s")] == "3600.0000"
    assert values[("espera", "customer_unresponsive:median_s")] == "1800.0000"
    assert values[("transbordo_motivo", "requested_human")] == "1"


@pytest.mark.parametrize(
    "query",
    [
        "?de=9999-12-31",
        "?de=0001-01-01&ate=0001-01-05",
        "?de=9999-12-30&ate=9999-12-31",
        "?ate=0001-01-01",
    ],
)
@pytest.mark.parametrize("page", ["/resultados/", "/resultados/csv/"])
def test_dates_at_the_ends_of_the_calendar_give_a_page_not_an_error(world, built, page, query):
    # A half-typed year in the date field ("1") reaches the server as year 0001.
    assert _get(world.manager, page + query).status_code == 200


def test_the_cost_card_names_what_each_call_was_for_in_words(world, built):
    conversation = built.conversations["c1"]
    html = _get(world.viewer, f"/resultados/conversas/{conversation.pk}/custo/").content.decode()
    assert "orchestrator" not in html and "resposta ao cliente" in html


def test_the_conversation_cost_fragment_shows_its_cost(world, built):
    conversation = built.conversations["c1"]
    response = _get(world.viewer, f"/resultados/conversas/{conversation.pk}/custo/")
    assert response.status_code == 200
    assert "US$ 0,0050" in response.content.decode()


def test_another_organizations_conversation_cost_is_not_found(world, built):
    conversation = built.conversations["c1"]
    response = _get(world.outsider, f"/resultados/conversas/{conversation.pk}/custo/")
    assert response.status_code == 404


def test_no_organization_changes_the_price_list_every_organization_is_charged_by(world):
    # The list is global: an admin of one organization pricing a model at US$ 999,999 per
    # million tokens would inflate every other organization's costs and stop their AI at
    # their monthly budget. The page reads it; only the platform's admin changes it.
    before = list(ModelPrice.objects.values_list("model", "output_per_mtok"))
    client = world.client_for(world.admin)
    response = client.post(
        "/resultados/precos/",
        {
            "model": "claude-haiku-4-5",
            "input_per_mtok": "999999",
            "output_per_mtok": "999999",
            "cache_write_per_mtok": "0",
            "cache_read_per_mtok": "0",
            "effective_date": "2026-12-01",
            "source_date": "2026-12-01",
        },
    )
    assert response.status_code == 405
    assert list(ModelPrice.objects.values_list("model", "output_per_mtok")) == before
    page = client.get("/resultados/precos/").content.decode()
    assert 'id="price-form"' not in page and "equipe da plataforma" in page


def test_a_manager_reads_prices_but_may_not_change_them(world):
    client = world.client_for(world.manager)
    page = client.get("/resultados/precos/")
    assert page.status_code == 200 and "claude-haiku-4-5" in page.content.decode()
    assert client.post("/resultados/precos/", {"model": "x"}).status_code == 405
    assert not ModelPrice.objects.filter(model="x").exists()


def test_an_admin_sets_the_budget_on_its_page(world):
    client = world.client_for(world.admin)
    response = client.post(
        "/resultados/orcamento/",
        {"monthly_limit_usd": "25.00", "contact_turns_per_minute": "12", "on_limit": "handoff"},
    )
    assert response.status_code == 302
    world.org_a.refresh_from_db()
    assert BudgetConfig.of(world.org_a) == BudgetConfig(
        monthly_limit_usd=Decimal("25.00"), contact_turns_per_minute=12, on_limit="handoff"
    )
    assert client.get("/resultados/orcamento/").status_code == 200
    manager = world.client_for(world.manager)
    assert manager.post("/resultados/orcamento/", {"on_limit": "offline"}).status_code == 403


def _section(html: str, section_id: str) -> str:
    start = html.index(f'id="{section_id}"')
    return html[start : html.index("</section>", start)]


def test_the_cost_chart_has_a_bar_for_every_day_with_a_cost_and_its_exact_cost(world, built):
    # 12-10 cost US$ 0.005: half a cent, which rounded to no bar at all in cents.
    html = _get(world.manager, "/resultados/" + QUERY).content.decode()
    chart = _section(html, "cost-chart")
    titles = re.findall(r"<title>([^<]*)</title>", chart)
    assert [t.split(" · ")[0] for t in titles] == ["10/12", "12/12", "14/12"]
    assert [t.split(": ")[-1] for t in titles] == ["US$ 0,0050", "US$ 0,0075", "US$ 0,0150"]
    assert "décimos de centavo" in chart  # the unit the bars count in, said


def test_a_period_whose_days_each_cost_under_a_cent_still_draws_its_cost(world):
    conversation = small._conversation(world.channel_a, "5511900000031", small.at(12, 3, 9))
    turn = small._turn(conversation, small.at(12, 3, 9, 1), {})
    small._call(turn, "claude-haiku-4-5", small.at(12, 3, 9, 1), input_tokens=4000)  # US$ 0.004
    html = _get(world.manager, "/resultados/" + QUERY).content.decode()
    assert 'id="kpi-cost"><strong>US$ 0,00<' in html
    chart = _section(html, "cost-chart")
    assert "Nenhum custo neste período." not in chart
    assert "<title>03/12 · " in chart and "US$ 0,0040" in chart


def test_the_csv_writes_tiny_costs_as_plain_decimals(world, built):
    turn = small._turn(built.conversations["c1"], small.at(12, 9, 11), {})
    small._call(turn, "claude-sonnet-4-5", small.at(12, 9, 11), cache_read_tokens=1)  # 3e-7
    small._call(turn, "claude-opus-4-1", small.at(12, 9, 11), error_code="overloaded")  # 0
    response = _get(world.manager, "/resultados/csv/" + QUERY)
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    values = {(r[0], r[1]): r[3] for r in rows[1:]}
    assert values[("custo_dia", "2026-12-09")] == "0.0000003"
    assert Decimal(values[("custo_modelo", "claude-opus-4-1")]) == 0
    money = [r[3] for r in rows[1:] if r[0].startswith("custo") and r[1] != "unpriced_calls"]
    assert money and not [v for v in money if "E" in v.upper()]


def test_the_budget_page_names_the_models_with_no_price_the_limit_cannot_see(world):
    turn = small._turn(
        small._conversation(world.channel_a, "5511900000041", small.NOW), small.NOW, {}
    )
    small._call(turn, "claude-sonnet-5", small.NOW, input_tokens=500_000)  # not in the list
    small._call(turn, "offline", small.NOW)  # runs here: costs nothing, nothing to ask
    html = _get(world.manager, "/resultados/orcamento/").content.decode()
    assert 'id="budget-unpriced"' in html
    notice = html[html.index('id="budget-unpriced"') :].split("</p>")[0]
    assert "1 chamada" in notice and "claude-sonnet-5" in notice and "offline" not in notice


def test_a_filter_naming_another_organizations_channel_keeps_the_chosen_dates(world, built):
    # A saved link with a channel the organization no longer has (or never had).
    url = f"/resultados/{QUERY}&canal={world.channel_b.pk}"
    html = _get(world.manager, url).content.decode()
    assert "De 01/12/2026 a 15/12/2026." in html
    assert 'id="kpi-conversations"><strong>5<' in html  # the period's, not the last 30 days'
    assert "Outro" not in html  # nothing of the other organization's


def test_the_csv_keeps_a_name_that_looks_like_a_formula_as_text(world, built):
    built.agent2.name = '=HYPERLINK("http://mal.example/","Vendas")'
    built.agent2.save(update_fields=["name"])
    world.channel_a.name = "+55 11 canal"
    world.channel_a.save(update_fields=["name"])
    response = _get(world.manager, "/resultados/csv/" + QUERY)
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    labels = {r[2] for r in rows[1:]}
    assert '\'=HYPERLINK("http://mal.example/","Vendas")' in labels
    assert "'+55 11 canal" in labels
    assert not [cell for row in rows for cell in row if cell[:1] in ("=", "+", "@")]
