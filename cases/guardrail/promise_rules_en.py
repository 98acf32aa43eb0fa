"""English rules of the promise detector (models answer in English sometimes, and a promise
in English is a promise): the same policy as the pt-BR rules of ``promise_rules``, over the
English lexicon (``lexicon_en``). Take-backs: ``promise_scan._EN_TAKEBACK``."""

from __future__ import annotations

from .lexicon_en import (
    EN_ACTING_REST,
    EN_ASK_LEADS,
    EN_ASK_REST,
    EN_ESCALATED,
    EN_EXPECT_LEADS,
    EN_EXPECT_REST,
    EN_FORWARD_LEADS,
    EN_FORWARD_REST,
    EN_HANDS_LEADS,
    EN_HANDS_REST,
    EN_I_WE_REST,
    EN_I_WE_WILL,
    EN_INTERNALLY_LEADS,
    EN_INTERNALLY_REST,
    EN_LET_KNOW_LEADS,
    EN_LET_KNOW_REST,
    EN_PENDING_LEADS,
    EN_PENDING_REST,
    EN_PEOPLE_WORDS,
    EN_PERSON_REST,
    EN_TELL_LEADS,
    EN_TELL_REST,
    EN_THEY_REST,
    EN_THEY_WILL,
    EN_TICKET_LEADS,
    EN_TICKET_REST,
    EN_TOLD_REST,
    EN_WE_REST,
    EN_WE_WILL,
    EN_YOU_REST,
    EN_YOU_SHOULD,
    EN_YOU_WILL,
)
from .promise_rule_types import Branch, Rule

EN_RULES: tuple[Rule, ...] = (
    # Round 6, English: "our team will reach out", "I'll get back to you", "you'll hear from
    # us", "I've escalated this", "I've passed it on to the billing team", "I'll ask my
    # manager", "I've opened a ticket" (take-backs: ``promise_scan._EN_TAKEBACK``).
    Rule(
        "en_human_will_act",
        (
            Branch(EN_I_WE_WILL, EN_I_WE_REST),
            Branch(EN_WE_WILL, EN_WE_REST),
            Branch(EN_THEY_WILL, EN_THEY_REST),
            Branch(EN_PEOPLE_WORDS, EN_PERSON_REST),
            Branch((*EN_YOU_WILL, *EN_YOU_SHOULD), EN_YOU_REST),
        ),
    ),
    Rule("en_escalated", (Branch(EN_ESCALATED, ""),)),
    # Round 7: "expect a call from our team", "your claim is with our adjusters now".
    Rule("en_customer_will_hear", (Branch(EN_EXPECT_LEADS, EN_EXPECT_REST),)),
    Rule("en_pending_with_human", (Branch(EN_PENDING_LEADS, EN_PENDING_REST),)),
    Rule("en_forward_to_human", (Branch(EN_FORWARD_LEADS, EN_FORWARD_REST),)),
    Rule("en_ask_human", (Branch(EN_ASK_LEADS, EN_ASK_REST),)),
    Rule("en_open_ticket", (Branch(EN_TICKET_LEADS, EN_TICKET_REST),)),
    # Round 13: "the maintenance team has been notified", "I've informed our manager", "I've
    # let the team know", "I've flagged this internally": people told are people who will act.
    Rule(
        "en_human_was_told",
        (
            Branch(EN_PEOPLE_WORDS, EN_TOLD_REST),
            Branch(EN_TELL_LEADS, EN_TELL_REST),
            Branch(EN_LET_KNOW_LEADS, EN_LET_KNOW_REST),
            Branch(EN_INTERNALLY_LEADS, EN_INTERNALLY_REST),
        ),
    ),
    # "Our tech guys are already working on it", "your case is in the hands of our claims
    # department", "a technician is scheduled to visit you".
    Rule(
        "en_human_is_acting",
        (Branch(EN_PEOPLE_WORDS, EN_ACTING_REST), Branch(EN_HANDS_LEADS, EN_HANDS_REST)),
    ),
)
