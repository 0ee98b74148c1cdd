from django.urls import path

from discussion import views
from discussion.feeds import feed_paths

app_name = "discussion"
# Included before the catalog's: its papers/<path:arxiv_id>/ would take these too.
urlpatterns = [
    path("papers/<path:arxiv_id>/discussion/", views.page, name="page"),
    path("p/<int:pk>/discussion/", views.page_by_pk, name="page-by-pk"),
    path("discussion/<int:paper_id>/", views.fragment, name="fragment"),
    path("discussion/<int:paper_id>/post/", views.post, name="post"),
    path("discussion/<int:paper_id>/follow/", views.follow, name="follow"),
    path("discussion/comments/<int:comment_id>/edit/", views.edit, name="edit"),
    path("discussion/comments/<int:comment_id>/delete/", views.delete, name="delete"),
    path("discussion/comments/<int:comment_id>/report/", views.report, name="report"),
    path("discussion/unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    *feed_paths("feeds/discussion/<int:paper_id>", "feed"),
]
