"""Login, organization switch, the team page (admins), invitations, password pages and
the error pages' views (CSRF failure)."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm
from django.contrib.auth.tokens import default_token_generator
from django.contrib.messages.views import SuccessMessageMixin
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse, reverse_lazy
from django.utils import timezone
from django.utils.http import urlencode, urlsafe_base64_decode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import rls, time_zones
from accounts.access import access, refresh_page, role_required
from accounts.emails import send_invitation_on_commit
from accounts.forms import AcceptInvitationForm, InviteForm, RoleForm, TimeZoneForm
from accounts.middleware import SESSION_ORG_KEY
from accounts.models import Invitation, Membership, Role, display_name
from accounts.pages import PageRequest, act_and_tell
from accounts.selectors import invitation_for_code, pending_invitations, team_members
from accounts.services import (
    OrganizationSettingsError,
    TeamError,
    invitation_accept,
    invitation_create,
    invitation_revoke,
    membership_remove,
    membership_role_change,
    organization_time_zone_set,
)
from accounts.throttle import client_ip, hit, too_many_page

PASSWORD_RESET_SESSION_KEY = "_password_reset"
RESET_REQUESTS_PER_HOUR = 10


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    redirect_authenticated_user = True


@login_required
@require_POST
def switch_organization(request: HttpRequest) -> HttpResponse:
    # Only among the user's own memberships: another org's id, or no id at all, is a 404.
    try:
        organization_id = uuid.UUID(str(request.POST.get("organization", "")))
    except ValueError:
        raise Http404 from None
    membership = get_object_or_404(Membership, user=request.user, organization_id=organization_id)
    request.session[SESSION_ORG_KEY] = str(membership.organization_id)
    return redirect("conversation:conversations")


# --- the team (admins) ---------------------------------------------------------------------


@role_required(Role.ADMIN)
@require_GET
def team(request: PageRequest) -> HttpResponse:
    membership = request.membership
    return _team_page(request, membership, InviteForm())


def _team_page(
    request: HttpRequest,
    membership: Membership,
    invite_form: InviteForm,
    status: int = 200,
    time_zone_form: TimeZoneForm | None = None,
) -> HttpResponse:
    organization = membership.organization
    if time_zone_form is None:
        time_zone_form = TimeZoneForm(initial={"time_zone": organization.time_zone})
    # Expected queries (besides session/user/membership/context processor): members with
    # their users (1), pending invitations (1).
    members = list(team_members(organization))
    return render(
        request,
        "accounts/team.html",
        {
            "members": members,
            "invitations": list(pending_invitations(organization)),
            "invite_form": invite_form,
            "time_zone_form": time_zone_form,
            "roles": Role.choices,
            "now": timezone.now(),
        },
        status=status,
    )


@role_required(Role.ADMIN)
@require_POST
def team_invite(request: PageRequest) -> HttpResponse:
    membership = request.membership
    form = InviteForm(request.POST)
    if not form.is_valid():
        return _team_page(request, membership, form, status=400)
    try:
        invitation, secret = invitation_create(
            organization=membership.organization,
            actor=request.user,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
        )
    except TeamError as error:
        form.add_error("email", str(error))
        return _team_page(request, membership, form, status=400)
    user: Any = request.user
    send_invitation_on_commit(
        request,
        invitation=invitation,
        secret=secret,
        inviter_name=display_name(user),
    )
    messages.success(request, _("Convite enviado para %(email)s.") % {"email": invitation.email})
    return redirect("accounts:team")


def _member(request: PageRequest, membership_id: str) -> Membership:
    return access(Membership.objects.select_related("user"), request.membership, pk=membership_id)


@role_required(Role.ADMIN)
@require_POST
def team_invitation_revoke(request: PageRequest, invitation_id: str) -> HttpResponse:
    invitation = access(Invitation.objects.all(), request.membership, pk=invitation_id)
    done = _("Convite cancelado.")
    act_and_tell(request, invitation_revoke, done=done, refused=TeamError, invitation=invitation)
    return redirect("accounts:team")


@role_required(Role.ADMIN)
@require_POST
def team_member_role(request: PageRequest, membership_id: str) -> HttpResponse:
    member = _member(request, membership_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Escolha um papel válido."))
        return redirect("accounts:team")
    role = form.cleaned_data["role"]
    done = _("%(name)s agora é %(role)s.") % {
        "name": member.user.get_username(),
        "role": Role(role).label,
    }
    changed = act_and_tell(
        request, membership_role_change, done=done, refused=TeamError, membership=member, role=role
    )
    if changed and member.pk == request.membership.pk and not member.has_role(Role.ADMIN):
        # They gave up their own admin role: the team page is no longer theirs to open.
        return redirect("conversation:conversations")
    return redirect("accounts:team")


@role_required(Role.ADMIN)
@require_POST
def team_member_remove(request: PageRequest, membership_id: str) -> HttpResponse:
    member = _member(request, membership_id)
    done = _("%(name)s saiu da equipe.") % {"name": member.user.get_username()}
    act_and_tell(request, membership_remove, done=done, refused=TeamError, membership=member)
    return redirect("accounts:team")


# --- the organization's own settings (admins) -----------------------------------------------


@role_required(Role.ADMIN)
@require_POST
def organization_time_zone(request: PageRequest) -> HttpResponse:
    membership = request.membership
    form = TimeZoneForm(request.POST)
    if form.is_valid():
        try:
            organization_time_zone_set(
                organization=membership.organization,
                actor=request.user,
                time_zone=form.cleaned_data["time_zone"],
            )
        except OrganizationSettingsError as error:
            form.add_error("time_zone", str(error))
    if not form.is_valid():
        return _team_page(request, membership, InviteForm(), status=400, time_zone_form=form)
    label = dict(time_zones.TIME_ZONE_CHOICES)[form.cleaned_data["time_zone"]]
    messages.success(request, _("Fuso horário da organização: %(zone)s.") % {"zone": label})
    return redirect("accounts:team")


# --- accepting an invitation (public: the link is the credential) --------------------------


@require_http_methods(["GET", "POST"])
def invitation_accept_view(request: HttpRequest) -> HttpResponse:
    """The link's page. Logged in, only the account with the invitation's e-mail accepts
    (one click); anyone else logged in is told to sign out first — never an account made,
    or a membership given, while someone else's session stays open. Logged out: the owner
    of an existing account signs in and comes back; a new person creates their account."""
    code = str(request.POST.get("c") or request.GET.get("c") or "")
    invitation = invitation_for_code(code) if code else None
    if invitation is None or not invitation.is_usable():
        return render(request, "accounts/invitation_invalid.html", {"invitation": invitation})
    context: dict[str, Any] = {"invitation": invitation, "code": code}
    user: Any = request.user
    if user.is_authenticated:
        if (user.email or "").strip().lower() != invitation.email.lower():
            context["here"] = f"{reverse('accounts:invitation_accept')}?{urlencode({'c': code})}"
            return render(request, "accounts/invitation_wrong_user.html", context)
        if request.method == "POST":
            return _accept(request, invitation, user)
        context["existing"] = user
        return render(request, "accounts/invitation_accept.html", context)
    existing = get_user_model().objects.filter(email__iexact=invitation.email).first()
    if existing is not None:
        # Someone with an account already: they accept while logged in as themselves.
        context["existing"] = existing
        context["login_url"] = f"{reverse('accounts:login')}?{_next(request, code)}"
        return render(request, "accounts/invitation_accept.html", context)
    form = AcceptInvitationForm(
        request.POST if request.method == "POST" else None, email=invitation.email
    )
    if request.method == "POST" and form.is_valid():
        return _accept(request, invitation, form)
    context["form"] = form
    return render(request, "accounts/invitation_accept.html", context)


def _next(request: HttpRequest, code: str) -> str:
    return urlencode({"next": f"{reverse('accounts:invitation_accept')}?{urlencode({'c': code})}"})


def _accept(request: HttpRequest, invitation: Invitation, user_or_form: Any) -> HttpResponse:
    """Accept for an existing user, or for the account ``AcceptInvitationForm`` creates —
    in one transaction, so a link that expired meanwhile leaves no account behind."""
    try:
        with rls.tenant_context(invitation.organization_id), transaction.atomic():
            user = (
                user_or_form.save()
                if isinstance(user_or_form, AcceptInvitationForm)
                else user_or_form
            )
            invitation_accept(invitation=invitation, user=user)
    except TeamError as error:
        return render(
            request, "accounts/invitation_invalid.html", {"invitation": invitation, "error": error}
        )
    if not request.user.is_authenticated:
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[SESSION_ORG_KEY] = str(invitation.organization_id)
    messages.success(
        request,
        _("Bem-vindo(a) à equipe de %(org)s.") % {"org": invitation.organization.name},
    )
    return redirect("conversation:conversations")


# --- passwords -----------------------------------------------------------------------------


class PasswordChangeView(SuccessMessageMixin, auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"
    http_method_names = ["get", "post"]  # FormView would answer PUT like POST
    success_url = reverse_lazy("accounts:password_change")
    success_message = gettext_lazy("Senha alterada.")


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset by e-mail, pt-BR templates; the link carries ``?u=&t=`` (no URL
    kwargs), and one address asks at most ``RESET_REQUESTS_PER_HOUR`` times an hour."""

    template_name = "accounts/password_reset.html"
    http_method_names = ["get", "post"]
    email_template_name = "accounts/email/password_reset.txt"
    subject_template_name = "accounts/email/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not hit(
            f"password-reset:{client_ip(request)}", limit=RESET_REQUESTS_PER_HOUR, window_s=3600
        ):
            return too_many_page(request, retry_after_s=3600)
        return super().post(request, *args, **kwargs)


class PasswordResetDoneView(auth_views.PasswordResetDoneView):
    template_name = "accounts/password_reset_done.html"


@require_http_methods(["GET", "POST"])
def password_reset_confirm(request: HttpRequest) -> HttpResponse:
    """The link's ``u`` and ``t`` move into the session and the page reloads without them,
    so the token never sits in the address bar or a Referer (Django's own trick)."""
    if request.method == "GET" and "t" in request.GET:
        request.session[PASSWORD_RESET_SESSION_KEY] = [
            str(request.GET.get("u", "")),
            str(request.GET.get("t", "")),
        ]
        return redirect("accounts:password_reset_confirm")
    uidb64, token = (request.session.get(PASSWORD_RESET_SESSION_KEY) or ["", ""])[:2]
    user = _reset_user(uidb64, token)
    if user is None:
        return render(request, "accounts/password_reset_confirm.html", {"validlink": False})
    form = SetPasswordForm(user, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        form.save()
        request.session.pop(PASSWORD_RESET_SESSION_KEY, None)
        messages.success(request, _("Senha redefinida. Entre com a senha nova."))
        return redirect("accounts:login")
    return render(
        request, "accounts/password_reset_confirm.html", {"validlink": True, "form": form}
    )


def _reset_user(uidb64: str, token: str) -> Any:
    if not uidb64 or not token:
        return None
    User = get_user_model()
    try:
        pk = urlsafe_base64_decode(uidb64).decode()
        user = User._default_manager.get(pk=pk)
    except (TypeError, ValueError, OverflowError, User.DoesNotExist):
        return None
    return user if default_token_generator.check_token(user, token) else None


# --- error pages ---------------------------------------------------------------------------


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the pt-BR page in the product's layout (Django's is English).
    An htmx request (a page whose token went stale: a login in another tab rotates it)
    reloads its page instead, with a fresh token — htmx swaps no 403, so the click would
    otherwise do nothing at all."""
    if request.headers.get("HX-Request"):
        return refresh_page(status=403)
    return HttpResponseForbidden(render_to_string("403_csrf.html", request=request))
