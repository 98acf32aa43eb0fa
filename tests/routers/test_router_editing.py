"""The router page as two admins and a demanding one use it: a save over someone else's
newer one is refused (not a silent lost update), a renamed intent keeps what the router
learned for it, the page's queries do not grow with its intents, and a phrase that
cannot be saved says why."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import AuditLog
from routers import services
from routers.classification.phrase import Phrase
from routers.loaders import load_router
from routers.models import LabelledPhrase, Router, RouterMember, RouterSuggestion
from routers.services import MemberSpec
from tests import factories
from tests.routers.factories import (
    FINANCEIRO,
    SUPORTE,
    VENDAS,
    data_queries,
    formset_data,
    make_router,
    router_data,
)


def _rows(world, vendas, *, names=("vendas", "suporte")):
    """The page's two intent rows as loaded, under ``names``."""
    return [
        {
            "agent": str(vendas.pk),
            "intent_name": names[0],
            "intent_description": VENDAS[1],
            "examples": "\n".join(VENDAS[2]),
        },
        {
            "agent": str(world.agent_a.pk),
            "intent_name": names[1],
            "intent_description": SUPORTE[1],
            "examples": "\n".join(SUPORTE[2]),
        },
    ]


def _version(page: str) -> str:
    match = re.search(r'name="version" value="([0-9a-f]+)"', page)
    assert match, "the page carries the version it shows"
    return match.group(1)


# --- concurrent edits ---------------------------------------------------------------------


def test_a_save_over_a_router_changed_since_the_page_loaded_is_refused(world, router, vendas):
    client = world.client_for(world.admin)
    seen = _version(client.get(f"/roteadores/{router.pk}/").content.decode())
    # Meanwhile another admin adds an intent.
    financeiro = factories.make_agent(world.org_a, "Financeiro")
    members = [
        MemberSpec(m.agent, m.intent_name, m.intent_description, tuple(m.examples))
        for m in RouterMember.objects.filter(router=router).order_by("position")
    ]
    members.append(MemberSpec(financeiro, *FINANCEIRO[:2], tuple(FINANCEIRO[2])))
    services.router_members_replace(router=router, actor=world.manager, members=members)

    data = {
        **router_data(world, name="Geral", version=seen),
        **formset_data(_rows(world, vendas), initial=2),
    }
    response = client.post(f"/roteadores/{router.pk}/", data)

    assert response.status_code == 200
    assert "Outra pessoa salvou este roteador enquanto você editava" in response.content.decode()
    router.refresh_from_db()
    assert router.name == "Atendimento"
    assert list(
        RouterMember.objects.filter(router=router).values_list("intent_name", flat=True)
    ) == ["vendas", "suporte", "financeiro"]

    # Reloaded, the page shows the new version and saves.
    fresh = _version(client.get(f"/roteadores/{router.pk}/").content.decode())
    assert fresh != seen
    rows = [*_rows(world, vendas)]
    rows.append(
        {
            "agent": str(financeiro.pk),
            "intent_name": "financeiro",
            "intent_description": FINANCEIRO[1],
            "examples": "\n".join(FINANCEIRO[2]),
        }
    )
    data = {**router_data(world, name="Geral", version=fresh), **formset_data(rows, initial=3)}
    assert client.post(f"/roteadores/{router.pk}/", data).status_code == 302
    router.refresh_from_db()
    assert router.name == "Geral"
    assert RouterMember.objects.filter(router=router).count() == 3


def test_thresholds_applied_from_the_quality_page_are_not_undone_by_an_open_edit_page(
    world, router, vendas
):
    client = world.client_for(world.admin)
    seen = _version(client.get(f"/roteadores/{router.pk}/").content.decode())
    services.router_update(router=router, actor=world.admin, config={"min_confidence": 0.45})

    data = {**router_data(world, version=seen), **formset_data(_rows(world, vendas), initial=2)}
    response = client.post(f"/roteadores/{router.pk}/", data)

    assert response.status_code == 200
    assert Router.objects.get(pk=router.pk).config["min_confidence"] == 0.45


def test_a_new_phrase_or_suggestion_does_not_make_the_open_page_stale(world, router, vendas):
    client = world.client_for(world.admin)
    seen = _version(client.get(f"/roteadores/{router.pk}/").content.decode())
    services.labelled_phrases_add(router=router, actor=world.admin, phrases=[("oi", "none")])

    data = {
        **router_data(world, name="Geral", version=seen),
        **formset_data(_rows(world, vendas), initial=2),
    }
    assert client.post(f"/roteadores/{router.pk}/", data).status_code == 302
    assert Router.objects.get(pk=router.pk).name == "Geral"


# --- renaming an intent -------------------------------------------------------------------


def test_renaming_an_intent_takes_its_labelled_phrases_and_suggestions_along(world, router, vendas):
    services.labelled_phrases_add(
        router=router,
        actor=world.admin,
        phrases=[("quanto fica a mensalidade?", "vendas"), ("o app fechou", "suporte")],
    )
    pending = services.suggestion_record(router=router, text="tem boleto?", intent_name="vendas")
    decided = services.suggestion_record(router=router, text="é caro?", intent_name="vendas")
    assert pending is not None and decided is not None
    services.suggestion_reject(suggestion=decided, actor=world.admin)
    client = world.client_for(world.admin)

    # The page's first row, shown as "vendas", now says "comercial".
    rows = _rows(world, vendas, names=("comercial", "suporte"))
    data = {**router_data(world), **formset_data(rows, initial=2)}
    assert client.post(f"/roteadores/{router.pk}/", data).status_code == 302

    assert dict(LabelledPhrase.objects.values_list("text", "intent_name")) == {
        "quanto fica a mensalidade?": "comercial",
        "o app fechou": "suporte",
    }
    assert RouterSuggestion.objects.get(pk=pending.pk).intent_name == "comercial"
    assert RouterSuggestion.objects.get(pk=decided.pk).intent_name == "vendas"  # history
    taught = load_router(Router.objects.get(pk=router.pk)).phrases
    assert Phrase("quanto fica a mensalidade?", "comercial") in taught
    audit = AuditLog.objects.get(action="router.members_replace")
    assert audit.diff["renamed"] == {"vendas": "comercial"}


def test_two_intents_may_swap_names_and_their_phrases_follow(world, router, vendas):
    services.labelled_phrases_add(
        router=router,
        actor=world.admin,
        phrases=[("quanto custa o anual?", "vendas"), ("o app fechou", "suporte")],
    )
    client = world.client_for(world.admin)

    rows = _rows(world, vendas, names=("suporte", "vendas"))
    data = {**router_data(world), **formset_data(rows, initial=2)}
    assert client.post(f"/roteadores/{router.pk}/", data).status_code == 302

    assert dict(LabelledPhrase.objects.values_list("text", "intent_name")) == {
        "quanto custa o anual?": "suporte",
        "o app fechou": "vendas",
    }


# --- queries and messages -----------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "admin"])
def test_the_edit_page_reads_the_same_queries_for_any_number_of_intents(world, role):
    def page_queries(intents: int) -> list[str]:
        channel = factories.make_channel(world.org_a)
        agents = [factories.make_agent(world.org_a, f"Agente {i}") for i in range(intents)]
        router = make_router(
            channel, [(a, (f"intent{i}", "x", ["y"])) for i, a in enumerate(agents)]
        )
        client = world.client_for(getattr(world, role))
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(f"/roteadores/{router.pk}/").status_code == 200
        return data_queries(ctx)

    one, eight = page_queries(1), page_queries(8)
    # session · user · membership · router · its intents · the organization's agents (once,
    # for every intent row and the new-row template) · pending suggestions · their count ·
    # workspace memberships · channels · fallback agents
    assert len(one) == len(eight) == 11, "\n".join(eight)


def test_a_phrase_that_cannot_be_saved_says_why(world, router):
    client = world.client_for(world.admin)
    url = f"/roteadores/{router.pk}/qualidade/frases/"

    unknown = client.post(
        url, {"text": "o boleto venceu", "intent_name": "financeiro"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    too_long = client.post(
        url, {"text": "x" * 501, "intent_name": "vendas"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    page = client.post(url, {"text": "oi", "intent_name": ""}, follow=True).content.decode()

    assert "A intenção «financeiro» não existe neste roteador." in unknown
    assert "500 caracteres" in too_long
    assert "Não foi possível guardar a frase. Escolha a intenção certa." in page
    assert not LabelledPhrase.objects.exists()
