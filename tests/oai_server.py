"""A stand-in for arXiv's OAI-PMH endpoint on 127.0.0.1, answering from a script.

Each request takes the next step of the script (a status, headers, a body, a
delay); retry waits are observed, never spent.
"""

import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import pytest

from ingest.http import ArxivHttp


class FakeSleep:
    """Waits between retries, observed and never spent."""

    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture(name="oai_server")
def oai_server_fixture(settings):
    """An OAI-PMH endpoint on 127.0.0.1 answering from a script, one step per request."""
    script: deque[dict] = deque()
    received: list[dict] = []
    fake_sleep = FakeSleep()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            received.append(
                {
                    "params": parse_qs(urlsplit(self.path).query),
                    "at": time.monotonic(),
                    **self.headers,
                }
            )
            step = script.popleft() if script else {"status": 500, "body": b"script ran out"}
            time.sleep(step.get("delay", 0))
            self.send_response(step["status"])
            for name, value in step.get("headers", {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "text/xml; charset=utf-8")
            self.send_header("Content-Length", str(len(step["body"])))
            self.end_headers()
            self.wfile.write(step["body"])

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # The client hangs up on a response it timed out on; that is expected.
    server.handle_error = lambda request, address: None
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/oai"
    settings.ARXIV_OAI_URL = url
    settings.ARXIV_DELAY_SECONDS = 0.2
    http = ArxivHttp(
        user_agent="Papershelf-test/1.0 (mailto:test@example.org)",
        # Generous, so a busy machine never turns a scripted answer into a timeout.
        timeout=10,
        max_retries=2,
        retry_base_wait=1,
        retry_max_wait=60,
        sleep=fake_sleep,
    )
    yield SimpleNamespace(url=url, script=script, received=received, sleep=fake_sleep, http=http)
    server.shutdown()
    server.server_close()
