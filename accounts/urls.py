from django.urls import path
from django.utils.feedgenerator import Atom1Feed

from accounts import feeds, views

app_name = "accounts"


def feed_paths(route: str, feed_class: type[feeds.PaperFeed], name: str) -> list:
    """The RSS 2.0 (.rss) and Atom (.atom) address of one feed."""
    return [
        path(f"{route}.rss", feed_class(), name=f"{name}-rss"),
        path(f"{route}.atom", feed_class(feed_type=Atom1Feed), name=f"{name}-atom"),
    ]


urlpatterns = [
    path("feed/", views.feed, name="feed"),
    path("saved/", views.saved, name="saved"),
    path("saved/<int:paper_id>/save/", views.change_saved, {"save": True}, name="paper-save"),
    path("saved/<int:paper_id>/unsave/", views.change_saved, {"save": False}, name="paper-unsave"),
    path(
        "tags/<slug:key>/subscribe/",
        views.change_subscription,
        {"kind": "tag", "subscribe": True},
        name="tag-subscribe",
    ),
    path(
        "tags/<slug:key>/unsubscribe/",
        views.change_subscription,
        {"kind": "tag", "subscribe": False},
        name="tag-unsubscribe",
    ),
    path(
        "categories/<str:key>/subscribe/",
        views.change_subscription,
        {"kind": "category", "subscribe": True},
        name="category-subscribe",
    ),
    path(
        "categories/<str:key>/unsubscribe/",
        views.change_subscription,
        {"kind": "category", "subscribe": False},
        name="category-unsubscribe",
    ),
    path("accounts/subscriptions/", views.subscriptions, name="subscriptions"),
    path("accounts/feed-token/", views.regenerate_feed_token, name="regenerate-feed-token"),
    path("digests/unsubscribe/<str:token>/", views.digest_unsubscribe, name="digest-unsubscribe"),
    *feed_paths("feeds/latest", feeds.LatestFeed, "latest-feed"),
    *feed_paths("feeds/search", feeds.SearchFeed, "search-feed"),
    *feed_paths("feeds/tags/<slug:slug>", feeds.TagFeed, "tag-feed"),
    *feed_paths("feeds/categories/<str:code>", feeds.CategoryFeed, "category-feed"),
    *feed_paths("feeds/private/<str:token>", feeds.PrivateFeed, "private-feed"),
]
