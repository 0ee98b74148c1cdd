from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import translation

# Set at log-in from the reader's profile and when they switch language.
READER_LANGUAGE_SESSION_KEY = "reader_language"


class ReaderLanguageMiddleware:
    """Speak a logged-in reader's saved language on every device they log in on.

    Runs after LocaleMiddleware, which has chosen from the cookie and
    Accept-Language; the reader's own choice wins over both.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = request.session.get(READER_LANGUAGE_SESSION_KEY)
        if language:
            translation.activate(language)
            request.LANGUAGE_CODE = translation.get_language()
        return self.get_response(request)
