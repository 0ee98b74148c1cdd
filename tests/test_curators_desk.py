"""The admin's home shows a curator what waits for them, each a link to where it is dealt with."""

import datetime
import itertools
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone, translation
from django.utils.html import escape

from catalog.models import CurationEvent, Paper
from curation import desk
from curation.models import SuggestedPaper
from discussion.models import Comment, CommentReport
from editions.models import Edition
from ingest.models import InboxEntry, IngestRun
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

HOME = "/admin/"


@pytest.fixture
def curator():
    """One who may view everything the desk counts, comments too (curators do not
    moderate discussions: see test_staff_see_only_what_they_may_view)."""
    return UserFactory(is_staff=True, is_superuser=True)


@pytest.fixture
def curator_client(curator) -> Client:
    client = Client()
    client.force_login(curator)
    return client


_numbers = itertools.count()


def fill(size: int) -> None:
    """size of everything a curator has to deal with, and as much dealt with already."""
    for _ in range(size):
        InboxEntry.objects.create(paper=PaperFactory(review=Paper.Review.PENDING))
        InboxEntry.objects.create(paper=PaperFactory(review=Paper.Review.PUBLISHED))
    for number in itertools.islice(_numbers, size):
        SuggestedPaper.objects.create(arxiv_id=f"2505.{number:05d}")
        SuggestedPaper.objects.create(
            arxiv_id=f"2506.{number:05d}", state=SuggestedPaper.State.DECLINED
        )
    paper = PaperFactory()
    for _ in range(size):
        reported = Comment.objects.create(paper=paper, author=UserFactory(), body="Spam")
        CommentReport.objects.create(comment=reported, reporter=UserFactory())
        CommentReport.objects.create(comment=reported, reporter=UserFactory())
        hidden = Comment.objects.create(
            paper=paper, author=UserFactory(), body="Spam", hidden_by_curator=True
        )
        CommentReport.objects.create(comment=hidden, reporter=UserFactory())
        Comment.objects.create(paper=paper, author=UserFactory(), body="Fine")
    now = timezone.now()
    long_ago = now - datetime.timedelta(days=desk.FAILED_RUNS_DAYS + 1)
    for _ in range(size):
        IngestRun.objects.create(status=IngestRun.Status.FAILED, started_at=now)
        IngestRun.objects.create(status=IngestRun.Status.INTERRUPTED, started_at=now)
        IngestRun.objects.create(status=IngestRun.Status.FAILED, started_at=long_ago)
        IngestRun.objects.create(status=IngestRun.Status.SUCCEEDED, started_at=now)
        # Stalled: no heartbeat for an hour, or never begun; and one alive.
        IngestRun.objects.create(
            started_at=long_ago, heartbeat_at=now - datetime.timedelta(hours=1)
        )
        IngestRun.objects.create(started_at=now - datetime.timedelta(hours=1))
        IngestRun.objects.create(started_at=long_ago, heartbeat_at=now)


def desk_of(html: str) -> list[tuple[str, str, str]]:
    """Each line of the desk: its link, its label and what it says."""
    table = html.split('id="curators-desk"')[1].split("</table>")[0]
    return re.findall(
        r'<th scope="row"><a href="([^"]+)">([^<]+)</a></th>\s*<td>([^<]+)</td>', table
    )


def test_the_home_shows_what_waits_each_a_link_to_its_action(curator_client):
    fill(3)
    Edition.objects.create(date=timezone.localdate())

    html = curator_client.get(HOME).content.decode()

    assert desk_of(html)[:5] == [
        ("/admin/ingest/inboxentry/", "Review inbox", "3 papers waiting for review"),
        (
            "/admin/curation/suggestedpaper/?state__exact=pending",
            "Suggested papers",
            "3 suggestions waiting for a curator",
        ),
        (
            "/admin/discussion/comment/",
            "Reported comments",
            "3 reported comments still shown",
        ),
        (
            "/admin/ingest/ingestrun/?status__in=failed,interrupted",
            "Failed runs",
            "6 ingest runs failed or were interrupted in the last 7 days",
        ),
        (
            "/admin/ingest/ingestrun/?status__exact=running",
            "Stalled runs",
            "6 running ingest runs with no sign of life",
        ),
    ]
    edition_url, label, text = desk_of(html)[5]
    assert (edition_url, label) == (
        f"/admin/editions/edition/{Edition.objects.get().pk}/change/",
        escape("Today's edition"),
    )
    assert text.endswith(": a draft, not published yet")
    # Each link lands on the list it counts.
    failed = curator_client.get("/admin/ingest/ingestrun/?status__in=failed,interrupted")
    assert failed.status_code == 200 and "9 ingest runs" in failed.content.decode()
    suggested = curator_client.get("/admin/curation/suggestedpaper/?state__exact=pending")
    assert "3 suggested papers" in suggested.content.decode()


def test_todays_edition_is_offered_to_start_then_shown_published(curator_client, curator):
    lines = {
        label: (url, text)
        for url, label, text in desk_of(curator_client.get(HOME).content.decode())
    }
    today = timezone.localdate()
    url, text = lines[escape("Today's edition")]
    assert url == f"/admin/editions/edition/add/?date={today.isoformat()}"
    assert text.endswith(": none yet; start it")
    form = curator_client.get(url)
    assert form.context["adminform"].form.initial["date"] == today.isoformat()

    Edition.objects.create(
        date=today, state=Edition.State.PUBLISHED, published_at=timezone.now(), published_by=curator
    )

    html = curator_client.get(HOME).content.decode()
    line = dict((label, text) for _, label, text in desk_of(html))[escape("Today's edition")]
    assert ": published at " in line
    assert 'class="calm"' in html


def test_nothing_waiting_says_so_without_alarm(curator_client):
    Edition.objects.create(
        date=timezone.localdate(), state=Edition.State.PUBLISHED, published_at=timezone.now()
    )

    html = curator_client.get(HOME).content.decode()

    assert [text for _, _, text in desk_of(html)][:3] == [
        "0 papers waiting for review",
        "0 suggestions waiting for a curator",
        "0 reported comments still shown",
    ]
    assert 'class="urgent"' not in html


def test_the_desk_counts_in_five_queries_whatever_waits(django_assert_num_queries, curator):
    fill(1)

    # The inbox, the suggestions, the reported comments, the runs, today's edition.
    with django_assert_num_queries(5):
        small = desk.waiting(user=curator, now=timezone.now())
    fill(4)
    with django_assert_num_queries(5):
        large = desk.waiting(user=curator, now=timezone.now())

    assert small[0].text == "1 paper waiting for review"
    assert large[0].text == "5 papers waiting for review"


def test_the_home_costs_the_same_queries_however_much_waits(curator_client):
    fill(1)
    with CaptureQueriesContext(connection) as few:
        curator_client.get(HOME)
    fill(5)
    with CaptureQueriesContext(connection) as many:
        curator_client.get(HOME)

    assert len(many) == len(few)


def test_staff_see_only_what_they_may_view(client):
    fill(1)
    client.force_login(UserFactory(is_staff=True))
    assert 'id="curators-desk"' not in client.get(HOME).content.decode()

    client.force_login(CuratorFactory())
    labels = [label for _, label, _ in desk_of(client.get(HOME).content.decode())]

    # Curators do not moderate discussions.
    assert labels == [
        "Review inbox",
        "Suggested papers",
        "Failed runs",
        "Stalled runs",
        escape("Today's edition"),
    ]


def test_the_desk_speaks_korean_and_chinese(curator_client):
    fill(2)

    # The language each request activates is left as it was for the tests after.
    with translation.override(None):
        korean = curator_client.get(HOME, HTTP_ACCEPT_LANGUAGE="ko").content.decode()
        chinese = curator_client.get(HOME, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "검토를 기다리는 논문 2편" in korean and "큐레이터를 기다리는 항목" in korean
    assert "2 篇论文等待审核" in chinese and "等待策展人处理" in chinese


def test_dismissed_reports_leave_the_desk_logged_until_someone_reports_again(
    curator_client, curator
):
    paper = PaperFactory()
    comment = Comment.objects.create(paper=paper, author=UserFactory(), body="Blunt but fair")
    CommentReport.objects.create(comment=comment, reporter=UserFactory(), reason="Rude")
    CommentReport.objects.create(comment=comment, reporter=UserFactory())

    def reported() -> str:
        lines = desk_of(curator_client.get(HOME).content.decode())
        return dict((label, text) for _, label, text in lines)["Reported comments"]

    assert reported() == "1 reported comment still shown"
    answer = curator_client.post(
        "/admin/discussion/comment/",
        {"action": "dismiss_reports", "_selected_action": [comment.pk]},
        follow=True,
    )

    assert "Reports dismissed: 1." in answer.content.decode()
    assert reported() == "0 reported comments still shown"
    comment.refresh_from_db()
    assert not comment.hidden_by_curator
    assert CommentReport.objects.filter(dismissed_by=curator).count() == 2
    event = CurationEvent.objects.get(paper=paper, action="reports_dismissed")
    assert (event.user, event.detail) == (curator, f"comment {comment.pk}, 2 reports")
    # Dismissing again changes nothing; a new report brings it back.
    curator_client.post(
        "/admin/discussion/comment/",
        {"action": "dismiss_reports", "_selected_action": [comment.pk]},
    )
    assert CurationEvent.objects.filter(action="reports_dismissed").count() == 1
    CommentReport.objects.create(comment=comment, reporter=UserFactory())
    assert reported() == "1 reported comment still shown"
