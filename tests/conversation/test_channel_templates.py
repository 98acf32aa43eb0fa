"""``ChannelSession.template_for``: the one lookup of a channel's approved templates, used by
case follow-ups (``cases.selectors.follow_up_template``) and staff notices
(``cases.notifications``)."""

from __future__ import annotations

from conversation.models import ChannelSession


def channel(*templates: object) -> ChannelSession:
    return ChannelSession(name="c", provider="meta", templates=list(templates))


def test_template_for_returns_the_first_named_template_of_the_purpose() -> None:
    c = channel(
        {"name": "aviso_equipe", "purpose": "case_notice"},
        {"name": "retomada", "language": "pt_BR", "purpose": "follow_up"},
        {"name": "retomada_2", "purpose": "follow_up"},
    )
    assert c.template_for("follow_up") == "retomada"
    assert c.template_for("case_notice") == "aviso_equipe"


def test_template_for_skips_malformed_entries_and_blank_names() -> None:
    c = channel(
        "follow_up",
        ["name", "purpose"],
        {"purpose": "follow_up"},
        {"name": "   ", "purpose": "follow_up"},
        {"name": " retomada ", "purpose": "follow_up"},
    )
    assert c.template_for("follow_up") == "retomada"


def test_template_for_is_empty_without_a_template_of_the_purpose() -> None:
    assert channel().template_for("follow_up") == ""
    assert ChannelSession(name="c", provider="meta", templates=None).template_for("x") == ""
    assert channel({"name": "retomada", "purpose": "follow_up"}).template_for("case_notice") == ""
