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
from typing import Any

from django.core.paginator import Paginator
from drf_spectacular.utils import extend_schema
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
from cases import selectors, services
from cases.models import Case
from cases.serializers import (
    CaseAssignInput,
    CaseDetailOutput,
    CaseDetailResponse,
    CaseListItemOutput,
    CaseListQuery,
    CaseListResponse,
    CaseReplyInput,
)

API_PAGE_SIZE = 50
ERRORS = {
    401: error_response("Faça login."),
    403: error_response("Sem permissão (papel insuficiente)."),
    404: error_response("Caso não encontrado nesta organização."),
}


def _list_query(request: Request) -> dict[str, Any]:
    """The list's parameters; an empty one is absent (its default). Any bad value is the
    422 ``validation_error`` naming each bad parameter in ``fields``."""
    query = CaseListQuery(data={k: v for k, v in request.query_params.items() if v})
    query.is_valid(raise_exception=True)
    return query.validated_data


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
        parameters=[CaseListQuery],
        responses={
            200: CaseListResponse,
            401: ERRORS[401],
            403: ERRORS[403],
            422: error_response("Parâmetro inválido."),
        },
    )
    def get(self, request: Request) -> Response:
        query = _list_query(request)
        # Constant queries for any page size (pinned in tests): the paginator's COUNT and
        # the page's rows with customer, channel and assignee joined.
        number = query["page"]
        rows = selectors.case_list(
            api_membership(request), filter_key=query["estado"], assignee_key=query["resp"]
        )
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
            409: error_response("O caso não aceita essa ação no estado atual."),
            422: error_response("Dados inválidos."),
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
            422: error_response("Dados inválidos (um atendente desta organização)."),
        },
    )
    def post(self, request: Request, case_id: uuid.UUID) -> Response:
        case = self.case(request, case_id)
        data = valid_input(request, CaseAssignInput, organization_id=case.organization_id)
        assignee = data.validated_data["assignee_id"]  # the member's user, or None
        service_call(
            services.case_assign,
            invalid=(services.CaseError,),
            case=case,
            actor=request.user,
            assignee=assignee,
        )
        return self.detail(self.case(request, case_id))
