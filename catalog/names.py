"""Authors' names split into their parts, as reference managers want them.

arXiv lists names as written ("Jean-Pierre van der Berg", "John Smith Jr.",
"ATLAS Collaboration"). nameparser finds the given names, the particles, the
family name and the suffix of a person's name; a name that is a group's (a
collaboration, a team, a single word such as "DeepSeek-AI") is kept whole, as
a literal, so that no export abbreviates it to "Collaboration, A.".
"""

import re
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


def family_name(name: str) -> str:
    """The word a citation key starts with: the family name, or a group's first word."""
    parsed = parse_name(name)
    return parsed.family or (parsed.literal.split() or [""])[0]
