from django.apps import AppConfig


class ConversationConfig(AppConfig):
    name = "conversation"
    verbose_name = "Conversas"
