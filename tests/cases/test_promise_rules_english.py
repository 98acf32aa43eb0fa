"""The English rules of the promise detector (round 6, ``en_*`` in ``promise_rules``).

Every message here was written for this test and is in no corpus or measurement set.
"""

from __future__ import annotations

import pytest

from cases.guardrail.promise import RULE_IDS, detect_rule_promise


@pytest.mark.parametrize(
    ("text", "rule_id"),
    [
        ("Our claims team will reach out to schedule the inspection.", "en_human_will_act"),
        ("Someone from the pharmacy will call you about the refill.", "en_human_will_act"),
        ("We\u2019ll get back to you as soon as the supplier answers.", "en_human_will_act"),
        ("She'll follow up with the signed copy.", "en_human_will_act"),
        ("You'll hear from our onboarding team this week.", "en_human_will_act"),
        ("You will be contacted by a specialist to book the visit.", "en_human_will_act"),
        ("I've escalated the delay to the regional office.", "en_escalated"),
        ("I'm escalating this to a senior agent.", "en_escalated"),
        ("I've passed your note on to the maintenance crew.", "en_forward_to_human"),
        ("I'll hand you over to one of our advisors.", "en_forward_to_human"),
        ("Let me check with my supervisor about the fee.", "en_ask_human"),
        ("I'll ask our billing team to resend the invoice.", "en_ask_human"),
        ("I've opened a support ticket for the broken gate.", "en_open_ticket"),
        ("Ok! Vou deixar anotado. Our installer will stop by on Friday.", "en_human_will_act"),
    ],
)
def test_english_commitment_of_a_person_is_found_by_the_rules(text: str, rule_id: str) -> None:
    match = detect_rule_promise(text)
    assert match is not None and match.rule_id == rule_id
    assert rule_id in RULE_IDS


@pytest.mark.parametrize(
    "text",
    [
        "If you'd like, our team will call you to go over the plans.",  # offer
        "Would you like our team to reach out?",  # question
        "Will someone call me before the delivery?",  # question
        "We won't contact you again about this promotion.",  # negation
        "Nobody from sales will call you, don't worry.",  # negation
        "Our team usually follows up within a week.",  # habit
        "Our support will reach out only in case the payment fails.",  # conditional
        "I'll get back to you in a moment with the total.",  # a stall inside the turn
        "I've forwarded the receipt to your email.",  # no person
        "I've opened the invoice and the total is $42.",  # no ticket
        "The office will be closed on Monday.",  # a closure, not an action
        "You'll receive an automatic confirmation email.",  # automatic
        "I'll have a look at your order right now.",  # the AI itself
    ],
)
def test_english_near_miss_is_not_taken_for_a_promise_by_the_rules(text: str) -> None:
    assert detect_rule_promise(text) is None
