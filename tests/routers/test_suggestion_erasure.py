"""Erasing a contact (LGPD) leaves none of their words in the router's suggestions: a
suggestion is a customer's message offered for learning, tied to its conversation."""

from __future__ import annotations

from typing import Any

import pytest

from conversation.privacy import contact_erase
from routers.models import LabelledPhrase, Router, RouterSuggestion
from tests import factories

pytestmark = pytest.mark.django_db

WORDS = "quero cancelar, moro na Rua das Flores 42"


def _suggest(router: Router, conversation: Any, text: str, **fields: Any) -> RouterSuggestion:
    return RouterSuggestion.objects.create(
        organization=router.organization,
        router=router,
        text=text,
        intent_name="cancelamento",
        conversation=conversation,
        **fields,
    )


def test_erasing_a_contact_deletes_the_suggestions_taken_from_their_conversations(world):
    router = Router.objects.create(
        organization=world.org_a, name="Atendimento", channel=world.channel_a, config={}
    )
    erased = factories.make_conversation(world.channel_a, phone="5511912340001")
    other = factories.make_conversation(world.channel_a, phone="5511912340002")
    _suggest(router, erased, WORDS)
    _suggest(router, erased, "e a segunda via?", status="rejected")
    kept = _suggest(router, other, "quero trocar o plano")
    taught = LabelledPhrase.objects.create(
        organization=world.org_a,
        router=router,
        text="quero cancelar",
        intent_name="cancelamento",
    )

    contact_erase(contact=erased.contact, actor=world.admin)

    assert list(RouterSuggestion.objects.values_list("pk", flat=True)) == [kept.pk]
    # An accepted phrase is the admin's training data, tied to no conversation: it stays.
    assert LabelledPhrase.objects.filter(pk=taught.pk).exists()
