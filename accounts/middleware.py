from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import add_never_cache_headers
from django.utils.functional import SimpleLazyObject, empty

# Set at log-in from the reader's profile and when they switch language.
READER_LANGUAGE_SESSION_KEY = "reader_language"


class ReaderMiddleware:
    """What a logged-in reader's requests need, in one layer.

    Their saved language, on every device they log in on: run after
    LocaleMiddleware, which has chosen from the cookie and Accept-Language,
    the reader's own choice wins over both.

    Cache-Control: private, no-store on every page a logged-in reader gets
    (their feed, saved papers, subscriptions with the private feed token,
    account email; catalog pages carry their buttons' state) and on allauth's
    pages, which may show an address or a key to anyone holding the link.
    A page that never asked who is logged in (a public feed) is the same for
    everyone and is left alone, without reading the user for it. Pages at a
    secret address for anonymous visitors (the private feed, a digest's
    unsubscribe link) say so themselves.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = request.session.get(READER_LANGUAGE_SESSION_KEY)
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        response = self.get_response(request)
        match = request.resolver_match
        view_module = getattr(match.func, "__module__", "") if match else ""
        if for_a_reader(request) or view_module.startswith("allauth."):
            add_never_cache_headers(response)
        return response


def for_a_reader(request: HttpRequest) -> bool:
    """Whether the request came from a logged-in reader, as far as anything
    answering it asked; the lazy user is left unread otherwise."""
    user = getattr(request, "user", None)
    if isinstance(user, SimpleLazyObject) and user._wrapped is empty:
        return False
    return user is not None and user.is_authenticated
