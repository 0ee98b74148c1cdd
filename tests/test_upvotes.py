"""Upvotes: a reader upvotes a paper and takes it back, the counts cards, the
paper page and the API show, lists sorted by votes, and which votes count."""

import datetime
import re

import pytest
from allauth.account.models import EmailAddress
from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from accounts import services, votes
from accounts.models import Upvote
from catalog import trending
from catalog.filters import PaperFilter
from catalog.models import Paper, ReaderSignal
from catalog.page_cache import upvote_counts
from tests.accounts_factories import UserFactory
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
DAY = datetime.timedelta(days=1)


def counted_reader(**fields):
    """A reader whose votes count: an account two days old with a confirmed address."""
    return UserFactory(date_joined=timezone.now() - 2 * DAY, **fields)


@pytest.fixture
def reader(client):
    user = counted_reader()
    client.force_login(user)
    return user


def counts(paper: Paper) -> tuple[int, int, int, int]:
    paper.refresh_from_db()
    return paper.upvote_count, paper.votes_24h, paper.votes_7d, paper.votes_30d


def upvote_button(html: str, paper: Paper) -> str:
    found = re.search(
        rf'<form class="toggle upvote-toggle[^"]*" method="post" action="/upvotes/{paper.pk}/'
        r".*?</form>",
        html,
        re.S,
    )
    assert found, "no upvote toggle for the paper"
    return found.group(0)


def test_a_reader_upvotes_from_a_card_and_takes_it_back(client, reader):
    paper = PaperFactory(title="Worth a vote")
    card = upvote_button(client.get("/").content.decode(), paper)
    assert 'aria-pressed="false"' in card and '<span class="upvote-count">0</span>' in card
    assert 'class="visually-hidden"> upvotes' in card

    response = client.post(f"/upvotes/{paper.pk}/upvote/", {"next": "/?page=1"})
    assert response.status_code == 302 and response.url == "/?page=1"
    card = upvote_button(client.get("/").content.decode(), paper)
    assert 'aria-pressed="true"' in card and '<span class="upvote-count">1</span>' in card
    assert f'action="/upvotes/{paper.pk}/take-back/"' in card
    assert counts(paper) == (1, 1, 1, 1)

    client.post(f"/upvotes/{paper.pk}/take-back/")
    card = upvote_button(client.get("/").content.decode(), paper)
    assert 'aria-pressed="false"' in card and '<span class="upvote-count">0</span>' in card
    assert counts(paper) == (0, 0, 0, 0)
    assert not Upvote.objects.exists()


def test_one_vote_per_reader_and_paper_and_taking_back_twice_changes_nothing(client, reader):
    paper = PaperFactory()
    for _ in range(2):
        client.post(f"/upvotes/{paper.pk}/upvote/")
    assert Upvote.objects.filter(user=reader, paper=paper).count() == 1
    assert counts(paper)[0] == 1
    for _ in range(2):
        client.post(f"/upvotes/{paper.pk}/take-back/")
    assert counts(paper)[0] == 0


def test_an_upvote_is_a_trending_signal_that_taking_it_back_leaves(client, reader):
    paper = PaperFactory()
    client.post(f"/upvotes/{paper.pk}/upvote/")
    client.post(f"/upvotes/{paper.pk}/take-back/")
    client.post(f"/upvotes/{paper.pk}/upvote/")
    signals = ReaderSignal.objects.filter(paper=paper, reader=reader)
    assert list(signals.values_list("kind", flat=True)) == [ReaderSignal.Kind.UPVOTE]


def test_votes_that_do_not_count_are_no_trending_signal():
    paper = PaperFactory()
    new = UserFactory()  # joined now
    unconfirmed = counted_reader()
    EmailAddress.objects.filter(user=unconfirmed).update(verified=False)
    for user in (new, unconfirmed):
        services.upvote(user=user, paper=paper)

    assert not ReaderSignal.objects.filter(paper=paper).exists()
    trending.refresh_trending()
    paper.refresh_from_db()
    assert (paper.trending_24h, paper.trending_7d, paper.trending_30d) == (None, None, None)


def test_the_paper_page_upvotes_with_htmx(client, reader):
    paper = PaperFactory()
    page = client.get(paper.get_absolute_url()).content.decode()
    assert f'hx-post="/upvotes/{paper.pk}/upvote/"' in upvote_button(page, paper)

    response = client.post(
        f"/upvotes/{paper.pk}/upvote/", {"next": paper.get_absolute_url()}, **HTMX
    )
    assert response.status_code == 200
    fragment = response.content.decode()
    assert fragment.startswith("<form") and 'aria-pressed="true"' in fragment
    assert f'hx-post="/upvotes/{paper.pk}/take-back/"' in fragment
    assert '<span class="upvote-count">1</span>' in fragment


def test_anonymous_readers_see_the_count_and_a_link_to_log_in(client):
    paper = PaperFactory()
    services.upvote(user=counted_reader(), paper=paper)
    page = client.get(paper.get_absolute_url() + "?").content.decode()
    link = re.search(r'<a class="upvote-toggle[^>]*>.*?</a>', page, re.S)
    assert link is not None
    assert f'href="/accounts/login/?next={paper.get_absolute_url().replace("/", "%2F")}"' in (
        link.group(0)
    )
    assert '<span class="upvote-count">1</span>' in link.group(0)
    assert "log in to upvote" in link.group(0)

    response = client.post(f"/upvotes/{paper.pk}/upvote/")
    assert response.status_code == 302
    assert response.url == f"/accounts/login/?next={paper.get_absolute_url()}"
    assert Upvote.objects.count() == 1


def test_upvotes_of_unknown_or_hidden_papers_and_gets_are_refused(client, reader):
    hidden = PaperFactory(is_visible=False)
    assert client.post(f"/upvotes/{hidden.pk}/upvote/").status_code == 404
    assert client.post("/upvotes/999999999/upvote/").status_code == 404
    assert client.get(f"/upvotes/{PaperFactory().pk}/upvote/").status_code == 405
    assert not Upvote.objects.exists()


def test_new_accounts_and_unconfirmed_addresses_do_not_count_until_they_do(client):
    paper = PaperFactory()
    new = UserFactory()  # joined now
    unconfirmed = counted_reader()
    EmailAddress.objects.filter(user=unconfirmed).update(verified=False)
    for user in (new, unconfirmed):
        services.upvote(user=user, paper=paper)
    assert counts(paper) == (0, 0, 0, 0)
    assert Upvote.objects.filter(paper=paper).count() == 2

    # A day on, the new account counts (its vote by then older than 24 hours);
    # the refresh finds it.
    assert votes.refresh_vote_counts(now=timezone.now() + DAY + datetime.timedelta(minutes=1))
    assert counts(paper) == (1, 0, 1, 1)
    EmailAddress.objects.filter(user=unconfirmed).update(verified=True)
    votes.refresh_vote_counts()
    assert counts(paper)[0] == 1  # the new account is not a day old yet, now
    votes.refresh_vote_counts(now=timezone.now() + 2 * DAY)
    assert counts(paper)[0] == 2


def test_votes_leave_each_window_as_they_age(client):
    paper = PaperFactory()
    now = timezone.now()
    for age in (datetime.timedelta(hours=2), 3 * DAY, 20 * DAY, 40 * DAY):
        Upvote.objects.create(user=counted_reader(), paper=paper, created_at=now - age)
    votes.refresh_vote_counts(now=now)
    assert counts(paper) == (4, 1, 2, 3)
    assert votes.refresh_vote_counts(now=now) == 0  # nothing changed, nothing written
    votes.refresh_vote_counts(now=now + DAY)
    assert counts(paper) == (4, 0, 2, 3)


@pytest.mark.parametrize(
    ("window", "column"), [("24h", "votes_24h"), ("7d", "votes_7d"), ("30d", "votes_30d")]
)
def test_lists_sort_by_votes_over_a_window(client, window, column):
    low, high, none = PaperFactory(), PaperFactory(), PaperFactory()
    Paper.objects.filter(pk=low.pk).update(**{column: 1})
    Paper.objects.filter(pk=high.pk).update(**{column: 5})
    query = "sort=votes" if window == "7d" else f"sort=votes&window={window}"
    response = client.get(f"/?{query}")
    assert [paper.pk for paper in response.context["page"].object_list] == [
        high.pk,
        low.pk,
        none.pk,
    ]
    assert response.context["votes_window"] == window
    html = response.content.decode()
    assert '<option value="votes" selected>Most upvoted</option>' in html
    assert 'name="window"' in html  # the window is chosen as trending's is


def test_a_votes_address_keeps_only_what_changes_the_list(client):
    assert client.get("/?sort=votes&window=7d&page=1").url == "/?sort=votes"
    assert client.get("/?sort=votes&window=24h&q=").url == "/?sort=votes&window=24h"
    assert client.get("/?sort=votes&window=1y").status_code == 200  # a bad window, the default


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans")
def test_the_votes_sort_walks_an_index_of_visible_papers():
    PaperFactory.create_batch(3)
    papers = PaperFilter({"sort": "votes", "window": "24h"}, queryset=Paper.objects.visible()).qs
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        plan = papers[:20].explain()
    assert "paper_listed_votes_24h" in plan


def test_others_votes_show_on_cached_pages_at_once_and_yours_on_your_next(
    client, redis_cache, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    voter, other = counted_reader(), counted_reader()
    assert '<span class="upvote-count">0</span>' in client.get("/").content.decode()
    client.force_login(voter)
    assert 'aria-pressed="false"' in upvote_button(client.get("/").content.decode(), paper)

    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/upvotes/{paper.pk}/upvote/")
    # The voter's own page, filled from the entry every reader shares.
    card = upvote_button(client.get("/").content.decode(), paper)
    assert 'aria-pressed="true"' in card and '<span class="upvote-count">1</span>' in card
    # Another reader and anonymous readers get the stored pages with the new count.
    client.force_login(other)
    card = upvote_button(client.get("/").content.decode(), paper)
    assert 'aria-pressed="false"' in card and '<span class="upvote-count">1</span>' in card
    client.logout()
    assert '<span class="upvote-count">1</span>' in client.get("/").content.decode()
    assert len([key for key in redis_cache.keys("*") if ":page:" in key]) == 1


def test_upvote_counts_are_kept_for_seconds_and_forgotten_after_a_vote(
    redis_cache, django_assert_num_queries, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    with django_assert_num_queries(1):
        assert upvote_counts([paper.pk]) == {paper.pk: 0}
    with django_assert_num_queries(0):
        assert upvote_counts([paper.pk]) == {paper.pk: 0}
    with django_capture_on_commit_callbacks(execute=True):
        services.upvote(user=counted_reader(), paper=paper)
    assert upvote_counts([paper.pk]) == {paper.pk: 1}


def test_a_page_sorted_by_votes_is_stored_under_the_votes_version(
    client, redis_cache, django_capture_on_commit_callbacks
):
    first, second = PaperFactory(), PaperFactory()
    Paper.objects.filter(pk=second.pk).update(votes_7d=1, upvote_count=1)
    order = [paper.pk for paper in client.get("/?sort=votes").context["page"].object_list]
    assert order == [second.pk, first.pk]
    with django_capture_on_commit_callbacks(execute=True):
        for user in (counted_reader(), counted_reader()):
            services.upvote(user=user, paper=first)
    html = client.get("/?sort=votes").content.decode()
    assert html.index(f'id="paper-{first.pk}"') < html.index(f'id="paper-{second.pk}"')


def test_votes_are_limited_per_reader_with_a_page_that_says_so(client, reader, settings):
    settings.RATELIMIT_ENABLE = True
    settings.VOTE_RATE_LIMIT = "2/m"
    cache.clear()
    paper = PaperFactory()
    assert client.post(f"/upvotes/{paper.pk}/upvote/").status_code == 302
    assert client.post(f"/upvotes/{paper.pk}/take-back/").status_code == 302
    refused = client.post(f"/upvotes/{paper.pk}/upvote/")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "upvoted or taken back upvotes too often" in refused.content.decode()
    assert not Upvote.objects.exists()
    cache.clear()


def bearer(user) -> dict:
    _, secret = services.create_api_token(user=user, name="script")
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def test_the_api_upvotes_and_takes_back_with_a_token(client):
    paper = PaperFactory(arxiv_id="2505.15034")
    user = counted_reader()
    auth = bearer(user)
    response = client.put("/api/v1/papers/2505.15034/upvote", **auth)
    assert response.status_code == 200
    assert response.json() == {
        "id": paper.pk,
        "arxiv_id": "2505.15034",
        "upvoted": True,
        "upvotes": 1,
    }
    assert client.put(f"/api/v1/papers/{paper.pk}/upvote", **auth).json()["upvotes"] == 1
    assert client.get("/api/v1/papers/2505.15034").json()["upvotes"] == 1
    items = client.get("/api/v1/papers").json()["items"]
    assert [item["upvotes"] for item in items] == [1]

    taken = client.delete("/api/v1/papers/2505.15034/upvote", **auth)
    assert taken.status_code == 200 and taken.json()["upvoted"] is False
    assert taken.json()["upvotes"] == 0
    assert not Upvote.objects.exists()


def test_the_api_refuses_upvotes_without_a_token_and_of_unknown_papers(client):
    paper = PaperFactory()
    assert client.put(f"/api/v1/papers/{paper.pk}/upvote").status_code == 401
    assert client.delete(f"/api/v1/papers/{paper.pk}/upvote").status_code == 401
    auth = bearer(counted_reader())
    missing = client.put("/api/v1/papers/2401.99999/upvote", **auth)
    assert missing.status_code == 404 and missing.json()["detail"]
    assert client.put("/api/v1/papers/999999999/upvote", **auth).status_code == 404
    assert not Upvote.objects.exists()


def test_the_api_limits_votes_per_reader_and_says_where_they_stand(client, settings):
    settings.RATELIMIT_ENABLE = True
    settings.VOTE_RATE_LIMIT = "2/m"
    settings.API_TOKEN_RATE_LIMIT = "100/m"
    cache.clear()
    paper = PaperFactory()
    auth = bearer(counted_reader())
    voted = client.put(f"/api/v1/papers/{paper.pk}/upvote", **auth)
    assert voted.status_code == 200
    assert voted["RateLimit-Policy"] == '"token";q=100;w=60, "votes";q=2;w=60'
    assert re.fullmatch(r'"token";r=99;t=\d+, "votes";r=1;t=\d+', voted["RateLimit"])
    assert client.delete(f"/api/v1/papers/{paper.pk}/upvote", **auth).status_code == 200
    refused = client.put(f"/api/v1/papers/{paper.pk}/upvote", **auth)
    assert refused.status_code == 429 and refused.json()["retry_after"] > 0
    # The spent allowance is the one named empty, not the token's, which has plenty.
    assert re.fullmatch(r'"token";r=97;t=\d+, "votes";r=0;t=\d+', refused["RateLimit"])
    # Reads name the token's allowance alone.
    assert client.get("/api/v1/me/saved", **auth)["RateLimit-Policy"] == '"token";q=100;w=60'
    cache.clear()


def test_the_schema_documents_the_upvote_endpoints(client):
    schema = client.get("/api/v1/openapi.json").json()
    operations = schema["paths"]["/api/v1/papers/{ref}/upvote"]
    for method in ("put", "delete"):
        assert {"200", "401", "404", "429"} <= set(operations[method]["responses"])
    assert "upvotes" in schema["components"]["schemas"]["PaperItem"]["properties"]


def test_a_public_profile_lists_upvoted_papers_only_if_the_reader_chooses(client):
    user = counted_reader()
    user.profile.display_name, user.profile.public_profile = "Ada", True
    user.profile.save()
    older, newer = PaperFactory(title="Older vote"), PaperFactory(title="Newer vote")
    services.upvote(user=user, paper=older)
    services.upvote(user=user, paper=newer)
    services.upvote(user=user, paper=PaperFactory(title="Hidden vote", is_visible=False))

    page = client.get("/readers/ada/").content.decode()
    assert "Papers they upvoted" not in page and "Newer vote" not in page

    user.profile.show_upvotes = True
    user.profile.save()
    response = client.get("/readers/ada/")
    assert [paper.title for paper in response.context["upvoted"]] == ["Newer vote", "Older vote"]
    assert "Hidden vote" not in response.content.decode()
