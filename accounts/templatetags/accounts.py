"""The reader's parts of any page: subscribe to a tag or category, save a paper,
the account menu.

Each comes from the page's reader slots (accounts.toggles.ReaderPageSlots, or
the slots left open on a page shared by every reader, see catalog.pages), whose
state is read in one query for the whole page, not one per entry.
"""

from django import template
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Category, Paper, Tag

register = template.Library()


# The toggles are rendered from the site's own templates, escaped there.
@register.simple_tag(takes_context=True)
def subscribe_toggle(
    context: template.Context, target: Tag | Category, look: str = "button"
) -> SafeString:
    return mark_safe(context["card_slots"].subscribe_toggle(target, look))  # noqa: S308


@register.simple_tag(takes_context=True)
def save_toggle(context: template.Context, paper: Paper) -> SafeString:
    return mark_safe(context["card_slots"].save_toggle(paper.pk))  # noqa: S308


@register.simple_tag(takes_context=True)
def account_menu(context: template.Context) -> SafeString:
    return mark_safe(context["card_slots"].account_menu())  # noqa: S308
