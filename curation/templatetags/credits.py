"""{% paper_credits paper %}: who found a paper, on its page (curation/credits.py).

Loaded by the catalog's paper page ({% load credits %}), which imports nothing
of this app: the credit is the paper's own annotations, added by the function
settings.PAPER_CREDITS names.
"""

from django import template
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from catalog.models import Paper
from curation.credits import Credit

register = template.Library()

CREDITS_TEMPLATE = "curation/_credits.html"


@register.simple_tag
def paper_credits(paper: Paper) -> SafeString:
    credit = Credit.of(paper)
    if not credit:
        return mark_safe("")
    # The names are escaped by the template.
    return mark_safe(render_to_string(CREDITS_TEMPLATE, {"credit": credit}))  # noqa: S308
