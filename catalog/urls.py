from django.urls import path

from catalog import feeds, views
from catalog.feeds import feed_paths

app_name = "catalog"
urlpatterns = [
    path("", views.paper_list, name="paper_list"),
    path("export.<str:fmt>", views.export_list, name="export"),
    path("search/suggestions/", views.search_suggestions, name="search-suggestions"),
    # Before the paper's own address, whose <path:> would take it too.
    path("papers/<path:arxiv_id>/read/", views.paper_read, name="paper-read"),
    path("papers/<path:arxiv_id>/", views.paper_detail, name="paper"),
    path("p/<int:pk>/", views.paper_by_pk, name="paper_by_pk"),
    path("trending/", views.trending, name="trending"),
    path("tags/", views.tag_index, name="tag_index"),
    path("tags/<slug:slug>/", views.tag_detail, name="tag"),
    path("tags/<slug:slug>/export.<str:fmt>", views.export_tag, name="tag-export"),
    # <str:>: a name in another script keeps its letters in its slug.
    path("authors/<str:slug>/", views.author_detail, name="author"),
    path("authors/<str:slug>/export.<str:fmt>", views.export_author, name="author-export"),
    path("categories/", views.category_index, name="category_index"),
    # <path:>, so that any stored code has an address, even one with a slash
    # (the admin accepts only arXiv's shapes; older rows may not have them).
    path("categories/<path:code>/", views.category_detail, name="category"),
    path("categories/<path:code>/export.<str:fmt>", views.export_category, name="category-export"),
    *feed_paths("feeds/latest", feeds.LatestFeed, "latest-feed"),
    *feed_paths("feeds/search", feeds.SearchFeed, "search-feed"),
    *feed_paths("feeds/tags/<slug:slug>", feeds.TagFeed, "tag-feed"),
    *feed_paths("feeds/authors/<str:slug>", feeds.AuthorFeed, "author-feed"),
    *feed_paths("feeds/categories/<path:code>", feeds.CategoryFeed, "category-feed"),
]
