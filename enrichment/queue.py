"""Queueing papers for background enrichment, after the caller's transaction commits."""

from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from catalog.models import Paper
from core import background
from enrichment.selectors import papers_missing_fulltext
from enrichment.tasks import fetch_paper_fulltext, render_paper_previews, summarize_paper


def queue_summaries(
    *, paper_ids: Iterable[int], regenerate: bool = False, overwrite_curator: bool = False
) -> None:
    """Summarise these papers in the background once the current transaction commits."""
    requested_at = timezone.now().isoformat() if regenerate or overwrite_curator else None
    for paper_id in paper_ids:
        background.send(
            summarize_paper,
            paper_id,
            regenerate=regenerate,
            overwrite_curator=overwrite_curator,
            requested_at=requested_at,
        )


def queue_enrichment(paper_ids: Iterable[int]) -> None:
    """Summaries, preview images and full texts for papers ingest has just added
    or changed.

    Follows SUMMARY_AUTO, SUMMARY_AUTO_TAGS (only papers in these tags, read
    after the commit so tags given in the same transaction count),
    PREVIEW_AUTO, and FULLTEXT_AUTO with FULLTEXT_PAPERS (a paper new, or at a
    version whose text was not read yet). Safe to call inside the ingest
    transaction.
    """
    ids = list(paper_ids)
    if not ids or not (settings.SUMMARY_AUTO or settings.PREVIEW_AUTO or settings.FULLTEXT_AUTO):
        return

    def send() -> None:
        chosen = Paper.objects.filter(pk__in=ids)
        if settings.SUMMARY_AUTO_TAGS:
            chosen = chosen.filter(tags__slug__in=settings.SUMMARY_AUTO_TAGS).distinct()
        for paper_id, arxiv_id in chosen.values_list("pk", "arxiv_id"):
            if settings.SUMMARY_AUTO:
                summarize_paper.delay(paper_id)
            if settings.PREVIEW_AUTO and arxiv_id:
                render_paper_previews.delay(paper_id)
        if settings.FULLTEXT_AUTO:
            due = papers_missing_fulltext().filter(pk__in=ids)
            for paper_id in due.values_list("pk", flat=True):
                fetch_paper_fulltext.delay(paper_id)

    transaction.on_commit(send, robust=True)
