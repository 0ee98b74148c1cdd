"""Writes to the catalog that more than one caller needs (admin, demo data, ingest)."""

from collections.abc import Iterable, Sequence

from django.db import transaction

from catalog.changes import papers_changed
from catalog.models import (
    Author,
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperTag,
    Summary,
    normalize_name,
)
from catalog.taxonomy import category_name


def upsert_authors(names: Sequence[str]) -> list[Author]:
    """The Author rows for names, in order, created where missing.

    Concurrent callers converge on one row per normalised name: the insert
    ignores conflicts and the rows are read back afterwards.
    """
    cleaned = [" ".join(name.split()) for name in names if name and name.strip()]
    by_key = {normalize_name(name): name for name in reversed(cleaned)}
    Author.objects.bulk_create(
        [Author(name=name, normalized_name=key) for key, name in by_key.items()],
        ignore_conflicts=True,
    )
    found = Author.objects.in_bulk(list(by_key), field_name="normalized_name")
    ordered, seen = [], set()
    for name in cleaned:
        key = normalize_name(name)
        if key not in seen:
            seen.add(key)
            ordered.append(found[key])
    return ordered


def set_authors(paper: Paper, names: Sequence[str]) -> None:
    """Replace the paper's ordered author list."""
    authors = upsert_authors(names)
    with transaction.atomic():
        PaperAuthor.objects.filter(paper=paper).delete()
        PaperAuthor.objects.bulk_create(
            PaperAuthor(paper=paper, author=author, position=position)
            for position, author in enumerate(authors)
        )
        store_author_names(paper, [author.name for author in authors])


def refresh_author_names(paper: Paper) -> None:
    """Bring the paper's stored names in step with its author rows (after admin edits them)."""
    names = PaperAuthor.objects.filter(paper=paper).order_by("position")
    store_author_names(paper, list(names.values_list("author__name", flat=True)))


def store_author_names(paper: Paper, names: list[str]) -> None:
    if paper.author_list != names or paper.author_names != ", ".join(names):
        paper.author_list, paper.author_names = names, ", ".join(names)
        Paper.objects.filter(pk=paper.pk).update(
            author_list=paper.author_list, author_names=paper.author_names
        )
        papers_changed([paper.pk])  # update() sends no post_save


def upsert_categories(codes: Iterable[str]) -> dict[str, Category]:
    wanted = list(dict.fromkeys(code.strip() for code in codes if code and code.strip()))
    Category.objects.bulk_create(
        [Category(code=code, name=category_name(code)) for code in wanted], ignore_conflicts=True
    )
    return Category.objects.in_bulk(wanted, field_name="code")


@transaction.atomic
def match_to_arxiv_id(paper: Paper, arxiv_id: str) -> Paper:
    """Give an id-less listing its arXiv id, keeping its tags, links and summaries.

    When another paper already holds the id, this listing's curation moves onto
    that paper (what the other already has wins) and this one points to it, so
    its old URL redirects there.
    """
    existing = Paper.objects.select_for_update().filter(arxiv_id=arxiv_id).first()
    if existing is None:
        paper.arxiv_id = arxiv_id
        paper.save(update_fields=["arxiv_id"])
        return paper
    if existing.pk == paper.pk:
        return paper
    PaperTag.objects.bulk_create(
        [
            PaperTag(paper=existing, tag_id=row.tag_id, added_at=row.added_at)
            for row in PaperTag.objects.filter(paper=paper)
        ],
        ignore_conflicts=True,
    )
    CodeLink.objects.bulk_create(
        [
            CodeLink(paper=existing, url=link.url, kind=link.kind, source=link.source)
            for link in CodeLink.objects.filter(paper=paper)
        ],
        ignore_conflicts=True,
    )
    taken = set(Summary.objects.filter(paper=existing).values_list("language", "kind"))
    Summary.objects.filter(paper=paper).exclude(
        pk__in=[s.pk for s in Summary.objects.filter(paper=paper) if (s.language, s.kind) in taken]
    ).update(paper=existing)
    paper.merged_into = existing
    paper.is_visible = False
    paper.save(update_fields=["merged_into", "is_visible"])
    papers_changed([existing.pk])  # it has the listing's tags, links and summaries now
    return existing
