"""Trending: reader signals, scores decaying with age over 24 hours, 7 and 30
days, the trending sort of every list, the /trending/ page and its cache."""

import datetime
import re

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from catalog import pagination, trending
from catalog.models import Paper, ReaderSignal
from curation.models import SuggestedPaper
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.arxiv_server import entry_id
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

SAVE, SUGGEST, CLICK = ReaderSignal.Kind.SAVE, ReaderSignal.Kind.SUGGEST, ReaderSignal.Kind.CLICK
ESTIMATE = 1 if connection.vendor == "postgresql" else 0


def signal(paper, reader, kind=SAVE, *, hours_ago: float = 0.0, now=None) -> None:
    at = (now or timezone.now()) - datetime.timedelta(hours=hours_ago)
    trending.record_signal(paper_id=paper.pk, reader_id=reader.pk, kind=kind, at=at)


def scores(window: str, now=None) -> dict[int, float]:
    """Each scored paper's score over the window: the decayed sum of weights at `now`."""
    column = trending.WINDOWS[window].column
    stored = Paper.objects.filter(**{f"{column}__isnull": False}).values_list("pk", column)
    return {
        pk: trending.score_at(value, window=window, now=now or timezone.now())
        for pk, value in stored
    }


def listed_ids(response) -> list[int]:
    return [int(pk) for pk in re.findall(r'id="paper-(\d+)" data-paper', response.content.decode())]


@pytest.fixture
def readers():
    return [UserFactory() for _ in range(4)]


def test_one_reader_counts_once_whatever_they_do(readers):
    now = timezone.now()
    once, twice = PaperFactory(), PaperFactory()
    # One reader saves, saves again, suggests and clicks: their strongest
    # signal (the save) counts, once.
    for kind in (SAVE, SAVE, SUGGEST, CLICK):
        signal(once, readers[0], kind, now=now)
    signal(twice, readers[0], SAVE, now=now)
    signal(twice, readers[1], SAVE, now=now)

    trending.refresh_trending(now=now)

    assert ReaderSignal.objects.filter(paper=once).count() == 3  # one row a kind
    assert scores("7d", now) == {once.pk: pytest.approx(3.0), twice.pk: pytest.approx(6.0)}


def test_saving_writes_a_signal_and_unsaving_keeps_it(client, readers):
    paper = PaperFactory()
    client.force_login(readers[0])

    client.post(f"/saved/{paper.pk}/save/")
    first = ReaderSignal.objects.get()
    client.post(f"/saved/{paper.pk}/unsave/")
    client.post(f"/saved/{paper.pk}/save/")

    # Toggling neither adds a signal nor freshens the first one.
    assert list(ReaderSignal.objects.values_list("paper", "reader", "kind", "created_at")) == [
        (paper.pk, readers[0].pk, "save", first.created_at)
    ]


def test_suggesting_a_paper_in_the_catalog_is_a_signal(client, readers):
    paper = PaperFactory(arxiv_id="2505.15034")
    client.force_login(readers[0])

    page = client.post("/suggest/", {"link": "2505.15034"}).content.decode()

    assert "It is already in the catalog" in page
    assert list(ReaderSignal.objects.values_list("paper", "reader", "kind")) == [
        (paper.pk, readers[0].pk, "suggest")
    ]


def test_a_paper_added_from_suggestions_gets_a_signal_from_each_reader(
    fake_arxiv, readers, django_capture_on_commit_callbacks
):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    for reader in readers[:2]:
        client = Client()
        client.force_login(reader)
        client.post("/suggest/", {"link": arxiv_id})
    assert not ReaderSignal.objects.exists()  # nothing to trend until it is here
    curator = Client()
    curator.force_login(CuratorFactory())

    with django_capture_on_commit_callbacks(execute=True):
        curator.post(
            "/admin/curation/suggestedpaper/",
            {"action": "approve", "_selected_action": [SuggestedPaper.objects.get().pk]},
        )

    paper = Paper.objects.get(arxiv_id=arxiv_id)
    assert sorted(ReaderSignal.objects.values_list("paper", "reader", "kind")) == [
        (paper.pk, readers[0].pk, "suggest"),
        (paper.pk, readers[1].pk, "suggest"),
    ]


def test_opening_a_paper_from_the_feed_is_a_click_signal_once(client, readers):
    paper, hidden = PaperFactory(), PaperFactory(is_visible=False)
    client.force_login(readers[0])

    feed = client.get("/feed/").content.decode()
    first = client.post(f"/feed/opened/{paper.pk}/")
    again = client.post(f"/feed/opened/{paper.pk}/")

    assert 'class="paper-list" data-opened-url="/feed/opened/0/"' in feed
    assert first.status_code == again.status_code == 204
    assert list(ReaderSignal.objects.values_list("paper", "reader", "kind")) == [
        (paper.pk, readers[0].pk, "click")
    ]
    assert client.get(f"/feed/opened/{paper.pk}/").status_code == 405
    assert client.post(f"/feed/opened/{hidden.pk}/").status_code == 404
    anonymous = Client().post(f"/feed/opened/{paper.pk}/")
    assert anonymous.status_code == 302 and ReaderSignal.objects.count() == 1
    # The beacon carries the CSRF token like any form.
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(readers[1])
    assert strict.post(f"/feed/opened/{paper.pk}/").status_code == 403


def test_scores_decay_with_age_so_fresh_interest_ranks_first(readers):
    now = timezone.now()
    fresh, day_old, older_but_popular = PaperFactory(), PaperFactory(), PaperFactory()
    signal(fresh, readers[0], hours_ago=1, now=now)
    signal(day_old, readers[0], hours_ago=48, now=now)
    for reader in readers[:3]:
        signal(older_but_popular, reader, hours_ago=96, now=now)

    trending.refresh_trending(now=now)

    week = scores("7d", now)
    # Halved every 2 days in the 7-day window.
    assert week[fresh.pk] == pytest.approx(3 * 0.5 ** (1 / 48))
    assert week[day_old.pk] == pytest.approx(1.5)
    assert week[older_but_popular.pk] == pytest.approx(3 * 3 * 0.25)
    assert week[fresh.pk] > week[older_but_popular.pk] > week[day_old.pk]


def test_each_window_counts_only_its_own_signals(readers):
    now = timezone.now()
    today, this_week, this_month, long_ago = (PaperFactory() for _ in range(4))
    signal(today, readers[0], hours_ago=2, now=now)
    signal(this_week, readers[0], hours_ago=24 * 3, now=now)
    signal(this_month, readers[0], hours_ago=24 * 20, now=now)
    signal(long_ago, readers[0], hours_ago=24 * 31, now=now)

    trending.refresh_trending(now=now)

    assert set(scores("24h")) == {today.pk}
    assert set(scores("7d")) == {today.pk, this_week.pk}
    assert set(scores("30d")) == {today.pk, this_week.pk, this_month.pk}
    # Half-lives of 6 hours, 2 days and 7 days.
    assert scores("24h", now)[today.pk] == pytest.approx(3 * 0.5 ** (2 / 6))
    assert scores("30d", now)[this_month.pk] == pytest.approx(3 * 0.5 ** (20 / 7))


def test_the_refresh_drops_scores_whose_signals_aged_out(readers):
    now = timezone.now()
    paper = PaperFactory()
    signal(paper, readers[0], hours_ago=20, now=now)
    trending.refresh_trending(now=now)
    assert set(scores("24h")) == {paper.pk}

    trending.refresh_trending(now=now + datetime.timedelta(hours=5))
    assert scores("24h") == {} and set(scores("7d")) == {paper.pk}

    assert trending.refresh_trending(now=now + datetime.timedelta(days=31)) == 0
    assert Paper.objects.get(pk=paper.pk).trending_30d is None


def test_the_refresh_runs_every_five_minutes_on_the_beat():
    task = PeriodicTask.objects.get(task="catalog.tasks.refresh_trending")

    assert (task.schedule.run_every, task.enabled) == (datetime.timedelta(minutes=5), True)


@pytest.fixture
def ranked(readers):
    """Three papers of a tag and category ranked by trending, three unscored."""
    tag, category = TagFactory(slug="agents"), CategoryFactory(code="cs.AI")
    # Sequence dates: each factory paper is a minute older than the one before.
    papers = [PaperFactory(tags=[tag], categories=[category]) for _ in range(6)]
    now = timezone.now()
    signal(papers[5], readers[0], hours_ago=1, now=now)
    signal(papers[5], readers[1], hours_ago=1, now=now)
    signal(papers[3], readers[0], hours_ago=2, now=now)
    signal(papers[4], readers[0], hours_ago=24 * 5, now=now)
    trending.refresh_trending(now=now)
    return {"papers": [p.pk for p in papers], "tag": tag, "category": category}


@pytest.mark.parametrize("path", ["/", "/tags/agents/", "/categories/cs.AI/", "/?q=reasoning"])
def test_sort_trending_ranks_every_list_with_the_unscored_after_newest_first(client, ranked, path):
    p = ranked["papers"]
    joiner = "&" if "?" in path else "?"

    newest = listed_ids(client.get(path))
    by_trending = listed_ids(client.get(f"{path}{joiner}sort=trending"))
    last_day = listed_ids(client.get(f"{path}{joiner}sort=trending&window=24h"))

    assert newest == p
    assert by_trending == [p[5], p[3], p[4], p[0], p[1], p[2]]
    assert last_day == [p[5], p[3], p[0], p[1], p[2], p[4]]


def test_the_trending_page_has_a_tab_per_window_and_marks_trending_papers(client, ranked):
    p = ranked["papers"]

    page = client.get("/trending/")
    html = page.content.decode()

    assert page.status_code == 200
    assert listed_ids(page) == [p[5], p[3], p[4], p[0], p[1], p[2]]
    assert '<a href="/trending/" aria-current="page">Trending</a>' in html
    assert 'href="?window=24h"' in html and 'href="?window=30d"' in html
    # The default window's tab is the page's clean address.
    assert re.search(r'class="button small" href="\?" aria-current="page"', html)
    assert html.count('class="badge trending"') == 3
    assert listed_ids(client.get("/trending/?window=24h")) == [p[5], p[3], p[0], p[1], p[2], p[4]]
    assert 'class="badge trending"' not in Client().get("/").content.decode()
    # Other filters apply as on any list, and the tabs keep them.
    filtered = client.get("/trending/?tag=agents&window=30d&has_code=1")
    assert listed_ids(filtered) == []
    assert "window=24h" in filtered.content.decode() and "has_code=1" in filtered.content.decode()


def test_the_site_navigation_links_the_trending_page(client):
    assert '<a href="/trending/">Trending</a>' in client.get("/").content.decode()


def test_the_search_feed_follows_the_trending_sort(client, ranked):
    p = ranked["papers"]

    feed = client.get("/feeds/search.rss?sort=trending").content.decode()

    links = re.findall(r"<link>http://testserver/papers/([^/]+)/</link>", feed)
    order = list(Paper.objects.filter(pk__in=[p[5], p[3], p[4]]).values_list("pk", "arxiv_id"))
    ids = dict(order)
    assert links[:3] == [ids[p[5]], ids[p[3]], ids[p[4]]]


@pytest.mark.parametrize("query", ["window=1y", "window=", "window=24h&window=nope", "sort=trendy"])
def test_bad_windows_fall_back_to_seven_days_with_a_note(client, ranked, query):
    p = ranked["papers"]

    # An empty window is an empty field, redirected to the clean address.
    page = client.get(f"/?sort=trending&{query}", follow=True)
    trending_page = client.get(f"/trending/?{query}", follow=True)

    assert page.status_code == trending_page.status_code == 200
    assert listed_ids(trending_page) == [p[5], p[3], p[4], p[0], p[1], p[2]]
    if query.startswith("window=1y"):
        assert "Select a valid choice" in page.content.decode()


def test_a_window_no_parameter_can_hold_is_a_clear_400(client):
    for path in ("/?sort=trending&window=%00", "/trending/?window=%00"):
        response = client.get(path)
        assert response.status_code == 400


def test_a_bad_window_in_a_feed_is_a_clear_400(client):
    response = client.get("/feeds/search.rss?sort=trending&window=1y")

    assert response.status_code == 400
    assert b"window" in response.content


def test_cached_trending_pages_change_with_each_refresh_and_other_pages_stay(
    client, readers, redis_cache, django_capture_on_commit_callbacks, django_assert_num_queries
):
    first, second = PaperFactory(), PaperFactory()
    signal(first, readers[0])
    with django_capture_on_commit_callbacks(execute=True):
        trending.refresh_trending()
    assert listed_ids(client.get("/trending/"))[0] == first.pk
    assert listed_ids(client.get("/?sort=trending"))[0] == first.pk
    client.get("/")

    signal(second, readers[1])
    signal(second, readers[2])
    # Before the refresh, the pages served are the cached ones.
    assert listed_ids(client.get("/trending/"))[0] == first.pk
    with django_capture_on_commit_callbacks(execute=True):
        trending.refresh_trending()

    assert listed_ids(client.get("/trending/"))[0] == second.pk
    assert listed_ids(client.get("/?sort=trending"))[0] == second.pk
    # Pages not sorted by trending are still served from the cache.
    with django_assert_num_queries(0):
        assert client.get("/").status_code == 200


@pytest.fixture
def long_list(monkeypatch, settings, ranked):
    settings.PAPERS_PER_PAGE = 4
    monkeypatch.setattr(pagination, "EXACT_COUNT_LIMIT", 3)


# As every list (tests/test_query_counts.py): page rows with their capped count,
# the estimate, tags, the filter form's tag and category choices in one query;
# a chosen tag or category is looked up once more, and a list of it alone takes
# its maintained count for total (no count, no estimate). The scores are columns
# of the page's rows: trending costs no query.
@pytest.mark.parametrize(
    ("path", "queries"),
    [
        ("/trending/", 3 + ESTIMATE),
        ("/trending/?window=24h", 3 + ESTIMATE),
        ("/?sort=trending", 3 + ESTIMATE),
        ("/?sort=trending&window=30d&tag=agents", 4),
        ("/tags/agents/?sort=trending", 4),
        ("/categories/cs.AI/?sort=trending&window=24h", 4),
    ],
)
def test_trending_lists_take_as_many_queries_as_any_list(
    client, long_list, django_assert_num_queries, path, queries
):
    with django_assert_num_queries(queries):
        assert client.get(path).status_code == 200


def test_a_refresh_rewrites_only_the_papers_whose_signals_changed(
    readers, django_assert_num_queries, django_capture_on_commit_callbacks
):
    papers = [PaperFactory() for _ in range(30)]
    for paper in papers[:20]:
        for reader in readers:
            signal(paper, reader, hours_ago=30)
    trending.refresh_trending()
    ReaderSignal.objects.filter(paper__in=papers[:10]).delete()
    before = scores("7d")

    # The signals, then in a transaction (a savepoint within the test's) the
    # stored scores and the clearing of the 10 papers that lost their signals.
    # Stored scores do not decay with time, so the 10 others are not rewritten.
    with django_assert_num_queries(5):
        assert trending.refresh_trending() == 10
    later = timezone.now() + datetime.timedelta(minutes=5)
    with django_assert_num_queries(4), django_capture_on_commit_callbacks() as bumps:
        assert trending.refresh_trending(now=later) == 10

    assert bumps == []  # nothing changed: cached trending pages are kept
    after = scores("7d")
    assert set(after) == {paper.pk for paper in papers[10:20]}
    assert after == {pk: pytest.approx(before[pk]) for pk in after}


def test_stored_scores_keep_the_order_of_decayed_scores_at_any_moment(readers):
    now = timezone.now()
    old_crowd, one_fresh = PaperFactory(), PaperFactory()
    for reader in readers:
        signal(old_crowd, reader, hours_ago=24 * 4, now=now)
    signal(one_fresh, readers[0], hours_ago=0, now=now)
    trending.refresh_trending(now=now)
    stored = dict(Paper.objects.values_list("pk", "trending_7d"))

    for later in (0, 24, 24 * 2.9):
        decayed = scores("7d", now + datetime.timedelta(hours=later))
        # 4 readers 4 days ago weigh 4 * 3 / 4 = 3: as one reader now, from then on.
        assert decayed[old_crowd.pk] == pytest.approx(decayed[one_fresh.pk])
        assert decayed[one_fresh.pk] == pytest.approx(3 * 0.5 ** (later / 48))
    assert stored[old_crowd.pk] == pytest.approx(stored[one_fresh.pk])


def test_with_no_reader_activity_in_the_window_the_page_says_it_shows_the_newest(client, readers):
    now = timezone.now()
    older = PaperFactory(published_at=now - datetime.timedelta(days=3))
    newer = PaperFactory(published_at=now - datetime.timedelta(days=1))
    quiet = "No reader activity in the last 7 days yet: showing the newest papers."

    response = client.get("/trending/")
    assert quiet in response.content.decode()
    assert listed_ids(response) == [newer.pk, older.pk]

    # Activity ten days ago: none in the last 7 days, some in the last 30.
    signal(older, readers[0], hours_ago=240, now=now)
    trending.refresh_trending(now=now)
    assert quiet in client.get("/trending/").content.decode()
    thirty = client.get("/trending/?window=30d")
    assert "No reader activity" not in thirty.content.decode()
    assert listed_ids(thirty) == [older.pk, newer.pk]
    assert "No reader activity in the last 24 hours yet" in (
        client.get("/trending/?window=24h").content.decode()
    )
