"""``/api/v1/ai/routers`` (intent-router Task 6) and the quality loop's endpoints.

Thin views: the role gates the method (``read_role``/``write_role``), the organization
comes from the session's membership (never from the body), an input serializer
translates, one service acts, an output serializer shapes ``{"data": ...}``. Service
errors map to the API's envelope: an already-routed channel is 409
``router_already_exists``, a broken invariant 422 ``validation_error``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.access import access
from accounts.api_access import api_membership
from accounts.api_views import (
    TenantApi,
    data_response,
    error_response,
    service_call,
    valid_input,
)
from routers import selectors, services
from routers.errors import RouterAlreadyExists, RouterInvalid
from routers.models import QualityRun, Router
from routers.serializers import (
    CountResponse,
    IdResponse,
    LabelledPhraseOutput,
    LabelledPhrasesPutInput,
    LabelledPhrasesResponse,
    MemberOutput,
    MembersPutInput,
    QualityRunOutput,
    QualityRunResponse,
    RouterCreateInput,
    RouterDetailResponse,
    RouterListItemOutput,
    RouterListResponse,
    RouterOutput,
    RouterTestInput,
    RouterTestResponse,
    RouterUpdateInput,
)

T = TypeVar("T")
# Every operation needs a login and a role; one naming a router, a router of the caller's
# organization; one reading input, valid input.
ACCESS = {
    401: error_response("Faça login."),
    403: error_response("Sem permissão (papel insuficiente)."),
}
ERRORS = {**ACCESS, 404: error_response("Roteador não encontrado nesta organização.")}
INVALID = {422: error_response("Dados inválidos.")}


def _service(call: Callable[..., T], **kwargs: Any) -> T:
    return service_call(call, conflicts=(RouterAlreadyExists,), invalid=(RouterInvalid,), **kwargs)


@extend_schema(tags=["routers"])  # inherited: the tag of every operation below
class _RouterApi(TenantApi):
    read_role = "agent"
    write_role = "admin"

    def router(self, request: Request, router_id: uuid.UUID) -> Router:
        return access(Router.objects.all(), api_membership(request), pk=router_id)


class RouterListApi(_RouterApi):
    @extend_schema(
        operation_id="routers_list",
        responses={200: RouterListResponse, **ACCESS},
    )
    def get(self, request: Request) -> Response:
        rows = selectors.router_list(api_membership(request))
        return data_response({"routers": RouterListItemOutput(rows, many=True).data})

    @extend_schema(
        operation_id="routers_create",
        request=RouterCreateInput,
        responses={
            201: IdResponse,
            **ACCESS,
            409: error_response("O canal já tem um roteador ativo."),
            **INVALID,
        },
    )
    def post(self, request: Request) -> Response:
        organization = api_membership(request).organization
        v = valid_input(request, RouterCreateInput, organization=organization).validated_data
        router = _service(
            services.router_create,
            organization=organization,
            actor=request.user,
            name=v["name"],
            channel=v["channel_id"],
            fallback_agent=v.get("fallback_agent_id"),
            is_active=v.get("is_active", True),
            config=v.get("config"),
        )
        return data_response({"id": router.pk}, status.HTTP_201_CREATED)


class RouterDetailApi(_RouterApi):
    @extend_schema(operation_id="routers_retrieve", responses={200: RouterDetailResponse, **ERRORS})
    def get(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        members = selectors.router_members(router)
        return data_response(
            {
                "router": RouterOutput(router).data,
                "members": MemberOutput(members, many=True).data,
            }
        )

    @extend_schema(
        operation_id="routers_partial_update",
        request=RouterUpdateInput,
        responses={
            200: IdResponse,
            409: error_response("Canal já roteado."),
            **ERRORS,
            **INVALID,
        },
    )
    def patch(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        organization = api_membership(request).organization
        data = valid_input(request, RouterUpdateInput, organization=organization, router=router)
        fields = {
            {"channel_id": "channel", "fallback_agent_id": "fallback_agent"}.get(k, k): value
            for k, value in data.validated_data.items()
        }
        _service(services.router_update, router=router, actor=request.user, **fields)
        return data_response({"id": router.pk})

    @extend_schema(operation_id="routers_destroy", responses={200: IdResponse, **ERRORS})
    def delete(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        pk = router.pk
        services.router_delete(router=router, actor=request.user)
        return data_response({"id": pk})


class RouterMembersApi(_RouterApi):
    @extend_schema(
        operation_id="routers_members_replace",
        request=MembersPutInput,
        responses={200: CountResponse, **ERRORS, **INVALID},
    )
    def put(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        organization = api_membership(request).organization
        data = valid_input(request, MembersPutInput, organization=organization)
        created = _service(
            services.router_members_replace,
            router=router,
            actor=request.user,
            members=data.member_specs(),
        )
        return data_response({"count": len(created)})


class RouterTestApi(_RouterApi):
    write_role = "manager"

    @extend_schema(
        operation_id="routers_test",
        request=RouterTestInput,
        responses={200: RouterTestResponse, **ERRORS, **INVALID},
        description="Classifica uma mensagem de teste. Não grava decisão de roteamento.",
    )
    def post(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        data = valid_input(request, RouterTestInput)
        result = services.router_classify_test(
            router=router,
            organization=api_membership(request).organization,
            message=data.validated_data["message"],
        )
        return data_response(
            {
                "intent_name": result.intent_name,
                "confidence": round(result.confidence, 4),
                "stage": result.stage,
                "status": result.status,
                "accepted": result.accepted,
                "agent_id": result.agent_id,
                "agent_name": result.agent_name,
                "uses_fallback": result.uses_fallback,
            }
        )


class LabelledPhrasesApi(_RouterApi):
    # Replacing the set trains the router's local stage: configuring it, so the admin's
    # (DESIGN §6, §10.5: nothing is learned without an admin). Managers measure it.

    @extend_schema(
        operation_id="routers_labelled_phrases_list",
        responses={200: LabelledPhrasesResponse, **ERRORS},
    )
    def get(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        phrases = selectors.labelled_phrases(router)
        return data_response({"phrases": LabelledPhraseOutput(phrases, many=True).data})

    @extend_schema(
        operation_id="routers_labelled_phrases_replace",
        request=LabelledPhrasesPutInput,
        responses={200: CountResponse, **ERRORS, **INVALID},
        description="Substitui o conjunto de frases rotuladas do roteador.",
    )
    def put(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        data = valid_input(
            request, LabelledPhrasesPutInput, intents=set(selectors.router_intent_names(router))
        )
        count = _service(
            services.labelled_phrases_replace,
            router=router,
            actor=request.user,
            phrases=[(p["text"], p["intent_name"]) for p in data.validated_data["phrases"]],
        )
        return data_response({"count": count})


class QualityRunsApi(_RouterApi):
    write_role = "manager"

    @extend_schema(
        operation_id="routers_quality_runs_create",
        request=None,
        responses={202: QualityRunResponse, **ERRORS, **INVALID},
        description="Roda as frases rotuladas pelo classificador (em segundo plano).",
    )
    def post(self, request: Request, router_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        run = _service(services.quality_run_start, router=router, actor=request.user)
        run.refresh_from_db()  # in-process mode may have finished it on commit
        return data_response({"run": QualityRunOutput(run).data}, status.HTTP_202_ACCEPTED)


class QualityRunDetailApi(_RouterApi):
    @extend_schema(
        operation_id="routers_quality_runs_retrieve",
        responses={200: QualityRunResponse, **ERRORS},
    )
    def get(self, request: Request, router_id: uuid.UUID, run_id: uuid.UUID) -> Response:
        router = self.router(request, router_id)
        run = access(QualityRun.objects.all(), api_membership(request), pk=run_id, router=router)
        return data_response({"run": QualityRunOutput(run).data})
