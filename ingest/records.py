"""The arXiv record every source (API, OAI-PMH, metadata snapshot) is turned into."""

import datetime
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ArxivRecord:
    arxiv_id: str  # without version: "2505.15034" or "hep-ex/0406020"
    version: int | None
    title: str
    abstract: str
    authors: tuple[str, ...]
    primary_category: str
    categories: tuple[str, ...]
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    published_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    # Code links the record itself gives (found in abstract and comment).
    code_urls: tuple[tuple[str, str], ...] = field(default=())  # (url, "abstract"|"comment")
