"""allauth's account adapter, with log-in throttling by address and account."""

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.http import HttpRequest

from core.http import client_ip


class AccountAdapter(DefaultAccountAdapter):
    def get_client_ip(self, request: HttpRequest) -> str:
        return client_ip(request)

    def _get_login_attempts_cache_key(self, request: HttpRequest, **credentials: Any) -> str:
        # allauth keys its lock-out ("login_failed" per key) on the login alone,
        # so anyone could lock any account by failing at it. Keyed on the
        # address and the account together, a guesser is locked out of that
        # account only where they guess from; the per-address limit beside it
        # bounds how fast one address guesses across accounts.
        return f"{client_ip(request)}:{account_key(credentials)}"


def account_key(credentials: dict[str, Any]) -> str:
    """One name for an account, whichever form and login (email or username) named it,
    in whatever case, so that failures on the site's form and the admin's, as
    `admin`, `Admin` or `ADMIN`, add up."""
    login = str(credentials.get("email") or credentials.get("username") or "").strip()
    users = (
        get_user_model()
        .objects.filter(
            Q(username__iexact=login)
            | Q(email__iexact=login)
            | Q(emailaddress__email__iexact=login)
        )
        .values_list("pk", flat=True)
        .distinct()[:2]
    )
    ids = list(users)
    return f"user:{ids[0]}" if len(ids) == 1 else f"login:{login.casefold()}"
