"""``/api/v1/ai/cases`` (mounted at ``api/v1/ai/`` by config/urls.py)."""

from django.urls import path

from cases import api

app_name = "cases_api"
urlpatterns = [
    path("cases", api.CaseListApi.as_view(), name="cases"),
    path("cases/<uuid:case_id>", api.CaseDetailApi.as_view(), name="case"),
    path("cases/<uuid:case_id>/reply", api.CaseReplyApi.as_view(), name="reply"),
    path("cases/<uuid:case_id>/assign", api.CaseAssignApi.as_view(), name="assign"),
]
