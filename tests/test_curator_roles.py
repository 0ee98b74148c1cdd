"""Curators curate without being superusers; a tag's editors handle that tag and nothing else."""

import pytest

from catalog.models import CurationEvent, Paper, PaperTag
from tests.accounts_factories import CuratorFactory, UserFactory, curators_group
from tests.factories import PaperFactory, SummaryFactory, TagFactory

pytestmark = pytest.mark.django_db

CURATOR_PERMISSIONS = {
    "catalog.view_paper",
    "catalog.add_paper",
    "catalog.change_paper",
    *(
        f"catalog.{a}_{m}"
        for m in ("papertag", "codelink", "summary", "paperauthor")
        for a in ("view", "add", "change", "delete")
    ),
    "catalog.view_author",
    "catalog.add_author",
    "catalog.change_author",
    "catalog.view_paperimage",
    "catalog.delete_paperimage",
    "catalog.view_category",
    "catalog.view_tag",
    "catalog.add_tag",
    "catalog.change_tag",
    "catalog.view_curationevent",
    *(
        f"ingest.{a}_{m}"
        for m in ("ingestsource", "tagrule")
        for a in ("view", "add", "change", "delete")
    ),
    "ingest.view_ingestrun",
    "ingest.view_oaiharvest",
    "ingest.view_inboxentry",
    "ingest.change_inboxentry",
    "ingest.view_linkrequest",
    "ingest.add_linkrequest",
    "curation.view_suggestedpaper",
    "curation.change_suggestedpaper",
    "curation.view_suggestion",
    "editions.view_edition",
    "editions.add_edition",
    "editions.change_edition",
    "editions.view_editionentry",
    "editions.add_editionentry",
    "editions.change_editionentry",
    "editions.delete_editionentry",
}


def test_the_curators_group_holds_exactly_what_curation_needs():
    granted = {
        f"{p.content_type.app_label}.{p.codename}"
        for p in curators_group().permissions.select_related("content_type")
    }

    assert granted == CURATOR_PERMISSIONS


@pytest.mark.parametrize(
    "path",
    [
        "/admin/",
        "/admin/catalog/paper/",
        "/admin/catalog/paper/add/",
        "/admin/ingest/linkrequest/add/",
        "/admin/ingest/linkrequest/",
        "/admin/ingest/inboxentry/",
        "/admin/curation/suggestedpaper/",
        "/admin/ingest/ingestsource/add/",
        "/admin/ingest/tagrule/add/",
        "/admin/ingest/ingestrun/",
        "/admin/catalog/tag/add/",
        "/admin/catalog/summary/",
        "/admin/catalog/curationevent/",
    ],
)
def test_a_curator_reaches_every_curation_page(client, path):
    curator = CuratorFactory()
    assert not curator.is_superuser
    client.force_login(curator)

    assert client.get(path).status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "/admin/auth/user/",
        "/admin/auth/group/",
        "/admin/accounts/profile/",
        "/admin/django_celery_beat/periodictask/",
    ],
)
def test_a_curator_cannot_manage_people_or_schedules(client, path):
    client.force_login(CuratorFactory())

    assert client.get(path).status_code == 403


def test_a_curator_hides_papers_but_cannot_delete_them(client):
    paper = PaperFactory()
    client.force_login(CuratorFactory())

    assert client.get(f"/admin/catalog/paper/{paper.pk}/delete/").status_code == 403
    actions = client.get("/admin/catalog/paper/").context["action_form"].fields["action"].choices
    names = {name for name, _ in actions}
    assert {"hide", "show", "add_tag", "publish_draft_summaries", "generate_summaries"} <= names
    assert "delete_selected" not in names


@pytest.fixture
def editor_client(client):
    editor = UserFactory(is_staff=True, username="tag-editor")
    client.force_login(editor)
    client.editor = editor
    return client


def test_a_tag_editor_sees_only_papers_and_their_tags(editor_client):
    mine = TagFactory(name="Robotics")
    mine.editors.add(editor_client.editor)
    TagFactory(name="Vision")
    PaperFactory()

    index = editor_client.get("/admin/").content.decode()
    assert "/admin/catalog/paper/" in index and "/admin/catalog/tag/" in index
    assert "/admin/ingest/" not in index
    papers = editor_client.get("/admin/catalog/paper/")
    actions = {name for name, _ in papers.context["action_form"].fields["action"].choices}
    assert actions == {"", "add_tag", "remove_tag"}
    assert [str(t) for t in papers.context["action_form"].fields["tag"].queryset] == ["Robotics"]
    tags = editor_client.get("/admin/catalog/tag/")
    assert [t.name for t in tags.context["cl"].result_list] == ["Robotics"]
    autocomplete = editor_client.get(
        "/admin/autocomplete/",
        {"term": "", "app_label": "catalog", "model_name": "paper", "field_name": "tags"},
    )
    assert [r["text"] for r in autocomplete.json()["results"]] == ["Robotics"]


def test_a_tag_editor_adds_and_removes_their_tag_only(editor_client):
    mine, other = TagFactory(name="Robotics"), TagFactory(name="Vision")
    mine.editors.add(editor_client.editor)
    paper = PaperFactory()

    def act(action, tag):
        return editor_client.post(
            "/admin/catalog/paper/",
            {"action": action, "_selected_action": [paper.pk], "tag": tag.pk},
            follow=True,
        )

    assert "Tagged 1 paper with Robotics." in act("add_tag", mine).content.decode()
    assert "Choose a tag first." in act("add_tag", other).content.decode()
    assert list(paper.tags.all()) == [mine]
    hidden = editor_client.post(
        "/admin/catalog/paper/", {"action": "hide", "_selected_action": [paper.pk]}, follow=True
    )
    assert Paper.objects.get(pk=paper.pk).is_visible
    assert hidden.status_code == 200
    act("remove_tag", mine)
    assert not PaperTag.objects.exists()
    assert list(CurationEvent.objects.order_by("id").values_list("action", "user__username")) == [
        ("tagged", "tag-editor"),
        ("untagged", "tag-editor"),
    ]


def test_a_tag_editor_edits_only_the_description_of_their_tag(editor_client):
    mine, other = TagFactory(name="Robotics", slug="robotics"), TagFactory(name="Vision")
    mine.editors.add(editor_client.editor)

    page = editor_client.get(f"/admin/catalog/tag/{mine.pk}/change/")
    assert list(page.context["adminform"].form.fields) == ["description"]
    editor_client.post(
        f"/admin/catalog/tag/{mine.pk}/change/",
        {"description": "Robots that learn.", "name": "Renamed", "slug": "renamed"},
    )

    mine.refresh_from_db()
    assert (mine.name, mine.slug, mine.description) == (
        "Robotics",
        "robotics",
        "Robots that learn.",
    )
    assert editor_client.get(f"/admin/catalog/tag/{other.pk}/change/").status_code in (302, 403)
    assert editor_client.get("/admin/catalog/tag/add/").status_code == 403
    paper = PaperFactory()
    SummaryFactory(paper=paper)
    assert editor_client.get(f"/admin/catalog/paper/{paper.pk}/change/").status_code == 200
    assert (
        editor_client.post(
            f"/admin/catalog/paper/{paper.pk}/change/", {"title": "Defaced"}
        ).status_code
        == 403
    )
    assert Paper.objects.get(pk=paper.pk).title != "Defaced"


def test_staff_naming_no_tag_see_nothing_to_curate(client):
    client.force_login(UserFactory(is_staff=True))

    assert client.get("/admin/catalog/paper/").status_code == 403
    assert client.get("/admin/catalog/tag/").status_code == 403
