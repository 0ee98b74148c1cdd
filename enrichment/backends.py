"""The backend the settings choose."""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from enrichment.base import EnrichmentBackend


def get_backend() -> EnrichmentBackend:
    # Each backend's libraries are imported when it is chosen, like faiss and
    # scikit-learn in discovery: nltk (with scipy and scikit-learn) and openai
    # at Django's setup cost every command and web process 3 s of CPU, which
    # is most of `manage.py check`.
    name = settings.SUMMARY_BACKEND
    if name == "extractive":
        from enrichment.extractive import ExtractiveBackend

        return ExtractiveBackend()
    if name == "openai":
        from enrichment.llm import LanguageModelBackend

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
