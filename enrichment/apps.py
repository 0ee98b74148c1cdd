from django.apps import AppConfig


class EnrichmentConfig(AppConfig):
    name = "enrichment"
    verbose_name = "Enrichment"

    def ready(self) -> None:
        from enrichment import receivers  # noqa: F401
