import datetime
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from catalog.models import Author, Paper
from ingest.models import IngestRun, TagRule
from ingest.records import build_record
from tests.factories import TagFactory

SAMPLE = Path(__file__).parent / "data" / "snapshot" / "sample.jsonl"
UTC = datetime.UTC


def import_snapshot(*args) -> tuple[str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("import_arxiv_snapshot", *args, stdout=stdout, stderr=stderr, verbosity=0)
    return stdout.getvalue(), stderr.getvalue()


def stored_ids() -> list[str]:
    return sorted(Paper.objects.values_list("arxiv_id", flat=True))


@pytest.mark.django_db
def test_import_stores_every_readable_line_and_reports_the_rest():
    stdout, stderr = import_snapshot(str(SAMPLE))

    assert stored_ids() == ["0704.0001", "2310.06825", "2501.12948", "2502.00001", "math/0309136"]
    assert "line 4: skipped, not JSON" in stderr
    assert "line 5: skipped, 2401.04088: missing title" in stderr
    assert "5 papers read: 5 created, 0 updated, 0 unchanged; 2 lines skipped." in stdout
    run = IngestRun.objects.get()
    assert (run.kind, run.status) == (IngestRun.Kind.SNAPSHOT, IngestRun.Status.PARTIAL)
    assert (run.fetched, run.created, run.skipped) == (7, 5, 2)
    assert run.finished_at is not None


@pytest.mark.django_db
def test_import_tidies_text_names_and_dates():
    import_snapshot(str(SAMPLE))

    paper = Paper.objects.get(arxiv_id="0704.0001")
    assert paper.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and LHC energies"
    )
    assert paper.abstract.startswith("A fully differential calculation in perturbative quantum")
    assert "\n" not in paper.abstract and "  " not in paper.abstract
    assert paper.author_names == "C. Balázs, E. L. Berger, P. M. Nadolsky, C. -P. Yuan"
    assert (paper.journal_ref, paper.doi) == (
        "Phys.Rev.D76:013009,2007",
        "10.1103/PhysRevD.76.013009",
    )
    assert paper.version == 2
    assert paper.published_at == datetime.datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)
    assert paper.updated_at == datetime.datetime(2007, 7, 24, 20, 10, 27, tzinfo=UTC)
    assert paper.primary_category.code == "hep-ph"

    deepseek = Paper.objects.get(arxiv_id="2501.12948")
    assert deepseek.author_names == "DeepSeek-AI, Daya Guo, Dejian Yang, José Müller Jr"
    assert [c.code for c in deepseek.categories.order_by("code")] == ["cs.AI", "cs.CL", "cs.LG"]
    assert list(deepseek.code_links.values_list("url", "source")) == [
        ("https://github.com/deepseek-ai/DeepSeek-R1", "abstract")
    ]
    mistral = Paper.objects.get(arxiv_id="2310.06825")
    assert list(mistral.code_links.values_list("url", "source")) == [
        ("https://github.com/mistralai/mistral-src", "comment")
    ]
    assert Paper.objects.get(arxiv_id="math/0309136").primary_category.code == "math.GT"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--category", "cs"], ["2310.06825", "2501.12948"]),
        (["--category", "math.GT"], ["math/0309136"]),
        (["--category", "stat.ML", "--category", "hep-ph"], ["0704.0001", "2502.00001"]),
        # The first version's date decides, not the latest's (2026 for 2501.12948).
        (["--from", "2025-01-01", "--until", "2025-01-31"], ["2501.12948"]),
        (["--until", "2003-12-31"], ["math/0309136"]),
        (["--category", "cs", "--limit", "1"], ["2310.06825"]),
    ],
)
@pytest.mark.django_db
def test_filters_choose_what_is_imported(arguments, expected):
    import_snapshot(str(SAMPLE), *arguments)

    assert stored_ids() == expected
    run = IngestRun.objects.get()
    assert run.fetched - run.skipped == len(expected)


@pytest.mark.django_db
def test_gzipped_snapshot_in_small_batches(tmp_path):
    compressed = tmp_path / "arxiv-metadata-oai-snapshot.json.gz"
    with SAMPLE.open("rb") as source, gzip.open(compressed, "wb") as target:
        shutil.copyfileobj(source, target)

    import_snapshot(str(compressed), "--batch-size", "2")

    assert len(stored_ids()) == 5


@pytest.mark.django_db
def test_second_import_changes_nothing():
    import_snapshot(str(SAMPLE))

    stdout, _ = import_snapshot(str(SAMPLE))

    assert "5 papers read: 0 created, 0 updated, 5 unchanged" in stdout
    assert Paper.objects.count() == 5


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.jsonl"], "No such file: missing.jsonl"),
        ([str(SAMPLE), "--from", "2024-13-01"], "'2024-13-01' is not a date like 2024-05-31"),
        ([str(SAMPLE), "--from", "2024-02-01", "--until", "2024-01-01"], "--from is after"),
        ([str(SAMPLE), "--limit", "0"], "must be at least 1"),
    ],
)
@pytest.mark.django_db
def test_bad_arguments_get_a_clear_message(arguments, message):
    with pytest.raises(CommandError, match=message):
        import_snapshot(*arguments)
    assert not IngestRun.objects.exists()


@pytest.mark.django_db
def test_imported_papers_get_the_tags_of_matching_rules():
    tag = TagFactory(name="R1_Reasoning")
    TagRule.objects.create(tag=tag, keywords="reasoning models", categories="cs.CL")

    import_snapshot(str(SAMPLE))

    assert list(tag.papers.values_list("arxiv_id", flat=True)) == ["2501.12948"]


def snapshot_line(n: int) -> str:
    return json.dumps(
        {
            "id": f"2401.{n:05d}",
            "title": f"Paper number {n}",
            "abstract": f"We study case {n}. Code: github.com/lab/case-{n}",
            "authors_parsed": [["Author", "Shared", ""], [f"Own{n}", "Author", ""]],
            "categories": "cs.CL cs.LG",
            "versions": [{"version": "v1", "created": "Mon, 8 Jan 2024 10:00:00 GMT"}],
        }
    )


def write_snapshot(path: Path, count: int, broken: dict[int, str]) -> Path:
    lines = [broken.get(number, snapshot_line(number)) for number in range(1, count + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_workers_store_every_batch_and_report_skips_in_file_order(tmp_path):
    snapshot = write_snapshot(
        tmp_path / "snapshot.jsonl",
        40,
        broken={10: "{not json", 26: json.dumps({"id": "2401.00026", "title": ""})},
    )

    stdout, stderr = import_snapshot(str(snapshot), "--batch-size", "4", "--workers", "2")

    assert [line.split(",")[0] for line in stderr.splitlines()] == [
        "line 10: skipped",
        "line 26: skipped",
    ]
    assert "38 papers read: 38 created, 0 updated, 0 unchanged; 2 lines skipped." in stdout
    run = IngestRun.objects.get()
    assert (run.status, run.fetched, run.created, run.skipped) == (
        IngestRun.Status.PARTIAL,
        40,
        38,
        2,
    )
    assert len(stored_ids()) == 38
    shared = Author.objects.get(name="Shared Author")
    assert shared.papers.count() == 38
    paper = Paper.objects.get(arxiv_id="2401.00007")
    assert paper.author_names == "Shared Author, Author Own7"
    assert list(paper.code_links.values_list("url", flat=True)) == ["https://github.com/lab/case-7"]
    assert sorted(paper.categories.values_list("code", flat=True)) == ["cs.CL", "cs.LG"]

    stdout, _ = import_snapshot(str(snapshot), "--batch-size", "4", "--workers", "2")

    assert "38 papers read: 0 created, 0 updated, 38 unchanged" in stdout
    assert Paper.objects.count() == 38


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_that_fails_fails_the_run(tmp_path, monkeypatch):
    def lost_database(records, **options):
        raise ConnectionError("the database went away")

    # The workers are forked from this process, so they inherit the patch.
    monkeypatch.setattr("ingest.pipeline.upsert_records", lost_database)
    snapshot = write_snapshot(tmp_path / "snapshot.jsonl", 12, broken={})

    with pytest.raises(ConnectionError, match="the database went away"):
        import_snapshot(str(snapshot), "--batch-size", "4", "--workers", "2")

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.FAILED
    assert run.error == "Crashed: ConnectionError: the database went away"
    assert not Paper.objects.exists()


@pytest.mark.parametrize(
    ("abstract", "links"),
    [
        ("Our code: GitHub.com/Lab/Tool.", ["https://github.com/Lab/Tool"]),
        ("See HTTPS://lab.example/tool for the data.", ["https://lab.example/tool"]),
        ("We prove a bound on github stars and gitlab use.", []),
    ],
)
def test_code_links_are_found_in_any_spelling(abstract, links):
    record = build_record(
        arxiv_id="2401.00001",
        version=1,
        title="A paper",
        abstract=abstract,
        authors=["Ada Lovelace"],
        categories=["cs.SE"],
    )

    assert [url for url, _, _ in record.code_urls] == links


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statistics")
def test_an_import_ends_with_fresh_planner_statistics(tmp_path):
    snapshot = write_snapshot(tmp_path / "snapshot.jsonl", 12, broken={})

    import_snapshot(str(snapshot), "--workers", "1")

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, n_mod_since_analyze, last_analyze IS NOT NULL"
            " FROM pg_stat_user_tables WHERE relname IN"
            " ('catalog_paper', 'catalog_paperauthor', 'catalog_author', 'catalog_codelink')"
        )
        statistics = {name: (modified, analyzed) for name, modified, analyzed in cursor}
    assert statistics["catalog_paper"] == (0, True)
    assert statistics["catalog_paperauthor"] == (0, True)
