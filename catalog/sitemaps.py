"""sitemap.xml for search engines, paged by id so that a million papers cost
what a thousand do, and the OpenSearch description browsers add the site search from.

The index names one sitemap of the site's own lists (home, tags, categories)
and one per block of PAPERS_PER_SITEMAP paper ids: block n is ids
[n*size, (n+1)*size), read by primary-key range (never by OFFSET), streamed.
Ids removed or hidden leave a block short, never shift the others; a block
past the highest visible id is not found. A paper's lastmod is its
`changed_at`, the last change to anything its page shows (curators' edits,
tags, summaries and code links included).
"""

from collections.abc import Iterator
from typing import TypeVar
from xml.sax.saxutils import escape

from django.db.models import Max
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.encoding import iri_to_uri

from catalog.models import Category, Paper, Tag
from core.http import safe_methods

R = TypeVar("R", bound=HttpResponseBase)

PAPERS_PER_SITEMAP = 25_000
MAX_BLOCK = (2**63 - 1) // PAPERS_PER_SITEMAP
# Sitemaps change as papers come; crawlers may keep them an hour.
SITEMAP_MAX_AGE = 3600
XML = "application/xml; charset=utf-8"
URLSET_OPEN = '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'


def _root(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _cacheable(response: R) -> R:
    response["Cache-Control"] = f"public, max-age={SITEMAP_MAX_AGE}"
    return response


def highest_visible_id() -> int | None:
    highest: int | None = Paper.objects.visible().aggregate(highest=Max("pk"))["highest"]
    return highest


@safe_methods
def sitemap_index(request: HttpRequest) -> HttpResponse:
    """The list of sitemaps: one query, the highest visible paper id."""
    highest = highest_visible_id()
    blocks = 0 if highest is None else highest // PAPERS_PER_SITEMAP + 1
    root = _root(request)
    locations = [reverse("sitemap-pages")] + [
        reverse("sitemap-papers", args=[block]) for block in range(blocks)
    ]
    body = "".join(
        f"  <sitemap><loc>{escape(root + location)}</loc></sitemap>\n" for location in locations
    )
    xml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{body}</sitemapindex>\n"
    )
    return _cacheable(HttpResponse(xml, content_type=XML))


def _url(location: str, lastmod: str = "") -> str:
    modified = f"<lastmod>{lastmod}</lastmod>" if lastmod else ""
    return f"  <url><loc>{escape(location)}</loc>{modified}</url>\n"


@safe_methods
def sitemap_pages(request: HttpRequest) -> HttpResponse:
    """The home page, the tag and category indexes, every tag's and category's page."""
    root = _root(request)
    locations = [reverse("catalog:paper_list"), reverse("catalog:tag_index")]
    locations.append(reverse("catalog:category_index"))
    locations += [tag.get_absolute_url() for tag in Tag.objects.order_by("slug").only("slug")]
    categories = Category.objects.filter(papers__isnull=False).distinct().order_by("code")
    locations += [category.get_absolute_url() for category in categories.only("code")]
    body = "".join(_url(root + iri_to_uri(location)) for location in locations)
    return _cacheable(HttpResponse(URLSET_OPEN + body + "</urlset>\n", content_type=XML))


@safe_methods
def sitemap_papers(request: HttpRequest, block: int) -> StreamingHttpResponse:
    """The visible papers with ids in the block, by id, each with when its page last changed."""
    highest = highest_visible_id()
    if block > MAX_BLOCK or highest is None or block > highest // PAPERS_PER_SITEMAP:
        raise Http404("No such sitemap: the index at /sitemap.xml lists them.")
    start = block * PAPERS_PER_SITEMAP
    rows = (
        Paper.objects.visible()
        .filter(pk__gte=start, pk__lt=start + PAPERS_PER_SITEMAP)
        .order_by("pk")
        .values_list("pk", "arxiv_id", "changed_at")
    )
    root = _root(request)
    # Reversed once, filled in per paper: a reverse() each is most of the time at 25,000.
    by_arxiv_id = root + reverse("catalog:paper", args=["ARXIV_ID"])
    by_pk = root + reverse("catalog:paper_by_pk", args=[0])

    def lines() -> Iterator[str]:
        yield URLSET_OPEN
        for pk, arxiv_id, changed_at in rows.iterator(chunk_size=2000):
            if arxiv_id:
                location = by_arxiv_id.replace("ARXIV_ID", iri_to_uri(arxiv_id))
            else:
                location = by_pk.replace("/0/", f"/{pk}/")
            yield _url(location, changed_at.isoformat(timespec="seconds"))
        yield "</urlset>\n"

    return _cacheable(StreamingHttpResponse(lines(), content_type=XML))


@safe_methods
def opensearch(request: HttpRequest) -> HttpResponse:
    """What browsers read to offer the site's search in their address bar."""
    response = render(
        request,
        "opensearch.xml",
        {"root": _root(request)},
        content_type="application/opensearchdescription+xml; charset=utf-8",
    )
    return _cacheable(response)
