"""The language model that answers, streamed: the OpenAI-compatible
chat-completions endpoint the summaries use (LLM_BASE_URL, LLM_API_KEY,
LLM_MODEL), asked with stream=True so the reader sees the answer as it is
written."""

import time
from collections.abc import Iterator

from django.conf import settings

from answers.passages import Passage
from answers.quotes import messages

# An answer is a few sentences with their quotes, written while a web worker
# waits, which gunicorn ends at 30 seconds: it is given up past ANSWER_SECONDS,
# or when the model says nothing for READ_SECONDS (once retried), and it may
# have at most ANSWER_TOKENS tokens (fewer if LLM_MAX_TOKENS says so).
ANSWER_SECONDS = 20.0
READ_SECONDS = 8.0
ANSWER_TOKENS = 1000


class ModelFailed(Exception):
    """The model could not be reached, refused the request or broke off."""


def configured() -> bool:
    return bool(settings.LLM_MODEL)


def model_name() -> str:
    name: str = settings.LLM_MODEL
    return name


def stream_answer(*, question: str, passages: list[Passage]) -> Iterator[str]:
    """The answer's text as the model writes it, a piece at a time; ModelFailed
    when it cannot, or takes longer than ANSWER_SECONDS."""
    # Loaded when a reader asks, not by every process that sets Django up.
    import openai

    deadline = time.monotonic() + ANSWER_SECONDS
    client = openai.OpenAI(
        base_url=settings.LLM_BASE_URL or None,
        # Local servers (vLLM, Ollama) accept any key, but the client insists on one.
        api_key=settings.LLM_API_KEY or "unused",
        timeout=min(settings.LLM_TIMEOUT, READ_SECONDS),
        max_retries=min(settings.LLM_MAX_RETRIES, 1),
    )
    try:
        stream = client.chat.completions.create(
            model=settings.LLM_MODEL,
            messages=messages(question=question, passages=passages),
            max_tokens=min(settings.LLM_MAX_TOKENS, ANSWER_TOKENS),
            temperature=0,
            stream=True,
        )
        with stream:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
                if time.monotonic() > deadline:
                    raise ModelFailed(f"{settings.LLM_MODEL}: no answer in {ANSWER_SECONDS:.0f} s")
    except openai.OpenAIError as exc:
        # The client's own errors, a stream broken off midway among them.
        raise ModelFailed(f"{settings.LLM_MODEL}: {exc}") from exc
