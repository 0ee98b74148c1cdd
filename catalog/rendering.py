"""Stored text made safe to show: Markdown through a sanitiser."""

import re

import markdown
import nh3

from catalog.latex import Node, has_latex, math_html, nodes_to_html, parse

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
