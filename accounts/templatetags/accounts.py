"""Reader buttons for any page: subscribe to a tag or category, save a paper.

Their state comes from the lazy ids of accounts.context_processors.reader, so
a list of papers costs one query for all its buttons, not one per entry.
"""

from django import template
from django.urls import reverse

from catalog.models import Paper, Tag

register = template.Library()


def _next_path(context: template.Context) -> str:
    # Re-rendered in answer to a POST, the button keeps the page it was on.
    request = context["request"]
    return request.POST.get("next") or request.get_full_path()


def _button_context(context: template.Context, **values) -> dict:
    return {
        "user": context["user"],
        "csrf_token": context.get("csrf_token"),
        "next": _next_path(context),
        **values,
    }


@register.inclusion_tag("accounts/_subscribe_button.html", takes_context=True)
def subscribe_button(context: template.Context, target, style: str = "") -> dict:
    """The subscribe/unsubscribe toggle for a Tag or a Category; style "chip" is the small one."""
    kind = "tag" if isinstance(target, Tag) else "category"
    key = target.slug if kind == "tag" else target.code
    subscribed = context["subscribed"]
    is_on = target.pk in (subscribed.tag_ids if kind == "tag" else subscribed.category_ids)
    action = "unsubscribe" if is_on else "subscribe"
    return _button_context(
        context,
        target=target,
        kind=kind,
        is_on=is_on,
        style=style,
        action_url=reverse(f"accounts:{kind}-{action}", args=[key]),
    )


@register.inclusion_tag("accounts/_save_button.html", takes_context=True)
def save_button(context: template.Context, paper: Paper) -> dict:
    is_on = paper.pk in context["saved_paper_ids"]
    action = "unsave" if is_on else "save"
    return _button_context(
        context,
        paper=paper,
        is_on=is_on,
        action_url=reverse(f"accounts:paper-{action}", args=[paper.pk]),
    )
