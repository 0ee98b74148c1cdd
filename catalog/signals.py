"""Signals the catalog sends to the apps above it: which papers arrived or changed
(and, listening to it itself, the papers whose hand-gathered facts arXiv's data replaced)."""

from typing import Any

from django.dispatch import Signal, receiver
from django.utils import timezone

from catalog.models import PaperProvenance

# Sent inside the writing transaction by every path that stores papers from
# arXiv (ingest, curators adding papers), with paper_ids (created or changed)
# and bulk (a snapshot import or harvest, whose papers are enriched in bulk by
# command rather than one task each). Receivers act after the commit.
papers_stored = Signal()
# Sent by `load_demo` after its papers are committed, with paper_ids: the apps
# above build at once what the demo pages show (similar papers).
demo_loaded = Signal()
# Sent inside the transaction when curators merged authors, with kept (the
# Author kept) and merged_ids: the apps above move what they hold of the
# merged authors (readers' follows) onto the kept one.
authors_merged = Signal()


@receiver(papers_stored, dispatch_uid="catalog_arxiv_replaces_gathered_facts")
def arxiv_replaced_gathered_facts(sender: object, paper_ids: list[int], **kwargs: Any) -> None:
    """These papers were just stored from arXiv's own data, which replaced any
    facts gathered elsewhere (the demo's): their provenance says so."""
    PaperProvenance.objects.filter(paper_id__in=paper_ids, replaced_at=None).update(
        replaced_at=timezone.now()
    )
