"""Papers from sources other than arXiv: DOIs read from Crossref, OpenReview forums and
ACL Anthology papers, added by link through the one ingest pipeline, each source
paced on its own, and matched to the same paper from arXiv whichever came first."""

import datetime
import json
import re
import threading
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from catalog.models import CurationEvent, Paper
from core.pacing import turn
from ingest import links
from ingest.links import Result
from ingest.models import IngestRun, LinkRequest
from ingest.other_ids import find_source_key
from tests.arxiv_server import Fault, with_id
from tests.factories import TagFactory
from tests.sources_server import recorded

pytestmark = pytest.mark.django_db

PARROTS_DOI = "10.1145/3442188.3445922"
VERIFY_NOTE = "v8L0pN6EOi"
BERT_ACL = "N19-1423"


def add(text: str, **options) -> LinkRequest:
    request = links.request_papers(text=text, by="test", **options)
    return links.add_papers(request)


def results(request: LinkRequest) -> list[tuple]:
    request.refresh_from_db()
    return [
        (line.text, line.result, line.detail) for line in map(links.Line.from_json, request.lines)
    ]


def arxiv_entry(fake_arxiv, *, arxiv_id: str, title: str) -> str:
    """A recorded arXiv entry made into the paper arxiv_id of this title."""
    entry = with_id(fake_arxiv.entries[0], arxiv_id)
    start = entry.index("<title>") + len("<title>")
    return entry[:start] + title + entry[entry.index("</title>") :]


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("https://doi.org/10.1145/3442188.3445922", f"doi:{PARROTS_DOI}"),
        ("doi:10.1145/3442188.3445922.", f"doi:{PARROTS_DOI}"),
        ("https://openreview.net/forum?id=v8L0pN6EOi", f"openreview:{VERIFY_NOTE}"),
        ("https://openreview.net/pdf?id=v8L0pN6EOi&noteId=x", f"openreview:{VERIFY_NOTE}"),
        ("N19-1423", f"acl:{BERT_ACL}"),
        ("https://aclanthology.org/N19-1423.pdf", f"acl:{BERT_ACL}"),
        ("https://aclanthology.org/2023.acl-long.1/", "acl:2023.acl-long.1"),
        ("https://www.aclweb.org/anthology/N19-1423", f"acl:{BERT_ACL}"),
        ("10.18653/v1/N19-1423", f"acl:{BERT_ACL}"),
        ("10.48550/arXiv.2505.15034", ""),
        ("https://example.com/paper", ""),
    ],
)
def test_each_source_is_known_by_the_forms_people_copy(text, key):
    assert find_source_key(text) == key


def test_a_doi_is_read_from_crossref_into_a_paper_with_pages_exports_and_api(fake_sources, client):
    tag = TagFactory(name="Ethics", slug="ethics")

    request = add(f"- [Stochastic Parrots](https://doi.org/{PARROTS_DOI})", tags=[tag])

    assert results(request) == [
        (
            f"[Stochastic Parrots](https://doi.org/{PARROTS_DOI})",
            Result.ADDED,
            "tags added: Ethics",
        )
    ]
    paper = Paper.objects.get()
    assert paper.arxiv_id is None
    assert paper.title == "On the Dangers of Stochastic Parrots: Can Language Models Be Too Big? 🦜"
    assert paper.author_list == [
        "Emily M. Bender",
        "Timnit Gebru",
        "Angelina McMillan-Major",
        "Shmargaret Shmitchell",
    ]
    assert paper.author_parts[0] == ["Bender", "Emily M.", ""]
    assert paper.abstract.startswith("The past 3 years of work in NLP")
    assert "<jats:p>" not in paper.abstract
    assert paper.journal_ref.startswith("Proceedings of the 2021 ACM Conference on Fairness")
    assert (paper.doi, paper.source_key) == (PARROTS_DOI, f"doi:{PARROTS_DOI}")
    assert paper.source_url == f"https://doi.org/{PARROTS_DOI}"
    # Crossref dates the version of record to the month.
    assert (paper.published_at, paper.published_label) == (
        datetime.datetime(2021, 3, 1, tzinfo=datetime.UTC),
        "2021-03",
    )
    assert list(paper.tags.all()) == [tag]
    [asked] = fake_sources.requests
    assert asked.path == f"/crossref/works/{PARROTS_DOI}"
    assert "mailto:" in asked.headers["User-Agent"]

    page = client.get(paper.get_absolute_url()).content.decode()
    assert "On the Dangers of Stochastic Parrots" in page
    assert f'href="https://doi.org/{PARROTS_DOI}" rel="noopener">DOI</a>' in page
    card = client.get("/tags/ethics/").content.decode()
    assert (
        f'class="action-link" href="https://doi.org/{PARROTS_DOI}" rel="noopener">DOI</a>' in card
    )
    bibtex = b"".join(client.get("/tags/ethics/export.bib").streaming_content).decode()
    assert f"doi = {{{PARROTS_DOI}}}" in bibtex and "month = mar" in bibtex
    found = client.get(f"/api/v1/papers/{PARROTS_DOI}").json()
    assert (found["title"], found["published_precision"]) == (paper.title, "month")
    assert (found["doi"], found["source_url"]) == (PARROTS_DOI, paper.source_url)


def test_a_journal_dated_to_the_year_is_shown_and_exported_so(fake_sources, client):
    answer = json.loads(recorded("crossref/10.1038_nature14539.json"))
    for name in ("published", "published-print", "published-online", "issued"):
        answer["message"][name] = {"date-parts": [[2015]]}
    fake_sources.answers["crossref/10.1038_nature14539.json"] = json.dumps(answer).encode()

    add("see doi:10.1038/nature14539")

    paper = Paper.objects.get()
    assert (paper.title, paper.journal_ref, paper.published_label) == (
        "Deep learning",
        "Nature",
        "2015",
    )
    ris = b"".join(client.get("/export.ris").streaming_content).decode()
    assert "DA  - 2015///" in ris
    csl = json.loads(b"".join(client.get("/export.csl.json").streaming_content))
    assert csl[0]["issued"] == {"date-parts": [[2015]]}


def test_an_openreview_paper_later_on_arxiv_is_matched_and_keeps_its_venue(
    fake_sources, fake_arxiv, client
):
    add(f"https://openreview.net/forum?id={VERIFY_NOTE}")
    paper = Paper.objects.get()
    assert (paper.title, paper.journal_ref) == ("Let's Verify Step by Step", "ICLR 2024 poster")
    assert paper.source_url == f"https://openreview.net/forum?id={VERIFY_NOTE}"
    assert paper.author_list[:2] == ["Hunter Lightman", "Vineet Kosaraju"]
    assert paper.published_at.date() == datetime.date(2024, 1, 16)
    assert fake_sources.requests[0].params == {"id": VERIFY_NOTE}
    old_address = paper.get_absolute_url()
    assert "OpenReview</a>" in client.get(old_address).content.decode()

    fake_arxiv.serve(
        [arxiv_entry(fake_arxiv, arxiv_id="2305.20050", title="Let's Verify Step by Step")]
    )
    request = add("https://arxiv.org/abs/2305.20050")

    assert results(request) == [
        (
            "https://arxiv.org/abs/2305.20050",
            Result.ADDED,
            "matched the listing without an arXiv id",
        )
    ]
    paper = Paper.objects.get()
    assert paper.arxiv_id == "2305.20050"
    assert (paper.journal_ref, paper.source_key) == (
        "ICLR 2024 poster",
        f"openreview:{VERIFY_NOTE}",
    )
    assert client.get(old_address)["Location"] == "/papers/2305.20050/"


def test_an_acl_paper_already_on_arxiv_is_the_same_paper_and_gains_its_doi(
    fake_sources, fake_arxiv
):
    bert = "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
    fake_arxiv.serve([arxiv_entry(fake_arxiv, arxiv_id="1810.04805", title=bert)])
    add("1810.04805")
    Paper.objects.filter(arxiv_id="1810.04805").update(journal_ref="", doi="")

    request = add(f"https://aclanthology.org/{BERT_ACL}/")

    assert results(request) == [
        (
            f"https://aclanthology.org/{BERT_ACL}/",
            Result.PRESENT,
            "the same paper from arXiv; the ACL Anthology's facts noted on it",
        )
    ]
    paper = Paper.objects.get()
    assert paper.arxiv_id == "1810.04805" and paper.title == bert
    assert (paper.doi, paper.source_key) == (f"10.18653/v1/{BERT_ACL}", f"acl:{BERT_ACL}")
    assert paper.journal_ref.startswith("Proceedings of the 2019 Conference of the North American")
    assert fake_sources.requests[0].path == f"/acl/{BERT_ACL}.bib"
    assert CurationEvent.objects.filter(action="merged").get().detail == (
        "the ACL Anthology's record of it (by link)"
    )


def test_an_acl_paper_is_read_from_its_bibtex(fake_sources):
    add(f"10.18653/v1/{BERT_ACL}")

    paper = Paper.objects.get()
    assert paper.title.startswith("BERT: Pre-training")
    assert paper.author_list == [
        "Jacob Devlin",
        "Ming-Wei Chang",
        "Kenton Lee",
        "Kristina Toutanova",
    ]
    assert paper.author_parts[0] == ["Devlin", "Jacob", ""]
    assert "MultiNLI accuracy to 86.7% (4.6% absolute improvement)" in paper.abstract
    assert (paper.published_at.date(), paper.published_label) == (
        datetime.date(2019, 6, 1),
        "2019-06",
    )
    assert paper.source_url == f"https://aclanthology.org/{BERT_ACL}/"


def test_adding_a_paper_again_finds_it_by_its_source(fake_sources):
    add(f"https://openreview.net/forum?id={VERIFY_NOTE}")
    tag = TagFactory(name="Reasoning")

    request = add(f"https://openreview.net/pdf?id={VERIFY_NOTE}", tags=[tag])

    assert results(request)[0][1:] == (Result.PRESENT, "tags added: Reasoning")
    assert Paper.objects.count() == 1
    assert CurationEvent.objects.filter(action="tagged").get().detail == "Reasoning (by link)"


def test_papers_no_source_has_are_reported_each_in_words(fake_sources):
    request = add(
        "10.1145/0000000.0000000\nhttps://openreview.net/forum?id=NoSuchNote1\nP99-9999\n"
    )

    assert results(request) == [
        ("10.1145/0000000.0000000", Result.NOT_FOUND_AT_SOURCE, "Crossref has no such paper"),
        (
            "https://openreview.net/forum?id=NoSuchNote1",
            Result.NOT_FOUND_AT_SOURCE,
            "OpenReview has no such paper",
        ),
        ("P99-9999", Result.NOT_FOUND_AT_SOURCE, "the ACL Anthology has no such paper"),
    ]
    assert Paper.objects.count() == 0
    assert request.run.status == IngestRun.Status.SUCCEEDED


def test_a_paper_openreview_does_not_show_is_reported(fake_sources):
    fake_sources.queue(Fault(status=403, body=b'{"name":"ForbiddenError"}'))

    request = add(f"https://openreview.net/forum?id={VERIFY_NOTE}")

    assert results(request)[0][1:] == (
        Result.UNREADABLE_AT_SOURCE,
        "OpenReview does not show this paper publicly",
    )


@pytest.mark.parametrize(
    ("text", "body", "reason"),
    [
        (PARROTS_DOI, b"<html>Gateway</html>", "Crossref's answer could not be read"),
        (PARROTS_DOI, b'{"status": "ok", "message": []}', "Crossref's answer could not be read"),
        (
            f"https://openreview.net/forum?id={VERIFY_NOTE}",
            b'{"notes": [{"id": "v8L0pN6EOi", "content": "x"}]}',
            "OpenReview's answer could not be read: the note has no content",
        ),
        (
            BERT_ACL,
            b"@inproceedings{broken, title = {",
            "the ACL Anthology's BibTeX could not be read",
        ),
    ],
)
def test_a_malformed_answer_is_reported_on_its_line_and_the_rest_added(
    fake_sources, text, body, reason
):
    fake_sources.queue(Fault(body=body))

    request = add(f"{text}\n2202.12139")

    [(_, result, detail), added] = results(request)
    assert result == Result.UNREADABLE_AT_SOURCE and detail.startswith(reason)
    assert added[1] == Result.ADDED
    assert list(Paper.objects.values_list("arxiv_id", flat=True)) == ["2202.12139"]


@pytest.mark.parametrize(
    ("text", "source"),
    [
        (PARROTS_DOI, "Crossref"),
        (f"https://openreview.net/forum?id={VERIFY_NOTE}", "OpenReview"),
        (BERT_ACL, "the ACL Anthology"),
    ],
)
def test_a_source_failing_stores_nothing_and_says_why_in_words(fake_sources, text, source):
    fake_sources.queue(*[Fault(status=503)] * 4)

    request = add(f"2202.12139\n{text}")

    assert {line[1] for line in results(request)} == {Result.NOT_STORED}
    assert results(request)[1][2] == f"{source} could not be read: nothing was stored."
    assert Paper.objects.count() == 0
    event = CurationEvent.objects.get(action=CurationEvent.Action.ADD_FAILED)
    assert event.detail.startswith(
        f"2 ids: {source} could not be read: HTTP 503 (gave up after 4 tries"
    )
    assert "http://" not in event.detail and "http://" not in request.run.error
    assert request.run.status == IngestRun.Status.FAILED


@pytest.mark.parametrize("fault", [Fault(reset=True), Fault(truncate=True)])
def test_a_source_down_or_cut_off_is_said_in_words(fake_sources, fault):
    fake_sources.queue(*[fault] * 4)

    request = add(PARROTS_DOI)

    request.run.refresh_from_db()
    assert request.run.error.startswith("Stopped: Crossref could not be read: connection failed: ")
    assert "127.0.0.1" not in request.run.error
    assert Paper.objects.count() == 0


def test_a_429_is_waited_out_and_retried(fake_sources):
    fake_sources.queue(Fault(status=429, headers={"Retry-After": "0"}))

    request = add(PARROTS_DOI)

    assert results(request)[0][1] == Result.ADDED
    assert len(fake_sources.requests) == 2


def test_each_source_keeps_its_own_pace(fake_sources, settings):
    settings.CROSSREF_DELAY_SECONDS = 0.3
    add(f"{PARROTS_DOI}\n10.1038/nature14539")
    first, second = (r.started for r in fake_sources.requests)
    assert second - first >= 0.3

    # Another worker's Crossref request holds Crossref's turn, not OpenReview's.
    taken, release = threading.Event(), threading.Event()

    def hold_crossrefs_turn() -> None:
        try:
            with turn("crossref", spacing=0, exclusive=True, max_wait=5):
                taken.set()
                release.wait(5)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_crossrefs_turn)
    holder.start()
    try:
        assert taken.wait(5)
        started = time.monotonic()
        request = add(f"https://openreview.net/forum?id={VERIFY_NOTE}")
        assert time.monotonic() - started < 2
    finally:
        release.set()
        holder.join()
    assert results(request)[0][1] == Result.ADDED


def test_the_request_page_links_each_paper_by_its_source(
    fake_sources, curator_client, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = curator_client.post(
            "/admin/ingest/linkrequest/add/", {"text": f"{PARROTS_DOI}\n{BERT_ACL}"}
        )

    page = curator_client.get(response["Location"]).content.decode()
    for paper in Paper.objects.all():
        assert f'<a href="/admin/catalog/paper/{paper.pk}/change/">{paper.source_key}</a>' in page
    assert page.count("<td>added</td>") == 2


def test_the_command_adds_papers_of_other_sources(fake_sources, capsys):
    call_command("add_papers", f"https://doi.org/{PARROTS_DOI}", BERT_ACL)

    printed = capsys.readouterr().out
    assert printed.count("  added") == 2
    assert Paper.objects.filter(arxiv_id=None).count() == 2


def test_an_arxiv_record_keeps_the_venue_facts_of_a_paper_from_elsewhere(fake_sources, fake_arxiv):
    add(f"https://openreview.net/forum?id={VERIFY_NOTE}")
    entry = arxiv_entry(fake_arxiv, arxiv_id="2305.20050", title="Let's Verify Step by Step")
    # arXiv's entry has no journal reference or DOI of its own.
    entry = re.sub(r"<arxiv:(journal_ref|doi)>[^<]*</arxiv:\1>", "", entry)
    fake_arxiv.serve([entry])

    add("2305.20050")

    paper = Paper.objects.get()
    assert (paper.arxiv_id, paper.journal_ref) == ("2305.20050", "ICLR 2024 poster")


def test_the_command_stops_retrying_another_source_in_time_and_says_why(fake_sources, settings):
    settings.ARXIV_RETRY_BASE_WAIT = 5.0
    settings.ARXIV_COMMAND_RETRY_SECONDS = 1.0
    fake_sources.queue(*[Fault(status=503)] * 10)
    started = time.monotonic()

    with pytest.raises(CommandError, match="Crossref could not be read: HTTP 503"):
        call_command("add_papers", PARROTS_DOI)

    assert time.monotonic() - started < 5
    assert len(fake_sources.requests) == 1


def test_a_page_link_a_source_gives_is_kept_only_if_it_is_a_web_address(fake_sources, client):
    bibtex = recorded(f"acl/{BERT_ACL}.bib").decode()
    fake_sources.answers[f"acl/{BERT_ACL}.bib"] = bibtex.replace(
        f"https://aclanthology.org/{BERT_ACL}/", "javascript:alert(document.cookie)"
    ).encode()

    add(BERT_ACL)

    paper = Paper.objects.get()
    assert paper.source_url == ""
    assert "javascript:" not in client.get(paper.get_absolute_url()).content.decode()
