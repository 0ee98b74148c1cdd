from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Readers"

    def ready(self) -> None:
        from accounts import signals  # noqa: F401
