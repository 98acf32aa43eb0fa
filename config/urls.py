from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from config import health

urlpatterns = [
    path("health/live/", health.live, name="health-live"),
    path("health/ready/", health.ready, name="health-ready"),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/v1/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"
    ),
    path("api/v1/ai/", include("routers.api_urls")),
    path("api/v1/ai/", include("cases.api_urls")),
    path("webhooks/", include("conversation.webhook_urls")),
    path("roteadores/", include("routers.urls")),
    path("casos/", include("cases.urls")),
    path("resultados/", include("analytics.urls")),
    path("caixa/", include("inbox.urls")),
    path("", include("conversation.urls")),
]

# Under /api/ a path no URL matches answers the API's JSON envelope too.
handler404 = "accounts.api_errors.not_found"
handler500 = "accounts.api_errors.server_failure"
