"""Tag and category counts kept by the database as the catalog changes, and
the author links' copy of their paper's date and visibility, which an
author's page counts and orders by.

Also run on SQLite by `make test`: both databases keep them with triggers.
"""

import datetime
import re

import pytest
from django.db import connection
from django.db.models import Count, Q

from catalog import counts
from catalog.models import (
    Category,
    CategoryCount,
    Paper,
    PaperAuthor,
    Tag,
    TagCount,
    visible_sql,
)
from catalog.services import set_authors
from tests.factories import CategoryFactory, PaperFactory, TagFactory

pytestmark = pytest.mark.django_db

VISIBLE = Q(papers__is_visible=True, papers__merged_into__isnull=True)


def shown_counts() -> tuple[dict[str, int], dict[str, int]]:
    tags = {tag.name: tag.paper_count for tag in counts.tags_with_counts()}
    categories = {c.code: c.paper_count for c in counts.categories_with_counts()}
    return tags, categories


def recounted() -> tuple[dict[str, int], dict[str, int]]:
    tags = Tag.objects.annotate(n=Count("papers", filter=VISIBLE))
    categories = Category.objects.annotate(n=Count("papers", filter=VISIBLE)).filter(n__gt=0)
    return {t.name: t.n for t in tags}, {c.code: c.n for c in categories}


def test_counts_follow_every_kind_of_change():
    agents, vision = TagFactory(name="Agents"), TagFactory(name="Vision")
    cl, cv = CategoryFactory(code="cs.CL"), CategoryFactory(code="cs.CV")
    first = PaperFactory(tags=[agents, vision], categories=[cl])
    second = PaperFactory(tags=[agents], categories=[cl, cv])
    hidden = PaperFactory(tags=[agents], categories=[cv], is_visible=False)
    assert shown_counts() == ({"Agents": 2, "Vision": 1}, {"cs.CL": 2, "cs.CV": 1})

    first.tags.remove(vision)
    second.categories.remove(cv)
    hidden.is_visible = True
    hidden.save()
    assert shown_counts() == ({"Agents": 3, "Vision": 0}, {"cs.CL": 2, "cs.CV": 1})

    second.merged_into = first
    second.save()
    Paper.objects.filter(pk=hidden.pk).update(is_visible=False)
    first.tags.add(vision)
    assert shown_counts() == ({"Agents": 1, "Vision": 1}, {"cs.CL": 1})

    second.merged_into = None
    second.save()
    first.delete()
    vision.delete()
    assert shown_counts() == ({"Agents": 1}, {"cs.CL": 1})
    assert shown_counts() == recounted()


def test_an_unrelated_update_of_a_paper_adds_no_part():
    paper = PaperFactory(tags=[TagFactory()])
    parts = TagCount.objects.count()

    paper.title = "Retitled"
    paper.save()
    Paper.objects.filter(pk=paper.pk).update(is_visible=True)

    assert TagCount.objects.count() == parts


def test_folding_keeps_the_counts_in_one_row_each_and_drops_deleted_targets():
    kept, deleted = TagFactory(name="Kept"), TagFactory(name="Deleted")
    for _ in range(3):
        PaperFactory(tags=[kept, deleted])
    PaperFactory(tags=[kept]).tags.clear()
    deleted.delete()
    assert TagCount.objects.filter(tag_id=kept.pk).count() > 1

    counts.fold()

    assert list(TagCount.objects.values_list("tag_id", "papers")) == [(kept.pk, 3)]
    assert CategoryCount.objects.count() == Category.objects.count()
    assert shown_counts() == recounted()
    counts.fold()  # folding folded counts changes nothing
    assert shown_counts() == recounted()


def test_recount_repairs_counts_written_around_the_triggers():
    tag = TagFactory(name="Agents")
    PaperFactory.create_batch(2, tags=[tag])
    TagCount.objects.all().delete()
    CategoryCount.objects.all().delete()
    assert shown_counts() == ({"Agents": 0}, {})

    counts.recount()

    assert shown_counts() == recounted() == ({"Agents": 2}, {"cs.CL": 2})


def test_recount_sets_the_triggers_again_when_they_were_dropped():
    tag = TagFactory(name="Agents")
    drop = {
        "postgresql": "DROP FUNCTION catalog_tagcount_links() CASCADE",
        "sqlite": "DROP TRIGGER catalog_papertag_insert_counts",
    }[connection.vendor]
    with connection.cursor() as cursor:
        cursor.execute(drop)
    PaperFactory(tags=[tag])
    assert shown_counts()[0] == {"Agents": 0}

    counts.recount()
    PaperFactory(tags=[tag])

    assert shown_counts() == recounted() == ({"Agents": 2}, {"cs.CL": 2})


def test_the_sql_form_of_the_visible_rule_selects_the_papers_visible_selects():
    target = PaperFactory()
    papers = {
        (shown, merged): PaperFactory(is_visible=shown, merged_into=target if merged else None)
        for shown in (True, False)
        for merged in (True, False)
    }
    condition = visible_sql(alias="p", connection=connection)

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT p.id FROM catalog_paper p WHERE {condition}")  # noqa: S608
        selected = {paper_id for (paper_id,) in cursor.fetchall()}

    assert selected == set(Paper.objects.visible().values_list("pk", flat=True))
    assert selected == {target.pk, papers[True, False].pk}


@pytest.mark.parametrize(
    "name", [counts.TRIGGERS, counts.RECOUNT, counts.AUTHOR_LINKS, counts.AUTHOR_LINKS_REFILL]
)
def test_the_sql_files_take_the_visible_rule_from_python(name):
    sql = "\n".join(counts.sql_statements(name, connection=connection))

    assert "VISIBLE(" not in sql
    assert visible_sql(alias="p", connection=connection) in sql


def author_page(client) -> tuple[str, list[str]]:
    """The author page's total line and its papers' titles, in order."""
    html = client.get("/authors/ada-lovelace/").content.decode()
    total = html.split('<p class="total">', 1)[1].split("</p>", 1)[0]
    titles = re.findall(r"data-paper-link>([^<]*)</a>", html)
    return total, titles


def test_an_authors_page_counts_and_orders_their_papers_as_the_papers_change(client):
    day = datetime.timedelta(days=1)
    now = datetime.datetime.now(datetime.UTC)
    older = PaperFactory(title="Older", authors=["Ada Lovelace"], published_at=now - 9 * day)
    newer = PaperFactory(title="Newer", authors=["Ada Lovelace"], published_at=now - 2 * day)
    hidden = PaperFactory(title="Hidden", authors=["Ada Lovelace"], is_visible=False)
    PaperFactory(title="Not hers", authors=["Alan Turing"])
    assert author_page(client) == ("2 papers", ["Newer", "Older"])

    older.published_at = now - day  # a new date from arXiv moves it up
    older.save()
    assert author_page(client) == ("2 papers", ["Older", "Newer"])

    hidden.is_visible = True
    hidden.save()
    Paper.objects.filter(pk=newer.pk).update(merged_into=older)
    assert author_page(client)[0] == "2 papers"
    assert set(author_page(client)[1]) == {"Older", "Hidden"}

    set_authors(hidden, ["Alan Turing"])  # a curator puts the byline right
    assert author_page(client) == ("1 paper", ["Older"])


def test_recount_repairs_author_links_written_around_the_triggers(client):
    PaperFactory(title="Hers", authors=["Ada Lovelace"])
    PaperAuthor.objects.update(listed_at=None, visible=False)
    assert author_page(client) == ("0 papers", [])

    counts.recount()

    assert author_page(client) == ("1 paper", ["Hers"])
