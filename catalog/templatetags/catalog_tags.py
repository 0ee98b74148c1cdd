import dataclasses
import datetime
import json
from functools import cache

from django import template
from django.core.files.storage import default_storage
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from catalog import cards, filters, highlight, page_cache
from catalog.exports import scholarly_article
from catalog.latex import latex_to_html, latex_to_text
from catalog.models import Author, Category, Paper, Tag
from catalog.models import tag_label as label_of_tag
from catalog.rendering import render_markdown
from catalog.trending import WINDOWS
from core.fragments import Fragments, digest, template_digest

register = template.Library()
# What Django's json_script escapes: nothing in the data can end the element.
JSON_SCRIPT_ESCAPES = {ord(">"): "\\u003E", ord("<"): "\\u003C", ord("&"): "\\u0026"}


@register.filter
def markdown(text: str) -> SafeString:
    # render_markdown sanitises with nh3, so its output is safe to mark.
    return mark_safe(render_markdown(text))  # noqa: S308


@register.filter
def latex(text: str) -> SafeString:
    """A title or abstract as written on arXiv: macros as links and emphasis, math for KaTeX."""
    # latex_to_html escapes all text and writes only its own tags and checked links.
    return mark_safe(latex_to_html(text))  # noqa: S308


@register.filter
def latex_linked(text: str) -> SafeString:
    """As latex, with written-out web addresses as links too (abstracts, not titles)."""
    return mark_safe(latex_to_html(text, links=True))  # noqa: S308 - as latex


@register.filter
def marked(text: str) -> SafeString:
    """A title with a search's matches marked (catalog.highlight)."""
    return mark_safe(highlight.marked_html(text))  # noqa: S308 - escaped there, marks balanced


@register.filter
def marked_linked(text: str) -> SafeString:
    """An abstract with a search's matches marked and its web addresses as links."""
    return mark_safe(highlight.marked_html(text, links=True))  # noqa: S308 - as marked


@register.filter
def snippet(text: str | None) -> highlight.Snippet | None:
    """The part of a marked abstract around its matches (catalog.highlight.snippet)."""
    found = highlight.snippet(text)
    # Escaped there, marks balanced.
    return found and dataclasses.replace(found, html=mark_safe(found.html))  # noqa: S308


@register.filter
def tag_label(name: str) -> str:
    return label_of_tag(name)


@register.filter
def latex_text(text: str) -> str:
    """The same as readable plain text (titles, meta tags, mail); escaped as usual."""
    return latex_to_text(text)


@register.filter
def media_url(name: str) -> str:
    """The address of a stored file by its name (a list's thumbnail comes as a name)."""
    return default_storage.url(name) if name else ""


@register.filter
def trending_score(paper: Paper, window: str) -> float | None:
    """The paper's trending score over a window (see catalog.trending), None without one."""
    if window not in WINDOWS:
        return None
    score: float | None = getattr(paper, WINDOWS[window].column)
    return score


@register.filter
def language_label(code: str) -> str:
    """A language's own name ("한국어") for a code, or the code itself when unknown."""
    try:
        name: str = translation.get_language_info(code)["name_local"]
        return name
    except KeyError:
        return code


@register.simple_tag
def paper_json_ld(paper: Paper, url: str) -> SafeString:
    """The paper's schema.org description as a JSON-LD block; `<`, `>` and `&`
    escaped as json_script does, so no text in it can close the element."""
    data = json.dumps(scholarly_article(paper, url=url), ensure_ascii=False)
    escaped = data.translate(JSON_SCRIPT_ESCAPES)
    return format_html('<script type="application/ld+json">{}</script>', mark_safe(escaped))  # noqa: S308


@register.simple_tag(takes_context=True)
def page_url(context: template.Context, number: int) -> str:
    query = context.get("query_without_page", "")
    if number == 1:  # the first page's address has no number
        return f"?{query}"
    return f"?{query}&page={number}" if query else f"?page={number}"


@register.simple_tag
@cache
def icon(name: str) -> SafeString:
    """An inline SVG icon from templates/icons/, read once per process (an include
    per icon cost each list entry a template render)."""
    return mark_safe(render_to_string(f"icons/{name}.svg"))  # noqa: S308 - the site's own files


@register.simple_tag(takes_context=True)
def paper_card(context: template.Context, paper: Paper) -> SafeString:
    """A list's card for this paper, shared between readers but for their own parts."""
    return cards.paper_card(
        paper,
        thumbnails=bool(context.get("list_thumbnails")),
        trending_window=context.get("trending_window"),
        marks_new=bool(context.get("marks_new")),
        for_you=bool(context.get("for_you")),
        parts=_parts(context),
        # Where a full-text search found the paper's text (catalog.passages).
        passage=(context.get("passages") or {}).get(paper.pk),
    )


# The reader's parts of any page (catalog.page_cache.ReaderParts), rendered
# from the site's own templates and escaped there.
@register.simple_tag(takes_context=True)
def subscribe_toggle(
    context: template.Context, target: Tag | Category | Author, look: str = "button"
) -> SafeString:
    return mark_safe(_parts(context).subscribe_toggle(target, look))  # noqa: S308


@register.simple_tag(takes_context=True)
def save_toggle(context: template.Context, paper: Paper) -> SafeString:
    return mark_safe(_parts(context).save_toggle(paper.pk))  # noqa: S308


@register.simple_tag(takes_context=True)
def upvote_toggle(context: template.Context, paper: Paper) -> SafeString:
    return mark_safe(_parts(context).upvote_toggle(paper.pk, paper.upvote_count))  # noqa: S308


@register.simple_tag(takes_context=True)
def comment_count(context: template.Context, paper: Paper) -> SafeString:
    """ "N comments" of the paper, read on the way out of a stored page."""
    count = page_cache.comment_count(_parts(context), paper_id=paper.pk, count=paper.comment_count)
    return mark_safe(count)  # noqa: S308 - a slot, or text escaped there


@register.simple_tag(takes_context=True)
def time_since(context: template.Context, moment: datetime.datetime) -> SafeString:
    """ "3 hours, 5 minutes" since moment, reckoned on the way out of a stored page."""
    return page_cache.time_since(_parts(context), moment)


@register.simple_tag(takes_context=True)
def account_menu(context: template.Context) -> SafeString:
    return mark_safe(_parts(context).account_menu())  # noqa: S308


def _parts(context: template.Context) -> page_cache.ReaderParts:
    # Put in every context by page_cache.template_reader_parts.
    parts: page_cache.ReaderParts = context["reader_parts"]
    return parts


@register.simple_tag(takes_context=True)
def filter_fields(context: template.Context) -> SafeString:
    """The list filter's fields, rendered once per choice of values and shared."""
    paper_filter: filters.PaperFilter = context["filter"]
    return filters.filter_fields_html(
        paper_filter,
        trending_tabs=bool(context.get("trending_tabs")),
        # The window select goes with either sort that ranks over a window.
        trending_window=context.get("trending_window") or context.get("votes_window"),
        fixed_order=str(context.get("fixed_order") or ""),
    )


@register.simple_tag
def card_slot(name: str, *key: object) -> SafeString:
    """Where the reader's part goes in a shared card (see catalog.cards)."""
    return page_cache.slot(name, *key)


_shared = Fragments("INDEX_CARDS_CACHE_SIZE")


class SharedNode(template.Node):
    def __init__(
        self, nodelist: template.NodeList, name: str, key: template.base.FilterExpression
    ) -> None:
        self.nodelist, self.name, self.key = nodelist, name, key

    def render(self, context: template.Context) -> str:
        template_name = self.origin.template_name
        if not isinstance(template_name, str):
            raise TypeError("{% shared %} is kept under its template's name; this one has none.")
        key = digest(
            self.name,
            self.key.resolve(context),
            translation.get_language(),
            template_digest(template_name),
        )
        return _shared.get_or_render(key, lambda: self.nodelist.render(context))


@register.tag
def shared(parser: template.base.Parser, token: template.base.Token) -> SharedNode:
    """{% shared "name" key %}...{% endshared %}: what the block renders, kept by
    each process for every key (with the language and the template's source)
    like the paper cards; the key must stand for the versions of every row the
    block shows (core.fragments)."""
    try:
        _, name, key = token.split_contents()
    except ValueError as err:
        message = '{% shared "name" key %} takes a name and a key.'
        raise template.TemplateSyntaxError(message) from err
    nodelist = parser.parse(("endshared",))
    parser.delete_first_token()
    return SharedNode(nodelist, name.strip("\"'"), parser.compile_filter(key))
