"""How many comments a reader, and an address, may post (django-ratelimit)."""

from django.conf import settings
from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django_ratelimit.core import get_usage

from core.http import client_ip
from discussion.services import CommentRefused


def allowances(request: HttpRequest, *, user: User) -> list[tuple[str, str, str]]:
    """The reader's and the address's allowances of posts, as (group, key, rate)."""
    return [
        ("comment-reader", f"user:{user.pk}", settings.COMMENT_READER_RATE_LIMIT),
        ("comment-address", client_ip(request), settings.COMMENT_ADDRESS_RATE_LIMIT),
    ]


def count_post(request: HttpRequest, *, user: User) -> None:
    """Count a post against the reader's and the address's allowances
    (COMMENT_READER_RATE_LIMIT, COMMENT_ADDRESS_RATE_LIMIT); CommentRefused
    with status 429 once either is spent."""
    for group, key, rate in allowances(request, user=user):
        if not rate:
            continue
        usage = get_usage(
            request,
            group=group,
            key=lambda group, request, value=key: value,
            rate=rate,
            increment=True,
        )
        if usage and usage["should_limit"]:
            retry_after = max(1, int(usage["time_left"]))
            raise CommentRefused(
                _("You are commenting too fast; try again in %(seconds)d seconds.")
                % {"seconds": retry_after},
                status=429,
                retry_after=retry_after,
            )
