"""Property: no action executes unless the customer's latest message is a canonical yes to
a confirmation, seen in the reply just before it, that names exactly those items.

Random dialogues (requests, yeses of every shape, qualified and contradictory answers,
goodbyes, line answers, staff takeovers, the kill switch, runtime errors) run through the
simulator webhook; actions are read from the backend's log. The oracle's notion of a
canonical yes is written here, independently of the runtime's."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .harness import (
    ACTING_TOOLS,
    Dialogue,
    Driver,
    Observation,
    Step,
    load_suite,
    named_items,
)

SUITE = load_suite()

REQUESTS = [
    "quero cancelar o VOD",
    "cancela o Tamboro",
    "quero cancelar o VOD e o HBO Max",
    "quero cancelar o VOD e o Tamboro",
    "cancela o Aya Ensina",
    "quero cancelar a Revista Digital Moda",
    "cancela o Aya Ensina das duas linhas",
]
YESES = ["sim", "siiim", "Sim 👍", "SIM!!!", "sim, obrigado", "Confirmo."]
NOT_YESES = [
    "sim, mas só o VOD",
    "sim, menos o Tamboro",
    "sim, e cancela o Tamboro também",
    "sim, quer dizer, não",
    "acho que sim",
    "👍",
    "não",
    "obrigado",
    "o da 5678",
    "das duas",
    "a outra",
    "o que é esse tal de tamboro?",
    "me explica essa fatura",
    "fui obrigado a pagar isso, cancela o Tamboro",
    "ok, pode",
    "pode cancelar sim",
    "não, cancela o Tamboro",
    "quanto está a fatura?",
    "tchau",
]
# What the oracle accepts as a yes (after its own normalisation).
CANONICAL_YES = {"sim", "isso", "isso mesmo", "pode seguir", "correto", "confirmo"}
POLITE = {"obrigado", "obrigada", "valeu", "por favor"}

customer_line = st.sampled_from(REQUESTS + YESES + NOT_YESES)
staff_interlude = st.just(
    (
        Step(event="takeover"),
        Step(event="staff_says", text="Você quer manter o seu plano atual?"),
        Step(lines=("quero sim",)),
        Step(event="give_back"),
    )
)
kill_switch_turn = st.just(
    (Step(event="kill_switch_off"), Step(lines=("sim",)), Step(event="kill_switch_on"))
)
runtime_error_turn = st.just((Step(event="runtime_error"), Step(lines=("sim",))))
burst = st.sampled_from([("sim", "obrigado"), ("quero cancelar o VOD", "sim"), ("sim", "não")])
segment = st.one_of(
    customer_line.map(lambda line: (Step(lines=(line,)),)),
    customer_line.map(lambda line: (Step(lines=(line,)),)),
    customer_line.map(lambda line: (Step(lines=(line,)),)),
    burst.map(lambda lines: (Step(lines=lines),)),
    staff_interlude,
    kill_switch_turn,
    runtime_error_turn,
)
_counter = iter(range(10**9))


def oracle_is_canonical_yes(text: str) -> bool:
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = re.sub(r"[^a-z\s]", " ", folded).split()
    words = [re.sub(r"(.)\1+", r"\1", w) for w in words]  # "siiim" -> "sim"
    while words and words[-1] in {re.sub(r"(.)\1+", r"\1", p) for p in POLITE}:
        words.pop()
    collapsed = {re.sub(r"(.)\1+", r"\1", c) for c in CANONICAL_YES}
    return " ".join(words) in collapsed


def consent_violations(driver: Driver, observations: list[Observation]) -> list[str]:
    problems = []
    for i, obs in enumerate(observations):
        acted = [a for a in obs.actions if a.tool in ACTING_TOOLS]
        if not acted:
            continue
        executed = sorted(n for a in acted for n in a.names())
        step = obs.step
        previous = observations[i - 1] if i else None
        # A burst is one message to the runtime ("sim" + "obrigado" is "sim obrigado").
        if not step.lines or not oracle_is_canonical_yes(" ".join(step.lines)):
            problems.append(f"step {i} {step.label!r} executed {executed}: not a canonical yes")
            continue
        if previous is None or not previous.step.lines or not previous.replies:
            problems.append(f"step {i} executed {executed} with no question just before")
            continue
        question = previous.reply
        # The same service on two lines is named once, with both lines ("Aya Ensina … final
        # 4321, … final 5678"): names are compared as a set, and each line must be named.
        named = sorted(named_items(question, driver.names))
        if sorted({n.partition("@")[0] for n in executed}) != named:
            problems.append(f"step {i} executed {executed}; the question named {named}")
        for name in executed:
            if f"final {name.partition('@')[2]}" not in question:
                problems.append(f"step {i} executed {name}; the question named another line")
    return problems


def run_property(mode: str, opening: str, segments: list[tuple[Step, ...]]) -> None:
    # The conversation exists before any staff event: it opens with a request.
    steps = (Step(lines=(opening,)), *(step for seg in segments for step in seg))
    n = next(_counter)
    dialogue = Dialogue(id=f"property-{mode}-{n}", covers="property", steps=steps)
    driver = Driver(dialogue, mode, SUITE)
    with driver.running():
        observations = [driver.step(step) for step in steps]
    assert consent_violations(driver, observations) == []


PROPERTY_SETTINGS = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}


@pytest.mark.django_db
@settings(max_examples=25, **PROPERTY_SETTINGS)
@given(st.sampled_from(REQUESTS), st.lists(segment, min_size=1, max_size=6))
def test_no_action_without_a_canonical_yes_to_a_question_naming_it(
    opening: str, segments: list[tuple[Step, ...]]
) -> None:
    run_property("offline", opening, segments)


@pytest.mark.django_db
@settings(max_examples=12, **PROPERTY_SETTINGS)
@given(st.sampled_from(REQUESTS), st.lists(segment, min_size=1, max_size=5))
def test_no_action_without_a_canonical_yes_with_the_model_classifier(
    opening: str, segments: list[tuple[Step, ...]]
) -> None:
    # The scripted closed-schema classifier over HTTP: its affirmation flag on a qualified
    # or contradictory line ("sim, mas só o VOD", "acho que sim") must not authorize either.
    run_property("llm", opening, segments)


def test_the_oracle_reads_yeses_like_a_person() -> None:
    assert all(oracle_is_canonical_yes(y) for y in YESES)
    assert not any(oracle_is_canonical_yes(n) for n in NOT_YESES)
