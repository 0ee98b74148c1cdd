"""Processes a fault test starts, owns and stops: gunicorn (with production
settings), nginx, Celery workers and beat, redis-server, a PostgreSQL cluster;
and wrk to drive them."""

import atexit
import contextlib
import functools
import os
import re
import secrets
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import redis
import requests
from django.conf import settings
from django.db import connection

from tests.services import redis_db_url

PROJECT = Path(settings.BASE_DIR)
# One key for the session's site processes, so each reads the others' cookies.
SECRET_KEY = secrets.token_urlsafe(50)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(check, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except (OSError, requests.RequestException):
            pass
        time.sleep(0.2)
    raise AssertionError(f"{what} did not come up within {timeout:.0f}s")


def database_url(name: str | None = None) -> str:
    """The PostgreSQL server DATABASE_URL names (its host, port, user and
    password, as the suite connects), with database `name`: by default the
    test database, where the test's factories write."""
    db = connection.settings_dict
    user = quote(db["USER"] or "", safe="")
    password = f":{quote(str(db['PASSWORD']), safe='')}" if db["PASSWORD"] else ""
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{user}{password}@{db['HOST'] or '127.0.0.1'}{port}/{name or db['NAME']}"


def site_env(*, database: str | None = None, redis: str = "") -> dict[str, str]:
    """Environment for a site process with production settings: DEBUG off, a
    secret key, one allowed host, static files collected (once a session),
    mail kept in memory. The tests speak plain HTTP to it, as nginx does to
    gunicorn, so the HTTPS redirect, HSTS and secure cookies are off."""
    return {
        **os.environ,
        "DATABASE_URL": database or database_url(),
        "REDIS_URL": redis,
        "DEBUG": "0",
        "SECRET_KEY": SECRET_KEY,
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "STATIC_ROOT": str(collected_static()),
        "SECURE_SSL_REDIRECT": "0",
        "SECURE_HSTS_SECONDS": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "EMAIL_BACKEND": "django.core.mail.backends.locmem.EmailBackend",
        "LOG_LEVEL": "WARNING",
    }


@functools.cache
def collected_static() -> Path:
    """Static files collected with the production storage (hashed names and a
    manifest), once a test session, into a folder removed when it ends."""
    folder = Path(tempfile.mkdtemp(prefix="papershelf-static-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": SECRET_KEY, "STATIC_ROOT": str(folder)}
    result = manage(env, "collectstatic", "--noinput")
    assert result.returncode == 0, result.stderr
    return folder


@contextmanager
def gunicorn(env: dict[str, str], *, workers: int = 2, log: Path | None = None) -> Iterator[str]:
    """The site under gunicorn on a free port, with sync workers as in
    docker-compose.yml, writing its log to `log` (or the test's stderr);
    yields its base URL."""
    port = free_port()
    output = log.open("a") if log else None
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            "--timeout=30",
            "--log-level=warning",
        ],
        cwd=PROJECT,
        env=env,
        stdout=output,
        stderr=output,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: requests.get(f"{base}/healthz", timeout=5).ok, timeout=60, what="gunicorn")
        yield base
        assert process.poll() is None, "gunicorn died during the test"
    finally:
        process.terminate()
        process.wait(timeout=30)
        if output:
            output.close()


class CeleryProcess:
    """A Celery worker or beat (`celery -A config <args>`) in a process group
    of its own, as a container runs it: kill() SIGKILLs the whole group (the
    main process and its pool's children at once), as the OOM killer or a
    lost host does; stop() asks it to shut down."""

    def __init__(self, env: dict[str, str], *args: str, log: Path) -> None:
        self.log = log.open("a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *args],
            cwd=PROJECT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.kill()
        # Whatever it left behind in its group goes too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


# wrk's answer as one line: requests, seconds, answers other than the one
# expected (WRK_EXPECT), socket errors.
WRK_REPORT = """
local threads = {}
local expected = tonumber(os.getenv("WRK_EXPECT"))
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body) if status ~= expected then not_ok = not_ok + 1 end end
function done(summary, latency, requests)
  local not_ok = 0
  for _, thread in ipairs(threads) do not_ok = not_ok + thread:get("not_ok") end
  local e = summary.errors
  io.write(string.format("RESULT requests=%d seconds=%.3f not_ok=%d errors=%d p99_ms=%.1f\\n",
    summary.requests, summary.duration / 1e6, not_ok, e.connect + e.read + e.write + e.timeout,
    latency:percentile(99) / 1000))
end
"""


def wrk(
    base: str, script: str, *, seconds: int, connections: int = 8, expect: int = 200, **env: str
) -> dict:
    """wrk against base for a number of seconds, with a Lua script defining
    init() (setting not_ok = 0) and request(); env reaches it through
    os.getenv. Answers other than `expect` count as not_ok."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as lua:
        lua.write(script + WRK_REPORT)
        lua.flush()
        result = subprocess.run(
            [
                *(shutil.which("wrk") or "/usr/bin/wrk", "-t2", f"-c{connections}"),
                *(f"-d{seconds}s", "--timeout", "10s", "-s", lua.name, base),
            ],
            env={**os.environ, **env, "WRK_EXPECT": str(expect)},
            capture_output=True,
            text=True,
            timeout=seconds + 60,
        )
    found = re.search(r"RESULT (.*)", result.stdout)
    assert found, result.stdout + result.stderr
    figures = dict(pair.split("=") for pair in found[1].split())
    return {name: float(value) for name, value in figures.items()}


NGINX_TEMPLATE = PROJECT / "deploy" / "nginx" / "default.conf.template"
NGINX_MAIN = """
daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    include {dir}/papershelf.conf;
}}
"""


@contextmanager
def nginx(
    upstream: str, *, access_log: Path | None = None, upstream_up: bool = True
) -> Iterator[str]:
    """nginx on a free port with the production site configuration
    (deploy/nginx/default.conf.template) in front of upstream (host:port),
    writing its access log to access_log (or nowhere); yields its base URL once
    the site's health probe answers through it (or, with upstream_up=False,
    once nginx answers at all)."""
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="papershelf-nginx-"))
    # nginx's workers run as an unprivileged user and write request bodies here.
    folder.chmod(0o755)
    for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (folder / name).mkdir(mode=0o777)
        (folder / name).chmod(0o777)
    site = string.Template(NGINX_TEMPLATE.read_text()).safe_substitute(
        WEB_UPSTREAM=upstream,
        NGINX_PORT=f"127.0.0.1:{port}",
        NGINX_ACCESS_LOG=str(access_log or "/dev/null"),
    )
    (folder / "papershelf.conf").write_text(site)
    (folder / "nginx.conf").write_text(NGINX_MAIN.format(dir=folder))
    binary = shutil.which("nginx") or "/usr/sbin/nginx"
    command = [binary, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-e", "stderr"]
    subprocess.run([*command, "-t"], check=True, capture_output=True, timeout=30)
    process = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(
            lambda: requests.get(f"{base}/healthz", timeout=5).ok or not upstream_up,
            timeout=30,
            what="nginx",
        )
        yield base
        assert process.poll() is None, "nginx died during the test"
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


class RedisServer:
    """A private redis-server on its own port, never the shared one; options
    are redis-server's own (e.g. "--maxmemory", "4mb")."""

    def __init__(self, *options: str) -> None:
        self.port = free_port()
        self.options = options
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
        )
        wait_for(lambda: self.cli("PING") == "PONG", timeout=20, what="redis-server")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)
        self.process = None

    def cli(self, *args: str) -> str:
        result = subprocess.run(
            ["redis-cli", "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return result.stdout.strip()


@contextmanager
def named_redis(db: int) -> Iterator[str]:
    """A database of the Redis server TEST_REDIS_URL names (make reliability
    takes it from REDIS_URL), emptied before and after: for the tests that
    neither stop nor cap their Redis. Yields its URL."""
    url = redis_db_url(db)
    client = redis.Redis.from_url(url)
    client.flushdb()
    try:
        yield url
    finally:
        client.flushdb()
        client.close()


def manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
