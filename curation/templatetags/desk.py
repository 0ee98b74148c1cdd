"""{% curators_desk as lines %}: what waits for the curator on the admin's home
(templates/admin/desk_index.html, curation/desk.py)."""

from typing import Any

from django import template
from django.utils import timezone

from curation import desk

register = template.Library()


@register.simple_tag(takes_context=True)
def curators_desk(context: dict[str, Any]) -> list[desk.Waiting]:
    return desk.waiting(user=context["request"].user, now=timezone.now())
