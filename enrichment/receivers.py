"""Papers stored in the catalog are queued for enrichment and for their similar papers."""

from django.conf import settings
from django.dispatch import receiver

from catalog.signals import demo_loaded, papers_stored
from enrichment.queue import queue_enrichment, queue_neighbours


@receiver(papers_stored, dispatch_uid="enrichment_papers_stored")
def enrich_stored_papers(sender, *, paper_ids: list[int], bulk: bool, **kwargs) -> None:
    # A bulk import brings up to millions of papers: one task each would flood
    # the queue, so they are enriched by `summarize --missing`,
    # `render_previews --missing` and `build_vectors --missing` (also nightly) instead.
    if not bulk:
        queue_enrichment(paper_ids)
        if settings.DISCOVERY_AUTO:
            queue_neighbours(paper_ids)


@receiver(demo_loaded, dispatch_uid="enrichment_demo_loaded")
def demo_neighbours(sender, *, paper_ids: list[int], **kwargs) -> None:
    """The demo is small: its vectors and neighbours are built at once, so the
    paper pages of `make run` show similar papers from the start."""
    from enrichment import neighbours, vectors

    if not settings.DISCOVERY_AUTO:
        return
    vectors.build_vectors(show_progress=False)
    neighbours.build_all(show_progress=False)
