"""From arXiv's announcement to a reader seeing the paper: measured end to end.

    python -m bench.freshness [--rounds 3] [--papers 25]

A scratch database beside DATABASE_URL's (its name plus "_freshness",
dropped and recreated), a Redis (REDIS_URL, or database 15 of the local
one) as broker and cache, gunicorn serving the site, a Celery worker on every
queue, and the fake arXiv of the tests (API and listing feed) on 127.0.0.1,
all with the default settings except where the fake lives and preview
images (which would fetch PDFs from arxiv.org). A reader follows cs.SE and
takes a daily digest; a source lists cs.SE.

Each round, the fake announces new cs.SE papers (and a new version of one
already here): the listing and the API change at one instant. The bench
then does what beat does at its next check, queues
ingest.tasks.check_announcements, and times, from the announcement: the
paper on / (anonymous, through the page cache), in the reader's /feed/,
its summary written by the worker, and when its digest falls due. Two
cases: the listing out at once (as the fake can), and the listing late (as
arXiv's is: it rebuilds the feeds around midnight), where the source's
query brings the papers. Beat's own wait, from the announcement to its next
check, is the schedule's: the checks run every five minutes from 20:00.
"""

import argparse
import datetime
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import environ
import psycopg
from psycopg import sql

PROJECT = Path(__file__).resolve().parent.parent
CHECK_EVERY = datetime.timedelta(minutes=5)


def scratch_database() -> str:
    """Recreate the scratch database; returns its DATABASE_URL."""
    url = os.environ.get("DATABASE_URL", "postgres://root@127.0.0.1:5432/papershelf")
    config = environ.Env.db_url_config(url)
    name = f"{config['NAME']}_freshness"
    info = {
        "host": config.get("HOST") or "127.0.0.1",
        "port": config.get("PORT") or 5432,
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
    }
    with psycopg.connect(dbname="postgres", autocommit=True, **info) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    credentials = info["user"] or ""
    if info["password"]:
        credentials += f":{info['password']}"
    return (
        f"postgres://{credentials}{'@' if credentials else ''}{info['host']}:{info['port']}/{name}"
    )


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(
    predicate, *, timeout: float, every: float = 0.2, since: float | None = None
) -> float | None:
    """Seconds from since (default: now) until predicate() held, or None after timeout."""
    started = time.monotonic()
    since = started if since is None else since
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - since
        time.sleep(every)
    return None


def fetch(url: str, *, cookie: str = "") -> str:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})  # noqa: S310
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 (local)
        return response.read().decode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="announcements per case")
    parser.add_argument("--papers", type=int, default=10, help="new papers an announcement lists")
    args = parser.parse_args()

    from tests.arxiv_server import FakeArxiv, recorded_entries

    fake = FakeArxiv(recorded_entries()).start()
    port = free_port()
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15"
    env = {
        **os.environ,
        "DATABASE_URL": scratch_database(),
        "REDIS_URL": redis_url,
        "DEBUG": "0",
        "SECRET_KEY": "freshness-benchmark-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "SITE_ROOT": f"http://127.0.0.1:{port}",
        "ARXIV_API_URL": fake.url,
        "ARXIV_LISTING_URL": fake.listing_url,
        "PREVIEW_AUTO": "0",
        "FULLTEXT_AUTO": "0",
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "--verbosity", "0"],
        cwd=PROJECT,
        env=env,
        check=True,
    )
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=PROJECT,
        env=env,
        check=True,
    )
    subprocess.run(["redis-cli", "-u", redis_url, "flushdb"], check=True, capture_output=True)
    with ExitStack() as stack:
        stack.callback(fake.stop)
        web = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "config.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
            ],
            cwd=PROJECT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stack.callback(web.terminate)
        worker = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("celery")),
                "-A",
                "config",
                "worker",
                "-Q",
                "ingest,enrichment,mail,celery",
                "--concurrency",
                "2",
                "--loglevel",
                "WARNING",
            ],
            cwd=PROJECT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        stack.callback(worker.terminate)
        site = f"http://127.0.0.1:{port}"
        if wait_for(lambda: _up(site), timeout=60) is None:
            raise SystemExit("gunicorn did not come up")
        results = run_rounds(fake, site=site, rounds=args.rounds, papers=args.papers)
    report(results)


def _up(site: str) -> bool:
    try:
        fetch(f"{site}/healthz")
        return True
    except OSError:
        return False


def run_rounds(fake, *, site: str, rounds: int, papers: int) -> dict[str, list[dict]]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from allauth.account.models import EmailAddress
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.utils import timezone

    from accounts.models import Profile, Subscription
    from accounts.selectors import digest, profiles_due_for_digest
    from catalog.models import Category, Paper, Summary
    from ingest import announcements, runs
    from ingest.models import IngestSource
    from ingest.tasks import check_announcements
    from tests.arxiv_server import entry_id, recorded_listing

    reader = get_user_model().objects.create_user("reader", "reader@example.org", "x-password-1")
    EmailAddress.objects.create(user=reader, email=reader.email, primary=True, verified=True)
    category, _ = Category.objects.get_or_create(code="cs.SE")
    Subscription.objects.create(user=reader, category=category)
    Profile.objects.filter(user=reader).update(
        digest_frequency=Profile.DigestFrequency.DAILY, last_digest_at=timezone.now()
    )
    client = Client()
    client.force_login(reader)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    source = IngestSource.objects.create(
        name="Software engineering", query="cat:cs.SE", listing_categories="cs.SE"
    )
    # The catalog before: what the source's query had brought.
    runs.run_source(source=source)

    results: dict[str, list[dict]] = {"listing out at once": [], "listing late (query)": []}
    serial = 0
    for case in results:
        for _ in range(rounds):
            serial += 1
            now = timezone.now()
            latest = announcements.latest_announcement(now)
            previous = latest.listing_date - datetime.timedelta(days=1)
            IngestSource.objects.filter(pk=source.pk).update(
                listed_through=previous, fallback_through=None, awaiting={}
            )
            fake.listing = _listing(recorded_listing("cs.SE_stale.rss"), previous, [])
            new_entries = [
                _new_entry(entry, serial=serial, number=n, published=now)
                for n, entry in enumerate(fake.entries[:papers])
            ]
            new_ids = [entry_id(e) for e in new_entries]
            # The announcement: the API and (in the first case) the listing at one instant.
            announced_at = timezone.now()
            announced = time.monotonic()
            fake.serve([*new_entries, *fake.entries])
            if case == "listing out at once":
                fake.listing = _listing(
                    recorded_listing("cs.SE_new.rss"), latest.listing_date, new_ids
                )
            check_announcements.delay()
            newest = new_ids[-1]
            home = wait_for(
                lambda newest=newest: newest in fetch(f"{site}/"), timeout=600, since=announced
            )
            feed = wait_for(
                lambda newest=newest: newest in fetch(f"{site}/feed/", cookie=cookie),
                timeout=600,
                since=announced,
            )
            summaries = Summary.objects.filter(paper__arxiv_id__in=new_ids)
            first_summary = wait_for(summaries.exists, timeout=600, every=0.5, since=announced)
            summarised = wait_for(
                lambda summaries=summaries, wanted=new_ids: (
                    summaries.values("paper").distinct().count() == len(wanted)
                ),
                timeout=900,
                every=0.5,
                since=announced,
            )

            stored = Paper.objects.filter(arxiv_id__in=new_ids)
            stored_at = max(stored.values_list("added_at", flat=True))
            due = _digest_due(
                reader, new_ids, stored_at, digest=digest, due=profiles_due_for_digest
            )
            results[case].append(
                {
                    "home": home,
                    "feed": feed,
                    "first_summary": first_summary,
                    "summaries": summarised,
                    "digest_due": (due - announced_at).total_seconds() if due else None,
                    "announced_utc": announced_at,
                    "papers": stored.count(),
                }
            )
            print(case, results[case][-1], flush=True)
    return results


def _listing(template: bytes, listing_date: datetime.date, new_ids) -> bytes:
    """The recorded listing's head, dated listing_date, announcing new_ids."""
    head = template.partition(b"<item>")[0]
    day = listing_date.strftime("%a, %d %b %Y").encode()
    head = re.sub(
        rb"<pubDate>[^<]*</pubDate>", b"<pubDate>" + day + b" 00:00:00 -0500</pubDate>", head
    )
    items = [
        (
            f"<item><title>Paper {arxiv_id}</title><link>https://arxiv.org/abs/{arxiv_id}</link>"
            f"<description>arXiv:{arxiv_id}v1 Announce Type: new \nAbstract: ...</description>"
            f'<guid isPermaLink="false">oai:arXiv.org:{arxiv_id}v1</guid><category>cs.SE</category>'
            f"<pubDate>{day.decode()} 00:00:00 -0500</pubDate>"
            "<arxiv:announce_type>new</arxiv:announce_type></item>\n"
        ).encode()
        for arxiv_id in new_ids
    ]
    return head + b"".join(items) + b"</channel>\n</rss>\n"


def _new_entry(entry: str, *, serial: int, number: int, published: datetime.datetime) -> str:
    """A recorded API entry made into a new cs.SE paper with a fresh id."""
    new_id = f"2612.{serial:02d}{number:03d}"
    stamp = (published - datetime.timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = re.sub(r"<id>[^<]*</id>", f"<id>http://arxiv.org/abs/{new_id}v1</id>", entry)
    entry = re.sub(r"<published>[^<]*</published>", f"<published>{stamp}</published>", entry)
    entry = re.sub(r"<updated>[^<]*</updated>", f"<updated>{stamp}</updated>", entry)
    entry = re.sub(
        r'href="http://arxiv.org/(abs|pdf)/[^"]*"', rf'href="http://arxiv.org/\1/{new_id}v1"', entry
    )
    entry = re.sub(r'term="[a-z-]+(\.[A-Za-z-]+)?"', 'term="cs.SE"', entry)
    return entry.replace("<title>", f"<title>[{new_id}] ", 1)


def _digest_due(reader, new_ids, stored_at, *, digest, due) -> datetime.datetime | None:
    """The first hourly digest run (minute 0) whose due digest for the reader holds the papers."""
    moment = stored_at.replace(minute=0, second=0, microsecond=0) + datetime.timedelta(hours=1)
    for _ in range(24 * 8):
        profile = due(now=moment).filter(user=reader).first()
        if profile is not None:
            held = digest(user=reader, since=profile.last_digest_at, until=moment)
            ids = {p.arxiv_id for group in held.groups for p in group.papers}
            if ids & set(new_ids):
                return moment
        moment += datetime.timedelta(hours=1)
    return None


def report(results: dict[str, list[dict]]) -> None:
    print()
    print(
        "| case | on `/` | in the personal feed | first summary written | all summaries written"
        " | digest due |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    for case, rows in results.items():

        def span(key: str, rows=rows) -> str:
            values = [row[key] for row in rows if row[key] is not None]
            if not values:
                return "never"
            if key == "digest_due":
                return ", ".join(f"{v / 3600:.1f} h" for v in values)
            return f"{statistics.median(values):.1f} s (max {max(values):.1f} s)"

        print(
            f"| {case} | {span('home')} | {span('feed')} | {span('first_summary')}"
            f" | {span('summaries')} | {span('digest_due')} |"
        )
    print(
        "\nTimes from the announcement to the check beat queues at once; beat's own wait"
        f" until its next check adds up to {CHECK_EVERY.total_seconds() / 60:.0f} minutes."
    )


if __name__ == "__main__":
    main()
