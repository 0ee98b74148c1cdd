"""The reader's private feed, at a secret address."""

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache

from accounts import selectors
from accounts.models import Profile
from catalog.feeds import PaperFeed
from catalog.models import Paper


class PrivateFeed(PaperFeed[Profile]):
    """A reader's subscriptions at a secret address, for feed readers that cannot log in."""

    # Kept by the reader's feed reader, never by a cache on the way.
    @method_decorator(never_cache)
    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().__call__(request, *args, **kwargs)

    def get_object(self, request: HttpRequest, token: str) -> Profile:
        return selectors.profile_for_feed_token(token=token)

    def papers(self, profile: Profile) -> QuerySet[Paper]:
        return selectors.subscribed_papers(user=profile.user)

    def title(self, profile: Profile) -> str:
        return f"{settings.SITE_NAME}: my feed"

    def link(self, profile: Profile) -> str:
        return reverse("accounts:feed")

    def about(self, profile: Profile) -> str:
        return "New papers in the tags and categories you follow."
