"""At most 8 SQL queries on any page, for anonymous and logged-in readers, with
no catalog cache and lists long enough to be counted by the planner's estimate."""

import datetime

import pytest
from django.db import connection

from catalog import page_cache, pagination
from catalog.models import CurationEvent, Paper
from curation.models import SuggestedPaper, Suggestion
from discussion import services as discussion_services
from editions import services as edition_services
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

# PostgreSQL lists past the exact-count limit ask the planner for an estimate.
ESTIMATE = 1 if connection.vendor == "postgresql" else 0
# A search there asks for one too, to choose how to read its matches
# (catalog.filters.FEW_SEARCH_MATCHES).
SEARCH_ESTIMATE = ESTIMATE
# Sorted by relevance, the newest matches it ranks are found once, by a query
# of their own, rather than again in each of the page's subqueries.
RELEVANCE_CANDIDATES = 1


@pytest.fixture
def catalog(monkeypatch, settings):
    settings.PAPERS_PER_PAGE = 10
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 5)
    tag, category = TagFactory(slug="agents"), CategoryFactory(code="cs.AI")
    papers = [
        PaperFactory(
            title=f"Reasoning agents {n}", tags=[tag], categories=[category], authors=["A B"]
        )
        for n in range(12)
    ]
    CodeLinkFactory(paper=papers[0])
    return {"tag": tag, "category": category, "paper": papers[0]}


@pytest.fixture
def reader(client, settings, catalog):
    # As deployed with Redis: sessions are read from the cache.
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    user = UserFactory()
    SubscriptionFactory(user=user, tag=catalog["tag"])
    SubscriptionFactory(user=user, category=CategoryFactory(code="math.GT"))
    SavedPaperFactory(user=user, paper=catalog["paper"])
    client.force_login(user)
    return user


# Lists: page rows (primary category, official code link, author names and
# capped count in one query), the estimate, tags, the filter form's tag and
# category choices in one query; a chosen tag or category is looked up once more,
# with its maintained count, which is the total of a list of that tag or category
# alone (rows without a count, no estimate).
LIST_PAGES = [
    ("/", 3 + ESTIMATE),
    ("/?tag=agents", 4),
    ("/?category=cs.AI", 4),
    ("/?tag=agents&has_code=1", 4),
    # Sorted by relevance (a search's default), and newest first; the marks
    # and the reader's language's summary are columns of the page's rows; the
    # vocabulary's names near the search's words ("did you mean").
    ("/?q=reasoning", 4 + SEARCH_ESTIMATE + ESTIMATE + RELEVANCE_CANDIDATES),
    ("/?q=reasoning&sort=newest", 4 + SEARCH_ESTIMATE + ESTIMATE),
    ("/tags/agents/", 4),
    ("/tags/agents/?period=30d", 4 + ESTIMATE),
    ("/categories/cs.AI/", 4),
    # An author's page: the author (with their count of visible papers, the
    # list's total), their frequent co-authors and their tags besides the list's own.
    ("/authors/a-b/", 6),
    ("/authors/a-b/?period=30d", 6 + ESTIMATE),
]
# The paper (with its author names, categories and who found it: curation.credits),
# tags, code links, summaries, images, similar papers (with their tags).
PAPER_PAGE = 6
OTHER_PAGES = [("/tags/", 1), ("/categories/", 1), ("/feeds/latest.rss", 2)]


@pytest.mark.parametrize(("path", "queries"), [*LIST_PAGES, *OTHER_PAGES])
def test_anonymous_pages(client, catalog, django_assert_num_queries, path, queries):
    with django_assert_num_queries(queries):
        assert client.get(path).status_code == 200


def test_anonymous_paper_page(client, catalog, django_assert_num_queries):
    with django_assert_num_queries(PAPER_PAGE):
        assert client.get(catalog["paper"].get_absolute_url()).status_code == 200


@pytest.mark.parametrize(("path", "queries"), LIST_PAGES)
def test_reader_lists(client, reader, django_assert_num_queries, path, queries):
    client.get(path)  # the session is cached by the first page
    # and the user, and the reader's subscriptions and saved papers in one query
    with django_assert_num_queries(queries + 2):
        response = client.get(path)
    assert 'class="toggle save-toggle' in response.content.decode()


@pytest.mark.parametrize(("path", "queries"), OTHER_PAGES)
def test_reader_other_pages(client, reader, django_assert_num_queries, path, queries):
    client.get(path)
    # the user, where the page has a reader's menu
    with django_assert_num_queries(queries + (0 if path.startswith("/feeds/") else 1)):
        assert client.get(path).status_code == 200


def test_reader_paper_page(client, reader, catalog, django_assert_num_queries):
    url = catalog["paper"].get_absolute_url()
    client.get(url)
    # the user, the paper page's own queries, the reader's subscriptions and saved papers
    with django_assert_num_queries(1 + PAPER_PAGE + 1):
        html = client.get(url).content.decode()
    assert 'class="toggle save-toggle is-on"' in html
    assert 'class="chip-toggle" aria-pressed="true"' in html  # subscribed to the paper's tag


def test_feed_writes_the_visit_at_most_once_a_minute(
    client, reader, catalog, django_assert_num_queries
):
    # user, profile, papers with their count, the estimate, tags, filter
    # choices, the reader's ids, then the visit
    with django_assert_num_queries(7 + ESTIMATE):
        client.get("/feed/")
    with django_assert_num_queries(6 + ESTIMATE):
        response = client.get("/feed/")
    assert len(response.context["page"].object_list) == 10


def test_saved_page(client, reader, django_assert_num_queries):
    client.get("/saved/")
    # user, papers with their count, tags, filter choices, reader's ids
    with django_assert_num_queries(5):
        response = client.get("/saved/")
    assert len(response.context["page"].object_list) == 1


@pytest.fixture
def public_reader(catalog):
    user = UserFactory()
    user.profile.display_name, user.profile.public_profile = "Ada", True
    user.profile.save()
    for paper in PaperFactory.create_batch(3, tags=[catalog["tag"]]):
        found = SuggestedPaper.objects.create(
            arxiv_id=paper.arxiv_id, paper=paper, state=SuggestedPaper.State.ADDED
        )
        Suggestion.objects.create(suggested_paper=found, user=user, link=paper.arxiv_id)
    return user


# A reader's public profile: the profile with its user, their accepted papers
# (with what a card shows), the papers' tags, their comments with their papers.
PROFILE_PAGE = 4


def test_anonymous_profile_page(client, public_reader, django_assert_num_queries):
    with django_assert_num_queries(PROFILE_PAGE):
        assert client.get("/readers/ada/").status_code == 200


def test_reader_profile_page(client, reader, public_reader, django_assert_num_queries):
    client.get("/readers/ada/")
    # the user, the profile page's own queries, the reader's subscriptions and saved papers
    with django_assert_num_queries(1 + PROFILE_PAGE + 1):
        html = client.get("/readers/ada/").content.decode()
    assert html.count('class="toggle save-toggle') == 3


def test_credits_cost_the_paper_page_no_query(client, catalog, django_assert_num_queries):
    paper = catalog["paper"]
    found = SuggestedPaper.objects.create(
        arxiv_id=paper.arxiv_id, paper=paper, state=SuggestedPaper.State.ADDED
    )
    for user in UserFactory.create_batch(4):
        user.profile.display_name, user.profile.public_profile = user.username, True
        user.profile.save()
        Suggestion.objects.create(suggested_paper=found, user=user, link=paper.arxiv_id)
    CurationEvent.objects.create(paper=paper, action=CurationEvent.Action.ADDED, user=user)
    with django_assert_num_queries(PAPER_PAGE):
        html = client.get(paper.get_absolute_url()).content.decode()
    assert "and 3 others" in html
    assert "Added by" in html


# A day's edition: the published edition (none here), the month's counts per
# day (which give the day's total), the page's rows (with each entry's pin,
# position and note as columns), their tags, the day before and the day after.
EDITION_PAGE = 6


@pytest.mark.parametrize("papers", [2, 12])
@pytest.mark.parametrize("published", [False, True])
def test_edition_page(client, django_assert_num_queries, papers, published):
    day = datetime.datetime(2025, 11, 5, 12, tzinfo=datetime.UTC)
    tag = TagFactory()
    for _ in range(papers):
        PaperFactory(added_at=day, tags=[tag], authors=["A B"])
    edition = edition_services.create_edition(date=day.date(), note="Hello")
    if published:
        edition_services.publish(edition=edition, by="test")
    with django_assert_num_queries(EDITION_PAGE):
        assert client.get("/daily/2025-11-05/").status_code == 200
    with django_assert_num_queries(EDITION_PAGE + 1):  # the tag
        assert client.get(f"/tags/{tag.slug}/daily/2025-11-05/").status_code == 200


def test_an_upvote_and_its_taking_back(client, reader, catalog, django_assert_num_queries):
    paper = catalog["paper"]
    # A reader whose vote counts (a day old; the factory's address is confirmed).
    reader.date_joined -= datetime.timedelta(days=2)
    reader.save()
    client.get("/")
    # 1. the visible paper, 2. the reader, 3. a savepoint, 4. the paper's row
    # locked, 5. the reader's vote looked for, 6.-8. inserted in a savepoint,
    # 9. the paper's eligible votes counted, 10. its counts written, 11. the
    # savepoint released, 12. the reader's confirmed address, 13. the trending signal
    with django_assert_num_queries(13):
        client.post(f"/upvotes/{paper.pk}/upvote/", HTTP_HX_REQUEST="true")
    # As above, with 6. the vote deleted, and no signal
    with django_assert_num_queries(9):
        client.post(f"/upvotes/{paper.pk}/take-back/", HTTP_HX_REQUEST="true")


def test_a_stored_page_reads_its_upvote_counts_in_one_query_every_few_seconds(
    client, catalog, redis_cache, django_assert_num_queries
):
    client.get("/")
    # Stored with the counts slotted, and the counts kept for seconds: nothing.
    with django_assert_num_queries(0):
        client.get("/")
    # Once they are forgotten (a vote, or their seconds past): one query for the page's ten.
    page_cache.forget_upvote_counts(Paper.objects.values_list("pk", flat=True))
    with django_assert_num_queries(1):
        client.get("/")


@pytest.fixture
def discussed(catalog):
    paper = catalog["paper"]
    writers = UserFactory.create_batch(
        3, date_joined=datetime.datetime(2020, 1, 1, tzinfo=datetime.UTC)
    )
    for n in range(6):
        top = discussion_services.post_comment(
            user=writers[n % 3], paper=paper, body=f"Comment {n}", parent_id=None
        )
        discussion_services.post_comment(
            user=writers[(n + 1) % 3], paper=paper, body="A reply", parent_id=top.pk
        )
    return paper


# A paper's discussion: the paper with the lock (and for a reader their ban
# and follow); the page's thread-starting comments with their authors' names;
# their replies, likewise.
DISCUSSION_PAGE = 3


def test_anonymous_discussion_page(client, discussed, django_assert_num_queries):
    url = f"/papers/{discussed.arxiv_id}/discussion/"
    with django_assert_num_queries(DISCUSSION_PAGE):
        assert client.get(url).status_code == 200
    # The fragment the paper page loads: the same, the paper found by its key.
    with django_assert_num_queries(DISCUSSION_PAGE):
        assert client.get(f"/discussion/{discussed.pk}/").status_code == 200


def test_reader_discussion_page(client, reader, discussed, django_assert_num_queries):
    url = f"/papers/{discussed.arxiv_id}/discussion/"
    client.get(url)
    # the user, the page's own queries
    with django_assert_num_queries(1 + DISCUSSION_PAGE):
        html = client.get(url).content.decode()
    assert html.count('class="comment"') == 12
