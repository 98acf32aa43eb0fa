"""API serializers: inputs only translate JSON into domain values (agents and channels of
the caller's organization), outputs only shape responses. Never one for both."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.api_views import StrictInput, envelope
from conversation.models import Agent, ChannelSession
from routers import selectors
from routers.classification import NONE_INTENT
from routers.errors import unknown_intent
from routers.loaders import parse_router_config
from routers.quality import MAX_PHRASE_CHARS
from routers.services import (
    MAX_EXAMPLE_CHARS,
    MAX_EXAMPLES,
    MAX_LABELLED_PHRASES,
    MAX_MEMBERS,
    MemberSpec,
)


class _OrgScoped(StrictInput):
    """``context["organization"]`` scopes every id the input names."""

    def _org(self) -> Any:
        return self.context["organization"]

    def _agent(self, value: Any) -> Agent:
        agent = Agent.objects.filter(organization=self._org(), pk=value).first()
        if agent is None:
            raise serializers.ValidationError(_("Agente não encontrado."))
        return agent

    def _channel(self, value: Any) -> ChannelSession:
        channel = ChannelSession.objects.filter(organization=self._org(), pk=value).first()
        if channel is None:
            raise serializers.ValidationError(_("Canal não encontrado."))
        return channel


class RouterConfigInput(StrictInput):
    classifier_model = serializers.CharField(max_length=80, required=False)

    def validate_classifier_model(self, value: str) -> str:
        router = self.context.get("router")
        keep = parse_router_config(router.config).classifier_model if router else ""
        if value not in selectors.classifier_models(self.context["organization"], keep=keep):
            raise serializers.ValidationError(
                _("Modelo não disponível para esta organização (veja os modelos habilitados).")
            )
        return value

    sticky = serializers.BooleanField(required=False)
    min_confidence = serializers.FloatField(min_value=0, max_value=1, required=False)
    local_accept_threshold = serializers.FloatField(min_value=0, max_value=1, required=False)


# A router's channel and fallback agent, as the caller's organization's rows (a comment:
# the schema shows the inputs' inherited docstring, ``_OrgScoped``'s).
class _RouterInput(_OrgScoped):
    def validate_channel_id(self, value: Any) -> ChannelSession:
        return self._channel(value)

    def validate_fallback_agent_id(self, value: Any) -> Agent | None:
        return None if value is None else self._agent(value)


class RouterCreateInput(_RouterInput):
    name = serializers.CharField(max_length=120, trim_whitespace=True)
    channel_id = serializers.UUIDField()
    fallback_agent_id = serializers.UUIDField(required=False, allow_null=True)
    is_active = serializers.BooleanField(required=False, default=True)
    config = RouterConfigInput(required=False)


class RouterUpdateInput(_RouterInput):
    name = serializers.CharField(max_length=120, trim_whitespace=True, required=False)
    channel_id = serializers.UUIDField(required=False)
    is_active = serializers.BooleanField(required=False)
    fallback_agent_id = serializers.UUIDField(required=False, allow_null=True)
    config = RouterConfigInput(required=False)


class MemberInput(_OrgScoped):
    agent_id = serializers.UUIDField()
    intent_name = serializers.CharField(max_length=60, trim_whitespace=True)
    intent_description = serializers.CharField(max_length=2000, trim_whitespace=True)
    examples = serializers.ListField(
        child=serializers.CharField(
            max_length=MAX_EXAMPLE_CHARS, trim_whitespace=True, allow_blank=True
        ),
        max_length=MAX_EXAMPLES,
        required=False,
        default=list,
    )

    def validate_agent_id(self, value: Any) -> Agent:
        return self._agent(value)

    def validate_intent_name(self, value: str) -> str:
        if value.casefold() == NONE_INTENT:
            raise serializers.ValidationError(_("“none” é reservado: escolha outro nome."))
        return value


# The caps are the lists' ``max_length``: checked before any item is (each member looks
# its agent up: checked after, a long body cost one query per item before its 422).
class MembersPutInput(StrictInput):
    members: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=MemberInput(),
        max_length=MAX_MEMBERS,
        error_messages={"max_length": gettext_lazy("No máximo {max_length} intenções.")},
    )

    def validate_members(self, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        names = [m["intent_name"].casefold() for m in value]
        if len(names) != len(set(names)):
            raise serializers.ValidationError(_("Cada intenção deve ter um nome diferente."))
        return value

    def member_specs(self) -> list[MemberSpec]:
        return [
            MemberSpec(
                agent=m["agent_id"],
                intent_name=m["intent_name"],
                intent_description=m["intent_description"],
                examples=tuple(m.get("examples") or ()),
            )
            for m in self.validated_data["members"]
        ]


class RouterTestInput(StrictInput):
    message = serializers.CharField(max_length=4000, trim_whitespace=True)


class LabelledPhraseInput(StrictInput):
    text = serializers.CharField(max_length=MAX_PHRASE_CHARS, trim_whitespace=True)
    intent_name = serializers.CharField(
        max_length=60,
        help_text=gettext_lazy("Uma intenção do roteador, ou none (deve ir para a reserva)."),
    )

    def validate_intent_name(self, value: str) -> str:
        # Checked with the body's other errors (the view passes the router's intents), so one
        # 422 lists everything to fix; the service checks again.
        intents = self.context.get("intents")
        if intents is not None and value not in intents and value != NONE_INTENT:
            raise serializers.ValidationError(unknown_intent(value).message)
        return value


class LabelledPhrasesPutInput(StrictInput):
    phrases: serializers.ListSerializer[Any] = serializers.ListSerializer(
        child=LabelledPhraseInput(),
        max_length=MAX_LABELLED_PHRASES,
        error_messages={"max_length": gettext_lazy("No máximo {max_length} frases.")},
    )


# --- outputs -----------------------------------------------------------------------------


class RouterListItemOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    channel_id = serializers.UUIDField()
    is_active = serializers.BooleanField()
    fallback_agent_id = serializers.UUIDField(allow_null=True)
    member_count = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class RouterConfigOutput(serializers.Serializer):
    classifier_model = serializers.CharField()
    sticky = serializers.BooleanField()
    min_confidence = serializers.FloatField()
    local_accept_threshold = serializers.FloatField()


class RouterOutput(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    channel_id = serializers.UUIDField()
    is_active = serializers.BooleanField()
    config = serializers.SerializerMethodField()
    fallback_agent_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    @extend_schema_field(RouterConfigOutput)
    def get_config(self, obj: Any) -> dict[str, Any]:
        return parse_router_config(obj.config).as_json()


class MemberOutput(serializers.Serializer):
    id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    intent_name = serializers.CharField()
    intent_description = serializers.CharField()
    examples = serializers.ListField(child=serializers.CharField())
    position = serializers.IntegerField()


class RouterListData(serializers.Serializer):
    routers = RouterListItemOutput(many=True)


RouterListResponse = envelope("RouterListResponse", RouterListData)


class RouterDetailData(serializers.Serializer):
    router = RouterOutput()
    members = MemberOutput(many=True)


RouterDetailResponse = envelope("RouterDetailResponse", RouterDetailData)


class IdData(serializers.Serializer):
    id = serializers.UUIDField()


IdResponse = envelope("IdResponse", IdData)


class CountData(serializers.Serializer):
    count = serializers.IntegerField()


CountResponse = envelope("CountResponse", CountData)


class RouterTestData(serializers.Serializer):
    intent_name = serializers.CharField(allow_null=True)
    confidence = serializers.FloatField()
    stage = serializers.ChoiceField(choices=["local", "llm", "none"])
    status = serializers.ChoiceField(choices=["ok", "failed"])
    accepted = serializers.BooleanField()
    agent_id = serializers.UUIDField(allow_null=True)
    agent_name = serializers.CharField(allow_blank=True)
    uses_fallback = serializers.BooleanField()


RouterTestResponse = envelope("RouterTestResponse", RouterTestData)


class LabelledPhraseOutput(serializers.Serializer):
    id = serializers.UUIDField()
    text = serializers.CharField()
    intent_name = serializers.CharField()


class LabelledPhrasesData(serializers.Serializer):
    phrases = LabelledPhraseOutput(many=True)


LabelledPhrasesResponse = envelope("LabelledPhrasesResponse", LabelledPhrasesData)


class QualityRunOutput(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    processed = serializers.IntegerField()
    percent = serializers.IntegerField()
    results = serializers.JSONField()
    error_code = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class QualityRunData(serializers.Serializer):
    run = QualityRunOutput()


QualityRunResponse = envelope("QualityRunResponse", QualityRunData)
