"""One paper, whichever reader brings it (the API, OAI-PMH, the snapshot), is stored the same."""

import datetime
import json

import pytest

from catalog.models import Paper
from catalog.signals import papers_stored
from ingest import runs
from ingest.models import IngestRun, TagRule
from tests.factories import TagFactory

pytestmark = pytest.mark.django_db

TITLE = "Tools that reason:\n  a study of  agents"
ABSTRACT = (
    "We study agents that call tools.\n Code: https://github.com/lab/tool. We find that "
    "reasoning helps."
)
COMMENT = r"12 pages; data at \url{https://huggingface.co/datasets/lab/data}"
AUTHORS = [("Andr\\'e", "Schmidt"), ("Li", "Zhang")]

API_ENTRY = f"""<entry xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>http://arxiv.org/abs/2401.09999v1</id>
  <title>{TITLE}</title>
  <updated>2024-01-17T18:00:00Z</updated>
  <summary>{ABSTRACT}</summary>
  <category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>
  <category term="cs.LG" scheme="http://arxiv.org/schemas/atom"/>
  <published>2024-01-17T18:00:00Z</published>
  <arxiv:comment>{COMMENT}</arxiv:comment>
  <arxiv:journal_ref>Proc. of Tools 2024</arxiv:journal_ref>
  <arxiv:doi>10.1000/tools.1</arxiv:doi>
  <arxiv:primary_category term="cs.CL"/>
  {"".join(f"<author><name>{first} {last}</name></author>" for first, last in AUTHORS)}
</entry>"""

OAI_AUTHORS = "".join(
    f"<author><keyname>{last}</keyname><forenames>{first}</forenames></author>"
    for first, last in AUTHORS
)
OAI_PAGE = f"""<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
<ListRecords><record>
<header><identifier>oai:arXiv.org:2401.09999</identifier><datestamp>2024-01-18</datestamp></header>
<metadata><arXiv xmlns="http://arxiv.org/OAI/arXiv/">
<id>2401.09999</id><created>2024-01-17</created>
<authors>{OAI_AUTHORS}</authors>
<title>{TITLE}</title><categories>cs.CL cs.LG</categories>
<comments>{COMMENT}</comments><journal-ref>Proc. of Tools 2024</journal-ref>
<doi>10.1000/tools.1</doi><abstract>{ABSTRACT}</abstract>
</arXiv></metadata></record></ListRecords></OAI-PMH>""".encode()

SNAPSHOT_LINE = json.dumps(
    {
        "id": "2401.09999",
        "title": TITLE,
        "abstract": ABSTRACT,
        "comments": COMMENT,
        "journal-ref": "Proc. of Tools 2024",
        "doi": "10.1000/tools.1",
        "categories": "cs.CL cs.LG",
        "authors": ", ".join(f"{first} {last}" for first, last in AUTHORS),
        "authors_parsed": [[last, first, ""] for first, last in AUTHORS],
        "versions": [{"version": "v1", "created": "Wed, 17 Jan 2024 18:00:00 GMT"}],
    }
)


@pytest.fixture
def tool_rule():
    tag = TagFactory(name="Tool_Use")
    TagRule.objects.create(tag=tag, keywords="call tools")
    return tag


@pytest.fixture
def stored_signals():
    sent = []

    def record(sender, *, paper_ids, bulk, **kwargs):
        sent.append(bulk)

    papers_stored.connect(record, dispatch_uid="test_readers_agree")
    yield sent
    papers_stored.disconnect(dispatch_uid="test_readers_agree")


def by_api(fake_arxiv, oai_server, tmp_path) -> IngestRun:
    fake_arxiv.serve([API_ENTRY])
    return runs.run_query(query="all:tools", max_results=10)


def by_oai(fake_arxiv, oai_server, tmp_path) -> IngestRun:
    oai_server.script.append({"status": 200, "body": OAI_PAGE})
    return runs.harvest_oai(from_date=datetime.date(2024, 1, 17), http=oai_server.http)


def by_snapshot(fake_arxiv, oai_server, tmp_path) -> IngestRun:
    path = tmp_path / "snapshot.jsonl"
    path.write_text(SNAPSHOT_LINE + "\n")
    return runs.import_snapshot(path=path, workers=1)


READERS = {"api": by_api, "oai": by_oai, "snapshot": by_snapshot}


def stored_paper() -> dict:
    paper = Paper.objects.get(arxiv_id="2401.09999")
    return {
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": paper.author_list,
        "author_names": paper.author_names,
        "author_rows": list(
            paper.paperauthor_set.order_by("position").values_list("author__name", flat=True)
        ),
        "primary_category": paper.primary_category.code,
        "categories": sorted(paper.categories.values_list("code", flat=True)),
        "comment": paper.comment,
        "journal_ref": paper.journal_ref,
        "doi": paper.doi,
        "version": paper.version,
        # OAI-PMH gives the day alone.
        "published_on": paper.published_at.date(),
        "code_links": sorted(paper.code_links.values_list("url", "kind", "source")),
        "tags": sorted(paper.tags.values_list("slug", flat=True)),
    }


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_stores_the_paper_the_same(
    reader, fake_arxiv, oai_server, tmp_path, tool_rule, stored_signals
):
    run = READERS[reader](fake_arxiv, oai_server, tmp_path)

    assert (run.status, run.fetched, run.created) == (IngestRun.Status.SUCCEEDED, 1, 1)
    assert stored_paper() == {
        "title": "Tools that reason: a study of agents",
        "abstract": (
            "We study agents that call tools. Code: https://github.com/lab/tool. "
            "We find that reasoning helps."
        ),
        "authors": ["André Schmidt", "Li Zhang"],
        "author_names": "André Schmidt, Li Zhang",
        "author_rows": ["André Schmidt", "Li Zhang"],
        "primary_category": "cs.CL",
        "categories": ["cs.CL", "cs.LG"],
        "comment": "12 pages; data at \\url{https://huggingface.co/datasets/lab/data}",
        "journal_ref": "Proc. of Tools 2024",
        "doi": "10.1000/tools.1",
        "version": 1,
        "published_on": datetime.date(2024, 1, 17),
        "code_links": [
            ("https://github.com/lab/tool", "official", "abstract"),
            ("https://huggingface.co/datasets/lab/data", "mentioned", "comment"),
        ],
        "tags": ["tool-use"],
    }
    # Enrichment hears of every paper; bulk imports are enriched by command.
    assert stored_signals == [reader != "api"]


def test_the_same_paper_from_every_reader_is_stored_once(
    fake_arxiv, oai_server, tmp_path, tool_rule
):
    first, *others = [read(fake_arxiv, oai_server, tmp_path) for read in READERS.values()]

    assert first.created == 1
    # The API gives names whole; OAI-PMH gives them in parts, which are kept, and
    # the snapshot the same parts again.
    assert [(run.created, run.updated, run.unchanged) for run in others] == [(0, 1, 0), (0, 0, 1)]
    assert Paper.objects.count() == 1
    assert Paper.objects.get().author_parts == [["Schmidt", "André", ""], ["Zhang", "Li", ""]]


def test_a_reader_giving_names_whole_keeps_the_parts_another_gave(
    fake_arxiv, oai_server, tmp_path, tool_rule
):
    by_snapshot(fake_arxiv, oai_server, tmp_path)
    again = by_api(fake_arxiv, oai_server, tmp_path)

    assert (again.created, again.updated, again.unchanged) == (0, 0, 1)
    assert Paper.objects.get().author_parts == [["Schmidt", "André", ""], ["Zhang", "Li", ""]]
