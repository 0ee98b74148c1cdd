"""Authors' names split into their parts, as reference managers want them.

arXiv lists names as written ("Jean-Pierre van der Berg", "John Smith Jr.",
"ATLAS Collaboration"). Where the source gave a name in parts (the metadata
snapshot's parsed names, OAI-PMH's keyname and forenames), those parts are kept
(Paper.author_parts) and used as given; otherwise nameparser finds the given
names, the particles, the family name and the suffix of a person's name. A name
that is a group's (a collaboration, a team, a single word such as
"DeepSeek-AI") is kept whole, as a literal, so that no export abbreviates it to
"Collaboration, A.".
"""

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from nameparser import HumanName

# Words that make a name a group's rather than a person's.
GROUP_WORDS = frozenset(
    {
        "collaboration",
        "collaborations",
        "consortium",
        "team",
        "group",
        "project",
        "committee",
        "society",
        "association",
        "institute",
        "laboratory",
        "lab",
        "labs",
        "university",
        "foundation",
        "organization",
        "organisation",
        "inc",
        "ltd",
        "llc",
        "corporation",
        "community",
        "initiative",
        "network",
        "alliance",
        "working",
        "et",
    }
)
WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class Name:
    """One author. A group's name is `literal` alone; a person's has the rest."""

    given: str = ""
    particle: str = ""  # "van der": lower-case words before the family name
    family: str = ""
    suffix: str = ""  # "Jr.", "III"
    literal: str = ""

    @property
    def family_with_particle(self) -> str:
        return f"{self.particle} {self.family}".strip()


def is_group(name: str) -> bool:
    words = name.split()
    if len(words) < 2:
        return True
    return any(word.casefold() in GROUP_WORDS for word in WORD.findall(name))


def parse_name(name: str) -> Name:
    name = " ".join(name.split())
    if not name or is_group(name):
        return Name(literal=name)
    parsed = HumanName(name)
    family_words = parsed.last.split()
    # Particles are the lower-case words nameparser joined to the family name.
    particles: list[str] = []
    while len(family_words) > 1 and family_words[0].islower():
        particles.append(family_words.pop(0))
    given = " ".join(part for part in (parsed.title, parsed.first, parsed.middle) if part)
    family = " ".join(family_words)
    if not family:
        return Name(literal=name)
    return Name(given=given, particle=" ".join(particles), family=family, suffix=parsed.suffix)


def from_parts(name: str, *, family: str, given: str, suffix: str) -> Name:
    """A name as its source split it: the family name as given (lower-case words
    leading it are its particles: "van der" Berg), the given names and suffix."""
    if is_group(name):
        return Name(literal=name)
    family_words = family.split()
    particles: list[str] = []
    while len(family_words) > 1 and family_words[0].islower():
        particles.append(family_words.pop(0))
    return Name(
        given=" ".join(given.split()),
        particle=" ".join(particles),
        family=" ".join(family_words),
        suffix=" ".join(suffix.split()),
    )


def named_in_parts(names: Sequence[str], parts: Sequence[Sequence[str]]) -> list[Name]:
    """Each name in its parts: as its source gave them where they are kept and
    still spell the name (a curator may have renamed or merged the author since),
    parsed otherwise."""
    named = []
    for position, name in enumerate(names):
        if not name.strip():
            continue
        given = parts[position] if len(parts) == len(names) else ()
        if len(given) == 3 and given[0].strip():
            family, first, suffix = given
            spelled = " ".join(part for part in (first, family, suffix) if part)
            if normalize_name(spelled) == normalize_name(name):
                named.append(from_parts(name, family=family, given=first, suffix=suffix))
                continue
        named.append(parse_name(name))
    return named


def normalize_name(name: str) -> str:
    """The key two spellings of one author share: case, spacing and accents
    folded, so "José  García" and "jose garcia" are one author. Letters that
    are not accented Latin ones (Hangul, Han) are kept whole."""
    parts = unicodedata.normalize("NFKD", " ".join(name.split()))
    unaccented = "".join(char for char in parts if not unicodedata.combining(char))
    return unicodedata.normalize("NFC", unaccented).casefold()


def key_word(name: Name) -> str:
    """The word a citation key starts with: the family name, or a group's first
    word, in ASCII letters ("García Márquez" is "garciamarquez")."""
    word = name.family or (name.literal.split() or [""])[0]
    unaccented = unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]", "", unaccented).lower()
