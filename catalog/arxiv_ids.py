"""arXiv identifiers: parsing, normalising and the links derived from them."""

import re
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
