"""A source's listing read after an announcement: feed, ids, API, pipeline, and the fallback."""

import datetime
import re

import pytest
from django.utils import timezone

from catalog.models import Paper, PaperTag
from ingest import runs, tasks
from ingest.announcements import latest_announcement
from ingest.models import IngestRun, IngestSource
from tests.arxiv_server import (
    Fault,
    entry_id,
    recorded_listing,
)
from tests.factories import PaperFactory, TagFactory
from tests.ingest_factories import IngestSourceFactory

pytestmark = pytest.mark.django_db

# The recorded listing is Tuesday 2 June 2026's: Monday's 20:00 EDT announcement.
ANNOUNCED = datetime.datetime(2026, 6, 2, 0, 0, tzinfo=datetime.UTC)
LISTED = datetime.date(2026, 6, 2)
TICK = ANNOUNCED + datetime.timedelta(minutes=5)
NEW_IDS = ["2604.03438", "2602.19294", "2511.02810", "2109.07960"]  # three new, one cross


def listing_source(**fields) -> IngestSource:
    return IngestSourceFactory(listing_categories="cs.SE", **fields)


def stored(arxiv_id: str) -> Paper:
    return Paper.objects.get(arxiv_id=arxiv_id)


def api_requests(fake) -> list:
    return [r for r in fake.requests if r.path == "/api/query"]


def test_a_listing_brings_its_new_papers_and_cross_lists_with_the_announcement(fake_arxiv):
    tag = TagFactory()
    source = listing_source(tags=[tag])
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")

    run = runs.run_listing(source=source, now=TICK)

    assert (run.kind, run.status, run.created, run.updated, run.skipped) == (
        IngestRun.Kind.LISTING,
        IngestRun.Status.SUCCEEDED,
        4,
        0,
        0,
    )
    assert (
        run.query
        == "cs.SE listing of 2026-06-02: 3 new, 1 cross-listed, 0 new versions of papers here"
    )
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(NEW_IDS)
    assert {stored(i).announced_at for i in NEW_IDS} == {ANNOUNCED}
    assert PaperTag.objects.filter(tag=tag).count() == 4
    # One listing request, then the ids in one API request.
    assert [r.path for r in fake_arxiv.requests] == ["/rss/cs.SE", "/api/query"]
    assert sorted(api_requests(fake_arxiv)[0].params["id_list"].split(",")) == sorted(NEW_IDS)
    source.refresh_from_db()
    assert (source.listed_through, source.awaiting, source.claimed_at) == (LISTED, {}, None)


def test_a_new_version_updates_the_paper_here_and_is_not_shown_as_new(fake_arxiv):
    old_added = timezone.now() - datetime.timedelta(days=300)
    here = PaperFactory(
        arxiv_id="2306.07400",
        version=1,
        published_at=datetime.datetime(2023, 6, 12, tzinfo=datetime.UTC),
        added_at=old_added,
    )
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")

    run = runs.run_listing(source=listing_source(), now=TICK)

    assert (run.created, run.updated) == (4, 1)
    here.refresh_from_db()
    assert here.version == 2
    assert here.updated_at.date() == datetime.date(2026, 2, 22)
    # Not new: it keeps its first-published date, its arrival, and no announcement of its own.
    assert here.published_at.date() == datetime.date(2023, 6, 12)
    assert here.added_at == old_added
    assert here.announced_at is None
    # The replaced cross-list is of a paper not here: not brought in.
    assert not Paper.objects.filter(arxiv_id="1706.00679").exists()
    assert "1 new versions of papers here" in run.query


def test_the_first_announcement_is_kept_when_a_paper_is_announced_again(fake_arxiv):
    first = datetime.datetime(2026, 4, 6, 0, 0, tzinfo=datetime.UTC)
    PaperFactory(arxiv_id="2604.03438", version=1, announced_at=first)
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")

    runs.run_listing(source=listing_source(), now=TICK)

    assert stored("2604.03438").announced_at == first


def test_a_listing_already_read_is_not_read_again(fake_arxiv):
    source = listing_source()
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")
    runs.run_listing(source=source, now=TICK)

    again = runs.run_listing(source=source, now=TICK + datetime.timedelta(minutes=5))

    assert again is None
    assert len(fake_arxiv.requests) == 2
    assert runs.sources_due(now=TICK) == []


def test_a_paper_listed_without_an_id_is_matched_by_title(fake_arxiv):
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")
    title = (
        next(e for e in fake_arxiv.entries if entry_id(e) == "2604.03438")
        .split("<title>")[1]
        .split("</title>")[0]
    )
    idless = PaperFactory(arxiv_id=None, title=" ".join(title.split()).upper())

    runs.run_listing(source=listing_source(), now=TICK)

    idless.refresh_from_db()
    assert idless.arxiv_id == "2604.03438"
    assert idless.announced_at == ANNOUNCED
    assert Paper.objects.filter(title__iexact=idless.title).count() == 1


def announced_now(entry: str) -> str:
    """The entry as a paper submitted on the day before the announcement."""
    submitted = (ANNOUNCED - datetime.timedelta(hours=8)).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = re.sub(r"<published>[^<]*</published>", f"<published>{submitted}</published>", entry)
    return re.sub(r"<updated>[^<]*</updated>", f"<updated>{submitted}</updated>", entry)


def test_a_stale_listing_falls_back_to_the_query_until_it_brings_new_papers(fake_arxiv):
    source = listing_source()
    fake_arxiv.listing = recorded_listing("cs.SE_stale.rss")

    # The API does not have the announcement yet: the query brings only older papers.
    early = runs.run_listing(source=source, now=TICK)

    assert (early.status, early.created) == (IngestRun.Status.SUCCEEDED, 25)
    source.refresh_from_db()
    assert source.fallback_through is None

    # Five minutes on it has: a paper submitted since the previous announcement.
    entries = fake_arxiv.entries
    fake_arxiv.serve([announced_now(entries[30]), *entries[:30], *entries[31:]])
    IngestSource.objects.update(last_success_at=None)  # read from the newest again
    fallback = runs.run_listing(source=source, now=TICK + datetime.timedelta(minutes=5))

    assert fallback.kind == IngestRun.Kind.LISTING
    assert fallback.query == (
        "cs.SE listing of 2026-06-02: the listing feed is still that of 2026-06-01; "
        "the query instead"
    )
    # Not late yet: arXiv rebuilds the feeds hours after announcing.
    assert (fallback.status, fallback.created) == (IngestRun.Status.SUCCEEDED, 1)
    assert api_requests(fake_arxiv)[0].params["search_query"] == source.query
    source.refresh_from_db()
    assert source.listed_through is None
    assert source.fallback_through == LISTED
    assert source.last_success_at == fallback.started_at
    assert runs.sources_due(now=TICK) == [source.pk]

    # The next check looks at the listing only.
    requests_before = len(fake_arxiv.requests)
    assert runs.run_listing(source=source, now=TICK + datetime.timedelta(minutes=10)) is None
    assert [r.path for r in fake_arxiv.requests[requests_before:]] == ["/rss/cs.SE"]

    # Once the listing is out it is read as usual.
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")
    listed = runs.run_listing(source=source, now=TICK + datetime.timedelta(hours=4))

    assert listed.status == IngestRun.Status.SUCCEEDED
    assert stored("2604.03438").announced_at == ANNOUNCED
    source.refresh_from_db()
    assert source.listed_through == LISTED


def test_a_listing_still_missing_when_late_is_reported(fake_arxiv, settings):
    source = listing_source(fallback_through=LISTED)
    fake_arxiv.listing = recorded_listing("cs.SE_stale.rss")
    late = ANNOUNCED + datetime.timedelta(minutes=settings.LISTING_LATE_MINUTES)

    run = runs.run_listing(source=source, now=late)

    assert run.status == IngestRun.Status.FAILED
    assert run.error == "The listing is late: the listing feed is still that of 2026-06-01."
    assert api_requests(fake_arxiv) == []


def test_an_unreadable_listing_falls_back_to_the_query_and_is_reported_when_late(
    fake_arxiv, settings
):
    fake_arxiv.listing = recorded_listing("cs.SE_truncated.rss")
    late = ANNOUNCED + datetime.timedelta(minutes=settings.LISTING_LATE_MINUTES + 5)

    run = runs.run_listing(source=listing_source(), now=late)

    assert run.status == IngestRun.Status.PARTIAL
    assert run.created == 25
    assert "The listing is late: the listing feed could not be read: malformed listing feed" in (
        run.error
    )
    # The feed was asked for 1 + ARXIV_MAX_RETRIES times before the query ran.
    assert [r.path for r in fake_arxiv.requests].count("/rss/cs.SE") == 4


def test_an_empty_listing_of_the_day_is_read_and_reported(fake_arxiv):
    source = listing_source()
    fake_arxiv.listing = recorded_listing("cs.SE_empty.rss")

    run = runs.run_listing(source=source, now=TICK)

    assert (run.status, run.fetched) == (IngestRun.Status.FAILED, 0)
    assert "The listing announced nothing" in run.error
    assert api_requests(fake_arxiv) == []
    source.refresh_from_db()
    assert source.listed_through == LISTED


def test_unreadable_items_are_reported_and_the_rest_stored(fake_arxiv):
    fake_arxiv.listing = recorded_listing("cs.SE_malformed.rss")

    run = runs.run_listing(source=listing_source(), now=TICK)

    assert (run.status, run.created) == (IngestRun.Status.PARTIAL, 1)
    assert "Skipped 3 unreadable listing items" in run.error
    assert "oai:arXiv.org:2511.02810v1: unknown announce type 'withdrawn'" in run.error


def test_papers_the_api_does_not_give_yet_are_awaited_then_stored(fake_arxiv):
    source = listing_source()
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss").replace(
        b"oai:arXiv.org:2306.07400v2", b"oai:arXiv.org:2306.07400v3"
    )
    PaperFactory(arxiv_id="2306.07400", version=1)
    held_back = next(e for e in fake_arxiv.entries if entry_id(e) == "2604.03438")
    fake_arxiv.serve([e for e in fake_arxiv.entries if e is not held_back])

    first = runs.run_listing(source=source, now=TICK)

    assert first.status == IngestRun.Status.PARTIAL
    assert (
        "2 announced papers are not in the API yet; asked for again at the next check: "
        "2306.07400 2604.03438"
    ) in first.error
    assert not Paper.objects.filter(arxiv_id="2604.03438").exists()
    # The older version the API has is stored meanwhile.
    assert stored("2306.07400").version == 2
    source.refresh_from_db()
    assert sorted(source.awaiting) == ["2306.07400", "2604.03438"]
    assert source.awaiting["2604.03438"]["kind"] == "new"
    assert runs.sources_due(now=TICK) == [source.pk]

    fake_arxiv.serve([*fake_arxiv.entries, held_back])
    second = runs.run_listing(source=source, now=TICK + datetime.timedelta(minutes=5))

    assert second.query == "cs.SE: papers awaited from earlier listings"
    assert (second.status, second.created) == (IngestRun.Status.PARTIAL, 1)
    assert stored("2604.03438").announced_at == ANNOUNCED
    assert "1 announced papers are not in the API yet" in second.error
    source.refresh_from_db()
    assert list(source.awaiting) == ["2306.07400"]


def test_awaited_papers_are_given_up_after_a_while_and_reported(fake_arxiv, settings):
    since = TICK - datetime.timedelta(hours=settings.LISTING_AWAIT_HOURS + 1)
    source = listing_source(
        listed_through=LISTED,
        awaiting={
            "2999.00001": {
                "version": 1,
                "kind": "new",
                "announced": "2026-06-01",
                "since": since.isoformat(),
            }
        },
    )

    run = runs.run_listing(source=source, now=TICK)

    assert run.status == IngestRun.Status.FAILED
    assert "Gave up waiting for 1 announced papers after 24 hours" in run.error
    assert "2999.00001" in run.error
    source.refresh_from_db()
    assert source.awaiting == {}


def test_a_fault_while_fetching_the_papers_loses_none_of_them(fake_arxiv):
    source = listing_source()
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")
    fake_arxiv.queue(Fault(), *[Fault(status=503)] * 4)

    run = runs.run_listing(source=source, now=TICK)

    assert run.status == IngestRun.Status.FAILED
    source.refresh_from_db()
    assert sorted(source.awaiting) == sorted(NEW_IDS)
    assert source.listed_through == LISTED

    retried = runs.run_listing(source=source, now=TICK + datetime.timedelta(minutes=5))

    assert (retried.status, retried.created) == (IngestRun.Status.SUCCEEDED, 4)
    assert Paper.objects.count() == 4


def test_a_source_busy_with_its_query_is_left_to_the_next_check(fake_arxiv):
    source = listing_source(claimed_at=timezone.now(), claim_token="other")

    with pytest.raises(runs.AlreadyRunning):
        runs.run_listing(source=source, now=TICK)

    assert fake_arxiv.requests == []


def test_the_check_queues_the_sources_the_latest_announcement_has_not_reached(
    fake_arxiv, django_capture_on_commit_callbacks, client
):
    listing_date = latest_announcement(timezone.now()).listing_date
    day = listing_date.strftime("%a, %d %b %Y").encode()
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss").replace(b"Tue, 02 Jun 2026", day)
    due = listing_source()
    listing_source(listed_through=listing_date)  # read already
    listing_source(enabled=False)
    IngestSourceFactory()  # no listing categories: the query alone

    with django_capture_on_commit_callbacks(execute=True):
        queued = tasks.check_announcements()

    assert queued == 1
    due.refresh_from_db()
    assert due.listed_through == listing_date
    assert Paper.objects.count() == 4
    assert IngestRun.objects.get().source == due
    # Newest first published on the front page at once.
    assert "arXiv:2604.03438" in client.get("/").content.decode()
