"""An OpenAI-compatible /v1/embeddings server on 127.0.0.1 for tests.

Each request takes the next scenario from the script (then "good" once the
script is empty). A good answer embeds each input as counts of hashed words,
so texts sharing words get close vectors; every request body is kept.
"""

import hashlib
import json
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCENARIOS = {
    "good",
    "wrong_size",  # one dimension short
    "too_few",  # one embedding fewer than inputs
    "malformed",  # not JSON at all
    "not_numbers",  # strings where floats belong
    "zeros",  # an all-zero vector
    "rate_limited",
    "unauthorized",
}


def embed(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,:;").encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimensions] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


class _Handler(BaseHTTPRequestHandler):
    server: "FakeEmbeddingsServer"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fake = self.server
        with fake.lock:
            fake.requests.append(body)
            scenario = fake.script.pop(0) if fake.script else "good"
        if scenario == "rate_limited":
            self._send(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "10"})
            return
        if scenario == "unauthorized":
            self._send(401, {"error": {"message": "bad key"}})
            return
        if scenario == "malformed":
            self._send_raw(200, b'{"object": "list", "data": [')
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        vectors = [embed(text, fake.dimensions) for text in inputs]
        if scenario == "wrong_size":
            vectors = [vector[:-1] for vector in vectors]
        elif scenario == "too_few":
            vectors = vectors[:-1]
        elif scenario == "not_numbers":
            vectors = [["x"] * fake.dimensions for _ in vectors]
        elif scenario == "zeros":
            vectors[0] = [0.0] * fake.dimensions
        self._send(
            200,
            {
                "object": "list",
                "model": body["model"],
                "data": [
                    {"object": "embedding", "index": i, "embedding": vector}
                    for i, vector in enumerate(vectors)
                ],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            },
        )

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _send_raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class FakeEmbeddingsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, *, dimensions: int) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.dimensions = dimensions
        self.requests: list[dict] = []
        self.script: list[str] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def answer(self, *scenarios: str) -> None:
        unknown = set(scenarios) - SCENARIOS
        assert not unknown, f"unknown scenarios {unknown}"
        with self.lock:
            self.script.extend(scenarios)


@contextmanager
def fake_embeddings_server(*, dimensions: int):
    server = FakeEmbeddingsServer(dimensions=dimensions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
