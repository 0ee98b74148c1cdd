"""The catalog for anyone: papers, one paper, tags, categories."""

from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from api import auth, schemas, serializers
from api.queries import paper_page, paper_with_everything
from api.schemas import PaperFilters, TrendingWindow
from catalog.counts import categories_with_counts, tags_with_counts
from catalog.models import Paper
from catalog.selectors import similar_papers

router = Router(auth=auth.public)

# Every operation may refuse its parameters (400), a token (401) or a rate (429).
ERRORS = {400: schemas.FieldErrors, 401: schemas.Error, 429: schemas.RateLimitError}


class Paging(Schema):
    cursor: str | None = Field(None, description="A page's next_cursor, for the page after it.")
    limit: int = Field(20, ge=1, le=100, description="Papers per page.")


def list_answer(
    request: HttpRequest,
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
    return {
        "items": [serializers.paper_item(request, paper) for paper in rows],
        "next_cursor": next_cursor,
    }


@router.get("/", response={200: schemas.ApiIndex, **ERRORS}, tags=["catalog"])
def index(request: HttpRequest) -> dict[str, Any]:
    """Where everything is: the lists, the schema and the reference."""
    root = request.build_absolute_uri("/api/v1/")
    return {
        "papers": f"{root}papers",
        "trending": f"{root}trending",
        "tags": f"{root}tags",
        "categories": f"{root}categories",
        "openapi": f"{root}openapi.json",
        "docs": request.build_absolute_uri("/api/docs"),
    }


@router.get("/papers", response={200: schemas.PaperPage, **ERRORS}, tags=["papers"])
def papers(
    request: HttpRequest, filters: Query[PaperFilters], paging: Query[Paging]
) -> dict[str, Any]:
    """Papers, newest first (or by relevance), with the list page's filters."""
    return list_answer(request, papers=Paper.objects.visible(), filters=filters, paging=paging)


@router.get("/trending", response={200: schemas.PaperPage, **ERRORS}, tags=["papers"])
def trending(
    request: HttpRequest, window: Query[TrendingWindow], paging: Query[Paging]
) -> dict[str, Any]:
    """The papers readers saved, suggested and opened most over the window, decaying
    with age (the site's /trending/): the list of `sort=trending`."""
    return list_answer(
        request,
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
