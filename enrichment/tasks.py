"""Background enrichment of papers: thin wrappers of enrichment.services and enrichment.previews."""

import logging

from celery import shared_task

from catalog.models import Paper
from enrichment import neighbours
from enrichment.base import EnrichmentUnavailable
from enrichment.previews import PreviewDownloadError, PreviewUnavailable, render_previews
from enrichment.services import enrich_paper
from enrichment.vectors import VectorsFailed, VectorsUnavailable, build_vectors

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
    paper_id: int, *, regenerate: bool = False, overwrite_curator: bool = False
) -> dict:
    paper = Paper.objects.filter(pk=paper_id).first()
    if paper is None:
        return {"paper": paper_id, "error": "the paper no longer exists"}
    report = enrich_paper(paper=paper, regenerate=regenerate, overwrite_curator=overwrite_curator)
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
def render_paper_previews(paper_id: int) -> dict:
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
    soft_time_limit=300,
    time_limit=360,
    autoretry_for=(VectorsUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=6,
)
def paper_neighbours(paper_ids: list[int]) -> dict:
    """Vectors and similar papers of papers that just arrived or changed."""
    try:
        rows = neighbours.neighbours_for(paper_ids=paper_ids)
    except VectorsFailed as exc:
        logger.error("No vectors for papers %s: %s", paper_ids, exc)
        return {"papers": paper_ids, "error": str(exc)}
    return {"papers": paper_ids, "rows": rows}


@shared_task(soft_time_limit=6 * 3600, time_limit=6 * 3600 + 60)
def refresh_discovery() -> dict:
    """Nightly: refit the tf-idf model when due, embed what is missing, rebuild every neighbour."""
    vector_run = build_vectors(show_progress=False)
    neighbour_run = neighbours.build_all(show_progress=False)
    return {
        "fitted": vector_run.fitted,
        "vectors": vector_run.stored,
        "papers": neighbour_run.papers,
        "rows": neighbour_run.rows,
    }
