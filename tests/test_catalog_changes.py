"""One write path for the catalog (catalog/changes.py): every writer moves the
versions of the rows it changed, and no other, and the catalog cache's
version once it has committed."""

import datetime
from pathlib import Path

import pytest
from django.db import transaction

from catalog import cache as catalog_cache
from catalog import curation, services
from catalog.models import Paper, PaperImage, Summary
from discovery.neighbours import write_neighbours
from enrichment.previews import RenderedImage, store_previews
from ingest.records import ArxivRecord
from ingest.tagging import apply_tag_rules
from ingest.upsert import upsert_records
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)
from tests.ingest_factories import TagRuleFactory

pytestmark = pytest.mark.django_db

PROJECT = Path(__file__).resolve().parent.parent
PACKAGES = [
    *("config", "api", "curation", "accounts", "tools", "ingest", "enrichment", "discovery"),
    *("catalog", "core", "bench"),
]


@pytest.fixture
def papers(redis_cache):
    tag = TagFactory(name="Agents", slug="agents")
    return {
        "changed": PaperFactory(title="Reasoning agents", tags=[tag]),
        "other": PaperFactory(title="Vision transformers", tags=[tag]),
        "tag": tag,
    }


def refreshed_record(paper: Paper) -> ArxivRecord:
    return ArxivRecord(
        arxiv_id=paper.arxiv_id,
        version=2,
        title="Reasoning agents, revised",
        abstract=paper.abstract,
        authors=("Ada Lovelace",),
        primary_category="cs.CL",
        categories=("cs.CL",),
        published_at=paper.published_at,
        updated_at=paper.published_at + datetime.timedelta(days=30),
    )


# Each writer changes the paper "changed" (some after setting up what they change).
WRITERS = {
    "saved": lambda p, tag: p.save(),
    "authors": lambda p, tag: services.set_authors(p, ["Ada Lovelace", "Alan Turing"]),
    "tag added": lambda p, tag: p.tags.add(TagFactory()),
    "tag taken off, from the tag": lambda p, tag: tag.papers.remove(p),
    "tags cleared": lambda p, tag: p.tags.clear(),
    "category added": lambda p, tag: p.categories.add(CategoryFactory(code="cs.RO")),
    "code link": lambda p, tag: CodeLinkFactory(paper=p),
    "summary": lambda p, tag: SummaryFactory(paper=p),
    "image": lambda p, tag: PaperImage.objects.create(
        paper=p, kind=PaperImage.Kind.FIRST_PAGE, image="previews/1/page-0.png"
    ),
    "ingest": lambda p, tag: upsert_records([refreshed_record(p)]),
    "tag rules": lambda p, tag: (
        TagRuleFactory(keywords="reasoning agents"),
        apply_tag_rules(paper_ids=[p.pk]),
    ),
    "curators tag": lambda p, tag: curation.add_tags(
        Paper.objects.filter(pk=p.pk), [TagFactory()], by="test"
    ),
    "curators untag": lambda p, tag: curation.remove_tag(
        Paper.objects.filter(pk=p.pk), tag, by="test"
    ),
    "curators hide": lambda p, tag: curation.hide(Paper.objects.filter(pk=p.pk), by="test"),
    "curators publish summaries": lambda p, tag: curation.publish_summaries(
        Summary.objects.filter(paper=p), by="test"
    ),
    "previews": lambda p, tag: store_previews(
        paper=p,
        images=[RenderedImage(kind="page", position=0, png=b"\x89PNG", width=1, height=1)],
    ),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_every_writer_moves_the_versions_of_what_it_changed_and_freshens_the_cache(
    papers, writer, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    changed, other = papers["changed"], papers["other"]
    if writer == "curators publish summaries":
        SummaryFactory(paper=changed, status=Summary.Status.DRAFT)
    versions = dict(Paper.objects.values_list("pk", "changed_at"))
    catalog = catalog_cache.catalog_version()

    with django_capture_on_commit_callbacks(execute=True):
        WRITERS[writer](changed, papers["tag"])

    changed.refresh_from_db()
    other.refresh_from_db()
    assert changed.changed_at > versions[changed.pk]
    assert other.changed_at == versions[other.pk]
    assert catalog_cache.catalog_version() > catalog


def test_a_merged_listing_moves_the_paper_it_joins(papers, django_capture_on_commit_callbacks):
    paper = papers["changed"]
    listing = PaperFactory(arxiv_id=None, title="Reasoning agents (listing)")
    SummaryFactory(paper=listing)
    before = Paper.objects.get(pk=paper.pk).changed_at

    with django_capture_on_commit_callbacks(execute=True):
        services.match_to_arxiv_id(listing, paper.arxiv_id)

    assert Paper.objects.get(pk=paper.pk).changed_at > before
    assert Paper.objects.get(pk=listing.pk).merged_into == paper


def test_a_tag_or_category_edit_moves_its_own_version_and_no_papers(
    papers, django_capture_on_commit_callbacks
):
    tag, category = papers["tag"], papers["changed"].primary_category
    versions = dict(Paper.objects.values_list("pk", "changed_at"))
    tag_version, category_version = tag.changed_at, category.changed_at
    catalog = catalog_cache.catalog_version()

    with django_capture_on_commit_callbacks(execute=True):
        tag.description = "Systems that act."
        tag.save(update_fields=["description"])
        category.save()

    tag.refresh_from_db()
    category.refresh_from_db()
    assert tag.changed_at > tag_version and category.changed_at > category_version
    assert dict(Paper.objects.values_list("pk", "changed_at")) == versions
    assert catalog_cache.catalog_version() > catalog


def test_a_renamed_tag_or_category_moves_the_papers_showing_it(
    papers, django_capture_on_commit_callbacks
):
    """Items and cards show a tag's and a category's name: a client keeping a
    copy (updated_since, /changes) must hear of each of its papers."""
    tag, changed, other = papers["tag"], papers["changed"], papers["other"]
    untagged = PaperFactory(primary_category=CategoryFactory(code="math.GT"))
    versions = dict(Paper.objects.values_list("pk", "changed_at"))

    with django_capture_on_commit_callbacks(execute=True):
        tag.name = "Autonomous agents"
        tag.save(update_fields=["name"])
    moved = dict(Paper.objects.values_list("pk", "changed_at"))
    assert moved[changed.pk] > versions[changed.pk] and moved[other.pk] > versions[other.pk]
    assert moved[untagged.pk] == versions[untagged.pk]

    category = untagged.primary_category
    with django_capture_on_commit_callbacks(execute=True):
        category.name = "Geometric Topology, renamed"
        category.save()
    again = dict(Paper.objects.values_list("pk", "changed_at"))
    assert again[untagged.pk] > moved[untagged.pk]
    assert again[changed.pk] == moved[changed.pk]


def test_what_no_version_covers_freshens_the_cache_alone(
    papers, django_capture_on_commit_callbacks
):
    changed, other = papers["changed"], papers["other"]
    versions = dict(Paper.objects.values_list("pk", "changed_at"))
    catalog = catalog_cache.catalog_version()

    with django_capture_on_commit_callbacks(execute=True):
        write_neighbours(found={changed.pk: [(other.pk, 0.9)]}, key="test")

    assert dict(Paper.objects.values_list("pk", "changed_at")) == versions
    assert catalog_cache.catalog_version() > catalog


def test_a_write_that_rolls_back_leaves_the_cache_alone(papers, django_capture_on_commit_callbacks):
    catalog = catalog_cache.catalog_version()

    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        papers["changed"].save()
        raise RuntimeError

    assert not callbacks
    assert catalog_cache.catalog_version() == catalog


def test_only_the_write_path_moves_the_catalog_version_on():
    found = [
        str(path.relative_to(PROJECT))
        for package in PACKAGES
        for path in (PROJECT / package).rglob("*.py")
        if "bump_catalog_version" in path.read_text(encoding="utf-8")
    ]

    # Defined in catalog/cache.py, called from catalog/changes.py alone.
    assert sorted(found) == ["catalog/cache.py", "catalog/changes.py"]
