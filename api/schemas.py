"""What the API answers, as the OpenAPI schema describes it."""

import datetime
from typing import Literal

from ninja import Field, Schema


class Error(Schema):
    detail: str = Field(description="What was wrong, in words.")


class RateLimitError(Error):
    retry_after: int = Field(description="Seconds until the limit lifts; also in Retry-After.")


class FieldErrors(Error):
    errors: dict[str, list[str]] | None = Field(
        None, description="The messages for each parameter, when parameters were refused."
    )


class ValidationErrors(Schema):
    detail: list[dict] = Field(description="Each parameter that could not be read, and why.")


class TagRef(Schema):
    slug: str
    name: str


class CategoryRef(Schema):
    code: str
    name: str


class PaperItem(Schema):
    id: int = Field(description="The paper's stable id here; papers without an arXiv id have one.")
    arxiv_id: str | None
    version: int | None
    title: str
    authors: list[str]
    abstract: str
    primary_category: str | None
    categories: list[str]
    tags: list[TagRef]
    published_at: datetime.datetime | None = Field(description="Version 1's date on arXiv.")
    published_precision: Literal["day", "month"]
    listed_at: datetime.datetime = Field(description="The date lists sort and filter by.")
    url: str = Field(description="The paper's page on this site.")
    abs_url: str | None
    pdf_url: str | None
    official_code_url: str | None


class PaperPage(Schema):
    items: list[PaperItem]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null on the last page."
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
    updated_at: datetime.datetime | None = Field(description="This version's date on arXiv.")
    announced_at: datetime.datetime | None
    added_at: datetime.datetime = Field(description="When the paper came to this catalog.")
    code_links: list[CodeLinkOut]
    summaries: list[SummariesOut] = Field(description="Published summaries, by language.")
    similar: list[SimilarOut] = Field(description="The most similar papers, most similar first.")


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


class Subscriptions(Schema):
    tags: list[TagRef]
    categories: list[CategoryRef]


class SubscriptionState(Schema):
    kind: Literal["tag", "category"]
    key: str
    subscribed: bool
