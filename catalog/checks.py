"""Deployment checks of the catalog cache (`manage.py check --deploy`)."""

from django.conf import settings
from django.core import checks


@checks.register(checks.Tags.caches, deploy=True)
def page_cache_apart_from_the_broker(app_configs, **kwargs) -> list[checks.CheckMessage]:
    if settings.CATALOG_CACHE_URL and settings.CATALOG_CACHE_URL == settings.CELERY_BROKER_URL:
        return [
            checks.Warning(
                "The catalog cache shares the Celery broker's Redis.",
                hint=(
                    "Anyone can make the cache store pages; in the broker's Redis they "
                    "crowd out tasks. Set CATALOG_CACHE_URL to a Redis of its own with "
                    "maxmemory and maxmemory-policy allkeys-lru (see docker-compose.yml)."
                ),
                id="catalog.W001",
            )
        ]
    return []
