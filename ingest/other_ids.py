"""The ids of papers in sources other than arXiv, in the forms people copy them.

A paper is named by its source key (catalog.models.Paper.source_key):
"openreview:<note id>" for an OpenReview forum, "acl:<Anthology id>" for the
ACL Anthology (its DOIs, 10.18653/v1/<id>, name its papers too), and
"doi:<DOI>" for any other DOI, read from Crossref. arXiv's own DOIs
(10.48550/arXiv.<id>) name arXiv papers, which catalog.arxiv_ids reads first.
"""

import re
from urllib.parse import unquote

# openreview.net/forum?id=…, /pdf?id=…, with other parameters around it.
OPENREVIEW_LINK = re.compile(
    r"openreview\.net/(?:forum|pdf|attachment)/?\?(?:[^\s#\"'<>]*?&)?id=([A-Za-z0-9_-]{5,})", re.I
)
# Anthology ids: new style (2023.acl-long.1, 2022.findings-emnlp.12) and old
# (P19-1001, W18-2504); a version (v2) and ".pdf" or ".bib" may follow.
_ACL_ID = r"(?:(?:19|20)\d{2}\.[a-z][a-z0-9]*(?:-[a-z0-9]+)*\.\d+|[A-Z]\d{2}-\d{4})"
ACL_ID = re.compile(rf"^({_ACL_ID})(?:v\d+)?(?:\.pdf|\.bib)?$")
ACL_LINK = re.compile(
    rf"(?:aclanthology\.org|aclweb\.org/anthology)/(?:anthology/)?({_ACL_ID})(?=v\d|[./?#\s]|$)",
    re.I,
)
ACL_DOI_PREFIX = "10.18653/v1/"
DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"'<>]+)", re.I)
_DOI_TRAILING = ".,;:)]}"
ARXIV_DOI_PREFIX = "10.48550/"

SOURCE_NAMES = {"doi": "Crossref", "openreview": "OpenReview", "acl": "the ACL Anthology"}


def find_doi(text: str) -> str:
    """The first DOI in text, as written, without what ends the sentence around it."""
    match = DOI.search(unquote(text))
    return match.group(1).rstrip(_DOI_TRAILING) if match else ""


def doi_key(doi: str) -> str:
    """The source key of a DOI: an ACL Anthology paper's, or Crossref's ("" for arXiv's)."""
    if doi.lower().startswith(ACL_DOI_PREFIX):
        return acl_key(doi[len(ACL_DOI_PREFIX) :])
    if doi.lower().startswith(ARXIV_DOI_PREFIX):
        return ""
    return f"doi:{doi.lower()}"


def acl_key(anthology_id: str) -> str:
    match = ACL_ID.match(anthology_id.strip())
    return f"acl:{match.group(1)}" if match else ""


def find_source_key(text: str) -> str:
    """The source key the text names (a link, an Anthology id, a DOI), or ""."""
    if match := OPENREVIEW_LINK.search(text):
        return f"openreview:{match.group(1)}"
    if match := ACL_LINK.search(text):
        return f"acl:{match.group(1)}"
    if key := acl_key(text.strip().strip("<>()[]")):
        return key
    if doi := find_doi(text):
        return doi_key(doi)
    return ""


def source_name(key: str) -> str:
    """The source a key is read from, in words: "Crossref", "OpenReview"."""
    return SOURCE_NAMES.get(key.partition(":")[0], "its source")
