"""Code and project links found in the text arXiv gives: an abstract or an author comment."""

import re
from urllib.parse import urlsplit, urlunsplit

# Hosts whose links are code (or models and datasets) rather than a project page.
CODE_HOSTS = ("github.com", "gitlab.com", "huggingface.co")
# Links to the paper itself or to its publication record, never to its code.
PAPER_HOSTS = ("arxiv.org", "doi.org")

# arXiv text is LaTeX source: links come wrapped in \url{...} or \href{...}{label}
# and underscores, percent signs and the like come escaped.
LATEX_LINK = re.compile(r"\\(?:url|href)\s*\{([^{}]*)\}")
LATEX_TILDE = re.compile(r"\\textasciitilde(?:\{\}|\s*)|\\~(?:\{\})?")
LATEX_ESCAPE = re.compile(r"\\([_%&#$])")

# RFC 3986 characters minus the brackets and quote that text puts around links.
# ASCII only, so a link run into Chinese or full-width punctuation ends there.
URL_CHARS = r"[A-Za-z0-9\-._~:/?#@!$&*+,;=%()]"
URL = re.compile(
    rf"(?<![A-Za-z])https?://{URL_CHARS}+"
    # Code hosts are often written without a scheme: "code: github.com/a/b".
    rf"|(?<![\w./@-])(?:www\.)?(?:{'|'.join(map(re.escape, CODE_HOSTS))})/{URL_CHARS}+",
    re.IGNORECASE,
)
TRAILING_PUNCTUATION = ".,;:!?*"


def extract_code_urls(text: str) -> list[str]:
    """Code, model, dataset and project-page URLs in text, normalised, in order of appearance."""
    urls: list[str] = []
    for match in URL.finditer(_plain_text(text)):
        url = normalize_url(match.group())
        if url and url not in urls:
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
    host = parts.hostname or ""
    if host.removeprefix("www.") in CODE_HOSTS:
        host = host.removeprefix("www.")
    path = parts.path.rstrip("/").removesuffix(".git")
    if "." not in host or _is_paper_link(host, path):
        return None
    if host in CODE_HOSTS and not path:
        # The site's front page, not anyone's code.
        return None
    netloc = host if port is None else f"{host}:{port}"
    return urlunsplit(("https", netloc, path, parts.query, parts.fragment))


def _plain_text(text: str) -> str:
    text = LATEX_ESCAPE.sub(r"\1", LATEX_TILDE.sub("~", text))
    # Spaces around the target keep an \href label from running into it.
    return LATEX_LINK.sub(r" \1 ", text)


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
