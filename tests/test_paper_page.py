import datetime

import pytest

from catalog.models import Paper, Summary
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def paper():
    cl, lg = (
        CategoryFactory(code="cs.CL", name="Computation and Language"),
        CategoryFactory(code="cs.LG"),
    )
    paper = PaperFactory(
        arxiv_id="2505.15034",
        version=2,
        title="RL Tango: Reinforcing Generator and Verifier Together",
        abstract="Reinforcement learning has emerged as a compelling approach. " * 10,
        authors=["Kaiwen Zha", "Zhengqi Gao"],
        primary_category=cl,
        categories=[cl, lg],
        comment="29 pages, 11 figures",
        journal_ref="NeurIPS 2025",
        doi="10.1000/xyz123",
        published_at=datetime.datetime(2025, 5, 21, tzinfo=datetime.UTC),
        tags=[TagFactory(name="R1_Reasoning")],
    )
    CodeLinkFactory(paper=paper, url="https://github.com/kaiwenzha/rl-tango")
    CodeLinkFactory(
        paper=paper, url="https://github.com/fan/tango-repro", kind="community", source="other"
    )
    SummaryFactory(paper=paper, language="zh-hans", kind=Summary.Kind.TRANSLATION, body="强化学习")
    SummaryFactory(
        paper=paper, language="zh-hans", kind=Summary.Kind.TAKEAWAYS, body="1. 第一\n2. 第二"
    )
    SummaryFactory(
        paper=paper,
        language="en",
        kind=Summary.Kind.SUMMARY,
        body="A *short* summary.",
        backend=Summary.Backend.CURATOR,
    )
    SummaryFactory(
        paper=paper,
        language="ko",
        kind=Summary.Kind.SUMMARY,
        body="초안",
        status=Summary.Status.DRAFT,
    )
    return paper


def test_paper_page_shows_everything(client, paper):
    html = client.get("/papers/2505.15034/").content.decode()

    assert "RL Tango: Reinforcing Generator and Verifier Together" in html
    assert "arXiv:2505.15034v2" in html
    assert (
        '<a href="/authors/kaiwen-zha/">Kaiwen Zha</a>, <a href="/authors/zhengqi-gao/">Zhengqi Gao'
    ) in html
    assert "Reinforcement learning has emerged" in html
    assert "https://github.com/kaiwenzha/rl-tango" in html
    assert "https://github.com/fan/tango-repro" in html
    assert "29 pages, 11 figures" in html
    assert "NeurIPS 2025" in html
    assert "https://arxiv.org/pdf/2505.15034" in html
    assert "https://huggingface.co/papers/2505.15034" in html
    assert "<ol>\n<li>第一</li>\n<li>第二</li>\n</ol>" in html
    assert "<em>short</em>" in html
    assert 'class="machine-notice"' in html
    assert "eprint = {2505.15034}" in html
    assert "primaryClass = {cs.CL}" in html


def test_only_published_summaries_are_shown(client, paper):
    assert "초안" not in client.get("/papers/2505.15034/").content.decode()


def test_readers_language_comes_first(client, paper):
    english = client.get("/papers/2505.15034/", HTTP_ACCEPT_LANGUAGE="en")
    chinese = client.get("/papers/2505.15034/", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert [lang for lang, _ in english.context["summary_groups"]] == ["en", "zh-hans"]
    assert [lang for lang, _ in chinese.context["summary_groups"]] == ["zh-hans", "en"]


def test_no_machine_notice_when_only_curators_wrote(client):
    paper = PaperFactory()
    SummaryFactory(paper=paper, backend=Summary.Backend.CURATOR)

    html = client.get(paper.get_absolute_url()).content.decode()
    assert 'class="machine-notice"' not in html


def test_old_style_id_with_slash(client):
    PaperFactory(arxiv_id="hep-ex/0406020", title="Old style")

    response = client.get("/papers/hep-ex/0406020/")

    assert response.status_code == 200
    assert "Old style" in response.content.decode()


def test_versioned_and_prefixed_ids_redirect_to_the_canonical_page(client, paper):
    for path in ("/papers/2505.15034v2/", "/papers/arXiv:2505.15034/"):
        response = client.get(path)
        assert response.status_code == 301
        assert response["Location"] == "/papers/2505.15034/"


def test_paper_without_arxiv_id_has_its_own_stable_url(client):
    paper = PaperFactory(arxiv_id=None, title="From a digest")

    assert paper.get_absolute_url() == f"/p/{paper.pk}/"
    response = client.get(f"/p/{paper.pk}/")
    assert response.status_code == 200
    assert "From a digest" in response.content.decode()


def test_stable_url_redirects_once_the_paper_has_an_id(client):
    paper = PaperFactory(arxiv_id="2505.00001")

    response = client.get(f"/p/{paper.pk}/")

    assert response.status_code == 301
    assert response["Location"] == "/papers/2505.00001/"


def test_hidden_paper_is_not_found(client):
    PaperFactory(arxiv_id="2505.00002", is_visible=False)

    assert client.get("/papers/2505.00002/").status_code == 404


def test_paper_page_query_count_is_fixed(client, paper, django_assert_num_queries):
    # paper with its author names, categories, tags, code links, published summaries, images
    with django_assert_num_queries(6):
        client.get("/papers/2505.15034/")
    for n in range(20):
        CodeLinkFactory(paper=paper)
        SummaryFactory(paper=paper, language=f"x{n}")
    with django_assert_num_queries(6):
        client.get("/papers/2505.15034/")
    assert Paper.objects.count() == 1


def test_a_hidden_papers_stable_address_is_not_found(client):
    hidden = PaperFactory(arxiv_id="2505.99001", is_visible=False)
    hidden_listing = PaperFactory(arxiv_id=None, is_visible=False)
    merged_into_hidden = PaperFactory(arxiv_id=None, merged_into=hidden)

    for paper in (hidden, hidden_listing, merged_into_hidden):
        response = client.get(f"/p/{paper.pk}/")
        assert response.status_code == 404, paper
        assert "2505.99001" not in response.content.decode()
