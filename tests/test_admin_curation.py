import pytest
from django.urls import reverse

from catalog.models import Category, CodeLink, Paper, PaperTag, Summary
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/catalog/paper/"


def run_action(client, action: str, papers, **extra):
    data = {"action": action, "_selected_action": [p.pk for p in papers], **extra}
    return client.post(CHANGELIST, data, follow=True)


def test_add_tag_action(admin_client):
    tag = TagFactory()
    papers = PaperFactory.create_batch(3)

    response = run_action(admin_client, "add_tag", papers[:2], tag=tag.pk)

    assert f"Tagged 2 papers with {tag.name}." in response.content.decode()
    assert set(tag.papers.all()) == set(papers[:2])

    response = run_action(admin_client, "add_tag", papers[2:], tag=tag.pk)
    assert f"Tagged 1 paper with {tag.name}." in response.content.decode()


def test_hide_and_show_actions_count_in_words(admin_client):
    paper = PaperFactory()

    assert "Hid 1 paper." in run_action(admin_client, "hide", [paper]).content.decode()
    assert "Made 1 paper visible." in run_action(admin_client, "show", [paper]).content.decode()


def test_add_tag_keeps_the_date_a_paper_first_got_it(admin_client):
    tag = TagFactory()
    paper = PaperFactory(tags=[tag])
    first = PaperTag.objects.get(paper=paper, tag=tag).added_at

    run_action(admin_client, "add_tag", [paper], tag=tag.pk)

    assert PaperTag.objects.get(paper=paper, tag=tag).added_at == first


def test_add_tag_without_choosing_a_tag_says_so(admin_client):
    paper = PaperFactory()

    response = run_action(admin_client, "add_tag", [paper])

    assert "Choose a tag first." in response.content.decode()
    assert PaperTag.objects.count() == 0


def test_remove_tag_action(admin_client):
    tag, other = TagFactory(), TagFactory()
    paper = PaperFactory(tags=[tag, other])

    run_action(admin_client, "remove_tag", [paper], tag=tag.pk)

    assert list(paper.tags.all()) == [other]


def test_hide_and_show_actions_change_what_readers_see(admin_client, client):
    paper = PaperFactory(title="Curated away")

    run_action(admin_client, "hide", [paper])
    assert "Curated away" not in client.get("/").content.decode()
    assert Paper.objects.get(pk=paper.pk).is_visible is False

    run_action(admin_client, "show", [paper])
    assert "Curated away" in client.get("/").content.decode()


def test_search_by_id_title_and_author(admin_client):
    PaperFactory(arxiv_id="2505.15034", title="RL Tango", authors=["Kaiwen Zha"])
    PaperFactory(title="Something else", authors=["Other Person"])

    for term in ("2505.15034", "tango", "Zha"):
        response = admin_client.get(CHANGELIST, {"q": term})
        assert [p.title for p in response.context["cl"].result_list] == ["RL Tango"]


def test_filters_by_tag_category_code_and_visibility(admin_client):
    tag, category = TagFactory(), CategoryFactory(code="cs.CL")
    tagged = PaperFactory(tags=[tag], categories=[category])
    CodeLinkFactory(paper=tagged)
    PaperFactory(is_visible=False, primary_category=CategoryFactory(code="math.PR"))

    for params in (
        {"tags__id__exact": tag.pk},
        {"categories__id__exact": category.pk},
        {"has_code": "yes"},
        {"is_visible__exact": 1},
    ):
        response = admin_client.get(CHANGELIST, params)
        assert [p.pk for p in response.context["cl"].result_list] == [tagged.pk], params


def test_changelist_does_no_query_per_row(admin_client, django_assert_max_num_queries):
    tags = TagFactory.create_batch(2)

    def fill(count):
        for _ in range(count):
            paper = PaperFactory(tags=tags)
            CodeLinkFactory(paper=paper)
            SummaryFactory(paper=paper)

    fill(5)
    with django_assert_max_num_queries(12) as few:
        admin_client.get(CHANGELIST)
    fill(45)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = admin_client.get(CHANGELIST)
    assert len(response.context["cl"].result_list) == 50


@pytest.mark.parametrize("path", ["tag", "category", "author", "summary"])
def test_other_admin_lists_do_no_query_per_row(admin_client, django_assert_max_num_queries, path):
    for _ in range(10):
        paper = PaperFactory(tags=[TagFactory()], authors=["Same Author"])
        SummaryFactory(paper=paper)
    with django_assert_max_num_queries(10):
        assert admin_client.get(f"/admin/catalog/{path}/").status_code == 200


def test_paper_change_form_with_inlines_saves_code_links_and_summaries(admin_client):
    paper = PaperFactory(arxiv_id="2505.00001")
    url = reverse("admin:catalog_paper_change", args=[paper.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {
        **{k: v for k, v in form.initial.items() if v is not None and k != "categories"},
        "title": "Edited title",
        "categories": [c.pk for c in paper.categories.all()],
        "published_at_0": "2025-05-01",
        "published_at_1": "00:00:00",
        "updated_at_0": "",
        "updated_at_1": "",
        "added_at_0": "2025-05-02",
        "added_at_1": "00:00:00",
        "primary_category": paper.primary_category_id,
    }
    for prefix in ("paperauthor_set", "images"):
        data |= {f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0}
    data |= {"papertag_set-TOTAL_FORMS": 0, "papertag_set-INITIAL_FORMS": 0}
    data |= {
        "code_links-TOTAL_FORMS": 1,
        "code_links-INITIAL_FORMS": 0,
        "code_links-0-url": "https://github.com/curator/found-it",
        "code_links-0-kind": "official",
        "code_links-0-source": "curator",
        "summaries-TOTAL_FORMS": 1,
        "summaries-INITIAL_FORMS": 0,
        "summaries-0-language": "ko",
        "summaries-0-kind": "summary",
        "summaries-0-status": "published",
        "summaries-0-body": "큐레이터 요약",
        "summaries-0-backend": "curator",
    }

    response = admin_client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    paper.refresh_from_db()
    assert paper.title == "Edited title"
    assert CodeLink.objects.get(paper=paper).url == "https://github.com/curator/found-it"
    assert Summary.objects.get(paper=paper).body == "큐레이터 요약"


def test_tag_autocomplete_answers(admin_client):
    TagFactory(name="Reinforcement_Learning")
    response = admin_client.get(
        "/admin/autocomplete/",
        {"term": "reinf", "app_label": "catalog", "model_name": "papertag", "field_name": "tag"},
    )

    assert [r["text"] for r in response.json()["results"]] == ["Reinforcement_Learning"]


def test_non_staff_cannot_reach_admin(client, django_user_model):
    user = django_user_model.objects.create_user("reader", "reader@example.com", "pw-12345678")
    client.force_login(user)

    response = client.get(CHANGELIST)

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


@pytest.mark.parametrize(
    "code", ["cs.CL", "hep-th", "math-ph", "cond-mat.mes-hall", "q-bio.NC", "physics.atom-ph"]
)
def test_a_curator_may_add_any_category_code_arxiv_uses(admin_client, code):
    response = admin_client.post("/admin/catalog/category/add/", {"code": code, "name": "A name"})

    assert response.status_code == 302
    assert Category.objects.filter(code=code).exists()


@pytest.mark.parametrize("code", ["cs/XS2", "cs.CL/", "cs CL", "cs.", ".CL", "cs..CL", "../cs"])
def test_a_category_code_arxiv_would_not_use_is_refused(admin_client, code):
    response = admin_client.post("/admin/catalog/category/add/", {"code": code, "name": "A name"})

    assert response.status_code == 200
    assert "Not an arXiv category code" in response.content.decode()
    assert not Category.objects.filter(code=code).exists()
