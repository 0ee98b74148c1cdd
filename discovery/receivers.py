"""Papers stored in the catalog get their vectors and similar papers."""

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.dispatch import receiver

from catalog.signals import demo_loaded, papers_stored
from core import background
from discovery import neighbours, vectors
from discovery.tasks import paper_neighbours


@receiver(papers_stored, dispatch_uid="discovery_papers_stored")
def neighbours_of_stored_papers(
    sender: object, *, paper_ids: list[int], bulk: bool, **kwargs: Any
) -> None:
    # A bulk import brings up to millions of papers: one task each would flood
    # the queue, so they get theirs from `build_vectors --missing` (also nightly).
    if not bulk and settings.DISCOVERY_AUTO:
        queue_neighbours(paper_ids)


def queue_neighbours(paper_ids: Iterable[int]) -> None:
    """Vectors and similar papers for papers ingest or a curator has just stored:
    one task for the batch, after the commit, so they show within a minute."""
    ids = list(paper_ids)
    if ids:
        background.send(paper_neighbours, ids)


@receiver(demo_loaded, dispatch_uid="discovery_demo_loaded")
def demo_neighbours(sender: object, *, paper_ids: list[int], **kwargs: Any) -> None:
    """The demo is small: its vectors and neighbours are built at once, so the
    paper pages of `make run` show similar papers from the start."""
    if not settings.DISCOVERY_AUTO:
        return
    vectors.build_vectors(show_progress=False)
    neighbours.build_all(show_progress=False)
