"""The adversarial dialogues of ``dialogues.yaml``, each through the simulator webhook with
the offline classifier and with the scripted closed-schema classifier over HTTP."""

from __future__ import annotations

import pytest

from .harness import MODES, Dialogue, describe, load_suite, run_dialogue

SUITE = load_suite()
CASES = [(d, mode) for d in SUITE.dialogues for mode in MODES if mode in d.modes]

pytestmark = pytest.mark.django_db


def test_the_suite_has_at_least_forty_dialogues() -> None:
    assert len(SUITE.dialogues) >= 40


@pytest.mark.parametrize(("dialogue", "mode"), CASES, ids=[f"{d.id}-{m}" for d, m in CASES])
def test_dialogue_behaves_as_written(dialogue: Dialogue, mode: str) -> None:
    run = run_dialogue(dialogue, mode, SUITE)
    assert run.failures == [], describe(run)
