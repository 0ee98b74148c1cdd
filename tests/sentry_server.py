"""A stand-in for Sentry's ingest endpoint on 127.0.0.1 that keeps the events it is sent."""

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeSentry:
    def __init__(self) -> None:
        self.events: list[dict] = []
        # Notified as each envelope is kept (wait_for_events).
        self._received = threading.Condition()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                fake.receive(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def dsn(self) -> str:
        return f"http://publickey@127.0.0.1:{self.server.server_address[1]}/42"

    def receive(self, path: str, body: bytes) -> None:
        assert path == "/api/42/envelope/", path
        # An envelope: a header line, then for each item a header line and a payload.
        lines = body.split(b"\n")
        items = lines[1:]
        with self._received:
            for header, payload in zip(items[::2], items[1::2], strict=False):
                if json.loads(header).get("type") == "event":
                    self.events.append(json.loads(payload))
            self._received.notify_all()

    def wait_for_events(self, count: int, *, timeout: float = 30) -> list[dict]:
        with self._received:
            if not self._received.wait_for(lambda: len(self.events) >= count, timeout):
                raise AssertionError(f"Sentry got {len(self.events)} events, expected {count}")
            return list(self.events)

    def start(self) -> "FakeSentry":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def exceptions(event: dict) -> list[tuple[str, str]]:
    return [(e["type"], e["value"]) for e in event.get("exception", {}).get("values", [])]
