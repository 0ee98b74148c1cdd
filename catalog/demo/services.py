"""Loading the demo catalog that tools/build_demo.py wrote into the database."""

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils.dateparse import parse_datetime

from catalog.changes import catalog_changed
from catalog.models import (
    Category,
    CodeLink,
    Paper,
    PaperProvenance,
    PaperTag,
    Summary,
    Tag,
    title_key,
)
from catalog.services import set_authors, upsert_categories
from catalog.signals import demo_loaded

DEMO_CATALOG = Path(__file__).with_name("papers.json")


@dataclass(frozen=True)
class DemoLoad:
    """What one load created."""

    papers: int
    tags: int
    code_links: int
    summaries: int


def read_demo_catalog(*, path: Path = DEMO_CATALOG) -> dict[str, Any]:
    catalog: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return catalog


@transaction.atomic
def load_demo_catalog(*, catalog: dict[str, Any]) -> DemoLoad:
    """Create the demo papers the catalog does not have yet, with their authors,
    categories, tags, code links, summaries and the provenance of their arXiv facts.

    A paper counts as present when its arXiv id is taken or a paper with its
    title key exists (a listing loaded before its id was known); a present
    paper is not touched, so curators' edits survive every load.
    """
    entries = _missing_papers(catalog["papers"])
    if not entries:
        return DemoLoad(papers=0, tags=0, code_links=0, summaries=0)
    used_tags = {tag["name"] for entry in entries for tag in entry["tags"]}
    tags, tags_created = _tags([tag for tag in catalog["tags"] if tag["name"] in used_tags])
    categories = upsert_categories(code for entry in entries for code in entry["categories"])

    papers = Paper.objects.bulk_create(
        _paper(entry, primary_category=categories.get(entry["primary_category"] or ""))
        for entry in entries
    )
    for paper, entry in zip(papers, entries, strict=True):
        if entry["authors"]:
            set_authors(paper, entry["authors"])
    Paper.categories.through.objects.bulk_create(
        Paper.categories.through(paper=paper, category=categories[code])
        for paper, entry in zip(papers, entries, strict=True)
        for code in entry["categories"]
    )
    PaperTag.objects.bulk_create(
        PaperTag(paper=paper, tag=tags[tag["name"]], **_present(added_at=_when(tag["added_at"])))
        for paper, entry in zip(papers, entries, strict=True)
        for tag in entry["tags"]
    )
    code_links = CodeLink.objects.bulk_create(
        CodeLink(paper=paper, url=link["url"], kind=link["kind"], source=link["source"])
        for paper, entry in zip(papers, entries, strict=True)
        for link in entry["code_links"]
    )
    summaries = Summary.objects.bulk_create(
        Summary(paper=paper, **summary)
        for paper, entry in zip(papers, entries, strict=True)
        for summary in entry["summaries"]
    )
    PaperProvenance.objects.bulk_create(
        PaperProvenance(paper=paper, **entry["provenance"])
        for paper, entry in zip(papers, entries, strict=True)
        if entry["provenance"]
    )
    # Bulk inserts send no model signals; the new rows came with their versions.
    catalog_changed()
    ids = [paper.pk for paper in papers]
    transaction.on_commit(lambda: demo_loaded.send(sender=DemoLoad, paper_ids=ids))
    return DemoLoad(
        papers=len(papers),
        tags=tags_created,
        code_links=len(code_links),
        summaries=len(summaries),
    )


def _missing_papers(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    arxiv_ids = [entry["arxiv_id"] for entry in entries if entry["arxiv_id"]]
    title_keys = [title_key(entry["title"]) for entry in entries]
    taken_ids = set(Paper.objects.filter(arxiv_id__in=arxiv_ids).values_list("arxiv_id", flat=True))
    taken_keys = set(
        Paper.objects.filter(title_key__in=title_keys).values_list("title_key", flat=True)
    )
    return [
        entry
        for entry in entries
        if entry["arxiv_id"] not in taken_ids and title_key(entry["title"]) not in taken_keys
    ]


def _tags(wanted: list[dict[str, str]]) -> tuple[dict[str, Tag], int]:
    """The Tag for each wanted tag name, created where missing, and how many were.

    A tag is found by its slug or its name, so one a curator renamed is still used.
    """
    existing = Tag.objects.filter(
        Q(slug__in=[tag["slug"] for tag in wanted]) | Q(name__in=[tag["name"] for tag in wanted])
    )
    by_slug = {tag.slug: tag for tag in existing}
    by_name = {tag.name: tag for tag in existing}
    found = {tag["name"]: by_slug.get(tag["slug"]) or by_name.get(tag["name"]) for tag in wanted}
    created = Tag.objects.bulk_create(
        Tag(name=tag["name"], slug=tag["slug"], description=tag["description"])
        for tag in wanted
        if found[tag["name"]] is None
    )
    made = {tag.name: tag for tag in created}
    return {name: tag or made[name] for name, tag in found.items()}, len(created)


def _paper(entry: dict[str, Any], *, primary_category: Category | None) -> Paper:
    return Paper(
        title=entry["title"],
        # bulk_create skips save(), which derives the key.
        title_key=title_key(entry["title"]),
        abstract=entry["abstract"],
        comment=entry["comment"],
        primary_category=primary_category,
        # What the pages did not give takes the model's default.
        **_present(
            arxiv_id=entry["arxiv_id"],
            version=entry["version"],
            published_at=_when(entry["published_at"]),
            published_precision=entry["published_precision"],
            updated_at=_when(entry["updated_at"]),
            added_at=_when(entry["added_at"]),
        ),
    )


def _present(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


def _when(value: str | None) -> datetime.datetime | None:
    return parse_datetime(value) if value else None
