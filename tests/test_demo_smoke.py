"""The demo as `make run` serves it; `make test` also runs this file on SQLite."""

import pytest
from django.core.management import call_command

from catalog.models import Paper, Summary

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    call_command("load_demo", verbosity=0)


def test_demo_pages_answer(client, demo):
    home = client.get("/")
    assert home.status_code == 200
    assert "60 papers" in home.content.decode()

    for path in ("/tags/", "/categories/", "/tags/r1-reasoning/", "/?q=reasoning", "/?has_code=1"):
        assert client.get(path).status_code == 200, path


def test_demo_paper_pages_show_code_links_and_chinese_summaries(client, demo):
    korean = client.get("/papers/2505.15034/").content.decode()
    assert "https://github.com/kaiwenzha/rl-tango" in korean

    digest = Paper.objects.filter(arxiv_id=None, summaries__kind=Summary.Kind.TAKEAWAYS).first()
    html = client.get(digest.get_absolute_url()).content.decode()
    assert "简体中文" in html
    assert "<ol>" in html
    assert 'class="machine-notice"' in html


def test_search_works_on_this_database(client, demo):
    response = client.get("/?q=verifier")

    titles = [paper.title for paper in response.context["page"].object_list]
    assert "RL Tango: Reinforcing Generator and Verifier Together for Language Reasoning" in titles
