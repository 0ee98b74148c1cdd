"""Checks a language model's answer before anything of it is stored."""

import json
import re

from enrichment.base import Enrichment

MAX_SUMMARY_CHARS = 1200
MIN_TAKEAWAYS = 3
MAX_TAKEAWAYS = 7
MAX_TAKEAWAY_CHARS = 400

# Letters of the script each language is written in. A share of the answer's
# letters must be in it: technical terms legitimately stay in Latin letters.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
SCRIPTS = {
    "en": ("Latin", re.compile(r"[A-Za-z]"), 0.8),
    "zh": ("Chinese", re.compile(f"[{HAN}]"), 0.25),
    "ja": ("Japanese", re.compile(f"[{HAN}\u3040-\u30ff]"), 0.25),
    "ko": ("Korean (Hangul)", re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]"), 0.25),
    "ru": ("Cyrillic", re.compile(r"[\u0400-\u04ff]"), 0.25),
    "uk": ("Cyrillic", re.compile(r"[\u0400-\u04ff]"), 0.25),
}
CODE_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
LIST_MARKER = re.compile(r"^(?:\d+[.)]|[-*•])\s+")


class InvalidAnswer(Exception):
    pass


def check_language(text: str, *, language: str, what: str) -> None:
    script = SCRIPTS.get(language.split("-")[0].lower())
    if script is None:
        return
    name, pattern, least_share = script
    letters = [ch for ch in text if ch.isalpha()]
    in_script = sum(1 for ch in letters if pattern.match(ch))
    if not letters or in_script / len(letters) < least_share:
        raise InvalidAnswer(f"{what} is not in {language}: too few {name} letters")


def _text(value: object, *, what: str, max_chars: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidAnswer(f"{what} is missing or empty")
    text = value.strip()
    if len(text) > max_chars:
        raise InvalidAnswer(f"{what} is too long ({len(text)} characters, at most {max_chars})")
    return text


def parse_answer(
    *,
    content: str | None,
    finish_reason: str | None,
    abstract: str,
    languages: tuple[str, ...],
) -> Enrichment:
    """The Enrichment in a chat-completion answer, or InvalidAnswer saying what is wrong."""
    if finish_reason == "length":
        raise InvalidAnswer("the answer was cut off at the token limit")
    if not content or not content.strip():
        raise InvalidAnswer("the answer is empty")
    raw = content.strip()
    fenced = CODE_FENCE.match(raw)
    if fenced:
        raw = fenced.group(1)
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"the answer is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise InvalidAnswer("the answer is not a JSON object")

    summary = _text(data.get("summary"), what="the summary", max_chars=MAX_SUMMARY_CHARS)
    check_language(summary, language="en", what="the summary")

    items = data.get("takeaways")
    if not isinstance(items, list):
        raise InvalidAnswer("the takeaways are not a list")
    if not MIN_TAKEAWAYS <= len(items) <= MAX_TAKEAWAYS:
        raise InvalidAnswer(f"{len(items)} takeaways, expected {MIN_TAKEAWAYS} to {MAX_TAKEAWAYS}")
    takeaways = []
    for number, item in enumerate(items, 1):
        text = _text(item, what=f"takeaway {number}", max_chars=MAX_TAKEAWAY_CHARS)
        text = LIST_MARKER.sub("", " ".join(text.split()))
        check_language(text, language="en", what=f"takeaway {number}")
        takeaways.append(text)

    given = data.get("translations")
    if not isinstance(given, dict):
        given = {}
    # A faithful translation is rarely more than twice as long as the original.
    max_translation = 2 * len(abstract) + 500
    translations = {}
    for language in languages:
        what = f"the {language} translation"
        text = _text(given.get(language), what=what, max_chars=max_translation)
        if " ".join(text.split()) == " ".join(abstract.split()):
            raise InvalidAnswer(f"{what} is the abstract itself")
        check_language(text, language=language, what=what)
        translations[language] = text
    return Enrichment(summary=summary, takeaways=tuple(takeaways), translations=translations)
