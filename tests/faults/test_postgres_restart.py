"""PostgreSQL restarts while gunicorn serves readers: a request that cannot
reach it meanwhile gets the short 503, never a 500, and the same gunicorn
serves them again once the database is back, without being restarted.

Runs against a private cluster on its own port, never the shared one.
"""

import threading
import time
from collections import Counter

import pytest
import requests

from tests.faults.processes import gunicorn, manage, site_env

pytestmark = pytest.mark.slow
READERS = 4
PAGES = ["/", "/?q=reasoning", "/tags/", "/categories/", "/?period=365d"]


def read_continuously(base: str, stop: threading.Event, log: list) -> None:
    session = requests.Session()
    n = 0
    while not stop.is_set():
        path = PAGES[n % len(PAGES)]
        n += 1
        sent = time.monotonic()
        try:
            status = session.get(base + path, timeout=10).status_code
        except requests.RequestException as error:
            status = type(error).__name__
        log.append((sent, time.monotonic(), status))


def read_for(log: list, *, seconds: float, sent_after: float) -> None:
    """The readers read on for `seconds`, and on until more than ten pages sent
    after `sent_after` were answered (at most a minute more), however slow a
    busy machine makes each page; the assertions then tell what came."""
    started = time.monotonic()
    while time.monotonic() < started + seconds + 60:
        answered = sum(status == 200 for sent, _, status in list(log) if sent > sent_after)
        if time.monotonic() >= started + seconds and answered > 10:
            return
        time.sleep(0.2)


def test_the_site_recovers_by_itself_after_a_database_restart(cluster):
    env = site_env(database=cluster.create_database("papershelf"))
    for command in (["migrate", "--noinput"], ["load_demo"]):
        result = manage(env, *command)
        assert result.returncode == 0, result.stderr

    with gunicorn(env) as base:
        log: list = []
        stop = threading.Event()
        readers = [
            threading.Thread(target=read_continuously, args=(base, stop, log))
            for _ in range(READERS)
        ]
        for reader in readers:
            reader.start()
        read_for(log, seconds=3, sent_after=0)
        restart_started = time.monotonic()
        cluster.pg_ctl("restart")
        restart_done = time.monotonic()
        read_for(log, seconds=5, sent_after=restart_done + 1)
        stop.set()
        for reader in readers:
            reader.join(timeout=30)

        # A request that was in flight at any moment of the restart belongs to
        # it, however early it was sent or late it answered.
        before = Counter(s for _, done, s in log if done < restart_started)
        after = Counter(s for sent, _, s in log if sent > restart_done + 1)
        during = Counter(
            s for sent, done, s in log if done >= restart_started and sent <= restart_done + 1
        )
        print(f"before the restart {dict(before)}, during {dict(during)}, after {dict(after)}")
        assert set(before) == {200} and before[200] > 10, before
        assert set(during) <= {200, 503}, during
        assert set(after) == {200} and after[200] > 10, after
        # The app was never restarted: the same gunicorn answers a fresh request.
        assert requests.get(base + "/", timeout=10).status_code == 200
