"""The public list's GET parameters, shared by `/`, tag and category pages, the
personal feed and the search feeds."""

import datetime
import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import django_filters
from django import forms
from django.conf import settings
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import (
    DateTimeField,
    Exists,
    ExpressionWrapper,
    F,
    Lookup,
    OrderBy,
    OuterRef,
    Q,
    QuerySet,
    Value,
)
from django.db.models.sql.compiler import SQLCompiler
from django.forms.renderers import BaseRenderer
from django.forms.utils import flatatt
from django.http import QueryDict
from django.template.loader import get_template
from django.utils import timezone, translation
from django.utils.functional import SimpleLazyObject, cached_property
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from catalog.cache import cached_read
from catalog.counts import with_category_counts, with_tag_counts
from catalog.models import (
    NEWEST_FIRST,
    Author,
    Category,
    Paper,
    PaperQuerySet,
    PaperTag,
    Tag,
    tag_label,
)
from catalog.pagination import estimated_count, sampled_count
from catalog.search import (
    TextMatches,
    estimate_text_matches,
    has_phrase,
    papers_near_query,
    relevance,
    search,
    search_rank,
)
from catalog.trending import DEFAULT_WINDOW, ordering
from core.forms import choice_field
from core.fragments import Fragments, digest, template_digest

if TYPE_CHECKING:
    from catalog.counts import CountedAuthor, CountedCategory, CountedTag

PERIOD_DAYS = {"1d": 1, "7d": 7, "30d": 30, "365d": 365}
TRENDING_WINDOWS = [
    ("24h", _("Last 24 hours")),
    ("7d", _("Last 7 days")),
    ("30d", _("Last 30 days")),
]
# The upvote counts sort=votes ranks by, by window (the trending sort's windows).
VOTE_COLUMNS = {"24h": "votes_24h", "7d": "votes_7d", "30d": "votes_30d"}
MAX_QUERY_LENGTH = 300
# The sorts by this catalog's own dates, newest first: when a paper came, and
# when anything its pages show last changed (indexes paper_added_at, paper_changed_at).
CHANGE_ORDERINGS = {
    "added": (F("added_at").desc(), F("id").desc()),
    "updated": (F("changed_at").desc(), F("id").desc()),
}
# Newest first in a form no index serves (listed_at moved by nothing): the
# matches of a search are then read from its index and sorted.
SORTED_NEWEST_FIRST = (
    ExpressionWrapper(F("listed_at") + datetime.timedelta(0), output_field=DateTimeField()).desc(),
    F("id").desc(),
)
# Up to this many matches (the planner's estimate) a search reads its matches
# and sorts them rather than walking the newest papers for them. At a million
# papers both cost the same near 5,500 matches: a word in 3,000 papers took
# 23 ms walking 7,300 papers, and 6 ms sorted.
FEW_SEARCH_MATCHES = 6_000


class PaperFilterForm(forms.Form):
    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean()
        if cleaned is None:  # Form.clean() gives cleaned_data; None says "left as it is"
            return None
        # The chosen tags and categories as lists, read once: no choice is a
        # none() queryset, which every later look at (each filter's, the
        # totals', the chips') compiled again.
        for name in ("tag", "category"):
            chosen = cleaned.get(name)
            if isinstance(chosen, QuerySet):
                cleaned[name] = [] if chosen.query.is_empty() else list(chosen)
        start, end = cleaned.get("from"), cleaned.get("to")
        if start and end and start > end:
            self.add_error("to", _("The end date is before the start date."))
            cleaned.pop("to", None)
            cleaned.pop("from", None)
        return cleaned


class OptionsSelectMultiple(forms.SelectMultiple):
    """A multiple select whose options are written out in Python.

    The tag and category selects hold hundreds of options, and the template
    per option of Django's widget cost tens of milliseconds a page; the
    standard library's escape (the one Django's wraps) keeps it under one.
    """

    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: BaseRenderer | None = None,
    ) -> SafeString:
        chosen = set(self.format_value(value))
        options = mark_safe(  # noqa: S308 - every key and label is escaped
            "".join(
                f'<option value="{html.escape(str(key))}"'
                f"{' selected' if str(key) in chosen else ''}>{html.escape(str(label))}</option>"
                for key, label in self.choices
            )
        )
        final_attrs = self.build_attrs(self.attrs, {**(attrs or {}), "multiple": True})
        return format_html('<select name="{}"{}>{}</select>', name, flatatt(final_attrs), options)


# Fields that order a list without narrowing it.
ORDERS = ("sort", "window")


class UtcMomentField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 moment read as UTC: Python takes offsets up to a day, the
    database only up to 15:59, and a moment near year 1 or 9999 may have no UTC
    time at all; either is the reader's mistake, said as one."""

    def to_python(self, value: Any) -> datetime.datetime | None:
        moment: datetime.datetime | None = super().to_python(value)
        if moment is None:
            return None
        try:
            return moment.astimezone(datetime.UTC)
        except OverflowError:
            raise forms.ValidationError(_("Enter a moment between the years 1 and 9999.")) from None


class UtcMomentFilter(django_filters.IsoDateTimeFilter):
    field_class = UtcMomentField


class PaperFilter(django_filters.FilterSet):
    # Chosen tags and categories come with their maintained counts (maintained_total).
    tag = django_filters.ModelMultipleChoiceFilter(
        queryset=with_tag_counts(Tag.objects.all()),
        to_field_name="slug",
        method="filter_tags",
        label=_("Tags"),
        widget=OptionsSelectMultiple,
    )
    category = django_filters.ModelMultipleChoiceFilter(
        queryset=with_category_counts(Category.objects.all()),
        to_field_name="code",
        method="filter_categories",
        label=_("Categories"),
        widget=OptionsSelectMultiple,
    )
    period = django_filters.ChoiceFilter(
        choices=[
            ("1d", _("Last day")),
            ("7d", _("Last 7 days")),
            ("30d", _("Last 30 days")),
            ("365d", _("Last year")),
        ],
        method="filter_period",
        empty_label=_("Any time"),
        label=_("Period"),
    )
    has_code = django_filters.ChoiceFilter(
        choices=[("1", _("With code"))],
        method="filter_has_code",
        empty_label=_("With or without code"),
        label=_("Code"),
    )
    q = django_filters.CharFilter(
        method="filter_search",
        label=_("Search"),
        max_length=MAX_QUERY_LENGTH,
    )
    # Without a choice, a search is sorted by relevance and any other list newest first.
    sort = django_filters.ChoiceFilter(
        choices=[
            ("relevance", _("Best match")),
            ("newest", _("Newest first published")),
            ("trending", _("Trending")),
            ("votes", _("Most upvoted")),
            ("added", _("Newest added here")),
            ("updated", _("Last changed here")),
        ],
        method="filter_noop",
        empty_label=None,
        label=_("Sort"),
    )
    # The trending and votes sorts' window; without one, the last 7 days.
    window = django_filters.ChoiceFilter(
        choices=TRENDING_WINDOWS,
        method="filter_noop",
        empty_label=None,
        label=_("Ranked over"),
    )

    # A client keeping a copy: what came, or changed, since its last read.
    added_since = UtcMomentFilter(field_name="added_at", lookup_expr="gte", label=_("Added since"))
    updated_since = UtcMomentFilter(
        field_name="changed_at", lookup_expr="gte", label=_("Changed since")
    )

    # Set by qs: a relevance sort ranks only the newest matches.
    ranks_newest_only = False
    # Set by filter_search: the papers nearest in meaning to the search, (id, cosine).
    near: list[tuple[int, float]] = []

    class Meta:
        model = Paper
        fields: list[str] = []
        form = PaperFilterForm

    @property
    def form(self) -> forms.Form:
        if not hasattr(self, "_form"):
            form = super().form
            # The options shown come from the cache, read only when a select
            # is rendered, both selects' in one query; a chosen value is still
            # checked against the database.
            self.options = options = SimpleLazyObject(filter_options)
            form.fields["tag"].widget.choices = lambda: options["tag"]
            form.fields["category"].widget.choices = lambda: options["category"]
            # The menu offers what can sort this list, its default first: relevance only
            # with a search (without one it would be newest first, under another name).
            sorts = form.fields["sort"].choices
            if not self.searched:
                sorts = [choice for choice in sorts if choice[0] != "relevance"]
            form.fields["sort"].widget.choices = sorts
        built: forms.Form = self._form  # django-filter's, kept by FilterSet.form
        return built

    @property
    def searched(self) -> str:
        """The search text as given (stripped), valid or not."""
        return str(self.data.get("q", "")).strip() if self.is_bound else ""

    @property
    def in_fulltext(self) -> bool:
        """Whether the search reads the papers' stored full texts too (`in=fulltext`)."""
        self.form.errors  # noqa: B018 - validates the form, filling cleaned_data
        return bool(self.form.cleaned_data.get("in") == "fulltext")

    @property
    def sorted_by(self) -> str:
        """The order the list is in: the one chosen if valid, else the default."""
        self.form.errors  # noqa: B018 - validates the form, filling cleaned_data
        chosen: str | None = self.form.cleaned_data.get("sort")
        return chosen or default_sort(searched=bool(self.searched))

    # django-filter calls each method with the filter's queryset: visible papers,
    # or the ones a page passed (filter_papers), a PaperQuerySet either way.
    def filter_period(self, queryset: PaperQuerySet, name: str, value: str) -> PaperQuerySet:
        since = timezone.now() - datetime.timedelta(days=PERIOD_DAYS[value])
        return queryset.filter(listed_at__gte=since)

    def filter_tags(self, queryset: PaperQuerySet, name: str, value: list[Tag]) -> PaperQuerySet:
        # Every one of the tags; one EXISTS each, where joins would need DISTINCT
        # over whole paper rows.
        for tag in value:
            queryset = queryset.filter(
                Exists(PaperTag.objects.filter(paper_id=OuterRef("pk"), tag=tag))
            )
        return queryset

    def filter_categories(
        self, queryset: PaperQuerySet, name: str, value: list[Category]
    ) -> PaperQuerySet:
        if not value:
            return queryset
        # Any of the categories, as arXiv listings combine them; EXISTS keeps
        # one row per paper without DISTINCT.
        in_categories = Paper.categories.through.objects.filter(
            paper_id=OuterRef("pk"), category__in=value
        )
        return queryset.filter(Exists(in_categories))

    def filter_from(
        self, queryset: PaperQuerySet, name: str, value: datetime.date
    ) -> PaperQuerySet:
        return queryset.filter(listed_at__gte=start_of_day(value))

    def filter_to(self, queryset: PaperQuerySet, name: str, value: datetime.date) -> PaperQuerySet:
        if value >= datetime.date.max:
            return queryset
        return queryset.filter(listed_at__lt=start_of_day(value + datetime.timedelta(days=1)))

    def filter_has_code(self, queryset: PaperQuerySet, name: str, value: str) -> PaperQuerySet:
        return queryset.with_code()

    def filter_search(self, queryset: PaperQuerySet, name: str, value: str) -> QuerySet[Paper]:
        value = value.strip()
        if not value:
            return queryset
        # Sorted by relevance, the papers nearest in meaning come too: in another
        # order they would stand among the matches with nothing to say why.
        self.near = papers_near_query(value) if self.sorted_by == "relevance" else []
        return search(queryset, value, near=self.near, fulltext=self.fulltext_matches)

    def filter_noop(self, queryset: PaperQuerySet, name: str, value: str) -> PaperQuerySet:
        return queryset

    def maintained_total(
        self, *, within: "CountedTag | CountedCategory | CountedAuthor | Literal['all']"
    ) -> int | None:
        """The list's exact total from the counts kept or indexed (catalog.counts)
        when it lists every visible paper of one tag, category or author, else
        None (it is counted). within: the tag, category or author the page lists
        before the filters, or "all" for the whole catalog."""
        if not self.is_valid():
            return None
        cleaned = self.form.cleaned_data
        narrowing = {name for name, value in cleaned.items() if value and name not in ORDERS}
        if within != "all":
            return None if narrowing else within.paper_count
        for name in ("tag", "category"):
            if narrowing == {name} and len(cleaned[name]) == 1:
                chosen: CountedTag | CountedCategory = cleaned[name][0]  # the field's queryset's
                return chosen.paper_count
        return None

    def active_filters(self) -> list[dict[str, Any]]:
        """Each filter in effect, with the query string that removes just it."""
        if not self.is_bound:
            return []
        form = self.form
        cleaned = form.cleaned_data if form.is_valid() or form.errors else {}

        def without(name: str, value: str | None = None) -> str:
            params: QueryDict = self.data.copy()
            params.pop("page", None)
            if value is None:
                params.pop(name, None)
            else:
                params.setlist(name, [v for v in params.getlist(name) if v != value])
            return params.urlencode()

        chips = []
        if cleaned.get("q"):
            chips.append(("q", cleaned["q"], without("q")))
        for tag in cleaned.get("tag") or []:
            chips.append(("tag", tag_label(tag.name), without("tag", tag.slug)))
        for category in cleaned.get("category") or []:
            shown = f"{category.code} {category.name}" if category.name else category.code
            chips.append(("category", shown, without("category", category.code)))
        for name in ("period", "has_code", "in"):
            if cleaned.get(name):
                label = self.choice_labels(name)[cleaned[name]]
                chips.append((name, label, without(name)))
        for name in ("from", "to"):
            if cleaned.get(name):
                chips.append((name, cleaned[name].isoformat(), without(name)))
        return [
            {"name": form.fields[name].label, "value": value, "remove_query": query}
            for name, value, query in chips
        ]

    def choice_labels(self, name: str) -> dict[Any, Any]:
        """The labels of a choice field's values, by value (period, has_code, in, sort, window)."""
        field = choice_field(self.form, name)
        # The stubs' getter gives what the setter takes (a mapping, a callable); Django
        # keeps the choices normalized, a list of pairs here.
        return dict(field.choices)  # type: ignore[arg-type]

    @property
    def trending_window(self) -> str:
        """The window the trending sort ranks over: the one asked for if valid, else 7 days."""
        self.form.errors  # noqa: B018 - validates the form, filling cleaned_data
        window: str = self.form.cleaned_data.get("window") or DEFAULT_WINDOW
        return window

    @property
    def searches_phrase(self) -> bool:
        return has_phrase(self.form.cleaned_data.get("q", "")) if self.is_valid() else False

    def total_estimate(self) -> Callable[[], int] | None:
        """How to estimate the list's total past EXACT_COUNT_LIMIT where the
        planner cannot from the list's own query: a search of the full texts
        too, from the estimates of its two parts; a phrase's matches, from a
        sample of the catalog (all its matches, not only those ranked by
        relevance)."""
        if self.fulltext_matches is not None:
            estimate = self.fulltext_matches
            return lambda: estimate.total
        if not self.searches_phrase:
            return None
        return lambda: self.phrase_matches

    @cached_property
    def fulltext_matches(self) -> TextMatches | None:
        """A search of the full texts too: its estimates, read once for the
        search, its plan and its total (None for any other list)."""
        if not (self.searched and self.in_fulltext and self.form.is_valid()):
            return None
        return estimate_text_matches(self.queryset.db, self.form.cleaned_data["q"].strip())

    @cached_property
    def phrase_matches(self) -> int:
        """A phrase search's matches, estimated once for the plan and the total."""
        return sampled_count(super().qs.order_by().values("pk"))

    @property
    def qs(self) -> QuerySet[Paper]:
        if not hasattr(self, "_sorted_qs"):
            papers = super().qs
            sort = self.sorted_by
            by_relevance = sort == "relevance" and self.form.cleaned_data.get("q", "").strip()
            if sort == "trending":
                papers = papers.order_by(*ordering(self.trending_window))
            elif sort == "votes":
                papers = papers.order_by(*votes_ordering(self.trending_window))
            elif sort in CHANGE_ORDERINGS:
                papers = papers.order_by(*CHANGE_ORDERINGS[sort])
            elif by_relevance and self.near:
                # The newest matches of the words, as below, and the papers
                # nearest in meaning, ranked together (catalog.search.relevance).
                matching = papers.filter(word_match=True)
                # One list of ids, read by primary key: an OR of two lists had
                # PostgreSQL scan every paper for them.
                near = [pk for pk, _ in self.near]
                candidates = one_of(self._newest_matches(matching) + near, alias=papers.db)
                papers = (
                    papers.filter(candidates)
                    .annotate(relevance=relevance(papers))
                    .order_by(F("relevance").desc(), *NEWEST_FIRST)
                )
            elif by_relevance:
                # Rank only the newest matches: ranking reads every match's
                # tsvector, seconds for a word in half the catalog. They meet
                # every filter, so the page's queries (its count, its ids, its
                # rows) read them by id alone rather than searching again: a
                # search of the full texts read the texts' matches three times.
                rank = search_rank(papers.db, self.form.cleaned_data["q"].strip())
                papers = (
                    self.queryset.filter(one_of(self._newest_matches(papers), alias=papers.db))
                    .annotate(rank=rank)
                    .order_by(F("rank").desc(), *NEWEST_FIRST)
                )
            else:
                papers = papers.order_by(*self._newest_first(papers))
            self.ranks_newest_only = bool(by_relevance)
            self._sorted_qs = papers
        sorted_qs: QuerySet[Paper] = self._sorted_qs
        return sorted_qs

    def _newest_matches(self, papers: QuerySet[Paper]) -> list[int]:
        """The ids of the newest SEARCH_RELEVANCE_CANDIDATES matches, found
        once: as a subquery, the page's rows, its ids and its count would each
        find them again."""
        newest = papers.order_by(*self._newest_first(papers)).values_list("pk", flat=True)
        return list(newest[: settings.SEARCH_RELEVANCE_CANDIDATES])

    def _newest_first(self, papers: QuerySet[Paper]) -> tuple[OrderBy, ...]:
        """How to put the papers newest first. PostgreSQL walks the newest
        papers for a search's matches whatever their number, underrating what
        reading each paper's words costs: for a rare word it is told to sort."""
        searched = self.form.cleaned_data.get("q", "").strip()
        if not searched or connections[papers.db].vendor != "postgresql":
            return NEWEST_FIRST
        if self.fulltext_matches is not None:
            few = self.fulltext_matches.total <= FEW_SEARCH_MATCHES
            return SORTED_NEWEST_FIRST if few else NEWEST_FIRST
        if self.searches_phrase:
            return (
                SORTED_NEWEST_FIRST if self.phrase_matches <= FEW_SEARCH_MATCHES else NEWEST_FIRST
            )
        few = estimated_count(papers.order_by().values("pk")) <= FEW_SEARCH_MATCHES
        return SORTED_NEWEST_FIRST if few else NEWEST_FIRST


def one_of(ids: list[int], *, alias: str) -> Q:
    """The papers whose id is among `ids`. On PostgreSQL the ids are one array
    parameter: as an IN list each id is a placeholder of its own, which
    psycopg's client-side binding finds and fills one by one, for each query
    of the page: 2,000 relevance candidates cost a search 16 ms (43 ms
    searching the full texts too) a page at 100,000 papers."""
    if connections[alias].vendor != "postgresql":
        return Q(pk__in=ids)
    return Q(IdAmong(F("pk"), ids))


class IdAmong(Lookup):
    """`id = ANY(%s::bigint[])`: the ids one array parameter (one_of), written
    as the array's text: psycopg, given a list, looks at each item in turn to
    choose how to quote it (8 ms a page of 2,000 candidates)."""

    prepare_rhs = False

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, tuple[Any, ...]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        ids = "{" + ",".join(str(int(pk)) for pk in self.rhs) + "}"
        return f"{lhs} = ANY(%s::bigint[])", (*lhs_params, ids)


def votes_ordering(window: str) -> list[OrderBy]:
    """The votes sort over a window: most counted upvotes first, then newest first
    (an index on visible papers for each window, catalog.models.Paper)."""
    return [F(VOTE_COLUMNS[window]).desc(), *NEWEST_FIRST]


def authored_by(papers: PaperQuerySet, author: Author) -> PaperQuerySet:
    """The visible papers among `papers` crediting the author, joined to their
    links (one a paper) by the links' copy of the paper's visibility, so that
    AUTHOR_NEWEST_FIRST reads them newest first off the links' index."""
    return papers.filter(paperauthor__author=author, paperauthor__visible=True)


# authored_by's papers in the order of NEWEST_FIRST, from their links' copy of
# listed_at: walking the newest-first index for the 0.2% of a million papers
# that one prolific author wrote, or sorting them by their rows, took the
# author's page 20 to 40 ms of SQL, the links' index (author, listed_at, paper)
# a fraction of a millisecond.
AUTHOR_NEWEST_FIRST = (F("paperauthor__listed_at").desc(), F("paperauthor__paper_id").desc())


def default_sort(*, searched: bool) -> str:
    return "relevance" if searched else "newest"


def clean_query(params: QueryDict, *, fixed_sort: str | None = None) -> QueryDict | None:
    """The list address without what changes nothing, or None if it has nothing
    to drop: empty fields (a plain form sends every field), the default sort,
    the default trending window and the first page. fixed_sort: the sort a
    page always has (the trending page's), which its address needs no more."""
    searched = any(value.strip() for value in params.getlist("q"))
    defaults = {
        "sort": {fixed_sort or default_sort(searched=searched)},
        "window": {DEFAULT_WINDOW},
        "page": {"1"},
    }
    kept = [
        (name, value)
        for name, values in params.lists()
        for value in values
        if value.strip() and value not in defaults.get(name, ())
    ]
    if len(kept) == sum(len(values) for _, values in params.lists()):
        return None
    return QueryDict(urlencode(kept))


_fields_html = Fragments("FILTER_FORM_CACHE_SIZE")
FIELDS_TEMPLATE = "catalog/_filter_fields.html"


def filter_fields_html(
    paper_filter: PaperFilter,
    *,
    trending_tabs: bool,
    trending_window: str | None,
    fixed_order: str = "",
) -> SafeString:
    """The filter's fields as a list page shows them (the values given, any errors).

    They are the same for every reader who asks with the same values, so they
    are rendered once per process under a digest of what changes them: the
    values given, the options (every tag's slug and name, every category's
    code: a value's error depends on them too), the language, the page's
    trending controls and the templates.
    """
    form = paper_filter.form
    key = digest(
        type(paper_filter).__name__,
        sorted((name, paper_filter.data.getlist(name)) for name in form.fields),
        paper_filter.options["tag"],
        paper_filter.options["category"],
        translation.get_language(),
        trending_tabs,
        trending_window,
        fixed_order,
        template_digest(FIELDS_TEMPLATE),
    )
    context = {
        "filter": paper_filter,
        "trending_tabs": trending_tabs,
        "trending_window": trending_window,
        "fixed_order": fixed_order,
    }
    html = _fields_html.get_or_render(key, lambda: get_template(FIELDS_TEMPLATE).render(context))
    return mark_safe(html)  # noqa: S308 - rendered from the site's template, values escaped


def filter_options() -> dict[str, list[tuple[str, str]]]:
    """The tag select's (slug, label) and the category select's (code, code and name) options."""
    return cached_read("filter-options", _read_filter_options)


def _read_filter_options() -> dict[str, list[tuple[str, str]]]:
    tags = Tag.objects.order_by().values_list(Value("tag"), "slug", "name")
    categories = Category.objects.order_by().values_list(Value("category"), "code", "name")
    options: dict[str, list[tuple[str, str]]] = {"tag": [], "category": []}
    # One query for both lists; UNION drops each table's order, so sort here.
    for kind, value, name in tags.union(categories, all=True):
        if kind == "tag":
            options[kind].append((value, tag_label(name)))
        else:
            options[kind].append((value, f"{value} {name}" if name else value))
    options["tag"].sort(key=lambda option: (option[1].casefold(), option[1]))
    options["category"].sort()
    return options


def start_of_day(day: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time.min, tzinfo=datetime.UTC)


# `from` is a Python keyword, so the date range filters are attached under
# their public parameter names after the class is built. Both bounds are
# inclusive days, compared as a timestamp range so the date index is usable.
PaperFilter.base_filters["from"] = django_filters.DateFilter(
    method="filter_from", label=_("From"), widget=forms.DateInput(attrs={"type": "date"})
)
PaperFilter.base_filters["to"] = django_filters.DateFilter(
    method="filter_to", label=_("To"), widget=forms.DateInput(attrs={"type": "date"})
)
# What a search reads (a keyword too): titles, authors and abstracts, or with
# `in=fulltext` the stored full texts as well (catalog.search).
PaperFilter.base_filters["in"] = django_filters.ChoiceFilter(
    choices=[("fulltext", _("Full texts too"))],
    method="filter_noop",
    empty_label=_("Titles, authors and abstracts"),
    label=_("Search in"),
)


class ListParameterNames(TypedDict):
    single: list[str]
    multiple: list[str]


# Every query parameter a list page reads, by whether it takes several values:
# the cache keys pages on these alone (catalog.page_cache.cached_page).
LIST_PARAMETERS: ListParameterNames = {
    "multiple": sorted(
        name
        for name, field in PaperFilter.base_filters.items()
        if isinstance(field, django_filters.MultipleChoiceFilter)
    ),
    "single": sorted(
        [
            *(
                name
                for name, field in PaperFilter.base_filters.items()
                if not isinstance(field, django_filters.MultipleChoiceFilter)
            ),
            "page",
        ]
    ),
}
