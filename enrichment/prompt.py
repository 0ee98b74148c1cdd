"""The instructions the language model gets. Change PROMPT_VERSION with the text:
each stored summary records the version that produced it."""

from typing import TYPE_CHECKING

from django.utils.translation import get_language_info

from enrichment.validation import (
    MAX_SUMMARY_CHARS,
    MAX_TAKEAWAY_CHARS,
    MAX_TAKEAWAYS,
    MIN_TAKEAWAYS,
)

PROMPT_VERSION = "2026-11-v1"

SYSTEM_PROMPT = f"""\
You help readers of a research paper catalog decide what to read. Given a paper's
title and abstract, answer with one JSON object and nothing else:
{{
  "summary": "<2 to 4 plain English sentences on the problem, the method and the main result>",
  "takeaways": ["<one key takeaway in English>", ...],
  "translations": {{"<language code>": "<the whole abstract translated into that language>"}}
}}
Rules:
- Use only what the title and abstract say. Do not invent numbers, names or claims.
- "summary" is at most {MAX_SUMMARY_CHARS} characters.
- "takeaways" has {MIN_TAKEAWAYS} to {MAX_TAKEAWAYS} items, each one sentence of at most \
{MAX_TAKEAWAY_CHARS} characters, without numbering.
- "translations" has exactly the language codes asked for. Translate the abstract faithfully
  and completely; keep method names, dataset names, numbers, URLs and LaTeX as they are.
- Plain text with Markdown at most; no HTML."""


if TYPE_CHECKING:
    # Types alone: openai is imported only with its backend (enrichment.backends).
    from openai.types.chat import ChatCompletionMessageParam


def language_name(code: str) -> str:
    try:
        name: str = get_language_info(code)["name"]
        return name
    except KeyError:
        return code


def build_messages(
    *, title: str, abstract: str, languages: tuple[str, ...]
) -> "list[ChatCompletionMessageParam]":
    wanted = ", ".join(f'"{code}" ({language_name(code)})' for code in languages) or "none"
    user = f"Title: {title}\n\nAbstract:\n{abstract}\n\nTranslations wanted: {wanted}"
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]
