"""The site with one more page, a hello-world view, for the throughput yardstick.

gunicorn serves `bench.hello:application`: the same settings and middleware as
`config.wsgi`, so /hello/ costs what any Django page costs before its own work.
"""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from config.wsgi import application  # noqa: F401 - sets Django up; gunicorn serves it


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("Hello, world", content_type="text/plain")


urlpatterns = [path("hello/", hello), path("", include("config.urls"))]


def _serve_hello() -> None:
    from django.conf import settings

    settings.ROOT_URLCONF = __name__


_serve_hello()
