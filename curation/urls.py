from django.urls import path

from curation import views

app_name = "curation"
urlpatterns = [
    path("suggest/", views.suggest, name="suggest"),
    path("readers/<str:display_name>/", views.reader_profile, name="reader"),
]
