from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views
from accounts.throttle import throttled_login

app_name = "accounts"
urlpatterns = [
    path("login/", throttled_login(views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("org/switch/", views.switch_organization, name="switch_organization"),
]
