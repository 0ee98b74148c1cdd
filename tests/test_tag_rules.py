import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from lxml import etree

from catalog.models import Paper, PaperTag
from ingest import runs, tagging
from ingest.tagging import apply_tag_rules
from tests.arxiv_server import ATOM, entry_id
from tests.factories import CategoryFactory, PaperFactory, TagFactory
from tests.ingest_factories import IngestSourceFactory, TagRuleFactory

pytestmark = pytest.mark.django_db


def tagged(tag) -> set[str]:
    return set(PaperTag.objects.filter(tag=tag).values_list("paper__title", flat=True))


@pytest.mark.parametrize(
    ("keyword", "title", "matches"),
    [
        ("llm", "Scaling LLM reasoning", True),
        ("LLM", "llm-based agents", True),
        ("LLM", "Many LLMs disagree", False),
        ("test", "Testing compilers", False),
        ("test", "A new test. For compilers", True),
        ("large language model", "A Large   Language\nModel for code", True),
        ("C++", "Fuzzing C++ programs", True),
        ("C++", "Fuzzing C programs", False),
    ],
)
def test_keywords_match_case_insensitively_on_word_boundaries(keyword, title, matches):
    rule = TagRuleFactory(keywords=f"unrelated phrase\n{keyword}\n")
    PaperFactory(title=title, abstract="Nothing to see.")

    added = apply_tag_rules()

    assert added == int(matches)
    assert tagged(rule.tag) == ({title} if matches else set())


def test_keywords_are_found_in_the_abstract_too():
    rule = TagRuleFactory(keywords="retrieval")
    PaperFactory(title="A plain title", abstract="We study Retrieval augmented generation.")

    apply_tag_rules()

    assert tagged(rule.tag) == {"A plain title"}


def test_categories_alone_decide_a_rule_without_keywords():
    rule = TagRuleFactory(keywords="", categories="cs.CL cs.IR")
    ir, cv = CategoryFactory(code="cs.IR"), CategoryFactory(code="cs.CV")
    PaperFactory(title="Listed under IR", primary_category=cv, categories=[cv, ir])
    PaperFactory(title="Primary CL only", categories=[cv])
    PaperFactory(title="Vision only", primary_category=cv)

    apply_tag_rules()

    assert tagged(rule.tag) == {"Listed under IR", "Primary CL only"}


def test_keywords_and_categories_must_both_match():
    rule = TagRuleFactory(keywords="reasoning", categories="cs.CL")
    cv = CategoryFactory(code="cs.CV")
    PaperFactory(title="Reasoning in text", abstract="")
    PaperFactory(title="Visual reasoning", abstract="", primary_category=cv)
    PaperFactory(title="Parsing text", abstract="")

    apply_tag_rules()

    assert tagged(rule.tag) == {"Reasoning in text"}


def test_disabled_rules_and_papers_outside_the_given_ids_are_left_alone():
    enabled = TagRuleFactory(keywords="reasoning")
    disabled = TagRuleFactory(keywords="reasoning", enabled=False)
    chosen = PaperFactory(title="Reasoning, chosen")
    PaperFactory(title="Reasoning, not chosen")

    added = apply_tag_rules(paper_ids=[chosen.pk])

    assert added == 1
    assert tagged(enabled.tag) == {"Reasoning, chosen"}
    assert tagged(disabled.tag) == set()


def test_a_tag_already_given_keeps_its_date_and_is_not_counted():
    rule = TagRuleFactory(keywords="reasoning")
    paper = PaperFactory(title="Reasoning", tags=[rule.tag])
    given = PaperTag.objects.get(paper=paper).added_at

    assert apply_tag_rules() == 0
    assert PaperTag.objects.get(paper=paper).added_at == given


def test_the_whole_catalog_is_read_in_batches_with_a_fixed_number_of_queries(monkeypatch):
    monkeypatch.setattr(tagging, "BATCH_SIZE", 4)
    rule = TagRuleFactory(keywords="reasoning")
    PaperFactory.create_batch(4, title="Reasoning")
    with CaptureQueriesContext(connection) as one_batch:
        apply_tag_rules()
    PaperTag.objects.all().delete()
    PaperFactory.create_batch(4, title="More reasoning")

    with CaptureQueriesContext(connection) as two_batches:
        added = apply_tag_rules()

    assert added == 8
    assert Paper.objects.exclude(tags=rule.tag).count() == 0
    per_batch = len(two_batches) - len(one_batch)
    assert per_batch == len(one_batch) - 2  # the rules and the final empty read


def test_papers_are_tagged_as_they_are_ingested(fake_arxiv):
    rule = TagRuleFactory(keywords="", categories="cs.SE")
    source_tag = TagFactory()

    runs.run_source(source=IngestSourceFactory(tags=[source_tag]))

    in_cs_se = {
        entry_id(e)
        for e in fake_arxiv.entries[:25]
        if "cs.SE" in {c.get("term") for c in etree.fromstring(e).iter(f"{ATOM}category")}
    }
    assert in_cs_se
    assert set(rule.tag.papers.values_list("arxiv_id", flat=True)) == in_cs_se
    assert source_tag.papers.count() == 25


def test_apply_tag_rules_command_tags_the_catalog(capsys):
    rule = TagRuleFactory(keywords="reasoning")
    PaperFactory.create_batch(3, title="Reasoning")

    call_command("apply_tag_rules")

    assert capsys.readouterr().out.strip() == "Added 3 tags."
    assert rule.tag.papers.count() == 3


def test_an_empty_rule_is_refused():
    rule = TagRuleFactory.build(tag=TagFactory(), keywords="  \n", categories=" ")

    with pytest.raises(ValidationError, match="empty rule"):
        rule.full_clean()
