"""Reads from a PostgreSQL read replica, writes to the primary (enabled by DATABASE_REPLICA_URL).

A reader who has just written (subscribed, saved a paper, edited in admin)
must see it on the next page even if the replica lags, so for
REPLICA_STICKY_SECONDS after a write in a request, that client's reads stay
on the primary (PrimaryAfterWriteMiddleware below). Tests and
management commands write and read in one transaction on the primary.
"""

import contextvars
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.http import HttpRequest, HttpResponse

REPLICA = "replica"

# Set for the length of a request that must read its own writes.
_use_primary: contextvars.ContextVar[bool] = contextvars.ContextVar("use_primary", default=False)


def use_primary(value: bool) -> contextvars.Token[bool]:
    return _use_primary.set(value)


def reset_primary(token: contextvars.Token[bool]) -> None:
    _use_primary.reset(token)


class ReplicaRouter:
    def db_for_read(self, model: type[models.Model], **hints: Any) -> str:
        # Inside a transaction on the primary, reads belong with its writes.
        if _use_primary.get() or transaction.get_connection("default").in_atomic_block:
            return "default"
        return REPLICA

    def db_for_write(self, model: type[models.Model], **hints: Any) -> str:
        return "default"

    def allow_relation(self, obj1: models.Model, obj2: models.Model, **hints: Any) -> bool:
        # The replica holds the same rows as the primary.
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == "default"


class PrimaryAfterWriteMiddleware:
    """Writes, and a client's requests for REPLICA_STICKY_SECONDS after one, use the primary."""

    COOKIE = "use_primary"
    SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        writes = request.method not in self.SAFE_METHODS
        token = use_primary(writes or self.COOKIE in request.COOKIES)
        try:
            response = self.get_response(request)
        finally:
            reset_primary(token)
        if writes:
            response.set_cookie(
                self.COOKIE,
                "1",
                max_age=settings.REPLICA_STICKY_SECONDS,
                httponly=True,
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
            )
        return response
