"""Curators add papers by pasting arXiv ids and links: in admin and on the command line."""

import datetime
import io
import re
import socket
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone
from django.utils.html import escape
from lxml import etree

from catalog.models import CurationEvent, Paper, PaperTag
from catalog.signals import papers_stored
from ingest import links, tasks
from ingest.http import SourceHttp
from ingest.links import Result
from ingest.models import IngestRun, LinkRequest
from ingest.records import SourceUnreadable
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.arxiv_server import (
    ATOM,
    Fault,
    entry_id,
    numbered_entries,
    with_id,
)
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

ADD_PAGE = "/admin/ingest/linkrequest/add/"


def add(text: str, **options) -> LinkRequest:
    request = links.request_papers(text=text, by=options.pop("by", "test"), **options)
    return links.add_papers(request)


def results(request: LinkRequest) -> list[tuple]:
    request.refresh_from_db()
    return [
        (line.text, line.arxiv_id, line.result, line.detail)
        for line in map(links.Line.from_json, request.lines)
    ]


def title_of(entry: str) -> str:
    return " ".join(etree.fromstring(entry).findtext(f"{ATOM}title").split())


def version_of(entry: str) -> int:
    return int(etree.fromstring(entry).findtext(f"{ATOM}id").rsplit("v", 1)[1])


def test_the_command_adds_papers_named_in_any_form_with_their_metadata_and_tags(fake_arxiv):
    tag = TagFactory(name="Software_Testing", slug="software-testing")
    first, second, third = (entry_id(e) for e in fake_arxiv.entries[:3])
    out = io.StringIO()

    call_command(
        "add_papers",
        f"https://arxiv.org/abs/{first}",
        f"arXiv:{second}v1, https://huggingface.co/papers/{third}",
        "https://example.com/no-paper-here",
        "--tag",
        "software-testing",
        "--note",
        "for the reading group",
        stdout=out,
    )

    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == sorted(
        [first, second, third]
    )
    paper = Paper.objects.get(arxiv_id=first)
    assert paper.is_visible and paper.review == Paper.Review.PUBLISHED
    assert paper.author_list and paper.primary_category is not None
    assert PaperTag.objects.filter(tag=tag).count() == 3
    printed = out.getvalue()
    assert printed.count("  added") == 3
    assert re.search(r"^https://example.com/no-paper-here +not a paper id or link$", printed, re.M)
    assert "Succeeded: added 3, not a paper id or link 1." in printed
    run = IngestRun.objects.get()
    assert (run.kind, run.status, run.fetched, run.created) == ("links", "succeeded", 3, 3)
    assert len(fake_arxiv.requests) == 1
    assert sorted(fake_arxiv.requests[0].params["id_list"].split(",")) == sorted(
        [first, second, third]
    )
    events = CurationEvent.objects.filter(action=CurationEvent.Action.ADDED)
    assert events.count() == 3
    assert {(e.actor, e.detail) for e in events} == {
        ("add_papers command", "by link with Software_Testing: for the reading group")
    }


def test_code_links_are_stored_and_new_papers_are_queued_for_enrichment(fake_arxiv):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    fake_arxiv.entries[0] = fake_arxiv.entries[0].replace(
        "</summary>", " Code: https://github.com/example/tester.</summary>"
    )
    sent = []

    def receiver(sender, *, paper_ids, bulk, **kwargs):
        sent.append((sorted(paper_ids), bulk))

    papers_stored.connect(receiver)
    try:
        add(arxiv_id)
    finally:
        papers_stored.disconnect(receiver)

    paper = Paper.objects.get(arxiv_id=arxiv_id)
    assert list(paper.code_links.values_list("url", flat=True)) == [
        "https://github.com/example/tester"
    ]
    assert sent == [([paper.pk], False)]


def test_each_line_says_what_became_of_its_paper(fake_arxiv):
    present, revised = entry_id(fake_arxiv.entries[0]), entry_id(fake_arxiv.entries[1])
    add(f"{present} {revised}")
    version = Paper.objects.get(arxiv_id=revised).version
    fake_arxiv.entries[1] = with_id(fake_arxiv.entries[1], revised, version=version + 1)
    tag = TagFactory(name="Agents")
    PaperTag.objects.create(paper=Paper.objects.get(arxiv_id=present), tag=tag)

    request = add(
        f"{present}\n{revised}, 2501.99999\nsee arxiv.org/abs/{present}v1\n"
        "2513.00001\nnothing to see here",
        tags=[tag],
    )

    assert results(request) == [
        (present, present, Result.PRESENT, "already had the tags"),
        (revised, revised, Result.UPDATED, f"v{version} → v{version + 1}; tags added: Agents"),
        ("2501.99999", "2501.99999", Result.NOT_FOUND, ""),
        (f"arxiv.org/abs/{present}v1", present, Result.REPEATED, ""),
        ("2513.00001", None, Result.NOT_AN_ID, ""),
        ("nothing to see here", None, Result.NOT_AN_ID, ""),
    ]
    assert Paper.objects.get(arxiv_id=revised).version == version + 1
    assert CurationEvent.objects.filter(action="tagged").get().detail == "Agents (by link)"


def test_a_listing_without_an_id_is_matched_by_its_title(fake_arxiv):
    entry = fake_arxiv.entries[0]
    # As the digests list them: a title, no id, no arXiv dates.
    listing = PaperFactory(
        arxiv_id=None,
        version=None,
        published_at=None,
        updated_at=None,
        title=title_of(entry).upper(),
    )

    request = add(f"https://arxiv.org/pdf/{entry_id(entry)}")

    [(_, arxiv_id, result, detail)] = results(request)
    assert (result, detail) == (Result.ADDED, "matched the listing without an arXiv id")
    listing.refresh_from_db()
    assert listing.arxiv_id == arxiv_id
    assert Paper.objects.count() == 1


def test_a_curator_naming_a_rejected_or_waiting_paper_publishes_it(fake_arxiv):
    for entry, review in zip(fake_arxiv.entries, ["rejected", "pending"], strict=False):
        PaperFactory(
            arxiv_id=entry_id(entry), version=version_of(entry), is_visible=False, review=review
        )
    rejected, waiting = (entry_id(e) for e in fake_arxiv.entries[:2])

    request = add(f"{rejected} {waiting}")

    assert [(r[2], r[3]) for r in results(request)] == [
        (Result.PRESENT, "was rejected in review: published"),
        (Result.PRESENT, "was waiting for review: published"),
    ]
    assert Paper.objects.visible().count() == 2
    assert set(Paper.objects.values_list("review", flat=True)) == {"published"}


def test_a_hidden_paper_stays_hidden_and_the_line_says_so(fake_arxiv):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    PaperFactory(arxiv_id=arxiv_id, is_visible=False)

    [(_, _, result, detail)] = results(add(arxiv_id))

    assert result == Result.PRESENT
    assert detail == "hidden: show it from the paper list to make it public"


def test_arxiv_failing_mid_batch_stores_nothing_and_keeps_the_input(fake_arxiv, curator_client):
    fake_arxiv.serve(numbered_entries(150))
    text = "\n".join(f"https://arxiv.org/abs/2601.{n:05d}" for n in range(1, 151))
    # The first hundred arrive; the second request fails every time it is tried.
    fake_arxiv.queue(Fault(), *[Fault(status=503)] * 4)

    request = add(text, by=CuratorFactory())

    assert Paper.objects.count() == 0
    assert {r[2] for r in results(request)} == {Result.NOT_STORED}
    run = request.run
    run.refresh_from_db()
    assert run.status == IngestRun.Status.FAILED
    assert "HTTP 503" in run.error
    assert request.ids_fetched == 100
    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/")
    html = page.content.decode()
    assert "arXiv could not be read" in html and "Nothing was stored." in html
    assert f"?retry={request.pk}" in html
    retry = curator_client.get(f"{ADD_PAGE}?retry={request.pk}")
    assert retry.context["form"].initial["text"] == text


def test_the_command_fails_clearly_when_arxiv_is_down(fake_arxiv):
    fake_arxiv.queue(*[Fault(status=503)] * 4)

    with pytest.raises(CommandError, match=r"HTTP 503.*Nothing was stored"):
        call_command("add_papers", entry_id(fake_arxiv.entries[0]), stdout=io.StringIO())
    assert Paper.objects.count() == 0


def closed_port() -> int:
    """A local port nothing listens on: connecting to it is refused at once, as offline."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_offline_the_command_stops_retrying_in_time_and_says_why(settings):
    settings.ARXIV_API_URL = f"http://127.0.0.1:{closed_port()}/api/query"
    settings.ARXIV_DELAY_SECONDS = 0
    # The waits of a worker's retries, shortened: 0.2 s, then 0.4, 0.8, 1.6, 3.2.
    settings.ARXIV_RETRY_BASE_WAIT = 0.2
    settings.ARXIV_MAX_RETRIES = 5
    settings.ARXIV_COMMAND_RETRY_SECONDS = 1.5
    out = io.StringIO()
    started = time.monotonic()

    with pytest.raises(CommandError) as raised:
        call_command("add_papers", "2505.15034", stdout=out)

    took = time.monotonic() - started
    message = str(raised.value)
    assert "connection failed" in message and "Nothing was stored." in message
    tries = int(re.search(r"gave up after (\d) tries", message)[1])
    # It retried, and stopped before the retries a worker would go on with.
    assert 2 <= tries < 6
    assert took < 1.5 + 1
    assert "arXiv could not be read" in out.getvalue()
    assert Paper.objects.count() == 0


def test_workers_keep_retrying_past_the_commands_bound(settings):
    settings.ARXIV_API_URL = f"http://127.0.0.1:{closed_port()}/api/query"
    settings.ARXIV_DELAY_SECONDS = 0
    waits: list[float] = []
    http = SourceHttp.from_settings(sleep=waits.append)

    with pytest.raises(SourceUnreadable, match="gave up after 6 tries"):
        http.retrying(lambda: http.get(settings.ARXIV_API_URL), what="a worker's request")

    assert sum(waits) > settings.ARXIV_COMMAND_RETRY_SECONDS


def test_five_hundred_links_at_once_take_five_requests(fake_arxiv, django_assert_max_num_queries):
    fake_arxiv.serve(numbered_entries(500))
    text = "\n".join(f"https://arxiv.org/abs/2601.{n:05d}v1" for n in range(1, 501))
    request = links.request_papers(text=text, by="test")

    # Fetching, the upsert, tag rules, history and the result: none per paper.
    with django_assert_max_num_queries(80):
        links.add_papers(request)

    assert Paper.objects.count() == 500
    assert [len(r.params["id_list"].split(",")) for r in fake_arxiv.requests] == [100] * 5
    assert request.ids_fetched == 500
    assert {r[2] for r in results(request)} == {Result.ADDED}
    assert CurationEvent.objects.count() == 500


def test_the_admin_page_adds_papers_and_shows_each_result(
    fake_arxiv, curator_client, django_capture_on_commit_callbacks
):
    tag = TagFactory(name="Reasoning")
    ids = [entry_id(e) for e in fake_arxiv.entries[:2]]
    changelist = curator_client.get("/admin/catalog/paper/").content.decode()
    assert f'href="{ADD_PAGE}"' in changelist
    form_page = curator_client.get(ADD_PAGE).content.decode()
    assert "Add papers by link" in form_page
    assert "admin-autocomplete" in form_page

    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(
            ADD_PAGE,
            {"text": f"https://arxiv.org/abs/{ids[0]}\n{ids[1]}\nhello", "tags": [tag.pk]},
        )

    request = LinkRequest.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/admin/ingest/linkrequest/{request.pk}/change/"
    page = curator_client.get(response["Location"]).content.decode()
    assert "Succeeded" in page and "http-equiv" not in page
    assert page.count("<td>added</td>") == 2
    assert "<td>not a paper id or link</td>" in page
    assert set(Paper.objects.filter(tags=tag).values_list("arxiv_id", flat=True)) == set(ids)
    listing = curator_client.get("/admin/ingest/linkrequest/").content.decode()
    assert "added 2" in listing


def test_a_running_request_shows_its_progress_and_refreshes(curator_client):
    request = links.request_papers(text="2505.15034 2505.15035 2505.15036", by="test")

    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/").content.decode()

    assert '<meta http-equiv="refresh" content="2">' in page
    assert "Asked for 0 of 3 papers" in page
    assert '<progress id="link-request-bar" max="3" value="0">' in page


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("garbage " * 1250, "No paper was found"),
        ("x" * 1_000_001, "more than 1,000,000"),
        (
            " ".join(f"2601.{n:05d}" for n in range(1, 1002)),
            "1,001 different papers, more than 1,000",
        ),
        ("   ", "Paste arXiv ids, links or references, or choose a file of them."),
    ],
)
def test_bad_pastes_are_refused_with_a_reason_and_store_nothing(curator_client, text, error):
    response = curator_client.post(ADD_PAGE, {"text": text})

    assert response.status_code == 200
    assert error in response.content.decode()
    assert response.context["form"]["text"].value() == text
    assert LinkRequest.objects.count() == 0


def test_ten_thousand_characters_of_mixed_text_are_read_line_by_line(fake_arxiv):
    known = [entry_id(e) for e in fake_arxiv.entries[:5]]
    noise = ["lorem ipsum dolor sit amet " * 3, "§§§ ¿qué? 🙂", "<script>alert(1)</script>"]
    lines = [*known, *(noise * 90)]
    text = "\n".join(lines)
    assert len(text) > 10_000

    request = add(text)

    outcome = [r[2] for r in results(request)]
    assert outcome[:5] == [Result.ADDED] * 5
    assert set(outcome[5:]) == {Result.NOT_AN_ID}
    assert Paper.objects.count() == 5


def test_staff_without_curation_rights_cannot_add(client):
    client.force_login(UserFactory(is_staff=True))

    assert client.get(ADD_PAGE).status_code == 403
    assert client.post(ADD_PAGE, {"text": "2505.15034"}).status_code == 403


def test_added_papers_show_at_once_to_anonymous_readers_with_the_cache_on(
    fake_arxiv, curator_client, redis_cache, django_capture_on_commit_callbacks
):
    anonymous = Client()
    PaperFactory(title="Already listed")
    assert "Already listed" in anonymous.get("/").content.decode()
    entry = fake_arxiv.entries[0]

    with django_capture_on_commit_callbacks(execute=True):
        curator_client.post(ADD_PAGE, {"text": entry_id(entry)})

    assert escape(title_of(entry)) in anonymous.get("/").content.decode()


def test_a_request_whose_worker_died_offers_a_retry_instead_of_refreshing(curator_client):
    request = links.request_papers(text="2505.15034", by="test")
    IngestRun.objects.filter(pk=request.run_id).update(
        started_at=timezone.now() - datetime.timedelta(hours=2)
    )

    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/").content.decode()

    assert "may have stopped" in page
    assert f"?retry={request.pk}" in page
    assert "http-equiv" not in page


def test_a_request_whose_worker_died_is_marked_interrupted_and_left_as_it_is(
    fake_arxiv, curator_client, settings
):
    request = links.request_papers(text=entry_id(fake_arxiv.entries[0]), by="test")
    # A worker began it and died: its heartbeat stopped.
    stopped = timezone.now() - datetime.timedelta(seconds=settings.INGEST_RUN_STALE_SECONDS + 1)
    IngestRun.objects.filter(pk=request.run_id).update(heartbeat_at=stopped)

    assert tasks.interrupt_stale_runs() == 1

    page = curator_client.get(f"/admin/ingest/linkrequest/{request.pk}/change/").content.decode()
    assert "This request stopped with the worker running it: Interrupted:" in page
    assert f"?retry={request.pk}" in page
    assert "http-equiv" not in page
    # The task, delivered again after its worker died, leaves the request as it is.
    links.add_papers(LinkRequest.objects.select_related("run").get(pk=request.pk))
    assert fake_arxiv.requests == []
    assert Paper.objects.count() == 0
    assert IngestRun.objects.get().status == IngestRun.Status.INTERRUPTED


def test_a_failure_while_storing_rolls_everything_back(fake_arxiv, monkeypatch):
    stored = links.store_batch

    def store_then_fail(*args, **kwargs):
        stored(*args, **kwargs)
        raise RuntimeError("the database went away")

    monkeypatch.setattr(links, "store_batch", store_then_fail)
    request = links.request_papers(text=entry_id(fake_arxiv.entries[0]), by="test")

    with pytest.raises(RuntimeError):
        links.add_papers(request)

    assert Paper.objects.count() == 0
    # Only the failure is in the curation log: the papers' events went with them.
    assert list(CurationEvent.objects.values_list("action", "detail")) == [
        ("add_failed", "1 id: something went wrong; nothing was stored")
    ]
    assert {r[2] for r in results(request)} == {Result.NOT_STORED}
    request.run.refresh_from_db()
    assert request.run.status == IngestRun.Status.FAILED
    assert "the database went away" in request.run.error


REFERENCES = Path(__file__).parent / "data" / "references"
# The papers each file of tests/data/references names, as the fake arXiv serves them,
# and the journal paper it names by its DOI alone.
LISTED = ["2202.12139", "2005.14124", "2405.13786"]
FIRST_TITLE = (
    "Testing Deep Learning Models: A First Comparative Study of Multiple Testing Techniques"
)
JOURNAL_DOI = "10.1145/3533767.3534401"


@pytest.mark.parametrize(
    ("name", "first_line"),
    [
        ("zotero.bib", f"@misc{{ahuja_testing_2022}}: {FIRST_TITLE}"),
        ("zotero.ris", FIRST_TITLE),
        ("zotero.json", FIRST_TITLE),
        (
            "awesome-list.md",
            "[Testing Deep Learning Models: A First Comparative Study]"
            "(https://arxiv.org/abs/2202.12139)",
        ),
        ("hf-collection.html", f"{FIRST_TITLE} (/papers/2202.12139)"),
    ],
)
def test_references_in_any_format_are_added_and_a_journal_doi_is_read_from_crossref(
    fake_sources, fake_arxiv, name, first_line
):
    request = add((REFERENCES / name).read_text())

    lines = results(request)
    assert lines[0] == (first_line, "2202.12139", Result.ADDED, "")
    assert [(arxiv_id, result) for _, arxiv_id, result, _ in lines[:3]] == [
        (arxiv_id, Result.ADDED) for arxiv_id in LISTED
    ]
    # The collection's page links no journal paper; the others name it by its DOI.
    assert lines[3:] == (
        [] if name == "hf-collection.html" else [(lines[3][0], None, Result.ADDED, "")]
    )
    assert sorted(
        Paper.objects.exclude(arxiv_id=None).values_list("arxiv_id", flat=True)
    ) == sorted(LISTED)
    assert sorted(fake_arxiv.requests[0].params["id_list"].split(",")) == sorted(LISTED)
    if name != "hf-collection.html":
        journal = Paper.objects.get(arxiv_id=None)
        assert (journal.doi, journal.source_key) == (JOURNAL_DOI, f"doi:{JOURNAL_DOI}")
        assert journal.title == "Automated test generation for REST APIs: no time to rest yet"


def test_a_paste_of_markdown_list_lines_reads_each_link(fake_arxiv):
    request = add(
        "- [Testing Deep Learning Models](https://arxiv.org/abs/2202.12139)\n"
        "- [Active Fuzzing](https://huggingface.co/papers/2005.14124) "
        "[[code](https://github.com/example/fuzz)]\n"
        "- [The same, as its DOI](https://doi.org/10.48550/arXiv.2202.12139)\n"
        "- [A blog post](https://example.com/post)"
    )

    assert results(request) == [
        (
            "[Testing Deep Learning Models](https://arxiv.org/abs/2202.12139)",
            "2202.12139",
            Result.ADDED,
            "",
        ),
        (
            "[Active Fuzzing](https://huggingface.co/papers/2005.14124)",
            "2005.14124",
            Result.ADDED,
            "",
        ),
        (
            "[The same, as its DOI](https://doi.org/10.48550/arXiv.2202.12139)",
            "2202.12139",
            Result.REPEATED,
            "",
        ),
        ("- [A blog post](https://example.com/post)", None, Result.NOT_AN_ID, ""),
    ]


def test_an_id_in_brackets_is_no_json_file(fake_arxiv):
    # Valid JSON: a list of three numbers.
    request = add("[2202.12139, 2005.14124, 2405.13786]")

    assert [line[1:3] for line in results(request)] == [
        (arxiv_id, Result.ADDED) for arxiv_id in LISTED
    ]


def test_a_collections_address_says_how_to_read_the_collection(fake_arxiv):
    address = "https://huggingface.co/collections/someone/software-testing-6650c3e1"

    request = add(f"2202.12139\n{address}")

    assert results(request)[1] == (
        address,
        None,
        Result.NOT_AN_ID,
        "a Hugging Face collection's address: paste or upload its page's HTML, or what "
        "huggingface.co/api/collections/<its slug> answers",
    )


def test_a_bibtex_entry_that_cannot_be_read_is_reported_and_the_rest_added(fake_arxiv):
    request = add(
        "@misc{broken, title = {Unclosed, eprint = {2005.14124}\n"
        "@misc{fine, title = {Testing}, eprint = {2202.12139}, archivePrefix = {arXiv}}\n"
        "@misc{elsewhere, eprint = {hal-01234567}, archivePrefix = {HAL}}\n"
    )

    assert results(request) == [
        (
            "@misc{broken, title = {Unclosed, eprint = {2005.14124}",
            None,
            Result.NOT_AN_ID,
            "this BibTeX entry could not be read",
        ),
        ("@misc{fine}: Testing", "2202.12139", Result.ADDED, ""),
        ("@misc{elsewhere}", None, Result.NOT_AN_ID, ""),
    ]


def test_lines_between_bibtex_entries_are_read_as_pasted_lines(fake_arxiv):
    request = add(
        "% My reading list\n"
        "- [Testing](https://arxiv.org/abs/2202.12139)\n"
        "@misc{fine, title = {Transformers}, eprint = {2005.14124}, archivePrefix = {arXiv}}\n"
        "not a reference at all\n"
    )

    assert results(request) == [
        ("[Testing](https://arxiv.org/abs/2202.12139)", "2202.12139", Result.ADDED, ""),
        ("@misc{fine}: Transformers", "2005.14124", Result.ADDED, ""),
        ("not a reference at all", None, Result.NOT_AN_ID, ""),
    ]


def test_the_admin_page_adds_the_papers_of_an_uploaded_export(
    fake_sources, curator_client, django_capture_on_commit_callbacks
):
    export = SimpleUploadedFile("My Library.bib", (REFERENCES / "zotero.bib").read_bytes())

    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(ADD_PAGE, {"text": "", "file": export})

    request = LinkRequest.objects.get()
    assert response["Location"] == f"/admin/ingest/linkrequest/{request.pk}/change/"
    page = curator_client.get(response["Location"]).content.decode()
    assert page.count("<td>added</td>") == 4
    assert "added 4" in curator_client.get("/admin/ingest/linkrequest/").content.decode()
    # A retry starts from what the file held.
    retry = curator_client.get(f"{ADD_PAGE}?retry={request.pk}")
    assert retry.context["form"].initial["text"] == (REFERENCES / "zotero.bib").read_text()


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"%PDF-1.7\n\x00\x01\x02", "My Library.bib is not a text file."),
        ("2202.12139 Ramírez".encode("latin-1"), "byte 15 is not UTF-8 text"),
        (b"2202.12139\n" * 100_000, "1,100,000 bytes, more than 1,000,000"),
        (b"", "The submitted file is empty."),
        (b"@article{k, title = {No id}, journal = {Nature}}", "No paper was found."),
    ],
)
def test_a_file_that_cannot_be_read_is_refused_with_a_reason(curator_client, content, error):
    upload = SimpleUploadedFile("My Library.bib", content)

    response = curator_client.post(ADD_PAGE, {"text": "", "file": upload})

    assert response.status_code == 200
    assert escape(error) in response.content.decode()
    assert LinkRequest.objects.count() == 0


def test_a_file_and_a_paste_at_once_are_refused(curator_client):
    upload = SimpleUploadedFile("list.md", b"2202.12139")

    response = curator_client.post(ADD_PAGE, {"text": "2005.14124", "file": upload})

    assert "Paste references or choose a file, not both." in response.content.decode()
    assert LinkRequest.objects.count() == 0


def test_a_utf16_export_is_read(fake_arxiv):
    text = links.read_upload(
        name="export.ris", content=(REFERENCES / "zotero.ris").read_text().encode("utf-16")
    )

    assert [line.arxiv_id for line in links.parse_lines(text)] == [*LISTED, None]


def test_a_hugging_face_collection_as_its_api_answers_adds_its_papers(fake_arxiv):
    request = add((REFERENCES / "hf-collection-api.json").read_text())

    assert results(request) == [
        (f"{FIRST_TITLE} (2202.12139)", "2202.12139", Result.ADDED, ""),
        (
            "Active Fuzzing for Testing and Securing Cyber-Physical Systems (2005.14124)",
            "2005.14124",
            Result.ADDED,
            "",
        ),
    ]
