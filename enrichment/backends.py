"""The backend the settings choose."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from enrichment.base import EnrichmentBackend
from enrichment.extractive import ExtractiveBackend
from enrichment.llm import LanguageModelBackend


def get_backend() -> EnrichmentBackend:
    name = settings.SUMMARY_BACKEND
    if name == "extractive":
        return ExtractiveBackend()
    if name == "openai":
        return LanguageModelBackend(
            base_url=settings.LLM_BASE_URL,
            api_key=settings.LLM_API_KEY,
            model=settings.LLM_MODEL,
            timeout=settings.LLM_TIMEOUT,
            max_retries=settings.LLM_MAX_RETRIES,
            attempts=settings.LLM_ATTEMPTS,
            max_tokens=settings.LLM_MAX_TOKENS,
            languages=tuple(settings.SUMMARY_LANGUAGES),
        )
    raise ImproperlyConfigured(f"SUMMARY_BACKEND must be 'extractive' or 'openai', not {name!r}.")
