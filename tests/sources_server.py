"""A stand-in on 127.0.0.1 for the other sources adding by link reads: Crossref's
/works/<DOI>, OpenReview's /notes?id=<note id> and the ACL Anthology's
/<Anthology id>.bib, each under a prefix of its own (/crossref, /openreview,
/acl). It serves the recorded answers of tests/data/sources/ (an unknown paper is
Crossref's and the Anthology's 404, OpenReview's empty list of notes) and plays
the faults a test queues, one per request, as the fake arXiv does: a status with
its Retry-After, a delay, a connection reset, a body cut off, or any body at all.
"""

import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from tests.arxiv_server import Fault

DATA = Path(__file__).parent / "data" / "sources"


def recorded(path: str) -> bytes:
    return (DATA / path).read_bytes()


@dataclass(frozen=True)
class SourceRequest:
    path: str
    params: dict[str, str]
    headers: dict[str, str]
    started: float


class FakeSources:
    def __init__(self) -> None:
        self.faults: deque[Fault] = deque()
        self.requests: list[SourceRequest] = []
        # Extra answers a test serves beside the recorded ones, by path ("acl/X.bib").
        self.answers: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, source: str) -> str:
        host, port = self._server.server_address
        return f"http://{host}:{port}/{source}"

    def queue(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    def start(self) -> "FakeSources":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, params: dict[str, str]) -> tuple[int, str, bytes]:
        """The status, content type and body the source gives for path."""
        source, _, rest = path.strip("/").partition("/")
        if source == "crossref" and rest.startswith("works/"):
            name = f"crossref/{unquote(rest.removeprefix('works/')).lower().replace('/', '_')}.json"
            return self._file(name, "application/json", missing=b"Resource not found.")
        if source == "openreview" and rest == "notes":
            name = f"openreview/{params.get('id', '')}.json"
            none = b'{"notes":[],"count":0}'
            return self._file(name, "application/json", missing=none, found=200)
        if source == "acl" and rest.endswith(".bib"):
            return self._file(f"acl/{rest}", "application/x-bibtex", missing=b"Not Found")
        return 404, "text/plain", b"Not Found"

    def _file(
        self, name: str, content_type: str, *, missing: bytes, found: int = 404
    ) -> tuple[int, str, bytes]:
        if name in self.answers:
            return 200, content_type, self.answers[name]
        if (DATA / name).is_file():
            return 200, content_type, recorded(name)
        return found, "text/plain" if found == 404 else content_type, missing

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with fake._lock:
                    fake.requests.append(
                        SourceRequest(parts.path, params, dict(self.headers), time.monotonic())
                    )
                    fault = fake.faults.popleft() if fake.faults else Fault()
                # The client may have given up first.
                with suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(fault, parts.path, params)

            def _answer(self, fault: Fault, path: str, params: dict[str, str]) -> None:
                time.sleep(fault.delay)
                if fault.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.close_connection = True
                    self.connection.close()
                    return
                status, content_type, body = fake.answer(path, params)
                if fault.body is not None:
                    body = fault.body
                if fault.status != 200:
                    status = fault.status
                if fault.truncate:
                    body = body[: len(body) // 2]
                self.send_response(status)
                self.send_header("Content-Type", f"{content_type}; charset=utf-8")
                # A body cut off is shorter than its announced length.
                length = len(body) * 2 if fault.truncate else len(body)
                self.send_header("Content-Length", str(length))
                for name, value in fault.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
                if fault.truncate:
                    self.close_connection = True

            def log_message(self, format: str, *args) -> None:
                pass

        return Handler


@contextmanager
def running() -> Iterator[FakeSources]:
    server = FakeSources().start()
    try:
        yield server
    finally:
        server.stop()
