from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Contas"

    def ready(self) -> None:
        from accounts import checks  # noqa: F401 — registers the deployment checks
