"""The first middleware every request meets, one layer doing what each request
needs before and after everything else:

- forwarded headers from anyone but TRUSTED_PROXIES are dropped, before
  anything reads them: Django itself believes X-Forwarded-Proto
  (SECURE_PROXY_SSL_HEADER), and a client reaching gunicorn directly could
  otherwise claim to be anyone, over HTTPS;
- the request gets an id (the X-Request-ID of a trusted proxy, else a new
  one), sent back in X-Request-ID and on each log line, and one access line
  is logged for it (config.logging);
- a load balancer's probe of /healthz is answered here, before the host check
  and the HTTPS redirect (core.middleware.health);
- a view failing for want of the database answers 503 with Retry-After
  (core.outages), not a 500 with a traceback per request;
- every answer carries the Content-Security-Policy of settings, built once.

One layer rather than five: each layer costs every request a call and an
exception handler of Django's, and these are kept together in one place.
"""

import time
from collections.abc import Callable

import sentry_sdk
from csp.utils import build_policy
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from config.logging import REQUEST_ID_HEADER, log_request, request_id, request_id_of
from core.http import from_trusted_proxy
from core.middleware import FORWARDED_HEADERS, HEALTH_CHECK_PATH, health
from core.outages import database_unavailable, is_database_unreachable

POLICY_HEADER = "Content-Security-Policy"


class EntryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        # The site sets no nonce and no per-view policy: the header is the same
        # on every answer, so it is written once.
        self.policy = build_policy()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        from_proxy = from_trusted_proxy(request)
        this_request_id = request_id_of(request, from_proxy=from_proxy)
        if not from_proxy:
            for name in FORWARDED_HEADERS:
                request.META.pop(name, None)
        # Kept on the request too, for records Django logs with the request
        # once this middleware has returned (ContextFilter).
        request.request_id = this_request_id  # type: ignore[attr-defined]
        token = request_id.set(this_request_id)
        sentry_sdk.set_tag("request_id", this_request_id)
        started = time.perf_counter()
        try:
            if request.path_info == HEALTH_CHECK_PATH:
                response: HttpResponse = health(request)
            else:
                response = self.get_response(request)
                self.add_policy(response)
            response[REQUEST_ID_HEADER] = this_request_id
            log_request(request, response, seconds=time.perf_counter() - started)
            return response
        finally:
            request_id.reset(token)

    def add_policy(self, response: HttpResponse) -> None:
        # Django's debug pages carry inline styles: left without the policy.
        if settings.DEBUG and response.status_code in (404, 500):
            return
        if self.policy and POLICY_HEADER not in response:
            response[POLICY_HEADER] = self.policy

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """A view that failed because the database cannot be reached: a short
        503. Such an error raised outside a view (a middleware reading the
        session) gets the same answer from core.views.server_error."""
        if is_database_unreachable(exception):
            return database_unavailable(request, exception)
        return None
