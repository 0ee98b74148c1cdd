from django import template
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe

from catalog.rendering import render_markdown

register = template.Library()


@register.filter
def markdown(text: str) -> SafeString:
    # render_markdown sanitises with nh3, so its output is safe to mark.
    return mark_safe(render_markdown(text))  # noqa: S308


@register.filter
def language_label(code: str) -> str:
    """A language's own name ("한국어") for a code, or the code itself when unknown."""
    try:
        return translation.get_language_info(code)["name_local"]
    except KeyError:
        return code


@register.simple_tag(takes_context=True)
def page_url(context, number: int) -> str:
    query = context.get("query_without_page", "")
    return f"?{query}&page={number}" if query else f"?page={number}"
