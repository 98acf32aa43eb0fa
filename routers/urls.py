from django.urls import path

from routers import views
from routers.views import suggestions as suggestion_views

app_name = "routers"
urlpatterns = [
    path("", views.routers, name="routers"),
    path("novo/", views.router_create, name="router_create"),
    path("<uuid:router_id>/", views.router_edit, name="router_edit"),
    path("<uuid:router_id>/excluir/", views.router_delete, name="router_delete"),
    path("<uuid:router_id>/testar/", views.router_test, name="router_test"),
    path("<uuid:router_id>/decisoes/", views.router_decisions, name="router_decisions"),
    path("<uuid:router_id>/qualidade/", views.router_quality, name="router_quality"),
    path("<uuid:router_id>/qualidade/frases/", views.router_phrase_add, name="router_phrase_add"),
    path(
        "<uuid:router_id>/qualidade/colar/", views.router_phrases_paste, name="router_phrases_paste"
    ),
    path(
        "<uuid:router_id>/qualidade/frases/<uuid:phrase_id>/excluir/",
        views.router_phrase_delete,
        name="router_phrase_delete",
    ),
    path("<uuid:router_id>/qualidade/rodar/", views.router_quality_run, name="router_quality_run"),
    path(
        "<uuid:router_id>/qualidade/<uuid:run_id>/",
        views.router_quality_progress,
        name="router_quality_progress",
    ),
    path(
        "<uuid:router_id>/qualidade/<uuid:run_id>/aplicar/",
        views.router_apply_suggestion,
        name="router_apply_suggestion",
    ),
    path(
        "<uuid:router_id>/sugestoes/<uuid:suggestion_id>/aceitar/",
        suggestion_views.suggestion_accept,
        name="router_suggestion_accept",
    ),
    path(
        "<uuid:router_id>/sugestoes/<uuid:suggestion_id>/recusar/",
        suggestion_views.suggestion_reject,
        name="router_suggestion_reject",
    ),
]
