from django.urls import path

from api.api import api
from api.views import docs

urlpatterns = [
    path("v1/", api.urls),
    path("docs", docs, name="api-docs"),
]
