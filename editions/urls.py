from django.urls import path, register_converter

from catalog.feeds import feed_paths
from editions import feeds, views
from editions.days import DayConverter

register_converter(DayConverter, "day")

app_name = "editions"
urlpatterns = [
    path("daily/", views.latest, name="latest"),
    path("daily/<day:day>/", views.day, name="day"),
    *feed_paths("daily/<day:day>/feed", feeds.EditionFeed, "day-feed"),
    path("tags/<slug:slug>/daily/", views.tag_latest, name="tag_latest"),
    path("tags/<slug:slug>/daily/<day:day>/", views.tag_day, name="tag_day"),
    *feed_paths("tags/<slug:slug>/daily/<day:day>/feed", feeds.EditionFeed, "tag-day-feed"),
]
