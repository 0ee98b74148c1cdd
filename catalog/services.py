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
    free_author_slugs,
)
from catalog.names import normalize_name
from catalog.taxonomy import category_name


def upsert_authors(names: Sequence[str]) -> list[Author]:
    """The Author rows for names, in order, created where missing; a name
    curators merged into another author gives that author.

    Concurrent callers converge on one row per normalised name: the insert
    ignores conflicts (of names, and of slugs another caller just took) and
    the rows are read back afterwards, the missing ones tried again.
    """
    cleaned = [" ".join(name.split()) for name in names if name and name.strip()]
    by_key: dict[str, str] = {}  # each key's first spelling, in the order given
    for name in cleaned:
        by_key.setdefault(normalize_name(name), name)
    found: dict[str, Author] = {}
    for _ in range(3):
        missing = {key: name for key, name in by_key.items() if key not in found}
        if not missing:
            break
        slugs = free_author_slugs(list(missing.values()))
        Author.objects.bulk_create(
            [
                Author(name=name, normalized_name=key, slug=slugs[name])
                for key, name in missing.items()
            ],
            ignore_conflicts=True,
        )
        found.update(
            Author.objects.select_related("merged_into").in_bulk(
                list(missing), field_name="normalized_name"
            )
        )
    ordered, seen = [], set()
    for name in cleaned:
        author = found[normalize_name(name)].credited
        if author.pk not in seen:
            seen.add(author.pk)
            ordered.append(author)
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
        store_author_names(paper, [(author.name, author.slug) for author in authors])


def refresh_author_names(paper: Paper) -> None:
    """Bring the paper's stored names in step with its author rows (after admin edits them)."""
    rows = PaperAuthor.objects.filter(paper=paper).order_by("position")
    store_author_names(paper, list(rows.values_list("author__name", "author__slug")))


def store_author_names(paper: Paper, authors: Sequence[tuple[str, str]]) -> None:
    """Store the paper's (name, slug) of each author, in order, as its pages read them."""
    names, slugs = [name for name, _ in authors], [slug for _, slug in authors]
    if paper.author_list != names or paper.author_slugs != slugs:
        paper.author_list, paper.author_slugs = names, slugs
        paper.author_names = ", ".join(names)
        Paper.objects.filter(pk=paper.pk).update(
            author_list=names, author_slugs=slugs, author_names=paper.author_names
        )
        papers_changed([paper.pk])  # update() sends no post_save


def refresh_papers_authors(paper_ids: Iterable[int]) -> None:
    """Store the names and slugs of many papers' authors after their rows moved."""
    authors: dict[int, list[tuple[str, str]]] = {pk: [] for pk in paper_ids}
    rows = PaperAuthor.objects.filter(paper_id__in=list(authors)).order_by("paper_id", "position")
    for paper_id, name, slug in rows.values_list("paper_id", "author__name", "author__slug"):
        authors[paper_id].append((name, slug))
    papers = Paper.objects.filter(pk__in=list(authors)).only("author_list", "author_slugs")
    for paper in papers:
        names, slugs = [n for n, _ in authors[paper.pk]], [s for _, s in authors[paper.pk]]
        paper.author_list, paper.author_slugs, paper.author_names = names, slugs, ", ".join(names)
    Paper.objects.bulk_update(
        papers, ["author_list", "author_slugs", "author_names"], batch_size=500
    )
    papers_changed(list(authors))


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
