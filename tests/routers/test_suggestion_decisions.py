"""A suggestion is decided once: a double click, or two admins at the same time, neither
learns a phrase twice nor learns one that was rejected (a conditional claim, CONVENTIONS
§9); the second click is told so, with the list as it is, never a 404 page."""

from __future__ import annotations

import pytest

from accounts.models import AuditLog
from routers import services
from routers.errors import SuggestionDecided
from routers.models import LabelledPhrase, Router, RouterSuggestion, SuggestionStatus
from tests import factories
from tests.routers.factories import make_router


@pytest.fixture
def suggestion(router):
    made = services.suggestion_record(router=router, text="aceita pix?", intent_name="vendas")
    assert made is not None
    return made


def _copy(suggestion):
    """The row as another request (or the second click) read it: still pending."""
    return RouterSuggestion.objects.get(pk=suggestion.pk)


def test_a_suggestion_rejected_meanwhile_is_never_learned(world, router, suggestion):
    stale = _copy(suggestion)
    services.suggestion_reject(suggestion=suggestion, actor=world.admin)
    stamp = Router.objects.get(pk=router.pk).updated_at

    with pytest.raises(SuggestionDecided):
        services.suggestion_accept(suggestion=stale, actor=world.manager)

    assert not LabelledPhrase.objects.exists()
    assert RouterSuggestion.objects.get().status == SuggestionStatus.REJECTED
    assert RouterSuggestion.objects.get().decided_by == world.admin
    assert Router.objects.get(pk=router.pk).updated_at == stamp  # nothing retrained
    assert not AuditLog.objects.filter(action="router.suggestion_accept").exists()


def test_accepting_twice_learns_once_with_the_first_label(world, suggestion):
    stale = _copy(suggestion)
    services.suggestion_accept(suggestion=suggestion, actor=world.admin)

    with pytest.raises(SuggestionDecided):
        services.suggestion_accept(suggestion=stale, actor=world.admin, intent_name="suporte")
    with pytest.raises(SuggestionDecided):
        services.suggestion_reject(suggestion=_copy(suggestion), actor=world.admin)

    assert list(LabelledPhrase.objects.values_list("text", "intent_name")) == [
        ("aceita pix?", "vendas")
    ]
    assert RouterSuggestion.objects.get().status == SuggestionStatus.ACCEPTED
    assert AuditLog.objects.filter(action__startswith="router.suggestion_a").count() == 1
    assert not AuditLog.objects.filter(action="router.suggestion_reject").exists()


def test_a_double_click_on_accept_answers_with_the_list_and_a_notice(world, router, suggestion):
    client = world.client_for(world.admin)
    url = f"/roteadores/{router.pk}/sugestoes/{suggestion.pk}/aceitar/"

    first = client.post(url, HTTP_HX_REQUEST="true")
    second = client.post(url, HTTP_HX_REQUEST="true")

    assert first.status_code == 200 and "Frase aceita" in first.content.decode()
    assert second.status_code == 200
    page = second.content.decode()
    assert page.lstrip().startswith('<section class="card" id="suggestions"')
    assert "Esta sugestão já tinha sido decidida; nada mudou." in page
    assert LabelledPhrase.objects.count() == 1
    assert AuditLog.objects.filter(action="router.suggestion_accept").count() == 1


def test_a_second_reject_without_htmx_goes_back_to_the_router_page(world, router, suggestion):
    client = world.client_for(world.admin)
    url = f"/roteadores/{router.pk}/sugestoes/{suggestion.pk}/recusar/"

    assert client.post(url).status_code == 302
    again = client.post(url, follow=True)

    assert again.status_code == 200
    assert "Esta sugestão já tinha sido decidida; nada mudou." in again.content.decode()
    assert AuditLog.objects.filter(action="router.suggestion_reject").count() == 1


def test_another_routers_suggestion_is_404_even_in_the_same_organization(world, router, suggestion):
    other = make_router(factories.make_channel(world.org_a), [], name="Outro")
    client = world.client_for(world.admin)
    for action in ("aceitar", "recusar"):
        url = f"/roteadores/{other.pk}/sugestoes/{suggestion.pk}/{action}/"
        assert client.post(url).status_code == 404
    assert RouterSuggestion.objects.get().status == SuggestionStatus.PENDING
