"""The API's reads: the list page's filters and joins (catalog.selectors), paged by cursor."""

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.db import connection
from django.db.models import Prefetch, Q, QuerySet
from django.db.models.functions import Coalesce, Upper
from django.http import Http404, QueryDict

from api import cursors
from catalog import arxiv_ids
from catalog.cache import canonical_query
from catalog.filters import LIST_PARAMETERS, PaperFilter
from catalog.models import Category, Paper
from catalog.pagination import EXACT_COUNT_LIMIT, RowCount, estimated_count
from catalog.passages import Passage, passages
from catalog.selectors import filter_papers, visible_papers_for_page, with_list_related

if TYPE_CHECKING:
    from catalog.selectors import PagePaper

P = TypeVar("P", bound=Paper)

# The largest id PostgreSQL's bigint holds: a bigger number names no paper.
MAX_ID = 2**63 - 1
# A DOI (10.<registrant>/<suffix>), as written or as a doi.org address.
DOI = re.compile(r"10\.\d{4,9}/\S+")
DOI_PREFIX = re.compile(r"^(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/)", re.IGNORECASE)
# The DOI arXiv registers for each of its papers.
ARXIV_DOI = re.compile(r"10\.48550/arxiv\.(?P<id>.+)", re.IGNORECASE)


class FilterError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("These parameters are not valid.")
        self.errors = errors


@dataclass(frozen=True)
class ListPage:
    rows: list[Paper]
    next_cursor: str | None
    previous_cursor: str | None
    total: int
    total_is_estimate: bool
    # A relevance-sorted search ranks only the newest SEARCH_RELEVANCE_CANDIDATES
    # matches: that number, and whether the search matched as many (or more).
    ranked_of: int | None
    capped: bool
    # A search of the full texts: each row's passage (catalog.passages), by paper
    # id; None for any other list.
    passages: "dict[int, Passage] | None" = None


def paper_page(
    params: QueryDict,
    *,
    papers: QuerySet[Paper],
    cursor: str | None,
    limit: int,
    whole_catalog: bool = False,
) -> ListPage:
    """One page of a list with the list page's filters applied, in the list's order,
    with the list's total: params are the filter's parameters as the API read them
    (its schema, api.schemas.PaperFilters), put as the list page reads a query
    string; whole_catalog when papers are every visible paper, whose totals by
    one tag or category are kept counted (catalog.counts).

    Queries: the page (primary category, official code link, author names and
    the list's total, counted up to EXACT_COUNT_LIMIT, in its rows), its tags and
    its categories; a chosen tag or category is looked up once more each, when
    the filter checks it. Past EXACT_COUNT_LIMIT the total is the planner's
    estimate, one query more (kept until the catalog changes).
    """
    paper_filter = filter_papers(canonical_query(params, **LIST_PARAMETERS), papers=papers)
    if not paper_filter.is_valid():
        raise FilterError({name: list(errors) for name, errors in paper_filter.errors.items()})
    ranked = is_ranked(paper_filter)
    if ranked:
        offset, pinned = cursors.ranked_position(cursor)
        # Before the filter sorts: a search ranks its candidates from these.
        paper_filter.queryset = papers.filter(added_at__lte=pinned)
    listed = paper_filter.qs
    maintained = paper_filter.maintained_total(within="all") if whole_catalog else None
    ranked_of = settings.SEARCH_RELEVANCE_CANDIDATES if paper_filter.ranks_newest_only else None
    # The ranked candidates are few: counted whole, they say whether the cap was met.
    count_limit = ranked_of or EXACT_COUNT_LIMIT
    rows = with_list_related(listed).prefetch_related(
        Prefetch("categories", queryset=Category.objects.order_by("code"))
    )
    if maintained is None:
        rows = rows.annotate(capped_count=RowCount(_counted(listed, up_to=count_limit)))
    if ranked:
        page = cursors.ranked_page(rows, offset=offset, pinned=pinned, limit=limit)
    else:
        page = cursors.dated_page(rows, cursor=cursor, limit=limit)
    total, estimated = maintained, False
    if total is None:
        if page.rows:
            capped: int = page.rows[0].capped_count  # type: ignore[attr-defined]
        else:
            capped = _counted(listed, up_to=count_limit).count()
        total, estimated = _total(listed, capped=capped, up_to=count_limit)
    searched = paper_filter.form.cleaned_data.get("q", "").strip()
    found = passages(page.rows, searched) if searched and paper_filter.in_fulltext else None
    return ListPage(
        passages=found,
        rows=page.rows,
        next_cursor=page.next_cursor,
        previous_cursor=page.previous_cursor,
        total=total,
        total_is_estimate=estimated,
        ranked_of=ranked_of,
        capped=ranked_of is not None and total >= ranked_of,
    )


def is_ranked(paper_filter: PaperFilter) -> bool:
    """Whether the list is paged by position: in any order but newest first (a
    relevance-ranked search, trending, votes, added, updated). The cursor walks the date index
    only for a newest-first list."""
    sort = paper_filter.sorted_by
    searched = paper_filter.form.cleaned_data.get("q", "").strip()
    return sort in ("trending", "votes", "added", "updated") or (
        sort == "relevance" and bool(searched)
    )


def _counted(listed: QuerySet[Paper], *, up_to: int) -> QuerySet[Paper, Any]:
    rows = listed.order_by().values("pk")
    if connection.vendor != "postgresql":
        return rows  # no estimate to fall back on: always counted exactly
    return rows[: up_to + 1]


def _total(listed: QuerySet[Paper], *, capped: int, up_to: int) -> tuple[int, bool]:
    """The total and whether it is an estimate, from the count capped at up_to + 1."""
    if connection.vendor != "postgresql" or capped <= up_to:
        return capped, False
    return max(estimated_count(listed.order_by().values("pk")), capped), True


@dataclass(frozen=True)
class Ref:
    """What a reference to a paper names: a stable id, an arXiv id (with the
    version asked for, if any) or a DOI (upper-cased, as DOIs compare)."""

    given: str
    pk: int | None = None
    arxiv_id: str | None = None
    version: int | None = None
    doi: str | None = None


def parse_ref(ref: str) -> Ref | None:
    """The reference as a stable id, an arXiv id in any form people paste (the DOI
    arXiv registers, 10.48550/arXiv.<id>, among them) or a DOI; None for
    anything else."""
    text = ref.strip()
    if text.isascii() and text.isdigit():
        pk = int(text)
        return Ref(given=ref, pk=pk) if pk <= MAX_ID else None
    doi = DOI_PREFIX.sub("", text)
    if DOI.fullmatch(doi):
        arxiv_doi = ARXIV_DOI.fullmatch(doi)
        parsed = arxiv_ids.split_version(arxiv_doi.group("id")) if arxiv_doi else None
        if parsed is None:
            return Ref(given=ref, doi=doi.upper())
    else:
        parsed = arxiv_ids.split_version(text)
    if parsed is None:
        return None
    return Ref(given=ref, arxiv_id=parsed[0], version=parsed[1])


def unknown_version(paper: Paper, ref: Ref) -> str | None:
    """Why the version the reference asks for is not one of the paper's, or None
    when it is (or none was asked for). Paper.version is the newest version known;
    without it only v0 is known not to exist."""
    if ref.version is None:
        return None
    if paper.version is None:
        if ref.version >= 1:
            return None
        return f"arXiv {paper.arxiv_id} has no version 0; versions start at 1."
    if 1 <= ref.version <= paper.version:
        return None
    known = "is version 1 only" if paper.version == 1 else f"are versions 1 to {paper.version}"
    return f"arXiv {paper.arxiv_id} has no version {ref.version}; there {known}."


def paper_by_ref(ref: str, *, papers: QuerySet[P]) -> P:
    """The visible paper (of papers) an arXiv id (any form people paste, with or
    without version), a DOI or a stable id names; a stable id of a paper merged
    into another names that one. Http404 with a message otherwise, an arXiv
    version the paper does not have included."""
    parsed = parse_ref(ref)
    if parsed is None:
        if ref.isascii() and ref.isdigit():
            raise Http404(f"There is no paper with id {ref}.")
        raise Http404(f"{ref[:100]!r} is neither an arXiv id, a DOI nor a paper id.")
    if parsed.pk is not None:
        # The paper itself, or the one it was merged into: a one-row subquery, so
        # the lookup stays on the primary key (an OR with EXISTS would scan every row).
        target = Paper.objects.filter(pk=parsed.pk).values(target=Coalesce("merged_into_id", "pk"))
        found = papers.filter(pk__in=target).first()
        if found is None:
            raise Http404(f"There is no paper with id {parsed.pk}.")
        return found
    if parsed.doi is not None:
        found = papers.alias(doi_key=Upper("doi")).filter(doi_key=parsed.doi).first()
        if found is None:
            raise Http404(f"There is no paper with DOI {ref.strip()[:200]} here.")
        return found
    found = papers.filter(arxiv_id=parsed.arxiv_id).first()
    if found is None:
        raise Http404(f"There is no paper with arXiv id {parsed.arxiv_id} here.")
    problem = unknown_version(found, parsed)
    if problem is not None:
        raise Http404(problem)
    return found


def papers_by_refs(refs: list[str], *, papers: QuerySet[Paper]) -> tuple[list[Paper], list[str]]:
    """The visible papers (of papers) the references name, in their order (a paper
    named twice is listed twice), with the list's related rows fetched; and the
    references that name none, as given.

    Queries: the papers, their tags and their categories; first, when stable ids
    were given, which papers those ids were merged into.
    """
    parsed = [(given, parse_ref(given)) for given in refs]
    known = [ref for _, ref in parsed if ref is not None]
    pks = {ref.pk for ref in known if ref.pk is not None}
    targets: dict[int, int] = {}
    if pks:
        targets = dict(
            Paper.objects.filter(pk__in=pks).values_list("pk", Coalesce("merged_into_id", "pk"))
        )
    arxiv = {ref.arxiv_id for ref in known if ref.arxiv_id}
    dois = {ref.doi for ref in known if ref.doi}
    wanted = Q(pk__in=set(targets.values())) | Q(arxiv_id__in=arxiv) | Q(doi_key__in=dois)
    rows = (
        with_list_related(papers.alias(doi_key=Upper("doi")).filter(wanted))
        .prefetch_related(Prefetch("categories", queryset=Category.objects.order_by("code")))
        .order_by()
    )
    by_pk: dict[int, Paper] = {}
    by_arxiv: dict[str, Paper] = {}
    by_doi: dict[str, Paper] = {}
    if targets or arxiv or dois:
        for row in rows:
            by_pk[row.pk] = row
            if row.arxiv_id:
                by_arxiv[row.arxiv_id] = row
            if row.doi:
                by_doi.setdefault(row.doi.upper(), row)
    found: list[Paper] = []
    missing: list[str] = []
    for given, ref in parsed:
        paper: Paper | None = None
        if ref is not None and ref.pk is not None and ref.pk in targets:
            paper = by_pk.get(targets[ref.pk])
        elif ref is not None and ref.arxiv_id is not None:
            paper = by_arxiv.get(ref.arxiv_id)
            if paper is not None and unknown_version(paper, ref) is not None:
                paper = None
        elif ref is not None and ref.doi is not None:
            paper = by_doi.get(ref.doi)
        if paper is None:
            missing.append(given)
        else:
            found.append(paper)
    return found, missing


def paper_with_everything(ref: str) -> "PagePaper":
    return paper_by_ref(ref, papers=visible_papers_for_page())
