# The pages are Chinese: full-width punctuation in this file is the data.
# ruff: noqa: RUF001, RUF003
import datetime
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from catalog.demo.services import DEMO_CATALOG
from catalog.models import CodeLink, Paper, PaperAuthor, PaperTag, Summary, Tag
from tests.factories import PaperFactory, TagFactory
from tools import build_demo as build

SEEDS = Path(__file__).parent / "data" / "seeds"
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
                "added_at",
                "is_visible",
            )
        ),
        "authors": sorted(PaperAuthor.objects.values_list("paper_id", "author__name", "position")),
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
    assert load_demo() == "Loaded 60 papers, 7 tags, 34 code links, 120 summaries"

    assert Paper.objects.count() == 60
    assert Paper.objects.exclude(arxiv_id=None).count() == 20
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
    assert CodeLink.objects.count() == 34
    assert set(CodeLink.objects.values_list("kind", flat=True)) == {"official"}
    assert Summary.objects.count() == 120
    assert set(Summary.objects.values_list("backend", "status")) == {("llm", "published")}


@pytest.mark.django_db
def test_a_listed_paper_keeps_its_id_and_gets_the_month_the_id_gives():
    load_demo()

    paper = Paper.objects.get(arxiv_id="2505.15034")
    assert paper.title == (
        "RL Tango: Reinforcing Generator and Verifier Together for Language Reasoning"
    )
    assert paper.abstract.endswith("Code is at: https://github.com/kaiwenzha/rl-tango.")
    assert paper.version is None
    assert paper.published_at == datetime.datetime(2025, 5, 1, tzinfo=UTC)
    assert paper.published_precision == Paper.DatePrecision.MONTH
    assert paper.published_label == "2025-05"
    assert list(paper.code_links.values_list("url", "kind", "source")) == [
        ("https://github.com/kaiwenzha/rl-tango", "official", "abstract")
    ]
    # The list names no authors and carries no summaries.
    assert paper.author_names == ""
    assert not paper.summaries.exists()
    assert "r1-reasoning" not in paper.tags.values_list("slug", flat=True)


@pytest.mark.django_db
def test_a_digest_paper_has_its_authors_comment_and_three_chinese_summaries():
    load_demo()

    paper = Paper.objects.get(title__startswith="Strefer:")
    assert paper.arxiv_id is None
    assert paper.published_at is None
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
def test_no_dates_are_invented():
    load_demo()

    for paper in Paper.objects.exclude(arxiv_id=None):
        year, month = 2000 + int(paper.arxiv_id[:2]), int(paper.arxiv_id[2:4])
        assert paper.published_at == datetime.datetime(year, month, 1, tzinfo=UTC)
        assert paper.published_precision == Paper.DatePrecision.MONTH
    id_less = Paper.objects.filter(arxiv_id=None)
    assert not id_less.exclude(published_at=None).exists()
    assert set(id_less.values_list("added_at", flat=True)) == {
        datetime.datetime(2025, 9, 7, tzinfo=UTC),
        datetime.datetime(2025, 11, 5, tzinfo=UTC),
    }
    assert not Paper.objects.exclude(updated_at=None).exists()
    assert not Paper.objects.exclude(primary_category=None).exists()
    assert not Paper.categories.through.objects.exists()


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

    assert load_demo() == "Loaded 58 papers, 6 tags, 31 code links, 117 summaries"

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


def test_the_committed_demo_catalog_is_what_the_pages_give():
    built = build.build(SEEDS)

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

    (paper,) = build.build(tmp_path)["papers"]

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
        build.build(tmp_path)
