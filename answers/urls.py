from django.urls import path

from answers import views

app_name = "answers"
# Included before the catalog's: its papers/<path:arxiv_id>/ would take the page too.
urlpatterns = [
    path("papers/<path:arxiv_id>/ask/", views.page, name="page"),
    path("ask/<int:paper_id>/", views.ask, name="ask"),
]
