"""Email digests: what goes in, when, exactly once, and how to stop them."""

import datetime
import os
import re
import subprocess
import sys
import threading
import time
from email import message_from_string
from io import StringIO
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core import mail, signing
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from accounts import selectors, services
from accounts.models import Profile
from accounts.tasks import send_due_digests as send_due_digests_task
from catalog.models import PaperTag
from config.celery import app as celery_app
from tests.accounts_factories import SubscriptionFactory, UserFactory
from tests.factories import CategoryFactory, CodeLinkFactory, PaperFactory, TagFactory
from tests.services import celery_client, redis_db_url

REDIS_URL = redis_db_url(6)
# What a worker logs as a digest task ends, whether it succeeded or raised.
TASK_ENDED = re.compile(r"Task accounts\.tasks\.send_due_digests\[[\w-]+\] (?:succeeded|raised)")
# A Tuesday, after the daily send hour.
NOW = datetime.datetime(2026, 3, 10, 9, 30, tzinfo=datetime.UTC)
LAST_DIGEST = NOW - datetime.timedelta(days=1, hours=2)


def reader_following(*, tag=None, category=None, frequency="daily", last_digest_at=LAST_DIGEST):
    user = UserFactory()
    SubscriptionFactory(user=user, tag=tag, category=category)
    Profile.objects.filter(user=user).update(
        digest_frequency=frequency, last_digest_at=last_digest_at
    )
    return user


def tag_paper(tag, *, at, **paper_fields):
    paper = PaperFactory(added_at=at, **paper_fields)
    PaperTag.objects.create(paper=paper, tag=tag, added_at=at)
    return paper


def html_part(message) -> str:
    [(html, mimetype)] = message.alternatives
    assert mimetype == "text/html"
    return html


@pytest.mark.django_db
def test_a_digest_lists_what_entered_each_subscription_since_the_last_one():
    tag = TagFactory(name="Reasoning")
    category = CategoryFactory(code="cs.LG", name="Machine Learning")
    user = reader_following(tag=tag)
    SubscriptionFactory(user=user, category=category)
    in_window = LAST_DIGEST + datetime.timedelta(hours=3)
    tagged = tag_paper(
        tag,
        at=in_window,
        title="Chains of thought <revisited>",
        authors=["Ada Lovelace", "Alan Turing"],
        abstract="First sentence of the abstract. " + "Filler words " * 100 + "FINAL WORD.",
    )
    CodeLinkFactory(paper=tagged, url="https://github.com/example/chains")
    PaperFactory(title="A new ML paper", categories=[category], added_at=in_window)
    tag_paper(tag, at=LAST_DIGEST - datetime.timedelta(seconds=1), title="Already sent")
    PaperFactory(
        title="Old ML paper",
        categories=[category],
        added_at=LAST_DIGEST - datetime.timedelta(hours=1),
    )
    tag_paper(tag, at=in_window, title="Hidden paper", is_visible=False)
    tag_paper(TagFactory(), at=in_window, title="Not followed")

    run = services.send_due_digests(now=NOW)

    assert run.sent == [user.email]
    [message] = mail.outbox
    assert message.to == [user.email]
    assert message.subject == "Papershelf: 2 new papers in your subscriptions"
    text, html = message.body, html_part(message)
    assert text.index("#Reasoning") < text.index("Chains of thought <revisited>")
    assert text.index("cs.LG (Machine Learning)") < text.index("A new ML paper")
    assert "Ada Lovelace, Alan Turing" in text
    assert "Code: https://github.com/example/chains" in text
    assert f"{settings.SITE_ROOT}{tagged.get_absolute_url()}" in text
    assert "First sentence of the abstract." in text and "FINAL WORD." not in text
    for absent in ("Already sent", "Old ML paper", "Hidden paper", "Not followed"):
        assert absent not in text and absent not in html
    assert "Chains of thought &lt;revisited&gt;" in html
    assert 'href="https://github.com/example/chains"' in html
    assert Profile.objects.get(user=user).last_digest_at == NOW


@pytest.mark.django_db
def test_nothing_new_sends_nothing():
    tag = TagFactory()
    reader_following(tag=tag)
    tag_paper(tag, at=LAST_DIGEST - datetime.timedelta(days=1))
    run = services.send_due_digests(now=NOW)
    assert mail.outbox == []
    assert run.sent == [] and run.empty == 1


@pytest.mark.django_db
def test_a_second_run_or_a_retried_task_sends_nothing_more():
    tag = TagFactory()
    reader_following(tag=tag)
    tag_paper(tag, at=NOW - datetime.timedelta(hours=1))
    services.send_due_digests(now=NOW)
    services.send_due_digests(now=NOW + datetime.timedelta(minutes=5))
    send_due_digests_task.apply()
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_windows_meet_without_gap_or_overlap():
    tag = TagFactory()
    user = reader_following(tag=tag)
    tag_paper(tag, at=LAST_DIGEST, title="At the old claim")
    tag_paper(tag, at=NOW, title="At the new claim")

    services.send_due_digests(now=NOW)
    services.send_due_digests(now=NOW + datetime.timedelta(days=1))

    first, second = mail.outbox
    assert "At the old claim" in first.body and "At the new claim" not in first.body
    assert "At the new claim" in second.body and "At the old claim" not in second.body
    assert Profile.objects.get(user=user).last_digest_at == NOW + datetime.timedelta(days=1)


@pytest.mark.django_db
def test_a_failed_send_stays_due_and_is_retried(monkeypatch, caplog):
    tag = TagFactory()
    user = reader_following(tag=tag)
    tag_paper(tag, at=NOW - datetime.timedelta(hours=1), title="Must arrive")

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("SMTP server is down")

    monkeypatch.setattr("django.core.mail.EmailMultiAlternatives.send", refuse)
    run = services.send_due_digests(now=NOW)
    assert run.failed == [user.email]
    assert "the next run retries it" in caplog.text
    assert Profile.objects.get(user=user).last_digest_at == LAST_DIGEST

    monkeypatch.undo()
    services.send_due_digests(now=NOW + datetime.timedelta(hours=1))
    [message] = mail.outbox
    assert "Must arrive" in message.body


@pytest.mark.parametrize(
    ("now", "daily", "weekly"),
    [
        # Tuesday 09:30: today's 06:00, Monday's 06:00.
        (NOW, NOW.replace(hour=6, minute=0), NOW.replace(day=9, hour=6, minute=0)),
        # Monday 05:00, before the send hour: Sunday's and the previous Monday's.
        (
            datetime.datetime(2026, 3, 9, 5, 0, tzinfo=datetime.UTC),
            datetime.datetime(2026, 3, 8, 6, 0, tzinfo=datetime.UTC),
            datetime.datetime(2026, 3, 2, 6, 0, tzinfo=datetime.UTC),
        ),
    ],
)
def test_digests_fall_due_at_the_send_hour(now, daily, weekly):
    boundaries = selectors.digest_boundaries(now=now)
    assert boundaries["daily"] == daily
    assert boundaries["weekly"] == weekly


@pytest.mark.django_db
def test_only_due_readers_with_a_verified_address_get_a_digest():
    tag = TagFactory()
    tag_paper(tag, at=NOW - datetime.timedelta(hours=5))
    due_daily = reader_following(tag=tag)
    reader_following(tag=tag, last_digest_at=NOW.replace(hour=6, minute=1))  # sent today
    due_weekly = reader_following(
        tag=tag, frequency="weekly", last_digest_at=NOW - datetime.timedelta(days=8)
    )
    reader_following(tag=tag, frequency="weekly", last_digest_at=NOW.replace(day=9, hour=7))
    reader_following(tag=tag, frequency="off")
    unverified = reader_following(tag=tag)
    unverified.emailaddress_set.update(verified=False)
    UserFactory()  # follows nothing

    run = services.send_due_digests(now=NOW)
    assert sorted(run.sent) == sorted([due_daily.email, due_weekly.email])


@pytest.mark.django_db(transaction=True)
def test_two_racing_senders_send_each_digest_once(monkeypatch):
    tag = TagFactory()
    readers = [reader_following(tag=tag) for _ in range(6)]
    tag_paper(tag, at=NOW - datetime.timedelta(hours=1))

    # Both senders read the same due list before either claims anything.
    barrier = threading.Barrier(2, timeout=30)
    due = selectors.profiles_due_for_digest

    def due_then_wait(*, now):
        profiles = list(due(now=now))
        barrier.wait()
        return profiles

    monkeypatch.setattr(selectors, "profiles_due_for_digest", due_then_wait)
    errors = []

    def sender():
        try:
            services.send_due_digests(now=NOW)
        except Exception as error:  # surfaced by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert sorted(m.to[0] for m in mail.outbox) == sorted(r.email for r in readers)


def sent_messages(directory: Path) -> list:
    messages = []
    for log in directory.glob("*.log"):
        for chunk in log.read_text().split("-" * 79):
            if chunk.strip():
                messages.append(message_from_string(chunk.strip()))
    return messages


@pytest.fixture
def redis_db():
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    yield client
    client.flushdb()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_tasks_on_a_real_worker_send_each_digest_once(tmp_path, redis_db):
    tag = TagFactory()
    readers = [
        reader_following(tag=tag, last_digest_at=timezone.now() - datetime.timedelta(days=2))
        for _ in range(8)
    ]
    tag_paper(tag, at=timezone.now() - datetime.timedelta(hours=1))

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": REDIS_URL,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(tmp_path),
        "SECRET_KEY": settings.SECRET_KEY,
        "DEBUG": "1",
        # Where the worker tells that a task has ended (TASK_ENDED).
        "LOG_LEVEL": "INFO",
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--concurrency=2",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=info",
        ],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # The worker's log, read as it comes: it tells when each task has ended.
    lines: list[str] = []
    logged = threading.Condition()

    def read_log() -> None:
        for line in worker.stdout:
            with logged:
                lines.append(line)
                logged.notify_all()
        with logged:  # the worker has gone
            logged.notify_all()

    def both_tasks_ended_or_the_worker_stopped() -> bool:
        return len(TASK_ENDED.findall("".join(lines))) >= 2 or worker.poll() is not None

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    client = celery_client(REDIS_URL)
    try:
        for _ in range(2):
            client.send_task("accounts.tasks.send_due_digests")
        with logged:
            logged.wait_for(both_tasks_ended_or_the_worker_stopped, timeout=90)
        assert worker.poll() is None, "".join(lines)
        assert len(TASK_ENDED.findall("".join(lines))) == 2, "".join(lines)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        reader.join(timeout=30)
        output = "".join(lines)
        client.close()
    recipients = sorted(m["To"] for m in sent_messages(tmp_path))
    assert recipients == sorted(r.email for r in readers), output


@pytest.mark.django_db
def test_the_unsubscribe_link_needs_no_login_and_one_post():
    tag = TagFactory()
    user = reader_following(tag=tag)
    tag_paper(tag, at=NOW - datetime.timedelta(hours=1))
    services.send_due_digests(now=NOW)
    [message] = mail.outbox
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    header_url = message.extra_headers["List-Unsubscribe"].strip("<>")
    assert header_url.startswith(f"{settings.SITE_ROOT}/digests/unsubscribe/")
    assert header_url in message.body and header_url in html_part(message)
    path = header_url.removeprefix(settings.SITE_ROOT)

    mail_client = Client(enforce_csrf_checks=True)
    page = mail_client.get(path)
    assert page.status_code == 200 and "Stop sending digests" in page.content.decode()
    assert Profile.objects.get(user=user).digest_frequency == "daily"  # a GET only asks

    response = mail_client.post(path, {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert Profile.objects.get(user=user).digest_frequency == "off"
    tag_paper(tag, at=NOW + datetime.timedelta(hours=1))
    services.send_due_digests(now=NOW + datetime.timedelta(days=1))
    assert len(mail.outbox) == 1


@pytest.mark.django_db
@pytest.mark.parametrize("token", ["garbage", "1:forged:signature"])
def test_a_broken_unsubscribe_link_says_so(client, token):
    response = client.post(f"/digests/unsubscribe/{token}/")
    assert response.status_code == 400
    assert "This unsubscribe link is not valid" in response.content.decode()


@pytest.mark.django_db
def test_digest_settings_page(client):
    user = reader_following(tag=TagFactory(), frequency="off", last_digest_at=LAST_DIGEST)
    client.force_login(user)
    page = client.get("/accounts/subscriptions/").content.decode()
    assert 'value="weekly"' in page

    response = client.post("/accounts/subscriptions/", {"digest_frequency": "weekly"})
    assert response.url == "/accounts/subscriptions/"
    profile = Profile.objects.get(user=user)
    assert profile.digest_frequency == "weekly"
    # Resuming starts a fresh window rather than mailing everything since the pause.
    assert timezone.now() - profile.last_digest_at < datetime.timedelta(minutes=1)

    response = client.post("/accounts/subscriptions/", {"digest_frequency": "hourly"})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert client.get("/accounts/subscriptions/").status_code == 200
    client.logout()
    assert client.get("/accounts/subscriptions/").url.startswith("/accounts/login/")


@pytest.mark.django_db
def test_new_readers_get_daily_digests_from_their_sign_up():
    user = UserFactory()
    profile = Profile.objects.get(user=user)
    assert profile.digest_frequency == "daily"
    assert timezone.now() - profile.last_digest_at < datetime.timedelta(minutes=1)


@pytest.mark.django_db
def test_send_digests_command_with_and_without_dry_run():
    tag = TagFactory()
    user = reader_following(tag=tag, last_digest_at=timezone.now() - datetime.timedelta(days=2))
    tag_paper(tag, at=timezone.now() - datetime.timedelta(hours=1))
    tag_paper(tag, at=timezone.now() - datetime.timedelta(hours=2))

    out = StringIO()
    call_command("send_digests", "--dry-run", stdout=out)
    assert f"{user.email}: 2 new papers" in out.getvalue()
    assert mail.outbox == []
    assert Profile.objects.get(user=user).last_digest_at < timezone.now() - datetime.timedelta(
        days=1
    )

    out = StringIO()
    call_command("send_digests", stdout=out)
    assert f"Sent to {user.email}" in out.getvalue()
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_the_hourly_beat_task_is_registered():
    task = PeriodicTask.objects.get(task="accounts.tasks.send_due_digests")
    assert task.enabled
    assert (task.crontab.minute, task.crontab.hour) == ("0", "*")
    celery_app.loader.import_default_modules()  # what a worker does on start
    assert task.task in celery_app.tasks


@pytest.mark.parametrize("paper_count", [2, 12])
@pytest.mark.django_db
def test_a_digest_costs_the_same_queries_whatever_its_size(django_assert_num_queries, paper_count):
    tag = TagFactory()
    category = CategoryFactory(code="cs.AI")
    user = reader_following(tag=tag)
    SubscriptionFactory(user=user, category=category)
    for _ in range(paper_count):
        paper = tag_paper(tag, at=NOW - datetime.timedelta(hours=1), categories=[category])
        CodeLinkFactory(paper=paper)
    profile = Profile.objects.select_related("user").get(user=user)
    # claim, tagged papers, category papers, the followed ids, recommendations,
    # code links (+ savepoint pair)
    with django_assert_num_queries(8):
        assert services.send_digest(profile=profile, now=NOW)
    assert re.search(r"Papershelf: \d+ new papers", mail.outbox[0].subject)


@pytest.mark.django_db
def test_an_unsubscribe_link_expires(client, settings, monkeypatch):
    settings.DIGEST_UNSUBSCRIBE_LINK_DAYS = 1
    user = reader_following(tag=TagFactory())
    token = services.unsubscribe_token(profile=user.profile)
    assert client.get(f"/digests/unsubscribe/{token}/").status_code == 200

    two_days_on = time.time() + 2 * 24 * 3600
    monkeypatch.setattr(signing.time, "time", lambda: two_days_on)
    response = client.post(f"/digests/unsubscribe/{token}/")

    assert response.status_code == 400
    assert "Unsubscribe links work for 1 day after the digest is sent" in response.content.decode()
    assert Profile.objects.get(user=user).digest_frequency == "daily"
