"""The catalog for anyone: papers, one paper, tags, categories."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Field, Query, Router, Schema

from api import auth, schemas, serializers
from api.http import set_last_modified
from api.queries import newest_added, paper_page, paper_with_everything
from api.schemas import PaperFilters, TrendingWindow
from catalog.counts import categories_with_counts, tags_with_counts
from catalog.models import Paper
from catalog.selectors import similar_papers

router = Router(auth=auth.public)

ERRORS = {401: schemas.Error, 422: schemas.ValidationErrors, 429: schemas.RateLimitError}
LIST_ERRORS = {**ERRORS, 400: schemas.FieldErrors}


class Paging(Schema):
    cursor: str | None = Field(None, description="A page's next_cursor, for the page after it.")
    limit: int = Field(20, ge=1, le=100, description="Papers per page.")


def list_answer(
    request: HttpRequest,
    response: HttpResponse,
    *,
    papers: QuerySet[Paper],
    filters: schemas.ListParameters,
    paging: Paging,
    sort: str | None = None,
) -> dict[str, Any]:
    """A page of the papers with the filters the API read (sort, if given, in
    place of theirs) applied by the list's own filter."""
    query = filters.as_query()
    if sort is not None:
        query["sort"] = sort
    rows, next_cursor = paper_page(query, papers=papers, cursor=paging.cursor, limit=paging.limit)
    set_last_modified(response, newest_added(rows))
    return {
        "items": [serializers.paper_item(request, paper) for paper in rows],
        "next_cursor": next_cursor,
    }


@router.get("/papers", response={200: schemas.PaperPage, **LIST_ERRORS}, tags=["papers"])
def papers(
    request: HttpRequest,
    response: HttpResponse,
    filters: Query[PaperFilters],
    paging: Query[Paging],
) -> dict[str, Any]:
    """Papers, newest first (or by relevance), with the list page's filters."""
    return list_answer(
        request, response, papers=Paper.objects.visible(), filters=filters, paging=paging
    )


@router.get("/trending", response={200: schemas.PaperPage, **LIST_ERRORS}, tags=["papers"])
def trending(
    request: HttpRequest,
    response: HttpResponse,
    window: Query[TrendingWindow],
    paging: Query[Paging],
) -> dict[str, Any]:
    """The papers readers saved, suggested and opened most over the window, decaying
    with age (the site's /trending/): the list of `sort=trending`."""
    return list_answer(
        request,
        response,
        papers=Paper.objects.visible(),
        filters=window,
        paging=paging,
        sort="trending",
    )


@router.get(
    "/papers/{path:ref}",
    response={200: schemas.PaperDetail, 404: schemas.Error, **ERRORS},
    tags=["papers"],
)
def paper(request: HttpRequest, ref: str) -> dict[str, Any]:
    """One paper, by arXiv id (`2505.15034`, `hep-th/9901001`, with or without a version)
    or by its stable id here (a number)."""
    paper = paper_with_everything(ref)
    return serializers.paper_detail(request, paper, similar=similar_papers(paper=paper))


@router.get("/tags", response={200: schemas.TagList, **ERRORS}, tags=["catalog"])
def tags(request: HttpRequest) -> dict[str, Any]:
    """Every tag, with its number of papers."""
    return {"items": [serializers.tag_item(request, tag) for tag in tags_with_counts()]}


@router.get("/categories", response={200: schemas.CategoryList, **ERRORS}, tags=["catalog"])
def categories(request: HttpRequest) -> dict[str, Any]:
    """The categories that hold papers, with their numbers of papers."""
    items = [serializers.category_item(request, category) for category in categories_with_counts()]
    return {"items": items}
