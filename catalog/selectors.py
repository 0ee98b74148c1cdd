"""Reads for the public pages; each owns the joins its page needs."""

from django.conf import settings
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import QueryDict
from django.utils import translation

from catalog.cache import cached_read
from catalog.filters import PaperFilter
from catalog.models import Category, CodeLink, Paper, PaperAuthor, PaperImage, Summary, Tag


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
        Prefetch(
            "code_links",
            queryset=CodeLink.objects.filter(kind=CodeLink.Kind.OFFICIAL).order_by("id"),
            to_attr="official_code_links",
        ),
    ]
    if settings.PREVIEW_LIST_THUMBNAILS:
        first_pages = PaperImage.objects.filter(kind=PaperImage.Kind.FIRST_PAGE, position=0)
        related.append(Prefetch("images", queryset=first_pages, to_attr="thumbnails"))
    return papers.select_related("primary_category").prefetch_related(*related)


def paper_for_page(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Everything the paper page shows; published summaries only."""
    return papers.select_related("primary_category").prefetch_related(
        Prefetch(
            "paperauthor_set",
            queryset=PaperAuthor.objects.select_related("author").order_by("position"),
            to_attr="ordered_authors",
        ),
        Prefetch("categories", queryset=Category.objects.order_by("code")),
        Prefetch("tags", queryset=Tag.objects.order_by("name")),
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


# Counting every tag's or category's papers reads every row that links them
# (a second at a million papers): counts are computed once per catalog version.


def tags_with_counts() -> list[Tag]:
    visible = Q(papers__is_visible=True, papers__merged_into__isnull=True)
    tags = Tag.objects.annotate(paper_count=Count("papers", filter=visible)).order_by("name")
    return cached_read("tags-with-counts", lambda: list(tags))


def categories_with_counts() -> list[Category]:
    visible = Q(papers__is_visible=True, papers__merged_into__isnull=True)
    categories = (
        Category.objects.annotate(paper_count=Count("papers", filter=visible))
        .filter(paper_count__gt=0)
        .order_by("code")
    )
    return cached_read("categories-with-counts", lambda: list(categories))
