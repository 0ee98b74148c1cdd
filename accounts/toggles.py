"""Three toggles: saving a paper, upvoting it and subscribing to a tag, category or author.

Each toggle is one template (accounts/toggles/) rendered in place on a page
(accounts.reader_parts) and, after a change, alone as the HTMX swap; both get
their context from here.
"""

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.http import urlencode

from catalog.models import Author, Category, Tag

SAVE_TEMPLATE = "accounts/toggles/save.html"
UPVOTE_TEMPLATE = "accounts/toggles/upvote.html"
SUBSCRIBE_TEMPLATE = "accounts/toggles/subscribe.html"
# "button" on a tag's, category's or author's own page, "chip" beside a tag on a paper.
SUBSCRIBE_LOOKS = ("button", "chip")


def next_path(request: HttpRequest) -> str:
    # Re-rendered in answer to a POST, the toggle keeps the page it was on.
    return request.POST.get("next") or request.get_full_path()


def save_context(*, request: HttpRequest, paper_id: int, is_saved: bool) -> dict[str, Any]:
    action = "unsave" if is_saved else "save"
    return {
        "is_on": is_saved,
        "next": next_path(request),
        "action_url": reverse(f"accounts:paper-{action}", args=[paper_id]),
    }


def upvote_context(
    *, request: HttpRequest, paper_id: int, is_upvoted: bool, count: int
) -> dict[str, Any]:
    action = "take-back" if is_upvoted else "upvote"
    return {
        "is_on": is_upvoted,
        "count": count,
        "next": next_path(request),
        "action_url": reverse(f"accounts:paper-{action}", args=[paper_id]),
    }


def log_in_to_upvote_url(request: HttpRequest) -> str:
    """Where an anonymous reader's upvote toggle leads: log in, then back to this page."""
    return f"{reverse('account_login')}?{urlencode({'next': next_path(request)})}"


def subscription_address(target: Tag | Category | Author) -> tuple[str, str]:
    """The kind of target a subscription's address names, and its key there."""
    if isinstance(target, Tag):
        return "tag", target.slug
    if isinstance(target, Author):
        return "author", target.slug
    return "category", target.code


def subscribe_context(
    *,
    request: HttpRequest,
    target: Tag | Category | Author,
    is_subscribed: bool,
    look: str = "button",
) -> dict[str, Any]:
    kind, key = subscription_address(target)
    action = "unsubscribe" if is_subscribed else "subscribe"
    return {
        "target": target,
        "kind": kind,
        "is_on": is_subscribed,
        "look": look if look in SUBSCRIBE_LOOKS else "button",
        "next": next_path(request),
        "action_url": reverse(f"accounts:{kind}-{action}", args=[key]),
    }
