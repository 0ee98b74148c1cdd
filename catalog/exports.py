"""A list of papers for reference managers: BibTeX, RIS and CSL-JSON.

Any list page's papers (the filters of the request applied) up to
EXPORT_MAX_PAPERS, written as they are read: the rows come from a server-side
cursor (QuerySet.iterator) and each entry goes out as soon as it is made, so a
thousand papers never sit in memory as one document.
"""

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse

from catalog.cache import canonical_query
from catalog.filters import LIST_PARAMETERS
from catalog.models import Paper
from catalog.rendering import bibtex, bibtex_key
from catalog.selectors import filter_papers

CHUNK_SIZE = 200


def bibtex_entries(papers: Iterable[Paper]) -> Iterator[str]:
    used: set[str] = set()
    for paper in papers:
        base = key = bibtex_key(paper)
        suffix = 1
        # Keys name entries in a .bib file: two papers may not share one.
        while key in used:
            suffix += 1
            key = f"{base}{suffix}"
        used.add(key)
        yield bibtex(paper, key=key) + "\n\n"


def _line(value: str) -> str:
    return " ".join(value.split())


def ris_entries(papers: Iterable[Paper]) -> Iterator[str]:
    for paper in papers:
        fields = [("TY", "JOUR" if paper.journal_ref else "UNPB"), ("TI", _line(paper.title))]
        fields += [("AU", _line(name)) for name in paper.author_list]
        if paper.published_at:
            fields.append(("PY", str(paper.published_at.year)))
            fields.append(("DA", paper.published_at.strftime("%Y/%m/%d")))
        if paper.abstract:
            fields.append(("AB", _line(paper.abstract)))
        if paper.arxiv_id:
            fields += [
                ("UR", paper.abs_url),
                ("L1", paper.pdf_url),
                ("AN", f"arXiv:{paper.arxiv_id}"),
                ("DB", "arXiv"),
            ]
        if paper.journal_ref:
            fields.append(("JO", _line(paper.journal_ref)))
        if paper.doi:
            fields.append(("DO", _line(paper.doi)))
        if paper.primary_category is not None:
            fields.append(("KW", paper.primary_category.code))
        yield "".join(f"{tag}  - {value}\n" for tag, value in fields if value) + "ER  - \n\n"


def csl_name(name: str) -> dict[str, str]:
    """A CSL name: the last word as the family name, as arXiv lists them ("Ada Lovelace")."""
    given, _, family = name.strip().rpartition(" ")
    return {"family": family, "given": given} if given else {"literal": family}


def csl_item(paper: Paper, *, key: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": key,
        # CSL's "article" is a preprint or working paper.
        "type": "article-journal" if paper.journal_ref else "article",
        "title": _line(paper.title),
        "author": [csl_name(name) for name in paper.author_list if name.strip()],
    }
    if paper.published_at:
        parts = [paper.published_at.year, paper.published_at.month]
        if paper.published_precision == Paper.DatePrecision.DAY:
            parts.append(paper.published_at.day)
        item["issued"] = {"date-parts": [parts]}
    if paper.abstract:
        item["abstract"] = paper.abstract
    if paper.arxiv_id:
        item.update(
            {
                "URL": paper.abs_url,
                "number": paper.arxiv_id,
                "publisher": "arXiv",
                "genre": "Preprint",
            }
        )
    if paper.journal_ref:
        item["container-title"] = paper.journal_ref
    if paper.doi:
        item["DOI"] = paper.doi
    return item


def csl_json_entries(papers: Iterable[Paper]) -> Iterator[str]:
    yield "["
    for number, paper in enumerate(papers):
        item = csl_item(paper, key=paper.arxiv_id or f"paper-{paper.pk}")
        yield ("\n" if number == 0 else ",\n") + json.dumps(item, ensure_ascii=False)
    yield "\n]\n"


@dataclass(frozen=True)
class Format:
    extension: str
    content_type: str
    write: Callable[[Iterable[Paper]], Iterator[str]]


FORMATS = {
    "bib": Format("bib", "application/x-bibtex; charset=utf-8", bibtex_entries),
    "ris": Format("ris", "application/x-research-info-systems; charset=utf-8", ris_entries),
    "csl.json": Format("csl.json", "application/vnd.citationstyles.csl+json", csl_json_entries),
}


def export_rows(request: HttpRequest, *, papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """The list's papers with the request's filters, in the list's order, at most
    EXPORT_MAX_PAPERS; BadRequest for filters the list page would refuse."""
    paper_filter = filter_papers(canonical_query(request.GET, **LIST_PARAMETERS), papers=papers)
    if not paper_filter.is_valid():
        problems = "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in paper_filter.errors.items()
        )
        raise BadRequest(f"These filters are not valid: {problems}")
    return paper_filter.qs.select_related("primary_category")[: settings.EXPORT_MAX_PAPERS]


def export_response(
    request: HttpRequest, *, papers: QuerySet[Paper], fmt: str, name: str
) -> StreamingHttpResponse:
    """The list as a download named `name`.<extension>, streamed.

    One query for the papers (with their primary category), read in chunks;
    a chosen tag or category is looked up once more each by the filter.
    """
    export = FORMATS[fmt]
    rows = export_rows(request, papers=papers).iterator(chunk_size=CHUNK_SIZE)
    response = StreamingHttpResponse(export.write(rows), content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{export.extension}"'
    return response
