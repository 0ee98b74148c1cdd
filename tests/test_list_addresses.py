"""List addresses stay clean: a plain form's empty fields and default values are
redirected away, filters apply as they change (htmx) with a plain form beneath,
and each sort menu names the order its list is in."""

import pytest
from django.utils import timezone

from accounts.models import Profile
from discovery.models import Recommendation
from tests.accounts_factories import UserFactory
from tests.factories import PaperFactory, TagFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("dirty", "clean"),
    [
        # What the filter form sends without scripts: every field, filled or not.
        ("/?q=&sort=newest&period=&has_code=&from=&to=", "/"),
        ("/?q=agents&sort=relevance&period=30d&has_code=&from=&to=", "/?q=agents&period=30d"),
        ("/?sort=newest", "/"),
        ("/?page=1&tag=agents", "/?tag=agents"),
        ("/?sort=trending&window=7d", "/?sort=trending"),
        ("/trending/?sort=trending&window=7d", "/trending/"),
        ("/trending/?window=24h&period=", "/trending/?window=24h"),
        ("/tags/agents/?q=&sort=newest", "/tags/agents/"),
        ("/categories/cs.CL/?has_code=&page=1", "/categories/cs.CL/"),
    ],
)
def test_a_dirty_address_is_sent_to_its_clean_form(client, dirty, clean):
    TagFactory(name="Agents", slug="agents")
    PaperFactory()

    response = client.get(dirty)

    assert response.status_code == 302
    assert response["Location"] == clean
    assert client.get(clean).status_code == 200


@pytest.mark.parametrize(
    "path",
    ["/?q=agents&sort=newest", "/?sort=trending&window=24h", "/?utm_source=mail", "/?period=foo"],
)
def test_chosen_values_and_addresses_with_nothing_to_drop_are_served(client, path):
    PaperFactory()
    assert client.get(path).status_code == 200


def test_a_readers_lists_are_cleaned_too(client):
    client.force_login(UserFactory())
    for path in ("/feed/", "/saved/", "/feed/for-you/"):
        response = client.get(f"{path}?q=&period=&sort=newest")
        assert (response.status_code, response["Location"]) == (302, path)


def test_the_filters_apply_as_they_change_and_still_work_as_a_plain_form(client):
    PaperFactory()

    html = client.get("/").content.decode()

    start = html.index('<form class="filters"')
    form = html[start : html.index("</form>", start)]
    assert 'hx-get="/"' in form and 'hx-trigger="change"' in form and 'hx-push-url="true"' in form
    assert 'method="get" action="/"' in form
    assert '<button type="submit" class="button apply-button">Apply</button>' in form
    # A visitor's page fetches htmx when a filter first changes (static/js/site.js).
    assert 'data-htmx="/static/js/htmx.min.js"' in html
    assert '<script src="/static/js/htmx.min.js"' not in html


def test_the_first_page_link_has_no_page_number(client, settings):
    settings.PAPERS_PER_PAGE = 1
    PaperFactory.create_batch(3)

    html = client.get("/?page=3").content.decode()

    assert 'href="?">« First</a>' in html
    assert 'href="?page=2" rel="prev"' in html


def test_for_you_says_it_is_ranked_for_the_reader(client):
    reader = UserFactory()
    Recommendation.objects.create(user=reader, paper=PaperFactory(), score=0.5)
    Profile.objects.filter(user=reader).update(recommended_at=timezone.now())
    client.force_login(reader)

    html = client.get("/feed/for-you/").content.decode()

    assert '<p class="fixed-order">Best match for you</p>' in html
    assert 'name="sort"' not in html
    assert "Newest first" not in html


def test_trending_says_it_is_sorted_by_trending(client):
    PaperFactory()
    html = client.get("/trending/").content.decode()
    assert '<p class="fixed-order">Trending</p>' in html
    assert 'name="sort"' not in html
