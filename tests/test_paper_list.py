import datetime

import pytest
from django.utils import timezone

from catalog.models import Paper, PaperImage
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


def days_ago(days: float) -> datetime.datetime:
    return timezone.now() - datetime.timedelta(days=days)


def listed_titles(response) -> list[str]:
    return [paper.title for paper in response.context["page"].object_list]


def test_newest_first_with_total_and_twenty_per_page(client):
    for n in range(25):
        PaperFactory(title=f"Paper {n:02d}", published_at=days_ago(100 - n))

    response = client.get("/")

    assert response.status_code == 200
    titles = listed_titles(response)
    assert len(titles) == 20
    assert titles[0] == "Paper 24"
    assert titles[-1] == "Paper 05"
    assert "25 papers" in response.content.decode()
    page2 = client.get("/?page=2")
    assert listed_titles(page2) == [f"Paper {n:02d}" for n in range(4, -1, -1)]


def test_same_date_is_ordered_by_id_descending(client):
    when = days_ago(3)
    first = PaperFactory(published_at=when)
    second = PaperFactory(published_at=when)

    assert listed_titles(client.get("/")) == [second.title, first.title]


def test_entry_shows_id_code_community_link_authors_tags_and_abstract(client):
    tag = TagFactory(name="R1_Reasoning", slug="r1-reasoning")
    paper = PaperFactory(
        arxiv_id="2505.15034",
        title="RL Tango",
        authors=["Kaiwen Zha", "Zhengqi Gao", "Maohao Shen", "Zhang-Wei Hong", "Duane Boning"],
        tags=[tag],
    )
    CodeLinkFactory(paper=paper, url="https://github.com/kaiwenzha/rl-tango")

    html = client.get("/").content.decode()

    assert "arXiv:2505.15034" in html
    assert 'href="https://github.com/kaiwenzha/rl-tango"' in html
    assert 'href="https://huggingface.co/papers/2505.15034" rel="noopener">Hugging Face</a>' in html
    assert 'href="/papers/2505.15034/"' in html
    assert (
        '<a href="/authors/kaiwen-zha/">Kaiwen Zha</a>, <a href="/authors/zhengqi-gao/">Zhengqi Gao'
        '</a>, <a href="/authors/maohao-shen/">Maohao Shen</a>, <a href="/authors/zhang-wei-hong/">'
        "Zhang-Wei Hong</a> et al."
    ) in html
    assert "Duane Boning" not in html
    assert 'href="/tags/r1-reasoning/"' in html
    assert paper.abstract in html


def test_links_are_labelled_by_where_they_go(client, settings):
    PaperFactory(arxiv_id="2505.15034")
    settings.PAPER_COMMUNITY_URL = "https://www.alphaxiv.org/abs/{id}"
    html = client.get("/").content.decode()
    assert 'href="https://www.alphaxiv.org/abs/2505.15034" rel="noopener">alphaXiv</a>' in html

    settings.PAPER_COMMUNITY_URL = "https://papers.example.org/{id}"
    link = 'href="https://papers.example.org/2505.15034" rel="noopener">papers.example.org</a>'
    html = client.get("/").content.decode()
    assert link in html
    assert "Papers with Code" not in html


def test_only_long_abstracts_are_cut_with_a_switch_to_read_them_whole(client):
    long = PaperFactory(abstract="A sentence about reasoning. " * 20)
    short = PaperFactory(abstract="One short sentence.")

    html = client.get("/").content.decode()

    assert f'id="abstract-toggle-{long.pk}"' in html
    assert f'id="abstract-toggle-{short.pk}"' not in html
    assert html.count('class="abstract clamped"') == 1


def test_hidden_and_merged_papers_are_not_listed(client):
    shown = PaperFactory()
    PaperFactory(is_visible=False)
    PaperFactory(arxiv_id=None, merged_into=shown)

    assert listed_titles(client.get("/")) == [shown.title]


def test_tag_filter_requires_every_tag(client):
    rl, rag = TagFactory(), TagFactory()
    both = PaperFactory(tags=[rl, rag])
    PaperFactory(tags=[rl])
    PaperFactory(tags=[rag])

    response = client.get(f"/?tag={rl.slug}&tag={rag.slug}")

    assert listed_titles(response) == [both.title]


def test_category_filter_matches_any_category(client):
    cl, lg, cv = (
        CategoryFactory(code="cs.CL"),
        CategoryFactory(code="cs.LG"),
        CategoryFactory(code="cs.CV"),
    )
    in_cl = PaperFactory(categories=[cl, lg])
    in_lg = PaperFactory(categories=[lg])
    PaperFactory(primary_category=cv, categories=[cv])

    response = client.get("/?category=cs.CL&category=cs.LG")

    assert sorted(listed_titles(response)) == sorted([in_cl.title, in_lg.title])


@pytest.mark.parametrize(
    ("period", "expected"),
    [("1d", ["today"]), ("7d", ["today", "last week"]), ("365d", ["today", "last week", "old"])],
)
def test_period_filter(client, period, expected):
    PaperFactory(title="today", published_at=days_ago(0.5))
    PaperFactory(title="last week", published_at=days_ago(5))
    PaperFactory(title="old", published_at=days_ago(200))
    PaperFactory(title="ancient", published_at=days_ago(800))

    assert listed_titles(client.get(f"/?period={period}")) == expected


def test_from_and_to_are_inclusive_days(client):
    day = datetime.datetime(2025, 5, 10, tzinfo=datetime.UTC)
    PaperFactory(title="before", published_at=day - datetime.timedelta(seconds=1))
    PaperFactory(title="start", published_at=day)
    PaperFactory(title="end", published_at=day + datetime.timedelta(days=1, hours=23))
    PaperFactory(title="after", published_at=day + datetime.timedelta(days=2))

    response = client.get("/?from=2025-05-10&to=2025-05-11")

    assert listed_titles(response) == ["end", "start"]


def test_has_code_filter(client):
    with_code = PaperFactory()
    CodeLinkFactory(paper=with_code)
    community = PaperFactory()
    CodeLinkFactory(paper=community, kind="community", source="other")
    # A link the abstract only mentions (a leaderboard, a video) is no code of the paper's.
    mentioned = PaperFactory()
    CodeLinkFactory(paper=mentioned, kind="mentioned", source="abstract")
    PaperFactory()

    assert sorted(listed_titles(client.get("/?has_code=1"))) == sorted(
        [with_code.title, community.title]
    )


def test_filters_combine_and_each_chip_removes_only_itself(client):
    tag = TagFactory(name="Agents")
    match = PaperFactory(title="Agents that reason", tags=[tag], published_at=days_ago(2))
    CodeLinkFactory(paper=match)
    PaperFactory(title="Agents without code", tags=[tag], published_at=days_ago(2))

    response = client.get(f"/?tag={tag.slug}&period=7d&has_code=1&q=agents")

    assert listed_titles(response) == ["Agents that reason"]
    chips = {chip["name"]: chip for chip in response.context["active_filters"]}
    assert set(chips) == {"Search", "Tags", "Period", "Code"}
    assert chips["Tags"]["value"] == "Agents"
    without_code = client.get("/?" + chips["Code"]["remove_query"])
    assert sorted(listed_titles(without_code)) == ["Agents that reason", "Agents without code"]


def test_list_query_count_does_not_grow_with_papers(client, django_assert_num_queries):
    tags = TagFactory.create_batch(3)

    def fill(count: int) -> None:
        for _ in range(count):
            paper = PaperFactory(tags=tags, authors=["A One", "B Two", "C Three"])
            CodeLinkFactory(paper=paper)

    fill(5)
    # page rows (with primary category, official code link, author names and
    # the capped count), tags, and the filter form's tag and category choices
    with django_assert_num_queries(3):
        client.get("/")
    fill(45)
    with django_assert_num_queries(3):
        response = client.get("/")
    assert len(response.context["page"].object_list) == 20


def test_filtered_list_query_count_is_fixed(client, django_assert_num_queries):
    tag = TagFactory()
    for _ in range(30):
        PaperFactory(tags=[tag], authors=["A One"])
    # the chosen tags' lookup, the search's estimate (which picks how its
    # matches are read), the newest matches ranked by relevance, page rows
    # with their count, tags, the filter form's choices, and the names near
    # the search's words ("did you mean")
    with django_assert_num_queries(7):
        client.get(f"/?tag={tag.slug}&period=30d&q=reasoning")
    assert Paper.objects.count() == 30


def test_first_page_thumbnails_in_lists_are_a_setting(client, settings):
    paper = PaperFactory(title="Pictured")
    PaperImage.objects.create(
        paper=paper, kind=PaperImage.Kind.FIRST_PAGE, image="previews/1/page.png", width=300
    )
    PaperImage.objects.create(paper=paper, kind=PaperImage.Kind.FIGURE, image="previews/1/f.png")

    settings.PREVIEW_LIST_THUMBNAILS = False
    assert "paper-thumbnail" not in client.get("/?q=pictured").content.decode()

    settings.PREVIEW_LIST_THUMBNAILS = True
    html = client.get("/?q=pictured&sort=newest").content.decode()
    assert html.count('class="paper-thumbnail"') == 1
    assert 'src="/media/previews/1/page.png"' in html
