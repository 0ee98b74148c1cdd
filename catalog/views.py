import datetime
from collections.abc import Callable, Sequence
from functools import partial, wraps
from typing import TYPE_CHECKING, Any, Literal, overload

from django.conf import settings
from django.core.paginator import EmptyPage, Page
from django.db.models import QuerySet
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    QueryDict,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from catalog import arxiv_ids
from catalog.bibtex import bibtex_with_preamble
from catalog.counts import (
    categories_with_counts,
    tags_with_counts,
    with_author_counts,
    with_category_counts,
    with_tag_counts,
)
from catalog.exports import FORMATS, export_response
from catalog.filters import (
    AUTHOR_NEWEST_FIRST,
    LIST_PARAMETERS,
    PERIOD_DAYS,
    TRENDING_WINDOWS,
    PaperFilter,
    clean_query,
)
from catalog.models import Author, Category, CodeLink, Paper, Tag
from catalog.page_cache import cached_page
from catalog.pagination import CatalogPaginator
from catalog.passages import passages
from catalog.reading import paper_for_reading, reading_sections, strip_figures
from catalog.selectors import (
    ABSTRACT_LANGUAGE,
    AUTHOR_CREDITS_WITHIN,
    author_papers,
    author_tags,
    filter_papers,
    for_cards,
    frequent_coauthors,
    newest_listed_at,
    page_categories,
    similar_papers,
    summaries_by_language,
    visible_papers_for_page,
    with_list_related,
)
from catalog.trending import DEFAULT_WINDOW
from catalog.vocabulary import did_you_mean, typed_terms
from core.http import safe_methods
from core.limits import limit_pages, limit_searches

if TYPE_CHECKING:
    from catalog.counts import CountedAuthor, CountedCategory, CountedTag
    from catalog.selectors import PagePaper


View = Callable[..., HttpResponse]


@overload
def clean_address(view: View, *, fixed_sort: str | None = None) -> View: ...


@overload
def clean_address(
    view: None = None, *, fixed_sort: str | None = None
) -> Callable[[View], View]: ...


def clean_address(
    view: View | None = None, *, fixed_sort: str | None = None
) -> View | Callable[[View], View]:
    """Send a list's address with empty fields or default values (what a plain
    form leaves: `?q=&sort=newest&period=`) to its clean form, which links,
    bookmarks and the cache share. fixed_sort: the sort the page always has."""
    if view is None:
        return partial(clean_address, fixed_sort=fixed_sort)

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        cleaned = clean_query(request.GET, fixed_sort=fixed_sort)
        if cleaned is None:
            return view(request, *args, **kwargs)
        query = cleaned.urlencode()
        return HttpResponseRedirect(request.path + (f"?{query}" if query else ""))

    return wrapper


def paginate(
    items: QuerySet[Paper],
    raw_number: str | None,
    *,
    count: int | None = None,
    estimate: Callable[[], int] | None = None,
) -> tuple[Page[Paper], str]:
    """The requested page, or the nearest real one with a note saying why;
    count: the total, where it is known without counting; estimate: how to
    estimate a long list's total, if the planner cannot."""
    paginator = CatalogPaginator(items, settings.PAPERS_PER_PAGE, count=count, estimate=estimate)
    if raw_number in (None, ""):
        return paginator.page(1), ""
    try:
        number = int(raw_number)
    except ValueError:
        return paginator.page(1), _("That is not a page number; showing the first page.")
    if number < 1:
        return paginator.page(1), _("Pages start at 1; showing the first page.")
    try:
        return paginator.page(number), ""
    except EmptyPage:
        last = paginator.num_pages
        note = ngettext(
            "There is only %(count)d page; showing it.",
            "There are only %(count)d pages; showing the last one.",
            last,
        )
        return paginator.page(last), note % {"count": last}


def render_paper_list(
    request: HttpRequest,
    *,
    papers: QuerySet[Paper],
    template: str = "catalog/paper_list.html",
    context: dict[str, Any] | None = None,
    params: QueryDict | None = None,
    ordering: Sequence[Any] = (),
    ordering_label: str = "",
    catalog_part: "CountedTag | CountedCategory | CountedAuthor | Literal['all'] | None" = None,
    newest_first: Sequence[Any] = (),
) -> HttpResponse:
    """A filtered, paginated list of papers: the home page, tag and category
    pages and the personal feed all render through here. params stand for
    the query string (a page with default filters); ordering replaces the
    filter's sort (a page with an order of its own), which ordering_label
    names in the sort menu's place. catalog_part says which
    of the catalog's visible papers `papers` are, all of them or one tag's,
    category's or author's, so that a list of exactly one of them is not
    counted; None for any other list (a reader's feed). newest_first: the
    order that puts `papers` newest first off an index of their own (an
    author's, AUTHOR_NEWEST_FIRST) rather than by walking the newest-first
    index past every other paper."""
    params = request.GET if params is None else params
    paper_filter = filter_papers(params, papers=papers)
    filtered = paper_filter.qs.order_by(*ordering) if ordering else paper_filter.qs
    if newest_first and not ordering and paper_filter.sorted_by == "newest":
        filtered = filtered.order_by(*newest_first)
    total = None if catalog_part is None else paper_filter.maintained_total(within=catalog_part)
    searched = (
        paper_filter.form.cleaned_data.get("q", "").strip() if paper_filter.is_valid() else ""
    )
    rows = for_cards(with_list_related(filtered), searched=searched)
    estimate = paper_filter.total_estimate() if searched else None
    page, page_note = paginate(rows, params.get("page"), count=total, estimate=estimate)
    # A search of the full texts shows where each paper's text holds its words.
    found = passages(list(page), searched) if searched and paper_filter.in_fulltext else {}
    params = params.copy()
    params.pop("page", None)
    sorted_by = paper_filter.sorted_by
    # A search misspelling a tag's, a category's or an author's name is asked
    # whether it meant that one, and offered the search with the name put right.
    suggested = did_you_mean(searched) if searched and page.number == 1 else None
    corrected = params.copy()
    if suggested and suggested.corrected:
        corrected["q"] = suggested.corrected
    ctx = {
        "filter": paper_filter,
        "page": page,
        "page_note": page_note,
        "searched": searched,
        "passages": found,
        # The header's search box searches this list (a tag's, a category's, the feed).
        "search_scope": request.path,
        "fixed_order": ordering_label if ordering else "",
        "query_without_page": params.urlencode(),
        "active_filters": paper_filter.active_filters(),
        # Entries look up thumbnails only when they were fetched: a missing
        # attribute costs the template a dir() of the paper, per entry.
        "list_thumbnails": settings.PREVIEW_LIST_THUMBNAILS,
        "export_limit": settings.EXPORT_MAX_PAPERS,
        "wider_period": wider_period(paper_filter, papers=papers) if not page else None,
        # Sorted by trending, cards of papers with a score in the window say so.
        "trending_window": paper_filter.trending_window if sorted_by == "trending" else None,
        "votes_window": paper_filter.trending_window if sorted_by == "votes" else None,
        # A search none of whose papers holds its words shows the closest in meaning.
        "only_related": bool(searched and page and page.number == 1)
        and not any(getattr(paper, "word_match", True) for paper in page),
        "did_you_mean": suggested,
        "corrected_query": corrected.urlencode() if suggested and suggested.corrected else "",
        "relevance_candidates": (
            settings.SEARCH_RELEVANCE_CANDIDATES
            if paper_filter.ranks_newest_only
            and page.paginator.count >= settings.SEARCH_RELEVANCE_CANDIDATES
            else None
        ),
    }
    ctx.update(context or {})
    return render(request, template, ctx)


def wider_period(paper_filter: PaperFilter, *, papers: QuerySet[Paper]) -> dict[str, Any] | None:
    """For a period preset that found nothing: the newest paper the other filters
    find, and the narrowest wider period that holds it (or any time)."""
    period = paper_filter.form.cleaned_data.get("period") if paper_filter.is_valid() else None
    if not period:
        return None
    params = paper_filter.data.copy()
    for name in ("period", "page"):
        params.pop(name, None)
    newest = newest_listed_at(filter_papers(params, papers=papers).qs)
    if newest is None:
        return None  # no wider period would find anything either
    age = timezone.now() - newest
    choices = paper_filter.choice_labels("period")
    wider = next(
        (
            key
            for key, days in PERIOD_DAYS.items()
            if days > PERIOD_DAYS[period] and age <= datetime.timedelta(days=days)
        ),
        None,
    )
    if wider:
        params["period"] = wider
    return {"newest": newest, "query": params.urlencode(), "label": choices.get(wider or "")}


@safe_methods
@clean_address
@limit_pages
@limit_searches
@cached_page(**LIST_PARAMETERS)
def paper_list(request: HttpRequest) -> HttpResponse:
    return render_paper_list(request, papers=Paper.objects.visible(), catalog_part="all")


@safe_methods
@limit_pages
def search_suggestions(request: HttpRequest) -> HttpResponse:
    """The tags, categories and authors the search box offers as a reader types
    (an htmx fragment; one query, kept in the catalog cache)."""
    return render(
        request,
        "catalog/_search_suggestions.html",
        {"terms": typed_terms(request.GET.get("q", ""))},
    )


@safe_methods
@clean_address
@limit_pages
@limit_searches
@cached_page(**LIST_PARAMETERS)
def tag_detail(request: HttpRequest, slug: str) -> HttpResponse:
    tag = get_object_or_404(with_tag_counts(Tag.objects.all()), slug=slug)
    papers = Paper.objects.visible().filter(tags=tag)
    return render_paper_list(request, papers=papers, context={"tag": tag}, catalog_part=tag)


@safe_methods
@clean_address
@limit_pages
@limit_searches
@cached_page(**LIST_PARAMETERS)
def category_detail(request: HttpRequest, code: str) -> HttpResponse:
    category = get_object_or_404(with_category_counts(Category.objects.all()), code=code)
    papers = Paper.objects.visible().filter(categories=category)
    context = {"category": category}
    return render_paper_list(request, papers=papers, context=context, catalog_part=category)


@safe_methods
@clean_address
@limit_pages
@limit_searches
@cached_page(**LIST_PARAMETERS)
def author_detail(request: HttpRequest, slug: str) -> HttpResponse:
    authors = with_author_counts(Author.objects.select_related("merged_into"))
    author = get_object_or_404(authors, slug=slug)
    if author.merged_into is not None:  # curators merged this name into another author
        return redirect(author.merged_into.get_absolute_url(), permanent=True)
    context = {
        "author": author,
        "coauthors": frequent_coauthors(author=author),
        "author_tags": author_tags(author=author),
        "credits_within": AUTHOR_CREDITS_WITHIN,
    }
    return render_paper_list(
        request,
        papers=author_papers(author=author),
        template="catalog/author_detail.html",
        context=context,
        catalog_part=author,
        newest_first=AUTHOR_NEWEST_FIRST,
    )


def export_papers(
    request: HttpRequest, *, papers: QuerySet[Paper], fmt: str, name: str
) -> StreamingHttpResponse:
    """A list page's papers (its filters applied) as BibTeX, RIS or CSL-JSON; its
    export links are relative ("export.bib"), so every list has them at its own address."""
    if fmt not in FORMATS:
        raise Http404("Exports are export.bib, export.ris and export.csl.json.")
    return export_response(request, papers=papers, fmt=fmt, name=name)


@safe_methods
@limit_pages
@limit_searches
def export_list(request: HttpRequest, fmt: str) -> StreamingHttpResponse:
    return export_papers(request, papers=Paper.objects.visible(), fmt=fmt, name="papers")


@safe_methods
@limit_pages
@limit_searches
def export_author(request: HttpRequest, slug: str, fmt: str) -> StreamingHttpResponse:
    author = get_object_or_404(Author, slug=slug, merged_into=None)
    papers = author_papers(author=author)
    return export_papers(request, papers=papers, fmt=fmt, name=f"author-{author.pk}")


@safe_methods
@limit_pages
@limit_searches
def export_tag(request: HttpRequest, slug: str, fmt: str) -> StreamingHttpResponse:
    tag = get_object_or_404(Tag, slug=slug)
    papers = Paper.objects.visible().filter(tags=tag)
    return export_papers(request, papers=papers, fmt=fmt, name=f"tag-{tag.slug}")


@safe_methods
@limit_pages
@limit_searches
def export_category(request: HttpRequest, code: str, fmt: str) -> StreamingHttpResponse:
    category = get_object_or_404(Category, code=code)
    papers = Paper.objects.visible().filter(categories=category)
    name = "category-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in category.code)
    return export_papers(request, papers=papers, fmt=fmt, name=name)


@safe_methods
@clean_address(fixed_sort="trending")
@limit_pages
@limit_searches
@cached_page(**LIST_PARAMETERS, trending=True)
def trending(request: HttpRequest) -> HttpResponse:
    """Every list's trending sort, on a page of its own with a tab per window."""
    params = request.GET.copy()
    params["sort"] = "trending"
    # Django lets a request's GET be replaced; its stubs type it as the one parsed.
    request.GET = params  # type: ignore[assignment]
    tabs = []
    for key, label in TRENDING_WINDOWS:
        query = params.copy()
        for name in ("sort", "page"):
            query.pop(name, None)
        if key != DEFAULT_WINDOW:
            query["window"] = key
        tabs.append({"key": key, "label": label, "query": query.urlencode()})
    return render_paper_list(
        request,
        papers=Paper.objects.visible(),
        template="catalog/trending.html",
        context={"trending_tabs": tabs},
        catalog_part="all",
    )


@safe_methods
@limit_pages
@cached_page
def tag_index(request: HttpRequest) -> HttpResponse:
    tags = list(tags_with_counts())
    # The cards are rendered once per process for the rows' versions and counts ({% shared %}).
    shown = [(tag.pk, tag.changed_at, tag.paper_count) for tag in tags]
    return render(request, "catalog/tag_index.html", {"tags": tags, "cards_key": shown})


@safe_methods
@limit_pages
@cached_page
def category_index(request: HttpRequest) -> HttpResponse:
    categories = list(categories_with_counts())
    archives: dict[str, list[Category]] = {}
    for category in categories:
        archives.setdefault(category.archive, []).append(category)
    shown = [(c.pk, c.changed_at, c.paper_count) for c in categories]
    context = {"archives": sorted(archives.items()), "cards_key": shown}
    return render(request, "catalog/category_index.html", context)


@safe_methods
@limit_pages
@cached_page
def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    parsed = arxiv_ids.split_version(arxiv_id)
    if parsed and parsed[0] != arxiv_id:
        # A versioned or prefixed id ("2505.15034v2", "arXiv:...") has one canonical page.
        return redirect("catalog:paper", arxiv_id=parsed[0], permanent=True)
    paper = get_object_or_404(visible_papers_for_page(), arxiv_id=arxiv_id)
    return render_paper(request, paper)


@safe_methods
@limit_pages
@cached_page
def paper_by_pk(request: HttpRequest, pk: int) -> HttpResponse:
    paper = get_object_or_404(Paper.objects.select_related("merged_into"), pk=pk)
    target = paper.merged_into or paper
    if not target.is_visible or target.merged_into_id:
        # Hidden means not there: no redirect that would name its arXiv id.
        raise Http404
    if target.arxiv_id:
        return redirect("catalog:paper", arxiv_id=target.arxiv_id, permanent=True)
    return render_paper(request, get_object_or_404(visible_papers_for_page(), pk=target.pk))


@safe_methods
@limit_pages
@cached_page
def paper_read(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """The paper's stored full text: its sections with their figures in place."""
    parsed = arxiv_ids.split_version(arxiv_id)
    if parsed and parsed[0] != arxiv_id:
        return redirect("catalog:paper-read", arxiv_id=parsed[0], permanent=True)
    paper = get_object_or_404(paper_for_reading(Paper.objects.visible()), arxiv_id=arxiv_id)
    sections = reading_sections(paper)
    ctx = {
        "paper": paper,
        "fulltext": paper.fulltext,
        "sections": sections,
        "contents": [reading for reading in sections if reading.section.heading],
    }
    return render(request, "catalog/paper_read.html", ctx)


def render_paper(request: HttpRequest, paper: "PagePaper") -> HttpResponse:
    summary_groups = summaries_by_language(paper.published_summaries)
    reader = (translation.get_language() or settings.LANGUAGE_CODE).lower()
    ctx = {
        "paper": paper,
        # The reader's language's summaries (first of the groups) come before
        # the English abstract when there are any.
        "leads_abstract": bool(summary_groups)
        and reader != ABSTRACT_LANGUAGE
        and summary_groups[0][0].lower() == reader,
        "official_code": next(
            (link for link in paper.code_links.all() if link.kind == CodeLink.Kind.OFFICIAL), None
        ),
        "summary_groups": summary_groups,
        "has_machine_text": any(s.is_machine_written for s in paper.published_summaries),
        "bibtex": bibtex_with_preamble(paper),
        "categories": page_categories(paper),
        "similar": similar_papers(paper=paper),
        "strip_figures": strip_figures(paper.figure_rows),
        # The first page's picture, for link previews (og:image).
        "share_image": next(
            (
                request.build_absolute_uri(image.image.url)
                for image in paper.images.all()
                if image.kind == "page"
            ),
            None,
        ),
    }
    return render(request, "catalog/paper_detail.html", ctx)
