from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.throttle import throttled_login

app_name = "accounts"
urlpatterns = [
    path("login/", throttled_login(views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("org/switch/", views.switch_organization, name="switch_organization"),
    # the team (admins)
    path("equipe/", views.team, name="team"),
    path("equipe/convidar/", views.team_invite, name="team_invite"),
    path(
        "equipe/convites/<uuid:invitation_id>/cancelar/",
        views.team_invitation_revoke,
        name="team_invitation_revoke",
    ),
    path("equipe/<uuid:membership_id>/papel/", views.team_member_role, name="team_member_role"),
    path(
        "equipe/<uuid:membership_id>/remover/", views.team_member_remove, name="team_member_remove"
    ),
    # the organization's own settings (admins)
    path("organizacao/fuso-horario/", views.organization_time_zone, name="organization_time_zone"),
    # public: the link is the credential
    path("convite/", views.invitation_accept_view, name="invitation_accept"),
    # passwords
    path("senha/", views.PasswordChangeView.as_view(), name="password_change"),
    path("senha/esqueci/", views.PasswordResetView.as_view(), name="password_reset"),
    path(
        "senha/esqueci/enviado/",
        views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path("senha/redefinir/", views.password_reset_confirm, name="password_reset_confirm"),
]
