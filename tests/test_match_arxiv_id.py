import pytest

from catalog.models import CodeLink, Paper, Summary
from catalog.services import match_to_arxiv_id
from tests.factories import CodeLinkFactory, PaperFactory, SummaryFactory, TagFactory

pytestmark = pytest.mark.django_db


def test_idless_listing_gets_its_id_and_keeps_everything():
    tag = TagFactory()
    listing = PaperFactory(arxiv_id=None, tags=[tag])
    SummaryFactory(paper=listing)

    matched = match_to_arxiv_id(listing, "2505.15034")

    assert matched.pk == listing.pk
    listing.refresh_from_db()
    assert listing.arxiv_id == "2505.15034"
    assert list(listing.tags.all()) == [tag]
    assert listing.summaries.count() == 1


def test_matching_onto_an_existing_record_moves_curation_and_redirects(client):
    tag = TagFactory()
    record = PaperFactory(arxiv_id="2505.15034")
    SummaryFactory(paper=record, language="zh-hans", kind="summary", body="existing")
    listing = PaperFactory(arxiv_id=None, tags=[tag])
    SummaryFactory(paper=listing, language="zh-hans", kind="summary", body="duplicate kind")
    SummaryFactory(paper=listing, language="zh-hans", kind="translation", body="moved")
    CodeLinkFactory(paper=listing, url="https://github.com/a/b")

    match_to_arxiv_id(listing, "2505.15034")

    assert list(record.tags.all()) == [tag]
    assert set(Summary.objects.filter(paper=record).values_list("body", flat=True)) == {
        "existing",
        "moved",
    }
    assert CodeLink.objects.filter(paper=record, url="https://github.com/a/b").exists()
    listing.refresh_from_db()
    assert listing.merged_into == record
    assert client.get(f"/p/{listing.pk}/")["Location"] == "/papers/2505.15034/"
    assert Paper.objects.visible().count() == 1


def test_admin_matches_an_idless_listing(admin_client):
    listing = PaperFactory(arxiv_id=None, title="Digest paper")
    url = f"/admin/catalog/paper/{listing.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    assert "match_arxiv_id" in form.fields

    data = {
        "title": "Digest paper",
        "abstract": listing.abstract,
        "published_precision": "day",
        "is_visible": "on",
        "added_at_0": "2025-11-05",
        "added_at_1": "00:00:00",
        "categories": [],
        "match_arxiv_id": "arXiv:2511.01234v1",
    }
    for prefix in ("papertag_set", "code_links", "summaries", "paperauthor_set", "images"):
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}

    response = admin_client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    listing.refresh_from_db()
    assert listing.arxiv_id == "2511.01234"


def test_admin_rejects_a_malformed_id(admin_client):
    listing = PaperFactory(arxiv_id=None)
    url = f"/admin/catalog/paper/{listing.pk}/change/"
    data = {"title": "x", "published_precision": "day", "match_arxiv_id": "not an id"}
    for prefix in ("papertag_set", "code_links", "summaries", "paperauthor_set", "images"):
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}

    response = admin_client.post(url, data)

    assert response.status_code == 200
    assert "Not an arXiv id" in response.content.decode()
