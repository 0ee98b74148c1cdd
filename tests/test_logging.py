"""Log lines carry time, level, logger and the request or task they belong to."""

import io
import json
import logging
import re
from collections.abc import Iterator

import pytest

from config.logging import JsonFormatter, TextFormatter
from tests.failures import DeliberateFailure, failing_task

pytestmark = pytest.mark.django_db

TEXT_LINE = re.compile(
    r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?P<level>[A-Z]+) (?P<logger>\S+) "
    r"request=(?P<request_id>\S+) task=(?P<task_id>\S+) (?P<message>.*)"
)


@pytest.fixture
def console() -> Iterator[logging.Handler]:
    """The configured console handler, writing to a buffer for the test."""
    handler = next(h for h in logging.getLogger().handlers if h.name == "console")
    stream, formatter = handler.stream, handler.formatter
    handler.setStream(io.StringIO())
    yield handler
    handler.setStream(stream)
    handler.setFormatter(formatter)


def text_lines(console: logging.Handler) -> list[dict]:
    lines = console.stream.getvalue().splitlines()
    matches = [TEXT_LINE.fullmatch(line) for line in lines]
    return [m.groupdict() for m in matches if m]


def json_lines(console: logging.Handler) -> list[dict]:
    return [json.loads(line) for line in console.stream.getvalue().splitlines()]


def test_a_request_gets_an_id_in_its_response_and_its_log_lines(client, console):
    response = client.get("/healthz")

    request_id = response["X-Request-ID"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    [access] = [line for line in text_lines(console) if line["logger"] == "papershelf.access"]
    assert access["request_id"] == request_id
    assert access["level"] == "INFO"
    assert access["task_id"] == "-"
    assert re.fullmatch(r'"GET /healthz" 200 \d+ms', access["message"])
    assert client.get("/healthz")["X-Request-ID"] != request_id


def test_lines_logged_inside_a_view_carry_its_request_id(client, console, settings):
    settings.ROOT_URLCONF = "tests.failures"
    client.raise_request_exception = False

    response = client.get("/fail/")

    assert response.status_code == 500
    lines = text_lines(console)
    [view_line] = [line for line in lines if line["logger"] == "tests.failures"]
    assert view_line["message"] == "the view is about to fail"
    [error] = [line for line in lines if line["logger"] == "django.request"]
    assert error["level"] == "ERROR"
    assert {view_line["request_id"], error["request_id"]} == {response["X-Request-ID"]}


def test_the_id_a_trusted_proxy_sends_is_kept(client, settings):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]

    response = client.get("/healthz", REMOTE_ADDR="10.1.2.3", HTTP_X_REQUEST_ID="edge-7f3a.42")

    assert response["X-Request-ID"] == "edge-7f3a.42"


@pytest.mark.parametrize(
    ("remote_addr", "offered"),
    [
        ("203.0.113.9", "edge-7f3a.42"),  # not from the proxy
        ("10.1.2.3", "x" * 129),  # too long
        ("10.1.2.3", "id with spaces"),
        ("10.1.2.3", "forged\u2028line"),
    ],
)
def test_an_untrusted_or_malformed_id_is_replaced(client, settings, remote_addr, offered):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]

    response = client.get("/healthz", REMOTE_ADDR=remote_addr, HTTP_X_REQUEST_ID=offered)

    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])


def test_secret_tokens_in_urls_stay_out_of_the_request_log(client, console):
    client.get("/feeds/private/s3cr3t-feed-token.rss")
    client.get("/digests/unsubscribe/s3cr3t-unsubscribe-token/")

    # Django's own lines for these 404s would name the path: they are not logged.
    output = console.stream.getvalue()
    assert "s3cr3t" not in output
    assert '"GET /feeds/private/***.rss" 404' in output
    assert '"GET /digests/unsubscribe/***/"' in output


def test_json_lines_have_the_same_fields_and_the_extras(client, console):
    console.setFormatter(JsonFormatter())

    response = client.get("/healthz?page=2")
    logging.getLogger("catalog.views").warning("Über %s", "ünïcode")

    access, warning = json_lines(console)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", access["time"])
    assert access["level"] == "INFO"
    assert access["logger"] == "papershelf.access"
    assert access["request_id"] == response["X-Request-ID"]
    assert access["task_id"] is None
    # Query strings (searches, in a reader's own words) stay out of the log.
    assert (access["method"], access["path"], access["status"]) == ("GET", "/healthz", 200)
    assert access["duration_ms"] >= 0
    assert warning["message"] == "Über ünïcode"
    assert warning["request_id"] is None


def test_json_lines_carry_the_traceback(console):
    console.setFormatter(JsonFormatter())

    try:
        raise DeliberateFailure("with a traceback")
    except DeliberateFailure:
        logging.getLogger("ingest.runs").exception("Run failed")

    [line] = json_lines(console)
    assert line["level"] == "ERROR"
    assert line["message"] == "Run failed"
    assert "DeliberateFailure: with a traceback" in line["exc_info"]


def test_lines_logged_inside_a_task_carry_its_id(console):
    console.setFormatter(TextFormatter())

    with pytest.raises(DeliberateFailure):
        failing_task.delay()

    [inside] = [line for line in text_lines(console) if line["logger"] == "tests.failures"]
    assert inside["message"] == "the task is about to fail"
    assert re.fullmatch(r"[0-9a-f-]{36}", inside["task_id"])
    assert inside["request_id"] == "-"


def test_faiss_saying_which_build_it_loads_is_not_shown_but_its_warnings_are(console):
    loader = logging.getLogger("faiss.loader")

    loader.info("Could not load library with AVX512 support due to: ModuleNotFoundError(...)")
    loader.warning("Something faiss warns of")

    assert [(line["level"], line["message"]) for line in text_lines(console)] == [
        ("WARNING", "Something faiss warns of")
    ]
