"""Daily editions: a day's papers in the curators' order once published, the
days around it, a tag's edition, feeds, the admin, the demo and the digest."""

import datetime
import io

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from lxml import etree

from accounts import services as account_services
from accounts.models import Profile
from catalog.models import CurationEvent, Paper, PaperTag
from editions import services
from editions.models import Edition, EditionEntry
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

UTC = datetime.UTC
DAY = datetime.date(2025, 11, 5)


def at(day: datetime.date, hour: int = 12) -> datetime.datetime:
    return datetime.datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


def titles(html: str, papers) -> list[str]:
    """The given papers' titles in the order the page shows them."""
    shown = [paper for paper in papers if paper.title in html]
    return [p.title for p in sorted(shown, key=lambda paper: html.index(paper.title))]


@pytest.fixture
def day_papers():
    """Three papers of DAY (one announced that day, two added), newest first: c, b, a."""
    a = PaperFactory(title="Paper Alpha", published_at=at(DAY, 1), added_at=at(DAY, 1))
    b = PaperFactory(
        title="Paper Beta",
        published_at=at(DAY, 2),
        announced_at=at(DAY, 2),
        added_at=at(DAY + datetime.timedelta(days=1)),
    )
    c = PaperFactory(title="Paper Gamma", published_at=at(DAY, 3), added_at=at(DAY, 3))
    return [a, b, c]


def test_the_latest_edition_is_the_latest_day_with_papers(client, day_papers):
    PaperFactory(added_at=at(DAY + datetime.timedelta(days=3)), is_visible=False)
    response = client.get("/daily/")
    assert response.status_code == 302
    assert response["Location"] == "/daily/2025-11-05/"


def test_the_latest_edition_may_be_a_published_one_without_papers(client, day_papers):
    later = Edition.objects.create(date=DAY + datetime.timedelta(days=10))
    services.publish(edition=later, by="test")
    assert client.get("/daily/")["Location"] == "/daily/2025-11-15/"


def test_before_publishing_the_day_shows_its_papers_newest_first_without_notes(client, day_papers):
    a, _b, _c = day_papers
    PaperFactory(title="Another day", added_at=at(DAY - datetime.timedelta(days=1)))
    PaperFactory(title="Hidden one", added_at=at(DAY), is_visible=False)
    edition = services.create_edition(date=DAY, note="**Editor's** words")
    EditionEntry.objects.filter(edition=edition, paper=a).update(pinned=True, note="Read this")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert titles(html, day_papers) == ["Paper Gamma", "Paper Beta", "Paper Alpha"]
    assert "Another day" not in html and "Hidden one" not in html
    assert "Read this" not in html and "Editor&#x27;s" not in html and "Editor's" not in html
    assert "3 papers" in html
    assert "The curators have not published this day's edition yet" in html
    services.publish(edition=edition, by="test")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert "have not published" not in html


def test_published_edition_pins_orders_and_notes(client, day_papers):
    a, b, c = day_papers
    edition = services.create_edition(date=DAY, note="**Big day** <script>x()</script>")
    assert edition.entries.count() == 3
    EditionEntry.objects.filter(edition=edition, paper=a).update(position=5, note="")
    EditionEntry.objects.filter(edition=edition, paper=b).update(position=9, pinned=True)
    EditionEntry.objects.filter(edition=edition, paper=c).update(position=1, note="*Read* this")
    EditionEntry.objects.filter(edition=edition, paper=c).delete()  # the rest come last
    services.publish(edition=edition, by="test")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert titles(html, day_papers) == ["Paper Beta", "Paper Alpha", "Paper Gamma"]
    assert "<strong>Big day</strong>" in html and "<script>x()" not in html


def test_a_paper_note_is_shown_with_its_card(client, day_papers):
    a, _b, _c = day_papers
    edition = services.create_edition(date=DAY)
    EditionEntry.objects.filter(edition=edition, paper=a).update(note="*Read* this first")
    services.publish(edition=edition, by="test")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert "<em>Read</em> this first" in html
    assert html.index("this first") < html.index("Paper Alpha") > html.index("Paper Gamma")


def test_previous_and_next_days_skip_empty_days(client, day_papers):
    PaperFactory(added_at=at(DAY - datetime.timedelta(days=4)))
    PaperFactory(added_at=at(DAY + datetime.timedelta(days=30)))
    PaperFactory(added_at=at(DAY + datetime.timedelta(days=2)), is_visible=False)
    html = client.get("/daily/2025-11-05/").content.decode()
    assert 'rel="prev" href="/daily/2025-11-01/"' in html
    assert 'rel="next" href="/daily/2025-12-05/"' in html
    first = client.get("/daily/2025-11-01/").content.decode()
    assert 'rel="prev"' not in first.split('class="edition-days"')[1].split("</nav>")[0]


def test_the_calendar_counts_each_day_of_the_month(client, day_papers, django_assert_num_queries):
    PaperFactory(added_at=at(datetime.date(2025, 11, 20)))
    PaperFactory(added_at=at(datetime.date(2025, 11, 20), 23))
    PaperFactory(added_at=at(datetime.date(2025, 12, 1)))
    html = client.get("/daily/2025-11-05/").content.decode()
    assert 'href="/daily/2025-11-05/" aria-current="date"' in html
    assert '<span class="calendar-count" data-papers="3">3</span>' in html
    assert 'href="/daily/2025-11-20/"' in html and 'data-papers="2"' in html
    calendar = html.split("edition-calendar")[1].split("</aside>")[0]
    assert "/daily/2025-12-01/" not in calendar.split("<table>")[1]
    # The months around it, opened at their first day, where papers lie that way.
    assert 'href="/daily/2025-12-01/" aria-label="Next month: December 2025"' in calendar
    assert "Previous month" not in calendar
    html = client.get("/daily/2025-12-01/").content.decode()
    assert 'href="/daily/2025-11-01/" aria-label="Previous month: November 2025"' in html
    assert "Next month" not in html


def test_a_tag_edition_shows_the_days_papers_with_the_tag(client, day_papers):
    a, _b, c = day_papers
    tag = TagFactory(slug="agents", name="agents")
    a.tags.add(tag)
    c.tags.add(tag)
    html = client.get("/tags/agents/daily/2025-11-05/").content.decode()
    assert titles(html, day_papers) == ["Paper Gamma", "Paper Alpha"]
    assert "2 papers" in html
    assert client.get("/tags/agents/daily/")["Location"] == "/tags/agents/daily/2025-11-05/"
    assert 'href="/tags/agents/daily/"' in client.get("/tags/agents/").content.decode()
    assert client.get("/tags/nothing/daily/2025-11-05/").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/daily/2025-13-40/",
        "/daily/2025-02-30/",
        "/daily/0000-01-01/",
        "/daily/9999-12-31/",
        "/tags/agents/daily/2025-13-40/",
        "/daily/2025-13-40/feed.rss",
    ],
)
def test_a_bad_date_is_a_clear_404(client, path):
    TagFactory(slug="agents")
    response = client.get(path)
    assert response.status_code == 404
    if "feed" not in path:
        assert "is not a day of the calendar" in response.content.decode()


def test_the_day_links_its_feeds_and_they_parse(client, day_papers):
    a, b, _c = day_papers
    edition = services.create_edition(date=DAY)
    EditionEntry.objects.filter(edition=edition, paper=a).update(
        pinned=True, note="Pinned **note**"
    )
    services.publish(edition=edition, by="test")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert '<link rel="alternate" type="application/rss+xml"' in html
    assert (
        'href="/daily/2025-11-05/feed.rss"' in html and 'href="/daily/2025-11-05/feed.atom"' in html
    )
    rss = etree.fromstring(client.get("/daily/2025-11-05/feed.rss").content)
    items = rss.findall("./channel/item")
    assert [item.findtext("title") for item in items] == [
        "Paper Alpha",
        "Paper Gamma",
        "Paper Beta",
    ]
    assert "<strong>note</strong>" in items[0].findtext("description")
    atom = etree.fromstring(client.get("/daily/2025-11-05/feed.atom").content)
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert len(atom.findall("a:entry", ns)) == 3
    tag = TagFactory(slug="agents")
    b.tags.add(tag)
    tagged = etree.fromstring(client.get("/tags/agents/daily/2025-11-05/feed.rss").content)
    assert [item.findtext("title") for item in tagged.findall("./channel/item")] == ["Paper Beta"]


def test_a_curator_drafts_orders_and_publishes_in_admin(curator_client, day_papers):
    a, b, c = day_papers
    response = curator_client.post(
        reverse("admin:editions_edition_add"),
        {
            "date": "2025-11-05",
            "note": "Hello",
            "entries-TOTAL_FORMS": "0",
            "entries-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    edition = Edition.objects.get(date=DAY)
    assert edition.state == Edition.State.DRAFT
    entries = list(edition.entries.order_by("position"))
    assert [entry.paper_id for entry in entries] == [c.pk, b.pk, a.pk]
    # Reordered, pinned and noted inline.
    form = {
        "date": "2025-11-05",
        "note": "Hello",
        "entries-TOTAL_FORMS": "3",
        "entries-INITIAL_FORMS": "3",
    }
    for n, (entry, position, pinned, note) in enumerate(
        zip(entries, [2, 1, 0], ["", "", "on"], ["", "Beta note", ""], strict=True)
    ):
        form |= {
            f"entries-{n}-id": str(entry.pk),
            f"entries-{n}-edition": str(edition.pk),
            f"entries-{n}-paper": str(entry.paper_id),
            f"entries-{n}-position": str(position),
            f"entries-{n}-note": note,
        }
        if pinned:
            form[f"entries-{n}-pinned"] = pinned
    change = reverse("admin:editions_edition_change", args=[edition.pk])
    assert curator_client.post(change, form).status_code == 302
    response = curator_client.post(
        reverse("admin:editions_edition_changelist"),
        {"action": "publish", "_selected_action": [edition.pk]},
    )
    assert response.status_code == 302
    edition.refresh_from_db()
    assert edition.state == Edition.State.PUBLISHED and edition.published_at is not None
    assert edition.published_by is not None and edition.published_by.groups.filter(name="Curators")
    events = CurationEvent.objects.filter(action=CurationEvent.Action.EDITION_PUBLISHED)
    assert sorted(events.values_list("paper_id", flat=True)) == sorted([a.pk, b.pk, c.pk])
    assert {event.user for event in events} == {edition.published_by}
    assert set(events.values_list("detail", flat=True)) == {"Daily edition 2025-11-05"}
    html = curator_client.get("/daily/2025-11-05/").content.decode()
    assert titles(html, day_papers) == ["Paper Alpha", "Paper Beta", "Paper Gamma"]
    assert "Beta note" in html


def test_a_busy_days_edition_is_edited_whole_in_admin_in_a_few_queries(
    curator_client, django_assert_max_num_queries
):
    """Hundreds of papers a day: the admin's form names each paper from the
    rows' own query, and saves them all in one form."""
    busy = 300
    PaperFactory.create_batch(busy, added_at=at(DAY))
    edition = services.create_edition(date=DAY)
    change = reverse("admin:editions_edition_change", args=[edition.pk])
    with django_assert_max_num_queries(20):
        html = curator_client.get(change).content.decode()
    assert html.count('name="entries-') >= busy
    entries = list(edition.entries.order_by("position"))
    form = {
        "date": DAY.isoformat(),
        "note": "",
        "entries-TOTAL_FORMS": str(busy),
        "entries-INITIAL_FORMS": str(busy),
    }
    for n, entry in enumerate(entries):
        form |= {
            f"entries-{n}-id": str(entry.pk),
            f"entries-{n}-edition": str(edition.pk),
            f"entries-{n}-position": str(busy - n),
            f"entries-{n}-note": "",
        }
    form["entries-0-pinned"] = "on"
    assert curator_client.post(change, form).status_code == 302
    last = edition.entries.order_by("-id").first()
    assert last is not None and last.position == 1
    assert edition.entries.filter(pinned=True).get().pk == entries[0].pk


def test_publishing_and_editing_freshen_the_cached_day_page(
    client, day_papers, redis_cache, django_capture_on_commit_callbacks
):
    a, _b, _c = day_papers
    with django_capture_on_commit_callbacks(execute=True):
        edition = services.create_edition(date=DAY)
        EditionEntry.objects.filter(edition=edition, paper=a).update(pinned=True)
    first = client.get("/daily/2025-11-05/").content.decode()
    assert titles(first, day_papers)[0] == "Paper Gamma"
    with django_capture_on_commit_callbacks(execute=True):
        services.publish(edition=edition, by="test")
    again = client.get("/daily/2025-11-05/").content.decode()
    assert titles(again, day_papers)[0] == "Paper Alpha"
    with django_capture_on_commit_callbacks(execute=True):
        edition.note = "Now with a note"
        edition.save()  # as the admin's form saves it
    assert "Now with a note" in client.get("/daily/2025-11-05/").content.decode()


def test_a_logged_in_reader_gets_their_toggles_on_the_cards(client, day_papers):
    a, _b, _c = day_papers
    reader = UserFactory()
    SavedPaperFactory(user=reader, paper=a)
    client.force_login(reader)
    html = client.get("/daily/2025-11-05/").content.decode()
    assert "<!--slot:" not in html
    assert html.count("save-toggle is-on") == 1 and html.count("save-toggle") == 3


def test_the_demo_ends_with_its_two_digest_days_published(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    editions = Edition.objects.order_by("date")
    assert [edition.date for edition in editions] == [
        datetime.date(2025, 9, 7),
        datetime.date(2025, 11, 5),
    ]
    for edition in editions:
        assert edition.state == Edition.State.PUBLISHED
        day_ids = Paper.objects.filter(added_at__date=edition.date).values_list("pk", flat=True)
        assert len(day_ids) == 20
        assert sorted(edition.entries.values_list("paper_id", flat=True)) == sorted(day_ids)
    assert (
        CurationEvent.objects.filter(action="edition_published", actor="load_demo command").count()
        == 40
    )


def test_the_digest_mail_links_the_days_edition():
    tag = TagFactory()
    user = UserFactory()
    SubscriptionFactory(user=user, tag=tag)
    now = datetime.datetime(2026, 3, 10, 9, 30, tzinfo=UTC)
    Profile.objects.filter(user=user).update(last_digest_at=now - datetime.timedelta(days=1))
    paper = PaperFactory(added_at=now - datetime.timedelta(hours=2))
    PaperTag.objects.create(paper=paper, tag=tag, added_at=now - datetime.timedelta(hours=2))
    account_services.send_due_digests(now=now)
    [message] = mail.outbox
    assert "/daily/2026-03-10/" in message.body
    assert 'href="http' in message.alternatives[0][0]
    assert "/daily/2026-03-10/" in message.alternatives[0][0]


def test_the_main_menu_links_the_daily_edition(client, day_papers):
    html = client.get("/").content.decode()
    assert '<a href="/daily/">Daily</a>' in html
    day = client.get("/daily/2025-11-05/").content.decode()
    assert '<a href="/daily/" aria-current="page">Daily</a>' in day


def test_unpublishing_returns_the_day_to_its_usual_order(client, day_papers):
    a, _b, _c = day_papers
    edition = services.create_edition(date=DAY)
    EditionEntry.objects.filter(edition=edition, paper=a).update(pinned=True, note="Pinned")
    services.publish(edition=edition, by="test")
    assert titles(client.get("/daily/2025-11-05/").content.decode(), day_papers)[0] == "Paper Alpha"
    services.unpublish(edition=edition, by="test")
    html = client.get("/daily/2025-11-05/").content.decode()
    assert titles(html, day_papers)[0] == "Paper Gamma" and "Pinned" not in html


def test_the_day_in_korean_and_chinese(client, day_papers):
    html = client.get("/daily/2025-11-05/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "일간호" in html
    html = client.get("/daily/2025-11-05/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "每日精选" in html
