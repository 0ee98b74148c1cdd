"""Credit for who found a paper: readers choose a public name and opt in; a
paper's page names its first public suggester and the curator who added it,
linking to their profiles at /readers/<name>/."""

import pytest
from django.core import checks
from django.test import Client
from django.utils import timezone

from accounts.models import Profile
from catalog.models import CurationEvent, Paper
from curation.models import SuggestedPaper, Suggestion
from ingest import links
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.arxiv_server import entry_id
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

SETTINGS = "/accounts/subscriptions/"
CHOOSE = "/accounts/public-profile/"


def make_public(user, name: str, *, public: bool = True) -> Profile:
    profile = user.profile
    profile.display_name, profile.public_profile = name, public
    profile.save()
    return profile


def suggested(paper, *readers, state=SuggestedPaper.State.ADDED) -> SuggestedPaper:
    """The paper suggested by the readers in turn, and taken in."""
    entry = SuggestedPaper.objects.create(arxiv_id=paper.arxiv_id, paper=paper, state=state)
    start = timezone.now() - timezone.timedelta(days=len(readers))
    for n, reader in enumerate(readers):
        Suggestion.objects.create(
            suggested_paper=entry,
            user=reader,
            link=paper.arxiv_id,
            created_at=start + timezone.timedelta(days=n),
        )
    return entry


def added_by(paper, curator) -> CurationEvent:
    return CurationEvent.objects.create(
        paper=paper, action=CurationEvent.Action.ADDED, user=curator, detail="by link"
    )


def page_of(paper, client=None) -> str:
    response = (client or Client()).get(paper.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def reader(client):
    user = UserFactory(username="ada-private-login", email="ada-secret@example.com")
    client.force_login(user)
    return user


def choose(client, name="", *, public=False, upvotes=False):
    data = {"display_name": name}
    if public:
        data["public_profile"] = "on"
    if upvotes:
        data["show_upvotes"] = "on"
    return client.post(CHOOSE, data)


# Choosing a name


def test_the_settings_page_offers_a_public_name_with_labels(client, reader):
    html = client.get(SETTINGS).content.decode()

    assert 'id="public-profile"' in html
    assert '<label for="id_display_name">Display name</label>' in html
    assert 'for="id_public_profile"' in html
    assert 'for="id_show_upvotes"' in html
    assert 'aria-describedby="id_display_name_helptext"' in html
    assert f'action="{CHOOSE}"' in html


def test_a_reader_chooses_a_valid_name_and_opts_in(client, reader):
    response = choose(client, "Ada_Lovelace", public=True, upvotes=True)

    assert response.status_code == 302
    assert response["Location"] == f"{SETTINGS}#public-profile"
    profile = Profile.objects.get(user=reader)
    assert (profile.display_name, profile.display_name_key) == ("Ada_Lovelace", "ada_lovelace")
    assert profile.public_profile and profile.show_upvotes
    html = client.get(SETTINGS).content.decode()
    assert "Your public profile settings are saved." in html
    assert 'href="/readers/Ada_Lovelace/"' in html


def test_names_in_other_scripts_are_allowed(client, reader):
    assert choose(client, "김연구", public=True).status_code == 302
    assert choose(client, "论文猎手", public=True).status_code == 302
    assert Profile.objects.get(user=reader).display_name == "论文猎手"


def test_a_name_taken_in_another_case_is_refused(client, reader):
    make_public(UserFactory(), "Ada")

    response = choose(client, "aDA", public=True)

    assert response.status_code == 400
    html = response.content.decode()
    assert "Another reader has this name; choose another." in html
    assert 'aria-invalid="true"' in html
    assert Profile.objects.get(user=reader).display_name == ""


def test_a_taken_name_given_in_admin_is_a_form_error(admin_client, reader):
    make_public(UserFactory(), "Ada")
    profile = Profile.objects.get(user=reader)

    response = admin_client.post(
        f"/admin/accounts/profile/{profile.pk}/change/",
        {
            "user": reader.pk,
            "digest_frequency": profile.digest_frequency,
            "last_digest_at_0": "2026-01-01",
            "last_digest_at_1": "00:00:00",
            "language": "",
            "display_name": "ADA",
            "public_profile": "on",
        },
    )

    assert response.status_code == 200
    assert "Another reader has this name; choose another." in response.content.decode()
    assert Profile.objects.get(user=reader).display_name == ""


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("admin", "This name is kept for the site; choose another."),
        ("Curators", "This name is kept for the site; choose another."),
        ("x" * 31, "A display name has 3 to 30 characters; this one has 31."),
        ("ab", "A display name has 3 to 30 characters; this one has 2."),
        ("ada lovelace", "Use letters and digits"),
        ("ada/../x", "Use letters and digits"),
        ("<b>ada</b>", "Use letters and digits"),
        ("-ada", "Use letters and digits"),
        ("ada--x", "Use letters and digits"),
    ],
)
def test_bad_names_are_refused_with_a_reason(client, reader, name, error):
    response = choose(client, name, public=True)

    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Profile.objects.get(user=reader).public_profile


def test_opting_in_needs_a_name(client, reader):
    response = choose(client, "", public=True)

    assert response.status_code == 400
    assert "Choose a display name to make your profile public." in response.content.decode()


def test_choosing_needs_a_login_and_a_post(client):
    response = client.post(CHOOSE, {"display_name": "Ada"})
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
    client.force_login(UserFactory())
    assert client.get(CHOOSE).status_code == 405


def test_the_form_works_in_korean_and_chinese(client, reader):
    client.cookies["django_language"] = "ko"
    assert "공개 프로필" in client.get(SETTINGS).content.decode()
    client.cookies["django_language"] = "zh-hans"
    html = choose(client, "admin", public=True).content.decode()
    assert "公开资料" in html
    assert "这个名字留给网站使用" in html


@pytest.mark.parametrize(
    ("language", "credit", "since", "heading"),
    [
        ("ko", '<a href="/readers/Ada/">Ada</a> 님 외 1명이 제안', "부터 독자", "제안한 논문"),
        (
            "zh-hans",
            '由 <a href="/readers/Ada/">Ada</a> 和另外 1 位读者推荐',
            "起成为读者",
            "推荐的论文",
        ),
    ],
)
def test_credit_and_profile_in_korean_and_chinese(reader, language, credit, since, heading):
    paper = PaperFactory()
    curator = CuratorFactory()
    make_public(reader, "Ada")
    make_public(curator, "Kim")
    suggested(paper, reader, UserFactory())
    added_by(paper, curator)
    anonymous = Client(HTTP_ACCEPT_LANGUAGE=language)

    html = page_of(paper, anonymous)
    profile = anonymous.get("/readers/Ada/").content.decode()

    assert credit in html
    assert {"ko": "님이 추가", "zh-hans": "添加"}[language] in html
    assert "Suggested by" not in html
    assert since in profile
    assert heading in profile


# Credit on the paper's page, and the profile


def test_without_opting_in_there_is_no_credit_and_no_profile(reader):
    paper = PaperFactory()
    make_public(reader, "Ada", public=False)
    curator = CuratorFactory()
    make_public(curator, "Kim", public=False)
    suggested(paper, reader)
    added_by(paper, curator)

    html = page_of(paper)

    assert "Suggested by" not in html
    assert "Added by" not in html
    assert "paper-credits" not in html
    assert Client().get("/readers/Ada/").status_code == 404
    assert Client().get("/readers/Kim/").status_code == 404
    assert Client().get("/readers/nobody-here/").status_code == 404


def test_an_opted_in_suggester_is_credited_with_a_link_to_their_profile(reader):
    paper = PaperFactory()
    first_private, later = UserFactory(), UserFactory()
    make_public(reader, "Ada")
    make_public(later, "Grace")
    suggested(paper, first_private, reader, later)

    html = page_of(paper)

    # The first suggester who opted in, and how many others suggested it.
    assert 'Suggested by <a href="/readers/Ada/">Ada</a> and 2 others' in html
    assert "Grace" not in html
    profile = Client().get("/readers/ada/")  # the name in any case
    assert profile.status_code == 200
    assert "<h1>Ada</h1>" in profile.content.decode()


def test_a_single_suggester_is_credited_alone(reader):
    paper = PaperFactory()
    make_public(reader, "Ada")
    suggested(paper, reader)

    assert 'Suggested by <a href="/readers/Ada/">Ada</a></span>' in page_of(paper)


def test_a_suggestion_not_yet_accepted_is_not_credited(reader):
    paper = PaperFactory()
    make_public(reader, "Ada")
    suggested(paper, reader, state=SuggestedPaper.State.PENDING)

    assert "Suggested by" not in page_of(paper)


def test_the_curator_who_added_a_paper_is_credited(reader):
    paper = PaperFactory()
    curator = CuratorFactory(username="curator-login")
    make_public(curator, "Kim")
    make_public(reader, "Ada")
    added_by(paper, curator)
    suggested(paper, reader)

    html = page_of(paper)

    assert 'Added by <a href="/readers/Kim/">Kim</a>' in html
    assert 'Suggested by <a href="/readers/Ada/">Ada</a>' in html
    assert "curator-login" not in html


def test_the_profile_lists_accepted_suggestions_newest_first_as_cards(reader):
    older, newer, pending, hidden = PaperFactory.create_batch(4)
    hidden.is_visible = False
    hidden.save()
    make_public(reader, "Ada")
    suggested(older, reader, UserFactory())
    suggested(newer, reader)
    suggested(pending, reader, state=SuggestedPaper.State.PENDING)
    suggested(hidden, reader)
    Suggestion.objects.filter(suggested_paper__paper=newer).update(created_at=timezone.now())

    response = Client().get("/readers/ADA/")

    html = response.content.decode()
    assert response.status_code == 200
    assert f"Reader since {reader.date_joined:%B %Y}" in html
    assert html.count('class="paper-card') == 2
    assert html.index(newer.get_absolute_url()) < html.index(older.get_absolute_url())
    assert pending.get_absolute_url() not in html
    assert hidden.get_absolute_url() not in html
    # Upvotes and comments wait for the parts of the site that keep them.
    assert "Papers they upvoted" not in html


def test_no_username_or_email_leaks(client, reader):
    paper = PaperFactory()
    curator = CuratorFactory(username="kim-login", email="kim-secret@example.com")
    make_public(reader, "Ada")
    make_public(curator, "Kim")
    suggested(paper, reader)
    added_by(paper, curator)

    pages = [
        page_of(paper),
        Client().get("/readers/Ada/").content.decode(),
        Client().get("/readers/Kim/").content.decode(),
    ]

    for html in pages:
        for secret in ("ada-private-login", "ada-secret", "kim-login", "kim-secret", "@example"):
            assert secret not in html


def test_a_profile_made_private_again_is_gone(reader):
    make_public(reader, "Ada")
    assert Client().get("/readers/Ada/").status_code == 200

    make_public(reader, "Ada", public=False)

    assert Client().get("/readers/Ada/").status_code == 404


def test_a_bad_profile_address_is_404_not_an_error():
    for name in ("a" * 500, "💥", "..", "admin", "%20"):
        assert Client().get(f"/readers/{name}/").status_code == 404


# Fresh cached pages


def test_opting_in_freshens_the_cached_paper_page(
    client, reader, redis_cache, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    suggested(paper, reader)
    assert "Suggested by" not in page_of(paper)  # and now cached

    with django_capture_on_commit_callbacks(execute=True):
        choose(client, "Ada", public=True)
    assert 'Suggested by <a href="/readers/Ada/">Ada</a>' in page_of(paper)

    with django_capture_on_commit_callbacks(execute=True):
        choose(client, "Ada", public=False)
    assert "Suggested by" not in page_of(paper)


def test_renaming_freshens_the_cached_paper_page(
    client, reader, redis_cache, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    suggested(paper, reader)
    with django_capture_on_commit_callbacks(execute=True):
        choose(client, "Ada", public=True)
    assert "/readers/Ada/" in page_of(paper)

    with django_capture_on_commit_callbacks(execute=True):
        choose(client, "Countess", public=True)

    html = page_of(paper)
    assert 'Suggested by <a href="/readers/Countess/">Countess</a>' in html
    assert "/readers/Ada/" not in html


def test_an_approved_suggestion_credits_its_reader_once_added(
    fake_arxiv, client, reader, curator_client, redis_cache, django_capture_on_commit_callbacks
):
    arxiv_id = entry_id(fake_arxiv.entries[0])
    choose(client, "Ada", public=True)
    client.post("/suggest/", {"link": arxiv_id})
    data = {"action": "approve", "_selected_action": [SuggestedPaper.objects.get().pk]}

    with django_capture_on_commit_callbacks(execute=True):
        curator_client.post("/admin/curation/suggestedpaper/", data, follow=True)

    paper = SuggestedPaper.objects.get().paper
    html = page_of(paper)
    assert 'Suggested by <a href="/readers/Ada/">Ada</a>' in html
    assert paper.get_absolute_url() in Client().get("/readers/Ada/").content.decode()


def test_a_setting_naming_no_credit_function_stops_the_site(settings):
    settings.PAPER_CREDITS = "curation.credits.nothing_here"

    assert "catalog.E002" in {message.id for message in checks.run_checks()}


def test_a_deactivated_reader_is_credited_nowhere(
    reader, redis_cache, django_capture_on_commit_callbacks
):
    paper = PaperFactory()
    make_public(reader, "Ada")
    suggested(paper, reader)
    assert "/readers/Ada/" in page_of(paper)  # and now cached

    with django_capture_on_commit_callbacks(execute=True):
        reader.is_active = False
        reader.save()

    assert "Suggested by" not in page_of(paper)
    assert Client().get("/readers/Ada/").status_code == 404


def test_a_curator_adding_by_link_is_credited(fake_arxiv):
    curator = CuratorFactory(username="kim-login")
    make_public(curator, "Kim")
    arxiv_id = entry_id(fake_arxiv.entries[0])

    links.add_papers(links.request_papers(text=arxiv_id, by=curator))

    html = page_of(Paper.objects.get(arxiv_id=arxiv_id))
    assert 'Added by <a href="/readers/Kim/">Kim</a>' in html
    assert "kim-login" not in html
