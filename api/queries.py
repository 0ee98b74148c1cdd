"""The API's reads: the list page's filters and joins (catalog.selectors), paged by cursor."""

from typing import TYPE_CHECKING, TypeVar

from django.db.models import Prefetch, QuerySet
from django.db.models.functions import Coalesce
from django.http import Http404, QueryDict

from api import cursors
from catalog import arxiv_ids
from catalog.cache import canonical_query
from catalog.filters import LIST_PARAMETERS
from catalog.models import Category, Paper
from catalog.selectors import filter_papers, paper_for_page, with_list_related

if TYPE_CHECKING:
    from catalog.selectors import PagePaper

P = TypeVar("P", bound=Paper)

# The largest id PostgreSQL's bigint holds: a bigger number names no paper.
MAX_ID = 2**63 - 1


class FilterError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("These parameters are not valid.")
        self.errors = errors


def paper_page(
    params: QueryDict, *, papers: QuerySet[Paper], cursor: str | None, limit: int
) -> tuple[list[Paper], str | None]:
    """One page of a list with the list page's filters applied, in the list's order:
    params are the filter's parameters as the API read them (its schema,
    api.schemas.PaperFilters), put as the list page reads a query string.

    Queries: the page (primary category, official code link and author names in
    its rows), its tags and its categories; a chosen tag or category is looked
    up once more each, when the filter checks it.
    """
    paper_filter = filter_papers(canonical_query(params, **LIST_PARAMETERS), papers=papers)
    if not paper_filter.is_valid():
        raise FilterError({name: list(errors) for name, errors in paper_filter.errors.items()})
    rows = with_list_related(paper_filter.qs).prefetch_related(
        Prefetch("categories", queryset=Category.objects.order_by("code"))
    )
    # The cursor walks the date index only for a newest-first list; any other
    # order the filter gives (relevance, or a sort added later) is paged by position.
    by_date = not paper_filter.ranks_newest_only and paper_filter.form.cleaned_data.get("sort") in (
        None,
        "",
        "newest",
        "relevance",
    )
    return cursors.page(rows, cursor=cursor, limit=limit, ranked=not by_date)


def paper_by_ref(ref: str, *, papers: QuerySet[P]) -> P:
    """The visible paper (of papers) an arXiv id (any form people paste, with or
    without version) or a stable id names; a stable id of a paper merged into
    another names that one. Http404 with a message otherwise."""
    if ref.isascii() and ref.isdigit():
        pk = int(ref)
        if pk > MAX_ID:
            raise Http404(f"There is no paper with id {ref}.")
        # The paper itself, or the one it was merged into: a one-row subquery, so
        # the lookup stays on the primary key (an OR with EXISTS would scan every row).
        target = Paper.objects.filter(pk=pk).values(target=Coalesce("merged_into_id", "pk"))
        found = papers.filter(pk__in=target).first()
        if found is None:
            raise Http404(f"There is no paper with id {pk}.")
        return found
    parsed = arxiv_ids.split_version(ref)
    if parsed is None:
        raise Http404(f"{ref[:100]!r} is neither an arXiv id nor a paper id.")
    found = papers.filter(arxiv_id=parsed[0]).first()
    if found is None:
        raise Http404(f"There is no paper with arXiv id {parsed[0]} here.")
    return found


def paper_with_everything(ref: str) -> "PagePaper":
    return paper_by_ref(ref, papers=paper_for_page(Paper.objects.visible()))
