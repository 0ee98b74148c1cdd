"""The one authentication backend: every log-in form, the admin's included, comes here."""

from functools import partial

from allauth.account.auth_backends import AuthenticationBackend as AllauthBackend
from allauth.account.internal.userkit import get_user_by_username
from django.contrib.auth.models import User

from accounts.reader_cache import cached_reader


class AuthenticationBackend(AllauthBackend):
    """allauth's backend, also taking the username the admin's form sends.

    It checks one password hash per attempt whatever the outcome (a right or
    wrong password, an unknown account), so a wrong password cannot be told
    from a right one by the time it takes. Django's ModelBackend beside it
    would make every failure cost a second hash.
    """

    def _authenticate_by_username(self, username: str, password: str) -> User | None:
        # Readers log in by email (LOGIN_METHODS), which would turn usernames
        # away; staff log in to the admin by username.
        user: User | None = self._check_password(get_user_by_username(username), password)
        return user

    def get_user(self, user_id: int) -> User | None:
        # Every logged-in request asks: the reader comes from the cache while
        # nothing about them has changed (accounts.reader_cache).
        return cached_reader(user_id=user_id, load=partial(super().get_user, user_id))
