"""Reads for the public pages; each owns the joins its page needs."""

import datetime
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, cast

from django.conf import settings
from django.db.models import Count, F, Max, OuterRef, Prefetch, QuerySet, Subquery, TextField, Value
from django.http import QueryDict
from django.urls import reverse
from django.utils import translation

from catalog.credits import with_credits
from catalog.filters import PaperFilter, authored_by
from catalog.highlight import with_marks
from catalog.models import (
    NEWEST_FIRST,
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperImage,
    PaperTag,
    SimilarPaper,
    Summary,
    Tag,
)
from catalog.reading import with_figure_strip
from core.sql import joined_rows, split_rows

FEED_LENGTH = 50
# How many co-authors and tags an author's page names.
AUTHOR_COAUTHORS = 10
AUTHOR_TAGS = 10
# Co-authors and tags are counted over the author's newest papers only: over all
# 2,173 papers of a prolific author they cost 165 ms at a million papers, 17 ms so.
AUTHOR_CREDITS_WITHIN = 500
# The language abstracts are written in: readers of any other see their own first.
ABSTRACT_LANGUAGE = "en"
PaperCategory = Paper.categories.through


class PageParts(TypedDict):
    """What paper_for_page adds to each paper."""

    category_rows: str | None
    published_summaries: list[Summary]
    has_fulltext: bool
    figure_rows: str | None


if TYPE_CHECKING:
    from core.typing import WithAnnotations

    PagePaper: TypeAlias = WithAnnotations[Paper, PageParts]


def filter_papers(params: QueryDict, *, papers: QuerySet[Paper] | None = None) -> PaperFilter:
    """The list's GET parameters applied to visible papers (or to `papers`)."""
    return PaperFilter(params, queryset=papers if papers is not None else Paper.objects.visible())


def with_list_related(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """What a list entry shows, in a fixed number of queries whatever the page size."""
    related = [Prefetch("tags", queryset=Tag.objects.order_by("name"))]
    # An entry links one official repository and may show its first page: each a
    # subquery of the page's own query, not a query of its own.
    official_code = CodeLink.objects.filter(paper=OuterRef("pk"), kind=CodeLink.Kind.OFFICIAL)
    papers = papers.select_related("primary_category").annotate(
        official_code_url=Subquery(official_code.order_by("id").values("url")[:1])
    )
    if settings.PREVIEW_LIST_THUMBNAILS:
        # The first page, else the first figure ("page" sorts after "figure").
        pictures = PaperImage.objects.filter(paper=OuterRef("pk")).order_by("-kind", "position")
        papers = papers.annotate(thumbnail=Subquery(pictures.values("image")[:1]))
    return papers.prefetch_related(*related)


def for_cards(papers: QuerySet[Paper], *, searched: str) -> QuerySet[Paper]:
    """What a card shows beyond with_list_related, as columns of the page's own
    rows: the search's matches marked (catalog.highlight) and, for a reader of
    another language than the abstract's, the paper's published summary in
    their language (else its translation) as `lead_body`, `lead_kind` and
    `lead_backend`; None where there is none."""
    papers = with_marks(papers, searched)
    language = (translation.get_language() or settings.LANGUAGE_CODE).lower()
    if language == ABSTRACT_LANGUAGE:
        return papers.annotate(
            **{
                name: Value(None, TextField())
                for name in ("lead_body", "lead_kind", "lead_backend")
            }
        )
    leads = Summary.objects.filter(
        paper=OuterRef("pk"),
        language=language,
        status=Summary.Status.PUBLISHED,
        kind__in=[Summary.Kind.SUMMARY, Summary.Kind.TRANSLATION],
    ).order_by("kind")  # "summary" before "translation"
    return papers.annotate(
        lead_body=Subquery(leads.values("body")[:1]),
        lead_kind=Subquery(leads.values("kind")[:1]),
        lead_backend=Subquery(leads.values("backend")[:1]),
    )


def newest_listed_at(papers: QuerySet[Paper]) -> datetime.datetime | None:
    """When the newest of these papers was listed, or None if there are none."""
    return papers.order_by(*NEWEST_FIRST).values_list("listed_at", flat=True).first()


def paper_for_page(papers: QuerySet[Paper]) -> "QuerySet[PagePaper]":
    """Everything the paper page shows but its similar papers; published summaries only,
    and who found the paper (catalog.credits).

    The categories come as one column of the paper's own row (see
    page_categories), which leaves the page a query for its similar papers.
    """
    in_categories = PaperCategory.objects.filter(paper=OuterRef("pk"))
    categories = joined_rows(in_categories, by="paper", fields=["category__code", "category__name"])
    page = (
        papers.select_related("primary_category")
        .annotate(category_rows=categories)
        .prefetch_related(
            Prefetch("tags", queryset=Tag.objects.order_by("name")),
            Prefetch("code_links", queryset=CodeLink.objects.order_by("kind", "id")),
            Prefetch(
                "summaries",
                queryset=Summary.objects.filter(status=Summary.Status.PUBLISHED),
                to_attr="published_summaries",
            ),
            Prefetch("images", queryset=PaperImage.objects.order_by("kind", "position")),
        )
    )
    # Who suggested or added it, as columns of the same row (catalog/credits.py),
    # and its full text's first figures likewise (catalog/reading.py).
    shown = with_figure_strip(with_credits(page))
    # The plugin types the annotation; what a Prefetch's to_attr adds it does not follow.
    return cast("QuerySet[PagePaper]", shown)


@functools.cache
def visible_papers_for_page() -> "QuerySet[PagePaper]":
    """paper_for_page of the visible papers, built once a process and cloned by
    each lookup (never evaluated itself): building its subqueries took a paper
    page more time than running them (BENCHMARKS.md, "The paper page")."""
    return paper_for_page(Paper.objects.visible())


def page_categories(paper: "PagePaper") -> list[Category]:
    """The paper's categories by code, read from the column paper_for_page adds."""
    found = [Category(code=code, name=name) for code, name in split_rows(paper.category_rows)]
    return sorted(found, key=lambda category: category.code)


@dataclass(frozen=True)
class TagLink:
    name: str
    slug: str

    def get_absolute_url(self) -> str:
        return reverse("catalog:tag", args=[self.slug])


# The authors a similar paper's "why" names, at most (the words are at most three too).
SHARED_AUTHORS_SHOWN = 3


@dataclass
class SimilarEntry:
    """A similar paper as its page lists it, with why it is there."""

    paper: Paper
    score: float
    tags: list[TagLink]
    shared_tags: list[TagLink]
    terms: list[str]
    shared_authors: list[str]


def similar_papers(*, paper: Paper) -> list[SimilarEntry]:
    """Up to SIMILAR_PAPERS visible papers most like this one, in one query: the
    neighbour rows with the papers and each paper's tags as a column, each
    with what the two share: the words both weigh most, authors and tags. The
    paper's own tags must have been prefetched (paper_for_page does)."""
    tags = joined_rows(
        PaperTag.objects.filter(paper=OuterRef("similar_id")),
        by="paper",
        fields=["tag__slug", "tag__name"],
    )
    rows = (
        SimilarPaper.objects.filter(
            paper=paper, similar__is_visible=True, similar__merged_into__isnull=True
        )
        .select_related("similar")
        .annotate(tag_rows=tags)
        .order_by("rank")[: settings.SIMILAR_PAPERS]
    )
    own = {tag.slug for tag in paper.tags.all()}
    authors = set(paper.author_list)
    entries = []
    for row in rows:
        links = sorted(
            (TagLink(name=name, slug=slug) for slug, name in split_rows(row.tag_rows)),
            key=lambda link: link.name,
        )
        entries.append(
            SimilarEntry(
                paper=row.similar,
                score=row.score,
                tags=links,
                shared_tags=[link for link in links if link.slug in own],
                terms=list(row.terms or []),
                shared_authors=[name for name in row.similar.author_list if name in authors][
                    :SHARED_AUTHORS_SHOWN
                ],
            )
        )
    return entries


def summaries_by_language(summaries: list[Summary]) -> list[tuple[str, list[Summary]]]:
    """Summaries grouped by language, the reader's language first, then the
    order of the site's languages, each group in summary/translation/takeaways order."""
    kind_order: list[str] = [Summary.Kind.SUMMARY, Summary.Kind.TAKEAWAYS, Summary.Kind.TRANSLATION]
    groups: dict[str, list[Summary]] = {}
    for summary in sorted(summaries, key=lambda s: kind_order.index(s.kind)):
        groups.setdefault(summary.language, []).append(summary)
    reader = (translation.get_language() or "en").lower()

    def rank(language: str) -> tuple[int, str]:
        return (0 if language.lower() == reader else 1, language)

    return sorted(groups.items(), key=lambda item: rank(item[0]))


def feed_items(*, papers: QuerySet[Paper]) -> list[Paper]:
    """The newest papers of a list, with what an RSS/Atom entry shows."""
    tags = Prefetch("tags", queryset=Tag.objects.order_by("name"))
    return list(papers.prefetch_related(tags)[:FEED_LENGTH])


def author_papers(*, author: Author) -> QuerySet[Paper]:
    return authored_by(Paper.objects.visible(), author)


def latest_author_papers(*, author: Author) -> "QuerySet[PaperAuthor, Any]":
    """The ids of the author's AUTHOR_CREDITS_WITHIN newest visible papers,
    read off the links' own index (AUTHOR_NEWEST_FIRST's)."""
    links = PaperAuthor.objects.filter(author=author, visible=True)
    return links.order_by("-listed_at", "-paper_id").values("paper_id")[:AUTHOR_CREDITS_WITHIN]


class Credited(TypedDict):
    """A co-author or a tag on an author's page: its name, its address's slug,
    and on how many of the author's visible papers it is."""

    name: str
    slug: str
    paper_count: int


def frequent_coauthors(*, author: Author) -> list[Credited]:
    """The authors most often credited beside the author on their latest visible
    papers (AUTHOR_CREDITS_WITHIN), most first, then the most recent (then the
    first known: one paper's co-authors tie on both). Counted
    by id off the (paper, author) index and named after the limit: ordered by
    name, every one of a prolific author's co-authors (about 2,000) had to be
    read to name ten: 36 ms and 11,643 buffers at a million papers, 12 ms and
    3,615 so (BENCHMARKS.md, "Community pages at a million papers")."""
    name = Author.objects.filter(pk=OuterRef("author_id")).order_by()
    rows = (
        PaperAuthor.objects.filter(paper__in=latest_author_papers(author=author))
        .exclude(author=author)
        .values("author_id")
        .annotate(paper_count=Count("paper_id"), latest=Max("paper_id"))
        .order_by("-paper_count", "-latest", "author_id")
        # Subqueries in the select list are evaluated after the LIMIT, for ten rows.
        .values(
            "paper_count",
            name=Subquery(name.values("name")),
            slug=Subquery(name.values("slug")),
        )
    )
    return cast("list[Credited]", list(rows[:AUTHOR_COAUTHORS]))


def author_tags(*, author: Author) -> list[Credited]:
    """The tags most often on the author's latest visible papers
    (AUTHOR_CREDITS_WITHIN), most first."""
    rows = (
        PaperTag.objects.filter(paper__in=latest_author_papers(author=author))
        .values(name=F("tag__name"), slug=F("tag__slug"))
        .annotate(paper_count=Count("paper_id"))
        .order_by("-paper_count", "name")
    )
    return cast("list[Credited]", list(rows[:AUTHOR_TAGS]))
