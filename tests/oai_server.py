"""A stand-in for arXiv's OAI-PMH endpoint on 127.0.0.1, answering from a script.

Each request takes the next step of the script (a status, headers, a body, a
delay); retry waits are observed, never spent.
"""

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit


class FakeSleep:
    """Waits between retries, observed and never spent."""

    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@contextmanager
def running_oai() -> Iterator[SimpleNamespace]:
    """The endpoint, answering from its script one step per request: its url,
    script (a deque of steps) and what it received, in order."""
    script: deque[dict] = deque()
    received: list[dict] = []

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
    try:
        yield SimpleNamespace(
            url=f"http://127.0.0.1:{server.server_address[1]}/oai",
            script=script,
            received=received,
        )
    finally:
        server.shutdown()
        server.server_close()
