"""Reads for the public pages; each owns the joins its page needs."""

import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.http import QueryDict
from django.utils import translation

from accounts.models import SavedPaper, Subscription
from catalog.cache import lagging_read, store_lagging_read
from catalog.filters import PaperFilter
from catalog.models import (
    NEWEST_FIRST,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperImage,
    Summary,
    Tag,
)


def filter_papers(params: QueryDict, *, papers: QuerySet[Paper] | None = None) -> PaperFilter:
    """The list's GET parameters applied to visible papers (or to `papers`)."""
    return PaperFilter(params, queryset=papers if papers is not None else Paper.objects.visible())


def with_list_related(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """What a list entry shows, in a fixed number of queries whatever the page size."""
    related = [
        Prefetch(
            "paperauthor_set",
            queryset=PaperAuthor.objects.select_related("author").order_by("position"),
            to_attr="ordered_authors",
        ),
        Prefetch("tags", queryset=Tag.objects.order_by("name")),
    ]
    # An entry links one official repository and may show its first page: each a
    # subquery of the page's own query, not a query of its own.
    official_code = CodeLink.objects.filter(paper=OuterRef("pk"), kind=CodeLink.Kind.OFFICIAL)
    papers = papers.select_related("primary_category").annotate(
        official_code_url=Subquery(official_code.order_by("id").values("url")[:1])
    )
    if settings.PREVIEW_LIST_THUMBNAILS:
        first_page = PaperImage.objects.filter(
            paper=OuterRef("pk"), kind=PaperImage.Kind.FIRST_PAGE, position=0
        )
        papers = papers.annotate(thumbnail=Subquery(first_page.values("image")[:1]))
    return papers.prefetch_related(*related)


def newest_listed_at(papers: QuerySet[Paper]) -> datetime.datetime | None:
    """When the newest of these papers was listed, or None if there are none."""
    return papers.order_by(*NEWEST_FIRST).values_list("listed_at", flat=True).first()


def paper_for_page(
    papers: QuerySet[Paper], *, reader: AbstractBaseUser | AnonymousUser
) -> QuerySet[Paper]:
    """Everything the paper page shows; published summaries only. For a logged-in
    reader the paper, its tags and categories carry whether they are saved or
    subscribed, so the page's buttons need no query of their own."""
    tags = Tag.objects.order_by("name")
    categories = Category.objects.order_by("code")
    if reader.is_authenticated:
        subscribed = Subscription.objects.filter(user=reader)
        tags = tags.annotate(is_subscribed=Exists(subscribed.filter(tag=OuterRef("pk"))))
        categories = categories.annotate(
            is_subscribed=Exists(subscribed.filter(category=OuterRef("pk")))
        )
        saved = SavedPaper.objects.filter(user=reader, paper=OuterRef("pk"))
        papers = papers.annotate(is_saved=Exists(saved))
    return papers.select_related("primary_category").prefetch_related(
        Prefetch(
            "paperauthor_set",
            queryset=PaperAuthor.objects.select_related("author").order_by("position"),
            to_attr="ordered_authors",
        ),
        Prefetch("categories", queryset=categories),
        Prefetch("tags", queryset=tags),
        Prefetch("code_links", queryset=CodeLink.objects.order_by("kind", "id")),
        Prefetch(
            "summaries",
            queryset=Summary.objects.filter(status=Summary.Status.PUBLISHED),
            to_attr="published_summaries",
        ),
        Prefetch("images", queryset=PaperImage.objects.order_by("kind", "position")),
    )


def summaries_by_language(summaries: list[Summary]) -> list[tuple[str, list[Summary]]]:
    """Summaries grouped by language, the reader's language first, then the
    order of the site's languages, each group in summary/translation/takeaways order."""
    kind_order = [Summary.Kind.SUMMARY, Summary.Kind.TAKEAWAYS, Summary.Kind.TRANSLATION]
    groups: dict[str, list[Summary]] = {}
    for summary in sorted(summaries, key=lambda s: kind_order.index(s.kind)):
        groups.setdefault(summary.language, []).append(summary)
    reader = (translation.get_language() or "en").lower()

    def rank(language: str) -> tuple[int, str]:
        return (0 if language.lower() == reader else 1, language)

    return sorted(groups.items(), key=lambda item: rank(item[0]))


# Counting every tag's or category's papers reads every link row (seconds at a
# million papers): the counts are kept apart from the catalog version and lag it
# by up to CATALOG_COUNTS_SECONDS, refreshed by a task while the old ones are served.


def tags_with_counts() -> list[Tag]:
    from catalog.tasks import refresh_catalog_counts  # the tasks module imports this one

    return lagging_read("tags-with-counts", count_tags, refresh=refresh_catalog_counts.delay)


def categories_with_counts() -> list[Category]:
    from catalog.tasks import refresh_catalog_counts

    return lagging_read(
        "categories-with-counts", count_categories, refresh=refresh_catalog_counts.delay
    )


def count_tags() -> list[Tag]:
    visible = Q(papers__is_visible=True, papers__merged_into__isnull=True)
    return list(Tag.objects.annotate(paper_count=Count("papers", filter=visible)).order_by("name"))


def count_categories() -> list[Category]:
    visible = Q(papers__is_visible=True, papers__merged_into__isnull=True)
    categories = (
        Category.objects.annotate(paper_count=Count("papers", filter=visible))
        .filter(paper_count__gt=0)
        .order_by("code")
    )
    return list(categories)


def refresh_counts() -> None:
    """Recount tags and categories for the index pages (the task's work)."""
    store_lagging_read("tags-with-counts", count_tags)
    store_lagging_read("categories-with-counts", count_categories)
