"""Reading arXiv's listing feeds, RSS and Atom, as recorded."""

import datetime

import pytest

from ingest.http import Retryable, SourceHttp
from ingest.listing import Announced, parse_listing, read_listing
from ingest.records import SourceUnreadable
from tests.arxiv_server import Fault, recorded_listing

JUNE_2 = datetime.date(2026, 6, 2)


def announced(arxiv_id: str, version: int, kind: str) -> Announced:
    return Announced(arxiv_id=arxiv_id, version=version, kind=kind, listing_date=JUNE_2)


EXPECTED = [
    announced("2604.03438", 1, "new"),
    announced("2602.19294", 1, "new"),
    announced("2511.02810", 1, "new"),
    announced("2109.07960", 2, "cross"),
    announced("2306.07400", 2, "replace"),
    announced("1706.00679", 3, "replace-cross"),
]


@pytest.mark.parametrize("name", ["cs.SE_new.rss", "cs.SE_new.atom"])
def test_a_listing_names_each_paper_with_its_version_and_how_it_was_announced(name):
    listing = parse_listing(recorded_listing(name))

    assert list(listing.announced) == EXPECTED
    assert listing.listing_date == JUNE_2
    assert listing.items == 6
    assert not listing.skipped
    assert [a.is_new for a in listing.announced] == [True, True, True, True, False, False]


def test_a_stale_listing_carries_its_own_date():
    listing = parse_listing(recorded_listing("cs.SE_stale.rss"))

    assert listing.listing_date == datetime.date(2026, 6, 1)
    assert [a.arxiv_id for a in listing.announced] == ["2412.16620", "2412.18843"]


def test_an_empty_listing_still_says_its_date():
    listing = parse_listing(recorded_listing("cs.SE_empty.rss"))

    assert listing.listing_date == JUNE_2
    assert listing.announced == ()
    assert listing.items == 0


def test_unreadable_items_are_skipped_with_the_reason():
    listing = parse_listing(recorded_listing("cs.SE_malformed.rss"))

    assert [a.arxiv_id for a in listing.announced] == ["2604.03438"]
    assert [s.reason for s in listing.skipped] == [
        "names no arXiv paper",
        "unknown announce type 'withdrawn'",
        "no announcement date",
    ]
    assert listing.skipped[1].where == "oai:arXiv.org:2511.02810v1"


@pytest.mark.parametrize(
    "content",
    [
        recorded_listing("cs.SE_truncated.rss"),
        b"<html><body>Service temporarily unavailable</body></html>",
        b"",
        b"<rss version='2.0'></rss>",
    ],
    ids=["truncated", "an error page", "nothing", "no channel"],
)
def test_a_feed_that_is_not_whole_is_retried(content):
    with pytest.raises(Retryable):
        parse_listing(content)


def test_a_paper_in_two_categories_of_a_combined_listing_counts_once_as_its_strongest_kind():
    content = recorded_listing("cs.SE_new.rss")
    # The same paper again, further down, as a cross-list of another category.
    duplicate = (
        b"<item><link>https://arxiv.org/abs/2604.03438</link>"
        b"<guid isPermaLink='false'>oai:arXiv.org:2604.03438v1</guid>"
        b"<pubDate>Tue, 02 Jun 2026 00:00:00 -0400</pubDate>"
        b"<arxiv:announce_type>cross</arxiv:announce_type></item></channel>"
    )
    listing = parse_listing(content.replace(b"</channel>", duplicate))

    assert [a.arxiv_id for a in listing.announced].count("2604.03438") == 1
    assert listing.announced[0].kind == "new"
    assert listing.items == 7


def test_the_type_is_read_from_the_description_when_the_element_is_missing():
    content = recorded_listing("cs.SE_new.rss").replace(
        b"<arxiv:announce_type>replace-cross</arxiv:announce_type>", b""
    )

    assert parse_listing(content).announced[-1].kind == "replace-cross"


@pytest.mark.django_db
def test_reading_asks_for_all_categories_at_once(fake_arxiv):
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")

    listing = read_listing(["cs.SE", "cs.LG"])

    assert len(listing.announced) == 6
    assert fake_arxiv.requests[0].path == "/rss/cs.SE+cs.LG"
    assert fake_arxiv.requests[0].headers["User-Agent"]


@pytest.mark.django_db
def test_a_cut_off_feed_is_asked_for_again(fake_arxiv):
    fake_arxiv.listing = recorded_listing("cs.SE_new.rss")
    fake_arxiv.queue(Fault(truncate=True), Fault(status=503, headers={"Retry-After": "0"}))

    listing = read_listing(["cs.SE"])

    assert len(listing.announced) == 6
    assert len(fake_arxiv.requests) == 3


@pytest.mark.django_db
def test_a_feed_still_broken_after_the_retries_is_unreadable(fake_arxiv):
    fake_arxiv.listing = recorded_listing("cs.SE_truncated.rss")

    with pytest.raises(SourceUnreadable, match="malformed listing feed"):
        read_listing(["cs.SE"], http=SourceHttp.from_settings(max_retries=1))

    assert len(fake_arxiv.requests) == 2


@pytest.mark.django_db
def test_an_unknown_category_is_not_retried(fake_arxiv):
    fake_arxiv.queue(Fault(status=404, body=b"not found"))

    with pytest.raises(SourceUnreadable, match="HTTP 404"):
        read_listing(["cs.XX"])

    assert len(fake_arxiv.requests) == 1
