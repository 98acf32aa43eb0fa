"""English vocabulary of the promise detector (round 6; see ``lexicon`` for the pt-BR one).

Agents answer in the customer's language and pt-en mixes are common. Runs on folded text.
"""

from __future__ import annotations

from .lexicon import WORD_END, alt

# Round 6. Only commitments that read the same in any context; conditionals, offers, habits,
# negations and questions are taken back by ``promise_scan`` (``_EN_TAKEBACK``).

EN_PEOPLE_WORDS: tuple[str, ...] = (
    *("team", "teams", "manager", "managers", "supervisor", "department", "staff"),
    *("colleague", "colleagues", "specialist", "specialists", "engineer", "engineers"),
    *("technician", "technicians", "agent", "agents", "support", "billing", "finance"),
    *("legal", "crew", "coordinator", "accountant", "advisor", "advisors", "consultant"),
    *("representative", "someone", "somebody", "doctor", "nurse", "vet", "recruiter"),
    *("installer", "desk", "office", "folks", "supervisors"),
    *("facilities", "maintenance", "housekeeping", "reception", "concierge", "management"),
    *("guys", "techs", "experts", "adjusters", "reps", "shift"),
    # Round 30: trades, and the business's own field people ("our driver", not a carrier's).
    *("mechanic", "mechanics", "plumber", "electrician", "locksmith", "tailor", "tuner"),
    *("photographer", "cleaner", "cleaners", "translator", "audiologist", "captain"),
    *("our driver", "our drivers", "our delivery guy", "our courier", "our guy"),
)
EN_PEOPLE = alt(EN_PEOPLE_WORDS)
_EN_ADV = r"(?:\s+(?:also|then|personally|directly|soon))?"
EN_CONTACT = (
    r"(?:get\s+back\s+to\s+(?:you|u)|come\s+back\s+to\s+(?:you|u)|reach\s+out|be\s+in\s+touch|follow\s+up|contact\s+you"
    r"|call\s+you|give\s+you\s+a\s+(?:call|ring)|update\s+you|keep\s+you\s+(?:posted|updated"
    r"|informed|in\s+the\s+loop))" + WORD_END
)
EN_ACT = (
    r"(?:look\s+into|investigate|review|check|call|visit|stop\s+by|swing\s+by|come\s+by"
    r"|send\s+you|email\s+you|text\s+you|message\s+you|fix|sort|handle|take\s+care\s+of"
    r"|reset|confirm|schedule|arrange|reschedule|rebook|prepare"
    # Round 30: "our mechanic will be at the marina tomorrow at 9", "he'll be there at 3".
    r"|be\s+(?:there|over|at\s+(?:your|the)\s+[a-z]+))" + WORD_END
)
_EN_NOT_NOW = (
    r"(?!\s+(?:in\s+a\s+(?:moment|minute|sec|second|bit)|right\s+(?:away|now)"
    r"|in\s+a\s+few\s+(?:minutes|seconds)))"
)


def _en_will(*subjects: str) -> tuple[str, ...]:
    return tuple(f"{s}{will}" for s in subjects for will in ("'ll", "\u2019ll", " will"))


EN_I_WE_WILL = _en_will("i", "we")
EN_WE_WILL = _en_will("we")
EN_THEY_WILL = (
    *_en_will("they", "he", "she"),
    # Round 7: "they're going to look at your claim".
    *(
        f"{s}{be} going to"
        for s, bes in (("they", ("'re", "\u2019re", " are")), ("he", ("'s", "\u2019s", " is")))
        for be in bes
    ),
    *(f"she{be} going to" for be in ("'s", "\u2019s", " is")),
)
EN_I_WE_REST = rf"{_EN_ADV}\s+{EN_CONTACT}{_EN_NOT_NOW}"
EN_WE_REST = rf"{_EN_ADV}\s+(?:look\s+into|investigate|review|sort|fix|handle|take\s+care\s+of)"
EN_THEY_REST = rf"{_EN_ADV}\s+(?:{EN_CONTACT}|{EN_ACT})"
# "someone from the clinic will call you", "our billing team will contact you".
EN_PERSON_REST = (
    r"(?:\s+(?:from|at|in|on|of)(?:\s+[a-z0-9'\u2019-]+){1,3}?)?\s+(?:will|shall)"
    rf"{_EN_ADV}\s+(?:{EN_CONTACT}|{EN_ACT})"
)
EN_YOU_WILL = _en_will("you")
EN_YOU_REST = (
    r"(?:\s+(?:soon|also))?\s+(?:hear\s+(?:back\s+)?from\s+(?:us|our|the|a|an|one|someone"
    r"|them|him|her)|be\s+(?:contacted|called)|get\s+a\s+(?:call|reply|response|visit)\s+from)"
    + WORD_END
)


def _en_past(*verbs: str) -> tuple[str, ...]:
    """'I've forwarded', 'I forwarded', 'we've forwarded', with both apostrophes."""
    return tuple(
        f"{s}{have}{v}"
        for v in verbs
        for s in ("i", "we")
        for have in ("'ve ", "\u2019ve ", " have ", " ")
    )


EN_ESCALATED = (
    *_en_past("escalated"),
    *(f"{w} escalate" for w in _en_will("i", "we")),
    *(f"{s} escalating" for s in ("i'm", "i\u2019m", "i am", "we're", "we\u2019re", "we are")),
    *("has been escalated", "have been escalated", "was escalated"),
)
EN_FORWARD_LEADS = (
    *_en_past("forwarded", "passed", "handed", "sent"),
    *(f"{w} {v}" for w in _en_will("i", "we") for v in ("forward", "pass", "hand")),
    # Round 7, the passive hand-over still pending: "your request has been sent to our
    # approvals team", "your case has been assigned to a specialist".
    *(
        f"{aux} been {v}"
        for aux in ("has", "have")
        for v in ("sent", "forwarded", "passed", "handed", "assigned", "referred", "routed")
    ),
)
EN_FORWARD_REST = (
    r"(?:\s+[a-z0-9'\u2019-]+){0,4}?\s+(?:on\s+|over\s+)?to\s+(?:our|the|my|a|an|one\s+of\s+our)"
    rf"(?:\s+[a-z-]+){{0,2}}?\s+{EN_PEOPLE}{WORD_END}"
)
EN_ASK_LEADS = (
    *(f"{w} {v}" for w in _en_will("i", "we") for v in ("ask", "check with", "loop in", "have")),
    *("let me check with", "let me ask", "let me loop in"),
)
EN_ASK_REST = (
    r"\s+(?:(?:my|our|the|a|an|one\s+of\s+(?:our|the|my))(?:\s+[a-z-]+){0,2}?\s+)?"
    rf"{EN_PEOPLE}{WORD_END}"
)
EN_TICKET_LEADS = (
    *_en_past("opened", "raised", "filed", "logged", "created"),
    *(f"{w} {v}" for w in _en_will("i", "we") for v in ("open", "raise", "file", "log")),
)
EN_TICKET_REST = (
    r"\s+(?:a|an|the)(?:\s+[a-z-]+){0,2}?\s+(?:ticket|support\s+request|case)"
    + WORD_END
    + r"(?!\s+file)"
)
# Round 7. "Expect a call from our retention team", "you can expect a reply from the legal
# department", "you should receive an email from our recruiter".
EN_EXPECT_LEADS = (
    "expect",
    *(f"you {m}" for m in ("can expect", "should expect", "should receive", "should get")),
    *(f"you{will} {v}" for will in ("'ll", "\u2019ll", " will") for v in ("get", "receive")),
)
EN_EXPECT_REST = (
    r"(?:\s+(?:a|an|the))?(?:\s+[a-z-]+){0,2}?\s+(?:call|email|e-mail|reply|response|update"
    r"|visit|message|text|answer)\s+from\s+(?:our|the|a|an|one\s+of\s+our|your)"
    rf"(?:\s+[a-z-]+){{0,2}}?\s+{EN_PEOPLE}{WORD_END}"
)
# "your claim is with our adjusters now", "your request is with the finance team now".
EN_PENDING_LEADS = ("is with", "is now with", "are with", "are now with", "is sitting with")
EN_PENDING_REST = (
    r"\s+(?:our|the|my|a|an|one\s+of\s+our)(?:\s+[a-z-]+){0,2}?\s+"
    rf"{EN_PEOPLE}{WORD_END}(?:\s+now|\s*,?\s+(?:waiting|awaiting|who|for|to\s+(?:review|approve)))"
)

# Round 13. People already told, so they will act: "the maintenance team has been notified",
# "I've informed our manager", "I've let the team know", "I've flagged this internally".
_EN_TOLD = r"(?:notified|alerted|informed|told|looped\s+in|made\s+aware)"
EN_TOLD_REST = (
    r"(?:\s+[a-z-]+){0,2}?\s+(?:has|have)(?:\s+(?:already|just|also))?\s+been\s+"
    + _EN_TOLD
    + WORD_END
)
EN_TELL_LEADS = _en_past("notified", "alerted", "informed", "told", "looped in", "flagged")
EN_TELL_REST = (
    r"(?:\s+(?:this|it|that|your\s+[a-z-]+)\s+to)?"
    rf"\s+(?:our|the|my|a|an|one\s+of\s+our)(?:\s+[a-z-]+){{0,2}}?\s+{EN_PEOPLE}{WORD_END}"
)
# Not a bare "I let": "Should I let the team know?" asks.
EN_LET_KNOW_LEADS = tuple(
    f"{s}{have}let" for s in ("i", "we") for have in ("'ve ", "\u2019ve ", " have ", " just ")
)
EN_LET_KNOW_REST = rf"\s+(?:our|the|my)(?:\s+[a-z-]+){{0,2}}?\s+{EN_PEOPLE}\s+know{WORD_END}"
EN_INTERNALLY_LEADS = _en_past("flagged", "raised", "reported", "escalated", "logged")
EN_INTERNALLY_REST = r"\s+(?:this|it|that|the\s+issue|your\s+[a-z-]+)\s+internally" + WORD_END
# "You should hear from us by Friday" (the "you'll" form is ``EN_YOU_WILL``).
EN_YOU_SHOULD = ("you should", "you should also", "you should soon")
# "Our tech guys are already working on your connection", "the billing team is looking into
# it", "a technician is scheduled to visit you tomorrow".
EN_ACTING_REST = (
    r"(?:\s+(?:from|at|in|on|of)(?:\s+[a-z0-9'\u2019-]+){1,3}?)?\s+(?:is|are)"
    r"(?:\s+(?:already|currently|now|actively))?\s+(?:working\s+on|looking\s+into"
    r"|investigating|reviewing|handling|dealing\s+with|checking\s+on|on\s+it"
    r"|(?:scheduled|booked|due|set)\s+to\s+(?:visit|come|call|stop\s+by|swing\s+by|contact)"
    # Round 30: "our delivery guy is on his way to your office".
    r"|on\s+(?:his|her|their|the)\s+way)" + WORD_END
)
# "Your case is now in the hands of our claims department."
EN_HANDS_LEADS = ("in the hands of", "in the capable hands of")
EN_HANDS_REST = rf"\s+(?:our|the|my|one\s+of\s+our)(?:\s+[a-z-]+){{0,2}}?\s+{EN_PEOPLE}{WORD_END}"
