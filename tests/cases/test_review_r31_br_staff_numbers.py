"""Review r31: a Brazilian staff number with or without the mobile "9" (human-cases §9,
"responder pelo WhatsApp").

WhatsApp's ``wa_id`` for many Brazilian mobiles drops the ninth digit: a member who registered
``55 11 9 7777-6666`` writes in as ``55 11 7777-6666`` (12 digits), and one who registered the
12-digit form may come in with 13. Both are the same number, for Brazil only (country 55, a
two-digit area code, a mobile: eight digits starting 6-9 after the area code, or those with
the 9 before them). Nothing else is ever the same number: another area code, another country,
a landline (starting 2-5), any other digit."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from accounts.models import Membership
from cases import selectors, services
from cases.models import CaseEvent, CaseStatus
from cases.phones import phone_variants, same_phone
from cases.services.state_machine import InvalidCaseInput
from tests.cases.conftest import open_case, say
from tests.cases.test_staff_whatsapp import noticed, staff_replies

WITH_9 = "5511977776666"
WITHOUT_9 = "551177776666"


# --- the rule ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("5511977776666", "551177776666"),
        ("5521988887777", "552188887777"),
        ("5585961234567", "558561234567"),  # mobiles start 6-9 after the area code
        ("5599991234567", "559991234567"),  # area code 99, mobile starting 9
    ],
)
def test_a_brazilian_mobile_is_the_same_with_or_without_its_9(a, b):
    assert same_phone(a, b) and same_phone(b, a)
    assert phone_variants(a) == phone_variants(b) == {a, b}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("5511977776666", "552177776666"),  # another area code
        ("5511977776666", "5521977776666"),
        ("5511932345678", "551132345678"),  # a landline (2-5) never had a 9
        ("5511952345678", "551152345678"),
        ("5411977776666", "541177776666"),  # Argentina: not Brazil's rule
        ("15511977776666", "1551177776666"),  # a country code that only starts with 55
        ("5511977776666", "551177776667"),  # another subscriber
        ("5511977776666", "5511877776666"),  # an 8 is not the mobile 9
        ("5501977776666", "550177776666"),  # no area code has a 0
    ],
)
def test_other_numbers_are_never_the_same(a, b):
    assert not same_phone(a, b) and not same_phone(b, a)


@given(st.from_regex(r"[0-9]{8,15}", fullmatch=True), st.from_regex(r"[0-9]{8,15}", fullmatch=True))
def test_the_equivalence_is_symmetric(a, b):
    assert same_phone(a, b) == same_phone(b, a)
    assert same_phone(a, a)


def brazilian_mobile_pair(ddd: str, subscriber: str) -> tuple[str, str]:
    return f"55{ddd}9{subscriber}", f"55{ddd}{subscriber}"


DDD = st.from_regex(r"[1-9]{2}", fullmatch=True)
MOBILE = st.from_regex(r"[6-9][0-9]{7}", fullmatch=True)


@given(DDD, MOBILE)
def test_every_brazilian_mobile_matches_its_other_form(ddd, subscriber):
    with_9, without_9 = brazilian_mobile_pair(ddd, subscriber)
    assert same_phone(with_9, without_9) and same_phone(without_9, with_9)


@given(DDD, MOBILE, DDD, MOBILE, st.booleans(), st.booleans())
def test_two_numbers_that_differ_elsewhere_are_never_the_same(d1, s1, d2, s2, nine1, nine2):
    # Whatever form each is in, two mobiles are the same only when their area code and
    # their eight-digit subscriber number are both the same.
    assume((d1, s1) != (d2, s2))
    a = brazilian_mobile_pair(d1, s1)[0 if nine1 else 1]
    b = brazilian_mobile_pair(d2, s2)[0 if nine2 else 1]
    assert not same_phone(a, b)


@given(st.from_regex(r"[0-9]{8,15}", fullmatch=True), st.from_regex(r"[0-9]{8,15}", fullmatch=True))
def test_only_the_brazilian_mobile_9_ever_differs(a, b):
    # Two different numbers are the same only as a Brazilian mobile with and without its 9:
    # deleting the 9 after "55" + a two-digit area code gives the other, digit for digit.
    assume(a != b)
    if not same_phone(a, b):
        return
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    assert len(longer) == 13 and len(shorter) == 12
    assert longer.startswith("55") and longer[4] == "9" and longer[5] in "6789"
    assert "0" not in longer[2:4]
    assert longer[:4] + longer[5:] == shorter


# --- answering a case from WhatsApp ----------------------------------------------------------


@pytest.fixture
def member(cases_world):
    return Membership.objects.get(user=cases_world.agent)


@pytest.mark.parametrize(("registered", "writes_from"), [(WITH_9, WITHOUT_9), (WITHOUT_9, WITH_9)])
def test_a_member_answers_from_the_other_form_of_their_number(
    conversation, cases_world, member, registered, writes_from, django_capture_on_commit_callbacks
):
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=registered)
    case = open_case(conversation)

    say(
        cases_world.channel_a,
        f"#{case.short_id} 1 Reembolso feito",
        "s-1",
        django_capture_on_commit_callbacks,
        phone=writes_from,
    )

    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED
    answer = CaseEvent.objects.get(case=case, kind="human_replied")
    assert answer.actor_user_id == cases_world.agent.pk
    assert staff_replies(writes_from) == [
        f"Caso #{case.short_id} concluído. A IA vai contar ao cliente."
    ]


def test_an_answer_without_a_code_finds_the_notice_sent_to_the_other_form(
    conversation, cases_world, member, django_capture_on_commit_callbacks
):
    # The notice went to the number as registered (with the 9); the member's reply comes
    # from WhatsApp's 12-digit form: §9's "comando preso àquela resposta" still binds it.
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=WITH_9)
    case = open_case(conversation)
    noticed(case, phone=WITH_9)

    say(
        cases_world.channel_a,
        "2 o CPF do titular",
        "s-1",
        django_capture_on_commit_callbacks,
        phone=WITHOUT_9,
    )

    case.refresh_from_db()
    assert (case.status, case.lead_request) == (CaseStatus.AWAITING_LEAD, "o CPF do titular")


def test_another_area_code_is_a_customer_not_the_member(
    conversation, cases_world, member, django_capture_on_commit_callbacks
):
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=WITH_9)
    case = open_case(conversation)

    say(
        cases_world.channel_a,
        f"#{case.short_id} 1 Reembolso feito",
        "s-1",
        django_capture_on_commit_callbacks,
        phone="552177776666",  # same subscriber digits, Rio's area code
    )

    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_HUMAN
    assert not CaseEvent.objects.filter(case=case, kind="human_replied").exists()


def test_the_other_form_of_a_members_number_is_not_another_members(cases_world, member):
    # One number is one member's: otherwise a message from it would answer as either.
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=WITH_9)
    other = Membership.objects.get(user=cases_world.admin)

    with pytest.raises(InvalidCaseInput):
        services.staff_number_set(membership=other, actor=cases_world.admin, phone=WITHOUT_9)

    assert selectors.staff_number_owner(member.organization_id, WITHOUT_9) == member.pk
    # The member may switch their own number to the other form.
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=WITHOUT_9)
    assert selectors.staff_number_owner(member.organization_id, WITH_9) == member.pk


def test_the_staff_numbers_copy_knows_both_forms(cases_world, member):
    # The turn's "is this a staff number?" costs no query: the copy answers for both forms.
    services.staff_number_set(membership=member, actor=cases_world.admin, phone=WITH_9)
    member.organization.refresh_from_db()
    phones = selectors.staff_phones(member.organization)
    assert WITH_9 in phones and WITHOUT_9 in phones
    assert "552177776666" not in phones
