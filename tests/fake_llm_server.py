"""An OpenAI-compatible chat-completions server on 127.0.0.1 for tests.

Each request takes the next scenario from the script (then "good" once the
script is empty), or the next content given with say(); every request body is
kept for assertions. A request with "stream": true is answered as OpenAI
streams, a few words an event; with `hold` set, the server sends the first
event and waits for the test to set it before the rest.
"""

import json
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SLOW_SECONDS = 1.5
ABSTRACT = (
    "Large language models often fail at multi-step arithmetic. "
    "We propose StepCheck, a verifier trained on ten thousand reasoning traces. "
    "StepCheck improves accuracy by 7.2 points over self-consistency on GSM8K. "
    "It also transfers to code generation. "
    "Our analysis shows that most verification errors occur in the first two steps."
)
GOOD_ANSWER = {
    "summary": "StepCheck trains a verifier on reasoning traces and raises GSM8K accuracy "
    "by 7.2 points over self-consistency.",
    "takeaways": [
        "A verifier trained on ten thousand traces checks each reasoning step.",
        "Accuracy on GSM8K rises by 7.2 points over self-consistency.",
        "The verifier transfers to code generation.",
        "Most verification errors occur in the first two steps.",
    ],
    "translations": {
        "zh-hans": "大型语言模型经常在多步算术上失败。"
        "我们提出了 StepCheck。它是一个在一万条推理轨迹上训练的验证器。",
        "ko": "대규모 언어 모델은 다단계 산술에서 자주 실패합니다. "
        "우리는 StepCheck 검증기를 제안합니다.",
    },
}


def _with(**changes) -> str:
    answer = json.loads(json.dumps(GOOD_ANSWER))
    for key, value in changes.items():
        if key in ("zh-hans", "ko"):
            answer["translations"][key] = value
        else:
            answer[key] = value
    return json.dumps(answer, ensure_ascii=False)


# scenario -> (HTTP status, content, finish_reason, extra headers)
SCENARIOS = {
    "good": (200, json.dumps(GOOD_ANSWER, ensure_ascii=False), "stop", {}),
    "fenced": (200, "```json\n" + json.dumps(GOOD_ANSWER) + "\n```", "stop", {}),
    "malformed": (200, '{"summary": "StepCheck trains a verifier", "takeaways": [', "stop", {}),
    "empty": (200, "", "stop", {}),
    "truncated": (200, json.dumps(GOOD_ANSWER)[:120], "length", {}),
    "wrong_language_ko": (200, _with(ko="Large language models often fail."), "stop", {}),
    "wrong_language_zh": (200, _with(**{"zh-hans": "Large language models fail."}), "stop", {}),
    "two_takeaways": (200, _with(takeaways=["One.", "Two."]), "stop", {}),
    "eight_takeaways": (200, _with(takeaways=[f"Point {n}." for n in range(8)]), "stop", {}),
    "long_summary": (200, _with(summary="Very long. " * 200), "stop", {}),
    "missing_translation": (200, _with(translations={"zh-hans": "只有中文。"}), "stop", {}),
    "rate_limited": (429, None, None, {"retry-after-ms": "10"}),
    "unavailable": (503, None, None, {}),
    "unauthorized": (401, None, None, {}),
}


class _Handler(BaseHTTPRequestHandler):
    server: "FakeLLMServer"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        fake = self.server
        with fake.lock:
            fake.requests.append(body)
            fake.started.append(time.monotonic())
            scenario = fake.script.pop(0) if fake.script else "good"
        time.sleep(fake.delay)
        if isinstance(scenario, Said):
            self._send_content(body, scenario.content)
            return
        if scenario == "slow":
            time.sleep(SLOW_SECONDS)
            scenario = "good"
        if scenario == "no_json_mode":
            scenario = "good"
            if "response_format" in body:
                self._send(400, {"error": {"message": "response_format is not supported"}})
                return
        status, content, finish_reason, headers = SCENARIOS[scenario]
        if status != 200:
            self._send(status, {"error": {"message": scenario, "type": scenario}}, headers)
            return
        self._send_content(body, content, finish_reason)

    def _send_content(self, body: dict, content: str | None, finish_reason: str = "stop") -> None:
        fake = self.server
        if body.get("stream"):
            self._stream(body, content or "", finish_reason)
            return
        self._send(
            200,
            {
                "id": f"chatcmpl-{len(fake.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": finish_reason,
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def _stream(self, body: dict, content: str, finish_reason: str) -> None:
        """The content as chat.completion.chunk events, a few words each."""
        pieces = [content[start : start + 12] for start in range(0, len(content), 12)]
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for number, piece in enumerate(pieces):
                if number == 1 and self.server.hold is not None:
                    self.server.hold.wait(timeout=10)
                self._event(body, {"role": "assistant", "content": piece}, None)
            self._event(body, {}, finish_reason)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _event(self, body: dict, delta: dict, finish_reason: str | None) -> None:
        chunk = {
            "id": f"chatcmpl-{len(self.server.requests)}",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.flush()

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up waiting (the slow scenario)


@dataclass(frozen=True)
class Said:
    """A content to answer with, as the test wrote it."""

    content: str


class FakeLLMServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.started: list[float] = []  # when each request arrived
        self.script: list[str | Said] = []
        self.delay = 0.0  # seconds every answer takes
        # Set by a test to hold a streamed answer after its first event.
        self.hold: threading.Event | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def answer(self, *scenarios: str) -> None:
        unknown = set(scenarios) - set(SCENARIOS) - {"slow", "no_json_mode"}
        assert not unknown, f"unknown scenarios {unknown}"
        self.script.extend(scenarios)

    def say(self, *contents: str) -> None:
        """Answer the next requests with these contents."""
        self.script.extend(Said(content) for content in contents)


@contextmanager
def running_fake_llm(settings):
    """Start the server and point the openai backend at it through settings."""
    server = FakeLLMServer()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    settings.SUMMARY_BACKEND = "openai"
    settings.LLM_BASE_URL = server.base_url
    settings.LLM_API_KEY = "test-key"
    settings.LLM_MODEL = "fake-model-7b"
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_ATTEMPTS = 2
    settings.SUMMARY_LANGUAGES = ["zh-hans", "ko"]
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
