import pytest

from catalog.services import upsert_categories
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def test_tag_index_lists_tags_with_counts_of_visible_papers(client, django_assert_num_queries):
    rl = TagFactory(name="Reinforcement_Learning")
    TagFactory(name="Empty")
    PaperFactory.create_batch(2, tags=[rl])
    PaperFactory(tags=[rl], is_visible=False)

    with django_assert_num_queries(1):
        response = client.get("/tags/")

    html = response.content.decode()
    assert ">Reinforcement Learning</a>" in html  # the name readers read
    assert "2 papers" in html
    assert "0 papers" in html


def test_tag_page_is_the_list_filtered_with_description(client):
    tag = TagFactory(name="Agents", description="Papers on LLM agents.")
    tagged = PaperFactory(tags=[tag])
    PaperFactory()

    response = client.get(f"/tags/{tag.slug}/")

    assert [p.title for p in response.context["page"].object_list] == [tagged.title]
    html = response.content.decode()
    assert "Papers on LLM agents." in html
    assert "1 paper" in html


def test_category_index_groups_by_archive(client):
    PaperFactory(primary_category=CategoryFactory(code="cs.CL", name="Computation and Language"))
    PaperFactory(primary_category=CategoryFactory(code="math.PR", name="Probability"))

    html = client.get("/categories/").content.decode()

    assert "Computation and Language" in html
    assert "math.PR" in html


def test_category_page_filters_and_combines_with_other_filters(client):
    cl = CategoryFactory(code="cs.CL")
    PaperFactory(title="Parsing", primary_category=cl)
    PaperFactory(title="Tokenizers", primary_category=cl)
    PaperFactory(title="Tokenizers elsewhere", primary_category=CategoryFactory(code="cs.CV"))

    response = client.get("/categories/cs.CL/?q=tokenizers")

    assert [p.title for p in response.context["page"].object_list] == ["Tokenizers"]


def test_healthz(client):
    assert client.get("/healthz").json() == {
        "status": "ok",
        "database": "ok",
        "cache": "off",
        "broker": "off",
    }


def test_categories_get_arxivs_human_names():
    categories = upsert_categories(["cs.CL", "hep-ex", "cmp-lg"])

    assert categories["cs.CL"].name == "Computation and Language"
    assert categories["hep-ex"].name == "High Energy Physics - Experiment"
    assert categories["cmp-lg"].name == ""
