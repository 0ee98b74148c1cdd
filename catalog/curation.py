"""Curation actions on many papers at once, as admin, commands and review take them.

Each one writes the catalog, records a CurationEvent per paper it changed
(who, when, what: the paper's admin history shows them) and makes cached
pages fresh through catalog.changes, since bulk updates send no model signals.
"""

from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from catalog.changes import papers_changed
from catalog.models import (
    Author,
    CurationEvent,
    Paper,
    PaperAuthor,
    PaperTag,
    Summary,
    Tag,
)
from catalog.names import normalize_name
from catalog.services import refresh_papers_authors
from catalog.signals import authors_merged

# A person, or the name of what acted for nobody in particular ("add_papers command").
Actor = User | str
Action = CurationEvent.Action


def record(
    paper_ids: Iterable[int], action: str, *, by: Actor, detail: str = ""
) -> list[CurationEvent]:
    """One event per paper, all at the same moment."""
    return record_each({pk: detail for pk in paper_ids}, action, by=by)


def record_each(details: dict[int, str], action: str, *, by: Actor) -> list[CurationEvent]:
    """One event per paper with its own detail, in one insert."""
    now = timezone.now()
    who = {"actor": by} if isinstance(by, str) else {"user": by}
    return CurationEvent.objects.bulk_create(
        CurationEvent(paper_id=pk, action=action, detail=detail, created_at=now, **who)
        for pk, detail in details.items()
    )


def record_about(subjects: dict[str, str], action: str, *, by: Actor) -> list[CurationEvent]:
    """One event per subject that is no paper of the catalog, with its detail."""
    now = timezone.now()
    who = {"actor": by} if isinstance(by, str) else {"user": by}
    return CurationEvent.objects.bulk_create(
        CurationEvent(subject=subject, action=action, detail=detail, created_at=now, **who)
        for subject, detail in subjects.items()
    )


def tag_names(tags: Iterable[Tag]) -> str:
    return ", ".join(tag.name for tag in tags)


@transaction.atomic
def add_tags(papers: QuerySet[Paper], tags: Sequence[Tag], *, by: Actor) -> list[int]:
    """Tag the papers; a paper already carrying a tag keeps the date it got it.

    Returns the papers that got a tag they did not have.
    """
    new = PaperTag.objects.give(list(papers.values_list("pk", flat=True)), tags)
    names = {tag.pk: tag.name for tag in tags}
    given: dict[int, list[str]] = {}
    for row in new:
        given.setdefault(row.paper_id, []).append(names[row.tag_id])
    record_each({pk: ", ".join(added) for pk, added in given.items()}, Action.TAGGED, by=by)
    papers_changed(list(given))
    return list(given)


@transaction.atomic
def remove_tag(papers: QuerySet[Paper], tag: Tag, *, by: Actor) -> list[int]:
    """Take the tag off the papers; returns those that had it."""
    paper_ids = list(
        PaperTag.objects.filter(paper__in=papers, tag=tag).values_list("paper_id", flat=True)
    )
    PaperTag.objects.filter(paper_id__in=paper_ids, tag=tag).delete()
    record(paper_ids, Action.UNTAGGED, by=by, detail=tag.name)
    papers_changed(paper_ids)
    return paper_ids


@transaction.atomic
def hide(papers: QuerySet[Paper], *, by: Actor) -> list[int]:
    paper_ids = list(papers.filter(is_visible=True).values_list("pk", flat=True))
    Paper.objects.filter(pk__in=paper_ids).update(is_visible=False)
    record(paper_ids, Action.HIDDEN, by=by)
    papers_changed(paper_ids)
    return paper_ids


@transaction.atomic
def show(papers: QuerySet[Paper], *, by: Actor) -> list[int]:
    """Make the papers public; one waiting for review or rejected counts as published.

    A listing merged into another paper stays hidden: that paper shows it.
    """
    shown = papers.filter(merged_into__isnull=True).filter(
        Q(is_visible=False) | ~Q(review=Paper.Review.PUBLISHED)
    )
    in_review = list(shown.exclude(review=Paper.Review.PUBLISHED).values_list("pk", flat=True))
    paper_ids = list(shown.values_list("pk", flat=True))
    Paper.objects.filter(pk__in=paper_ids).update(is_visible=True, review=Paper.Review.PUBLISHED)
    record(in_review, Action.PUBLISHED, by=by)
    record(set(paper_ids) - set(in_review), Action.SHOWN, by=by)
    papers_changed(paper_ids)
    return paper_ids


@transaction.atomic
def publish(
    papers: QuerySet[Paper], *, tags: Sequence[Tag] = (), by: Actor, detail: str = ""
) -> list[int]:
    """Publish the papers waiting for review (or rejected before) with the tags."""
    paper_ids = list(
        papers.exclude(review=Paper.Review.PUBLISHED)
        .filter(merged_into__isnull=True)
        .values_list("pk", flat=True)
    )
    Paper.objects.filter(pk__in=paper_ids).update(is_visible=True, review=Paper.Review.PUBLISHED)
    if tags:
        add_tags(Paper.objects.filter(pk__in=paper_ids), tags, by=by)
    with_tags = f"with {tag_names(tags)}" if tags else ""
    record(paper_ids, Action.PUBLISHED, by=by, detail="; ".join(filter(None, [with_tags, detail])))
    papers_changed(paper_ids)
    return paper_ids


@transaction.atomic
def reject(papers: QuerySet[Paper], *, by: Actor) -> list[int]:
    """Turn down papers waiting for review: hidden for good, never brought back by ingest."""
    paper_ids = list(papers.filter(review=Paper.Review.PENDING).values_list("pk", flat=True))
    Paper.objects.filter(pk__in=paper_ids).update(is_visible=False, review=Paper.Review.REJECTED)
    record(paper_ids, Action.REJECTED, by=by)
    papers_changed(paper_ids)
    return paper_ids


@transaction.atomic
def publish_summaries(summaries: QuerySet[Summary], *, by: Actor) -> int:
    """Publish the draft (machine-written) summaries among these; returns how many."""
    drafts = list(
        summaries.filter(status=Summary.Status.DRAFT).values_list(
            "pk", "paper_id", "language", "kind"
        )
    )
    Summary.objects.filter(pk__in=[row[0] for row in drafts]).update(
        status=Summary.Status.PUBLISHED
    )
    by_paper: dict[int, list[str]] = {}
    for _, paper_id, language, kind in drafts:
        by_paper.setdefault(paper_id, []).append(f"{kind} ({language})")
    record_each(
        {pk: ", ".join(published) for pk, published in by_paper.items()},
        Action.SUMMARIES_PUBLISHED,
        by=by,
    )
    papers_changed(list(by_paper))
    return len(drafts)


def _move_credits(rows: QuerySet[PaperAuthor], *, to: Author) -> list[int]:
    """Credit these rows' papers to `to` instead; a paper already crediting it
    keeps its own row. Returns the papers changed."""
    paper_ids = sorted(set(rows.values_list("paper_id", flat=True)))
    already = PaperAuthor.objects.filter(author=to, paper_id__in=paper_ids)
    rows.filter(paper_id__in=already.values("paper_id")).delete()
    rows.update(author=to)
    refresh_papers_authors(paper_ids)
    return paper_ids


@transaction.atomic
def merge_authors(*, kept: Author, merged: Sequence[Author], by: Actor) -> list[int]:
    """Make the merged authors one with kept: their papers credit kept, and
    their rows stay as its aliases, so later ingests of those names land on
    kept. Returns the papers whose authors changed."""
    kept = kept.credited
    merged_ids = [author.pk for author in merged if author.pk != kept.pk]
    if not merged_ids:
        return []
    Author.objects.filter(merged_into_id__in=merged_ids).update(merged_into=kept)
    Author.objects.filter(pk__in=merged_ids).update(merged_into=kept)
    paper_ids = _move_credits(PaperAuthor.objects.filter(author_id__in=merged_ids), to=kept)
    names = ", ".join(author.name for author in merged if author.pk in merged_ids)
    record(paper_ids, Action.AUTHORS_MERGED, by=by, detail=f"{names} into {kept.name}")
    authors_merged.send(sender=Author, kept=kept, merged_ids=merged_ids)
    return paper_ids


@transaction.atomic
def split_author(*, author: Author, paper_ids: Sequence[int], name: str, by: Actor) -> Author:
    """Credit the chosen papers of the author to another person named `name`:
    the author of that normalised name (made when there is none). ValueError
    when the name is the author's own, or names nobody."""
    cleaned = " ".join(name.split())
    if not cleaned:
        raise ValueError("The new author needs a name.")
    existing = Author.objects.filter(normalized_name=normalize_name(cleaned)).first()
    other = existing.credited if existing else Author.objects.create(name=cleaned)
    if other.pk == author.pk:
        raise ValueError(f"{cleaned} is this author's own name; give the other person's.")
    rows = PaperAuthor.objects.filter(author=author, paper_id__in=list(paper_ids))
    moved = _move_credits(rows, to=other)
    record(moved, Action.AUTHOR_SPLIT, by=by, detail=f"{author.name} to {other.name}")
    return other
