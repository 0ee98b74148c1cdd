"""Background enrichment of papers: thin wrappers of enrichment.services,
enrichment.previews and enrichment.fulltext."""

import datetime
import logging
from typing import Any

from celery import shared_task

from catalog.models import Paper
from enrichment.base import EnrichmentUnavailable
from enrichment.downloads import DownloadFailed, Unreadable
from enrichment.fulltext import fetch_fulltext
from enrichment.previews import PreviewDownloadError, PreviewUnavailable, render_previews
from enrichment.services import enrich_paper

logger = logging.getLogger(__name__)


@shared_task(
    soft_time_limit=600,
    time_limit=660,
    autoretry_for=(EnrichmentUnavailable,),
    retry_backoff=30,
    retry_backoff_max=3600,
    retry_jitter=True,
    max_retries=6,
)
def summarize_paper(
    paper_id: int,
    *,
    regenerate: bool = False,
    overwrite_curator: bool = False,
    requested_at: str | None = None,
) -> dict[str, Any]:
    """Idempotent, so that a delivery again after its worker died does no harm:
    a paper already summarised is left alone without asking the model, and a
    regeneration keeps what was written since it was asked for (requested_at,
    ISO 8601)."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"paper": paper_id, "error": "the paper no longer exists"}
    report = enrich_paper(
        paper=paper,
        regenerate=regenerate,
        overwrite_curator=overwrite_curator,
        requested_at=datetime.datetime.fromisoformat(requested_at) if requested_at else None,
    )
    logger.info("%s", report)
    return report.as_dict()


@shared_task(
    soft_time_limit=300,
    time_limit=360,
    autoretry_for=(PreviewDownloadError,),
    retry_backoff=60,
    retry_backoff_max=3600,
    retry_jitter=True,
    max_retries=5,
)
def render_paper_previews(paper_id: int) -> dict[str, Any]:
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"paper": paper_id, "error": "the paper no longer exists"}
    try:
        images = render_previews(paper=paper)
    except PreviewUnavailable as exc:
        logger.error("No previews for paper %s: %s", paper_id, exc)
        return {"paper": paper_id, "error": str(exc)}
    return {"paper": paper_id, "images": len(images)}


@shared_task(
    soft_time_limit=900,
    time_limit=960,
    autoretry_for=(DownloadFailed,),
    retry_backoff=60,
    retry_backoff_max=3600,
    retry_jitter=True,
    max_retries=5,
)
def fetch_paper_fulltext(paper_id: int, *, force: bool = False) -> dict[str, Any]:
    """Idempotent: a paper whose current version was read already is left alone."""
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"paper": paper_id, "error": "the paper no longer exists"}
    try:
        result = fetch_fulltext(paper=paper, force=force)
    except Unreadable as exc:
        logger.error("No full text for paper %s: %s", paper_id, exc)
        return {"paper": paper_id, "error": str(exc)}
    if result is None:
        return {"paper": paper_id, "current": True}
    return {
        "paper": paper_id,
        "source": result.source,
        "sections": result.sections,
        "figures": result.figures,
    }
