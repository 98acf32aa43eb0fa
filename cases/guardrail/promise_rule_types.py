"""The shape of a promise rule (``promise_rules``, ``promise_rules_en``): branches that
start at a literal lead, and named tail groups reported as the rule's id."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import WORD_END, alt


@dataclass(frozen=True, slots=True)
class Branch:
    leads: tuple[str, ...]  # literal folded phrases, words separated by single spaces
    rest: str  # regex that must follow the lead
    before: str = ""  # extra zero-width assertion placed before the lead

    def regex(self) -> str:
        """The branch as one pattern: a lead at a word start, then ``rest``."""
        return rf"(?<![a-z0-9]){self.before}{alt(self.leads)}{WORD_END}(?:{self.rest})"


@dataclass(frozen=True, slots=True)
class Rule:
    rule_id: str  # reported when no tail group matched
    branches: tuple[Branch, ...]
    tails: tuple[str, ...] = ()  # ids of named tail groups, reported instead of rule_id
    # Words of which at least one must occur in the message for the rule to match at all
    # (beyond its lead). Empty: no such shortcut. Only a speed-up: the tests compare the
    # detector with a brute-force scan that ignores it.
    needs: frozenset[str] = frozenset()


TOKEN = re.compile(r"[a-z0-9]+")


def first_token(lead: str) -> str:
    return TOKEN.findall(lead)[0]


def first_tokens(phrases: tuple[str, ...]) -> frozenset[str]:
    return frozenset(first_token(phrase) for phrase in phrases)


def tail(rule_id: str, pattern: str) -> str:
    return f"(?P<{rule_id}>{pattern})"
