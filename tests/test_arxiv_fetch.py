import datetime
import email.utils
import itertools
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection

from core.pacing import lock_key
from ingest.arxiv_api import read_query
from ingest.http import SourceHttp, parse_retry_after
from ingest.records import ArxivRecord, Skipped, SourceUnreadable
from tests.arxiv_server import (
    Fault,
    entry_id,
    recorded,
    recorded_entries,
    updated_of,
)
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db


REQUEST_LOCK_KEY = lock_key("arxiv")


def entries(batches) -> Iterator[ArxivRecord | Skipped]:
    for batch in batches:
        yield from batch.entries


def fetch(**kwargs) -> list[ArxivRecord | Skipped]:
    return list(
        entries(read_query(**{"query": "cat:cs.SE AND abs:testing", "max_results": 25} | kwargs))
    )


def as_datetime(timestamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def test_pages_newest_updated_first_up_to_the_maximum(fake_arxiv, settings):
    settings.ARXIV_USER_AGENT = "Papershelf (https://papers.example; mailto:ops@papers.example)"

    records = fetch()

    assert [r.arxiv_id for r in records] == [entry_id(e) for e in fake_arxiv.entries[:25]]
    updated = [r.updated_at for r in records]
    assert updated == sorted(updated, reverse=True)
    assert [r.params["start"] for r in fake_arxiv.requests] == ["0", "10", "20"]
    first = fake_arxiv.requests[0]
    assert first.params["search_query"] == "cat:cs.SE AND abs:testing"
    assert first.params["sortBy"] == "lastUpdatedDate"
    assert first.params["sortOrder"] == "descending"
    assert first.headers["User-Agent"] == settings.ARXIV_USER_AGENT


def test_a_page_never_asks_for_more_than_the_maximum(fake_arxiv):
    records = fetch(max_results=3)

    assert len(records) == 3
    assert [r.params["max_results"] for r in fake_arxiv.requests] == ["3"]


def test_stops_paging_at_entries_not_updated_since(fake_arxiv):
    since = as_datetime(updated_of(fake_arxiv.entries[14]))

    records = fetch(max_results=100, since=since)

    assert [r.arxiv_id for r in records] == [entry_id(e) for e in fake_arxiv.entries[:15]]
    # Two pages asked for (a page retried after a slow answer is still one page).
    assert len({request.params["start"] for request in fake_arxiv.requests}) == 2


def test_record_fields_come_from_the_entry(fake_arxiv):
    fake_arxiv.serve(
        recorded_entries("id_2104.12255v1_s0_m100.xml")
        + recorded_entries("id_astro-ph_0601001_s0_m100.xml")
    )

    records = {r.arxiv_id: r for r in fetch(max_results=10)}

    new_style = records["2104.12255"]
    assert new_style.version == 1
    assert new_style.title == "0"
    assert new_style.authors == ("Quan Thoi Minh Nguyen",)
    assert new_style.primary_category == "cs.CR"
    assert new_style.published_at == datetime.datetime(2021, 4, 20, 16, 7, 14, tzinfo=datetime.UTC)
    assert new_style.abstract.startswith("What is the funniest number in cryptography? 0.")
    assert "\n" not in new_style.abstract
    old_style = records["astro-ph/0601001"]
    assert old_style.version == 1
    assert old_style.primary_category == "astro-ph"


def test_code_links_are_read_from_abstract_and_comment(fake_arxiv):
    entry = fake_arxiv.entries[0]
    fake_arxiv.entries[0] = entry.replace(
        "</summary>", " Code: https://github.com/example/tester.</summary>"
    ).replace(
        "</title>",
        "</title><arxiv:comment>12 pages; data at https://huggingface.co/datasets/ex/tests"
        " and https://github.com/example/tester</arxiv:comment>",
    )

    record = fetch(max_results=1)[0]

    # One link is the official one; the others are kept as mentioned in the text.
    assert record.code_urls == (
        ("https://github.com/example/tester", "abstract", "official"),
        ("https://huggingface.co/datasets/ex/tests", "comment", "mentioned"),
    )


def test_an_entry_with_missing_fields_is_skipped_and_the_rest_kept(fake_arxiv):
    no_date = fake_arxiv.entries[3]
    no_title = fake_arxiv.entries[12]
    start = no_date.index("<published>")
    fake_arxiv.entries[3] = no_date[:start] + no_date[no_date.index("</published>") + 12 :]
    start = no_title.index("<title>")
    fake_arxiv.entries[12] = no_title[:start] + no_title[no_title.index("</title>") + 8 :]

    results = fetch()

    skipped = [r for r in results if isinstance(r, Skipped)]
    assert [s.reason for s in skipped] == [
        "missing its id or its dates",
        f"{entry_id(no_title)}: missing title",
    ]
    assert entry_id(no_date) in skipped[0].where
    kept = [r.arxiv_id for r in results if isinstance(r, ArxivRecord)]
    # The paging offsets count skipped entries too: nothing repeated, nothing lost.
    expected = [entry_id(e) for i, e in enumerate(fake_arxiv.entries[:25]) if i not in (3, 12)]
    assert kept == expected


def test_entries_that_are_no_papers_are_skipped(fake_arxiv):
    error_entry = recorded_entries("id_abc_s0_m100.xml")[0]
    paper = recorded_entries("id_2104.12255v1_s0_m100.xml")[0]
    not_a_paper = paper.replace("http://arxiv.org/abs/2104.12255v1", "https://arxiv.org/a/someone")
    fake_arxiv.serve([error_entry, not_a_paper])

    results = fetch()

    assert sorted(results, key=str) == [
        Skipped("https://arxiv.org/a/someone", "not an arXiv paper id"),
        Skipped(
            "https://arxiv.org/api/errors#incorrect_id_format_for_abc",
            "missing its id or its dates",
        ),
    ]


def test_a_rejected_query_fails_at_once_with_arxivs_reason(fake_arxiv):
    fake_arxiv.queue(Fault(status=400, body=recorded("id_abc_s0_m100.xml")))

    with pytest.raises(SourceUnreadable, match="HTTP 400: incorrect id format for abc"):
        fetch()
    assert len(fake_arxiv.requests) == 1


def test_no_results_is_an_empty_answer_not_a_fault(fake_arxiv):
    fake_arxiv.serve([])

    assert fetch() == []
    assert len(fake_arxiv.requests) == 1


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=503),
        Fault(status=429),
        Fault(reset=True),
        Fault(delay=1.5),  # past the 0.5 s timeout
        Fault(empty=True),
        Fault(truncate=True),
    ],
    ids=["503", "429", "connection-reset", "timeout", "empty-page", "truncated-xml"],
)
@pytest.mark.parametrize("page", [0, 1], ids=["first-page", "later-page"])
def test_faults_are_retried_and_nothing_is_lost(fake_arxiv, fault, page):
    fake_arxiv.queue(*[Fault()] * page, fault, fault)

    records = fetch()

    assert [r.arxiv_id for r in records] == [entry_id(e) for e in fake_arxiv.entries[:25]]
    assert [r.params["start"] for r in fake_arxiv.requests] == (
        ["0"] * (3 if page == 0 else 1) + ["10"] * (3 if page == 1 else 1) + ["20"]
    )


def test_retry_after_is_honoured(fake_arxiv):
    fake_arxiv.queue(Fault(status=503, headers={"Retry-After": "1"}))

    fetch(max_results=5)

    first, second = fake_arxiv.requests
    assert second.started - first.finished >= 1


def test_a_lasting_fault_gives_up_after_the_retries_without_hanging(fake_arxiv):
    fake_arxiv.queue(Fault(), *[Fault(delay=1)] * 10)
    fetched = []
    began = time.monotonic()

    with pytest.raises(SourceUnreadable, match=r"timed out .*gave up after 4 tries"):
        fetched.extend(entries(read_query(query="all:testing", max_results=25)))

    assert len(fetched) == 10
    assert time.monotonic() - began < 4


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    http = SourceHttp.from_settings(retry_base_wait=1.0, retry_max_wait=20.0)

    waits = [http.wait_before_retry(attempt, retry_after=None) for attempt in range(6)]

    for attempt, wait in enumerate(waits[:4]):
        assert 2**attempt <= wait <= 2**attempt + 1
    assert waits[5] == 20.0
    assert 7 <= http.wait_before_retry(0, retry_after=7) <= 8


def test_requests_are_spaced_by_the_delay(fake_arxiv, settings):
    settings.ARXIV_DELAY_SECONDS = 0.3

    fetch()

    starts = [r.started for r in fake_arxiv.requests]
    assert len(starts) == 3
    assert all(later - earlier >= 0.3 for earlier, later in itertools.pairwise(starts))


@pytest.mark.django_db(transaction=True)
def test_concurrent_fetches_use_one_connection_at_a_time(fake_arxiv, settings):
    settings.ARXIV_DELAY_SECONDS = 0.05
    fake_arxiv.queue(*[Fault(delay=0.1)] * 9)
    results = []

    def fetch_and_close() -> None:
        try:
            results.append(len(fetch()))
        finally:
            connection.close()

    threads = [threading.Thread(target=fetch_and_close) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert results == [25, 25, 25]
    assert fake_arxiv.max_concurrent == 1


@pytest.fixture
def other_process_connection() -> Iterator[psycopg.Connection]:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    with psycopg.connect(**params, autocommit=True) as other:
        yield other


# Behind a transaction-mode pooler the turn is a transaction's lock, on a
# connection of its own (core.pacing); either way another session's lock holds it.
@pytest.mark.parametrize("transaction_pooling", [False, True], ids=["direct", "pooled"])
@pytest.mark.django_db(transaction=True)
def test_a_request_waits_while_another_process_holds_the_arxiv_connection(
    fake_arxiv, other_process_connection, settings, transaction_pooling
):
    settings.DATABASE_TRANSACTION_POOLING = transaction_pooling
    other_process_connection.execute("SELECT pg_advisory_lock(%s)", [REQUEST_LOCK_KEY])
    results = []

    def fetch_and_close() -> None:
        try:
            results.extend(fetch(max_results=5))
        finally:
            connection.close()

    def waiting_for_the_turn() -> bool:
        """the fetch asking for the held arXiv turn (or, wrongly, arXiv itself)"""
        asking = other_process_connection.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND query LIKE 'SELECT pg_try_advisory_%lock(%'"
        ).fetchone()[0]
        return asking > 0 or bool(fake_arxiv.requests)

    thread = threading.Thread(target=fetch_and_close)
    thread.start()
    try:
        wait_for(waiting_for_the_turn)
        assert fake_arxiv.requests == []
    finally:
        other_process_connection.execute("SELECT pg_advisory_unlock(%s)", [REQUEST_LOCK_KEY])
        thread.join(timeout=10)

    assert len(results) == 5
    # The turn was given back: another process takes it at once.
    taken = other_process_connection.execute(
        "SELECT pg_try_advisory_lock(%s)", [REQUEST_LOCK_KEY]
    ).fetchone()[0]
    assert taken is True
    other_process_connection.execute("SELECT pg_advisory_unlock(%s)", [REQUEST_LOCK_KEY])


@pytest.mark.parametrize("transaction_pooling", [False, True], ids=["direct", "pooled"])
@pytest.mark.django_db(transaction=True)
def test_a_wedged_holder_of_the_arxiv_connection_is_reported_not_waited_for(
    fake_arxiv, other_process_connection, settings, transaction_pooling
):
    settings.DATABASE_TRANSACTION_POOLING = transaction_pooling
    settings.ARXIV_REQUEST_TIMEOUT = 0.1
    other_process_connection.execute("SELECT pg_advisory_lock(%s)", [REQUEST_LOCK_KEY])

    with pytest.raises(SourceUnreadable, match="another process held the arxiv turn"):
        fetch()
    assert fake_arxiv.requests == []


def test_retry_after_may_be_a_date():
    in_a_minute = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=60)

    wait = parse_retry_after({"Retry-After": email.utils.format_datetime(in_a_minute)})

    assert 55 < wait <= 60
