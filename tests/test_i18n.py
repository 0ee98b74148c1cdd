"""The site in English, Korean and Simplified Chinese."""

import datetime
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.core import mail
from django.test import Client

from accounts import services
from accounts.models import Profile
from catalog.models import PaperTag, Summary
from tests.accounts_factories import PASSWORD, SubscriptionFactory, UserFactory
from tests.factories import PaperFactory, SummaryFactory, TagFactory

LOCALE = Path(settings.BASE_DIR) / "locale"

# A few strings per page, each language's version.
PAGES = {
    "/": {"en": "Latest papers", "ko": "최신 논문", "zh-hans": "最新论文"},
    "/tags/": {"en": "Topics curated", "ko": "큐레이션 주제", "zh-hans": "精选的主题"},
    "/categories/": {"en": "Browse categories", "ko": "카테고리 탐색", "zh-hans": "浏览分类"},
    "/?page=abc": {"en": "not a page number", "ko": "첫 페이지를", "zh-hans": "现显示第一页"},
}


@pytest.fixture
def paper(db):
    paper = PaperFactory(arxiv_id="2505.15034", tags=[TagFactory(name="R1_Reasoning")])
    SummaryFactory(paper=paper, language="zh-hans", kind=Summary.Kind.TAKEAWAYS, body="1. 要点")
    return paper


@pytest.mark.parametrize("language", ["en", "ko", "zh-hans"])
def test_pages_follow_accept_language(client, paper, language):
    for path, expected in PAGES.items():
        html = client.get(path, HTTP_ACCEPT_LANGUAGE=language).content.decode()
        assert expected[language] in html, (path, language)
        assert f'<html lang="{language}"' in html

    html = client.get("/papers/2505.15034/", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    expected = {"en": "Key takeaways", "ko": "핵심 요점", "zh-hans": "要点"}[language]
    assert expected in html
    assert {"en": "Cite", "ko": "인용", "zh-hans": "引用"}[language] in html


def test_korean_total_reads_like_the_listing(client, paper):
    assert "총 1편" in client.get("/", HTTP_ACCEPT_LANGUAGE="ko").content.decode()


def test_form_errors_are_translated(client, paper):
    html = client.get("/?period=foo", HTTP_ACCEPT_LANGUAGE="ko").content.decode()

    assert "올바르게 선택해 주세요" in html


def test_the_switcher_sets_the_language_and_returns_to_the_page(client, paper):
    response = client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/tags/"})

    assert response.status_code == 302
    assert response["Location"] == "/tags/"
    assert "精选的主题" in client.get("/tags/").content.decode()


def test_the_switcher_refuses_to_redirect_off_site(client):
    response = client.post("/i18n/setlang/", {"language": "ko", "next": "https://evil.example/"})

    assert response["Location"] == "/"


@pytest.mark.django_db
def test_a_readers_choice_is_saved_and_follows_them_to_another_device(client):
    reader = UserFactory()
    client.login(username=reader.username, password=PASSWORD)

    client.post("/i18n/setlang/", {"language": "ko", "next": "/"})

    assert Profile.objects.get(user=reader).language == "ko"
    other_device = Client(HTTP_ACCEPT_LANGUAGE="en")
    assert "Latest papers" in other_device.get("/").content.decode()
    other_device.post("/accounts/login/", {"login": reader.email, "password": PASSWORD})
    assert "최신 논문" in other_device.get("/").content.decode()


@pytest.mark.django_db
def test_digests_are_written_in_the_readers_language():
    tag = TagFactory()
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=tag)
    now = datetime.datetime(2026, 3, 10, 9, tzinfo=datetime.UTC)
    Profile.objects.filter(user=reader).update(
        language="ko", last_digest_at=now - datetime.timedelta(days=1)
    )
    paper = PaperFactory()
    PaperTag.objects.create(paper=paper, tag=tag, added_at=now - datetime.timedelta(hours=1))

    services.send_due_digests(now=now)

    [message] = mail.outbox
    assert message.subject == "Papershelf: 구독 중인 주제의 새 논문 1편"
    assert "이 이메일 수신 거부" in message.body
    assert 'lang="ko"' in message.alternatives[0][0]


@pytest.mark.parametrize("language", ["ko", "zh_Hans"])
def test_every_string_is_translated_and_compiled(language):
    po = polib.pofile(str(LOCALE / language / "LC_MESSAGES" / "django.po"))
    mo = polib.mofile(str(LOCALE / language / "LC_MESSAGES" / "django.mo"))

    assert po.untranslated_entries() == []
    assert po.fuzzy_entries() == []
    compiled = {(e.msgid, e.msgstr or str(e.msgstr_plural)) for e in mo}
    for entry in po:
        assert (entry.msgid, entry.msgstr or str(entry.msgstr_plural)) in compiled, entry.msgid
