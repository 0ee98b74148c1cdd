"""Every write to what catalog pages show is announced here, and only here:
the rows' versions move on inside the writing transaction, and the catalog
cache's version once it has committed.

A paper's `changed_at` is the last change to anything its pages show. Its own
save() moves it (catalog.models.Versioned); the receivers below move it when
one of its tags, authors, categories, code links, summaries or images is
saved or deleted one row at a time. A tag's or a category's own save() moves
its version, and its papers' when what their items show of it (its name, its
slug or code) changes. Writers in bulk (QuerySet.update(), bulk_create(), raw SQL),
which send no model signals, call papers_changed() with the papers they
changed; a paper inserted by SQL gets its version from the database.

catalog_changed() alone is for writes no row version covers: new papers that
came with their version, and neighbour rows, which the nightly rebuild
rewrites for every paper; moving every paper's version each night would say
that every paper changed.
"""

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import Model, Q
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.utils import timezone

from catalog.cache import bump_catalog_version
from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperImage,
    PaperTag,
    Summary,
    Tag,
)


def catalog_changed() -> None:
    """Once the writing transaction commits, every cached read and page is stale
    (a page rebuilt before the commit would cache the old rows again)."""
    transaction.on_commit(bump_catalog_version)


def papers_changed(paper_ids: Iterable[int]) -> None:
    """Move these papers' versions on (one UPDATE), then the catalog's after the commit."""
    ids = sorted(set(paper_ids))
    if ids:
        Paper.objects.filter(pk__in=ids).update(changed_at=timezone.now())
        catalog_changed()


def _saved_or_deleted(sender: type[Model], instance: Model, **kwargs: Any) -> None:
    # Paper, Tag and Category moved their own version in save(); an author's
    # name reaches pages through the papers' stored names (catalog.services).
    catalog_changed()


# What a paper's items and cards show of its tags and categories.
SHOWN_OF: dict[type[Tag | Category], tuple[str, str]] = {
    Tag: ("slug", "name"),
    Category: ("code", "name"),
}


def _remember_shown(sender: type[Tag | Category], instance: Tag | Category, **kwargs: Any) -> None:
    before = None
    if not instance._state.adding:
        before = sender.objects.filter(pk=instance.pk).values_list(*SHOWN_OF[sender]).first()
    instance._shown_before = before  # type: ignore[union-attr]


def _renamed(sender: type[Tag | Category], instance: Tag | Category, **kwargs: Any) -> None:
    """A tag or category shown under another name: every paper showing it changed."""
    before = getattr(instance, "_shown_before", None)
    if before is None or before == tuple(getattr(instance, f) for f in SHOWN_OF[sender]):
        return
    shown_on = Q(tags=instance) if isinstance(instance, Tag) else Q(categories=instance)
    if isinstance(instance, Category):
        shown_on |= Q(primary_category=instance)
    # One UPDATE, however many papers: renames are rare, and a tag may have thousands.
    Paper.objects.filter(shown_on).update(changed_at=timezone.now())
    catalog_changed()


PartOfPaper = PaperAuthor | PaperTag | CodeLink | Summary | PaperImage


def _part_of_paper_changed(sender: type[Model], instance: PartOfPaper, **kwargs: Any) -> None:
    papers_changed([instance.paper_id])


def _links_changed(
    sender: type[Model],
    instance: Paper | Tag | Category,
    action: str,
    reverse: bool,
    pk_set: set[int] | None,
    **kwargs: Any,
) -> None:
    """paper.tags/categories changed, or tag.papers/category.papers (reverse)."""
    if action in ("post_add", "post_remove") and pk_set is not None:  # a set for these
        papers_changed(pk_set if reverse else [instance.pk])
    elif action == "pre_clear":  # the papers are known only before
        if isinstance(instance, Paper):
            papers_changed([instance.pk])
        else:  # reverse: a tag's or a category's papers
            papers_changed(instance.papers.values_list("pk", flat=True))


SIGNALS = {"saved": post_save, "deleted": post_delete}
for name, signal in SIGNALS.items():
    for model in (Paper, Tag, Category, Author):
        uid = f"changes_{model.__name__}_{name}"
        signal.connect(_saved_or_deleted, sender=model, dispatch_uid=uid)
    for part in (PaperAuthor, PaperTag, CodeLink, Summary, PaperImage):
        uid = f"changes_{part.__name__}_{name}"
        signal.connect(_part_of_paper_changed, sender=part, dispatch_uid=uid)
for shown in SHOWN_OF:
    pre_save.connect(_remember_shown, sender=shown, dispatch_uid=f"shown_{shown.__name__}_before")
    post_save.connect(_renamed, sender=shown, dispatch_uid=f"shown_{shown.__name__}_renamed")
for through in (Paper.categories.through, Paper.tags.through):
    uid = f"changes_{through.__name__}_links"
    m2m_changed.connect(_links_changed, sender=through, dispatch_uid=uid)
