"""arXiv identifiers: parsing, normalising and the links derived from them."""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

# New style: YYMM.NNNN (2007-2014) or YYMM.NNNNN (2015 on); old style:
# archive(.SUBJ)/YYMMNNN, e.g. hep-ex/0406020 or math.GT/0309136.
NEW_STYLE = re.compile(r"(?P<id>\d{4}\.\d{4,5})(?:v(?P<version>\d+))?")
OLD_STYLE = re.compile(r"(?P<id>[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<version>\d+))?")
ID_PATTERN = rf"(?:{NEW_STYLE.pattern}|{OLD_STYLE.pattern})"


def split_version(raw: str) -> tuple[str, int | None] | None:
    """Return (id without version, version or None) for a valid arXiv id, else None.

    Accepts the forms people paste: "arXiv:2505.15034v2", an abs/pdf URL.
    """
    text = raw.strip()
    text = re.sub(r"^(?:https?://)?(?:www\.)?arxiv\.org/(?:abs|pdf)/", "", text, flags=re.I)
    text = re.sub(r"^arxiv:", "", text, flags=re.I).removesuffix(".pdf")
    for pattern in (NEW_STYLE, OLD_STYLE):
        match = pattern.fullmatch(text)
        if match:
            version = match.group("version")
            return match.group("id"), int(version) if version else None
    return None


def normalize(raw: str) -> str | None:
    parsed = split_version(raw)
    return parsed[0] if parsed else None


def abs_url(arxiv_id: str) -> str:
    return settings.ARXIV_ABS_URL.format(id=arxiv_id)


def pdf_url(arxiv_id: str) -> str:
    return settings.ARXIV_PDF_URL.format(id=arxiv_id)


def community_url(arxiv_id: str) -> str:
    return settings.PAPER_COMMUNITY_URL.format(id=arxiv_id)


# The archives of old-style ids (before April 2007): what may come before the slash.
OLD_ARCHIVES = frozenset(
    [
        "acc-phys",
        "adap-org",
        "alg-geom",
        "ao-sci",
        "astro-ph",
        "atom-ph",
        "bayes-an",
        "chao-dyn",
        "chem-ph",
        "cmp-lg",
        "comp-gas",
        "cond-mat",
        "cs",
        "dg-ga",
        "funct-an",
        "gr-qc",
        "hep-ex",
        "hep-lat",
        "hep-ph",
        "hep-th",
        "math",
        "math-ph",
        "mtrl-th",
        "nlin",
        "nucl-ex",
        "nucl-th",
        "patt-sol",
        "physics",
        "plasm-ph",
        "q-alg",
        "q-bio",
        "quant-ph",
        "solv-int",
        "supr-con",
    ]
)
# An id inside a longer text (a URL, a DOI such as 10.48550/arXiv.2505.15034):
# not glued to further digits, so "12505.150341" holds none.
_NEW_IN_TEXT = re.compile(r"(?<!\d)(?<!\d\.)(\d{4})\.(\d{4,5})(?:v\d+)?(?!\d)")
_OLD_IN_TEXT = re.compile(r"(?<![\w.-])([a-z][a-z-]*)(?:\.[A-Za-z]{2})?/(\d{7})(?:v\d+)?(?!\d)")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?[^/\s?#]+\.[a-z]{2,}(?::\d+)?[/?#]", re.I)
# What surrounds a pasted id or link in running text, markdown or a citation.
_WRAPPING = "<>()[]{}\"'`*.,;:!"
_SEPARATORS = re.compile(r"[\s,;]+")
_ARXIV_PREFIX = re.compile(r"^(?:arxiv:|(?:doi:)?10\.48550/arxiv\.)", re.I)


@dataclass(frozen=True)
class PastedItem:
    """One thing a person pasted: an arXiv id found in it, or None."""

    text: str
    arxiv_id: str | None


def parse_pasted(text: str) -> list[PastedItem]:
    """Every arXiv id in text, in the forms people copy, with what does not name one.

    Items are one a line or separated by spaces, commas or semicolons: bare
    ids with or without version or "arXiv:", abs/pdf/html URLs of arxiv.org
    and its mirrors, DOIs, and the pages of other sites that carry the id
    (Hugging Face, alphaXiv, Papers with Code...). Words beside an id on its
    line ("see", "arXiv:") are ignored; a line naming no paper, or a token on
    it that looks meant as one (it has a digit or a slash), comes back with
    arxiv_id None. Old-style ids lose their subject class (math.GT/0309136
    is math/0309136, as arXiv names it).
    """
    items: list[PastedItem] = []
    for line in text.splitlines():
        tokens = [t for t in _SEPARATORS.split(line) if t.strip(_WRAPPING)]
        found = [PastedItem(token, find_id(token)) for token in tokens]
        if any(item.arxiv_id for item in found):
            items += [i for i in found if i.arxiv_id or re.search(r"[\d/]", i.text)]
        elif line.strip():
            items.append(PastedItem(line.strip(), None))
    return items


def find_id(token: str) -> str | None:
    """The arXiv id (without version) one pasted token names, or None."""
    text = _ARXIV_PREFIX.sub("", token.strip(_WRAPPING)).strip(_WRAPPING)
    parsed = split_version(text)
    if parsed is not None:
        return _canonical(parsed[0])
    if not _URL.match(text):
        return None
    found = {
        f"{match.group(1)}.{match.group(2)}"
        for match in _NEW_IN_TEXT.finditer(text)
        if _new_style_is_real(match.group(1), match.group(2))
    } | {
        f"{match.group(1)}/{match.group(2)}"
        for match in _OLD_IN_TEXT.finditer(text)
        if match.group(1) in OLD_ARCHIVES and _old_style_is_real(match.group(2))
    }
    # A link carrying two different ids names no one paper.
    return found.pop() if len(found) == 1 else None


def _canonical(arxiv_id: str) -> str | None:
    if "/" in arxiv_id:
        archive, number = arxiv_id.split("/")
        archive = archive.split(".")[0]
        return (
            f"{archive}/{number}"
            if archive in OLD_ARCHIVES and _old_style_is_real(number)
            else None
        )
    yymm, number = arxiv_id.split(".")
    return arxiv_id if _new_style_is_real(yymm, number) else None


def _new_style_is_real(yymm: str, number: str) -> bool:
    """New-style ids began in April 2007, with five digits from January 2015."""
    if not 1 <= int(yymm[2:]) <= 12 or yymm < "0704":
        return False
    return len(number) == (5 if yymm >= "1501" else 4)


def _old_style_is_real(number: str) -> bool:
    """Old-style numbers are YYMMNNN, from August 1991 to March 2007."""
    yymm = number[:4]
    month = int(yymm[2:])
    return 1 <= month <= 12 and ("9108" <= yymm <= "9912" or "0001" <= yymm <= "0703")


# Links are labelled by where they go: known sites by name, others by host.
SITE_NAMES = {
    "huggingface.co": "Hugging Face",
    "paperswithcode.com": "Papers with Code",
    "alphaxiv.org": "alphaXiv",
    "semanticscholar.org": "Semantic Scholar",
    "scholar.google.com": "Google Scholar",
}


def community_label() -> str:
    host = (urlsplit(settings.PAPER_COMMUNITY_URL).hostname or "").removeprefix("www.")
    return SITE_NAMES.get(host, host)
