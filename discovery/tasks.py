"""Background discovery: thin wrappers of discovery.neighbours and discovery.vectors."""

import logging
from typing import Any

from celery import Task, shared_task

from core.claims import claimed
from discovery import neighbours
from discovery.vectors import VectorsFailed, VectorsUnavailable, build_vectors

logger = logging.getLogger(__name__)


@shared_task(
    soft_time_limit=300,
    time_limit=360,
    autoretry_for=(VectorsUnavailable,),
    retry_backoff=30,
    retry_backoff_max=1800,
    retry_jitter=True,
    max_retries=6,
)
def paper_neighbours(paper_ids: list[int]) -> dict[str, Any]:
    """Vectors and similar papers of papers that just arrived or changed."""
    try:
        rows = neighbours.neighbours_for(paper_ids=paper_ids)
    except VectorsFailed as exc:
        logger.error("No vectors for papers %s: %s", paper_ids, exc)
        return {"papers": paper_ids, "error": str(exc)}
    return {"papers": paper_ids, "rows": rows}


@shared_task(bind=True, soft_time_limit=6 * 3600, time_limit=6 * 3600 + 60)
def refresh_discovery(self: Task[[], dict[str, Any]]) -> dict[str, Any]:
    """Nightly: refit the tf-idf model when due, embed what is missing, rebuild every neighbour.

    One delivery at a time (core.claims). Delivered again after its worker
    died, it resumes: the papers already embedded keep their vectors, and
    every neighbour is rebuilt anyway.
    """
    with claimed(self, name="refresh_discovery") as held:
        if not held:
            logger.info("Discovery is being refreshed by another delivery; leaving it to that one.")
            return {"skipped": "running elsewhere"}
        vector_run = build_vectors(show_progress=False)
        neighbour_run = neighbours.build_all(show_progress=False)
    return {
        "fitted": vector_run.fitted,
        "vectors": vector_run.stored,
        "papers": neighbour_run.papers,
        "rows": neighbour_run.rows,
    }
