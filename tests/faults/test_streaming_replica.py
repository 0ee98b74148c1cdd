"""The site on a real streaming replica: a second PostgreSQL cluster started
from a base backup of the first (pg_basebackup -R), gunicorn reading from it
(DATABASE_REPLICA_URL) while writing to the primary.

- Reads are served by the replica: with its replay paused, a change made on the
  primary is not seen, and it is seen once replay resumes.
- A reader's own write is theirs at once, however far behind the replica is:
  after a write their reads stay on the primary (config.db_routers).
- Under a stream of writes the replica's lag is measured, and stays bounded.

Runs against private clusters on their own ports, never the shared one.
"""

import subprocess
import threading
import time

import psycopg
import pytest
import requests

from tests.faults.processes import PostgresCluster, gunicorn, manage, site_env, wait_for

pytestmark = pytest.mark.slow

# What this test allows the replica to fall behind while a writer commits a
# change every few milliseconds; the measured figure is printed.
MAX_LAG_SECONDS = 5.0


class StandbyCluster(PostgresCluster):
    """A hot standby of `primary`, made from its base backup, streaming its WAL."""

    def __init__(self, primary: PostgresCluster) -> None:
        super().__init__()
        self.primary = primary

    def init(self) -> None:
        subprocess.run(["chown", "postgres:postgres", str(self.dir)], check=True)
        basebackup = str(self.bin / "pg_basebackup")
        self._as_postgres(
            *(basebackup, "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "root"),
            *("-D", str(self.data), "-R", "-X", "stream", "--checkpoint=fast"),
        )
        self.pg_ctl("start")


def sql(port: int, query: str, *params: object, database: str = "papershelf") -> list[tuple]:
    with psycopg.connect(
        host="127.0.0.1", port=port, user="root", dbname=database, autocommit=True
    ) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def caught_up(primary: PostgresCluster, standby: PostgresCluster) -> bool:
    (target,) = sql(primary.port, "SELECT pg_current_wal_lsn()::text")[0]
    (done,) = sql(
        standby.port, "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s::pg_lsn) >= 0", target
    )[0]
    return bool(done)


@pytest.fixture
def standby(cluster):
    standby = StandbyCluster(cluster)
    try:
        standby.init()
        yield standby
    finally:
        standby.destroy()


def paper_title(session: requests.Session, base: str, paper_id: int) -> str:
    response = session.get(f"{base}/api/v1/papers/{paper_id}", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()["title"]


def test_reads_come_from_a_streaming_replica_and_a_reader_sees_their_own_writes(cluster, standby):
    primary_url = cluster.create_database("papershelf")
    env = site_env(database=primary_url)
    for command in (["migrate", "--noinput"], ["load_demo"]):
        result = manage(env, *command)
        assert result.returncode == 0, result.stderr
    make_token = (
        "from django.contrib.auth import get_user_model; from accounts import services; "
        "user = get_user_model().objects.create_user('reader', 'reader@example.com', 'pw'); "
        "print(services.create_api_token(user=user, name='replica test')[1])"
    )
    result = manage(env, "shell", "-c", make_token)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip().splitlines()[-1]
    wait_for(lambda: caught_up(cluster, standby), timeout=60, what="the replica")
    (paper_id, title) = sql(
        cluster.port, "SELECT id, title FROM catalog_paper ORDER BY id LIMIT 1"
    )[0]

    replica_url = f"postgres://root@127.0.0.1:{standby.port}/papershelf"
    with gunicorn({**env, "DATABASE_REPLICA_URL": replica_url}) as base:
        anonymous = requests.Session()
        reader = requests.Session()
        reader.headers["Authorization"] = f"Bearer {token}"
        assert paper_title(anonymous, base, paper_id) == title

        # The replica stops replaying: what the primary commits now, it does not show.
        sql(standby.port, "SELECT pg_wal_replay_pause()")
        sql(
            cluster.port,
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
        (saved_on_replica,) = sql(
            standby.port, "SELECT count(*) FROM accounts_savedpaper WHERE paper_id = %s", paper_id
        )[0]
        assert saved_on_replica == 0

        # Replay resumes: everyone sees the edit.
        sql(standby.port, "SELECT pg_wal_replay_resume()")
        wait_for(
            lambda: paper_title(anonymous, base, paper_id) == "Edited on the primary",
            timeout=30,
            what="the edit on the replica",
        )

        # Lag under a stream of writes, read as the primary sees it.
        stop = threading.Event()
        lags: list[float] = []

        def write_continuously() -> None:
            with psycopg.connect(primary_url, autocommit=True) as conn:
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
                rows = sql(
                    cluster.port,
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
        wait_for(lambda: caught_up(cluster, standby), timeout=30, what="the replica")
