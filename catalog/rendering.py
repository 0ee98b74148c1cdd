"""Stored text made safe to show: Markdown through a sanitiser, and BibTeX."""

import re

import markdown
import nh3

from catalog.latex import Node, has_latex, math_html, nodes_to_html, parse
from catalog.models import Paper

# Stands for one piece of math while Markdown and the sanitiser run: Markdown
# would read its underscores and asterisks as emphasis. Private-use characters.
MATH_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")

ALLOWED_TAGS = {
    "p", "br", "strong", "em", "b", "i", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h3", "h4", "sup", "sub", "hr",
}  # fmt: skip


def render_markdown(text: str) -> str:
    """Markdown as sanitised HTML; LaTeX macros in it become links and emphasis, and
    its math is marked for KaTeX."""
    maths: list[Node] = []
    if has_latex(text):

        def hold(node: Node) -> str:
            maths.append(node)
            return f"\ue000{len(maths) - 1}\ue001"

        text = nodes_to_html(parse(text), text=str, math=hold)
    html = markdown.markdown(text or "", extensions=["sane_lists"], output_format="html")
    html = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )
    if not maths:
        return html

    def typeset(match: re.Match[str]) -> str:
        node = maths[int(match.group(1))]
        return math_html(node.text, display=node.display)

    return MATH_PLACEHOLDER.sub(typeset, html)


def bibtex_key(paper: Paper) -> str:
    """First author's surname, year and first word of the title: "smith2025learning"."""
    year = paper.published_at.year if paper.published_at else None
    first_author = paper.author_list[0].split()[-1] if paper.author_list else ""
    first_word = next(iter(re.findall(r"[A-Za-z]{3,}", paper.title)), "paper")
    key = re.sub(r"[^A-Za-z0-9]", "", f"{first_author}{year or ''}{first_word}").lower()
    return key or "paper"


def _braced(text: str) -> str:
    """A value as BibTeX reads it between braces: unbalanced braces would end
    it early (or never), so those are dropped; so are line breaks."""
    text = " ".join(text.split())
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            break
    return text if depth == 0 else text.replace("{", "").replace("}", "")


def bibtex(paper: Paper, *, key: str | None = None) -> str:
    """One BibTeX entry; needs primary_category fetched."""
    authors = " and ".join(paper.author_list)
    year = paper.published_at.year if paper.published_at else None
    fields = [("title", "{" + _braced(paper.title) + "}"), ("author", _braced(authors))]
    if year:
        fields.append(("year", str(year)))
    if paper.arxiv_id:
        fields += [
            ("eprint", paper.arxiv_id),
            ("archivePrefix", "arXiv"),
            ("url", paper.abs_url),
        ]
        if paper.primary_category is not None:
            fields.append(("primaryClass", paper.primary_category.code))
    if paper.journal_ref:
        fields.append(("journal", _braced(paper.journal_ref)))
    if paper.doi:
        fields.append(("doi", _braced(paper.doi)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
    entry = "article" if paper.journal_ref else "misc"
    return f"@{entry}{{{key or bibtex_key(paper)},\n{body}\n}}"
