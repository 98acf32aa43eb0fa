"""``/api/v1/ai/cases`` (human-cases §9): the list, a case with its timeline, and the
team's answer.

Thin views: the role gates the method (viewer reads, agent answers), the organization
comes from the session's membership (never from the body), an input serializer
translates, one service acts (and writes the audit row), an output serializer shapes
``{"data": ...}``. An answer the case cannot take is 409 ``illegal_transition``; bad
input 422. No rate limit: an authenticated staff route, not a public one.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection

from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.access import access
from accounts.api_access import api_membership
from accounts.api_errors import ApiError
from accounts.api_views import TenantApi, data_response, service_call, valid_input
from cases import selectors, services
from cases.models import Case
from cases.serializers import (
    CaseAssignInput,
    CaseDetailOutput,
    CaseDetailResponse,
    CaseListItemOutput,
    CaseListResponse,
    CaseReplyInput,
)

API_PAGE_SIZE = 50
ERRORS = {
    401: OpenApiResponse(description="Faça login."),
    403: OpenApiResponse(description="Sem permissão (papel insuficiente)."),
    404: OpenApiResponse(description="Caso não encontrado nesta organização."),
}


def _query_choice(
    request: Request, name: str, allowed: Collection[str], default: str, *, what: str
) -> str:
    """The query parameter ``name`` (``default`` when absent); any value outside ``allowed``
    is the 422 ``validation_error`` naming the accepted ones."""
    value = request.query_params.get(name) or default
    if value not in allowed:
        raise ApiError(
            f"{what} desconhecido: use um de {', '.join(allowed)}.",
            code="validation_error",
            status_code=422,
        )
    return value


def _page_number(request: Request) -> int:
    """``page`` (1 when absent): a whole number from 1, else the 422 ``validation_error``."""
    raw = request.query_params.get("page") or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise ApiError(
            "Página inválida: use um número inteiro a partir de 1.",
            code="validation_error",
            status_code=422,
        )
    return int(raw)


@extend_schema(tags=["cases"])  # inherited: the tag of every operation below
class _CaseApi(TenantApi):
    read_role = "viewer"
    write_role = "agent"

    def case(self, request: Request, case_id: uuid.UUID) -> Case:
        queryset = Case.objects.select_related("lead", "conversation", "assigned_to")
        return access(queryset, api_membership(request), pk=case_id)

    def detail(self, case: Case) -> Response:
        events = selectors.case_events(case)
        return data_response(CaseDetailOutput(case, context={"events": events}).data)


class CaseListApi(_CaseApi):
    @extend_schema(
        operation_id="ai_cases_list",
        parameters=[
            OpenApiParameter(
                "estado",
                str,
                enum=list(selectors.FILTERS),
                description="Filtro (padrão: abertos).",
            ),
            OpenApiParameter(
                "resp",
                str,
                enum=list(selectors.ASSIGNEE_FILTERS),
                description="Responsável: todas (padrão), minhas, sem-responsavel.",
            ),
            OpenApiParameter("page", int),
        ],
        responses={200: CaseListResponse, 401: ERRORS[401], 403: ERRORS[403]},
    )
    def get(self, request: Request) -> Response:
        key = _query_choice(
            request, "estado", selectors.FILTERS, selectors.DEFAULT_FILTER, what="Filtro"
        )
        assignee = _query_choice(
            request,
            "resp",
            selectors.ASSIGNEE_FILTERS,
            selectors.DEFAULT_ASSIGNEE_FILTER,
            what="Responsável",
        )
        # Constant queries for any page size (pinned in tests): the paginator's COUNT and
        # the page's rows with customer, channel and assignee joined.
        number = _page_number(request)
        rows = selectors.case_list(api_membership(request), filter_key=key, assignee_key=assignee)
        paginator = Paginator(rows, API_PAGE_SIZE)
        # Past the last page: an empty list (a client paging until it is empty stops), never
        # the last page again.
        items = paginator.page(number).object_list if number <= paginator.num_pages else []
        return data_response(
            {
                "cases": CaseListItemOutput(items, many=True).data,
                "count": paginator.count,
                "page": number,
                "pages": paginator.num_pages,
            }
        )


class CaseDetailApi(_CaseApi):
    @extend_schema(operation_id="ai_cases_retrieve", responses={200: CaseDetailResponse, **ERRORS})
    def get(self, request: Request, case_id: uuid.UUID) -> Response:
        return self.detail(self.case(request, case_id))


class CaseReplyApi(_CaseApi):
    @extend_schema(
        operation_id="ai_cases_reply",
        request=CaseReplyInput,
        responses={
            200: CaseDetailResponse,
            **ERRORS,
            409: OpenApiResponse(description="O caso não aceita essa ação no estado atual."),
            422: OpenApiResponse(description="Dados inválidos."),
        },
    )
    def post(self, request: Request, case_id: uuid.UUID) -> Response:
        case = self.case(request, case_id)
        data = valid_input(request, CaseReplyInput).validated_data
        service_call(
            services.case_answer,
            conflicts=(services.IllegalTransition,),
            invalid=(services.CaseError,),
            case=case,
            actor=request.user,
            action=data["action"],
            text=data["text"],
        )
        return self.detail(self.case(request, case_id))


class CaseAssignApi(_CaseApi):
    @extend_schema(
        operation_id="ai_cases_assign",
        request=CaseAssignInput,
        responses={
            200: CaseDetailResponse,
            **ERRORS,
            422: OpenApiResponse(description="Não é um atendente desta organização."),
        },
    )
    def post(self, request: Request, case_id: uuid.UUID) -> Response:
        case = self.case(request, case_id)
        assignee_id = valid_input(request, CaseAssignInput).validated_data["assignee_id"]
        # Only members are found; any other id gets the same 422 as a non-member.
        assignee = (
            get_user_model().objects.filter(pk=assignee_id).first()
            if assignee_id is not None
            else None
        )
        if assignee_id is not None and assignee is None:
            raise ApiError(
                "Escolha um atendente desta organização.", code="invalid_input", status_code=422
            )
        service_call(
            services.case_assign,
            invalid=(services.CaseError,),
            case=case,
            actor=request.user,
            assignee=assignee,
        )
        return self.detail(self.case(request, case_id))
