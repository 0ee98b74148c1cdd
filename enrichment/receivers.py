"""Papers stored in the catalog are queued for enrichment."""

from typing import Any

from django.dispatch import receiver

from catalog.signals import papers_stored
from enrichment.queue import queue_enrichment


@receiver(papers_stored, dispatch_uid="enrichment_papers_stored")
def enrich_stored_papers(
    sender: object, *, paper_ids: list[int], bulk: bool, **kwargs: Any
) -> None:
    # A bulk import brings up to millions of papers: one task each would flood
    # the queue, so they are enriched by `summarize --missing` and
    # `render_previews --missing` instead.
    if not bulk:
        queue_enrichment(paper_ids)
