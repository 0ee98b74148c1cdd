"""Authors: one per normalised name, each with a page; curators merge and split
them in admin; readers follow them into their feed, digest and private feed."""

import datetime
import importlib

import pytest
from django.apps import apps
from django.core import mail
from django.db import connection
from django.utils import timezone

from accounts import services as account_services
from accounts.models import Profile, Subscription
from catalog.models import Author, CurationEvent, Paper, PaperAuthor
from catalog.names import normalize_name
from catalog.services import set_authors, upsert_authors
from ingest.upsert import upsert_records
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, TagFactory
from tests.test_upsert import make_record

pytestmark = pytest.mark.django_db

renormalise = importlib.import_module("catalog.migrations.0022_authors_renormalised").renormalise


def author(name: str) -> Author:
    return Author.objects.get(normalized_name=normalize_name(name))


def test_names_differing_in_case_spacing_or_accents_are_one_author():
    assert normalize_name("José  García") == normalize_name("jose garcia") == "jose garcia"
    assert normalize_name("Zoë Ångström") == "zoe angstrom"
    assert normalize_name("김민준") == "김민준"  # Hangul is kept whole, not split into letters
    first = PaperFactory(authors=["José García", "Ada Lovelace"])
    second = PaperFactory(authors=["Jose  Garcia"])

    assert Author.objects.filter(name__icontains="garc").count() == 1
    garcia = author("Jose Garcia")
    assert garcia.name == "José García"  # named as first stored
    assert set(garcia.papers.all()) == {first, second}


def test_every_author_has_a_slug_told_apart_on_a_clash_and_kept_in_another_script():
    [plain, dotted, chinese] = upsert_authors(["J Smith", "J. Smith", "张伟"])

    assert plain.slug == "j-smith"
    assert dotted.slug == "j-smith-2"
    assert chinese.slug == "张伟"
    assert Author.objects.create(name="J  Smith!").slug == "j-smith-3"


def test_the_author_page_lists_their_visible_papers_coauthors_and_tags(client):
    agents = TagFactory(name="Agents", slug="agents")
    shown = [
        PaperFactory(title=f"Shown {n}", authors=["Ada Lovelace", "Alan Turing"], tags=[agents])
        for n in range(2)
    ]
    PaperFactory(title="With Grace", authors=["Ada Lovelace", "Grace Hopper"])
    PaperFactory(title="Hidden one", authors=["Ada Lovelace", "Hidden Friend"], is_visible=False)
    PaperFactory(title="Not hers", authors=["Alan Turing"])

    response = client.get("/authors/ada-lovelace/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Ada Lovelace</h1>" in html
    assert all(paper.title in html for paper in shown)
    assert "With Grace" in html
    assert "Hidden one" not in html and "Not hers" not in html
    assert "Hidden Friend" not in html
    assert '<a href="/authors/alan-turing/">Alan Turing</a> <span class="subtle">(2)</span>' in html
    assert (
        '<a href="/authors/grace-hopper/">Grace Hopper</a> <span class="subtle">(1)</span>' in html
    )
    assert '<a href="/tags/agents/">Agents</a> <span class="subtle">(2)</span>' in html
    assert "Log in to follow this author" in html
    assert "/feeds/authors/ada-lovelace.rss" in html


def test_the_author_page_takes_the_lists_filters_and_has_feeds(client):
    PaperFactory(
        title="Old work",
        authors=["Ada Lovelace"],
        published_at=timezone.now() - datetime.timedelta(days=400),
    )
    PaperFactory(title="New work", authors=["Ada Lovelace"])

    html = client.get("/authors/ada-lovelace/?period=30d").content.decode()
    feed = client.get("/feeds/authors/ada-lovelace.atom").content.decode()

    assert "New work" in html and "Old work" not in html
    assert "New work" in feed and "Old work" in feed
    assert client.get("/authors/ada-lovelace/export.bib").status_code == 200


@pytest.mark.parametrize(
    "path", ["/authors/nobody/", "/authors/%E2%80%AE/", "/feeds/authors/nobody.rss"]
)
def test_an_unknown_author_is_a_404_page(client, path):
    response = client.get(path)
    assert response.status_code == 404


def test_names_on_cards_and_the_paper_page_link_to_author_pages(client):
    paper = PaperFactory(title="Linked", authors=["Ada Lovelace", "张伟"])

    card = client.get("/").content.decode()
    page = client.get(paper.get_absolute_url()).content.decode()

    for html in (card, page):
        assert '<a href="/authors/ada-lovelace/">Ada Lovelace</a>' in html
        assert '<a href="/authors/%E5%BC%A0%E4%BC%9F/">张伟</a>' in html
    assert client.get("/authors/%E5%BC%A0%E4%BC%9F/").status_code == 200


def merge_in_admin(client, authors: list[Author], kept: Author):
    data = {"action": "merge", "_selected_action": [a.pk for a in authors]}
    asked = client.post("/admin/catalog/author/", data)
    assert "Keep which author?" in asked.content.decode()
    return client.post("/admin/catalog/author/", {**data, "kept": kept.pk}, follow=True)


def test_curators_merge_authors_and_later_ingests_of_the_merged_names_land_on_the_kept_one(
    curator_client, client
):
    both = PaperFactory(title="Both names", authors=["A. Lovelace", "Ada Lovelace", "Alan Turing"])
    only_short = PaperFactory(title="Short name", authors=["A. Lovelace"])
    PaperFactory(title="Long name", authors=["Ada Lovelace"])
    short, long = author("A. Lovelace"), author("Ada Lovelace")
    reader = UserFactory()
    SubscriptionFactory(user=reader, author=short)

    response = merge_in_admin(curator_client, [short, long], kept=long)

    assert "Merged into Ada Lovelace; 2 papers changed." in response.content.decode()
    both.refresh_from_db()
    only_short.refresh_from_db()
    assert both.author_list == ["Ada Lovelace", "Alan Turing"]
    assert both.author_slugs == ["ada-lovelace", "alan-turing"]
    assert only_short.author_list == ["Ada Lovelace"]
    assert PaperAuthor.objects.filter(author=short).count() == 0
    events = CurationEvent.objects.filter(action=CurationEvent.Action.AUTHORS_MERGED)
    assert {e.paper_id for e in events} == {both.pk, only_short.pk}
    assert all(e.detail == "A. Lovelace into Ada Lovelace" for e in events)
    # The reader who followed the merged name follows the kept author.
    assert Subscription.objects.get(user=reader).author == long
    # The merged name's page sends readers on; its papers are on the kept one's.
    assert client.get("/authors/a-lovelace/").headers["Location"] == "/authors/ada-lovelace/"
    assert "Short name" in client.get("/authors/ada-lovelace/").content.decode()

    upsert_records([make_record(1, authors=("a. lovelace", "Grace Hopper"))])
    [ingested] = upsert_authors(["A.  Lovelace"])
    paper = Paper.objects.get(arxiv_id="2505.15001")
    assert ingested == long
    assert list(paper.authors.order_by("paperauthor__position")) == [long, author("Grace Hopper")]
    assert paper.author_slugs == ["ada-lovelace", "grace-hopper"]


def test_curators_split_an_author_moving_chosen_papers_to_another_person(curator_client):
    first = PaperFactory(title="Chemistry", authors=["Wei Zhang", "Marie Curie"])
    second = PaperFactory(title="Linguistics", authors=["Wei Zhang"])
    wei = author("Wei Zhang")
    address = f"/admin/catalog/author/{wei.pk}/split/"
    assert (
        "Move some papers to another author"
        in curator_client.get(f"/admin/catalog/author/{wei.pk}/change/").content.decode()
    )

    refused = curator_client.post(address, {"papers": [first.pk], "name": "wei  ZHANG"})
    assert "That is this author&#x27;s own name" in refused.content.decode()
    response = curator_client.post(address, {"papers": [first.pk], "name": "Wei Zhang (chemist)"})

    other = author("Wei Zhang (chemist)")
    assert response.headers["Location"] == f"/admin/catalog/author/{other.pk}/change/"
    first.refresh_from_db()
    assert first.author_list == ["Wei Zhang (chemist)", "Marie Curie"]
    assert first.author_slugs[0] == other.slug == "wei-zhang-chemist"
    assert list(wei.papers.all()) == [second]
    [event] = CurationEvent.objects.filter(action=CurationEvent.Action.AUTHOR_SPLIT)
    assert (event.paper_id, event.detail) == (first.pk, "Wei Zhang to Wei Zhang (chemist)")


def test_readers_without_change_permission_cannot_split(client):
    wei = Author.objects.create(name="Wei Zhang")
    client.force_login(UserFactory())
    assert client.get(f"/admin/catalog/author/{wei.pk}/split/").status_code == 302


def test_a_followed_authors_papers_come_into_the_feed_digest_and_private_feed(client):
    by_ada = PaperFactory(title="By Ada", authors=["Ada Lovelace"])
    PaperFactory(title="Not followed", authors=["Alan Turing"])
    reader = UserFactory()
    client.force_login(reader)

    followed = client.post("/authors/ada-lovelace/follow/", {"next": "/authors/ada-lovelace/"})
    page = client.get("/authors/ada-lovelace/").content.decode()
    feed = client.get("/feed/").content.decode()
    settings_page = client.get("/accounts/subscriptions/").content.decode()
    token = Profile.objects.get(user=reader).feed_token
    private = client.get(f"/feeds/private/{token}.rss").content.decode()

    assert followed.status_code == 302
    assert Subscription.objects.filter(user=reader, author=author("Ada Lovelace")).exists()
    assert "Unfollow" in page
    assert "By Ada" in feed and "Not followed" not in feed
    assert "You don't follow any tags or categories yet" not in feed
    assert "By Ada" in private and "Not followed" not in private
    assert (
        'href="/authors/ada-lovelace/">Ada Lovelace <span class="subtle">author</span>'
        in settings_page
    )

    profile = Profile.objects.select_related("user").get(user=reader)
    Profile.objects.filter(pk=profile.pk).update(
        digest_frequency="daily", last_digest_at=by_ada.added_at - datetime.timedelta(hours=1)
    )
    profile.refresh_from_db()
    assert account_services.send_digest(profile=profile, now=timezone.now())
    [message] = mail.outbox
    assert "By Ada" in message.body and "== Ada Lovelace ==" in message.body

    client.post("/authors/ada-lovelace/unfollow/", {"next": "/feed/"})
    assert "By Ada" not in client.get("/feed/").content.decode()


def test_following_an_author_while_logged_out_waits_for_log_in(client):
    Author.objects.create(name="Ada Lovelace")
    response = client.post("/authors/ada-lovelace/follow/")
    assert response.status_code == 302 and "/accounts/login/" in response.headers["Location"]
    assert client.post("/authors/nobody/follow/").status_code == 404


def test_the_migration_folds_existing_names_merging_the_rows_that_become_one():
    # As stored before accents were folded, and before slugs.
    Author.objects.bulk_create(
        [
            Author(name="José García", normalized_name="josé garcía", slug="before-1"),
            Author(name="Jose Garcia", normalized_name="jose garcia", slug="before-2"),
        ]
    )
    accented, plain = Author.objects.order_by("pk")
    paper = PaperFactory()
    PaperAuthor.objects.bulk_create(
        [
            PaperAuthor(paper=paper, author=accented, position=0),
            PaperAuthor(paper=paper, author=plain, position=1),
        ]
    )
    other = PaperFactory()
    PaperAuthor.objects.create(paper=other, author=plain, position=0)

    with connection.schema_editor() as editor:
        renormalise(apps, editor)

    [kept] = Author.objects.filter(name__icontains="garc")
    assert (kept.pk, kept.normalized_name, kept.slug) == (accented.pk, "jose garcia", "jose-garcia")
    paper.refresh_from_db()
    other.refresh_from_db()
    assert paper.author_list == ["José García"] and paper.author_slugs == ["jose-garcia"]
    assert other.author_list == ["José García"]


def test_set_authors_keeps_names_and_slugs_in_step():
    paper = PaperFactory()
    set_authors(paper, ["Ada Lovelace", "Alan Turing"])
    paper.refresh_from_db()
    assert paper.credited_authors == [
        ("Ada Lovelace", "ada-lovelace"),
        ("Alan Turing", "alan-turing"),
    ]


def test_renaming_an_author_to_another_authors_name_is_a_form_error(curator_client):
    PaperFactory(authors=["Ada Lovelace", "A. Lovelace"])
    short = author("A. Lovelace")

    response = curator_client.post(
        f"/admin/catalog/author/{short.pk}/change/", {"name": "ADA lovelace"}
    )

    assert response.status_code == 200
    assert "merge the two from the list of authors instead" in response.content.decode()
    renamed = curator_client.post(
        f"/admin/catalog/author/{short.pk}/change/", {"name": "Ada K. Lovelace"}
    )
    assert renamed.status_code == 302
    assert Paper.objects.get().author_list == ["Ada Lovelace", "Ada K. Lovelace"]


def test_co_authors_and_tags_are_counted_over_the_authors_latest_papers(client, monkeypatch):
    monkeypatch.setattr("catalog.selectors.AUTHOR_CREDITS_WITHIN", 2)
    monkeypatch.setattr("catalog.views.AUTHOR_CREDITS_WITHIN", 2)
    old = timezone.now() - datetime.timedelta(days=30)
    PaperFactory(title="Oldest", authors=["Ada Lovelace", "Old Friend"], published_at=old)
    for n in range(2):
        PaperFactory(title=f"New {n}", authors=["Ada Lovelace", "Alan Turing"])

    html = client.get("/authors/ada-lovelace/").content.decode()

    assert "Oldest" in html and "New 0" in html and "New 1" in html  # the list has them all
    assert "Co-authors and tags among their latest 2 papers in the catalog." in html
    assert '<a href="/authors/alan-turing/">Alan Turing</a> <span class="subtle">(2)</span>' in html
    assert "Old Friend" not in html.split("Frequent co-authors")[1].split("</ul>")[0]


def test_the_author_page_lists_their_papers_newest_first(client):
    for n in range(3):
        PaperFactory(
            title=f"Work {n}",
            authors=["Ada Lovelace"],
            published_at=timezone.now() - datetime.timedelta(days=n),
        )
    html = client.get("/authors/ada-lovelace/").content.decode()

    assert html.index("Work 0") < html.index("Work 1") < html.index("Work 2")
