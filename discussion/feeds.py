"""A paper's discussion as RSS 2.0 and Atom: its newest shown comments."""

import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import URLPattern, path, reverse
from django.utils.decorators import method_decorator
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed
from django.views.decorators.http import conditional_page

from catalog.latex import latex_to_text
from catalog.models import Paper
from core.http import safe_methods
from core.limits import limit_feeds
from discussion.models import Comment
from discussion.selectors import with_authors

# A feed lists this many of the newest comments.
FEED_COMMENTS = 50

if TYPE_CHECKING:
    FeedOfComments = Feed[Comment, Paper]
else:
    FeedOfComments = Feed


class DiscussionFeed(FeedOfComments):
    def __init__(self, feed_type: type[SyndicationFeed] = Rss201rev2Feed) -> None:
        super().__init__()
        self.feed_type = feed_type

    @method_decorator(safe_methods)
    @method_decorator(limit_feeds)
    @method_decorator(conditional_page)
    def __call__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return super().__call__(request, *args, **kwargs)

    def get_object(self, request: HttpRequest, paper_id: int) -> Paper:
        return get_object_or_404(Paper.objects.visible(), pk=paper_id)

    def title(self, paper: Paper) -> str:
        return f"{settings.SITE_NAME}: discussion of {latex_to_text(paper.title)}"

    def link(self, paper: Paper) -> str:
        return reverse("discussion:page-by-pk", args=[paper.pk])

    def description(self, paper: Paper) -> str:
        return f"New comments on {latex_to_text(paper.title)}."

    def items(self, paper: Paper) -> list[Comment]:
        comments = Comment.objects.filter(paper=paper, deleted=False, hidden_by_curator=False)
        return list(
            with_authors(comments)
            .select_related("paper")
            .order_by("-created_at", "-id")[:FEED_COMMENTS]
        )

    def item_title(self, comment: Comment) -> str:
        name = getattr(comment, "author_name", "") or "A reader"
        return f"{name} on {latex_to_text(comment.paper.title)}"

    def item_description(self, comment: Comment) -> str:
        return comment.body_html

    def item_link(self, comment: Comment) -> str:
        return reverse("discussion:page-by-pk", args=[comment.paper_id]) + f"#comment-{comment.pk}"

    def item_pubdate(self, comment: Comment) -> datetime.datetime:
        return comment.created_at

    def item_updateddate(self, comment: Comment) -> datetime.datetime:
        return comment.edited_at or comment.created_at


def feed_paths(route: str, name: str) -> list[URLPattern]:
    return [
        path(f"{route}.rss", DiscussionFeed(), name=f"{name}-rss"),
        path(f"{route}.atom", DiscussionFeed(feed_type=Atom1Feed), name=f"{name}-atom"),
    ]
