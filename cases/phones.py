"""When two WhatsApp numbers are one (human-cases §9: a member answers from their staff
number). Pure: no Django.

WhatsApp's ``wa_id`` for many Brazilian mobiles lacks the ninth digit Brazil added in
2012-2016: a member registered as ``55 11 9 7777-6666`` writes in as ``551177776666``, and
one registered with 12 digits may come in with 13. For Brazil only (country code 55), the
two forms of a mobile are the same number: area code (two digits, no 0 in any Brazilian
area code) + ``9`` + eight digits starting 6-9, and area code + those eight digits.
Landlines (eight digits starting 2-5) never had the 9. Nothing else is ever equated: not
across area codes, countries, or any other digit.
"""

from __future__ import annotations

import re

# "55" + area code + the mobile 9 + eight digits starting 6-9, and the same without the 9.
_BR_MOBILE_WITH_9 = re.compile(r"55([1-9]{2})9([6-9][0-9]{7})")
_BR_MOBILE_WITHOUT_9 = re.compile(r"55([1-9]{2})([6-9][0-9]{7})")


def phone_variants(phone: str) -> frozenset[str]:
    """``phone`` (digits, with country and area code) and, for a Brazilian mobile, its other
    form (with or without the 9). Always contains ``phone`` itself."""
    with_9 = _BR_MOBILE_WITH_9.fullmatch(phone)
    if with_9:
        return frozenset({phone, f"55{with_9[1]}{with_9[2]}"})
    without_9 = _BR_MOBILE_WITHOUT_9.fullmatch(phone)
    if without_9:
        return frozenset({phone, f"55{without_9[1]}9{without_9[2]}"})
    return frozenset({phone})


def same_phone(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one WhatsApp number (symmetric)."""
    return b in phone_variants(a)
