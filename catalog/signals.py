"""Signals the catalog sends to the apps above it: which papers arrived or changed."""

from django.dispatch import Signal

# Sent inside the writing transaction by every path that stores papers from
# arXiv (ingest, curators adding papers), with paper_ids (created or changed)
# and bulk (a snapshot import or harvest, whose papers are enriched in bulk by
# command rather than one task each). Receivers act after the commit.
papers_stored = Signal()
# Sent by `load_demo` after its papers are committed, with paper_ids: the apps
# above build at once what the demo pages show (similar papers).
demo_loaded = Signal()
