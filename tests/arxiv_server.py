"""A stand-in for the arXiv API and listing feeds on 127.0.0.1 that a test scripts.

It serves recorded arXiv entries (tests/data/arxiv-api/) as the API would for
sortBy=lastUpdatedDate&sortOrder=descending, paged by start and max_results,
or for an id_list (the ids it holds, in the order asked); at /rss/<categories>
it serves the listing feed a test sets (tests/data/listing/ holds recorded
ones). It plays the faults a test queues, one per request: an HTTP status with
its Retry-After, a delay past the client's timeout, an answer held until the
test lets it go, a connection reset, an empty feed, a truncated body or any
body at all.
"""

import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from lxml import etree

from catalog import arxiv_ids

DATA = Path(__file__).parent / "data" / "arxiv-api"
LISTINGS = Path(__file__).parent / "data" / "listing"
ATOM = "{http://www.w3.org/2005/Atom}"
FEED_HEAD = (
    "<?xml version='1.0' encoding='UTF-8'?>\n"
    '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"'
    ' xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
    "  <id>https://arxiv.org/api/fake</id>\n"
    "  <title>arXiv Query</title>\n"
    "  <opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>\n"
    "  <opensearch:totalResults>{total}</opensearch:totalResults>\n"
    "  <opensearch:startIndex>{start}</opensearch:startIndex>\n"
)


def recorded(name: str) -> bytes:
    return (DATA / name).read_bytes()


def recorded_listing(name: str) -> bytes:
    return (LISTINGS / name).read_bytes()


def recorded_entries(name: str = "q_testing_s0_m100.xml") -> list[str]:
    """The entries of a recorded response, each as a standalone XML string."""
    root = etree.fromstring(recorded(name))
    return [etree.tostring(entry, encoding="unicode") for entry in root.iter(f"{ATOM}entry")]


def entry_id(entry: str) -> str:
    """The arXiv id of an entry, without version, as the catalog stores it."""
    return arxiv_ids.normalize(etree.fromstring(entry).findtext(f"{ATOM}id"))


def updated_of(entry: str) -> str:
    return etree.fromstring(entry).findtext(f"{ATOM}updated")


def with_id(entry: str, arxiv_id: str, *, version: int = 1) -> str:
    """The entry as the paper arxiv_id (its version given), keeping the rest."""
    current = etree.fromstring(entry).findtext(f"{ATOM}id")
    return entry.replace(current, f"http://arxiv.org/abs/{arxiv_id}v{version}")


def numbered_entries(count: int, *, first: int = 1) -> list[str]:
    """count entries with ids 2601.00001 on, made from the recorded ones."""
    recorded_list = recorded_entries()
    return [
        with_id(recorded_list[n % len(recorded_list)], f"2601.{first + n:05d}").replace(
            "<title>", f"<title>Paper {first + n}: ", 1
        )
        for n in range(count)
    ]


def feed(entries: Sequence[str], *, total: int, start: int = 0) -> bytes:
    head = FEED_HEAD.format(per_page=len(entries), total=total, start=start)
    return (head + "\n".join(entries) + "\n</feed>\n").encode()


@dataclass
class Fault:
    """What the server does with one request instead of answering it normally."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0  # seconds before answering
    reset: bool = False  # drop the connection with a TCP reset
    empty: bool = False  # a feed with no entries that still reports the total
    truncate: bool = False  # the normal answer, cut off halfway
    held_until: threading.Event | None = None  # answered once the test sets it (at most 60 s)


@dataclass
class Request:
    params: dict[str, str]
    headers: dict[str, str]
    started: float
    finished: float = 0.0
    path: str = ""


class FakeArxiv:
    def __init__(self, entries: Sequence[str]):
        self.serve(entries)
        self.listing = b""  # the listing feed served for any categories
        self.faults: deque[Fault] = deque()
        self.requests: list[Request] = []
        self.max_concurrent = 0
        self._concurrent = 0
        self._lock = threading.Lock()
        # Notified as each request arrives (wait_for_requests).
        self._arrived = threading.Condition(self._lock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address
        return f"http://{host}:{port}/api/query"

    @property
    def listing_url(self) -> str:
        host, port = self._server.server_address
        return f"http://{host}:{port}/rss/{{categories}}"

    def serve(self, entries: Sequence[str]) -> None:
        # The API sorts by lastUpdatedDate descending; ISO timestamps sort as text.
        self.entries = sorted(entries, key=updated_of, reverse=True)

    def queue(self, *faults: Fault) -> None:
        self.faults.extend(faults)

    def wait_for_requests(self, count: int, *, timeout: float = 30) -> list[Request]:
        """The requests once `count` have arrived, answered or not (a held
        or delayed one counts from its arrival)."""
        with self._arrived:
            if not self._arrived.wait_for(lambda: len(self.requests) >= count, timeout):
                raise AssertionError(
                    f"the fake arXiv got {len(self.requests)} requests in {timeout} s, "
                    f"expected {count}"
                )
            return list(self.requests)

    def start(self) -> "FakeArxiv":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def page(self, params: dict[str, str]) -> bytes:
        start = int(params.get("start", 0))
        size = int(params.get("max_results", 10))
        entries = self.entries
        if params.get("id_list"):
            held = {entry_id(entry): entry for entry in self.entries}
            wanted = [arxiv_ids.normalize(raw) for raw in params["id_list"].split(",")]
            entries = [held[arxiv_id] for arxiv_id in wanted if arxiv_id in held]
        return feed(entries[start : start + size], total=len(entries), start=start)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                params = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                request = Request(
                    params,
                    dict(self.headers),
                    started=time.monotonic(),
                    path=urlsplit(self.path).path,
                )
                with fake._arrived:
                    fake.requests.append(request)
                    fake._concurrent += 1
                    fake.max_concurrent = max(fake.max_concurrent, fake._concurrent)
                    fault = fake.faults.popleft() if fake.faults else Fault()
                    fake._arrived.notify_all()
                try:
                    self._answer(fault, params)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first, as a timeout test intends
                finally:
                    request.finished = time.monotonic()
                    with fake._lock:
                        fake._concurrent -= 1

            def _answer(self, fault: Fault, params: dict[str, str]) -> None:
                time.sleep(fault.delay)
                if fault.held_until is not None:
                    fault.held_until.wait(timeout=60)
                if fault.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.close_connection = True
                    self.connection.close()
                    return
                is_listing = urlsplit(self.path).path.startswith("/rss/")
                if fault.body is not None:
                    body = fault.body
                elif is_listing:
                    body = fake.listing
                elif fault.empty:
                    body = feed([], total=len(fake.entries), start=int(params.get("start", 0)))
                else:
                    body = fake.page(params)
                if fault.truncate:
                    body = body[: len(body) // 2]
                self.send_response(fault.status)
                content_type = "application/rss+xml" if is_listing else "application/atom+xml"
                self.send_header("Content-Type", f"{content_type}; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                for name, value in fault.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args) -> None:
                pass

        return Handler


@contextmanager
def running(entries: Sequence[str]) -> Iterator[FakeArxiv]:
    server = FakeArxiv(entries).start()
    try:
        yield server
    finally:
        server.stop()
