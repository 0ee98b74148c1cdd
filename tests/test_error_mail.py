"""Errors reach ADMINS by mail, each distinct one once an interval."""

import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import mail

from tests.failures import DeliberateFailure, failing_task

PROJECT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.failures")]


@pytest.fixture(autouse=True)
def production(settings) -> Iterator[None]:
    """Mail to admins is for production: DEBUG off, ADMINS set, nothing mailed yet."""
    settings.DEBUG = False
    settings.ADMINS = [
        ("Ops", "ops@papershelf.example"),
        ("ana@papershelf.example", "ana@papershelf.example"),
    ]
    handler = next(h for h in logging.getLogger().handlers if h.name == "mail_admins")
    handler.forget_sent()
    yield
    handler.forget_sent()


@pytest.fixture
def client(client):
    client.raise_request_exception = False
    return client


def test_a_server_error_is_mailed_with_its_traceback_and_request_id(client):
    response = client.get("/fail/")

    assert response.status_code == 500
    [message] = mail.outbox
    assert message.to == ["ops@papershelf.example", "ana@papershelf.example"]
    assert message.subject.startswith("[Papershelf] ERROR")
    assert "Internal Server Error: /fail/" in message.subject
    first_line, _ = message.body.split("\n", 1)
    assert f"ERROR django.request request={response['X-Request-ID']}" in first_line
    assert "DeliberateFailure at /fail/\nthe view failed on purpose" in message.body
    assert 'File "' in message.body  # the traceback


def test_a_failing_task_is_mailed():
    # Run as a worker runs it: the failure is logged, not raised to the caller.
    result = failing_task.apply(throw=False)

    assert result.failed()
    [message] = mail.outbox
    assert f"tests.failures.failing_task[{result.id}] raised unexpected" in message.subject
    assert f"ERROR celery.app.trace request=- task={result.id}" in message.body
    assert "DeliberateFailure" in message.body
    assert "the task failed on purpose" in message.body


def test_a_repeated_error_is_mailed_once_an_interval(client, settings):
    for _ in range(5):
        client.get("/fail/")
    assert len(mail.outbox) == 1

    try:
        raise DeliberateFailure("another place")
    except DeliberateFailure:
        logging.getLogger("ingest.runs").exception("Run failed")
    assert len(mail.outbox) == 2

    settings.ERROR_MAIL_INTERVAL = 0
    client.get("/fail/")
    assert len(mail.outbox) == 3


def test_nothing_is_mailed_in_development(client, settings):
    settings.DEBUG = True

    client.get("/fail/")

    assert mail.outbox == []


def test_requests_for_foreign_hosts_are_not_mailed_other_security_errors_are():
    security = logging.getLogger("django.security.DisallowedHost")

    security.error("Invalid HTTP_HOST header: 'attacker.example'.")

    assert mail.outbox == []
    logging.getLogger("django.security.csrf").error("Forbidden (CSRF cookie not set.)")
    assert len(mail.outbox) == 1


def settings_in_a_fresh_process(**environment: str) -> subprocess.CompletedProcess:
    code = "from django.conf import settings; print(settings.ADMINS)"
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=PROJECT,
        env={"DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "1", **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_admins_come_from_the_environment():
    result = settings_in_a_fresh_process(ADMINS="Ops Team <ops@example.org>, ana@example.org")

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "[('Ops Team', 'ops@example.org'), ('ana@example.org', 'ana@example.org')]"
    )


def test_without_admins_nobody_is_mailed():
    for unset in ("", " , "):
        result = settings_in_a_fresh_process(ADMINS=unset)

        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "[]"


def test_a_malformed_admins_list_stops_the_site_at_start():
    result = settings_in_a_fresh_process(ADMINS="ops")

    assert result.returncode != 0
    assert "ADMINS is a comma-separated list of email addresses" in result.stderr
