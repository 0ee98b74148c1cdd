"""A list of papers for reference managers: BibTeX, RIS and CSL-JSON.

Any list page's papers (the filters of the request applied) up to
EXPORT_MAX_PAPERS, written as they are read: the rows come from a server-side
cursor (QuerySet.iterator) and each entry goes out as soon as it is made, so a
thousand papers never sit in memory as one document.
"""

import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest
from django.db.models import QuerySet
from django.http import HttpRequest, StreamingHttpResponse

from catalog.bibtex import bibtex, bibtex_key, needs, preamble
from catalog.cache import canonical_query
from catalog.filters import LIST_PARAMETERS
from catalog.latex import latex_to_text
from catalog.models import Paper
from catalog.names import Name
from catalog.selectors import filter_papers

CHUNK_SIZE = 200


def bibtex_entries(papers: Iterable[Paper]) -> Iterator[str]:
    """The entries, then the one @preamble they need under pdflatex if any
    (BibTeX reads a @preamble wherever it stands)."""
    used: set[str] = set()
    needed: set[str] = set()
    for paper in papers:
        base = key = bibtex_key(paper)
        suffix = 1
        # Keys name entries in a .bib file: two papers may not share one.
        while key in used:
            suffix += 1
            key = f"{base}{suffix}"
        used.add(key)
        entry = bibtex(paper, key=key)
        needed |= needs(entry)
        yield entry + "\n\n"
    if needed:
        yield preamble(needed) + "\n"


def _line(value: str) -> str:
    return " ".join(value.split())


def plain(value: str) -> str:
    """arXiv's TeX as text on one line, its math as readable characters."""
    return _line(latex_to_text(value))


def ris_name(name: Name) -> str:
    """RIS's "Family, Given, Suffix"; a group's name whole."""
    if name.literal:
        return name.literal
    parts = [name.family_with_particle, name.given] + ([name.suffix] if name.suffix else [])
    return ", ".join(parts)


def ris_date(paper: Paper) -> str:
    """RIS's DA, "YYYY/MM/DD/": a part the paper's date does not have stays empty."""
    cited = paper.cited_date
    month = f"{cited.moment.month:02}" if cited.by_month else ""
    day = f"{cited.moment.day:02}" if cited.by_day else ""
    return f"{cited.moment.year}/{month}/{day}/"


def ris_entries(papers: Iterable[Paper]) -> Iterator[str]:
    for paper in papers:
        fields = [("TY", "JOUR" if paper.journal_ref else "UNPB"), ("TI", plain(paper.title))]
        fields += [("AU", ris_name(name)) for name in paper.parsed_authors]
        fields.append(("PY", str(paper.cited_date.moment.year)))
        fields.append(("DA", ris_date(paper)))
        if paper.abstract:
            fields.append(("AB", plain(paper.abstract)))
        if paper.arxiv_id:
            fields += [
                ("UR", paper.abs_url),
                ("L1", paper.pdf_url),
                ("AN", f"arXiv:{paper.arxiv_id}"),
                ("DB", "arXiv"),
            ]
        elif paper.source_url:
            fields.append(("UR", paper.source_url))
        if paper.journal_ref:
            fields.append(("JO", _line(paper.journal_ref)))
        if paper.citation_doi:
            fields.append(("DO", _line(paper.citation_doi)))
        if paper.primary_category is not None:
            fields.append(("KW", paper.primary_category.code))
        yield "".join(f"{tag}  - {value}\n" for tag, value in fields if value) + "ER  - \n\n"


def csl_name(name: Name) -> dict[str, str]:
    if name.literal:
        return {"literal": name.literal}
    parts = {
        "family": name.family,
        "given": name.given,
        # "van der" Berg sorts under B but is printed with the name ("van der Berg, J.-P.").
        "non-dropping-particle": name.particle,
        "suffix": name.suffix,
    }
    return {part: value for part, value in parts.items() if value}


def csl_item(paper: Paper, *, key: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": key,
        # CSL's "article" is a preprint or working paper.
        "type": "article-journal" if paper.journal_ref else "article",
        # Titles and abstracts as text: CSL processors print what they are given.
        "title": plain(paper.title),
        "author": [csl_name(name) for name in paper.parsed_authors],
    }
    cited = paper.cited_date
    parts = [cited.moment.year]
    if cited.by_month:
        parts.append(cited.moment.month)
    if cited.by_day:
        parts.append(cited.moment.day)
    item["issued"] = {"date-parts": [parts]}
    if paper.abstract:
        item["abstract"] = plain(paper.abstract)
    if paper.arxiv_id:
        # A preprint is cited by its publisher and DOI (APA: "arXiv.
        # https://doi.org/10.48550/arXiv.<id>"); an article "number" would be
        # printed as "Article <id>".
        item.update({"URL": paper.abs_url, "publisher": "arXiv", "genre": "Preprint"})
    elif paper.source_url:
        item["URL"] = paper.source_url
    if paper.journal_ref:
        item["container-title"] = _line(paper.journal_ref)
    if paper.citation_doi:
        item["DOI"] = paper.citation_doi
    return item


def scholarly_article(paper: Paper, *, url: str) -> dict[str, Any]:
    """The paper as schema.org's ScholarlyArticle, the JSON-LD search engines and
    scholarly crawlers read from its page."""
    authors = []
    listed = [name for name in paper.author_list if name.strip()]
    for name, parsed in zip(listed, paper.parsed_authors, strict=True):
        if parsed.literal:
            authors.append({"@type": "Organization", "name": parsed.literal})
        else:
            person = {"@type": "Person", "name": _line(name)}
            # A part the name does not have is left out, never given as "".
            if parsed.given:
                person["givenName"] = parsed.given
            if parsed.family_with_particle:
                person["familyName"] = parsed.family_with_particle
            authors.append(person)
    title = plain(paper.title)
    article: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "ScholarlyArticle",
        "name": title,
        "headline": title if len(title) <= 110 else title[:109] + "…",
        "url": url,
        "isAccessibleForFree": True,
        # First published, or for a paper known only from here the day it was added.
        "datePublished": paper.list_date.text,
        "dateCreated": paper.added_at.isoformat(timespec="seconds"),
        "dateModified": paper.changed_at.isoformat(timespec="seconds"),
    }
    if authors:  # a paper without listed authors has no "author", not an empty one
        article["author"] = authors
    if paper.abstract:
        article["abstract"] = plain(paper.abstract)
    identifiers = []
    if paper.arxiv_id:
        article["sameAs"] = paper.abs_url
        article["publisher"] = {
            "@type": "Organization",
            "name": "arXiv",
            "url": "https://arxiv.org",
        }
        identifiers.append(
            {"@type": "PropertyValue", "propertyID": "arXiv", "value": paper.arxiv_id}
        )
    if paper.citation_doi:
        identifiers.append(
            {"@type": "PropertyValue", "propertyID": "DOI", "value": paper.citation_doi}
        )
    if identifiers:
        article["identifier"] = identifiers
    if paper.journal_ref:
        article["isPartOf"] = {"@type": "Periodical", "name": _line(paper.journal_ref)}
    return article


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
    """The list's papers with the request's filters, in the list's order;
    BadRequest for filters the list page would refuse."""
    paper_filter = filter_papers(canonical_query(request.GET, **LIST_PARAMETERS), papers=papers)
    if not paper_filter.is_valid():
        problems = "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in paper_filter.errors.items()
        )
        raise BadRequest(f"These filters are not valid: {problems}")
    return paper_filter.qs.select_related("primary_category")


def export_response(
    request: HttpRequest, *, papers: QuerySet[Paper], fmt: str, name: str
) -> StreamingHttpResponse:
    """The list as a download named `name`.<extension>, streamed, at most
    EXPORT_MAX_PAPERS; a longer list says so in the `Export-Truncated` header
    (and a BibTeX file in a comment at its top).

    One query for the papers (with their primary category), read in chunks,
    and one for whether any lies past the limit; a chosen tag or category is
    looked up once more each by the filter.
    """
    export, limit = FORMATS[fmt], settings.EXPORT_MAX_PAPERS
    rows = export_rows(request, papers=papers)
    truncated = rows[limit : limit + 1].exists()
    content = export.write(rows[:limit].iterator(chunk_size=CHUNK_SIZE))
    if truncated and fmt == "bib":
        content = itertools.chain([truncation_comment(limit)], content)
    response = StreamingHttpResponse(content, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{export.extension}"'
    if truncated:
        response["Export-Truncated"] = f"the first {limit} papers of a longer list"
    return response


def truncation_comment(limit: int) -> str:
    return (
        f"@comment{{The first {limit} papers of a longer list: narrow the list's "
        "filters to export the rest.}\n\n"
    )
