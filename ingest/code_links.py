"""Code and project links found in the text arXiv gives: an abstract or an author comment.

The text is the authors' LaTeX source: links come wrapped in \\url{...},
\\href{...}{label} or \\footnote{...}, with escaped underscores, footnote
marks run into them ($^1$), line breaks in the middle, and sentence
punctuation after. find_code_links() reads both texts and says which link,
if any, is the paper's official one: only a link the text presents as the
authors' own (our code, project page, a link standing alone in the
comment), never one mentioned in passing (a baseline, a leaderboard, a
video). Measured on a labelled set of real abstracts by bench/code_links.py.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

# Hosts whose links are code (or models and datasets) rather than a project page.
CODE_HOSTS = ("github.com", "gitlab.com", "huggingface.co")
# Where authors put their code, best first: the official link is one of these if any is.
REPOSITORY_HOSTS = (
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "anonymous.4open.science",
    "huggingface.co",
)
# Links to the paper itself or to its publication record, never to its code.
PAPER_HOSTS = (
    "arxiv.org",
    "doi.org",
    "openreview.net",
    "aclanthology.org",
    "ieeexplore.ieee.org",
    "dl.acm.org",
    "link.springer.com",
    "sciencedirect.com",
    "proceedings.mlr.press",
    "proceedings.neurips.cc",
    "papers.nips.cc",
    "openaccess.thecvf.com",
)
# A document (a copy of the paper, slides, a poster) is no code, wherever it is.
DOCUMENTS = (".pdf", ".ps", ".ps.gz", ".djvu", ".ppt", ".pptx")
# Links that are never a paper's code, however they are introduced.
NEVER_OFFICIAL_HOSTS = (
    "youtube.com",
    "youtu.be",
    "vimeo.com",
    "bilibili.com",
    "medium.com",
    "twitter.com",
    "x.com",
    "linkedin.com",
)

# \href{target}{label}: the label (which may nest braces) is dropped, the target kept.
_BRACED = r"\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"
LATEX_HREF = re.compile(r"\\href\s*\{([^{}]*)\}\s*" + _BRACED)
LATEX_LINK = re.compile(r"\\(?:url|footnote|texttt|path)\s*\{([^{}]*)\}")
LATEX_COLOR = re.compile(r"\\(?:textcolor|color)\s*\{[^{}]*\}")
LATEX_COMMAND = re.compile(r"\\[A-Za-z]+\*?")
LATEX_TILDE = re.compile(r"\\textasciitilde(?:\{\}|\s*)|\\~(?:\{\})?")
LATEX_ESCAPE = re.compile(r"\\([_%&#$])")
# Footnote and affiliation marks: $^1$, $^{\dagger}$, ^{*}
FOOTNOTE_MARK = re.compile(r"\$\^\{?[^$]{0,12}\}?\$|\^\{[^{}]{0,12}\}")
# A line break inside a link: the link so far ends where a path goes on
# ("https://github.com/\nowner/repo", "tools-\nkit"), and the next line starts
# with more of it. A full stop counts only before a lower-case host part
# ("github.\ncom/..."), not before the next sentence.
BROKEN_LINK = re.compile(
    r"((?:https?://|www\.)[^\s]*?(?:[/\-_=?&#~%]|\.(?=\n[ \t]*[a-z][\w-]*[./])))"
    r"\n[ \t]*(?=[\w\-./~%?=&#]+)"
)

# "https: //site.org", as some abstracts write it.
SPACED_SCHEME = re.compile(r"\b(https?):\s*//")

# RFC 3986 characters minus the brackets, quote and dollar that text puts around links.
# ASCII only, so a link run into Chinese or full-width punctuation ends there.
URL_CHARS = r"[A-Za-z0-9\-._~:/?#@!&*+,;=%()]"
URL = re.compile(
    rf"(?<![A-Za-z])https?://{URL_CHARS}+"
    # Written without a scheme: "code: github.com/a/b", "user.github.io/tool", "www.site.org/x".
    rf"|(?<![\w./@-])(?:www\.)?(?:{'|'.join(map(re.escape, CODE_HOSTS))})/{URL_CHARS}+"
    rf"|(?<![\w./@-])[A-Za-z0-9-]+\.github\.io(?:/{URL_CHARS}*)?"
    rf"|(?<![\w./@-])www\.[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/{URL_CHARS}*)?",
    re.IGNORECASE,
)
TRAILING_PUNCTUATION = ".,;:!?*"

# How a text introduces its own release, and how it mentions others' work.
OWN = re.compile(
    r"\b(?:our|we|us|code|codes|source|implementation|repo|repository|project|page|"
    r"website|webpage|homepage|site|demo|data|dataset|datasets|benchmark|model|models|"
    r"weights|checkpoints?|resources|toolkit|library|package|github|available|released?|"
    r"found|find|visit|hosted|accessible|provided|maintained)\b",
    re.IGNORECASE,
)
OTHERS = re.compile(
    r"\b(?:e\.g|i\.e|such as|based on|buil(?:t|ds?|ding) (?:up)?on|adapted from|borrowed from|"
    r"taken from|forked from|leaderboards?|ranks?|ranked|third[- ]party|et al|"
    r"compared? (?:to|with|against)|compares (?:to|with|against)|"
    r"using|we use|uses|used|preprint|published|publication|proceedings|journal|"
    r"conference|workshop|slides|talk|blog|tweet)\b",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?:[.!?;]\s|\n\s*\n)")


@dataclass(frozen=True)
class FoundLink:
    url: str
    source: str  # "abstract" or "comment"
    official: bool


def find_code_links(*, abstract: str, comment: str = "") -> list[FoundLink]:
    """The links of abstract and comment, in order, each once; at most one official."""
    found: dict[str, tuple[str, bool]] = {}
    for source, text in (("abstract", abstract), ("comment", comment)):
        for url, context in _links_with_context(text or ""):
            if url not in found:
                found[url] = (source, _is_own(url, context, in_comment=source == "comment"))
            elif not found[url][1] and _is_own(url, context, in_comment=source == "comment"):
                found[url] = (found[url][0], True)
    own = [url for url, (_, is_own) in found.items() if is_own]
    official = min(own, key=_preference, default=None)
    return [FoundLink(url, source, url == official) for url, (source, _) in found.items()]


def extract_code_urls(text: str) -> list[str]:
    """Code, model, dataset and project-page URLs in text, normalised, in order of appearance."""
    urls: list[str] = []
    for url, _ in _links_with_context(text):
        if url not in urls:
            urls.append(url)
    return urls


def normalize_url(raw: str) -> str | None:
    """The canonical spelling of a link found in text, or None if it is no code link."""
    url = _strip_trailing(raw)
    if "://" not in url:
        url = f"https://{url}"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if host.removeprefix("www.") in CODE_HOSTS:
        host = host.removeprefix("www.")
    path = parts.path.rstrip("/").removesuffix(".git")
    if "." not in host or _is_paper_link(host, path) or path.lower().endswith(DOCUMENTS):
        return None
    if host in CODE_HOSTS and not path:
        # The site's front page, not anyone's code.
        return None
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit(("https", netloc, path, parts.query, parts.fragment))


def _links_with_context(text: str) -> list[tuple[str, str]]:
    """(normalised url, the text of its sentence before it) for each link in text."""
    plain = _plain_text(text)
    links = []
    for match in URL.finditer(plain):
        url = normalize_url(match.group())
        if url:
            starts = [m.end() for m in SENTENCE_END.finditer(plain, 0, match.start())]
            links.append((url, plain[starts[-1] if starts else 0 : match.start()]))
    return links


def _plain_text(text: str) -> str:
    text = BROKEN_LINK.sub(r"\1", SPACED_SCHEME.sub(r"\1://", text))
    text = LATEX_ESCAPE.sub(r"\1", LATEX_TILDE.sub("~", text))
    text = FOOTNOTE_MARK.sub(" ", text)
    # Spaces around each target keep it from running into the words beside it.
    text = LATEX_HREF.sub(r" \1 ", text)
    text = LATEX_COLOR.sub(" ", text)
    text = LATEX_LINK.sub(r" \1 ", text)
    # What is left of math ($...$) is no part of a link.
    return LATEX_COMMAND.sub(" ", text).replace("$", " ")


def _is_own(url: str, context: str, *, in_comment: bool) -> bool:
    """Whether the text presents the link as the authors' own release."""
    host = urlsplit(url).hostname or ""
    if any(host == h or host.endswith(f".{h}") for h in NEVER_OFFICIAL_HOSTS):
        return False
    if OTHERS.search(context):
        return False
    # A link standing alone (a comment's "Accepted at X, https://...", or a
    # sentence that is only the link) is the authors'.
    standalone = not context.strip(" \t\n,:;-\u2013\u2014()[]") or in_comment
    return standalone or bool(OWN.search(context))


def _preference(url: str) -> int:
    host = urlsplit(url).hostname or ""
    if host in REPOSITORY_HOSTS:
        return REPOSITORY_HOSTS.index(host)
    return len(REPOSITORY_HOSTS)


def _strip_trailing(url: str) -> str:
    """Drop the sentence punctuation a link ends in; a ")" only when it closes
    nothing opened inside the link, so links like ".../Foo_(bar)" stay whole."""
    while True:
        stripped = url.rstrip(TRAILING_PUNCTUATION).rstrip("/")
        if stripped.endswith(")") and stripped.count(")") > stripped.count("("):
            stripped = stripped[:-1]
        if stripped == url:
            return url
        url = stripped


def _is_paper_link(host: str, path: str) -> bool:
    if any(host == domain or host.endswith(f".{domain}") for domain in PAPER_HOSTS):
        return True
    # Hugging Face's paper pages mirror arXiv listings; its repositories are code.
    return host == "huggingface.co" and (path == "/papers" or path.startswith("/papers/"))
