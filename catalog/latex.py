"""Text as arXiv authors write it: LaTeX text macros and math, made safe to show.

Titles, abstracts and summaries carry `\\href{url}{text}`, `\\url{...}`,
`\\emph{...}`, `\\textbf{...}` and math such as `$\\mathcal{O}(n)$`. For pages the
macros become links and emphasis and the math becomes a `<span class="math">`
holding the TeX, which the browser typesets with the vendored KaTeX. For mail,
feeds and meta tags everything becomes readable plain text, math in Unicode.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from html import escape

from pylatexenc.latex2text import LatexNodes2Text

# Math delimiters: $$..$$, \[..\], \(..\), and $..$ where the opening dollar is
# followed and the closing one preceded by a non-space, and the closing one is
# not followed by a digit, so "costs $5 and $10" stays text (Pandoc's rule).
MATH = re.compile(
    r"\$\$(?P<display>.+?)\$\$"
    r"|\\\[(?P<display_bracket>.+?)\\\]"
    r"|\\\((?P<inline_paren>.+?)\\\)"
    r"|\$(?P<inline>[^\s$](?:[^$]*?[^\s$\\])?)\$(?!\d)",
    re.S,
)
MACRO = re.compile(r"\\([A-Za-z]+)\s*")
ESCAPED = {"%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}", " ": " "}
SPECIAL = re.compile(r"[\\$]")
LINK_SCHEMES = ("http://", "https://", "mailto:")
# A web address written out in running text; what ends a sentence after it is not part of it.
PLAIN_URL = re.compile(r"https?://[^\s<>\"'{}|\\^`\[\]]+")
URL_TAIL = ".,;:!?'\")\ue002\ue003"


@dataclass
class Node:
    """A piece of parsed text: plain `text`, or a macro's `kind` around `children`."""

    kind: str = "text"  # text, math, em, strong, code, link
    text: str = ""  # the text, the TeX of math, or the URL of a link
    display: bool = False
    children: list["Node"] = field(default_factory=list)


# One argument for each macro read; \href takes a URL then its text.
MACROS = {
    "href": ("link", 2),
    "url": ("link", 1),
    "emph": ("em", 1),
    "textit": ("em", 1),
    "textsl": ("em", 1),
    "textbf": ("strong", 1),
    "texttt": ("code", 1),
    "textsc": ("group", 1),
    "textrm": ("group", 1),
    "textsf": ("group", 1),
    "textnormal": ("group", 1),
    "mbox": ("group", 1),
}


def parse(text: str) -> list[Node]:
    nodes: list[Node] = []
    position = 0
    plain: list[str] = []

    def flush() -> None:
        if plain:
            nodes.append(Node(text="".join(plain)))
            plain.clear()

    while position < len(text):
        special = SPECIAL.search(text, position)
        if special is None:
            plain.append(text[position:])
            break
        plain.append(text[position : special.start()])
        position = special.start()
        char = special.group(0)
        math = MATH.match(text, position)
        if math:
            flush()
            tex = next(group for group in math.groups() if group is not None)
            # In TeX an unescaped % starts a comment; in an abstract it means percent.
            tex = re.sub(r"(?<!\\)%", r"\\%", tex.strip())
            display = math.lastgroup in ("display", "display_bracket")
            nodes.append(Node(kind="math", text=tex, display=display))
            position = math.end()
            continue
        if char == "\\":
            escaped = text[position + 1 : position + 2]
            if escaped in ESCAPED:
                plain.append(ESCAPED[escaped])
                position += 2
                continue
            macro = MACRO.match(text, position)
            if macro and macro.group(1) in MACROS:
                kind, count = MACROS[macro.group(1)]
                arguments, end = read_arguments(text, macro.end(), count)
                if arguments is not None:
                    flush()
                    nodes.append(macro_node(kind, arguments))
                    position = end
                    continue
        plain.append(char)  # a lone $ or an unknown macro stays as written
        position += 1
    flush()
    return nodes


def read_arguments(text: str, position: int, count: int) -> tuple[list[str] | None, int]:
    """`count` brace-delimited arguments from `position`, or None if they are not there."""
    arguments = []
    for _ in range(count):
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text) or text[position] != "{":
            return None, position
        depth, end = 0, position
        while end < len(text):
            char = text[end]
            if char == "\\":
                end += 2  # an escaped character, \{ or \} included
                continue
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                break
            end += 1
        if depth != 0:
            return None, position
        arguments.append(text[position + 1 : end])
        position = end + 1
    return arguments, position


def macro_node(kind: str, arguments: list[str]) -> Node:
    if kind == "link":
        url = arguments[0].strip().replace("\\%", "%").replace("\\_", "_").replace("\\#", "#")
        label = parse(arguments[1]) if len(arguments) > 1 else [Node(text=url)]
        if not url.lower().startswith(LINK_SCHEMES):
            return Node(kind="group", children=label)
        return Node(kind="link", text=url, children=label)
    return Node(kind=kind, children=parse(arguments[0]))


HTML_TAGS = {"em": "em", "strong": "strong", "code": "code"}


def nodes_to_html(
    nodes: list[Node],
    *,
    text: Callable[[str], str] | None = None,
    math: Callable[[Node], str] | None = None,
    link_text: Callable[[str], str] | None = None,
) -> str:
    """HTML of parsed nodes; `text` and `math` say how plain text and math are written
    (by default escaped, and marked for KaTeX), `link_text` how text within a link
    is (by default as `text`)."""
    text = text or partial(escape, quote=False)
    math = math or (lambda node: math_html(node.text, display=node.display))
    link_text = link_text or text
    parts = []
    for node in nodes:
        if node.kind == "text":
            parts.append(text(node.text))
        elif node.kind == "math":
            parts.append(math(node))
        else:
            inner_text = link_text if node.kind == "link" else text
            inner = nodes_to_html(node.children, text=inner_text, math=math, link_text=link_text)
            if node.kind == "link":
                parts.append(f'<a href="{escape(node.text)}" rel="nofollow noopener">{inner}</a>')
            elif node.kind in HTML_TAGS:
                parts.append(f"<{HTML_TAGS[node.kind]}>{inner}</{HTML_TAGS[node.kind]}>")
            else:
                parts.append(inner)
    return "".join(parts)


def split_urls(text: str) -> list[tuple[bool, str]]:
    """The text in pieces, each (is it a web address, the piece); a closing
    parenthesis ends an address unless the address opened one."""
    pieces: list[tuple[bool, str]] = []
    position = 0
    for match in PLAIN_URL.finditer(text):
        url = match.group(0)
        while url and url[-1] in URL_TAIL:
            if url[-1] == ")" and url.count("(") >= url.count(")"):
                break
            url = url[:-1]
        if len(url) <= len("https://"):
            continue
        pieces.append((False, text[position : match.start()]))
        pieces.append((True, url))
        position = match.start() + len(url)
    pieces.append((False, text[position:]))
    return [(is_url, piece) for is_url, piece in pieces if piece]


def linked_text_html(text: str) -> str:
    """Escaped text with its written-out web addresses as links."""
    return "".join(
        f'<a href="{escape(piece)}" rel="nofollow noopener">{escape(piece, quote=False)}</a>'
        if is_url
        else escape(piece, quote=False)
        for is_url, piece in split_urls(text)
    )


def math_html(tex: str, *, display: bool) -> str:
    kind = "math math-display" if display else "math"
    return f'<span class="{kind}">{escape(tex, quote=False)}</span>'


def nodes_to_text(nodes: list[Node]) -> str:
    parts = []
    for node in nodes:
        if node.kind == "text":
            parts.append(node.text)
        elif node.kind == "math":
            parts.append(math_text(node.text))
        elif node.kind == "link":
            label = nodes_to_text(node.children)
            parts.append(label if label == node.text else f"{label} ({node.text})")
        else:
            parts.append(nodes_to_text(node.children))
    return "".join(parts)


@lru_cache(maxsize=4096)
def math_text(tex: str) -> str:
    """Math as Unicode text: `\\mathcal{O}(n)` reads as a script O, `\\leq` as "≤"."""
    try:
        text = LatexNodes2Text(math_mode="text").latex_to_text(tex)
    except Exception:
        return tex
    return " ".join(text.split())


def has_latex(text: str) -> bool:
    return bool(text) and ("\\" in text or "$" in text)


def latex_to_html(text: str, *, links: bool = False) -> str:
    """Escaped HTML of the text, its macros as links and emphasis, math marked for
    KaTeX; links: written-out web addresses become links too (not in a title,
    which is a link itself)."""
    escaped = linked_text_html if links else partial(escape, quote=False)
    if not has_latex(text):
        return escaped(text or "")
    return nodes_to_html(parse(text), text=escaped, link_text=partial(escape, quote=False))


def latex_to_text(text: str) -> str:
    """Plain text of the text, for mail, feeds and meta tags."""
    if not has_latex(text):
        return text or ""
    return nodes_to_text(parse(text))
