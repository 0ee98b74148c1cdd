"""A curator tags a paper and hides another in the admin, and the site shows both changes."""

import pytest
from playwright.sync_api import expect

from tests.accounts_factories import PASSWORD, UserFactory
from tests.e2e.conftest import policy_violations
from tests.factories import PaperFactory, TagFactory

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_curator_tags_and_hides_papers_in_the_admin(page):
    curator = UserFactory(is_staff=True, is_superuser=True)
    tag = TagFactory(name="Reasoning", slug="reasoning")
    to_tag = PaperFactory(title="Self-checking chains of thought")
    to_hide = PaperFactory(title="A withdrawn result")

    page.goto("/admin/")
    page.fill("#id_username", curator.username)
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#site-name")).to_be_visible()

    page.goto("/admin/catalog/paper/")
    page.locator("tr", has_text=to_tag.title).locator("input.action-select").check()
    page.select_option("select[name=action]", "add_tag")
    page.select_option("select[name=tag]", str(tag.pk))
    page.get_by_role("button", name="Go").click()
    expect(page.locator(".messagelist")).to_be_visible()
    expect(page.locator("tr", has_text=to_tag.title)).to_contain_text("Reasoning")
    assert policy_violations(page) == []

    page.goto(f"/admin/catalog/paper/{to_hide.pk}/change/")
    page.uncheck("#id_is_visible")
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert policy_violations(page) == []

    page.goto("/tags/reasoning/")
    expect(page.locator(".paper-title")).to_have_text([to_tag.title])
    page.goto("/")
    expect(page.locator(".paper-title")).to_have_text([to_tag.title])
    response = page.goto(to_hide.get_absolute_url())
    assert response.status == 404
