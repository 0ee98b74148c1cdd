from django.apps import AppConfig


class DiscoveryConfig(AppConfig):
    name = "discovery"
    verbose_name = "Discovery"

    def ready(self) -> None:
        from discovery import receivers  # noqa: F401
