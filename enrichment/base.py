"""The interface every enrichment backend offers, and the errors it raises."""

from dataclasses import dataclass, field
from typing import Protocol

# arXiv abstracts are written in English; summaries and takeaways are too.
SOURCE_LANGUAGE = "en"


@dataclass(frozen=True)
class Enrichment:
    """What a backend made of one abstract; an empty part is simply not stored."""

    summary: str = ""
    takeaways: tuple[str, ...] = ()
    translations: dict[str, str] = field(default_factory=dict)


class EnrichmentFailed(Exception):
    """The backend gave no usable output for this paper; retrying soon would not help."""


class EnrichmentUnavailable(Exception):
    """The backend could not be reached or is rate-limiting us; worth retrying later."""


class EnrichmentBackend(Protocol):
    kind: str  # a Summary.Backend value
    written_by: str
    model_name: str
    prompt_version: str
    translation_languages: tuple[str, ...]

    def enrich(self, *, title: str, abstract: str) -> Enrichment: ...
