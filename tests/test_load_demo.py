# The pages are Chinese: full-width punctuation in this file is the data.
# ruff: noqa: RUF001, RUF003
import datetime
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from lxml import etree

from catalog.demo.services import DEMO_CATALOG
from catalog.models import (
    Category,
    CodeLink,
    Paper,
    PaperAuthor,
    PaperProvenance,
    PaperTag,
    Summary,
    Tag,
    title_key,
)
from ingest import links
from tests.accounts_factories import CuratorFactory
from tests.arxiv_server import ATOM, with_id
from tests.factories import PaperFactory, TagFactory
from tools import build_demo as build

SEEDS = Path(__file__).parent / "data" / "seeds"
METADATA = json.loads(
    (Path(__file__).parent / "data" / "demo-metadata" / "arxiv_metadata.json").read_text("utf-8")
)
UTC = datetime.UTC


def load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue().strip()


def catalog_state() -> dict:
    """Everything a load writes, as comparable values."""
    return {
        "papers": sorted(
            Paper.objects.values_list(
                "id",
                "arxiv_id",
                "version",
                "title",
                "abstract",
                "comment",
                "author_names",
                "published_at",
                "published_precision",
                "updated_at",
                "added_at",
                "primary_category__code",
                "is_visible",
            )
        ),
        "authors": sorted(PaperAuthor.objects.values_list("paper_id", "author__name", "position")),
        "categories": sorted(
            Paper.categories.through.objects.values_list("paper_id", "category_id")
        ),
        "provenance": sorted(
            PaperProvenance.objects.values_list("paper_id", "confidence", "sources", "notes")
        ),
        "tags": sorted(Tag.objects.values_list("id", "name", "slug", "description")),
        "paper_tags": sorted(PaperTag.objects.values_list("paper_id", "tag_id", "added_at")),
        "code_links": sorted(CodeLink.objects.values_list("paper_id", "url", "kind", "source")),
        "summaries": sorted(
            Summary.objects.values_list(
                "paper_id", "language", "kind", "body", "backend", "written_by", "status"
            )
        ),
    }


@pytest.mark.django_db
def test_load_creates_the_demo_catalog():
    assert load_demo() == "Loaded 60 papers, 7 tags, 38 code links, 120 summaries"

    assert Paper.objects.count() == 60
    # The Korean list's 20 ids and 37 of the digests' 40, found by title.
    assert Paper.objects.exclude(arxiv_id=None).count() == 57
    assert set(Tag.objects.values_list("name", "slug")) == {
        ("R1_Reasoning", "r1-reasoning"),
        ("Reinforcement_Learning", "reinforcement-learning"),
        ("Retrieval_Augmented_Generation", "retrieval-augmented-generation"),
        ("Multimodal", "multimodal"),
        ("Agents", "agents"),
        ("Math_Reasoning", "math-reasoning"),
        ("Verifiers", "verifiers"),
    }
    assert not Tag.objects.filter(description="").exists()
    assert Tag.objects.get(slug="r1-reasoning").papers.count() == 40
    assert CodeLink.objects.count() == 38
    assert set(CodeLink.objects.values_list("kind", flat=True)) == {"official"}
    # Four more than the pages' text gives, from the pages the facts were read from.
    assert CodeLink.objects.filter(source="other").count() == 4
    assert Summary.objects.count() == 120
    assert set(Summary.objects.values_list("backend", "status")) == {("llm", "published")}


@pytest.mark.django_db
def test_a_listed_paper_gets_the_arxiv_facts_gathered_for_it_with_their_provenance():
    load_demo()

    paper = Paper.objects.get(arxiv_id="2505.15034")
    assert paper.title == (
        "RL Tango: Reinforcing Generator and Verifier Together for Language Reasoning"
    )
    assert paper.abstract.endswith("Code is at: https://github.com/kaiwenzha/rl-tango.")
    assert paper.version == 2
    assert paper.published_at == datetime.datetime(2025, 5, 21, tzinfo=UTC)
    assert paper.published_precision == Paper.DatePrecision.DAY
    assert paper.published_label == "2025-05-21"
    # v2's date was not seen: none is made up.
    assert paper.updated_at is None
    assert list(paper.code_links.values_list("url", "kind", "source")) == [
        ("https://github.com/kaiwenzha/rl-tango", "official", "abstract")
    ]
    # Authors stored as ingest stores them: ordered rows and the names on the paper.
    assert list(paper.authors.order_by("paperauthor__position").values_list("name", flat=True)) == [
        "Kaiwen Zha",
        "Zhengqi Gao",
        "Maohao Shen",
        "Zhang-Wei Hong",
        "Duane S. Boning",
        "Dina Katabi",
    ]
    assert paper.author_names.startswith("Kaiwen Zha, Zhengqi Gao")
    assert paper.primary_category.code == "cs.LG"
    assert paper.primary_category.name == "Machine Learning"
    assert list(paper.categories.values_list("code", flat=True)) == ["cs.LG"]
    provenance = paper.provenance
    assert provenance.confidence == "abs page"
    assert provenance.sources == [
        "https://arxiv.org/abs/2505.15034",
        "https://arxiv.org/html/2505.15034v2",
    ]
    assert provenance.notes.startswith("abs page snapshot shows a single submission")
    assert provenance.replaced_at is None
    # The list carries no summaries, and this paper is not in the digests' tag.
    assert not paper.summaries.exists()
    assert "r1-reasoning" not in paper.tags.values_list("slug", flat=True)


@pytest.mark.django_db
def test_a_digest_paper_found_by_title_gets_its_id_versions_and_categories():
    load_demo()

    paper = Paper.objects.get(title__startswith="AgenTracer:")
    assert paper.arxiv_id == "2509.03312"
    assert paper.get_absolute_url() == "/papers/2509.03312/"
    assert paper.abs_url == "https://arxiv.org/abs/2509.03312"
    assert paper.pdf_url == "https://arxiv.org/pdf/2509.03312"
    assert paper.versioned_id == "2509.03312v2"
    assert paper.list_date.text == "2025-09-03"
    assert [(date.label, date.text) for date in paper.other_dates] == [
        ("This version (v2)", "2025-09-04"),
        ("Added here", "2025-09-07"),
    ]
    assert paper.primary_category.code == "cs.CL"
    assert set(paper.categories.values_list("code", flat=True)) == {"cs.CL", "cs.MA"}
    assert paper.provenance.confidence == "abs page"

    strefer = Paper.objects.get(title__startswith="Strefer:")
    assert strefer.arxiv_id == "2509.03501"
    # Categories were seen, the primary one was not: it stays empty.
    assert strefer.primary_category is None
    assert set(strefer.categories.values_list("code", flat=True)) == {
        "cs.CV",
        "cs.AI",
        "cs.HC",
        "cs.LG",
    }
    assert strefer.provenance.confidence == "other page"


@pytest.mark.django_db
def test_papers_not_found_on_arxiv_stay_listings_and_say_so_to_curators():
    load_demo()

    id_less = Paper.objects.filter(arxiv_id=None).order_by("title")
    assert [paper.title[:6] for paper in id_less] == ["GeoFM:", "RTQA :", "VulRTe"]
    for paper in id_less:
        assert paper.published_at is None
        assert paper.primary_category is None
        assert paper.provenance.notes.startswith("Not found")
        assert paper.get_absolute_url() == f"/p/{paper.pk}/"


@pytest.mark.django_db
def test_a_real_arxiv_lookup_replaces_the_gathered_facts_and_the_provenance_says_so(fake_arxiv):
    load_demo()
    fetched = with_id(fake_arxiv.entries[0], "2505.15034", version=3)
    fake_arxiv.serve([fetched])
    arxiv_authors = [
        " ".join(name.split())
        for name in etree.fromstring(fetched).xpath(
            ".//a:author/a:name/text()", namespaces={"a": ATOM[1:-1]}
        )
    ]

    links.add_papers(links.request_papers(text="arXiv:2505.15034", by="test"))

    paper = Paper.objects.get(arxiv_id="2505.15034")
    assert paper.version == 3
    assert paper.author_list == arxiv_authors != METADATA[0]["authors"]
    assert paper.published_at != datetime.datetime(2025, 5, 21, tzinfo=UTC)
    assert paper.provenance.replaced_at is not None
    # The demo's curation stays.
    assert paper.tags.exists()
    # Papers arXiv was not asked about keep their gathered facts.
    assert not PaperProvenance.objects.exclude(paper=paper).exclude(replaced_at=None).exists()


@pytest.mark.django_db
def test_curators_see_the_provenance_in_admin_and_cannot_change_it(client):
    load_demo()
    paper = Paper.objects.get(arxiv_id="2510.27566")
    client.force_login(CuratorFactory())

    html = client.get(f"/admin/catalog/paper/{paper.pk}/change/").content.decode()

    assert "Provenance of the metadata" in html
    assert "other page" in html
    for url in paper.provenance.sources:
        assert f'<a href="{url}" rel="noreferrer">' in html
    assert 'name="provenance-0-notes"' not in html
    # Readers see the facts, not the notes.
    page = client.get(paper.get_absolute_url()).content.decode()
    assert paper.provenance.notes[:40] not in page


@pytest.mark.django_db
def test_categories_have_their_counts(client):
    load_demo()

    counted = {category.code: category.papers.count() for category in Category.objects.all()}
    assert counted == {
        "cs.AI": 23,
        "cs.CL": 29,
        "cs.CR": 1,
        "cs.CV": 2,
        "cs.FL": 1,
        "cs.HC": 1,
        "cs.IR": 1,
        "cs.LG": 11,
        "cs.MA": 2,
    }
    html = client.get("/categories/").content.decode()
    assert "No categorised papers yet" not in html
    assert "cs.CL" in html
    listed = client.get("/categories/cs.CL/").context["page"].paginator.count
    assert listed == 29


@pytest.mark.django_db
def test_a_digest_paper_has_its_authors_comment_and_three_chinese_summaries():
    load_demo()

    paper = Paper.objects.get(title__startswith="Strefer:")
    assert paper.added_at == datetime.datetime(2025, 9, 7, tzinfo=UTC)
    assert paper.comment.startswith("This technical report serves as the archival version")
    assert paper.author_names.startswith("Honglu Zhou, Xiangyu Peng, Shrikant Kendre")
    assert list(paper.code_links.values_list("url", "source")) == [
        ("https://strefer.github.io", "comment")
    ]
    assert PaperTag.objects.get(paper=paper, tag__slug="r1-reasoning").added_at == (
        datetime.datetime(2025, 9, 7, tzinfo=UTC)
    )

    summaries = {s.kind: s for s in paper.summaries.all()}
    assert set(summaries) == {"translation", "summary", "takeaways"}
    for summary in summaries.values():
        assert summary.language == "zh-hans"
        assert summary.backend == Summary.Backend.LLM
        assert summary.written_by == "ChatPaperFree digest, 2025-09-07"
        assert summary.status == Summary.Status.PUBLISHED
    assert summaries["translation"].body.startswith("下一代人工智能伴侣必须超越一般的视频理解")
    assert summaries["summary"].body.startswith("新一代AI伴侣需要超越一般的视频理解")
    takeaways = summaries["takeaways"].body.split("\n")
    assert [line.split(". ", 1)[0] for line in takeaways] == ["1", "2", "3", "4", "5", "6"]
    assert takeaways[0] == "1. 下一代AI需要解决动态现实环境中的空间和时间参考问题。"


@pytest.mark.django_db
def test_digest_irregularities_are_read_as_what_they_are():
    load_demo()

    # Summary text on the heading's line, "Key Takeaways：".
    medcalc = Paper.objects.get(title__startswith="MedCalc-Eval")
    assert medcalc.summaries.get(kind="summary").body.startswith(
        "随着大型语言模型（LLM）进入医疗领域"
    )
    assert medcalc.summaries.get(kind="takeaways").body.count("\n") == 5
    # Chinese headings 摘要 and 关键见解.
    prof = Paper.objects.get(title__startswith="Beyond Correctness")
    assert prof.summaries.count() == 3
    # Bullets instead of numbers still make a numbered list.
    survey = Paper.objects.get(title__startswith="AutoSurvey2")
    assert survey.summaries.get(kind="takeaways").body.startswith("1. autosurvey2是")
    # A translation in two paragraphs.
    pacs = Paper.objects.get(title__startswith="Implicit Actor Critic")
    assert pacs.summaries.get(kind="translation").body.count("\n\n") == 1
    # Takeaways the digest wrote in English are filed as English.
    evoemo = Paper.objects.get(title__startswith="EvoEmo")
    assert sorted(evoemo.summaries.values_list("language", "kind")) == [
        ("en", "takeaways"),
        ("zh-hans", "summary"),
        ("zh-hans", "translation"),
    ]
    # LaTeX \href and an http:// project page.
    assert Paper.objects.get(title__startswith="Mechanics of Learned").code_links.get().url == (
        "https://github.com/nik-hz/tempobench"
    )
    assert Paper.objects.get(title__startswith="Scaling Latent").code_links.get().url == (
        "https://ouro-llm.github.io"
    )


@pytest.mark.django_db
def test_no_facts_are_invented():
    """Every id, date, author and category is one the gathered facts give, or the
    month a new-style id encodes when the first submission day was not seen."""
    load_demo()

    papers = {paper.title_key: paper for paper in Paper.objects.all()}
    for fact in METADATA:
        paper = papers[title_key(fact["seed_title"])]
        assert paper.arxiv_id == fact["arxiv_id"]
        if not fact["arxiv_id"]:
            assert paper.published_at is None
            assert paper.added_at in {
                datetime.datetime(2025, 9, 7, tzinfo=UTC),
                datetime.datetime(2025, 11, 5, tzinfo=UTC),
            }
        elif fact["first_submitted"]:
            day = datetime.date.fromisoformat(fact["first_submitted"])
            assert paper.published_at == datetime.datetime.combine(day, datetime.time(), UTC)
            assert paper.published_precision == Paper.DatePrecision.DAY
        else:
            year, month = 2000 + int(paper.arxiv_id[:2]), int(paper.arxiv_id[2:4])
            assert paper.published_at == datetime.datetime(year, month, 1, tzinfo=UTC)
            assert paper.published_precision == Paper.DatePrecision.MONTH
        assert (paper.updated_at and paper.updated_at.date().isoformat()) == (
            fact["latest_submitted"]
        )
        assert paper.version == (
            int(fact["latest_version"][1:]) if fact["latest_version"] else None
        )
        if fact["authors"]:
            assert paper.author_list == fact["authors"]
        assert (paper.primary_category and paper.primary_category.code) == (
            fact["primary_category"]
        )
        assert set(paper.categories.values_list("code", flat=True)) == {
            *(fact["categories"] or []),
            *filter(None, [fact["primary_category"]]),
        }
        assert paper.provenance.sources == fact["sources"]
    assert not Paper.objects.exclude(announced_at=None).exists()


@pytest.mark.django_db
def test_a_second_load_changes_nothing_and_curators_edits_survive(django_assert_max_num_queries):
    load_demo()
    tango = Paper.objects.get(arxiv_id="2505.15034")
    tango.title = "RL Tango (curated title)"
    tango.save()
    tango.code_links.all().delete()
    emu = Paper.objects.get(title__startswith="Emu3.5")
    emu.summaries.filter(kind="summary").delete()
    emu.is_visible = False
    emu.save()
    Tag.objects.filter(slug="agents").update(description="Curated description.")
    before = catalog_state()

    with django_assert_max_num_queries(4):
        assert load_demo() == "Demo data already loaded: nothing to do"

    assert catalog_state() == before
    tango.refresh_from_db()
    assert tango.title == "RL Tango (curated title)"
    assert not tango.code_links.exists()
    assert not emu.summaries.filter(kind="summary").exists()
    assert Tag.objects.get(slug="agents").description == "Curated description."


@pytest.mark.django_db
def test_papers_already_in_the_catalog_are_left_as_they_are():
    ingested = PaperFactory(arxiv_id="2505.15034", title="RL Tango, as ingested", abstract="")
    listed = PaperFactory(
        arxiv_id=None, title="emu3.5 - native multimodal models are world learners"
    )
    curated_tag = TagFactory(name="R1 Reasoning", slug="r1-reasoning", description="Ours.")

    assert load_demo() == "Loaded 58 papers, 6 tags, 35 code links, 117 summaries"

    ingested.refresh_from_db()
    assert ingested.title == "RL Tango, as ingested"
    assert not ingested.code_links.exists()
    assert not listed.summaries.exists()
    assert Paper.objects.filter(title_key=listed.title_key).count() == 1
    curated_tag.refresh_from_db()
    assert (curated_tag.name, curated_tag.description) == ("R1 Reasoning", "Ours.")
    assert curated_tag.papers.count() == 39


@pytest.mark.django_db
def test_a_paper_deleted_after_loading_comes_back_on_the_next_load():
    load_demo()
    Paper.objects.filter(arxiv_id="2505.14625").delete()

    assert load_demo() == "Loaded 1 papers, 0 tags, 1 code links, 0 summaries"
    assert Paper.objects.get(arxiv_id="2505.14625").code_links.count() == 1


def test_the_committed_demo_catalog_is_what_the_pages_and_the_gathered_facts_give():
    built = build.build(SEEDS, metadata=METADATA)

    assert built == json.loads(DEMO_CATALOG.read_text(encoding="utf-8"))


PAPER_LIST = """PyTorchKR Papers

arXiv:2505.15034공식 코드 · Papers with Code

RL Tango: Reinforcing Generator and Verifier Together for Language Reasoning

We train a generator and a verifier together. Code is at: https://github.com/kaiwenzha/rl-tango.
"""

DIGEST = """R1_Reasoning

2025-11-05 更新

RL Tango: reinforcing generator and verifier together for language reasoning

Authors:Kaiwen Zha, Zhengqi Gao

We train a generator and a verifier together with RL.

我们一起训练生成器和验证器。

论文及项目相关链接

PDF Project page: https://rl-tango.example.org/

Summary：本文提出了Tango。

Key Takeaways：

• 生成器和验证器一起训练。
• 验证器是生成式的，
  并且通过强化学习训练。

Cool Papers

点此查看论文截图
"""


def test_a_paper_on_several_pages_is_one_paper_combining_them(tmp_path):
    (tmp_path / "list.txt").write_text(PAPER_LIST, encoding="utf-8")
    (tmp_path / "digest.txt").write_text(DIGEST, encoding="utf-8")

    (paper,) = build.build(tmp_path, metadata=[])["papers"]

    assert paper["arxiv_id"] == "2505.15034"
    assert paper["title"].startswith("RL Tango: Reinforcing")
    assert paper["published_at"] == "2025-05-01T00:00:00+00:00"
    assert paper["added_at"] == "2025-11-05T00:00:00+00:00"
    assert paper["authors"] == ["Kaiwen Zha", "Zhengqi Gao"]
    assert paper["comment"] == "Project page: https://rl-tango.example.org/"
    assert paper["code_links"] == [
        {"url": "https://github.com/kaiwenzha/rl-tango", "source": "abstract", "kind": "official"},
        {"url": "https://rl-tango.example.org", "source": "comment", "kind": "official"},
    ]
    assert {tag["name"]: tag["added_at"] for tag in paper["tags"]} == {
        "R1_Reasoning": "2025-11-05T00:00:00+00:00",
        # Named in the title.
        "Reinforcement_Learning": None,
        "Verifiers": None,
    }
    assert [(s["kind"], s["body"]) for s in paper["summaries"]] == [
        ("translation", "我们一起训练生成器和验证器。"),
        ("summary", "本文提出了Tango。"),
        ("takeaways", "1. 生成器和验证器一起训练。\n2. 验证器是生成式的， 并且通过强化学习训练。"),
    ]


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("Some other page\n\nwith text\n", "neither a paper list nor a digest"),
        ("List\n\narXiv:not-an-id공식 코드\n\nTitle\n\nAbstract\n", "not an arXiv id"),
        ("List\n\narXiv:2505.15034공식 코드\n\nA title alone\n", "needs a title and an abstract"),
        (DIGEST.replace("We train a generator and a verifier together with RL.", ""), "no English"),
        (DIGEST + "\nStray text\n", "text after the footer"),
    ],
)
def test_a_page_the_parser_does_not_know_is_reported(tmp_path, page, message):
    (tmp_path / "page.txt").write_text(page, encoding="utf-8")

    with pytest.raises(build.PageError, match=message):
        build.build(tmp_path, metadata=[])
