"""Router pages (spec Task 7): list with its teaching empty state, create/edit with the
intents formset, the classification test panel, decisions with the chart, the quality
loop, the agent page warning, roles and tenancy."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import AuditLog
from routers.models import LabelledPhrase, QualityRun, Router, RouterDecision, RouterMember
from tests import factories
from tests.pages import external_assets
from tests.routers.factories import (
    SUPORTE,
    VENDAS,
    data_queries,
    formset_data,
    make_router,
    router_data,
)

# --- list -------------------------------------------------------------------------------


def test_empty_list_teaches_what_a_router_is(world):
    response = world.client_for(world.admin).get("/roteadores/")
    page = response.content.decode()
    assert response.status_code == 200
    assert (
        "Um roteador entende o que o cliente quer e entrega a conversa para o agente certo" in page
    )
    assert "Criar o primeiro roteador" in page


def test_list_shows_routers_with_intent_count(world, router):
    client = world.client_for(world.manager)
    make_router(factories.make_channel(world.org_a), [(world.agent_a, SUPORTE)], name="Outro")
    with CaptureQueriesContext(connection) as ctx:
        page = client.get("/roteadores/").content.decode()
    # session · user · membership · workspace memberships · routers (with channel,
    # fallback and member count, one query for any number of routers)
    assert len(data_queries(ctx)) == 5, "\n".join(data_queries(ctx))
    assert "Atendimento" in page and "2 intenções" in page
    assert "Novo roteador" not in page  # managers see, admins configure


def test_nav_shows_roteadores_only_to_managers_and_admins(world):
    assert "/roteadores/" in world.client_for(world.manager).get("/").content.decode()
    assert "/roteadores/" not in world.client_for(world.agent).get("/").content.decode()


@pytest.mark.parametrize("user", ["viewer", "agent"])
def test_pages_deny_roles_below_manager(world, router, user):
    client = world.client_for(getattr(world, user))
    for url in (
        "/roteadores/",
        f"/roteadores/{router.pk}/",
        f"/roteadores/{router.pk}/decisoes/",
        f"/roteadores/{router.pk}/qualidade/",
    ):
        assert client.get(url).status_code == 403


def test_other_organizations_router_pages_are_404(world, router):
    client = world.client_for(world.outsider)
    assert client.get(f"/roteadores/{router.pk}/").status_code == 404
    assert client.post(f"/roteadores/{router.pk}/testar/", {"message": "oi"}).status_code == 404
    assert client.post(f"/roteadores/{router.pk}/excluir/").status_code == 404
    assert Router.objects.filter(pk=router.pk).exists()


# --- create and edit ----------------------------------------------------------------------


def test_admin_creates_a_router_with_two_intents_in_one_post(world, vendas):
    data = router_data(world, fallback_agent=str(world.agent_a.pk))
    data.update(
        formset_data(
            [
                {
                    "agent": str(vendas.pk),
                    "intent_name": "vendas",
                    "intent_description": "Quer comprar.",
                    "examples": "quanto custa?\n\nquero comprar\nquanto custa?",
                },
                {
                    "agent": str(world.agent_a.pk),
                    "intent_name": "suporte",
                    "intent_description": "Problema técnico.",
                    "examples": "",
                },
                {"agent": "", "intent_name": "", "intent_description": "", "examples": ""},
            ]
        )
    )
    response = world.client_for(world.admin).post("/roteadores/novo/", data)
    router = Router.objects.get()
    assert response.status_code == 302 and response.url == f"/roteadores/{router.pk}/"
    assert (router.organization_id, router.fallback_agent_id) == (world.org_a.pk, world.agent_a.pk)
    members = list(RouterMember.objects.order_by("position"))
    assert [(m.intent_name, m.agent_id) for m in members] == [
        ("vendas", vendas.pk),
        ("suporte", world.agent_a.pk),
    ]
    assert members[0].examples == ["quanto custa?", "quero comprar"]
    assert {a.action for a in AuditLog.objects.all()} >= {"router.create", "router.members_replace"}


def test_create_on_an_already_routed_channel_shows_the_error_on_the_channel(world, router):
    response = world.client_for(world.admin).post(
        "/roteadores/novo/", {**router_data(world), **formset_data([])}
    )
    assert response.status_code == 200
    assert "Este número já tem um roteador ativo." in response.content.decode()
    assert Router.objects.count() == 1


@pytest.mark.parametrize("model", ["claude-opus-typo", "gpt-4o", "claude-sonnet-5"])
def test_the_classifier_model_is_one_the_organization_may_use(world, vendas, model):
    # The organization enabled Haiku only: a typo, another vendor's model or a Claude model
    # it did not enable would fail the LLM stage on every message the local stage is unsure of.
    world.org_a.settings = {"llm": {"enabled_models": ["claude-haiku-4-5"]}}
    world.org_a.save(update_fields=["settings"])
    row = {"agent": str(vendas.pk), "intent_name": "vendas", "intent_description": "x"}
    response = world.client_for(world.admin).post(
        "/roteadores/novo/",
        {**router_data(world, classifier_model=model), **formset_data([row])},
    )
    assert response.status_code == 200
    assert not Router.objects.exists()
    html = response.content.decode()
    assert 'value="claude-haiku-4-5"' in html and f'value="{model}"' not in html


def test_duplicate_intent_names_are_refused(world, vendas):
    row = {"agent": str(vendas.pk), "intent_name": "vendas", "intent_description": "x"}
    response = world.client_for(world.admin).post(
        "/roteadores/novo/", {**router_data(world), **formset_data([row, row])}
    )
    assert "Cada intenção deve ter um nome diferente." in response.content.decode()
    assert not Router.objects.exists()


def test_edit_removes_a_row_and_changes_the_fallback(world, router, vendas):
    rows = [
        {
            "agent": str(vendas.pk),
            "intent_name": "vendas",
            "intent_description": VENDAS[1],
            "examples": "\n".join(VENDAS[2]),
        },
        {
            "agent": str(world.agent_a.pk),
            "intent_name": "suporte",
            "intent_description": SUPORTE[1],
            "examples": "",
            "DELETE": "on",
        },
    ]
    data = {
        **router_data(world, fallback_agent=str(vendas.pk), name="Geral"),
        **formset_data(rows, initial=2),
    }
    response = world.client_for(world.admin).post(f"/roteadores/{router.pk}/", data)
    assert response.status_code == 302
    router.refresh_from_db()
    assert (router.name, router.fallback_agent_id) == ("Geral", vendas.pk)
    assert list(RouterMember.objects.values_list("intent_name", flat=True)) == ["vendas"]


def test_edit_page_offers_the_no_fallback_option_and_the_formset_helper(world, router):
    page = world.client_for(world.admin).get(f"/roteadores/{router.pk}/").content.decode()
    assert "Nenhum — responde com o atendimento padrão" in page
    assert 'id="intent-template"' in page and "members-__prefix__-intent_name" in page
    assert "Testar classificação" in page
    assert external_assets(page) == []


def test_manager_sees_the_edit_page_read_only_and_cannot_post(world, router):
    client = world.client_for(world.manager)
    page = client.get(f"/roteadores/{router.pk}/").content.decode()
    assert "Salvar roteador" not in page and "disabled" in page
    response = client.post(f"/roteadores/{router.pk}/", router_data(world, name="Outro"))
    assert response.status_code == 403
    router.refresh_from_db()
    assert router.name == "Atendimento"


def test_test_panel_shows_intent_confidence_agent_and_stage(world, router):
    response = world.client_for(world.manager).post(
        f"/roteadores/{router.pk}/testar/",
        {"message": "quanto custa o plano?"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<section class="card" id="test-panel"')
    assert '<dd id="test-intent">vendas</dd>' in page
    assert '<dd id="test-agent">Vendas' in page
    assert "Classificador local (sem custo)" in page
    assert not RouterDecision.objects.exists()


def test_test_panel_guards_a_phrase_as_labelled(world, router):
    response = world.client_for(world.admin).post(
        f"/roteadores/{router.pk}/qualidade/frases/",
        {"text": "o sistema caiu", "intent_name": "suporte"},
        HTTP_HX_REQUEST="true",
    )
    assert "Guardada" in response.content.decode()
    phrase = LabelledPhrase.objects.get()
    assert (phrase.text, phrase.intent_name, phrase.router_id) == (
        "o sistema caiu",
        "suporte",
        router.pk,
    )


def test_admin_deletes_a_router(world, router):
    response = world.client_for(world.admin).post(f"/roteadores/{router.pk}/excluir/")
    assert response.status_code == 302
    assert not Router.objects.exists()


# --- decisions ---------------------------------------------------------------------------


def test_decisions_page_counts_outcomes_draws_the_chart_and_links_conversations(
    world, router, vendas
):
    conversation = factories.make_conversation(world.channel_a)
    for outcome, intent in [("classified", "vendas"), ("sticky", "vendas"), ("fallback", "")]:
        RouterDecision.objects.create(
            organization=world.org_a,
            router=router,
            conversation=conversation,
            outcome=outcome,
            intent_name=intent,
            confidence=0.9,
            agent=vendas,
            stage="local",
        )
    page = (
        world.client_for(world.manager).get(f"/roteadores/{router.pk}/decisoes/").content.decode()
    )
    assert '<div class="stat" id="outcome-classified"><strong>1</strong>' in page
    assert '<div class="stat" id="outcome-sticky"><strong>1</strong>' in page
    assert "<svg" in page and "<rect" in page and "vendas: 2</title>" in page
    svg = page[page.index('<svg class="chart-plot"') : page.index("</svg>")]
    for number in re.findall(r'\s(?:x|y|x1|x2|y1|y2|width|height)="([^"]*)"', svg):
        float(number)  # SVG coordinates are never localized ("69,8" would break the chart)
    assert f'href="/conversas/{conversation.pk}/"' in page
    assert 'class="muted cue"' not in page  # no cue decided any of these


def test_decisions_page_says_which_change_of_subject_cue_decided(world, router, vendas):
    for outcome, cue in [("sticky", "no_subject"), ("reclassified", "opener")]:
        RouterDecision.objects.create(
            organization=world.org_a,
            router=router,
            outcome=outcome,
            intent_name="vendas",
            confidence=0.9,
            agent=vendas,
            stage="local",
            cue=cue,
        )
    page = (
        world.client_for(world.manager).get(f"/roteadores/{router.pk}/decisoes/").content.decode()
    )
    assert '<small class="muted cue">Continuação sem assunto próprio</small>' in page
    assert '<small class="muted cue">Abriu outro assunto</small>' in page


# --- quality loop ------------------------------------------------------------------------


def test_paste_adds_labelled_phrases_and_reports_bad_lines(world, router):
    client = world.client_for(world.admin)
    response = client.post(
        f"/roteadores/{router.pk}/qualidade/colar/",
        {"lines": "quanto custa?;vendas\nmeu sistema caiu;suporte\nbom dia;none"},
    )
    assert response.status_code == 302
    assert LabelledPhrase.objects.count() == 3
    response = client.post(f"/roteadores/{router.pk}/qualidade/colar/", {"lines": "oi;financeiro"})
    assert response.status_code == 422
    assert "a intenção «financeiro» não existe neste roteador" in response.content.decode()
    assert LabelledPhrase.objects.count() == 3


def test_quality_run_shows_accuracy_confusion_errors_and_a_suggestion(
    world, router, django_capture_on_commit_callbacks
):
    # An admin labels the phrases; a manager measures the router with them.
    world.client_for(world.admin).post(
        f"/roteadores/{router.pk}/qualidade/colar/",
        {
            "lines": "quanto custa?;vendas\nqual o preço do plano anual;vendas\n"
            "meu sistema não abre;suporte\nquero comprar;suporte\nbom dia;none"
        },
    )
    client = world.client_for(world.manager)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/roteadores/{router.pk}/qualidade/rodar/")
    assert response.status_code == 302
    run = QualityRun.objects.get()
    assert run.status == "done" and run.processed == 5
    page = client.get(f"/roteadores/{router.pk}/qualidade/").content.decode()
    assert 'id="quality-accuracy"' in page and "80%" in page
    assert 'id="confusion"' in page
    assert "quero comprar" in page  # the mislabelled phrase shows as an error
    assert run.results["suggestion"]["explanation"] in page


def test_progress_fragment_polls_while_running_and_stops_when_done(world, router):
    run = QualityRun.objects.create(
        organization=world.org_a, router=router, status="running", total=10, processed=4
    )
    client = world.client_for(world.manager)
    url = f"/roteadores/{router.pk}/qualidade/{run.pk}/"
    fragment = client.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in fragment and "4 de 10 frases" in fragment
    run.status, run.processed, run.results = (
        "done",
        10,
        {
            "accuracy": 1,
            "correct": 10,
            "total": 10,
            "suggestion": {"explanation": "Tudo certo."},
            "confusion": {"labels": [], "rows": []},
            "errors": [],
            "error_count": 0,
        },
    )
    run.save()
    fragment = client.get(url).content.decode()
    assert "hx-trigger" not in fragment and "Tudo certo." in fragment


def test_admin_applies_the_suggested_thresholds(world, router):
    run = QualityRun.objects.create(
        organization=world.org_a,
        router=router,
        status="done",
        results={"suggestion": {"min_confidence": 0.45, "local_accept_threshold": 0.9}},
    )
    url = f"/roteadores/{router.pk}/qualidade/{run.pk}/aplicar/"
    assert world.client_for(world.manager).post(url).status_code == 403
    assert world.client_for(world.admin).post(url).status_code == 302
    router.refresh_from_db()
    assert (router.config["min_confidence"], router.config["local_accept_threshold"]) == (0.45, 0.9)


# --- the agent page's warning ---------------------------------------------------------------


def test_agent_page_warns_when_a_router_drives_the_agent(world, router, vendas):
    page = world.client_for(world.viewer).get(f"/agentes/{vendas.pk}/").content.decode()
    assert "Este agente é acionado pelo roteador «Atendimento»" in page
    other = factories.make_agent(world.org_a, "Sozinho")
    page = world.client_for(world.viewer).get(f"/agentes/{other.pk}/").content.decode()
    assert "acionado pelo roteador" not in page


def test_agent_page_has_no_warning_once_the_router_is_inactive(world, router, vendas):
    router.is_active = False
    router.save()
    page = world.client_for(world.admin).get(f"/agentes/{vendas.pk}/").content.decode()
    assert "acionado pelo roteador" not in page
