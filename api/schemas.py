"""What the API reads and answers, as the OpenAPI schema describes it."""

import datetime
import keyword
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal

import django_filters
from django.http import QueryDict
from ninja import Field, Schema
from pydantic import BeforeValidator, create_model

from catalog.filters import PaperFilter

# What each parameter of the list's filter (catalog.filters.PaperFilter) means,
# for the schema; its names, choices and checks are the filter's.
LIST_PARAMETER_DESCRIPTIONS = {
    "q": "Words in the title, authors or abstract (and with in=fulltext, in one section of"
    " the stored full text); quoted phrases, -word, OR.",
    "in": "fulltext: `q` searches the papers' stored full texts too, and each item found"
    " there carries its `passage`.",
    "tag": "Tag slugs; a paper must carry every one.",
    "category": "Category codes; a paper may be in any one.",
    "period": "Listed within the last day, week, month or year.",
    "from": "Listed on or after.",
    "to": "Listed on or before.",
    "has_code": "1: only papers with code.",
    "sort": "newest first (the default); relevance ranks the newest matches of `q` by"
    " relevance; added: newest added to this catalog first; updated: last changed"
    " here first; trending ranks by readers' recent saves, suggestions and clicks over"
    " `window`, then newest first; votes ranks by upvotes over `window`, then newest first.",
    "added_since": "Added to this catalog at or after this moment (ISO 8601, e.g."
    " 2026-01-31T00:00:00Z).",
    "updated_since": "Changed here (anything its item shows) at or after this moment"
    " (ISO 8601). To follow every change exactly, use /changes.",
    "window": "The period trending or votes ranks over (with sort=trending or sort=votes);"
    " 7d when not given.",
}


def _iso_date(value: object) -> object:
    """A date as the schema's format has it (YYYY-MM-DD); pydantic alone would
    also take a number of seconds ("0") or a date and time."""
    if isinstance(value, str) and not ISO_DATE.fullmatch(value):
        raise ValueError("Give a date as YYYY-MM-DD.")
    return value


ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
IsoDate = Annotated[datetime.date, BeforeValidator(_iso_date)]


def _iso_datetime(value: object) -> object:
    """A moment as ISO 8601 has it (a date, then a time); pydantic alone would
    also take a number of seconds ("0.5")."""
    if isinstance(value, str) and not ISO_DATE.match(value):
        raise ValueError("Give a moment as ISO 8601, e.g. 2025-11-05T09:00:00Z.")
    return value


IsoDateTime = Annotated[datetime.datetime, BeforeValidator(_iso_datetime)]


class ListParameters(Schema):
    """Parameters of the list's filter, as the API read them."""

    def as_query(self) -> QueryDict:
        """The values read, as the list's filter takes them."""
        query = QueryDict(mutable=True)
        for name, value in self.model_dump(by_alias=True, exclude_none=True).items():
            query.setlist(
                name, [str(each) for each in value] if isinstance(value, list) else [str(value)]
            )
        return query


def list_parameters(schema_name: str, *, names: list[str] | None = None) -> type[ListParameters]:
    """A schema of the list filter's parameters (those named, or all): each with
    the filter's name, the type its values take, its choices and limits."""
    parameters: dict[str, Any] = {}  # (type, field) pairs, as create_model takes them
    for name, list_filter in PaperFilter.base_filters.items():
        if names is None or name in names:
            field_name = f"{name}_" if keyword.iskeyword(name) else name
            parameters[field_name] = _parameter(name, list_filter)
    return create_model(schema_name, __base__=ListParameters, **parameters)


def _parameter(name: str, list_filter: django_filters.Filter) -> tuple[Any, Any]:
    description = LIST_PARAMETER_DESCRIPTIONS[name]
    if isinstance(list_filter, django_filters.MultipleChoiceFilter):
        # Slugs and codes: whether each names a tag or category is the filter's to say.
        return list[str], Field([], alias=name, description=description)
    if isinstance(list_filter, django_filters.ChoiceFilter):
        choices = tuple(value for value, _ in list_filter.extra["choices"])
        return Literal[choices] | None, Field(None, alias=name, description=description)
    if isinstance(list_filter, django_filters.IsoDateTimeFilter):
        return IsoDateTime | None, Field(None, alias=name, description=description)
    if isinstance(list_filter, django_filters.DateFilter):
        return IsoDate | None, Field(None, alias=name, description=description)
    if isinstance(list_filter, django_filters.CharFilter):
        max_length = list_filter.extra.get("max_length")
        return str | None, Field(None, alias=name, description=description, max_length=max_length)
    raise TypeError(f"The list filter's {name!r} ({type(list_filter).__name__}) has no API type.")


if TYPE_CHECKING:
    # Built when the module loads, from the filter; to the type checker each is
    # the schema they extend, the one whose as_query() the endpoints call.
    PaperFilters = ListParameters
    TrendingWindow = ListParameters
else:
    PaperFilters = list_parameters("PaperFilters")
    TrendingWindow = list_parameters("TrendingWindow", names=["window"])


class ApiIndex(Schema):
    papers: str = Field(description="Papers, with the list's filters.")
    trending: str = Field(description="Papers by readers' recent interest.")
    tags: str
    categories: str
    openapi: str = Field(description="This API's OpenAPI schema.")
    docs: str = Field(description="The reference page.")


class Error(Schema):
    """Problem details (RFC 9457), sent as application/problem+json."""

    type: str = Field("about:blank", description="No type beyond the status: always about:blank.")
    title: str = Field(description="The status's phrase, e.g. Not Found.")
    status: int = Field(description="The HTTP status, repeated.")
    detail: str = Field(description="What was wrong, in words.")


class RateLimitError(Error):
    retry_after: int = Field(description="Seconds until the limit lifts; also in Retry-After.")


class FieldErrors(Error):
    errors: dict[str, list[str]] | None = Field(
        None,
        description="The messages for each parameter refused: its name (`limit`), or "
        "`body.<member>` for a member of a JSON body.",
    )


class TagRef(Schema):
    slug: str
    name: str


class CategoryRef(Schema):
    code: str
    name: str


class PassageOut(Schema):
    """Where a paper's full text holds a search's words (`in=fulltext`)."""

    section: str = Field(description="The section's heading (empty for a PDF's page).")
    section_number: int = Field(description="The section's place in the text, from 1.")
    paragraph_number: int = Field(description="The paragraph's place in its section, from 1.")
    text: str = Field(description="The whole paragraph as stored, math as TeX between $ signs.")
    html: str = Field(
        description="The paragraph around the words, each in <mark>, math as"
        ' <span class="math">TeX</span>, an ellipsis where cut; escaped.'
    )
    url: str = Field(description="The paper's Read view at the paragraph.")


class PaperItem(Schema):
    id: int = Field(description="The paper's stable id here; papers without an arXiv id have one.")
    arxiv_id: str | None
    version: int | None
    title: str
    authors: list[str]
    abstract: str
    primary_category: CategoryRef | None = Field(description="Its arXiv primary category.")
    categories: list[CategoryRef] = Field(description="Every category it is in, by code.")
    tags: list[TagRef]
    published_at: datetime.datetime | None = Field(description="Version 1's date on arXiv.")
    published_precision: Literal["day", "month", "year"]
    listed_at: datetime.datetime = Field(description="The date lists sort and filter by.")
    added_at: datetime.datetime = Field(description="When the paper came to this catalog.")
    updated_at: datetime.datetime = Field(
        description="The last change here to anything this item shows (sort=updated)."
    )
    url: str = Field(description="The paper's page on this site.")
    abs_url: str | None
    pdf_url: str | None
    official_code_url: str | None
    upvotes: int = Field(
        description="Readers' upvotes that count: from accounts at least a day old with a"
        " confirmed address."
    )
    passage: PassageOut | None = Field(
        None,
        description="With `q` and `in=fulltext`: the paragraph of the paper's stored text"
        " holding the words (null for a paper found by its title, authors or abstract"
        " alone). Left out of other lists.",
    )
    matched: Literal["words", "meaning"] | None = Field(
        None,
        description="With `q` sorted by relevance, where the site has paper vectors: `words`"
        " for a paper holding the search's words, `meaning` for one found close to them in"
        " meaning alone. Left out of other lists.",
    )


def only_asked(model: type[Schema], name: str) -> type[Schema]:
    """The model with every field optional: an answer carries only the fields
    `fields=` asked for (all when it is not given), each as the model types it."""
    fields: dict[str, Any] = {}
    for field_name, field in model.model_fields.items():
        description = field.description or ""
        omitted = "Left out unless `fields` names it (or is not given)."
        fields[field_name] = (
            field.annotation,
            Field(None, description=f"{description} {omitted}".strip()),
        )
    only: type[Schema] = create_model(name, __base__=Schema, __doc__=model.__doc__, **fields)
    return only


PaperItemFields = only_asked(PaperItem, "PaperItem")


class PaperPage(Schema):
    """A page of a list; or, for `ids`, the papers asked for, in the order asked."""

    items: list[PaperItemFields]  # type: ignore[valid-type]
    total: int = Field(
        description="How many papers the list holds: exact, or PostgreSQL's estimate when"
        " counting would be slow (more than 1,000), flagged by total_is_estimate."
    )
    total_is_estimate: bool = Field(description="true when total is an estimate.")
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page. The `Link`"
        ' header gives the same page as rel="next".'
    )
    previous_cursor: str | None = Field(
        description="Pass as `cursor` for the page before; null on the first page."
        ' The `Link` header gives it as rel="prev".'
    )
    ranked_of: int | None = Field(
        description="A search sorted by relevance ranks only its newest this many matches"
        " (and pages over those as they were when its first page was read, so papers"
        " added meanwhile neither repeat nor skip an entry); null for other orders."
    )
    capped: bool = Field(
        description="true when a relevance-sorted search matched ranked_of papers or more,"
        " so older matches are not in this list: sort by newest, or narrow the search,"
        " to reach them."
    )
    missing: list[str] | None = Field(
        None,
        description="With `ids`: the references that name no paper here (or a version"
        " the paper does not have), as given. Left out otherwise.",
    )


class CodeLinkOut(Schema):
    url: str
    kind: Literal["official", "community", "mentioned"]


class SummariesOut(Schema):
    language: str = Field(description="BCP 47 code, e.g. en, ko, zh-hans.")
    summary: str | None = Field(description="Markdown.")
    translation: str | None = Field(description="The abstract translated, Markdown.")
    takeaways: list[str] = Field(description="Key takeaways, one Markdown string each.")
    machine_written: bool


class SimilarOut(Schema):
    id: int
    arxiv_id: str | None
    title: str
    listed_at: datetime.datetime
    url: str
    tags: list[TagRef]
    score: float = Field(description="Cosine similarity of the two papers' text vectors.")
    shared_tags: list[str] = Field(description="Slugs of the tags both papers carry.")
    shared_terms: list[str] = Field(description="Words both papers weigh most.")


class PaperDetail(PaperItem):
    comment: str
    journal_ref: str
    doi: str
    source_url: str | None = Field(
        description="Its page at the source it was read from when that is not arXiv "
        "(its DOI's, its OpenReview forum, its ACL Anthology page) or that a curator gave."
    )
    version_updated_at: datetime.datetime | None = Field(
        description="This version's date on arXiv."
    )
    announced_at: datetime.datetime | None
    code_links: list[CodeLinkOut]
    summaries: list[SummariesOut] = Field(description="Published summaries, by language.")
    similar: list[SimilarOut] = Field(description="The most similar papers, most similar first.")


PaperDetailFields = only_asked(PaperDetail, "PaperDetail")


class TagOut(TagRef):
    description: str
    paper_count: int
    url: str


class TagList(Schema):
    items: list[TagOut]


class CategoryOut(CategoryRef):
    paper_count: int
    url: str


class CategoryList(Schema):
    items: list[CategoryOut]


class SavedState(Schema):
    id: int
    arxiv_id: str | None
    saved: bool


class UpvoteState(Schema):
    id: int
    arxiv_id: str | None
    upvoted: bool
    upvotes: int = Field(description="The paper's upvotes that count, after this change.")


class AuthorRef(Schema):
    slug: str = Field(description="As in the author's page's address, /authors/<slug>/.")
    name: str


class Subscriptions(Schema):
    tags: list[TagRef]
    categories: list[CategoryRef]
    authors: list[AuthorRef]


class SubscriptionState(Schema):
    kind: Literal["tag", "category", "author"]
    key: str
    subscribed: bool


class CommentOut(Schema):
    id: int
    parent: int | None = Field(description="The comment this replies to; null for a new thread.")
    author: str | None = Field(description="The author's display name; null when they have none.")
    body: str | None = Field(description="The Markdown written; null when deleted or hidden.")
    body_html: str | None = Field(description="The body as sanitised HTML; null likewise.")
    state: Literal["shown", "deleted", "hidden"] = Field(
        description="deleted by its author, or hidden by a curator: its text is gone from here."
    )
    created_at: datetime.datetime
    edited_at: datetime.datetime | None


class CommentPage(Schema):
    items: list[CommentOut]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
    )


class CommentIn(Schema):
    body: str = Field(description="Markdown, with $math$.")
    parent: int | None = Field(
        None, description="A comment of this paper to reply to; null for a new thread."
    )
