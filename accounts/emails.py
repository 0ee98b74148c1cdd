import datetime

from django.contrib.auth.models import User
from django.urls import reverse

from accounts.selectors import Digest
from core.mail import absolute_url, send_unsubscribable


def send_digest(
    *,
    user: User,
    digest: Digest,
    unsubscribe_token: str,
    language: str,
    day: datetime.date | None = None,
) -> None:
    """day: the day whose daily edition the mail links to (by default today's, in UTC)."""
    day = day or datetime.datetime.now(datetime.UTC).date()
    unsubscribe_url = absolute_url(reverse("accounts:digest-unsubscribe", args=[unsubscribe_token]))
    context = {
        "digest": digest,
        "settings_url": absolute_url(reverse("accounts:subscriptions")),
        # The editions app sits beside accounts: its page is named, not imported.
        "edition_url": absolute_url(reverse("editions:day", args=[day.isoformat()])),
    }
    send_unsubscribable(
        to=user.email,
        templates="emails/digest",
        context=context,
        unsubscribe_url=unsubscribe_url,
        language=language,
    )
