from django.urls import path

from conversation import webhooks

urlpatterns = [
    path(
        "<str:provider>/<uuid:channel_id>",
        webhooks.webhook,
        name="webhook",
    ),
]
