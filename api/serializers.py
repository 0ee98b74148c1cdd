"""Papers, tags and categories as the API's JSON, from rows the selectors fetched."""

import re
from typing import TYPE_CHECKING, Any

from django.http import HttpRequest

from catalog.models import Category, Paper, Summary
from catalog.passages import Passage
from catalog.selectors import SimilarEntry, page_categories, summaries_by_language

if TYPE_CHECKING:
    from catalog.counts import CountedCategory, CountedTag
    from catalog.selectors import PagePaper

# One item of a numbered Markdown list, as key takeaways are written.
TAKEAWAY_ITEM = re.compile(r"^\s*\d+[.)]\s+")


def paper_item(
    request: HttpRequest, paper: Paper, *, categories: list[Category] | None = None
) -> dict[str, Any]:
    """A list entry: needs primary_category, tags, categories (or `categories` given)
    and official_code_url fetched."""
    if categories is None:
        categories = list(paper.categories.all())
    return {
        "id": paper.pk,
        "arxiv_id": paper.arxiv_id,
        "version": paper.version,
        "title": paper.title,
        "authors": paper.author_list,
        "abstract": paper.abstract,
        "primary_category": category_ref(paper.primary_category),
        "categories": [category_ref(category) for category in categories],
        "tags": [{"slug": tag.slug, "name": tag.name} for tag in paper.tags.all()],
        "published_at": paper.published_at,
        "published_precision": paper.published_precision,
        "listed_at": paper.listed_at,
        "added_at": paper.added_at,
        "updated_at": paper.changed_at,
        "url": request.build_absolute_uri(paper.get_absolute_url()),
        "abs_url": paper.abs_url or None,
        "pdf_url": paper.pdf_url or None,
        "official_code_url": getattr(paper, "official_code_url", None),
        "upvotes": paper.upvote_count,
    }


def passage_item(request: HttpRequest, passage: Passage | None) -> dict[str, Any] | None:
    """Where a full-text search found the paper's text, as an item's `passage`."""
    if passage is None:
        return None
    return {
        "section": passage.heading,
        "section_number": passage.section_number,
        "paragraph_number": passage.paragraph_number,
        "text": passage.paragraph,
        "html": str(passage.html),
        "url": request.build_absolute_uri(passage.url),
    }


def category_ref(category: Category | None) -> dict[str, str] | None:
    """A category as items show it, as tags are shown: its code and name."""
    return {"code": category.code, "name": category.name} if category else None


def only_fields(item: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    """The item with only the fields asked for (all when none were named). A field
    the item leaves out (`passage` outside a full-text search) stays left out."""
    return item if fields is None else {name: item[name] for name in fields if name in item}


def paper_detail(
    request: HttpRequest, paper: "PagePaper", *, similar: list[SimilarEntry]
) -> dict[str, Any]:
    """Everything the paper page shows (catalog.selectors.paper_for_page fetched it)."""
    code_links = list(paper.code_links.all())
    official = next((link.url for link in code_links if link.kind == "official"), None)
    return {
        **paper_item(request, paper, categories=page_categories(paper)),
        "official_code_url": official,  # where paper_item has it, read from the links here
        "comment": paper.comment,
        "journal_ref": paper.journal_ref,
        "doi": paper.doi,
        "source_url": paper.source_url or None,
        "version_updated_at": paper.updated_at,
        "announced_at": paper.announced_at,
        "code_links": [{"url": link.url, "kind": link.kind} for link in code_links],
        "summaries": [
            summaries_item(language, summaries)
            for language, summaries in summaries_by_language(paper.published_summaries)
        ],
        "similar": [similar_item(request, entry) for entry in similar],
    }


def similar_item(request: HttpRequest, entry: SimilarEntry) -> dict[str, Any]:
    paper = entry.paper
    return {
        "id": paper.pk,
        "arxiv_id": paper.arxiv_id,
        "title": paper.title,
        "listed_at": paper.listed_at,
        "added_at": paper.added_at,
        "updated_at": paper.changed_at,
        "url": request.build_absolute_uri(paper.get_absolute_url()),
        "tags": [{"slug": tag.slug, "name": tag.name} for tag in entry.tags],
        "score": entry.score,
        "shared_tags": [tag.slug for tag in entry.shared_tags],
        "shared_terms": entry.terms,
    }


def summaries_item(language: str, summaries: list[Summary]) -> dict[str, Any]:
    by_kind = {summary.kind: summary for summary in summaries}
    takeaways = by_kind.get(Summary.Kind.TAKEAWAYS)
    return {
        "language": language,
        "summary": _body(by_kind.get(Summary.Kind.SUMMARY)),
        "translation": _body(by_kind.get(Summary.Kind.TRANSLATION)),
        "takeaways": takeaway_items(takeaways.body) if takeaways else [],
        "machine_written": any(summary.is_machine_written for summary in summaries),
    }


def _body(summary: Summary | None) -> str | None:
    return summary.body if summary else None


def takeaway_items(body: str) -> list[str]:
    """The items of a numbered Markdown list; lines that continue an item join it."""
    items: list[str] = []
    for line in body.splitlines():
        if TAKEAWAY_ITEM.match(line):
            items.append(TAKEAWAY_ITEM.sub("", line).strip())
        elif line.strip() and items:
            items[-1] = f"{items[-1]} {line.strip()}"
        elif line.strip():
            items.append(line.strip())
    return items


def tag_item(request: HttpRequest, tag: "CountedTag") -> dict[str, Any]:
    return {
        "slug": tag.slug,
        "name": tag.name,
        "description": tag.description,
        "paper_count": tag.paper_count,
        "url": request.build_absolute_uri(tag.get_absolute_url()),
    }


def category_item(request: HttpRequest, category: "CountedCategory") -> dict[str, Any]:
    return {
        "code": category.code,
        "name": category.name,
        "paper_count": category.paper_count,
        "url": request.build_absolute_uri(category.get_absolute_url()),
    }
