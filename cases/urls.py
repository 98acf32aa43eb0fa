from django.urls import path

from cases import views

app_name = "cases"
urlpatterns = [
    path("", views.case_list, name="case_list"),
    path("contador/", views.case_badge, name="case_badge"),
    path("avisos/", views.notification_settings, name="notification_settings"),
    path("avisos/numeros/", views.staff_number_save, name="staff_number_save"),
    path(
        "conversa/<uuid:conversation_id>/",
        views.conversation_cases,
        name="conversation_cases",
    ),
    path("<uuid:case_id>/", views.case_detail, name="case_detail"),
    path("<uuid:case_id>/responder/", views.case_reply, name="case_reply"),
    path("<uuid:case_id>/responsavel/", views.case_assign, name="case_assign"),
]
