"""Enrichment by any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama...)."""

import logging
from contextlib import AbstractContextManager
from typing import Any

import openai
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.chat_completion import Choice

from catalog.models import Summary
from core.pacing import TurnNotTaken, spacing_of, turn
from enrichment.base import Enrichment, EnrichmentFailed, EnrichmentUnavailable
from enrichment.prompt import PROMPT_VERSION, build_messages
from enrichment.validation import InvalidAnswer, parse_answer

logger = logging.getLogger(__name__)


def model_turn() -> AbstractContextManager[None]:
    """Calls to the model start SUMMARY_RATE_LIMIT apart, across every worker."""
    spacing = spacing_of(settings.SUMMARY_RATE_LIMIT)
    return turn("language-model", spacing=spacing, exclusive=False, max_wait=120 + 10 * spacing)


class LanguageModelBackend:
    kind: str = Summary.Backend.LLM
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        timeout: float,
        max_retries: int,
        attempts: int,
        max_tokens: int,
        languages: tuple[str, ...],
    ) -> None:
        if not model:
            raise ImproperlyConfigured("SUMMARY_BACKEND=openai needs LLM_MODEL.")
        self.model_name = self.written_by = model
        self.translation_languages = languages
        self._attempts = max(1, attempts)
        self._max_tokens = max_tokens
        # Local servers (vLLM, Ollama) accept any key, but the client insists on one.
        self._client = openai.OpenAI(
            base_url=base_url or None,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=max_retries,
        )
        # Servers that reject response_format are asked again without it, and
        # from then on rely on the prompt alone.
        self._json_mode = True

    def enrich(self, *, title: str, abstract: str) -> Enrichment:
        if not abstract.strip():
            raise EnrichmentFailed("the paper has no abstract to summarise")
        messages = build_messages(
            title=title, abstract=abstract, languages=self.translation_languages
        )
        problems = []
        for attempt in range(1, self._attempts + 1):
            choice = self._complete(messages)
            try:
                return parse_answer(
                    content=choice.message.content if choice else None,
                    finish_reason=choice.finish_reason if choice else None,
                    abstract=abstract,
                    languages=self.translation_languages,
                )
            except InvalidAnswer as exc:
                logger.warning(
                    "Invalid answer from %s (attempt %d): %s", self.model_name, attempt, exc
                )
                problems.append(str(exc))
        raise EnrichmentFailed(
            f"no valid answer from {self.model_name} in {self._attempts} attempts: "
            + "; ".join(problems)
        )

    def _complete(self, messages: list[ChatCompletionMessageParam]) -> Choice | None:
        """The first choice of one chat completion (the client retries 429, 5xx and timeouts)."""
        extra: dict[str, Any] = (
            {"response_format": {"type": "json_object"}} if self._json_mode else {}
        )
        try:
            with model_turn():
                completion = self._client.chat.completions.create(
                    model=self.model_name,
                    messages=messages,
                    max_tokens=self._max_tokens,
                    temperature=0.2,
                    **extra,
                )
        except TurnNotTaken as exc:
            raise EnrichmentUnavailable(str(exc)) from exc
        except openai.BadRequestError as exc:
            if not self._json_mode:
                raise EnrichmentFailed(f"{self.model_name} refused the request: {exc}") from exc
            logger.info("%s rejected response_format, asking without it: %s", self.model_name, exc)
            self._json_mode = False
            return self._complete(messages)
        except (
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        ) as exc:
            raise EnrichmentUnavailable(f"{self.model_name} is unavailable: {exc}") from exc
        except openai.APIStatusError as exc:
            # Wrong key, unknown model, bad URL: an operator must fix the settings.
            raise EnrichmentFailed(
                f"{self.model_name} refused the request (HTTP {exc.status_code}): {exc.message}"
            ) from exc
        return completion.choices[0] if completion.choices else None
