from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from accounts.views import set_language
from catalog import sitemaps
from core.views import favicon, media_file, robots_txt

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    # The language switch also remembers a logged-in reader's choice.
    path("i18n/setlang/", set_language, name="set_language"),
    path("robots.txt", robots_txt, name="robots_txt"),
    path("favicon.ico", favicon, name="favicon"),
    path("sitemap.xml", sitemaps.sitemap_index, name="sitemap"),
    path("sitemap-pages.xml", sitemaps.sitemap_pages, name="sitemap-pages"),
    path("sitemap-papers-<int:block>.xml", sitemaps.sitemap_papers, name="sitemap-papers"),
    path("opensearch.xml", sitemaps.opensearch, name="opensearch"),
    path("accounts/", include("allauth.urls")),
    path("", include("accounts.urls")),
    path("", include("discussion.urls")),
    path("", include("answers.urls")),
    path("", include("curation.urls")),
    path("", include("editions.urls")),
    path("", include("catalog.urls")),
]
if settings.SERVE_MEDIA:
    urlpatterns.append(path(f"{settings.MEDIA_URL.strip('/')}/<path:path>", media_file))

# allauth answers its own rate limits (sign-up, password reset) with this too.
handler429 = "core.views.too_many_requests"
handler500 = "core.views.server_error"
