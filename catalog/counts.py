"""Tag and category paper counts for the index pages.

Counting every tag's or category's papers reads every link row (seconds at a
million papers): the counts are kept apart from the catalog version and lag it
by up to CATALOG_COUNTS_SECONDS, refreshed by a task while the old ones are served.
"""

from django.db.models import Count, Q

from catalog.cache import store_lagging_read
from catalog.models import Category, Tag

VISIBLE = Q(papers__is_visible=True, papers__merged_into__isnull=True)


def count_tags() -> list[Tag]:
    return list(Tag.objects.annotate(paper_count=Count("papers", filter=VISIBLE)).order_by("name"))


def count_categories() -> list[Category]:
    categories = (
        Category.objects.annotate(paper_count=Count("papers", filter=VISIBLE))
        .filter(paper_count__gt=0)
        .order_by("code")
    )
    return list(categories)


def refresh_counts() -> None:
    """Recount tags and categories for the index pages (the task's work)."""
    store_lagging_read("tags-with-counts", count_tags)
    store_lagging_read("categories-with-counts", count_categories)
