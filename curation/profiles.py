"""Reads for readers' public profiles at /readers/<display name>/."""

from collections.abc import Callable
from typing import Any

from django.db.models import F, QuerySet
from django.http import Http404

from accounts import selectors as account_selectors
from accounts.display_names import name_key
from accounts.models import Profile
from catalog.models import Paper
from catalog.selectors import for_cards, with_list_related
from curation.models import SuggestedPaper
from discussion import selectors as discussion_selectors
from discussion.models import Comment

# A profile lists this many of the reader's newest accepted suggestions.
PROFILE_PAPERS = 50


def public_profile(*, name: str) -> Profile:
    """The public profile by this name, whatever its case; 404 when there is none
    or its reader keeps it private. One query, on the unique name key."""
    profile = (
        Profile.objects.select_related("user")
        .filter(display_name_key=name_key(name), public_profile=True, user__is_active=True)
        .first()
    )
    if profile is None or not profile.is_public:
        raise Http404("No public profile has this name.")
    return profile


def accepted_papers(*, profile: Profile) -> QuerySet[Paper]:
    """The visible papers the reader suggested and the curators took in, as
    cards (catalog.selectors.for_cards), the most recently suggested first."""
    papers = (
        Paper.objects.visible()
        .filter(
            suggested__state=SuggestedPaper.State.ADDED,
            suggested__suggestions__user_id=profile.user_id,
        )
        .annotate(suggested_on=F("suggested__suggestions__created_at"))
        .order_by("-suggested_on", "-pk")
    )
    return for_cards(with_list_related(papers), searched="")[:PROFILE_PAPERS]


def _optional_selector(name: str) -> Callable[..., Any] | None:
    # Sections of a profile whose reads other parts of the site may provide:
    # shown once accounts.selectors has them, skipped until then.
    selector = getattr(account_selectors, name, None)
    return selector if callable(selector) else None


def upvoted_papers(*, profile: Profile) -> QuerySet[Paper] | None:
    """The reader's upvoted papers, the latest first, if they show them."""
    if not profile.show_upvotes:
        return None
    papers = account_selectors.upvoted_papers(user=profile.user)
    return for_cards(with_list_related(papers), searched="")[:PROFILE_PAPERS]


def reader_comments(*, profile: Profile) -> list[Comment]:
    """The reader's newest shown comments, with their papers."""
    return list(discussion_selectors.reader_comments(user=profile.user))
