"""Private PostgreSQL clusters and PgBouncer, started and stopped by the
replica benchmark (bench.replica) and the streaming-replica fault test: a
primary made by initdb in a temporary folder, a hot standby made from its base
backup (pg_basebackup -R, streaming its WAL), and PgBouncer with the production
configuration in front of both. Each listens on a free port of 127.0.0.1, runs
as the postgres user (the caller is root), and never touches the machine's own
cluster.
"""

import configparser
import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

PGBOUNCER_INI = Path(__file__).resolve().parent.parent / "deploy" / "pgbouncer" / "pgbouncer.ini"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(check: Callable[[], bool], *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, psycopg.Error):
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{what} did not come up within {timeout:.0f}s")


class PostgresCluster:
    """A throwaway PostgreSQL cluster in a temporary folder, run as the postgres user.

    durable=False turns fsync off (tests that only need a server); the
    benchmark keeps the installed defaults, as production runs."""

    def __init__(self, *, durable: bool = False, settings: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="papershelf-pg-"))
        self.data = self.dir / "data"
        bindir = subprocess.run(
            ["pg_config", "--bindir"], capture_output=True, text=True, check=True
        ).stdout.strip()
        self.bin = Path(bindir)
        self.settings = {"listen_addresses": "127.0.0.1", **(settings or {})}
        if not durable:
            self.settings["fsync"] = "off"

    def _as_postgres(self, *args: str, timeout: float = 120) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *args],
            check=True,
            capture_output=True,
            timeout=timeout,
        )

    def init(self) -> None:
        shutil.chown(self.dir, "postgres", "postgres")
        initdb = str(self.bin / "initdb")
        self._as_postgres(initdb, "-D", str(self.data), "-A", "trust", "-U", "root")
        self.pg_ctl("start")

    def pg_ctl(self, action: str, *, mode: str = "fast") -> None:
        """start, stop or restart; a stop in mode "immediate" is a crash: no
        shutdown checkpoint, and recovery at the next start."""
        settings = " ".join(f"-c {name}={value}" for name, value in self.settings.items())
        options = f"-p {self.port} -k {self.dir} {settings}"
        # The server writes to a log file, not to our pipe, which it would hold open.
        log = str(self.dir / "server.log")
        pg_ctl = str(self.bin / "pg_ctl")
        arguments = ["-D", str(self.data), "-l", log, "-o", options, "-w", "-m", mode, action]
        # A standby starting from a large base backup may take a while to accept connections.
        self._as_postgres(pg_ctl, "-t", "600", *arguments, timeout=660)

    def url(self, database: str) -> str:
        return f"postgres://root@127.0.0.1:{self.port}/{database}"

    def sql(self, query: str, *params: object, database: str = "papershelf") -> list[tuple]:
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user="root", dbname=database, autocommit=True
        ) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def create_database(self, name: str) -> str:
        subprocess.run(
            ["createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "root", name],
            check=True,
            capture_output=True,
            timeout=60,
        )
        return self.url(name)

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # never started or stopped
            self.pg_ctl("stop")
        shutil.rmtree(self.dir, ignore_errors=True)


class StandbyCluster(PostgresCluster):
    """A hot standby of `primary`, made from its base backup, streaming its WAL."""

    def __init__(self, primary: PostgresCluster) -> None:
        super().__init__(settings={"fsync": primary.settings.get("fsync", "on")})
        self.primary = primary

    def init(self) -> None:
        shutil.chown(self.dir, "postgres", "postgres")
        basebackup = str(self.bin / "pg_basebackup")
        self._as_postgres(
            *(basebackup, "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "root"),
            *("-D", str(self.data), "-R", "-X", "stream", "--checkpoint=fast"),
            timeout=3600,
        )
        self.pg_ctl("start")

    def caught_up(self) -> bool:
        """Whether this standby has replayed all the primary has written so far."""
        (target,) = self.primary.sql("SELECT pg_current_wal_lsn()::text", database="postgres")[0]
        (done,) = self.sql(
            "SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s::pg_lsn) >= 0",
            target,
            database="postgres",
        )[0]
        return bool(done)


@contextmanager
def pgbouncer(servers: dict[str, int]) -> Iterator[int]:
    """PgBouncer on a free port with the production configuration
    (deploy/pgbouncer/pgbouncer.ini), each of its [databases] pointed at the
    local server of servers' port (by host name there: postgres, replica);
    trust authentication for root, who is also its admin. Yields its port."""
    config = configparser.ConfigParser(interpolation=None)
    config.read_string(PGBOUNCER_INI.read_text())
    folder = Path(tempfile.mkdtemp(prefix="papershelf-pgbouncer-"))
    for name, target in config["databases"].items():
        parts = dict(part.split("=", 1) for part in target.split())
        parts["port"] = str(servers[parts["host"]])
        parts["host"] = "127.0.0.1"
        config["databases"][name] = " ".join(f"{key}={value}" for key, value in parts.items())
    port = free_port()
    (folder / "userlist.txt").write_text('"root" ""\n')
    config["pgbouncer"].update(
        listen_addr="127.0.0.1",
        listen_port=str(port),
        unix_socket_dir=str(folder),
        auth_type="trust",
        auth_file=str(folder / "userlist.txt"),
        admin_users="root",
        logfile=str(folder / "pgbouncer.log"),
    )
    with (folder / "pgbouncer.ini").open("w") as ini:
        config.write(ini)
    shutil.chown(folder, "postgres", "postgres")
    for each in folder.iterdir():
        shutil.chown(each, "postgres", "postgres")
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    process = subprocess.Popen(
        ["runuser", "-u", "postgres", "--", binary, str(folder / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close() is None,
            timeout=30,
            what="pgbouncer",
        )
        yield port
        if process.poll() is not None:
            raise RuntimeError("pgbouncer died while in use")
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def pgbouncer_pools(port: int) -> dict[str, tuple[int, int]]:
    """PgBouncer's pools (SHOW POOLS) of the site's databases: (clients, server connections)."""
    with psycopg.connect(
        host="127.0.0.1", port=port, user="root", dbname="pgbouncer", autocommit=True
    ) as admin:
        cursor = admin.execute("SHOW POOLS")
        names = [column.name for column in cursor.description or ()]
        pools = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return {
        pool["database"]: (
            pool["cl_active"] + pool["cl_waiting"],
            sum(pool[state] for state in ("sv_active", "sv_idle", "sv_used", "sv_tested")),
        )
        for pool in pools
        if pool["database"].startswith("papershelf")
    }
