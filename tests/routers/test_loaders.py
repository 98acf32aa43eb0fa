"""load_active_router (spec Task 2): the three loader tests, the defensive config, and the
members cache that only reloads when members change."""

from __future__ import annotations

import math

from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from routers.loaders import load_active_router, parse_router_config
from routers.models import Router, RouterMember
from tests import factories
from tests.routers.factories import SUPORTE, VENDAS, make_router


def test_load_active_router_returns_none_when_the_channel_has_no_active_router(world):
    assert load_active_router(world.channel_a) is None
    inactive = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    Router.objects.filter(pk=inactive.pk).update(is_active=False)
    assert load_active_router(world.channel_a) is None


def test_load_active_router_builds_members_ordered_by_position(world):
    vendas = factories.make_agent(world.org_a, "Vendas")
    fallback = factories.make_agent(world.org_a, "Reserva")
    router = make_router(
        world.channel_a,
        [(world.agent_a, SUPORTE), (vendas, VENDAS)],
        fallback=fallback,
    )
    # stored out of order: position decides, not insertion or name
    RouterMember.objects.filter(router=router, intent_name="suporte").update(position=0)
    RouterMember.objects.filter(router=router, intent_name="vendas").update(position=1)

    loaded = load_active_router(world.channel_a)

    assert loaded is not None
    assert loaded.id == router.pk
    assert loaded.classifier_model == "claude-haiku-4-5"
    assert loaded.sticky is True
    assert loaded.min_confidence == 0.6
    assert loaded.fallback_agent_id == fallback.pk
    assert [m.intent_name for m in loaded.members] == ["suporte", "vendas"]
    assert [m.agent_id for m in loaded.members] == [world.agent_a.pk, vendas.pk]
    assert loaded.members[0].examples == tuple(SUPORTE[2])


def test_load_active_router_with_malformed_config_falls_back_to_defaults(world):
    router = make_router(world.channel_a, [])
    Router.objects.filter(pk=router.pk).update(
        config={"min_confidence": "muito", "sticky": "sim", "classifier_model": ""}
    )
    loaded = load_active_router(world.channel_a)
    assert loaded is not None
    assert loaded.classifier_model == "claude-haiku-4-5"
    assert loaded.sticky is True
    assert loaded.min_confidence == 0.6
    assert loaded.local_accept_threshold == 0.9
    assert loaded.members == ()


def test_load_active_router_never_reads_another_organizations_router(world):
    make_router(world.channel_b, [(world.agent_b, SUPORTE)])
    assert load_active_router(world.channel_a) is None


def test_members_are_read_once_then_cached_until_they_change(world):
    router = make_router(world.channel_a, [(world.agent_a, SUPORTE)])
    load_active_router(world.channel_a)  # warm the cache

    with CaptureQueriesContext(connection) as warm:
        loaded = load_active_router(world.channel_a)
    assert len(warm.captured_queries) == 1  # the router row, members stamped by subqueries
    assert [m.intent_name for m in loaded.members] == ["suporte"]

    member = RouterMember.objects.get(router=router)
    member.intent_description = "Problemas técnicos de qualquer tipo."
    member.save()
    with CaptureQueriesContext(connection) as changed:
        reloaded = load_active_router(world.channel_a)
    assert len(changed.captured_queries) == 3  # stamp changed: members and phrases read again
    assert reloaded.members[0].intent_description == "Problemas técnicos de qualquer tipo."

    member.delete()
    assert load_active_router(world.channel_a).members == ()


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.dictionaries(
        st.sampled_from(
            ["classifier_model", "sticky", "min_confidence", "local_accept_threshold", "x"]
        ),
        json_values,
    )
    | json_values
)
def test_any_config_json_parses_to_a_usable_config(raw):
    config = parse_router_config(raw)
    assert isinstance(config.classifier_model, str) and config.classifier_model.strip()
    assert isinstance(config.sticky, bool)
    for value in (config.min_confidence, config.local_accept_threshold):
        assert math.isfinite(value) and 0.0 <= value <= 1.0


def test_well_formed_config_is_kept_as_given():
    config = parse_router_config(
        {
            "classifier_model": "claude-sonnet-4-5",
            "sticky": False,
            "min_confidence": 0.75,
            "local_accept_threshold": 0.9,
        }
    )
    assert config.as_json() == {
        "classifier_model": "claude-sonnet-4-5",
        "sticky": False,
        "min_confidence": 0.75,
        "local_accept_threshold": 0.9,
    }


def test_local_classifier_is_trained_once_per_set_of_members(world, monkeypatch):
    from conversation.llm import local_classifier
    from routers.classification import local_classifier_for

    trained: list[int] = []
    original = local_classifier.LocalClassifier.train

    def counting(labelled, config=None):
        trained.append(len(labelled))
        return original(labelled, config)

    monkeypatch.setattr(local_classifier.LocalClassifier, "train", counting)
    router = make_router(
        world.channel_a,
        [(world.agent_a, SUPORTE)],
        name="Treino único",
    )
    RouterMember.objects.filter(router=router).update(intent_name="suporte_unico")
    first = local_classifier_for(load_active_router(world.channel_a).intent_options())
    again = local_classifier_for(load_active_router(world.channel_a).intent_options())
    assert again is first and trained == [1]

    member = RouterMember.objects.get(router=router)
    member.examples = [*member.examples, "a tela ficou preta"]
    member.save()
    changed = local_classifier_for(load_active_router(world.channel_a).intent_options())
    assert changed is not first and trained == [1, 1]
