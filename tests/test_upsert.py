import datetime
import threading
from dataclasses import replace

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.models import Author, Category, CodeLink, Paper, PaperTag, Summary
from ingest.records import ArxivRecord
from ingest.upsert import upsert_records
from tests.factories import CodeLinkFactory, PaperFactory, SummaryFactory, TagFactory

UTC = datetime.UTC
PUBLISHED = datetime.datetime(2025, 5, 20, 17, 59, 1, tzinfo=UTC)


def make_record(n: int = 1, **overrides) -> ArxivRecord:
    fields = {
        "arxiv_id": f"2505.{15000 + n}",
        "version": 1,
        "title": f"Scaling Test-Time Reasoning, Part {n}",
        "abstract": "We study reasoning. Code: https://github.com/lab/reasoner",
        "authors": ("Ada Lovelace", "Alan Turing", f"Grace Hopper {n}"),
        "primary_category": "cs.CL",
        "categories": ("cs.CL", "cs.LG"),
        "comment": "12 pages",
        "published_at": PUBLISHED,
        "updated_at": PUBLISHED,
        "code_urls": (("https://github.com/lab/reasoner", "abstract", "official"),),
    }
    fields.update(overrides)
    return ArxivRecord(**fields)


def paper_row_version(paper: Paper) -> int:
    """PostgreSQL's xmin: it changes whenever the row is written."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT xmin::text::bigint FROM catalog_paper WHERE id = %s", [paper.pk])
        return cursor.fetchone()[0]


@pytest.mark.django_db
def test_new_record_creates_the_paper_with_authors_categories_links_and_tags():
    tag = TagFactory(name="R1_Reasoning")

    result = upsert_records([make_record()], tags=[tag])

    paper = Paper.objects.get(arxiv_id="2505.15001")
    assert (result.created, result.updated, result.unchanged) == (1, 0, 0)
    assert result.paper_ids == [paper.pk]
    assert paper.version == 1
    assert paper.title == "Scaling Test-Time Reasoning, Part 1"
    assert paper.published_at == PUBLISHED
    assert [a.name for a in paper.authors.order_by("paperauthor__position")] == [
        "Ada Lovelace",
        "Alan Turing",
        "Grace Hopper 1",
    ]
    assert paper.author_names == "Ada Lovelace, Alan Turing, Grace Hopper 1"
    assert paper.primary_category.code == "cs.CL"
    assert sorted(c.code for c in paper.categories.all()) == ["cs.CL", "cs.LG"]
    assert list(paper.code_links.values_list("url", "kind", "source")) == [
        ("https://github.com/lab/reasoner", "official", "abstract")
    ]
    assert list(paper.tags.all()) == [tag]
    assert Paper.objects.filter(search_document="reasoning").get() == paper


@pytest.mark.django_db
def test_new_version_refreshes_arxiv_fields_and_keeps_curation():
    upsert_records([make_record()])
    paper = Paper.objects.get(arxiv_id="2505.15001")
    tag = TagFactory()
    PaperTag.objects.create(paper=paper, tag=tag)
    CodeLinkFactory(paper=paper, url="https://lab.example/project", source="curator")
    SummaryFactory(paper=paper)
    Paper.objects.filter(pk=paper.pk).update(is_visible=False)
    revised = make_record(
        version=2,
        title="Scaling Test-Time Reasoning, Revised",
        authors=("Alan Turing", "Ada Lovelace"),
        categories=("cs.CL", "cs.AI"),
        journal_ref="ACL 2025",
        updated_at=PUBLISHED + datetime.timedelta(days=9),
        code_urls=(("https://github.com/lab/reasoner-v2", "comment", "official"),),
    )

    result = upsert_records([revised])

    paper.refresh_from_db()
    assert (result.created, result.updated, result.unchanged) == (0, 1, 0)
    assert result.paper_ids == [paper.pk]
    assert (paper.version, paper.title, paper.journal_ref) == (
        2,
        "Scaling Test-Time Reasoning, Revised",
        "ACL 2025",
    )
    assert paper.published_at == PUBLISHED
    assert paper.author_names == "Alan Turing, Ada Lovelace"
    assert [a.name for a in paper.authors.order_by("paperauthor__position")] == [
        "Alan Turing",
        "Ada Lovelace",
    ]
    assert sorted(c.code for c in paper.categories.all()) == ["cs.AI", "cs.CL"]
    assert sorted(paper.code_links.values_list("url", "source")) == [
        ("https://github.com/lab/reasoner-v2", "comment"),
        ("https://lab.example/project", "curator"),
    ]
    assert list(paper.tags.all()) == [tag]
    assert Summary.objects.filter(paper=paper).count() == 1
    assert paper.is_visible is False
    assert Paper.objects.filter(search_document="revised").get() == paper


@pytest.mark.django_db
def test_same_record_again_writes_nothing():
    tag = TagFactory()
    records = [make_record(n) for n in range(3)]
    upsert_records(records, tags=[tag])
    paper = Paper.objects.get(arxiv_id="2505.15001")
    row_version = paper_row_version(paper)
    tag_rows = list(PaperTag.objects.order_by("pk").values_list("pk", "paper_id", "added_at"))
    link_rows = list(CodeLink.objects.order_by("pk").values_list("pk", "paper_id", "created_at"))

    with CaptureQueriesContext(connection) as queries:
        result = upsert_records(records, tags=[tag])

    assert (result.created, result.updated, result.unchanged) == (0, 0, 3)
    assert result.paper_ids == []
    assert paper_row_version(paper) == row_version
    assert list(PaperTag.objects.order_by("pk").values_list("pk", "paper_id", "added_at")) == (
        tag_rows
    )
    assert list(CodeLink.objects.order_by("pk").values_list("pk", "paper_id", "created_at")) == (
        link_rows
    )
    assert not [q for q in queries if q["sql"].startswith(("UPDATE", "DELETE"))]


@pytest.mark.django_db
def test_older_version_never_overwrites_a_newer_one():
    upsert_records([make_record(version=3, title="Third version")])

    result = upsert_records([make_record(version=2, title="Second version")])

    assert (result.created, result.updated, result.unchanged) == (0, 0, 1)
    paper = Paper.objects.get(arxiv_id="2505.15001")
    assert (paper.version, paper.title) == (3, "Third version")


@pytest.mark.django_db
def test_a_batch_holding_two_versions_keeps_the_newest():
    result = upsert_records(
        [make_record(version=2, title="Second"), make_record(version=1, title="First")]
    )

    assert result.created == 1
    assert Paper.objects.get(arxiv_id="2505.15001").title == "Second"


@pytest.mark.django_db
def test_metadata_change_without_new_version_is_an_update():
    upsert_records([make_record()])

    result = upsert_records([make_record(doi="10.1000/xyz123")])

    assert (result.updated, result.unchanged) == (1, 0)
    assert Paper.objects.get(arxiv_id="2505.15001").doi == "10.1000/xyz123"


@pytest.mark.django_db
def test_source_without_version_number_keeps_the_stored_one_until_a_newer_date():
    upsert_records([make_record(version=2)])

    upsert_records([make_record(version=None, journal_ref="NeurIPS")])
    paper = Paper.objects.get(arxiv_id="2505.15001")
    assert (paper.version, paper.journal_ref) == (2, "NeurIPS")

    later = PUBLISHED + datetime.timedelta(days=30)
    upsert_records([make_record(version=None, updated_at=later)])
    paper.refresh_from_db()
    assert (paper.version, paper.updated_at) == (None, later)


@pytest.mark.django_db
def test_dates_without_times_keep_the_stored_times_of_that_day():
    upsert_records([make_record(version=2)])
    same_day = datetime.datetime(2025, 5, 20, tzinfo=UTC)

    result = upsert_records([make_record(version=None, published_at=same_day, updated_at=same_day)])

    assert result.unchanged == 1
    paper = Paper.objects.get(arxiv_id="2505.15001")
    assert (paper.version, paper.published_at, paper.updated_at) == (2, PUBLISHED, PUBLISHED)


@pytest.mark.django_db
def test_idless_paper_with_the_same_title_gets_the_arxiv_record():
    listing = PaperFactory(
        arxiv_id=None,
        version=None,
        title="Scaling test-time reasoning -- part 1",
        published_at=None,
        abstract="",
    )
    tag = TagFactory()
    PaperTag.objects.create(paper=listing, tag=tag)
    SummaryFactory(paper=listing)
    CodeLinkFactory(paper=listing, url="https://lab.example/demo", source="curator")

    result = upsert_records([make_record()])

    assert (result.created, result.updated) == (0, 1)
    listing.refresh_from_db()
    assert listing.arxiv_id == "2505.15001"
    assert listing.title == "Scaling Test-Time Reasoning, Part 1"
    assert listing.published_at == PUBLISHED
    assert listing.author_names == "Ada Lovelace, Alan Turing, Grace Hopper 1"
    assert list(listing.tags.all()) == [tag]
    assert listing.summaries.count() == 1
    assert sorted(listing.code_links.values_list("url", flat=True)) == [
        "https://github.com/lab/reasoner",
        "https://lab.example/demo",
    ]
    assert Paper.objects.count() == 1


@pytest.mark.django_db
def test_extracted_link_a_curator_already_added_stays_the_curators():
    upsert_records([make_record()])
    paper = Paper.objects.get()
    paper.code_links.update(source="curator")

    result = upsert_records([make_record()])

    assert result.unchanged == 1
    assert list(paper.code_links.values_list("source", flat=True)) == ["curator"]


@pytest.mark.django_db
def test_query_count_does_not_grow_with_the_batch(django_assert_num_queries):
    tag = TagFactory()

    def count_queries(records) -> int:
        with CaptureQueriesContext(connection) as queries:
            upsert_records(records, tags=[tag])
        return len(queries)

    small = [make_record(n) for n in range(10)]
    large = [make_record(n) for n in range(100, 150)]
    first_small, first_large = count_queries(small), count_queries(large)
    revised = [replace(r, version=2, authors=r.authors[::-1]) for r in small]
    revised_large = [replace(r, version=2, authors=r.authors[::-1]) for r in large]
    again_small, again_large = count_queries(revised), count_queries(revised_large)

    assert first_small == first_large
    assert again_small == again_large
    with django_assert_num_queries(first_small):
        upsert_records([make_record(n) for n in range(200, 250)], tags=[tag])


def upsert_in_threads(*batches) -> list:
    """Run upsert_records on each batch in its own thread (own connection), all at once."""
    barrier = threading.Barrier(len(batches))
    results, errors = [None] * len(batches), []

    def work(index, batch):
        try:
            barrier.wait()
            results[index] = upsert_records(batch)
        except Exception as error:  # reported to the test below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=item) for item in enumerate(batches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    return results


@pytest.mark.parametrize("authors_known", [False, True])
@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_store_each_paper_and_author_once(authors_known):
    batch = [make_record(n, authors=("Shared Author", f"Own Author {n}")) for n in range(40)]
    if authors_known:
        # With authors and categories stored, the workers meet at the paper inserts.
        upsert_records([replace(r, arxiv_id=f"2401.{r.arxiv_id[5:]}") for r in batch])

    results = upsert_in_threads(batch, batch[::-1])

    assert Paper.objects.filter(arxiv_id__startswith="2505.").count() == 40
    assert Author.objects.count() == 41
    assert Category.objects.count() == 2
    assert sum(r.created for r in results) == 40
    assert sum(r.unchanged for r in results) == 40
    assert all(p.authors.count() == 2 for p in Paper.objects.prefetch_related("authors"))


@pytest.mark.django_db(transaction=True)
def test_concurrent_versions_end_with_the_newest():
    first = [make_record(n) for n in range(30)]
    second = [make_record(n, version=2, title=f"Revised {n}") for n in range(30)]

    upsert_in_threads(first, second)

    assert Paper.objects.count() == 30
    assert set(Paper.objects.values_list("version", flat=True)) == {2}
    assert Paper.objects.filter(title__startswith="Revised").count() == 30
