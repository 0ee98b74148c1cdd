"""The language model that answers, streamed: the OpenAI-compatible
chat-completions endpoint the summaries use (LLM_BASE_URL, LLM_API_KEY,
LLM_MODEL), asked with stream=True so the reader sees the answer as it is
written."""

from collections.abc import Iterator

import openai
from django.conf import settings

from answers.passages import Passage
from answers.quotes import messages


class ModelFailed(Exception):
    """The model could not be reached, refused the request or broke off."""


def configured() -> bool:
    return bool(settings.LLM_MODEL)


def model_name() -> str:
    name: str = settings.LLM_MODEL
    return name


def stream_answer(*, question: str, passages: list[Passage]) -> Iterator[str]:
    """The answer's text as the model writes it, a piece at a time."""
    client = openai.OpenAI(
        base_url=settings.LLM_BASE_URL or None,
        # Local servers (vLLM, Ollama) accept any key, but the client insists on one.
        api_key=settings.LLM_API_KEY or "unused",
        timeout=settings.LLM_TIMEOUT,
        max_retries=settings.LLM_MAX_RETRIES,
    )
    try:
        stream = client.chat.completions.create(
            model=settings.LLM_MODEL,
            messages=messages(question=question, passages=passages),
            max_tokens=settings.LLM_MAX_TOKENS,
            temperature=0,
            stream=True,
        )
        with stream:
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
    except openai.OpenAIError as exc:
        # The client's own errors, a stream broken off midway among them.
        raise ModelFailed(f"{settings.LLM_MODEL}: {exc}") from exc
