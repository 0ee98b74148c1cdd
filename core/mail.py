"""Mail a reader can leave with one click: the digests and a discussion's replies.

Every such mail is rendered from three templates (`<name>-subject.txt`,
`<name>-body.txt`, `<name>-body.html`) in the reader's language and carries
the headers of RFC 8058, with which mail clients offer a button that POSTs to
the unsubscribe address (that view takes a signed token, not a session).
"""

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation


def absolute_url(path: str) -> str:
    root: str = settings.SITE_ROOT
    return root.rstrip("/") + path


def send_unsubscribable(
    *, to: str, templates: str, context: dict[str, Any], unsubscribe_url: str, language: str
) -> None:
    context = {
        "site_name": settings.SITE_NAME,
        "site_root": settings.SITE_ROOT.rstrip("/"),
        "unsubscribe_url": unsubscribe_url,
        **context,
    }
    with translation.override(language or settings.LANGUAGE_CODE):
        subject = " ".join(render_to_string(f"{templates}-subject.txt", context).split())
        text = render_to_string(f"{templates}-body.txt", context)
        html = render_to_string(f"{templates}-body.html", context)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        to=[to],
        headers={
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
    )
    message.attach_alternative(html, "text/html")
    message.send()
