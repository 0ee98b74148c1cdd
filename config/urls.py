from django.contrib import admin
from django.urls import include, path

from accounts.views import set_language

urlpatterns = [
    path("admin/", admin.site.urls),
    # The language switch also remembers a logged-in reader's choice.
    path("i18n/setlang/", set_language, name="set_language"),
    path("accounts/", include("allauth.urls")),
    path("", include("accounts.urls")),
    path("", include("catalog.urls")),
]
