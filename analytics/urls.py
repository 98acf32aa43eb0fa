from __future__ import annotations

from django.urls import path

from analytics import views

app_name = "analytics"

urlpatterns = [
    path("", views.outcomes, name="outcomes"),
    path("csv/", views.outcomes_csv, name="outcomes_csv"),
    path("precos/", views.prices, name="prices"),
    path("orcamento/", views.budget, name="budget"),
    path(
        "conversas/<uuid:conversation_id>/custo/",
        views.conversation_cost,
        name="conversation_cost",
    ),
]
