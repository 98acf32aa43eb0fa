"""The agent's model list and end-of-life dates come from the installed Anthropic SDK."""

from __future__ import annotations

from datetime import date

from anthropic._data import DEPRECATED_MODELS
from hypothesis import given
from hypothesis import strategies as st

from conversation.llm import catalog


def test_the_list_is_the_sdks_model_type_newest_first():
    models = catalog.anthropic_models()
    assert {"claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-5"} <= set(models)
    assert len(models) == len(set(models)) >= 10
    assert models.index("claude-sonnet-4-6") < models.index("claude-sonnet-4-5")


def test_every_sdk_deprecation_date_is_read():
    for model, when in DEPRECATED_MODELS.items():
        assert catalog.end_of_life(model) == catalog.parse_sdk_date(when) is not None, model
    assert catalog.end_of_life("claude-sonnet-4-5") == date(2026, 11, 30)
    assert catalog.end_of_life("claude-haiku-4-5") is None


def test_the_lifecycle_warns_near_and_past_the_end_of_life():
    model = "claude-sonnet-4-5"
    assert catalog.lifecycle(model, date(2026, 6, 1)).status == "active"
    near = catalog.lifecycle(model, date(2026, 10, 1))
    assert (near.status, near.end_of_life, near.warns) == ("near_eol", date(2026, 11, 30), True)
    assert catalog.lifecycle(model, date(2026, 11, 30)).status == "past_eol"
    assert not catalog.lifecycle("claude-haiku-4-5", date(2030, 1, 1)).warns


@given(st.dates(min_value=date(1900, 1, 1), max_value=date(2999, 12, 31)))
def test_sdk_and_iso_dates_parse_to_the_same_day(day):
    months = [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ]  # fmt: skip
    suffix = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}
    words = f"{months[day.month - 1]} {day.day}{suffix.get(day.day, 'th')}, {day.year}"
    assert catalog.parse_sdk_date(words) == day == catalog.parse_sdk_date(day.isoformat())


def test_text_that_is_no_date_parses_to_none():
    for text in ("", "soon", "Smarch 3rd, 2026", "February 30th, 2026", "2026-13-01"):
        assert catalog.parse_sdk_date(text) is None


def test_choosable_models_follow_the_enabled_list_and_drop_dead_models():
    today = date(2026, 12, 15)
    everything = dict(catalog.choosable_models({}, today))
    assert "claude-haiku-4-5" in everything and "claude-sonnet-4-5" not in everything
    restricted = {"llm": {"enabled_models": ["claude-haiku-4-5", "claude-sonnet-4-5"]}}
    assert [m for m, _ in catalog.choosable_models(restricted, today)] == ["claude-haiku-4-5"]
    kept = catalog.choosable_models(restricted, today, keep="claude-sonnet-4-5")
    assert {m: s.status for m, s in kept} == {
        "claude-haiku-4-5": "active",
        "claude-sonnet-4-5": "past_eol",
    }
    custom = catalog.choosable_models(restricted, today, keep="claude-interno-x")
    assert custom[0][0] == "claude-interno-x"
