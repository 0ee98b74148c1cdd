import datetime

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from accounts.selectors import Digest


def absolute_url(path: str) -> str:
    root: str = settings.SITE_ROOT
    return root.rstrip("/") + path


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
        "site_name": settings.SITE_NAME,
        "site_root": settings.SITE_ROOT.rstrip("/"),
        "unsubscribe_url": unsubscribe_url,
        "settings_url": absolute_url(reverse("accounts:subscriptions")),
        # The editions app sits beside accounts: its page is named, not imported.
        "edition_url": absolute_url(reverse("editions:day", args=[day.isoformat()])),
    }
    with translation.override(language):
        subject = " ".join(render_to_string("emails/digest-subject.txt", context).split())
        text = render_to_string("emails/digest-body.txt", context)
        html = render_to_string("emails/digest-body.html", context)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        to=[user.email],
        headers={
            # RFC 8058: mail clients offer a button that POSTs to the URL.
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(html, "text/html")
    message.send()
