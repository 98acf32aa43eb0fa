from django.urls import path

from conversation import views

app_name = "conversation"
urlpatterns = [
    path("", views.conversations, name="conversations"),
]
