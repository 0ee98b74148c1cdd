"""The reader's toggles on any page: subscribe to a tag or category, save a paper.

Their state comes from the lazy ids of accounts.context_processors.reader, so
a list of papers costs one query for all its toggles, not one per entry.
"""

from django import template

from accounts import toggles
from catalog.models import Category, Paper, Tag

register = template.Library()


def _with_page(context: template.Context, values: dict) -> dict:
    return {"user": context["user"], "csrf_token": context.get("csrf_token"), **values}


@register.inclusion_tag(toggles.SUBSCRIBE_TEMPLATE, takes_context=True)
def subscribe_toggle(context: template.Context, target: Tag | Category, look: str = "button"):
    subscribed = context["subscribed"]
    ids = subscribed.tag_ids if isinstance(target, Tag) else subscribed.category_ids
    return _with_page(
        context,
        toggles.subscribe_context(
            request=context["request"], target=target, is_subscribed=target.pk in ids, look=look
        ),
    )


@register.inclusion_tag(toggles.SAVE_TEMPLATE, takes_context=True)
def save_toggle(context: template.Context, paper: Paper):
    is_saved = paper.pk in context["saved_paper_ids"]
    return _with_page(
        context, toggles.save_context(request=context["request"], paper=paper, is_saved=is_saved)
    )
