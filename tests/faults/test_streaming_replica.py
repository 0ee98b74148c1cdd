"""The site on a real streaming replica: a second PostgreSQL cluster started
from a base backup of the first (pg_basebackup -R), gunicorn reading from it
(DATABASE_REPLICA_URL) while writing to the primary; directly, and through
PgBouncer's transaction-mode pools in front of both, as deployed
(deploy/pgbouncer/pgbouncer.ini, DATABASE_TRANSACTION_POOLING).

- Reads are served by the replica: with its replay paused, a change made on the
  primary is not seen, and it is seen once replay resumes.
- A reader's own write is theirs at once, however far behind the replica is:
  after a write their reads stay on the primary (config.db_routers).
- Under a stream of writes the replica's lag is measured, and stays bounded.
- Through PgBouncer, migrations, the demo, exports and the sitemap (which read
  in chunks) work, and a load of readers is served by a few server connections.

Runs against private clusters on their own ports, never the shared one.
"""

import shutil
import threading
import time
from pathlib import Path

import psycopg
import pytest
import requests

from bench.clusters import StandbyCluster, pgbouncer, pgbouncer_pools
from tests.faults.processes import gunicorn, manage, site_env, wait_for, wrk

pytestmark = pytest.mark.slow

# What this test allows the replica to fall behind while a writer commits a
# change every few milliseconds; the measured figure is printed.
MAX_LAG_SECONDS = 5.0
HOME_PAGE = """
init = function() not_ok = 0 end
request = function() return wrk.format("GET", "/") end
"""


@pytest.fixture
def standby(cluster):
    standby = StandbyCluster(cluster)
    try:
        standby.init()
        yield standby
    finally:
        standby.destroy()


@pytest.fixture(params=["direct", "pgbouncer"])
def databases(request, cluster, standby):
    """The site's database settings: the two clusters, directly or through PgBouncer."""
    cluster.create_database("papershelf")
    direct = {
        "DATABASE_URL": f"postgres://root@127.0.0.1:{cluster.port}/papershelf",
        "DATABASE_REPLICA_URL": f"postgres://root@127.0.0.1:{standby.port}/papershelf",
    }
    if request.param == "direct":
        yield direct
        return
    if not shutil.which("pgbouncer") and not Path("/usr/sbin/pgbouncer").exists():
        pytest.skip("needs Debian's pgbouncer (make test installs it)")
    with pgbouncer({"postgres": cluster.port, "replica": standby.port}) as port:
        yield {
            "DATABASE_URL": f"postgres://root@127.0.0.1:{port}/papershelf",
            "DATABASE_REPLICA_URL": f"postgres://root@127.0.0.1:{port}/papershelf_replica",
            "DATABASE_TRANSACTION_POOLING": "1",
            "PGBOUNCER_PORT": str(port),
        }


def paper_title(session: requests.Session, base: str, paper_id: int) -> str:
    response = session.get(f"{base}/api/v1/papers/{paper_id}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["title"]


def test_reads_come_from_a_streaming_replica_and_a_reader_sees_their_own_writes(
    cluster, standby, databases
):
    env = {**site_env(), **databases}
    primary_only = {**env, "DATABASE_REPLICA_URL": ""}
    for command in (["migrate", "--noinput"], ["load_demo"]):
        result = manage(primary_only, *command)
        assert result.returncode == 0, result.stderr
    make_token = (
        "from django.contrib.auth import get_user_model; from accounts import services; "
        "user = get_user_model().objects.create_user('reader', 'reader@example.com', 'pw'); "
        "print(services.create_api_token(user=user, name='replica test')[1])"
    )
    result = manage(primary_only, "shell", "-c", make_token)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip().splitlines()[-1]
    wait_for(lambda: standby.caught_up(), timeout=60, what="the replica")
    (paper_id, title) = cluster.sql("SELECT id, title FROM catalog_paper ORDER BY id LIMIT 1")[0]

    with gunicorn(env, workers=5) as base:
        anonymous = requests.Session()
        reader = requests.Session()
        reader.headers["Authorization"] = f"Bearer {token}"
        assert paper_title(anonymous, base, paper_id) == title

        # The replica stops replaying: what the primary commits now, it does not show.
        standby.sql("SELECT pg_wal_replay_pause()")
        cluster.sql(
            "UPDATE catalog_paper SET title = 'Edited on the primary' WHERE id = %s",
            paper_id,
        )
        assert paper_title(anonymous, base, paper_id) == title

        # The reader saves the paper: a write, on the primary; their next reads
        # are served there, so they see it (and the edit) while the replica
        # still has neither.
        saved = reader.put(f"{base}/api/v1/me/saved/{paper_id}", timeout=10)
        assert saved.status_code == 200, saved.text
        listed = reader.get(f"{base}/api/v1/me/saved", timeout=10).json()["items"]
        assert [item["id"] for item in listed] == [paper_id]
        assert paper_title(reader, base, paper_id) == "Edited on the primary"
        assert paper_title(anonymous, base, paper_id) == title
        (saved_on_replica,) = standby.sql(
            "SELECT count(*) FROM accounts_savedpaper WHERE paper_id = %s", paper_id
        )[0]
        assert saved_on_replica == 0

        # Replay resumes: everyone sees the edit.
        standby.sql("SELECT pg_wal_replay_resume()")
        wait_for(
            lambda: paper_title(anonymous, base, paper_id) == "Edited on the primary",
            timeout=30,
            what="the edit on the replica",
        )

        # Lag under a stream of writes, read as the primary sees it.
        stop = threading.Event()
        lags: list[float] = []

        def write_continuously() -> None:
            with psycopg.connect(
                host="127.0.0.1",
                port=cluster.port,
                user="root",
                dbname="papershelf",
                autocommit=True,
            ) as conn:
                n = 0
                while not stop.is_set():
                    n += 1
                    conn.execute(
                        "UPDATE catalog_paper SET title = %s WHERE id = %s",
                        (f"Edit {n}", paper_id),
                    )

        writer = threading.Thread(target=write_continuously)
        writer.start()
        try:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                anonymous.get(f"{base}/api/v1/papers?limit=5", timeout=10).raise_for_status()
                rows = cluster.sql(
                    "SELECT EXTRACT(EPOCH FROM coalesce(replay_lag, '0'::interval))::float"
                    " FROM pg_stat_replication",
                )
                assert len(rows) == 1, "the standby is not streaming"
                lags.append(rows[0][0])
        finally:
            stop.set()
            writer.join(timeout=30)
        print(f"replica lag under writes: max {max(lags) * 1000:.1f} ms over {len(lags)} readings")
        assert max(lags) < MAX_LAG_SECONDS
        wait_for(lambda: standby.caught_up(), timeout=30, what="the replica")

        # What reads in chunks (server-side cursors, off behind a transaction pool).
        for path in ("/export.bib", "/sitemap.xml", "/sitemap-papers-0.xml"):
            assert anonymous.get(f"{base}{path}", timeout=30).status_code == 200, path

        # A load of readers, and what it takes of PostgreSQL.
        served = wrk(
            base,
            HOME_PAGE,
            seconds=5,
            connections=16,
        )
        route = "through PgBouncer" if "PGBOUNCER_PORT" in databases else "direct"
        print(f"{route}: {served}")
        assert served["not_ok"] == 0 and served["errors"] == 0, served
        if "PGBOUNCER_PORT" in databases:
            used = pgbouncer_pools(int(databases["PGBOUNCER_PORT"]))
            print(f"PgBouncer pools (clients, servers): {used}")
            assert all(servers <= 25 for _, servers in used.values()), used
