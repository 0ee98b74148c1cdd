"""The site's own files and answers that belong to no page: robots.txt, the
favicon, uploaded media, the answer to a client over its limits, and to an
error no view handled."""

import sys

from django.conf import settings
from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.views import defaults, static

from core.http import safe_methods
from core.outages import database_unavailable, is_database_unreachable

# How long browsers may keep the favicon and uploaded media.
SITE_FILE_MAX_AGE = 24 * 3600


@safe_methods
def robots_txt(request: HttpRequest) -> HttpResponse:
    context = {"sitemap_url": request.build_absolute_uri(reverse("sitemap"))}
    return render(request, "robots.txt", context, content_type="text/plain; charset=utf-8")


@safe_methods
def favicon(request: HttpRequest) -> FileResponse:
    # Browsers and feed readers ask for /favicon.ico whatever the page links.
    path = finders.find("favicon.ico")
    if path is None:
        raise Http404("No favicon.")
    icon = open(path, "rb")  # noqa: SIM115 - FileResponse closes it
    response = FileResponse(icon, content_type="image/x-icon")
    response["Cache-Control"] = f"public, max-age={SITE_FILE_MAX_AGE}"
    return response


@safe_methods
def media_file(request: HttpRequest, path: str) -> HttpResponseBase:
    """An uploaded file under MEDIA_ROOT (preview images), when no proxy or
    bucket serves them. Files are never rewritten in place, so they may be cached."""
    try:
        response = static.serve(request, path, document_root=settings.MEDIA_ROOT)
    except OSError as err:
        # A name no file can have (too long, say) is simply not there.
        raise Http404("No such file.") from err
    response["Cache-Control"] = f"public, max-age={SITE_FILE_MAX_AGE}"
    # Uploads are shown as images, never run as pages of this site.
    response["Content-Security-Policy"] = "default-src 'none'; img-src 'self'; sandbox"
    return response


def too_many_requests(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The answer to a client over one of its limits (django-ratelimit's and allauth's)."""
    response = render(request, "429.html", status=429)
    # Limits count per minute; by then the client's window has passed.
    response["Retry-After"] = "60"
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's answer to an error no view handled (handler500): the 503 of a
    database out of reach when that is the error, as
    config.middleware.EntryMiddleware answers for views (here it
    was raised elsewhere, say a middleware reading the session); else the 500 page."""
    error = sys.exc_info()[1]
    if error is not None and is_database_unreachable(error):
        return database_unavailable(request, error)
    return defaults.server_error(request)
