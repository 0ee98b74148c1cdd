from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse

from accounts.selectors import Digest


def absolute_url(path: str) -> str:
    return settings.SITE_ROOT.rstrip("/") + path


def send_digest(*, user: AbstractBaseUser, digest: Digest, unsubscribe_token: str) -> None:
    unsubscribe_url = absolute_url(reverse("accounts:digest-unsubscribe", args=[unsubscribe_token]))
    context = {
        "digest": digest,
        "site_name": settings.SITE_NAME,
        "site_root": settings.SITE_ROOT.rstrip("/"),
        "unsubscribe_url": unsubscribe_url,
        "settings_url": absolute_url(reverse("accounts:subscriptions")),
    }
    subject = " ".join(render_to_string("emails/digest-subject.txt", context).split())
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string("emails/digest-body.txt", context),
        to=[user.email],
        headers={
            # RFC 8058: mail clients offer a button that POSTs to the URL.
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(render_to_string("emails/digest-body.html", context), "text/html")
    message.send()
