"""What each middleware costs a request: a hello-world view (bench.hello)
through the site's whole stack, through Django's own default stack (what
`startproject` writes), and through the site's stack with each layer left out
in turn.

    python -m bench.middleware [--requests 5000] [--rounds 5]

In-process, production settings (DEBUG off), the WSGI handler called directly
with a request made by RequestFactory, so what is timed is the middleware and
Django's request handling, not a server or a socket. Rounds interleave the
stacks, and each figure is the fastest round's microseconds of this process's
CPU time per request: on a machine busy with other work, wall time mostly
measures waiting for a core. No
database query is made: the view makes none, and no middleware should.
"""

import argparse
import logging
import os
import time
from collections.abc import Callable

import django

from bench import database

# What django-admin startproject writes: the yardstick a plain Django site pays.
DJANGO_DEFAULT = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]


class NeedsAnotherLayer(Exception):
    """The stack answers other than 200: a layer left out is one another needs."""


def handler_for(middleware: list[str]) -> Callable[[], object]:
    """A call that sends one GET /hello/ through a WSGI handler with this middleware."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import RequestFactory, override_settings

    with override_settings(MIDDLEWARE=middleware):
        handler = WSGIHandler()  # reads MIDDLEWARE once, here
    environ = RequestFactory().get("/hello/", HTTP_ACCEPT_ENCODING="gzip").environ

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        if not status.startswith("200"):
            raise NeedsAnotherLayer(status)

    def request() -> object:
        return b"".join(handler(dict(environ), start_response))

    return request


def per_request(request: Callable[[], object], count: int) -> float:
    started = time.process_time()
    for _ in range(count):
        request()
    return (time.process_time() - started) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.update(
        database.django_env(DATABASE_URL="sqlite://:memory:", REDIS_URL="", LOG_LEVEL="CRITICAL")
    )
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    django.setup()
    logging.disable(logging.CRITICAL)  # the stacks that fail without a layer log it
    from django.conf import settings
    from django.db import connection

    import bench.hello  # noqa: F401 - serves /hello/

    site = list(settings.MIDDLEWARE)
    stacks = {"the site's stack": site, "Django's default stack": DJANGO_DEFAULT, "none": []}
    for layer in site:
        stacks[f"without {layer}"] = [each for each in site if each != layer]
    requests = {}
    for name, middleware in stacks.items():
        request = handler_for(middleware)
        try:
            per_request(request, 200)  # warm up
        except NeedsAnotherLayer:
            continue  # e.g. sessions, which authentication needs
        requests[name] = request
    rounds: dict[str, list[float]] = {name: [] for name in requests}
    queries_before = len(connection.queries)
    for _ in range(args.rounds):
        for name, request in requests.items():
            rounds[name].append(per_request(request, args.requests))
    assert len(connection.queries) == queries_before, "a middleware queried the database"
    cost = {name: min(times) for name, times in rounds.items()}
    full = cost["the site's stack"]
    print("| stack | µs a request | requests/s, one core |")
    print("| --- | --- | --- |")
    for name in ("none", "Django's default stack", "the site's stack"):
        print(f"| {name} | {cost[name]:.1f} | {1e6 / cost[name]:,.0f} |")
    print()
    print("| layer | its cost (µs a request) |")
    print("| --- | --- |")
    for layer in sorted(site, key=lambda each: cost.get(f"without {each}", 0)):
        without = cost.get(f"without {layer}")
        spent = "needed by a later layer" if without is None else f"{full - without:.1f}"
        print(f"| `{layer}` | {spent} |")


if __name__ == "__main__":
    main()
