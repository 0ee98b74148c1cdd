"""Keeping a copy of the catalog: added_since/updated_since and sort=added|updated
on lists, added_at/updated_at on items, and the change feed (/api/v1/changes)
in commit order, through edits, hides, merges, deletes and bulk SQL."""

import datetime
import gzip
import hashlib
import io
import json
import threading
from urllib.parse import quote

import environ
import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.utils import timezone

from accounts.services import create_api_token, upvote
from catalog.models import Paper, PaperChange
from catalog.sync import prune, seal
from tests.accounts_factories import UserFactory
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def changes(client, since=None, limit=100):
    params = {"limit": limit} if since is None else {"since": since, "limit": limit}
    answer = client.get("/api/v1/changes", params)
    assert answer.status_code == 200, answer.content
    return answer.json()


def moment(text):
    """An answer's date and time, to the second (answers give milliseconds)."""
    return datetime.datetime.fromisoformat(text).replace(microsecond=0)


def follow(client, since=None):
    """Every entry from the token on, page by page, and the token to go on from."""
    entries = []
    while True:
        page = changes(client, since, limit=2)
        entries += page["items"]
        since = page["next_since"]
        if not page["more"]:
            return entries, since


def apply(copy, entries):
    """A client's copy brought up to date with the feed's entries."""
    for entry in entries:
        if entry["change"] == "removed":
            copy.pop(entry["id"], None)
        else:
            copy[entry["id"]] = entry["paper"]


def curate(*, hidden, edited, untouched):
    """Curators' day: one paper hidden, one retitled and tagged, two new ones;
    the tag and the category of a paper left alone renamed, and a reader's
    upvote on it."""
    hidden.is_visible = False
    hidden.save()
    edited.tags.add(TagFactory())
    edited.title = "A new title"
    edited.save()
    PaperFactory.create_batch(2)
    tag, category = untouched.tags.get(), untouched.primary_category
    tag.name = "Renamed tag"
    tag.save()
    category.name = "Renamed category"
    category.save()
    voter = UserFactory(date_joined=timezone.now() - datetime.timedelta(days=2))
    upvote(user=voter, paper=untouched)


def listed(client):
    """The whole visible catalog as the list answers it, by id."""
    items, cursor = {}, None
    while True:
        params = {"sort": "added", "limit": 100, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/v1/papers", params).json()
        items.update({item["id"]: item for item in page["items"]})
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def test_lists_filter_and_sort_by_added_and_changed(client):
    now = timezone.now()
    old = PaperFactory(added_at=now - datetime.timedelta(days=3))
    new = PaperFactory(added_at=now - datetime.timedelta(hours=1))
    Paper.objects.filter(pk=new.pk).update(changed_at=now - datetime.timedelta(days=2))
    old.save()  # curators' edit: changed now

    since = (now - datetime.timedelta(days=1)).isoformat()
    added = client.get("/api/v1/papers", {"added_since": since}).json()["items"]
    assert [item["id"] for item in added] == [new.pk]
    updated = client.get("/api/v1/papers", {"updated_since": since}).json()["items"]
    assert [item["id"] for item in updated] == [old.pk]

    by_added = client.get("/api/v1/papers", {"sort": "added"}).json()["items"]
    assert [item["id"] for item in by_added] == [new.pk, old.pk]
    by_update = client.get("/api/v1/papers", {"sort": "updated"}).json()["items"]
    assert [item["id"] for item in by_update] == [old.pk, new.pk]
    old.refresh_from_db()
    assert moment(by_update[0]["updated_at"]) == old.changed_at.replace(microsecond=0)
    assert moment(by_update[0]["added_at"]) == old.added_at.replace(microsecond=0)

    assert client.get("/api/v1/papers", {"added_since": "yesterday"}).status_code == 400
    assert client.get("/", {"sort": "added", "added_since": since}).status_code == 200


def test_sorted_by_added_pages_through_every_paper_once(client):
    papers = PaperFactory.create_batch(5)
    seen, cursor = [], None
    while True:
        params = {"sort": "added", "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/api/v1/papers", params).json()
        seen += [item["id"] for item in page["items"]]
        if not (cursor := page["next_cursor"]):
            break
    assert sorted(seen) == sorted(paper.pk for paper in papers)


def test_a_paper_says_its_version_date_apart_from_its_last_change(client):
    paper = PaperFactory(version=2)
    detail = client.get(f"/api/v1/papers/{paper.arxiv_id}").json()
    # As stored: the factory's tags and categories moved it after the instance was made.
    paper.refresh_from_db()
    assert detail["version_updated_at"] is not None
    assert moment(detail["updated_at"]) == paper.changed_at.replace(microsecond=0)


def test_the_feed_lists_each_change_once_at_its_latest_state(client):
    first, second, third, fourth = PaperFactory.create_batch(4)
    start = changes(client)
    assert [entry["id"] for entry in start["items"]] == [
        first.pk,
        second.pk,
        third.pk,
        fourth.pk,
    ]
    token = start["next_since"]

    first.tags.add(TagFactory(slug="llm"))  # a curator tags it
    second.title = "Edited"
    second.save()
    third.is_visible = False
    third.save()
    fourth.merged_into = second
    fourth.save()
    first.title = "Edited again"
    first.save()
    gone = PaperFactory()
    gone_pk = gone.pk
    gone.delete()

    entries = changes(client, token)["items"]
    assert [(entry["id"], entry["change"]) for entry in entries] == [
        (second.pk, "changed"),
        (third.pk, "removed"),
        (fourth.pk, "removed"),
        (first.pk, "changed"),
        (gone_pk, "removed"),
    ]
    assert entries[3]["paper"]["title"] == "Edited again"
    assert entries[3]["paper"]["tags"] == [{"slug": "llm", "name": first.tags.get().name}]
    assert entries[1]["paper"] is None and entries[1]["arxiv_id"] == third.arxiv_id
    assert changes(client, entries[-1]["token"])["items"] == []


def test_papers_inserted_by_sql_are_in_the_feed(client):
    token = changes(client)["next_since"]
    # As ingest writes in bulk: a copy of a paper's row under another arXiv id.
    columns = [
        field.column
        for field in Paper._meta.concrete_fields
        if field.column not in ("id", "arxiv_id") and not field.generated
    ]
    listed_columns = ", ".join(columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO catalog_paper (arxiv_id, {listed_columns})"  # noqa: S608
            f" SELECT '2601.99999', {listed_columns} FROM catalog_paper WHERE id = %s",
            [PaperFactory(doi="").pk],
        )
    entries = changes(client, token)["items"]
    assert [entry["arxiv_id"] for entry in entries][-1] == "2601.99999"


def test_tokens_page_without_repeats_or_misses_and_prune_keeps_the_answer(client):
    papers = PaperFactory.create_batch(5)
    for paper in papers[:3]:
        paper.save()
    entries, token = follow(client)
    assert sorted(entry["id"] for entry in entries) == sorted(paper.pk for paper in papers)
    papers[4].save()
    assert prune() > 0
    later, _ = follow(client, token)
    assert [entry["id"] for entry in later] == [papers[4].pk]
    again, _ = follow(client)
    assert sorted(entry["id"] for entry in again) == sorted(paper.pk for paper in papers)


@pytest.mark.parametrize("token", ["abc", "-1", "1.5", "99999999999999999999999", "٣"])
def test_a_token_not_given_out_is_refused(client, token):
    answer = client.get("/api/v1/changes", {"since": token})
    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/problem+json"
    assert "token" in answer.json()["detail"]


def test_a_client_following_the_feed_ends_with_the_catalog(client):
    """The copy a client keeps from the feed, through edits, hides, renames,
    votes and new papers."""
    hidden, edited = PaperFactory.create_batch(2)
    untouched = PaperFactory(tags=[TagFactory()], primary_category=CategoryFactory(code="math.GT"))
    copy: dict[int, dict] = {}
    entries, token = follow(client)
    apply(copy, entries)
    assert copy == listed(client)

    curate(hidden=hidden, edited=edited, untouched=untouched)
    entries, token = follow(client, token)
    apply(copy, entries)
    assert copy == listed(client)
    assert len(copy) == 4
    assert copy[untouched.pk]["tags"][0]["name"] == "Renamed tag"
    assert copy[untouched.pk]["primary_category"]["name"] == "Renamed category"
    assert copy[untouched.pk]["upvotes"] == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="two writers at once")
def test_a_transaction_committing_late_is_still_in_the_feed(client):
    """A transaction that started writing first but commits last: its change is
    numbered after the other's, so a token read in between does not skip it."""
    slow_paper, fast_paper = PaperFactory.create_batch(2)
    token = changes(client)["next_since"]
    written, read = threading.Event(), threading.Event()

    def slow_writer():
        try:
            with transaction.atomic():
                Paper.objects.filter(pk=slow_paper.pk).update(changed_at=timezone.now())
                written.set()
                read.wait(timeout=30)
        finally:
            connections.close_all()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    written.wait(timeout=30)
    fast_paper.save()  # committed while the slow one is still open
    between = changes(client, token)
    read.set()
    thread.join()
    after = changes(client, between["next_since"])

    assert [entry["id"] for entry in between["items"]] == [fast_paper.pk]
    assert [entry["id"] for entry in after["items"]] == [slow_paper.pk]
    assert not PaperChange.objects.filter(sequence=None).exists() or seal()


def read_dump(client):
    manifest = client.get("/api/v1/dump").json()
    answer = client.get("/api/v1/dump/papers.jsonl.gz")
    assert answer.status_code == 200
    body = b"".join(answer.streaming_content)
    assert hashlib.sha256(body).hexdigest() == manifest["sha256"]
    assert len(body) == manifest["bytes"]
    items = [json.loads(line) for line in gzip.decompress(body).splitlines()]
    assert len(items) == manifest["papers"]
    return {item["id"]: item for item in items}, manifest["token"]


def test_before_any_dump_the_dump_is_a_404(client, settings, tmp_path):
    settings.DUMP_DIR = tmp_path
    for address in ("/api/v1/dump", "/api/v1/dump/papers.jsonl.gz"):
        answer = client.get(address)
        assert answer.status_code == 404
        assert answer["Content-Type"] == "application/problem+json"


# Committed for real, so the dump reads in its own REPEATABLE READ transaction.
@pytest.mark.django_db(transaction=True)
def test_a_client_loading_the_dump_then_following_changes_ends_with_a_fresh_dump(
    client, settings, tmp_path
):
    # As settings.py reads it from the environment: an environ.Path, which has no `/`.
    settings.DUMP_DIR = environ.Path(str(tmp_path))
    settings.SITE_ROOT = "http://testserver"
    hidden, edited = PaperFactory.create_batch(2)
    untouched = PaperFactory(tags=[TagFactory()], primary_category=CategoryFactory(code="math.GT"))
    call_command("dump_catalog", stdout=io.StringIO())
    copy, token = read_dump(client)
    assert copy == listed(client)

    curate(hidden=hidden, edited=edited, untouched=untouched)
    entries, _ = follow(client, token)
    apply(copy, entries)

    call_command("dump_catalog", stdout=io.StringIO())
    fresh, _ = read_dump(client)
    assert copy == fresh
    assert len(fresh) == 4 and fresh[edited.pk]["title"] == "A new title"
    assert fresh[untouched.pk]["upvotes"] == 1
    assert len(list(tmp_path.glob("papers-*.jsonl.gz"))) <= 2


@pytest.mark.parametrize("address", ["/api/v1/papers", "/api/v1/me/feed"])
def test_a_moment_given_as_a_number_is_refused(client, address):
    reader = UserFactory()
    _, secret = create_api_token(user=reader, name="sync")

    answer = client.get(f"{address}?updated_since=0.5", HTTP_AUTHORIZATION=f"Bearer {secret}")

    assert answer.status_code == 400
    assert "updated_since" in answer.json()["errors"]


@pytest.mark.parametrize(
    "moment",
    ["2000-01-01T00:00:00.80-16:46", "0894-06-11T11:30:53-17:35", "9999-12-31T23:00:00-10:00"],
)
def test_a_moment_the_database_cannot_hold_is_read_as_utc_or_refused(client, moment):
    """Offsets past 15:59 are Python's, not the database's; the last moment has no UTC time."""
    PaperFactory()
    reader = UserFactory()
    _, secret = create_api_token(user=reader, name="sync")
    query = f"added_since={quote(moment)}"

    answers = [
        client.get(f"/api/v1/papers?{query}"),
        client.get(f"/api/v1/me/saved?{query}", HTTP_AUTHORIZATION=f"Bearer {secret}"),
        client.get(f"/?{query}"),
    ]

    assert [answer.status_code for answer in answers] in ([200, 200, 200], [400, 400, 200])
