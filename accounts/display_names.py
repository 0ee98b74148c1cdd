"""The public name a reader chooses: what it may be, and the one form it is
compared in, so "Ada", "ada" and "ADA" are one name on every database."""

import re
import unicodedata

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

MIN_LENGTH = 3
MAX_LENGTH = 30
# Letters and digits of any script, with single hyphens, underscores or dots
# between them: a name reads the same in an address, /readers/<name>/.
ALLOWED = re.compile(r"[^\W_]+(?:[-_.][^\W_]+)*")
# Names that would pass for the site, its staff or a page of its own.
RESERVED = frozenset(
    {
        "about",
        "account",
        "accounts",
        "admin",
        "administrator",
        "anonymous",
        "api",
        "curator",
        "curators",
        "deleted",
        "editor",
        "feed",
        "help",
        "me",
        "moderator",
        "none",
        "null",
        "official",
        "papershelf",
        "root",
        "settings",
        "staff",
        "support",
        "system",
        "unknown",
    }
)


def name_key(name: str) -> str:
    """The form names are compared and looked up in: NFKC, case folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def validate_display_name(name: str) -> None:
    if len(name) < MIN_LENGTH or len(name) > MAX_LENGTH:
        raise ValidationError(
            _("A display name has %(min)d to %(max)d characters; this one has %(length)d."),
            code="length",
            params={"min": MIN_LENGTH, "max": MAX_LENGTH, "length": len(name)},
        )
    if not ALLOWED.fullmatch(name) or name != unicodedata.normalize("NFKC", name):
        raise ValidationError(
            _(
                "Use letters and digits, with single hyphens, underscores or dots "
                "between them (no spaces)."
            ),
            code="characters",
        )
    if name_key(name) in RESERVED:
        raise ValidationError(_("This name is kept for the site; choose another."), code="reserved")
