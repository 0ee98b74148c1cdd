"""Storing what a backend wrote, and queueing papers for enrichment."""

import datetime
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from catalog.models import Paper, Summary
from enrichment.backends import get_backend
from enrichment.base import SOURCE_LANGUAGE, Enrichment, EnrichmentBackend, EnrichmentFailed

logger = logging.getLogger(__name__)

Key = tuple[str, str]  # (language, kind)


@dataclass
class EnrichmentReport:
    """What one run did for one paper, as the command prints it and the task returns it."""

    paper: Paper
    stored: list[Key] = field(default_factory=list)
    kept: list[Key] = field(default_factory=list)
    error: str = ""

    def __str__(self) -> str:
        label = self.paper.arxiv_id or f"paper {self.paper.pk}"
        if self.error:
            return f"{label}: FAILED: {self.error}"
        parts = []
        if self.stored:
            parts.append("stored " + describe(self.stored))
        if self.kept:
            parts.append("kept existing " + describe(self.kept))
        return f"{label}: " + ("; ".join(parts) or "nothing to store")

    def as_dict(self) -> dict[str, Any]:
        return {
            "paper": self.paper.pk,
            "stored": [list(key) for key in self.stored],
            "kept": [list(key) for key in self.kept],
            "error": self.error,
        }


def describe(keys: Iterable[Key]) -> str:
    return ", ".join(f"{kind} ({language})" for language, kind in keys)


def planned_keys(backend: EnrichmentBackend) -> list[Key]:
    """The summaries a backend writes for a paper."""
    keys: list[Key] = [
        (SOURCE_LANGUAGE, Summary.Kind.SUMMARY),
        (SOURCE_LANGUAGE, Summary.Kind.TAKEAWAYS),
    ]
    keys += [(language, Summary.Kind.TRANSLATION) for language in backend.translation_languages]
    return keys


def takeaways_markdown(takeaways: Iterable[str]) -> str:
    return "\n".join(f"{number}. {text}" for number, text in enumerate(takeaways, 1))


def bodies(enrichment: Enrichment) -> dict[Key, str]:
    found = {
        (SOURCE_LANGUAGE, Summary.Kind.SUMMARY): enrichment.summary,
        (SOURCE_LANGUAGE, Summary.Kind.TAKEAWAYS): takeaways_markdown(enrichment.takeaways),
    }
    for language, text in enrichment.translations.items():
        found[(language, Summary.Kind.TRANSLATION)] = text
    return {key: body for key, body in found.items() if body}


def is_protected(summary: Summary) -> bool:
    return summary.curator_edited or summary.backend == Summary.Backend.CURATOR


def written_since(summary: Summary, moment: datetime.datetime | None) -> bool:
    return moment is not None and summary.updated_at >= moment


def enrich_paper(
    *,
    paper: Paper,
    regenerate: bool = False,
    overwrite_curator: bool = False,
    requested_at: datetime.datetime | None = None,
    backend: EnrichmentBackend | None = None,
) -> EnrichmentReport:
    """Write the paper's missing machine summaries (with regenerate, replace the
    machine-written ones too; with overwrite_curator, curators' edits as well).
    A summary written since requested_at (when the regeneration was asked
    for) is kept: an earlier delivery of the same request wrote it.

    The backend is asked only when something would be stored. A backend that
    cannot be reached raises EnrichmentUnavailable for the caller to retry later;
    any other failure is logged and returned in the report, and nothing is stored.
    """
    backend = backend or get_backend()
    regenerate = regenerate or overwrite_curator
    report = EnrichmentReport(paper=paper)
    existing = {(s.language, s.kind): s for s in Summary.objects.filter(paper=paper)}
    writable = []
    for key in planned_keys(backend):
        current = existing.get(key)
        if current is None or (
            regenerate
            and (overwrite_curator or not is_protected(current))
            and not written_since(current, requested_at)
        ):
            writable.append(key)
        else:
            report.kept.append(key)
    if not writable:
        return report

    try:
        enrichment = backend.enrich(title=paper.title, abstract=paper.abstract)
    except EnrichmentFailed as exc:
        logger.error("Enrichment of paper %s failed: %s", paper.pk, exc)
        report.error = str(exc)
        return report

    written = bodies(enrichment)
    status = Summary.Status.PUBLISHED if settings.SUMMARY_AUTO_PUBLISH else Summary.Status.DRAFT
    with transaction.atomic():
        # Re-read under lock: a curator may have saved an edit while the model was writing.
        locked = {
            (s.language, s.kind): s for s in Summary.objects.select_for_update().filter(paper=paper)
        }
        for key in writable:
            if key not in written:
                continue
            current = locked.get(key)
            if current and is_protected(current) and not overwrite_curator:
                report.kept.append(key)
                continue
            language, kind = key
            Summary.objects.update_or_create(
                paper=paper,
                language=language,
                kind=kind,
                defaults={
                    "body": written[key],
                    "backend": backend.kind,
                    "written_by": backend.written_by,
                    "model_name": backend.model_name,
                    "prompt_version": backend.prompt_version,
                    "status": status,
                    "curator_edited": False,
                },
            )
            report.stored.append(key)
    return report
