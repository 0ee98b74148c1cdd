"""A plain Django site of one hello-world view: the yardstick of what the stack
itself (gunicorn, Django's request handling, the middleware `startproject`
writes) can serve on this machine, with none of the project's settings.

gunicorn serves `bench.plain:application`; bench.run loads it beside the site.
"""

from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.http import HttpRequest, HttpResponse
from django.urls import path

from bench.middleware import DJANGO_DEFAULT


def hello(request: HttpRequest) -> HttpResponse:
    return HttpResponse("Hello, world", content_type="text/plain")


urlpatterns = [path("hello/", hello)]

settings.configure(
    DEBUG=False,
    SECRET_KEY="benchmark-only-secret-key",  # noqa: S106 - serves 127.0.0.1 only
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    ROOT_URLCONF=__name__,
    MIDDLEWARE=DJANGO_DEFAULT,
    INSTALLED_APPS=[
        "django.contrib.auth",
        "django.contrib.contenttypes",
        "django.contrib.sessions",
        "django.contrib.messages",
    ],
    # The view reads no session and no user: what startproject's stack costs
    # a page that does not use them.
    DATABASES={},
    USE_TZ=True,
)
application = get_wsgi_application()
