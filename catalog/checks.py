"""Checks of the catalog's settings: the reader's parts of its pages, a paper's
credit, a search's neighbours in meaning, and
(`manage.py check --deploy`) the catalog cache."""

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string


@checks.register()
def reader_parts_factory(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """READER_PARTS must name a callable: every page asks it for the reader's parts."""
    try:
        factory = import_string(settings.READER_PARTS)
    except ImportError as error:
        factory, problem = None, str(error)
    else:
        problem = "" if callable(factory) else f"{settings.READER_PARTS} is not callable"
    if not problem:
        return []
    return [
        checks.Error(
            f"READER_PARTS does not name the factory of the reader's parts: {problem}.",
            hint='Name a function of the request, e.g. "accounts.reader_parts.reader_parts".',
            id="catalog.E001",
        )
    ]


@checks.register()
def paper_credits_function(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """PAPER_CREDITS must name a callable: every paper page's query goes through it."""
    try:
        function = import_string(settings.PAPER_CREDITS)
    except ImportError as error:
        function, problem = None, str(error)
    else:
        problem = "" if callable(function) else f"{settings.PAPER_CREDITS} is not callable"
    if not problem:
        return []
    return [
        checks.Error(
            f"PAPER_CREDITS does not name the function of a paper's credit: {problem}.",
            hint='Name a function of a queryset of papers, e.g. "curation.credits.with_credits".',
            id="catalog.E002",
        )
    ]


@checks.register()
def search_neighbours_function(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """SEARCH_NEIGHBOURS must name a callable: every search sorted by relevance asks it."""
    try:
        function = import_string(settings.SEARCH_NEIGHBOURS)
    except ImportError as error:
        function, problem = None, str(error)
    else:
        problem = "" if callable(function) else f"{settings.SEARCH_NEIGHBOURS} is not callable"
    if not problem:
        return []
    return [
        checks.Error(
            f"SEARCH_NEIGHBOURS does not name the function of a search's neighbours: {problem}.",
            hint='Name a function of the text and a limit, e.g. "discovery.search.papers_near".',
            id="catalog.E003",
        )
    ]


@checks.register(checks.Tags.caches, deploy=True)
def page_cache_apart_from_the_broker(
    app_configs: Sequence[AppConfig] | None, **kwargs: Any
) -> list[checks.CheckMessage]:
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
