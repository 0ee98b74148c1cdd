from django.urls import path

from accounts import feeds, views
from catalog.feeds import feed_paths

app_name = "accounts"


urlpatterns = [
    path("feed/", views.feed, name="feed"),
    path("feed/opened/<int:paper_id>/", views.feed_opened, name="feed-opened"),
    path("feed/for-you/", views.for_you, name="for-you"),
    path("feed/for-you/<int:paper_id>/not-interested/", views.dismiss, name="for-you-dismiss"),
    path("saved/", views.saved, name="saved"),
    path("feed/export.<str:fmt>", views.export_feed, name="feed-export"),
    path("saved/export.<str:fmt>", views.export_saved, name="saved-export"),
    path("saved/<int:paper_id>/save/", views.change_saved, {"save": True}, name="paper-save"),
    path("saved/<int:paper_id>/unsave/", views.change_saved, {"save": False}, name="paper-unsave"),
    path(
        "upvotes/<int:paper_id>/upvote/",
        views.change_upvote,
        {"upvoted": True},
        name="paper-upvote",
    ),
    path(
        "upvotes/<int:paper_id>/take-back/",
        views.change_upvote,
        {"upvoted": False},
        name="paper-take-back",
    ),
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
        "categories/<path:key>/subscribe/",
        views.change_subscription,
        {"kind": "category", "subscribe": True},
        name="category-subscribe",
    ),
    path(
        "categories/<path:key>/unsubscribe/",
        views.change_subscription,
        {"kind": "category", "subscribe": False},
        name="category-unsubscribe",
    ),
    path(
        "authors/<str:key>/follow/",
        views.change_subscription,
        {"kind": "author", "subscribe": True},
        name="author-subscribe",
    ),
    path(
        "authors/<str:key>/unfollow/",
        views.change_subscription,
        {"kind": "author", "subscribe": False},
        name="author-unsubscribe",
    ),
    path("accounts/subscriptions/", views.subscriptions, name="subscriptions"),
    path("accounts/public-profile/", views.public_profile, name="public-profile"),
    path("accounts/api-tokens/", views.create_api_token, name="api-token-create"),
    path(
        "accounts/api-tokens/<int:token_id>/revoke/",
        views.revoke_api_token,
        name="api-token-revoke",
    ),
    path("accounts/feed-token/", views.regenerate_feed_token, name="regenerate-feed-token"),
    path("digests/unsubscribe/<str:token>/", views.digest_unsubscribe, name="digest-unsubscribe"),
    *feed_paths("feeds/private/<str:token>", feeds.PrivateFeed, "private-feed"),
]
