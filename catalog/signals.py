"""Catalog writes made through the ORM, one by one or by admin, make the cache stale;
papers_stored tells the apps above the catalog which papers arrived or changed (and
the catalog whose hand-gathered facts arXiv's data replaced)."""

from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save
from django.dispatch import Signal, receiver
from django.utils import timezone

from catalog.cache import bump_catalog_version
from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperImage,
    PaperProvenance,
    PaperTag,
    Summary,
    Tag,
)

# Sent inside the writing transaction by every path that stores papers from
# arXiv (ingest, curators adding papers), with paper_ids (created or changed)
# and bulk (a snapshot import or harvest, whose papers are enriched in bulk by
# command rather than one task each). Receivers act after the commit.
papers_stored = Signal()
# Sent by `load_demo` after its papers are committed, with paper_ids: the apps
# above build at once what the demo pages show (similar papers).
demo_loaded = Signal()

SHOWN_MODELS = (Paper, PaperAuthor, Author, PaperTag, Tag, Category, CodeLink, Summary, PaperImage)


def catalog_changed(sender, **kwargs) -> None:
    # After the commit: a page rebuilt before it would cache the old rows again.
    transaction.on_commit(bump_catalog_version)


for model in SHOWN_MODELS:
    post_save.connect(catalog_changed, sender=model, dispatch_uid=f"catalog_cache_{model.__name__}")
    post_delete.connect(
        catalog_changed, sender=model, dispatch_uid=f"catalog_cache_delete_{model.__name__}"
    )
for through in (Paper.categories.through, Paper.tags.through):
    m2m_changed.connect(catalog_changed, sender=through, dispatch_uid=f"catalog_cache_{through}")


@receiver(papers_stored, dispatch_uid="catalog_arxiv_replaces_gathered_facts")
def arxiv_replaced_gathered_facts(sender, paper_ids: list[int], **kwargs) -> None:
    """These papers were just stored from arXiv's own data, which replaced any
    facts gathered elsewhere (the demo's): their provenance says so."""
    PaperProvenance.objects.filter(paper_id__in=paper_ids, replaced_at=None).update(
        replaced_at=timezone.now()
    )
