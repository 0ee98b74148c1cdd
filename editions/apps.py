from django.apps import AppConfig


class EditionsConfig(AppConfig):
    name = "editions"
    verbose_name = "Daily editions"

    def ready(self) -> None:
        from editions import receivers  # noqa: F401
