"""Numbered pages of a paper list that stay cheap over millions of papers.

Counting every match of a broad filter reads every matching row (about half a
second at a million papers), so a list is counted exactly only up to
EXACT_COUNT_LIMIT; past that the total is PostgreSQL's estimate, shown as
"about N". Deep pages skip their offset on the narrow (listed_at, id) index
and read only the rows they show.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import EmptyResultSet
from django.core.paginator import EmptyPage, Page, Paginator
from django.db import connection, connections
from django.db.models import IntegerField, Max, Min, Q, QuerySet, Subquery
from django.utils.functional import cached_property

from catalog.cache import cached_read
from catalog.models import Paper

EXACT_COUNT_LIMIT = 1000
# No list reaches this page (200 million papers at 20 a page; arXiv holds under
# 3 million): a larger number is past the end without asking the database,
# whose offset would overflow a bigint for the largest.
MAX_PAGE_NUMBER = 10_000_000
# A sampled estimate reads this many papers, or a hundredth of the catalog if
# more, in SAMPLE_STRETCHES stretches of ids spread over the catalog (so old and
# new papers both count): a list past EXACT_COUNT_LIMIT then has, at a hundredth,
# at least about ten of its papers in the sample, within 2x of its total.
SAMPLE_PAPERS = 2_000
SAMPLE_STRETCHES = 10

# The rows a queryset gives: model instances, with whatever it annotated.
Row = TypeVar("Row")


class RowCount(Subquery):
    """How many rows a queryset has, as a scalar subquery of another query."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) AS counted)"
    output_field = IntegerField()


if TYPE_CHECKING:
    # Generic in the stubs alone: at run time Paginator takes no type arguments.
    PaperPaginator = Paginator[Paper]
else:
    PaperPaginator = Paginator


class CatalogPaginator(PaperPaginator):
    object_list: QuerySet[Paper]

    def __init__(
        self,
        object_list: QuerySet[Paper],
        per_page: int,
        *,
        count: int | None = None,
        estimate: Callable[[], int] | None = None,
    ) -> None:
        """count: the list's exact total where it is known without counting;
        estimate: how to estimate a total past EXACT_COUNT_LIMIT, if not by
        the planner's estimate of the list's query."""
        super().__init__(object_list, per_page)
        self.estimate = estimate
        self.count_is_exact = True
        if count is not None:
            self.count = count

    @cached_property
    def count(self) -> int:
        """Only asked for when the page has no rows to carry the count (see page())."""
        return self._total(self._counted_rows().count())

    def _counted_rows(self) -> QuerySet[Paper, Mapping[str, object]]:
        rows = self.object_list.order_by().values("pk")
        if connection.vendor != "postgresql":
            return rows  # no estimate to fall back on: always counted exactly
        return rows[: EXACT_COUNT_LIMIT + 1]

    def _total(self, capped: int) -> int:
        if connection.vendor != "postgresql" or capped <= EXACT_COUNT_LIMIT:
            return capped
        self.count_is_exact = False
        if self.estimate is not None:
            return max(self.estimate(), capped)
        return max(estimated_count(self.object_list.order_by().values("pk")), capped)

    def validate_number(self, number: int | float | str) -> int:
        self.count  # noqa: B018 - counting decides whether the count is exact
        if not self.count_is_exact and int(number) > self.num_pages:
            # The estimate may be short of the truth: only counting can tell.
            self.settle_count()
        return super().validate_number(number)

    def page(self, number: int | str) -> Page[Paper]:
        number = int(number)
        if number > MAX_PAGE_NUMBER:
            raise EmptyPage("That page contains no results")
        offset = (number - 1) * self.per_page
        rows: Sequence[Paper]
        if "count" in self.__dict__:
            rows = rows_by_ids(self.object_list, offset, offset + self.per_page)
        else:
            # Each row carries the capped count, computed once by PostgreSQL as an
            # uncorrelated subquery: the count costs no query of its own.
            counted = self.object_list.annotate(capped_count=RowCount(self._counted_rows()))
            rows = counted_rows = rows_by_ids(counted, offset, offset + self.per_page)
            if counted_rows:
                self.count = self._total(counted_rows[0].capped_count)
        number = self.validate_number(number)
        if not rows and number > 1 and not self.count_is_exact:
            self.settle_count()
            raise EmptyPage("That page contains no results")
        return Page(rows, number, self)

    def settle_count(self) -> None:
        """Count exactly: a reader asked for a page past the estimate's end."""
        self.count = self.object_list.order_by().count()
        self.count_is_exact = True
        self.__dict__.pop("num_pages", None)


def rows_by_ids(papers: QuerySet[Any, Row], start: int, stop: int) -> list[Row]:
    """papers[start:stop], found over ids alone (the offset walked, the filters
    met from indexes), then only those rows read: otherwise PostgreSQL may read
    whole papers, newest first, until enough of them pass the filters."""
    return list(papers.filter(pk__in=papers.values("pk")[start:stop]))


def estimated_count(rows: QuerySet[Any, Any]) -> int:
    """The planner's row estimate for a query, rounded to two significant figures;
    kept in the catalog cache until the catalog changes, since planning a
    reader's feed again costs as much as a query of its own."""
    try:
        sql, params = rows.query.get_compiler(using=rows.db).as_sql()
    except EmptyResultSet:  # a filter Django knows matches nothing (pk__in=[])
        return 0
    return cached_read(
        "estimate", lambda: _planner_estimate(rows.db, sql, params), sql, repr(params)
    )


def sampled_count(rows: QuerySet[Any, Any]) -> int:
    """How many rows a query of papers has, estimated from a sample of the
    catalog (SAMPLE_PAPERS) and rounded as the planner's estimate is: for a
    condition the planner cannot weigh, such as a phrase, which it takes for
    all of its words anywhere (a phrase in 3% of the papers, two words in
    80%). Kept in the catalog cache until the catalog changes."""
    try:
        sql, params = rows.query.get_compiler(using=rows.db).as_sql()
    except EmptyResultSet:
        return 0
    return cached_read("sampled", lambda: _sampled_count(rows), sql, repr(params))


def _sampled_count(rows: QuerySet[Any, Any]) -> int:
    bounds = Paper.objects.using(rows.db).aggregate(low=Min("pk"), high=Max("pk"))
    if bounds["low"] is None:
        return 0
    span = bounds["high"] - bounds["low"] + 1
    stretch = max(SAMPLE_PAPERS, span // 100) // SAMPLE_STRETCHES
    if stretch * SAMPLE_STRETCHES >= span:
        return int(rows.count())
    step = span // SAMPLE_STRETCHES
    sample = Q()
    for n in range(SAMPLE_STRETCHES):
        start = bounds["low"] + n * step
        sample |= Q(pk__gte=start, pk__lt=start + stretch)
    found = rows.filter(sample).count()
    return _rounded(found * span / (stretch * SAMPLE_STRETCHES))


def _rounded(estimate: float) -> int:
    """Two significant figures past 100: an estimate claims no more."""
    if estimate < 100:
        return round(estimate)
    magnitude: int = 10 ** (int(math.log10(estimate)) - 1)  # 10 or more
    return round(estimate / magnitude) * magnitude


def _planner_estimate(alias: str, sql: str, params: tuple[Any, ...]) -> int:
    with connections[alias].cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        (plan,) = cursor.fetchone()  # psycopg decodes the JSON
    return _rounded(int(plan[0]["Plan"]["Plan Rows"]))
