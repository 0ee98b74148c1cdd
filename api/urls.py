from django.urls import path
from django.views.generic import RedirectView

from api.api import api
from api.views import docs

urlpatterns = [
    path("", RedirectView.as_view(url="/api/v1/")),
    path("v1/", api.urls),
    path("docs", docs, name="api-docs"),
]
