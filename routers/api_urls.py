"""``/api/v1/ai/routers`` (mounted at ``api/v1/ai/`` by config/urls.py)."""

from django.urls import path

from routers import api

app_name = "routers_api"
urlpatterns = [
    path("routers", api.RouterListApi.as_view(), name="routers"),
    path("routers/<uuid:router_id>", api.RouterDetailApi.as_view(), name="router"),
    path("routers/<uuid:router_id>/members", api.RouterMembersApi.as_view(), name="members"),
    path("routers/<uuid:router_id>/test", api.RouterTestApi.as_view(), name="test"),
    path(
        "routers/<uuid:router_id>/labelled-phrases",
        api.LabelledPhrasesApi.as_view(),
        name="labelled_phrases",
    ),
    path(
        "routers/<uuid:router_id>/quality-runs", api.QualityRunsApi.as_view(), name="quality_runs"
    ),
    path(
        "routers/<uuid:router_id>/quality-runs/<uuid:run_id>",
        api.QualityRunDetailApi.as_view(),
        name="quality_run",
    ),
]
