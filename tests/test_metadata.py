"""What tools read from the site: citation_* tags (Zotero, Google Scholar),
OpenGraph and Twitter cards, the sitemap, robots.txt and the OpenSearch description."""

import datetime
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from lxml import etree

from catalog import sitemaps
from catalog.models import Paper, PaperImage
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


class MetaTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, str]] = []
        self.links: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "meta" and ("name" in attrs or "property" in attrs):
            self.tags.append((attrs.get("name") or attrs["property"], attrs.get("content", "")))
        if tag == "link":
            self.links.append(attrs)


def meta(html: str) -> MetaTags:
    parser = MetaTags()
    parser.feed(html)
    return parser


def values(parser: MetaTags, name: str) -> list[str]:
    return [content for key, content in parser.tags if key == name]


def test_a_paper_page_carries_highwire_opengraph_and_twitter_tags(client):
    paper = PaperFactory(
        title="Reasoning with $\\alpha$ & <tags>",
        authors=["Ada Lovelace", "Alan Turing"],
        doi="10.1000/x",
    )

    tags = meta(client.get(paper.get_absolute_url()).content.decode())

    assert values(tags, "citation_title") == ["Reasoning with \u03b1 & <tags>"]
    assert values(tags, "citation_author") == ["Ada Lovelace", "Alan Turing"]
    assert values(tags, "citation_publication_date") == [paper.published_at.strftime("%Y/%m/%d")]
    assert values(tags, "citation_arxiv_id") == [paper.arxiv_id]
    assert values(tags, "citation_pdf_url") == [paper.pdf_url]
    assert values(tags, "citation_doi") == ["10.1000/x"]
    assert values(tags, "og:title") == ["Reasoning with \u03b1 & <tags>"]
    assert values(tags, "og:url") == [f"http://testserver{paper.get_absolute_url()}"]
    assert values(tags, "og:type") == ["article"]
    assert values(tags, "twitter:card") == ["summary"]
    assert values(tags, "og:description")[0].startswith("We propose")


def test_a_first_page_picture_becomes_the_preview_image(client):
    paper = PaperFactory()
    PaperImage.objects.create(paper=paper, kind="page", image="previews/1/page.png")

    tags = meta(client.get(paper.get_absolute_url()).content.decode())

    assert values(tags, "og:image") == ["http://testserver/media/previews/1/page.png"]
    assert values(tags, "twitter:card") == ["summary_large_image"]


def test_a_paper_known_to_the_month_says_only_the_month(client):
    paper = PaperFactory(published_precision=Paper.DatePrecision.MONTH)
    tags = meta(client.get(paper.get_absolute_url()).content.decode())
    assert values(tags, "citation_publication_date") == [paper.published_at.strftime("%Y/%m")]


def test_a_paper_known_only_from_here_is_dated_the_day_it_was_added(client):
    added = datetime.datetime(2025, 6, 7, 12, 0, tzinfo=datetime.UTC)
    paper = PaperFactory(arxiv_id=None, version=None, published_at=None, added_at=added)

    page = client.get(paper.get_absolute_url()).content.decode()

    tags = meta(page)
    assert values(tags, "citation_publication_date") == ["2025/06/07"]
    assert values(tags, "citation_online_date") == ["2025/06/07"]
    assert values(tags, "article:published_time") == ["2025-06-07T12:00:00+00:00"]
    block = page.split('<script type="application/ld+json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(block)["datePublished"] == "2025-06-07"


def test_every_page_links_the_opensearch_description(client):
    links = meta(client.get("/").content.decode()).links
    search = [link for link in links if link.get("rel") == "search"]
    assert search == [
        {
            "rel": "search",
            "type": "application/opensearchdescription+xml",
            "title": "Papershelf",
            "href": "/opensearch.xml",
        }
    ]


def test_the_opensearch_description_searches_the_list(client):
    response = client.get("/opensearch.xml")
    root = etree.fromstring(response.content)
    ns = "{http://a9.com/-/spec/opensearch/1.1/}"
    urls = {url.get("type"): url.get("template") for url in root.iter(f"{ns}Url")}

    assert response["Content-Type"].startswith("application/opensearchdescription+xml")
    assert root.find(f"{ns}ShortName").text == "Papershelf"
    assert urls["text/html"] == "http://testserver/?q={searchTerms}"
    assert urls["application/json"] == "http://testserver/api/v1/papers?q={searchTerms}"


def test_robots_txt_names_the_sitemap(client):
    assert "Sitemap: http://testserver/sitemap.xml" in client.get("/robots.txt").content.decode()


def test_the_sitemap_index_names_a_sitemap_per_block_of_ids(client, monkeypatch):
    monkeypatch.setattr(sitemaps, "PAPERS_PER_SITEMAP", 2)
    papers = [PaperFactory() for _ in range(5)]
    hidden = PaperFactory(is_visible=False)
    no_id = PaperFactory(arxiv_id=None)
    tag, category = TagFactory(slug="agents"), CategoryFactory(code="cs.AI")
    PaperFactory(tags=[tag], categories=[category])

    with CaptureQueriesContext(connection) as queries:
        index = etree.fromstring(client.get("/sitemap.xml").content)
    assert len(queries) == 1
    locations = [loc.text for loc in index.iter(f"{SITEMAP}loc")]
    highest = Paper.objects.visible().order_by("-pk").first().pk
    assert locations[0] == "http://testserver/sitemap-pages.xml"
    assert len(locations) == 1 + highest // 2 + 1

    # Ids keep counting across the suite's tests: the blocks below this test's
    # first paper are empty, so only its own blocks are read.
    lowest = min(paper.pk for paper in papers)
    found = []
    for location in locations[1 + lowest // 2 :]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(location.removeprefix("http://testserver"))
            urlset = etree.fromstring(b"".join(response.streaming_content))
        # The highest visible id (is the block within it?), then the block's papers.
        assert len(queries) == 2
        found += [url.find(f"{SITEMAP}loc").text for url in urlset]
    assert f"http://testserver{papers[0].get_absolute_url()}" in found
    assert f"http://testserver/p/{no_id.pk}/" in found
    assert f"http://testserver{hidden.get_absolute_url()}" not in found
    assert len(found) == Paper.objects.visible().count()

    pages = etree.fromstring(client.get("/sitemap-pages.xml").content)
    page_locations = [loc.text for loc in pages.iter(f"{SITEMAP}loc")]
    assert "http://testserver/tags/agents/" in page_locations
    assert "http://testserver/categories/cs.AI/" in page_locations


def test_a_sitemap_past_the_highest_id_is_not_there(client, monkeypatch):
    monkeypatch.setattr(sitemaps, "PAPERS_PER_SITEMAP", 2)
    assert client.get("/sitemap-papers-0.xml").status_code == 404  # no paper yet
    highest = max(PaperFactory().pk for _ in range(3))

    assert client.get(f"/sitemap-papers-{highest // 2}.xml").status_code == 200
    assert client.get(f"/sitemap-papers-{highest // 2 + 1}.xml").status_code == 404
    assert client.get(f"/sitemap-papers-{10**30}.xml").status_code == 404


def test_a_papers_lastmod_is_the_last_change_to_its_page(client, monkeypatch):
    paper = PaperFactory(updated_at=datetime.datetime(2020, 1, 2, tzinfo=datetime.UTC))
    paper.tags.add(TagFactory())  # a curator's edit, years after arXiv's last version
    paper.refresh_from_db()
    block = paper.pk // sitemaps.PAPERS_PER_SITEMAP

    response = client.get(f"/sitemap-papers-{block}.xml")
    urlset = etree.fromstring(b"".join(response.streaming_content))
    lastmod = {url.find(f"{SITEMAP}loc").text: url.find(f"{SITEMAP}lastmod").text for url in urlset}

    assert lastmod[f"http://testserver{paper.get_absolute_url()}"] == paper.changed_at.isoformat(
        timespec="seconds"
    )


def test_the_paper_page_describes_the_paper_in_json_ld(client):
    paper = PaperFactory(
        arxiv_id="2503.00007",
        title="Escaping </script><b>x</b> & $\\alpha$",
        authors=["Jean-Pierre van der Berg", "ATLAS Collaboration"],
        published_at=datetime.datetime(2025, 3, 4, tzinfo=datetime.UTC),
    )
    page = client.get(paper.get_absolute_url()).content.decode()

    block = page.split('<script type="application/ld+json">', 1)[1].split("</script>", 1)[0]
    article = json.loads(block)
    assert "</script><b>" not in block  # escaped: the title cannot end the element
    assert article["@type"] == "ScholarlyArticle"
    assert article["name"] == "Escaping </script><b>x</b> & \N{GREEK SMALL LETTER ALPHA}"
    assert article["author"] == [
        {
            "@type": "Person",
            "name": "Jean-Pierre van der Berg",
            "givenName": "Jean-Pierre",
            "familyName": "van der Berg",
        },
        {"@type": "Organization", "name": "ATLAS Collaboration"},
    ]
    assert article["datePublished"] == "2025-03-04"
    assert {
        "@type": "PropertyValue",
        "propertyID": "DOI",
        "value": "10.48550/arXiv.2503.00007",
    } in (article["identifier"])
    assert article["url"] == f"http://testserver{paper.get_absolute_url()}"


# schema.org's vocabulary, the part these pages use (tests/data/schemaorg/README.md).
VOCABULARY = json.loads(
    (Path(__file__).parent / "data" / "schemaorg" / "vocabulary.json").read_text(encoding="utf-8")
)
ISO_DATE = re.compile(r"\d{4}(-\d{2}(-\d{2})?)?")


def with_supertypes(name: str) -> set[str]:
    found, pending = set(), [name]
    while pending:
        current = pending.pop()
        if current in VOCABULARY["types"] and current not in found:
            found.add(current)
            pending.extend(VOCABULARY["types"][current]["subClassOf"])
    return found


def _is_iso(value: str, parse) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def fits(value: object, data_type: str) -> bool:
    """Whether a JSON value (not an object) is of one of schema.org's data types."""
    if data_type == "Boolean":
        return isinstance(value, bool)
    if data_type in ("Number", "Integer", "Float"):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and (data_type != "Integer" or isinstance(value, int))
    if not isinstance(value, str):
        return False
    if data_type == "Text":
        return True
    if data_type == "URL":
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.netloc) and " " not in value
    if data_type == "Date":  # ISO 8601: a year, a month or a day
        full = len(value) == 10 and _is_iso(value, datetime.date.fromisoformat)
        return bool(ISO_DATE.fullmatch(value)) and (len(value) < 10 or full)
    if data_type == "DateTime":
        return "T" in value and _is_iso(value, datetime.datetime.fromisoformat)
    if data_type == "Time":
        return _is_iso(value, datetime.time.fromisoformat)
    return False


def schema_problems(node: dict, where: str = "") -> list[str]:
    """What in a JSON-LD object schema.org's vocabulary does not allow: a type
    it does not have, a property not declared for the object's type or a
    supertype (domainIncludes) or superseded, a value outside its range
    (rangeIncludes: a data type for a string, number or boolean, a type or a
    subtype of it for an object)."""
    problems = []
    types = node.get("@type")
    types = types if isinstance(types, list) else [types]
    own: set[str] = set()
    for name in types:
        if name not in VOCABULARY["types"]:
            problems.append(f"{where or 'the object'}: schema.org has no type {name!r}")
        own |= with_supertypes(name)
    for key, value in node.items():
        if key.startswith("@"):
            continue
        here = f"{where}{'.' if where else ''}{key}"
        declared = VOCABULARY["properties"].get(key)
        if declared is None or not own & set(declared["domainIncludes"]):
            problems.append(f"{here}: not a property of {'/'.join(map(str, types))}")
            continue
        if declared["supersededBy"]:
            problems.append(f"{here}: superseded by {', '.join(declared['supersededBy'])}")
        ranges = set(declared["rangeIncludes"])
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                item_types = item.get("@type")
                item_types = item_types if isinstance(item_types, list) else [item_types]
                if not any(with_supertypes(str(name)) & ranges for name in item_types):
                    problems.append(f"{here}: a {item_types} is not in its range {sorted(ranges)}")
                problems += schema_problems(item, here)
            elif not any(fits(item, data_type) for data_type in ranges):
                problems.append(f"{here}: {item!r} is none of {sorted(ranges)}")
    return problems


def page_json_ld(client, paper: Paper) -> dict:
    page = client.get(paper.get_absolute_url()).content.decode()
    (block,) = re.findall(r'<script type="application/ld\+json">(.*?)</script>', page, re.S)
    return json.loads(block)


def test_the_vocabulary_check_finds_what_schema_org_does_not_allow():
    assert VOCABULARY["release"] and VOCABULARY["source"].startswith("https://")
    article = {
        "@type": "ScholarlyArticle",
        "name": "A title",
        "datePublished": "2025-03-04",
        "author": [{"@type": "Person", "name": "Ada", "givenName": "Ada"}],
    }
    assert schema_problems(article) == []
    wrong = {
        **article,
        "@type": ["ScholarlyArticle", "Preprint"],
        "arxivId": "2503.00007",
        "datePublished": "4 March 2025",
        "url": "not a link",
        "isAccessibleForFree": "yes",
        "author": [{"@type": "Person", "headline": "Ada"}, {"@type": "Periodical", "name": "J"}],
        "publisher": "arXiv",
    }
    problems = "\n".join(schema_problems(wrong))
    assert "no type 'Preprint'" in problems
    assert "arxivId: not a property" in problems
    assert "datePublished: '4 March 2025' is none of ['Date', 'DateTime']" in problems
    assert "url: 'not a link'" in problems
    assert "isAccessibleForFree: 'yes'" in problems
    assert "author.headline: not a property of Person" in problems
    assert "author: a ['Periodical'] is not in its range" in problems
    assert "publisher: 'arXiv' is none of ['Organization', 'Person']" in problems


def empty_values(node: object, where: str = "") -> list[str]:
    """Where the JSON-LD says nothing: an empty string, list or object."""
    if node in ("", None, [], {}):
        return [where]
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in empty_values(value, f"{where}.{key}")]
    if isinstance(node, list):
        return [p for item in node for p in empty_values(item, where)]
    return []


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param(
            {
                "title": "A title long enough to be cut for a headline: " + "reasoning " * 12,
                "authors": ["Jean-Pierre van der Berg", "ATLAS Collaboration", "Plato"],
                "doi": "10.1000/x",
                "journal_ref": "Journal of Tests 1 (2025) 1-10",
            },
            id="arxiv-with-journal",
        ),
        pytest.param(
            {"published_precision": Paper.DatePrecision.MONTH, "abstract": ""},
            id="known-to-the-month",
        ),
        pytest.param(
            {
                "arxiv_id": None,
                "version": None,
                "published_at": None,
                "source_url": "https://aclanthology.org/2025.acl-long.1/",
                "authors": [],
            },
            id="known-only-from-here",
        ),
    ],
)
def test_the_paper_pages_json_ld_keeps_to_schema_orgs_vocabulary(client, fields):
    article = page_json_ld(client, PaperFactory(**fields))

    assert article["@context"] == "https://schema.org"
    assert article["@type"] == "ScholarlyArticle"
    assert schema_problems(article) == []
    assert empty_values(article) == []
