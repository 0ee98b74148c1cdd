"""Comments on papers: threads, Markdown, editing and deleting, reports, the
curators' holds and their log, limits, the paper page and cards, the feed,
the API, the profile and the followers' mail."""

import datetime
import re

import pytest
from django.core import mail as outbox
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts.services import create_api_token
from catalog.models import CurationEvent
from discussion import mail, selectors, services
from discussion.models import Comment, CommenterBan, CommentReport, DiscussionFollow
from tests.accounts_factories import CuratorFactory, UserFactory
from tests.factories import PaperFactory

pytestmark = pytest.mark.django_db

OLD = timezone.now() - datetime.timedelta(days=30)


@pytest.fixture
def paper():
    cache.clear()
    yield PaperFactory(arxiv_id="2505.00001")
    cache.clear()


@pytest.fixture
def reader():
    user = UserFactory(date_joined=OLD)
    user.profile.display_name = "Ada"
    user.profile.public_profile = True
    user.profile.save()
    return user


@pytest.fixture
def reader_client(reader):
    client = Client(raise_request_exception=False)
    client.force_login(reader)
    return client


def post(client, paper, body, **extra):
    return client.post(f"/discussion/{paper.pk}/post/", {"body": body, **extra})


def comment_by(user, paper, body="A comment.", parent=None):
    return services.post_comment(
        user=user, paper=paper, body=body, parent_id=parent.pk if parent else None
    )


def test_a_reader_comments_and_replies_and_sees_both_on_the_page(reader_client, reader, paper):
    response = post(reader_client, paper, "Nice **result**, $x^2$.")
    comment = Comment.objects.get()
    assert response.status_code == 302
    assert response["Location"].endswith(f"#comment-{comment.pk}")
    post(reader_client, paper, "A reply.", parent=comment.pk)
    reply = Comment.objects.exclude(pk=comment.pk).get()
    # A reply to the reply joins the top-level thread: two levels at most.
    post(reader_client, paper, "A reply to the reply.", parent=reply.pk)
    assert reply.parent_id == comment.pk
    assert Comment.objects.filter(parent=comment).count() == 2

    page = reader_client.get("/papers/2505.00001/discussion/")
    html = page.content.decode()
    assert page.status_code == 200
    assert ("<strong>result</strong>" in html and "katex" in html.lower()) or "math" in html
    assert "A reply to the reply." in html and "Ada" in html
    paper.refresh_from_db()
    assert paper.comment_count == 3
    assert DiscussionFollow.objects.filter(user=reader, paper=paper).exists()


def test_the_body_is_sanitised_as_summaries_are(reader, paper):
    comment = comment_by(reader, paper, "<script>alert(1)</script> [x](javascript:alert(1)) ok")
    assert "<script" not in comment.body_html and "javascript:" not in comment.body_html


def test_htmx_posts_answer_the_thread_with_the_new_comment(reader_client, paper):
    response = reader_client.post(
        f"/discussion/{paper.pk}/post/", {"body": "Swapped in."}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert 'id="discussion-body"' in response.content.decode()
    assert "Swapped in." in response.content.decode()


def test_a_long_discussion_is_read_a_page_of_threads_at_a_time(reader_client, reader, paper):
    other = UserFactory(date_joined=OLD)
    per_page = selectors.THREADS_PER_PAGE
    starters = [comment_by(other, paper, f"Thread {n}.") for n in range(per_page + 2)]
    # Replies stay with their thread, on its page, however late they come.
    comment_by(other, paper, "A late reply on the first page.", parent=starters[0])
    first = reader_client.get("/papers/2505.00001/discussion/").content.decode()
    assert "Thread 0." in first and f"Thread {per_page - 1}." in first
    assert f"Thread {per_page}." not in first and "A late reply on the first page." in first
    assert f'rel="next" href="/p/{paper.pk}/discussion/?page=2"' in first
    assert 'rel="prev"' not in first
    second = reader_client.get("/papers/2505.00001/discussion/?page=2").content.decode()
    assert f"Thread {per_page}." in second and f"Thread {per_page + 1}." in second
    assert "Thread 0." not in second and 'rel="next"' not in second
    assert f'rel="prev" href="/p/{paper.pk}/discussion/"' in second
    # The page's forms post back to it, and the fragment htmx swaps in pages too.
    assert f'action="/discussion/{paper.pk}/post/?page=2"' in second
    fragment = reader_client.get(f"/discussion/{paper.pk}/?page=2").content.decode()
    assert f"Thread {per_page + 1}." in fragment and "Thread 0." not in fragment

    # A new thread is on the last page, a reply on its thread's: posting leads there.
    response = post(reader_client, paper, "A new thread.")
    new = Comment.objects.get(body="A new thread.")
    assert response["Location"] == f"/p/{paper.pk}/discussion/?page=2#comment-{new.pk}"
    response = post(reader_client, paper, "A reply.", parent=starters[1].pk)
    reply = Comment.objects.get(body="A reply.")
    assert response["Location"] == f"/p/{paper.pk}/discussion/#comment-{reply.pk}"
    swapped = reader_client.post(
        f"/discussion/{paper.pk}/post/", {"body": "Swapped onto its page."}, HTTP_HX_REQUEST="1"
    ).content.decode()
    assert "Swapped onto its page." in swapped and "Thread 0." not in swapped


@pytest.mark.parametrize("page", ["9", "0", "-1", "x", "99999999999999999999", "1e3"])
def test_a_page_past_the_end_or_no_page_at_all_is_a_clear_answer(client, reader, paper, page):
    comment_by(reader, paper, "The only thread.")
    response = client.get(f"/papers/2505.00001/discussion/?page={page}")
    html = response.content.decode()
    assert response.status_code == 200
    if page == "9":
        assert "The discussion has fewer pages than that." in html
        assert "The only thread." not in html and 'rel="prev"' not in html
    else:
        assert "The only thread." in html


def test_the_paper_page_loads_the_discussion_and_links_to_it(client, paper, reader):
    comment_by(reader, paper)
    html = client.get("/papers/2505.00001/").content.decode()
    assert f'hx-get="/discussion/{paper.pk}/"' in html
    assert f'href="/p/{paper.pk}/discussion/"' in html and "1 comment" in html
    fragment = client.get(f"/discussion/{paper.pk}/").content.decode()
    assert "A comment." in fragment and "Log in to comment." in fragment


def test_cards_show_the_count_and_cached_lists_pick_it_up(client, paper, reader):
    assert "comments</a>" not in client.get("/").content.decode()
    comment_by(reader, paper)
    comment_by(reader, paper)
    html = client.get("/").content.decode()
    assert 'href="/papers/2505.00001/discussion/">2 comments</a>' in html


CSRF_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def discussion_html(client, paper):
    response = client.get(f"/discussion/{paper.pk}/")
    assert response.status_code == 200
    return CSRF_TOKEN.sub('name="csrfmiddlewaretoken" value="-"', response.content.decode())


def test_shared_comments_give_each_reader_the_discussion_rendered_afresh(paper, reader, settings):
    other = UserFactory(date_joined=OLD)
    editable = comment_by(reader, paper, "Mine, **fresh**.")
    settled = comment_by(reader, paper, "Mine, settled.")
    Comment.objects.filter(pk=settled.pk).update(created_at=OLD)
    theirs = comment_by(other, paper, "Theirs, $x^2$.")
    comment_by(other, paper, "A reply of theirs.", parent=editable)
    gone = comment_by(other, paper, "Soon deleted.")
    services.delete_comment(user=other, comment=gone)
    clients = {"visitor": Client()}
    for name, user in {"author": reader, "other": other}.items():
        clients[name] = Client()
        clients[name].force_login(user)

    def pages(size):
        settings.COMMENT_CACHE_SIZE = size
        return {name: discussion_html(client, paper) for name, client in clients.items()}

    fresh = pages(0)
    author, visitor = fresh["author"], fresh["visitor"]
    assert author.count(">Edit</a>") == 1 and f"/comments/{editable.pk}/edit/" in author
    assert f"/comments/{settled.pk}/delete/" in author
    assert f"/comments/{theirs.pk}/report/" in author
    assert f"/comments/{editable.pk}/report/" not in author and "Soon deleted." not in author
    assert f"/comments/{editable.pk}/report/" in fresh["other"]
    assert "/report/" not in visitor and "/delete/" not in visitor and "Theirs," in visitor
    assert author.count('name="parent"') == 3  # a reply form under each thread not deleted
    assert f'name="parent" value="{editable.pk}"' in author
    for _ in range(2):  # filling the store, then reading it
        assert pages(100) == fresh

    # What a comment shows changes its key: the store never serves it stale.
    services.edit_comment(user=reader, comment=editable, body="Mine, edited.")
    services.set_hidden(curator=CuratorFactory(), comment=theirs, hidden=True)
    reader.profile.display_name = "Ada Lovelace"
    reader.profile.save()
    # (Setting a size empties the stores, so the pages are asked for as they are.)
    changed = {name: discussion_html(client, paper) for name, client in clients.items()}
    assert "Mine, edited." in changed["visitor"] and "Mine, **fresh**" not in changed["visitor"]
    assert "Theirs," not in changed["other"] and "A curator hid this comment." in changed["other"]
    assert "Ada Lovelace" in changed["visitor"]
    assert changed == pages(0)


def test_edit_within_the_window_only(reader_client, reader, paper, settings):
    comment = comment_by(reader, paper)
    response = reader_client.post(f"/discussion/comments/{comment.pk}/edit/", {"body": "Better."})
    comment.refresh_from_db()
    assert response.status_code == 302 and comment.body == "Better." and comment.edited_at
    Comment.objects.filter(pk=comment.pk).update(created_at=OLD)
    late = reader_client.post(f"/discussion/comments/{comment.pk}/edit/", {"body": "Later."})
    assert late.status_code == 403
    assert Comment.objects.get(pk=comment.pk).body == "Better."


def test_only_the_author_edits_or_deletes(paper, reader):
    comment = comment_by(reader, paper)
    other = Client(raise_request_exception=False)
    other.force_login(UserFactory())
    assert other.post(f"/discussion/comments/{comment.pk}/edit/", {"body": "x"}).status_code == 403
    assert other.post(f"/discussion/comments/{comment.pk}/delete/").status_code == 403
    assert Comment.objects.get(pk=comment.pk).body == "A comment."


def test_deleting_keeps_the_replies_under_deleted(reader_client, reader, paper):
    comment = comment_by(reader, paper, "Gone soon.")
    comment_by(UserFactory(date_joined=OLD), paper, "Still here.", parent=comment)
    assert reader_client.post(f"/discussion/comments/{comment.pk}/delete/").status_code == 302
    html = reader_client.get(f"/p/{paper.pk}/discussion/", follow=True).content.decode()
    assert "Gone soon." not in html and "This comment was deleted." in html
    assert "Still here." in html
    paper.refresh_from_db()
    assert paper.comment_count == 1


def test_reporting_another_readers_comment_once(reader_client, paper):
    comment = comment_by(UserFactory(date_joined=OLD), paper)
    for _ in range(2):
        response = reader_client.post(
            f"/discussion/comments/{comment.pk}/report/", {"reason": "Spam"}
        )
        assert response.status_code == 302
    assert CommentReport.objects.get().reason == "Spam"
    own = comment_by(UserFactory(date_joined=OLD), paper)
    assert own.pk


def test_curators_hide_lock_and_stop_each_logged(paper, reader, reader_client):
    curator = CuratorFactory()
    comment = comment_by(reader, paper, "Rude words.")
    assert services.set_hidden(curator=curator, comment=comment, hidden=True)
    assert "Rude words." not in reader_client.get(f"/discussion/{paper.pk}/").content.decode()
    paper.refresh_from_db()
    assert paper.comment_count == 0
    services.set_hidden(curator=curator, comment=comment, hidden=False)
    services.set_locked(curator=curator, paper=paper, locked=True)
    assert post(reader_client, paper, "Locked?").status_code == 403
    services.set_locked(curator=curator, paper=paper, locked=False)
    services.set_banned(curator=curator, comment=comment, banned=True)
    assert post(reader_client, paper, "Stopped?").status_code == 403
    services.set_banned(curator=curator, comment=comment, banned=False)
    assert post(reader_client, paper, "Allowed.").status_code == 302
    actions = list(
        CurationEvent.objects.filter(paper=paper).order_by("id").values_list("action", flat=True)
    )
    assert actions == [
        "comment_hidden",
        "comment_shown",
        "thread_locked",
        "thread_unlocked",
        "commenter_stopped",
        "commenter_allowed",
    ]


def test_curator_admin_actions(paper, reader):
    curator = CuratorFactory(is_staff=True, is_superuser=True)
    comment = comment_by(reader, paper)
    CommentReport.objects.create(comment=comment, reporter=UserFactory(), reason="Spam")
    admin = Client()
    admin.force_login(curator)
    listing = admin.get("/admin/discussion/comment/")
    assert listing.status_code == 200
    for action in ("hide", "lock", "stop_author"):
        admin.post(
            "/admin/discussion/comment/", {"action": action, "_selected_action": [comment.pk]}
        )
    comment.refresh_from_db()
    assert comment.hidden_by_curator and CommenterBan.objects.filter(user=reader).exists()
    assert CurationEvent.objects.filter(paper=paper, action="thread_locked").exists()
    assert admin.get(f"/admin/discussion/comment/{comment.pk}/change/").status_code == 200


def test_new_accounts_may_not_post_links(paper):
    newcomer = Client(raise_request_exception=False)
    newcomer.force_login(UserFactory())
    response = post(newcomer, paper, "Buy at https://spam.example")
    assert response.status_code == 400
    assert "New accounts may not post links" in response.content.decode()
    assert not Comment.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        "Buy at [this shop](//spam.example/deal)",
        "Buy at [this shop](HTTPS&#58;//spam.example)",
        "Write to [us](mailto:spam@spam.example)",
    ],
)
def test_new_accounts_may_not_post_links_written_any_other_way(paper, body):
    newcomer = Client(raise_request_exception=False)
    newcomer.force_login(UserFactory())
    response = post(newcomer, paper, body)
    assert response.status_code == 400
    assert "New accounts may not post links" in response.content.decode()
    assert not Comment.objects.exists()


def test_the_honeypot_refuses_bots_quietly(reader_client, paper):
    response = post(reader_client, paper, "Hello", website="http://bot.example")
    assert response.status_code == 400 and not Comment.objects.exists()


def test_readers_and_addresses_are_limited(reader_client, paper, settings):
    settings.RATELIMIT_ENABLE = True
    settings.COMMENT_READER_RATE_LIMIT = "2/m"
    settings.COMMENT_ADDRESS_RATE_LIMIT = ""
    cache.clear()
    codes = [post(reader_client, paper, f"Comment {n}").status_code for n in range(3)]
    assert codes == [302, 302, 429]
    # Another reader from the same address, once the address has had its two.
    settings.COMMENT_READER_RATE_LIMIT = ""
    settings.COMMENT_ADDRESS_RATE_LIMIT = "2/h"
    cache.clear()
    post(reader_client, paper, "Once more")
    other = Client(raise_request_exception=False)
    other.force_login(UserFactory(date_joined=OLD))
    codes = [post(other, paper, f"Other {n}").status_code for n in range(2)]
    assert codes == [302, 429]
    assert Comment.objects.count() == 4
    cache.clear()


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"body": ""},
        {"body": "x" * 6000},
        {"body": "ok", "parent": "abc"},
        {"body": "ok", "parent": str(10**30)},
        {"body": "ok", "parent": "999999"},
        {"body": "\x00"},
    ],
)
def test_bad_posts_are_400_never_5xx(reader_client, paper, data):
    assert reader_client.post(f"/discussion/{paper.pk}/post/", data).status_code == 400


def test_anonymous_posts_go_to_log_in_and_unknown_papers_are_404(client, reader_client):
    assert client.post("/discussion/1/post/", {"body": "x"}).status_code == 302
    assert reader_client.post("/discussion/999999/post/", {"body": "x"}).status_code == 404
    assert reader_client.get("/papers/not-an-id/discussion/").status_code == 404
    assert reader_client.get("/discussion/comments/999/edit/").status_code == 404


def test_a_parent_on_another_paper_is_refused(reader_client, reader, paper):
    elsewhere = comment_by(reader, PaperFactory())
    assert post(reader_client, paper, "x", parent=elsewhere.pk).status_code == 400


def test_follow_toggle(reader_client, reader, paper):
    reader_client.post(f"/discussion/{paper.pk}/follow/", {"follow": "1"})
    assert DiscussionFollow.objects.filter(user=reader, paper=paper).exists()
    reader_client.post(f"/discussion/{paper.pk}/follow/", {"follow": "0"})
    assert not DiscussionFollow.objects.exists()


def test_the_discussion_feed(client, reader, paper):
    comment_by(reader, paper, "In the *feed*.")
    for suffix in ("rss", "atom"):
        response = client.get(f"/feeds/discussion/{paper.pk}.{suffix}")
        assert response.status_code == 200 and "In the" in response.content.decode()
    assert client.get("/feeds/discussion/999999.rss").status_code == 404


def test_the_public_profile_lists_the_readers_comments(client, reader, paper):
    comment_by(reader, paper, "On my profile.")
    html = client.get("/readers/Ada/").content.decode()
    assert "On my profile." in html and "#comment-" in html


def test_api_lists_and_posts_comments(client, reader, paper):
    _token, secret = create_api_token(user=reader, name="test")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    created = client.post(
        "/api/v1/papers/2505.00001/comments",
        {"body": "Via the API", "parent": None},
        content_type="application/json",
        **auth,
    )
    assert created.status_code == 201 and created.json()["author"] == "Ada"
    hidden = comment_by(reader, paper, "Hidden one.")
    services.set_hidden(curator=CuratorFactory(), comment=hidden, hidden=True)
    listing = client.get(f"/api/v1/papers/{paper.pk}/comments?limit=1")
    assert listing.status_code == 200
    first = listing.json()
    assert first["items"][0]["body"] == "Via the API" and first["next_cursor"]
    second = client.get(
        f"/api/v1/papers/{paper.pk}/comments?limit=1&cursor={first['next_cursor']}"
    ).json()
    assert second["items"][0]["state"] == "hidden" and second["items"][0]["body"] is None
    assert client.get("/api/v1/papers/2505.00001/comments?cursor=nonsense").status_code == 400
    assert client.get("/api/v1/papers/9999.99999/comments").status_code == 404
    no_token = client.post(
        "/api/v1/papers/2505.00001/comments", {"body": "x"}, content_type="application/json"
    )
    assert no_token.status_code == 401
    empty = client.post(
        "/api/v1/papers/2505.00001/comments",
        {"body": " "},
        content_type="application/json",
        **auth,
    )
    assert empty.status_code == 400 and empty.json()["detail"]
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/papers/{ref}/comments" in schema["paths"]
    assert {"get", "post"} <= set(schema["paths"]["/api/v1/papers/{ref}/comments"])


def test_api_names_the_json_members_it_refuses(client, reader, paper):
    _token, secret = create_api_token(user=reader, name="test")
    refused = client.post(
        f"/api/v1/papers/{paper.pk}/comments",
        {"body": 5, "parent": "first"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert refused.status_code == 400
    assert refused["Content-Type"] == "application/problem+json"
    assert set(refused.json()["errors"]) == {"body.body", "body.parent"}


def test_api_posts_name_the_comment_allowances_down_to_the_429(client, reader, paper, settings):
    settings.RATELIMIT_ENABLE = True
    settings.API_TOKEN_RATE_LIMIT = "100/m"
    settings.COMMENT_READER_RATE_LIMIT = "1/m"
    settings.COMMENT_ADDRESS_RATE_LIMIT = "5/h"
    cache.clear()
    _token, secret = create_api_token(user=reader, name="test")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}

    def comment():
        return client.post(
            f"/api/v1/papers/{paper.pk}/comments",
            {"body": "Via the API", "parent": None},
            content_type="application/json",
            **auth,
        )

    created, refused = comment(), comment()

    assert created.status_code == 201 and refused.status_code == 429
    assert created["RateLimit-Policy"] == (
        '"token";q=100;w=60, "comments";q=1;w=60, "comments-address";q=5;w=3600'
    )
    assert re.fullmatch(
        r'"token";r=99;t=\d+, "comments";r=0;t=\d+, "comments-address";r=4;t=\d+',
        created["RateLimit"],
    )
    assert re.search(r'"comments";r=0;t=\d+', refused["RateLimit"])
    cache.clear()


def test_followers_get_new_comments_in_one_mail_with_one_click_unsubscribe(reader, paper):
    other_paper = PaperFactory()
    follower = UserFactory(date_joined=OLD)
    services.follow(user=follower, paper=paper)
    services.follow(user=follower, paper=other_paper)
    DiscussionFollow.objects.update(notified_at=OLD)
    comment_by(reader, paper, "First news.")
    comment_by(reader, other_paper, "Second news.")
    comment_by(follower, paper, "My own words.")
    outbox.outbox.clear()
    # The commenter follows too, and hears of the follower's comment alone.
    assert mail.send_due_mail() == 2
    (to_reader,) = [m for m in outbox.outbox if m.to == [reader.email]]
    assert "My own words." in to_reader.body and "First news." not in to_reader.body
    sent = [m for m in outbox.outbox if m.to == [follower.email]]
    assert len(sent) == 1
    body = sent[0].body
    assert "First news." in body and "Second news." in body and "My own words." not in body
    assert sent[0].extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    url = re.search(r"<([^>]+)>", sent[0].extra_headers["List-Unsubscribe"]).group(1)
    # Nothing new: no second mail.
    outbox.outbox.clear()
    assert mail.send_due_mail() == 0
    path = url.split("://", 1)[1].split("/", 1)[1]
    client = Client()
    assert client.get(f"/{path}").status_code == 200
    assert DiscussionFollow.objects.filter(user=follower).count() == 2
    assert client.post(f"/{path}").status_code == 200
    assert not DiscussionFollow.objects.filter(user=follower).exists()
    assert client.get("/discussion/unsubscribe/bogus/").status_code == 400


@pytest.mark.parametrize(("language", "expected"), [("ko", "댓글 달기"), ("zh-hans", "发表评论")])
def test_the_discussion_speaks_the_readers_language(reader_client, paper, language, expected):
    html = reader_client.get(
        f"/discussion/{paper.pk}/", HTTP_ACCEPT_LANGUAGE=language
    ).content.decode()
    assert expected in html


def test_a_discussion_is_found_by_any_stored_id_as_the_paper_page_is(client):
    # An id the arXiv parser does not read, as the paper's own page takes it.
    paper = PaperFactory(arxiv_id="2612.0998992")

    assert client.get(paper.get_absolute_url()).status_code == 200
    assert client.get(f"/papers/{paper.arxiv_id}/discussion/").status_code == 200
    assert client.get("/papers/2612.0998993/discussion/").status_code == 404
