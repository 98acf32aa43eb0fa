"""Input and output serializers of the cases API: each API view has its own."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.api_views import StrictInput, envelope
from accounts.models import Membership, display_name
from cases import selectors
from cases.models import Case, CaseEvent, CaseStatus, HumanAction
from cases.services.assignment import ASSIGNABLE_ROLE


class ContactOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    phone = serializers.CharField()


class CaseMemberOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class CaseListItemOutput(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField(
        help_text="awaiting_human | awaiting_lead | resolved | escalated | cancelled"
    )
    status_label = serializers.SerializerMethodField()
    title = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # the case's origin field
    lead_unresponsive = serializers.BooleanField()
    attention = serializers.CharField(
        help_text="'' | lead_unresponsive | lead_answered | relay_not_delivered: why the case "
        "is back with the team"
    )
    followup_attempts = serializers.IntegerField()
    waiting_since = serializers.DateTimeField()
    opened_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField(allow_null=True)
    conversation_id = serializers.UUIDField()
    contact = serializers.SerializerMethodField()
    assigned_to = serializers.SerializerMethodField()

    def get_status_label(self, case: Case) -> str:
        return str(CaseStatus(case.status).label)

    @extend_schema_field(CaseMemberOutput(allow_null=True))
    def get_assigned_to(self, case: Case) -> dict[str, Any] | None:
        user = case.assigned_to
        if user is None:
            return None
        return {"id": user.pk, "name": display_name(user)}

    @extend_schema_field(ContactOutput(allow_null=True))
    def get_contact(self, case: Case) -> dict[str, Any] | None:
        lead = case.lead
        if lead is None:
            return None
        return {"id": str(lead.pk), "name": lead.name, "phone": lead.phone}


class CaseEventOutput(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.CharField()
    actor_kind = serializers.CharField()
    actor_user_id = serializers.IntegerField(allow_null=True)
    human_action = serializers.CharField()
    body = serializers.CharField()
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()


class CaseDetailOutput(CaseListItemOutput):
    summary = serializers.CharField()
    blocker = serializers.CharField()
    lead_request = serializers.CharField()
    context_snapshot = serializers.JSONField()
    timeline = serializers.SerializerMethodField()

    def get_timeline(self, case: Case) -> list[dict[str, Any]]:
        events: list[CaseEvent] = self.context.get("events", [])
        return CaseEventOutput(events, many=True).data  # type: ignore[return-value]


class CaseListData(serializers.Serializer):
    cases = CaseListItemOutput(many=True)
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()


CaseListResponse = envelope("CaseListResponse", CaseListData)
CaseDetailResponse = envelope("CaseDetailResponse", CaseDetailOutput)


# The list's query string. Not strict (a proxy's or a client's cache-buster is harmless
# there); every bad value is named in one 422, like a body's. ``page`` goes through
# IntegerField, not ``str.isdigit`` ("²" is a digit int() refuses: it was a 500). A comment:
# the schema would show a docstring as the parameters' description.
class CaseListQuery(serializers.Serializer):
    estado = serializers.ChoiceField(
        choices=list(selectors.FILTERS),
        default=selectors.DEFAULT_FILTER,
        help_text="Filtro (padrão: abertos).",
    )
    resp = serializers.ChoiceField(
        choices=list(selectors.ASSIGNEE_FILTERS),
        default=selectors.DEFAULT_ASSIGNEE_FILTER,
        help_text="Responsável: todas (padrão), minhas, sem-responsavel.",
    )
    page = serializers.IntegerField(min_value=1, default=1, help_text="Página, a partir de 1.")


# A field the input does not know is refused, not ignored (a typo must not pass). A
# comment, not a docstring: the schema would show it as every input's description.
class CaseReplyInput(StrictInput):
    action = serializers.ChoiceField(choices=HumanAction.values)
    text = serializers.CharField(max_length=4000, trim_whitespace=True)


class CaseAssignInput(StrictInput):
    """``{"assignee_id": <user id>}`` makes a member responsible; ``null`` leaves it to the team."""

    assignee_id = serializers.IntegerField(allow_null=True)

    def validate_assignee_id(self, value: int | None) -> Any:
        # The user, when a member of ``context["organization_id"]`` who answers cases. One
        # message for "no such user", "another organization's" and "a viewer": no probing of
        # other organizations' users. The service checks it again under the case's lock.
        if value is None:
            return None
        membership = (
            Membership.objects.select_related("user")
            .filter(
                organization_id=self.context["organization_id"],
                user_id=value,
                user__is_active=True,  # a deactivated account answers nothing
            )
            .first()
        )
        if membership is None or not membership.has_role(ASSIGNABLE_ROLE):
            raise serializers.ValidationError(_("Escolha um atendente desta organização."))
        return membership.user
