"""The JSON API: the list page's filters and order, cursors, one paper, tags and
categories, JSON for every error, conditional GET, CORS, and the query counts."""

import datetime
import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from django.utils.http import http_date
from django_filters import ChoiceFilter

from accounts.services import upvote
from catalog import trending
from catalog.filters import MAX_QUERY_LENGTH, PaperFilter
from catalog.models import Paper, SimilarPaper, Summary
from catalog.selectors import filter_papers
from tests.accounts_factories import UserFactory
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    agents, math = TagFactory(slug="agents", name="Agents"), TagFactory(slug="math")
    cl, lg = CategoryFactory(code="cs.CL"), CategoryFactory(code="cs.LG")
    now = timezone.now()
    papers = [
        PaperFactory(
            title=f"Reasoning agents {n}" if n % 2 else f"Vision transformers {n}",
            tags=[agents] if n % 3 == 0 else [math],
            categories=[cl] if n % 2 else [lg],
            authors=["Ada Lovelace", "Alan Turing"],
            published_at=now - datetime.timedelta(days=n * 5),
        )
        for n in range(12)
    ]
    CodeLinkFactory(paper=papers[0], url="https://github.com/example/official")
    return {"papers": papers, "agents": agents, "cl": cl}


def ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [item["id"] for item in response.json()["items"]]


def page_ids(query: str) -> list[int]:
    """What the list page's own filter finds for the query, in its order."""
    from django.http import QueryDict

    return list(filter_papers(QueryDict(query)).qs.values_list("pk", flat=True))


@pytest.mark.parametrize(
    "query",
    [
        "",
        "tag=agents",
        "tag=agents&tag=math",
        "category=cs.CL",
        "category=cs.CL&category=cs.LG",
        "period=30d",
        "from=2000-01-01&to=2100-01-01",
        f"to={(timezone.now() - datetime.timedelta(days=20)).date().isoformat()}",
        "has_code=1",
        "q=reasoning",
        "q=reasoning&sort=relevance",
        "q=transformers&category=cs.LG&period=365d",
    ],
)
def test_papers_filter_as_the_list_page_does(client, catalog, query):
    response = client.get(f"/api/v1/papers?limit=100&{query}")

    assert ids(response) == page_ids(query)
    assert response["Content-Type"].startswith("application/json")


def test_cursor_walks_the_whole_list_once_in_order(client, catalog):
    seen, cursor = [], ""
    for _ in range(10):
        response = client.get(f"/api/v1/papers?limit=5{cursor}")
        seen += ids(response)
        next_cursor = response.json()["next_cursor"]
        if next_cursor is None:
            break
        cursor = f"&cursor={next_cursor}"
    assert seen == page_ids("")
    assert len(seen) == 12


def test_a_cursor_continues_among_papers_of_one_day(client, catalog):
    same_day = timezone.now() - datetime.timedelta(days=1000)
    tied = [PaperFactory(published_at=same_day).pk for _ in range(3)]
    first = client.get("/api/v1/papers?limit=1&from=1990-01-01&to=" + same_day.date().isoformat())
    second = client.get(
        "/api/v1/papers?limit=5&to="
        + same_day.date().isoformat()
        + "&cursor="
        + first.json()["next_cursor"]
    )
    assert ids(first) + ids(second) == sorted(tied, reverse=True)


def test_relevance_pages_continue_by_position(client, catalog):
    everything = ids(client.get("/api/v1/papers?q=reasoning&sort=relevance&limit=100"))
    first = client.get("/api/v1/papers?q=reasoning&sort=relevance&limit=2")
    second = client.get(
        f"/api/v1/papers?q=reasoning&sort=relevance&limit=100&cursor={first.json()['next_cursor']}"
    )
    assert ids(first) + ids(second) == everything


@pytest.mark.parametrize(
    ("query", "status", "words"),
    [
        ("tag=no-such-tag", 400, "no-such-tag"),
        ("category=xx.YY", 400, "xx.YY"),
        ("from=2025-02-01&to=2025-01-01", 400, "before the start"),
        ("period=2d", 400, "period"),
        ("from=yesterday", 400, "from"),
        ("to=0", 400, "YYYY-MM-DD"),  # pydantic alone reads a number as a moment
        ("limit=0", 400, "limit"),
        ("limit=101", 400, "limit"),
        ("cursor=garbage!!", 400, "cursor"),
        ("cursor=eyJhIjogMX0", 400, "cursor"),
        ("q=reasoning&sort=relevance&cursor=eyJvZmZzZXQiOiAtMX0", 400, "cursor"),
        ("q=" + "x" * 301, 400, "q"),
    ],
)
def test_bad_parameters_are_a_json_4xx_saying_what(client, catalog, query, status, words):
    response = client.get(f"/api/v1/papers?{query}")

    assert response.status_code == status
    # One shape whichever check refused them: problem details (RFC 9457).
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == status and problem["title"] == "Bad Request"
    assert words in problem["detail"] + json.dumps(problem.get("errors"))


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/api/v1/nothing-here", 404),
        ("get", "/api/v1/papers/", 404),
        ("get", "/api/v2/papers", 404),
        ("post", "/api/v1/papers", 405),
        ("delete", "/api/v1/tags", 405),
        ("get", "/api/v1/papers?q=%00", 400),
        ("get", "/api/v1/papers/9999.99999", 404),
        ("get", "/api/v1/papers/not-an-id", 404),
        ("get", "/api/v1/papers/99999999999999999999999", 404),
    ],
)
def test_every_error_under_the_api_is_json(client, catalog, method, path, status):
    response = getattr(client, method)(path)

    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["detail"]
    assert response.json()["status"] == status


def test_a_paper_by_arxiv_id_in_any_form_or_by_stable_id(client, catalog):
    paper = catalog["papers"][0]
    SummaryFactory(paper=paper, language="ko", kind=Summary.Kind.SUMMARY, body="요약")
    SummaryFactory(
        paper=paper, language="ko", kind=Summary.Kind.TAKEAWAYS, body="1. First\n2. Second\n   more"
    )
    SummaryFactory(
        paper=paper, language="en", kind=Summary.Kind.SUMMARY, status=Summary.Status.DRAFT
    )

    answers = [
        client.get(f"/api/v1/papers/{ref}").json()
        for ref in (paper.arxiv_id, f"{paper.arxiv_id}v1", f"arXiv:{paper.arxiv_id}", paper.pk)
    ]

    assert all(answer == answers[0] for answer in answers)
    detail = answers[0]
    assert detail["arxiv_id"] == paper.arxiv_id
    assert detail["authors"] == ["Ada Lovelace", "Alan Turing"]
    # Categories are objects, as tags are; the primary category likewise.
    lg = {"code": "cs.LG", "name": paper.categories.get().name}
    assert detail["categories"] == [lg]
    assert detail["primary_category"] == {
        "code": paper.primary_category.code,
        "name": paper.primary_category.name,
    }
    assert detail["tags"] == [{"slug": "agents", "name": "Agents"}]
    assert detail["official_code_url"] == "https://github.com/example/official"
    assert detail["code_links"] == [
        {"url": "https://github.com/example/official", "kind": "official"}
    ]
    assert detail["pdf_url"].endswith(f"{paper.arxiv_id}")
    # Published summaries only, grouped by language.
    assert detail["summaries"] == [
        {
            "language": "ko",
            "summary": "요약",
            "translation": None,
            "takeaways": ["First", "Second more"],
            "machine_written": True,
        }
    ]


def test_a_merged_papers_stable_id_names_the_paper_it_was_merged_into(client, catalog):
    target = catalog["papers"][1]
    merged = PaperFactory(arxiv_id=None, merged_into=target)

    assert client.get(f"/api/v1/papers/{merged.pk}").json()["id"] == target.pk


def test_hidden_papers_are_not_there(client, catalog):
    hidden = PaperFactory(is_visible=False)

    assert client.get(f"/api/v1/papers/{hidden.arxiv_id}").status_code == 404
    assert client.get(f"/api/v1/papers/{hidden.pk}").status_code == 404
    assert hidden.pk not in ids(client.get("/api/v1/papers?limit=100"))


def test_tags_and_categories_with_their_counts(client, catalog):
    tags = client.get("/api/v1/tags").json()["items"]
    categories = client.get("/api/v1/categories").json()["items"]

    assert {tag["slug"]: tag["paper_count"] for tag in tags} == {"agents": 4, "math": 8}
    assert {c["code"]: c["paper_count"] for c in categories} == {"cs.CL": 6, "cs.LG": 6}
    assert tags[0]["url"] == "http://testserver/tags/agents/"


def test_conditional_get_answers_304_while_nothing_changed(client, catalog):
    first = client.get("/api/v1/papers?limit=5")
    etag = first["ETag"]

    assert client.get("/api/v1/papers?limit=5", HTTP_IF_NONE_MATCH=etag).status_code == 304
    assert client.get("/api/v1/tags", HTTP_IF_NONE_MATCH=etag).status_code == 200
    # No date says when a list last changed, so none is given or taken.
    assert "Last-Modified" not in first
    later = "Wed, 01 Jan 2031 00:00:00 GMT"
    assert client.get("/api/v1/papers?limit=5", HTTP_IF_MODIFIED_SINCE=later).status_code == 200

    # An older paper hidden changes the list, though it was not its newest.
    hidden = Paper.objects.get(pk=ids(first)[2])
    hidden.is_visible = False
    hidden.save()
    changed = client.get("/api/v1/papers?limit=5", HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200
    assert changed["ETag"] != etag


def test_head_and_options_answer_wherever_their_route_is(client, catalog):
    get = client.get("/api/v1/papers?limit=2")
    head = client.head("/api/v1/papers?limit=2")
    options = client.options("/api/v1/papers")
    write_only = client.options("/api/v1/me/saved/1")
    nowhere = client.options("/api/v1/nothing-here")

    assert head.status_code == 200 and head.content == b""
    assert head["ETag"] == get["ETag"]
    assert head["Content-Length"] == str(len(get.content))
    assert options.status_code == 204 and options["Allow"] == "GET, HEAD, OPTIONS"
    assert write_only["Allow"] == "PUT, DELETE, OPTIONS"
    assert nowhere.status_code == 404
    assert client.post("/api/v1/papers")["Allow"] == "GET, HEAD, OPTIONS"


def test_answers_vary_by_token_alone(client, catalog):
    client.force_login(UserFactory())
    response = client.get("/api/v1/papers", HTTP_ACCEPT_LANGUAGE="ko")

    vary = {name.strip().lower() for name in response["Vary"].split(",")}
    assert "authorization" in vary
    assert not vary & {"cookie", "accept-language"}


def test_the_api_root_says_where_everything_is(client, catalog):
    assert client.get("/api/v1").status_code == 301
    assert client.get("/api/")["Location"] == "/api/v1/"
    root = client.get("/api/v1/").json()

    assert root["papers"] == "http://testserver/api/v1/papers"
    assert client.get(root["openapi"]).status_code == 200


def test_anonymous_reads_are_open_to_any_origin_token_requests_are_not(client, catalog):
    anonymous = client.get("/api/v1/papers", HTTP_ORIGIN="https://elsewhere.example")
    with_token = client.get(
        "/api/v1/papers", HTTP_ORIGIN="https://elsewhere.example", HTTP_AUTHORIZATION="Bearer x"
    )
    preflight = client.options(
        "/api/v1/me/saved/1",
        HTTP_ORIGIN="https://elsewhere.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="PUT",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization",
    )

    assert anonymous["Access-Control-Allow-Origin"] == "*"
    assert "ETag" in anonymous["Access-Control-Expose-Headers"]
    assert "Access-Control-Allow-Origin" not in with_token
    assert with_token.status_code == 401
    # A cross-site page may only GET, and may send no Authorization header.
    assert preflight["Access-Control-Allow-Methods"] == "GET, HEAD"
    assert "Access-Control-Allow-Headers" not in preflight
    assert "Access-Control-Allow-Credentials" not in anonymous


def test_the_site_pages_stay_out_of_cors(client, catalog):
    assert "Access-Control-Allow-Origin" not in client.get("/", HTTP_ORIGIN="https://x.example")


def count_queries(client, path: str, **headers) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path, **headers)
    assert response.status_code == 200, response.content
    return len(queries)


# The page (primary category, official code link, author names in its rows),
# its tags, its categories; a chosen tag or category is looked up once more
# each. The same at 5 papers a page as at 100.
API_LISTS = [
    ("/api/v1/papers?limit={n}", 3),
    # A search asks PostgreSQL's planner how many papers it matches, which
    # chooses how they are read (catalog.filters.FEW_SEARCH_MATCHES); by
    # relevance, the ids of its newest matches are read once, to be ranked.
    ("/api/v1/papers?limit={n}&q=reasoning&sort=relevance", 5),
    ("/api/v1/papers?limit={n}&tag=agents", 4),
    ("/api/v1/papers?limit={n}&tag=agents&category=cs.LG&has_code=1&period=365d", 5),
]


@pytest.mark.parametrize(("template", "expected"), API_LISTS)
def test_lists_take_a_fixed_number_of_queries(client, catalog, template, expected):
    assert count_queries(client, template.format(n=5)) == expected
    assert count_queries(client, template.format(n=100)) == expected


def test_one_paper_tags_and_categories_take_fixed_queries(client, catalog):
    paper = catalog["papers"][0]
    # The paper with its primary category and categories, then tags, code links,
    # published summaries, images and similar papers.
    assert count_queries(client, f"/api/v1/papers/{paper.arxiv_id}") == 6
    # One query each, counts included.
    assert count_queries(client, "/api/v1/tags") == 1
    assert count_queries(client, "/api/v1/categories") == 1


def test_the_openapi_schema_is_valid_and_names_every_filter(client):
    from openapi_spec_validator import validate

    schema = client.get("/api/v1/openapi.json").json()
    validate(schema)
    names = {p["name"] for p in schema["paths"]["/api/v1/papers"]["get"]["parameters"]}
    assert names >= {
        "q",
        "tag",
        "category",
        "period",
        "from",
        "to",
        "has_code",
        "sort",
        "cursor",
        "limit",
        "ids",
        "fields",
    }


def test_the_openapi_schema_describes_every_parameter_and_status_with_examples(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["components"]["securitySchemes"]["ReaderToken"]["description"]

    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                described = parameter.get("description") or parameter["schema"].get("description")
                assert described and "example" in parameter, (where, parameter["name"])
            statuses = set(operation["responses"])
            assert {"400", "401", "414", "429", "503"} <= statuses, where
            assert "304" in statuses or method != "get", where
            for status, answer in operation["responses"].items():
                if int(status) >= 400:
                    content = answer["content"]["application/problem+json"]
                    assert content["example"]["status"] == int(status), (where, status)
                    assert "RateLimit" in answer["headers"], (where, status)
            assert operation["responses"]["503"]["headers"]["Retry-After"]
            # The public operations take a token or none; the reader's need one.
            if path.startswith("/api/v1/me/") or method != "get":
                assert operation["security"] == [{"ReaderToken": []}], where
            else:
                assert operation["security"] == [{}, {"ReaderToken": []}], where
    dump = schema["paths"]["/api/v1/dump/papers.jsonl.gz"]["get"]["responses"]["200"]
    assert "application/gzip" in dump["content"]


def test_the_list_parameters_are_the_list_filters(client):
    schema = client.get("/api/v1/openapi.json").json()

    for path in ("/api/v1/papers", "/api/v1/me/feed", "/api/v1/me/saved"):
        parameters = {p["name"]: p["schema"] for p in schema["paths"][path]["get"]["parameters"]}
        lookup = {"ids"} if path == "/api/v1/papers" else set()
        assert set(parameters) == {*PaperFilter.base_filters, "cursor", "limit", "fields", *lookup}
        for name, list_filter in PaperFilter.base_filters.items():
            # What a value may be, besides absent.
            [accepted] = [
                kind
                for kind in parameters[name].get("anyOf", [parameters[name]])
                if kind != {"type": "null"}
            ]
            if isinstance(list_filter, ChoiceFilter):
                choices = [value for value, _ in list_filter.extra["choices"]]
                assert accepted.get("enum", [accepted.get("const")]) == choices, name
            if name == "q":
                assert accepted["maxLength"] == MAX_QUERY_LENGTH


def test_trending_reads_its_window_alone(client, catalog):
    saved = catalog["papers"][1]
    trending.record_signal(paper_id=saved.pk, reader_id=UserFactory().pk, kind="save")
    trending.refresh_trending()

    # Parameters its schema does not declare are refused, not ignored.
    refused = client.get("/api/v1/trending?window=24h&tag=agents&q=vision")

    assert refused.status_code == 400
    assert set(refused.json()["errors"]) == {"q", "tag"}
    assert saved.pk in ids(client.get("/api/v1/trending?window=24h"))


def test_the_docs_page_describes_every_endpoint_from_the_schema(client):
    response = client.get("/api/docs")

    html = response.content.decode()
    assert response.status_code == 200
    assert '<a href="/api/v1/openapi.json">' in html
    assert '<html lang="en">' in html and "<script>" not in html  # scripts from this site only
    schema = client.get("/api/v1/openapi.json").json()
    for path, operations in schema["paths"].items():
        for method in operations:
            assert (
                f'<span class="method method-{method}">{method.upper()}</span> <code>{path}</code>'
                in html
            )
    assert "<code>has_code</code>" in html and "one of 1d, 7d, 30d, 365d" in html


@pytest.fixture
def limits(settings):
    settings.RATELIMIT_ENABLE = True
    settings.API_RATE_LIMIT = "3/m"
    settings.API_TOKEN_RATE_LIMIT = "5/m"
    cache.clear()
    yield
    cache.clear()


def test_anonymous_requests_are_limited_per_address_with_json_and_retry_after(
    client, catalog, limits, settings
):
    assert [client.get("/api/v1/tags").status_code for _ in range(3)] == [200] * 3
    refused = client.get("/api/v1/papers")

    assert refused.status_code == 429
    assert refused["Content-Type"] == "application/problem+json"
    assert 0 < int(refused["Retry-After"]) <= 60
    assert refused.json()["retry_after"] == int(refused["Retry-After"])
    assert client.get("/api/v1/tags", REMOTE_ADDR="198.51.100.20").status_code == 200
    # Behind a trusted proxy the address it reports is the one counted.
    settings.TRUSTED_PROXIES = ["10.0.0.1"]
    proxied = {"REMOTE_ADDR": "10.0.0.1"}
    assert (
        client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR="203.0.113.5", **proxied).status_code == 200
    )
    assert (
        client.get("/api/v1/tags", HTTP_X_FORWARDED_FOR="203.0.113.6", **proxied).status_code == 200
    )


def test_a_made_up_token_is_refused_not_a_way_around_the_limit(client, catalog, limits):
    statuses = [
        client.get("/api/v1/papers", HTTP_AUTHORIZATION=f"Bearer psk_made-up-{n}").status_code
        for n in range(4)
    ]
    assert statuses == [401, 401, 401, 429]


def test_trending_ranks_by_readers_signals_as_the_site_does(client, catalog):
    papers = Paper.objects.order_by("pk")
    quiet, popular = papers[0], papers[5]
    for reader in UserFactory.create_batch(2):
        trending.record_signal(paper_id=popular.pk, reader_id=reader.pk, kind="save")
    trending.record_signal(paper_id=quiet.pk, reader_id=reader.pk, kind="click")
    trending.refresh_trending()

    listed = client.get("/api/v1/trending?window=24h").json()["items"]
    sorted_list = client.get("/api/v1/papers?sort=trending&window=24h").json()["items"]

    assert [item["id"] for item in listed[:2]] == [popular.pk, quiet.pk]
    assert [item["id"] for item in sorted_list] == [item["id"] for item in listed]
    assert client.get("/api/v1/trending?window=1y").status_code == 400


def test_a_paper_lists_its_similar_papers_with_why(client, catalog):
    paper, *others = Paper.objects.order_by("pk")[:3]
    for rank, other in enumerate(others, 1):
        SimilarPaper.objects.create(
            paper=paper, similar=other, rank=rank, score=1 - rank / 10, terms=["agents"]
        )

    similar = client.get(f"/api/v1/papers/{paper.arxiv_id}").json()["similar"]

    assert [entry["id"] for entry in similar] == [other.pk for other in others]
    assert similar[0]["score"] == pytest.approx(0.9)
    assert similar[0]["shared_terms"] == ["agents"]
    assert similar[0]["shared_tags"] == [
        tag.slug for tag in others[0].tags.all() if tag in paper.tags.all()
    ]


def test_papers_are_looked_up_by_ids_in_the_order_asked(client, catalog):
    first, second, third, fourth = catalog["papers"][:4]
    Paper.objects.filter(pk=third.pk).update(doi="10.1000/Journal.42")
    refs = [
        f"{second.arxiv_id}v1",
        str(first.pk),
        "10.1000/journal.42",  # DOIs compare case-blind
        f"10.48550/arXiv.{fourth.arxiv_id}",
        "9999.99999",
        f"{first.arxiv_id}v7",  # a version the paper does not have
        "not-a-ref",
        str(first.pk),
    ]

    with CaptureQueriesContext(connection) as queries:
        answer = client.get(
            "/api/v1/papers?ids=" + ",".join(refs[:4]) + "&ids=" + ",".join(refs[4:])
        )

    assert ids(answer) == [second.pk, first.pk, third.pk, fourth.pk, first.pk]
    page = answer.json()
    assert page["missing"] == ["9999.99999", f"{first.arxiv_id}v7", "not-a-ref"]
    assert page["total"] == 5 and page["next_cursor"] is None
    assert page["items"][0]["title"] == second.title  # items as the list gives them
    # Which papers the stable ids were merged into, the papers, their tags,
    # their categories.
    assert len(queries) == 4


def test_a_lookup_takes_at_most_100_ids_and_no_filters(client, catalog):
    too_many = client.get("/api/v1/papers?ids=" + ",".join(str(n) for n in range(1, 102)))
    filtered = client.get(f"/api/v1/papers?ids={catalog['papers'][0].pk}&tag=agents")
    empty = client.get("/api/v1/papers?ids=,")

    assert too_many.status_code == 400 and "101" in too_many.json()["errors"]["ids"][0]
    assert filtered.status_code == 400 and set(filtered.json()["errors"]) == {"tag"}
    assert empty.status_code == 400 and "ids" in empty.json()["errors"]
    assert ids(client.get("/api/v1/papers?ids=" + ",".join(["1"] * 100))) == []


def test_a_paper_by_doi_and_unknown_versions_are_not_found(client, catalog):
    paper = catalog["papers"][0]
    Paper.objects.filter(pk=paper.pk).update(doi="10.1000/xyz/123", version=2)

    assert client.get("/api/v1/papers/10.1000/XYZ/123").json()["id"] == paper.pk
    assert client.get("/api/v1/papers/https://doi.org/10.1000/xyz/123").json()["id"] == paper.pk
    assert client.get(f"/api/v1/papers/10.48550/arXiv.{paper.arxiv_id}").json()["id"] == paper.pk
    assert client.get(f"/api/v1/papers/{paper.arxiv_id}v2").json()["version"] == 2
    for version in ("v0", "v3"):
        missing = client.get(f"/api/v1/papers/{paper.arxiv_id}{version}")
        assert missing.status_code == 404, version
        assert (
            "versions 1 to 2" in missing.json()["detail"]
            or "start at 1" in missing.json()["detail"]
        )
    assert "versions 1 to 2" in client.get(f"/api/v1/papers/{paper.arxiv_id}v3").json()["detail"]
    assert client.get("/api/v1/papers/10.1000/nothing").status_code == 404


def test_fields_choose_what_items_carry(client, catalog):
    paper = catalog["papers"][0]

    listed = client.get("/api/v1/papers?limit=2&fields=title,id").json()["items"]
    one = client.get(f"/api/v1/papers/{paper.arxiv_id}?fields=doi,similar").json()
    unknown = client.get("/api/v1/papers?fields=title,nonsense")
    detail_only = client.get("/api/v1/papers?fields=similar")
    # `passage` belongs to full-text searches alone: elsewhere it stays out, named twice or not.
    trending = client.get("/api/v1/trending?limit=2&fields=id,passage,id")

    assert [set(item) for item in listed] == [{"id", "title"}] * 2
    assert one == {"doi": paper.doi, "similar": []}
    assert unknown.status_code == 400 and "nonsense" in unknown.json()["errors"]["fields"][0]
    assert detail_only.status_code == 400  # a field of one paper's answer, not of a list's
    assert trending.status_code == 200
    assert all(set(item) == {"id"} for item in trending.json()["items"])
    assert set(client.get("/api/v1/papers?limit=1").json()["items"][0]) >= {"id", "abstract"}


def test_list_answers_carry_their_total_and_pages_both_ways(client, catalog):
    first = client.get("/api/v1/papers?limit=5&tag=math")
    second = client.get(f"/api/v1/papers?limit=5&tag=math&cursor={first.json()['next_cursor']}")
    back = client.get(f"/api/v1/papers?limit=5&tag=math&cursor={second.json()['previous_cursor']}")

    assert first.json()["total"] == 8 and first.json()["total_is_estimate"] is False
    assert first.json()["previous_cursor"] is None
    assert ids(back) == ids(first)
    assert back.json()["previous_cursor"] is None
    assert back.json()["next_cursor"] == first.json()["next_cursor"]
    searched = client.get("/api/v1/papers?limit=5&q=reasoning").json()
    assert searched["total"] == len(page_ids("q=reasoning"))
    # The Link header names the same pages, as absolute addresses.
    links = second["Link"]
    previous = second.json()["previous_cursor"]
    assert (
        f'<http://testserver/api/v1/papers?limit=5&tag=math&cursor={previous}>; rel="prev"' in links
    )
    assert 'rel="next"' not in links  # the last page
    assert 'rel="next"' in first["Link"] and 'rel="prev"' not in first["Link"]


def test_relevance_pages_stay_put_while_papers_arrive_and_state_the_cap(client, catalog, settings):
    settings.SEARCH_RELEVANCE_CANDIDATES = 4
    first = client.get("/api/v1/papers?q=reasoning&sort=relevance&limit=2")
    # Papers that match arrive between the pages: the ranking read first holds.
    for n in range(3):
        PaperFactory(title=f"Reasoning agents arriving {n}")
    second = client.get(
        f"/api/v1/papers?q=reasoning&sort=relevance&limit=2&cursor={first.json()['next_cursor']}"
    )
    back = client.get(
        f"/api/v1/papers?q=reasoning&sort=relevance&limit=2&cursor={second.json()['previous_cursor']}"
    )

    everything_then = [
        pk for pk in page_ids("q=reasoning&sort=newest") if pk in {p.pk for p in catalog["papers"]}
    ]
    assert len(set(ids(first) + ids(second))) == 4
    assert set(ids(first) + ids(second)) == set(everything_then[:4])
    assert ids(back) == ids(first)
    assert second.json()["next_cursor"] is None
    assert first.json()["ranked_of"] == 4 and first.json()["capped"] is True
    assert first.json()["total"] == 4
    newest = client.get("/api/v1/papers?limit=2").json()
    assert newest["ranked_of"] is None and newest["capped"] is False


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/papers?limit=2&tags=agents",
        "/api/v1/tags?limit=2",
        "/api/v1/papers/1?fields=id&page=2",
        "/api/v1/?x=1",
        "/api/v1/papers/1/comments?sort=newest",
    ],
)
def test_unknown_parameters_are_refused_by_name(client, catalog, path):
    response = client.get(path)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    unknown = path.rsplit("&", 1)[-1].rsplit("?", 1)[-1].split("=")[0]
    assert list(response.json()["errors"]) == [unknown]
    assert unknown in response.json()["detail"]


def test_every_counted_answer_says_where_its_client_stands(client, catalog, limits):
    answers = [client.get("/api/v1/tags") for _ in range(4)]

    assert [answer["RateLimit-Policy"] for answer in answers] == ['"address";q=3;w=60'] * 4
    remaining = [answer["RateLimit"].split(";")[1] for answer in answers]
    assert remaining == ["r=2", "r=1", "r=0", "r=0"]
    assert answers[3].status_code == 429
    seconds = int(answers[3]["RateLimit"].split(";t=")[1])
    assert 0 < seconds <= 60 and int(answers[3]["Retry-After"]) == seconds
    assert "RateLimit" in answers[0]["Access-Control-Expose-Headers"]
    refused_token = client.get(
        "/api/v1/papers", HTTP_AUTHORIZATION="Bearer psk_x", REMOTE_ADDR="198.51.100.9"
    )
    assert refused_token.status_code == 401 and refused_token["RateLimit"].startswith(
        '"address";r=2'
    )
    # Answers no route counted say where the address stands, without counting.
    elsewhere = {"REMOTE_ADDR": "198.51.100.10"}
    client.get("/api/v1/tags", **elsewhere)
    for uncounted in (
        client.get("/api/v1/nothing-here", **elsewhere),
        client.delete("/api/v1/tags", **elsewhere),
        client.options("/api/v1/tags", **elsewhere),
    ):
        assert uncounted["RateLimit-Policy"] == '"address";q=3;w=60'
        assert uncounted["RateLimit"].startswith('"address";r=2;t=')
    assert client.options("/api/v1/tags", **elsewhere).get("Content-Type") is None


def test_one_paper_is_dated_by_its_last_change(client, catalog):
    paper = catalog["papers"][0]
    address = f"/api/v1/papers/{paper.arxiv_id}?fields=title,tags,updated_at"
    # Dates in HTTP are to the second: the paper last changed an hour ago.
    an_hour_ago = timezone.now() - datetime.timedelta(hours=1)
    Paper.objects.filter(pk=paper.pk).update(changed_at=an_hour_ago)
    first = client.get(address)
    since = first["Last-Modified"]

    assert since == http_date(Paper.objects.get(pk=paper.pk).changed_at.timestamp())
    assert client.get(address, HTTP_IF_MODIFIED_SINCE=since).status_code == 304
    paper.tags.add(catalog["agents"])
    paper.title = "Renamed"
    paper.save()
    changed = client.get(address, HTTP_IF_MODIFIED_SINCE=since)
    assert changed.status_code == 200 and changed.json()["title"] == "Renamed"
    # The ETag is still the body's hash, and wins over the date.
    assert (
        client.get(
            address,
            HTTP_IF_NONE_MATCH=first["ETag"],
            HTTP_IF_MODIFIED_SINCE=changed["Last-Modified"],
        ).status_code
        == 200
    )


@pytest.mark.parametrize("fields", [None, "title,upvotes", "title,similar"])
def test_a_paper_with_its_upvotes_or_similar_papers_is_never_a_stale_304(client, catalog, fields):
    """Its upvotes and similar papers change without moving its changed_at, so an
    answer holding them has no date, and If-Modified-Since cannot hide a vote."""
    paper = catalog["papers"][0]
    address = f"/api/v1/papers/{paper.arxiv_id}" + (f"?fields={fields}" if fields else "")
    an_hour_ago = timezone.now() - datetime.timedelta(hours=1)
    Paper.objects.filter(pk=paper.pk).update(changed_at=an_hour_ago)
    first = client.get(address)
    assert "Last-Modified" not in first

    voter = UserFactory(date_joined=timezone.now() - datetime.timedelta(days=2))
    upvote(user=voter, paper=paper)
    SimilarPaper.objects.create(paper=paper, similar=catalog["papers"][1], rank=1, score=0.5)

    again = client.get(address, HTTP_IF_MODIFIED_SINCE=http_date(timezone.now().timestamp()))
    assert again.status_code == 200 and again.content != first.content


def test_the_api_root_answers_options_itself(client):
    response = client.options("/api/")

    assert response.status_code == 204
    assert response["Allow"] == "GET, HEAD, OPTIONS"
