"""Labelled phrases train the router's local stage, so writing them is configuring the
router: the admin's (DESIGN §6 "admin configures … routers", §10.5 "nothing is learned
without an admin's acceptance"; intent-router Task 7 ``ai.routers.manage: admin``).
Managers still read them and measure the router with them (a quality run is a test)."""

from __future__ import annotations

import json

import pytest

from routers.models import LabelledPhrase, QualityRun, Router

BASE = "/api/v1/ai/routers"


@pytest.fixture
def router(world, router):
    LabelledPhrase.objects.create(
        organization=world.org_a, router=router, text="quanto custa?", intent_name="vendas"
    )
    return router


def _stamp(router):
    return Router.objects.get(pk=router.pk).updated_at


def test_a_manager_may_read_but_not_replace_the_labelled_set_through_the_api(world, router):
    url = f"{BASE}/{router.pk}/labelled-phrases"
    body = json.dumps({"phrases": [{"text": "bom dia", "intent_name": "none"}]})
    stamp = _stamp(router)

    assert world.client_for(world.manager).get(url).status_code == 200
    refused = world.client_for(world.manager).put(url, data=body, content_type="application/json")

    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert list(LabelledPhrase.objects.values_list("text", flat=True)) == ["quanto custa?"]
    assert _stamp(router) == stamp  # nothing retrained
    done = world.client_for(world.admin).put(url, data=body, content_type="application/json")
    assert done.status_code == 200
    assert list(LabelledPhrase.objects.values_list("text", flat=True)) == ["bom dia"]


def test_a_manager_may_not_add_paste_or_delete_labelled_phrases_on_the_pages(world, router):
    client = world.client_for(world.manager)
    phrase = LabelledPhrase.objects.get()
    base = f"/roteadores/{router.pk}/qualidade"
    responses = [
        client.post(f"{base}/frases/", {"text": "o app travou", "intent_name": "suporte"}),
        client.post(
            f"{base}/frases/",
            {"text": "o app travou", "intent_name": "suporte"},
            HTTP_HX_REQUEST="true",
        ),
        client.post(f"{base}/colar/", {"lines": "meu sistema caiu;suporte"}),
        client.post(f"{base}/frases/{phrase.pk}/excluir/"),
    ]
    assert [r.status_code for r in responses] == [403, 403, 403, 403]
    assert list(LabelledPhrase.objects.values_list("text", "intent_name")) == [
        ("quanto custa?", "vendas")
    ]


def test_a_manager_sees_the_labelled_phrases_read_only_and_may_still_measure(
    world, router, django_capture_on_commit_callbacks
):
    client = world.client_for(world.manager)
    page = client.get(f"/roteadores/{router.pk}/qualidade/").content.decode()
    assert "quanto custa?" in page
    assert 'id="paste-form"' not in page and "/excluir/" not in page
    assert 'id="labels-admin-only"' in page

    panel = client.post(
        f"/roteadores/{router.pk}/testar/", {"message": "quanto custa?"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'id="test-intent"' in panel and 'id="label-intent"' not in panel

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/roteadores/{router.pk}/qualidade/rodar/")
    assert response.status_code == 302
    assert QualityRun.objects.get().status == "done"


def test_an_admin_gets_the_label_controls(world, router):
    client = world.client_for(world.admin)
    page = client.get(f"/roteadores/{router.pk}/qualidade/").content.decode()
    assert 'id="paste-form"' in page and "/excluir/" in page
    assert 'id="labels-admin-only"' not in page
    panel = client.post(
        f"/roteadores/{router.pk}/testar/", {"message": "quanto custa?"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert 'id="label-intent"' in panel
