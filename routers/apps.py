from django.apps import AppConfig


class RoutersConfig(AppConfig):
    name = "routers"
    verbose_name = "Roteadores"
