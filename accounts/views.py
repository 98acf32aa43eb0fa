from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST

from accounts.middleware import SESSION_ORG_KEY
from accounts.models import Membership


class LoginView(auth_views.LoginView):
    template_name = "accounts/login.html"
    redirect_authenticated_user = True


@login_required
@require_POST
def switch_organization(request: HttpRequest) -> HttpResponse:
    # Only among the user's own memberships: another org's id is a 404.
    membership = get_object_or_404(
        Membership, user=request.user, organization_id=request.POST.get("organization")
    )
    request.session[SESSION_ORG_KEY] = str(membership.organization_id)
    return redirect("conversation:conversations")
