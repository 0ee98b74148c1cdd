"""What the model is asked to write, and the check of what it wrote.

The model answers from numbered passages, each claim followed by its quote in
the form [n: "words copied from passage n"], or with NOT_IN_TEXT alone when the
passages do not tell. An answer is accepted only if every quote is found,
verbatim but for whitespace, in the stored paragraph its number names, and no
claim is left without a quote; otherwise it is refused and the reader gets
the passages instead.
"""

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from answers.passages import PASSAGE_CHARACTERS, Passage

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

NOT_IN_TEXT = "NOT_IN_TEXT"
# [3: "words"], with straight or curly quotes, spaces anywhere between.
CITATION = re.compile(r"\[\s*(\d{1,3})\s*:\s*[\"“”]([^\"“”]*)[\"“”]\s*\]")
# Text between a last quote and the answer's end that is no claim of its own.
TRAILING = re.compile(r"[\s.,;:!?)\]]*")
# A claim shorter than this is no claim ("." between two quotes).
WORDS = re.compile(r"\w")
INSTRUCTIONS = (
    "You answer a reader's question about a research paper from numbered passages of "
    "its text, and from nothing else. Write a short answer in the language of the "
    "question. After every claim, put its evidence in the form "
    '[n: "exact words"] where n is the passage\'s number and the exact words are '
    "copied character for character from that passage (a phrase or a sentence, not a "
    "paraphrase). Every sentence of the answer must end with such a quote. If the "
    f"passages do not answer the question, write only {NOT_IN_TEXT}."
)


class Refused(Exception):
    """The answer cannot be shown: a quote not in its passage, a claim without one."""


@dataclass(frozen=True)
class Piece:
    kind: Literal["claim", "quote"]
    text: str
    passage: Passage | None = None


@dataclass
class Checked:
    """An accepted answer: its claims and quotes in order, or not_in_text."""

    pieces: list[Piece] = field(default_factory=list)
    not_in_text: bool = False


def messages(*, question: str, passages: list[Passage]) -> list["ChatCompletionMessageParam"]:
    numbered = "\n\n".join(
        f"[{passage.number}] ({passage.heading or 'untitled section'})\n"
        + passage.text[:PASSAGE_CHARACTERS]
        for passage in passages
    )
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": f"Passages:\n\n{numbered}\n\nQuestion: {question}"},
    ]


def _spaced(text: str) -> str:
    return " ".join(text.split())


def check(text: str, *, passages: list[Passage], verify: bool = True) -> Checked:
    """The answer's claims and quotes, each quote found in its passage; Refused
    saying why when one is not. verify=False reads an answer checked before it
    was kept, whose passages' texts are not read again."""
    if text.strip().strip(".") == NOT_IN_TEXT:
        return Checked(not_in_text=True)
    by_number = {passage.number: passage for passage in passages}
    pieces: list[Piece] = []
    end = 0
    for match in CITATION.finditer(text):
        claim = text[end : match.start()]
        if WORDS.search(claim):
            pieces.append(Piece(kind="claim", text=claim))
        elif not pieces:
            raise Refused("the answer starts with a quote and no claim")
        number, quote = int(match.group(1)), _spaced(match.group(2))
        passage = by_number.get(number)
        if passage is None:
            raise Refused(f"a quote names passage {number}, which it was not given")
        if not quote or (verify and quote not in _spaced(passage.text)):
            raise Refused(f"a quote is not in passage {number}: {quote[:80]!r}")
        pieces.append(Piece(kind="quote", text=quote, passage=passage))
        end = match.end()
    if not pieces:
        raise Refused("the answer quotes nothing")
    if not TRAILING.fullmatch(text[end:]):
        raise Refused(f"a claim has no quote: {text[end:].strip()[:80]!r}")
    return Checked(pieces=pieces)
