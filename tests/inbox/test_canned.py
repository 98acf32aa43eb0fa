"""Filling canned replies' variables (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from inbox.canned import canned_values, render_canned

VALUES = canned_values(
    contact_name="Ana Souza",
    contact_phone="5511988887777",
    member_name="Bruno",
    organization_name="Loja Demo",
)


def test_render_fills_every_known_variable():
    text = (
        "Olá, {{nome}}! Aqui é {{ atendente }}, da {{EMPRESA}}. ({{telefone}}, {{nome_completo}})"
    )
    assert render_canned(text, VALUES) == (
        "Olá, Ana! Aqui é Bruno, da Loja Demo. (5511988887777, Ana Souza)"
    )


def test_render_keeps_an_unknown_variable_as_typed():
    assert render_canned("Pedido {{pedido}} de {{nome}}", VALUES) == "Pedido {{pedido}} de Ana"


def test_a_contact_without_a_name_is_called_cliente():
    values = canned_values(
        contact_name="", contact_phone="1", member_name="B", organization_name="L"
    )
    assert render_canned("Oi, {{nome}}", values) == "Oi, cliente"


@given(st.text(alphabet=st.characters(blacklist_characters="{}"), max_size=200))
def test_text_without_braces_is_left_untouched(text):
    assert render_canned(text, VALUES) == text


@given(st.text(max_size=80))
def test_values_are_inserted_literally_never_expanded_again(name):
    values = canned_values(
        contact_name=name, contact_phone="1", member_name="B", organization_name="L"
    )
    first = name.split()[0] if name.strip() else "cliente"
    assert render_canned("{{nome}}", values) == first
