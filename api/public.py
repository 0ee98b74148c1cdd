"""The catalog for anyone: papers, one paper, tags, categories."""

from typing import TYPE_CHECKING, Annotated, Any

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils.http import http_date
from ninja import Field, Query, Router, Schema
from pydantic import create_model

from api import auth, schemas, serializers
from api.queries import FilterError, ListPage, paper_page, paper_with_everything, papers_by_refs
from api.schemas import PaperFilters, TrendingWindow
from catalog.counts import categories_with_counts, tags_with_counts
from catalog.models import Paper
from catalog.selectors import similar_papers

router = Router(auth=auth.public)

# Every operation may refuse its parameters (400), a token (401) or a rate (429).
ERRORS = {400: schemas.FieldErrors, 401: schemas.Error, 429: schemas.RateLimitError}
MAX_IDS = 100


class Paging(Schema):
    cursor: str | None = Field(
        None,
        description="A page's next_cursor (or previous_cursor), for the page after (before) it.",
    )
    limit: int = Field(20, ge=1, le=100, description="Papers per page.")


class Fields(Schema):
    """The fields an answer's items are to carry, as asked (fields_parameter)."""

    fields: str | None = None


def fields_parameter(schema: type[Schema], name: str) -> type[Fields]:
    """The `fields` parameter of answers of `schema`: its field names, separated
    by commas, as the pattern says."""
    names = "|".join(schema.model_fields)
    chosen = Field(
        None,
        description="The item fields to answer with, by name, separated by commas (e.g."
        " `id,title,authors`); the others are left out. All of them when not given.",
        # The schema's pattern; item_fields refuses what it does not match, by name.
        json_schema_extra={"pattern": f"^({names})(,({names}))*$"},
    )
    made: type[Fields] = create_model(name, __base__=Fields, fields=(str | None, chosen))
    return made


if TYPE_CHECKING:
    # Built from the answers' schemas; to the type checker, the schema they extend.
    ItemFields = Fields
    DetailFields = Fields
else:
    ItemFields = fields_parameter(schemas.PaperItem, "ItemFields")
    DetailFields = fields_parameter(schemas.PaperDetail, "DetailFields")


class Lookup(Schema):
    # At least one reference in each; lookup_answer refuses those without.
    ids: list[Annotated[str, Field(json_schema_extra={"pattern": r"[^,\s]"})]] = Field(
        [],
        max_length=MAX_IDS,
        description=f"Up to {MAX_IDS} papers to look up, separated by commas or as repeated"
        " `ids`: arXiv ids (with or without version), stable ids or DOIs (the paper's, or"
        " arXiv's 10.48550/arXiv.<id>). The answer lists them in the order asked, one page,"
        " with those not found under `missing`; it takes no filters, sort or cursor. E.g."
        " `ids=2505.15034,hep-th/9901001v2,10.48550/arXiv.2501.00001`.",
    )


def item_fields(fields: Fields, *, schema: type[Schema]) -> list[str] | None:
    """The fields asked for, in the schema's order; None for all of them."""
    if fields.fields is None:
        return None
    asked = fields.fields.split(",")
    known = list(schema.model_fields)
    unknown = [name for name in asked if name not in known]
    if unknown:
        named = ", ".join(repr(name) for name in unknown)
        raise FilterError(
            {
                "fields": [
                    f"Not fields of these answers: {named}. The fields are: {', '.join(known)}."
                ]
            }
        )
    return [name for name in known if name in asked]


def list_answer(
    request: HttpRequest,
    response: HttpResponse,
    *,
    papers: QuerySet[Paper],
    filters: schemas.ListParameters,
    paging: Paging,
    fields: Fields,
    sort: str | None = None,
    whole_catalog: bool = False,
) -> dict[str, Any]:
    """A page of the papers with the filters the API read (sort, if given, in
    place of theirs) applied by the list's own filter, and its Link header."""
    chosen = item_fields(fields, schema=schemas.PaperItem)
    query = filters.as_query()
    if sort is not None:
        query["sort"] = sort
    page = paper_page(
        query, papers=papers, cursor=paging.cursor, limit=paging.limit, whole_catalog=whole_catalog
    )
    links = page_links(request, page)
    if links:
        response["Link"] = links
    items = [serializers.paper_item(request, paper) for paper in page.rows]
    if page.passages is not None:
        for item in items:
            item["passage"] = serializers.passage_item(request, page.passages.get(item["id"]))
    for paper, item in zip(page.rows, items, strict=True):
        # A hybrid search's rows say whether the words or the meaning found them.
        if hasattr(paper, "word_match"):
            item["matched"] = "words" if paper.word_match else "meaning"
    return {
        "items": [serializers.only_fields(item, chosen) for item in items],
        "total": page.total,
        "total_is_estimate": page.total_is_estimate,
        "next_cursor": page.next_cursor,
        "previous_cursor": page.previous_cursor,
        "ranked_of": page.ranked_of,
        "capped": page.capped,
    }


def page_links(request: HttpRequest, page: ListPage) -> str:
    """The Link header (RFC 8288) of a page: the pages after and before it, as
    absolute addresses."""
    links = []
    for rel, cursor in (("next", page.next_cursor), ("prev", page.previous_cursor)):
        if cursor is not None:
            params = request.GET.copy()
            params["cursor"] = cursor
            address = request.build_absolute_uri(f"{request.path}?{params.urlencode()}")
            links.append(f'<{address}>; rel="{rel}"')
    return ", ".join(links)


def lookup_answer(request: HttpRequest, lookup: Lookup, *, fields: Fields) -> dict[str, Any]:
    """The papers `ids` names, in its order, and those it names that are not here."""
    chosen = item_fields(fields, schema=schemas.PaperItem)
    others = sorted(set(request.GET) - {"ids", "fields"})
    if others:
        raise FilterError(
            {
                name: ["Not taken with ids: a lookup is one page, in the order asked."]
                for name in others
            }
        )
    refs = [ref.strip() for given in lookup.ids for ref in given.split(",") if ref.strip()]
    if not refs:
        raise FilterError({"ids": ["Name at least one paper."]})
    if len(refs) > MAX_IDS:
        raise FilterError({"ids": [f"At most {MAX_IDS} papers at a time; {len(refs)} were named."]})
    found, missing = papers_by_refs(refs, papers=Paper.objects.visible())
    return {
        "items": [
            serializers.only_fields(serializers.paper_item(request, paper), chosen)
            for paper in found
        ],
        "total": len(found),
        "total_is_estimate": False,
        "next_cursor": None,
        "previous_cursor": None,
        "ranked_of": None,
        "capped": False,
        "missing": missing,
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


@router.get(
    "/papers", response={200: schemas.PaperPage, **ERRORS}, tags=["papers"], exclude_unset=True
)
def papers(
    request: HttpRequest,
    response: HttpResponse,
    filters: Query[PaperFilters],
    paging: Query[Paging],
    lookup: Query[Lookup],
    fields: Query[ItemFields],
) -> dict[str, Any]:
    """Papers, newest first (or by relevance), with the list page's filters; or,
    with `ids`, the papers named, in the order named."""
    if lookup.ids:
        return lookup_answer(request, lookup, fields=fields)
    return list_answer(
        request,
        response,
        papers=Paper.objects.visible(),
        filters=filters,
        paging=paging,
        fields=fields,
        whole_catalog=True,
    )


@router.get(
    "/trending", response={200: schemas.PaperPage, **ERRORS}, tags=["papers"], exclude_unset=True
)
def trending(
    request: HttpRequest,
    response: HttpResponse,
    window: Query[TrendingWindow],
    paging: Query[Paging],
    fields: Query[ItemFields],
) -> dict[str, Any]:
    """The papers readers saved, suggested and opened most over the window, decaying
    with age (the site's /trending/): the list of `sort=trending`."""
    return list_answer(
        request,
        response,
        papers=Paper.objects.visible(),
        filters=window,
        paging=paging,
        fields=fields,
        sort="trending",
    )


# What a paper's answer shows that changes without moving its changed_at: an
# answer holding them has no date a 304 could trust (If-Modified-Since).
UNDATED_FIELDS = {"upvotes", "similar"}


@router.get(
    "/papers/{path:ref}",
    response={200: schemas.PaperDetailFields, 404: schemas.Error, **ERRORS},
    tags=["papers"],
    exclude_unset=True,
)
def paper(
    request: HttpRequest, response: HttpResponse, ref: str, fields: Query[DetailFields]
) -> dict[str, Any]:
    """One paper, by arXiv id (`2505.15034`, `hep-th/9901001`, with or without a
    version: a version the paper does not have is a 404), by DOI (the paper's, or
    arXiv's `10.48550/arXiv.2505.15034`) or by its stable id here (a number).
    `Last-Modified` is the paper's last change (catalog.changes: its tags, categories,
    authors, code links and summaries included), sent when `fields` leaves out its
    upvotes and similar papers: those change apart from it, and only the ETag covers them."""
    chosen = item_fields(fields, schema=schemas.PaperDetail)
    paper = paper_with_everything(ref)
    similar = similar_papers(paper=paper) if chosen is None or "similar" in chosen else []
    if chosen is not None and not UNDATED_FIELDS.intersection(chosen):
        response["Last-Modified"] = http_date(paper.changed_at.timestamp())
    detail = serializers.paper_detail(request, paper, similar=similar)
    return serializers.only_fields(detail, chosen)


@router.get("/tags", response={200: schemas.TagList, **ERRORS}, tags=["catalog"])
def tags(request: HttpRequest) -> dict[str, Any]:
    """Every tag, with its number of papers."""
    return {"items": [serializers.tag_item(request, tag) for tag in tags_with_counts()]}


@router.get("/categories", response={200: schemas.CategoryList, **ERRORS}, tags=["catalog"])
def categories(request: HttpRequest) -> dict[str, Any]:
    """The categories that hold papers, with their numbers of papers."""
    items = [serializers.category_item(request, category) for category in categories_with_counts()]
    return {"items": items}
