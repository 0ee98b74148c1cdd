"""The services as the image runs them (gunicorn with config/gunicorn.py, a Celery
worker, beat), with production settings and LOG_FORMAT=json: every line they
write is a JSON log line, errors reach ADMINS and Sentry, and the container
health checks tell a running service from a stopped one."""

import email
import email.policy
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis
import requests
from celery import Celery
from django.db import connection

from tests.faults.processes import free_port, wait_for
from tests.sentry_server import exceptions
from tests.services import celery_client, redis_db_url

PROJECT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
BROKER_URL = redis_db_url(10)
HOST = "papers.example.org"

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def production_env(tmp_path) -> dict[str, str]:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    environment = os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": BROKER_URL,
        "DEBUG": "0",
        "SECRET_KEY": "service-logs-test-key",
        "ALLOWED_HOSTS": HOST,
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        "ADMINS": "Ops <ops@papershelf.example>",
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "BEAT_HEARTBEAT_FILE": str(tmp_path / "beat-heartbeat"),
    }
    environment.pop("CELERY_TASK_ALWAYS_EAGER", None)
    return environment


@pytest.fixture
def broker() -> Iterator[Celery]:
    redis.Redis.from_url(BROKER_URL).flushdb()
    producer = celery_client(BROKER_URL)
    yield producer
    producer.close()
    redis.Redis.from_url(BROKER_URL).flushdb()


@contextmanager
def service(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    with log.open("w") as output:
        process = subprocess.Popen(command, cwd=PROJECT, env=env, stdout=output, stderr=output)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def healthcheck(name: str, env: dict[str, str]) -> int:
    check = [sys.executable, "-m", "config.healthcheck", name]
    return subprocess.run(check, cwd=PROJECT, env=env, capture_output=True, timeout=60).returncode


# Celery says this from its signal handler, where logging is unsafe, with print.
CELERY_SHUTDOWN_NOTICE = re.compile(r"(worker: (Warm|Cold) shutdown \(MainProcess\))?")


def log_lines(log: Path) -> list[dict]:
    """Every line the service wrote, each of which must be a JSON log line."""
    lines = []
    for text in log.read_text().splitlines():
        if CELERY_SHUTDOWN_NOTICE.fullmatch(text):
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            raise AssertionError(f"not a JSON log line: {text!r}") from None
        assert {"time", "level", "logger", "message"} <= line.keys(), line
        lines.append(line)
    assert lines, f"{log.name} is empty"
    return lines


def eventually(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    wait_for(condition, timeout=timeout, what=what)


def test_gunicorn_logs_json_with_request_ids_and_answers_its_health_check(production_env, tmp_path):
    port = free_port()
    env = production_env | {
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "REDIS_URL": "",
        "TRUSTED_PROXIES": "127.0.0.1",
    }
    command = [str(BIN / "gunicorn"), "--config", "python:config.gunicorn"]
    command += ["--bind", f"127.0.0.1:{port}", "config.wsgi"]
    log = tmp_path / "web.log"
    with service(command, env, log):
        eventually(lambda: healthcheck("web", env) == 0, "a healthy web")
        response = requests.get(
            f"http://127.0.0.1:{port}/healthz",
            headers={"Host": HOST, "X-Forwarded-Proto": "https", "X-Request-ID": "proxy-4711"},
            timeout=10,
        )
        assert response.json() == {
            "status": "ok",
            "database": "ok",
            "cache": "off",
            "broker": "off",
        }
        assert response.headers["X-Request-ID"] == "proxy-4711"
    assert healthcheck("web", env) == 1

    lines = log_lines(log)
    assert any(
        line["logger"] == "gunicorn.error" and "Booting worker" in line["message"] for line in lines
    )
    [access] = [line for line in lines if line.get("request_id") == "proxy-4711"]
    assert access["logger"] == "papershelf.access"
    assert (access["method"], access["path"], access["status"]) == ("GET", "/healthz", 200)
    # One line a request, the site's: gunicorn's own access log would repeat it.
    assert [line["logger"] for line in lines if "/healthz" in line["message"]] == [
        "papershelf.access"
    ] * 2
    assert not [line for line in lines if line["level"] in ("ERROR", "CRITICAL")]


def test_a_worker_logs_json_with_task_ids_and_reports_a_failed_task(
    production_env, broker, fake_sentry, tmp_path
):
    env = production_env | {"SENTRY_DSN": fake_sentry.dsn}
    command = [str(BIN / "celery"), "-A", "config", "-q", "worker", "--pool=solo"]
    command += ["--without-gossip", "--without-mingle", "-Q", "celery", "-I", "tests.failures"]
    log = tmp_path / "worker.log"
    mail = tmp_path / "mail"
    with service(command, env, log):
        task_id = broker.send_task("tests.failures.failing_task").id
        [event] = fake_sentry.wait_for_events(1, timeout=60)
        eventually(lambda: mail.exists() and any(mail.iterdir()), "the mail to ADMINS")

    assert exceptions(event) == [("DeliberateFailure", "the task failed on purpose")]
    assert event["tags"]["celery_task_id"] == task_id
    [path] = mail.iterdir()
    # The file backend writes each message, then a line of dashes.
    text = path.read_text().rsplit("\n" + "-" * 79, 1)[0]
    message = email.message_from_string(text, policy=email.policy.default)
    assert message["To"] == "ops@papershelf.example"
    assert f"tests.failures.failing_task[{task_id}] raised unexpected" in message["Subject"]
    assert f"task={task_id}" in message.get_content()
    lines = log_lines(log)
    [inside] = [line for line in lines if line["message"] == "the task is about to fail"]
    assert (inside["task_id"], inside["task_name"]) == (task_id, "tests.failures.failing_task")
    [failure] = [line for line in lines if line["logger"] == "celery.app.trace"]
    assert failure["level"] == "ERROR"
    assert failure["task_id"] == task_id
    assert "DeliberateFailure: the task failed on purpose" in failure["exc_info"]


def test_beat_logs_json_and_its_health_check_follows_its_heartbeat(production_env, tmp_path):
    heartbeat = Path(production_env["BEAT_HEARTBEAT_FILE"])
    assert healthcheck("beat", production_env) == 1  # never ran

    log = tmp_path / "beat.log"
    with service([str(BIN / "celery"), "-A", "config", "-q", "beat"], production_env, log):
        eventually(lambda: healthcheck("beat", production_env) == 0, "a healthy beat")

    stale = time.time() - 120
    os.utime(heartbeat, (stale, stale))
    assert healthcheck("beat", production_env) == 1
    lines = log_lines(log)
    assert any("beat: Starting" in line["message"] for line in lines)
