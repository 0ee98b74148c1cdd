"""Who found a paper, as its page shows it. The readers and curators who did are
the apps above the catalog's to know: settings.PAPER_CREDITS names the function
that adds the credit to the paper page's own query (catalog.selectors.paper_for_page),
as columns of the paper's row, so the page spends no query on it. The catalog
never imports that app; the system check catalog.E002 fails when the setting
names nothing callable.
"""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.signals import setting_changed
from django.db.models import QuerySet
from django.dispatch import receiver
from django.utils.module_loading import import_string

from catalog.models import Paper

P = TypeVar("P", bound=Paper)


@functools.cache
def _credits() -> Callable[[QuerySet[Paper]], QuerySet[Paper]]:
    function: Callable[[QuerySet[Paper]], QuerySet[Paper]] = import_string(settings.PAPER_CREDITS)
    return function


@receiver(setting_changed)
def _forget_credits(*, setting: str, **kwargs: Any) -> None:
    if setting == "PAPER_CREDITS":
        _credits.cache_clear()


def with_credits(papers: QuerySet[P]) -> QuerySet[P]:
    """The papers with their credit (settings.PAPER_CREDITS) as annotations."""
    credited: QuerySet[P] = _credits()(papers)  # type: ignore[assignment]
    return credited
