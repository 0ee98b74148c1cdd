from typing import Any

from allauth.account.models import EmailAddress
from allauth.account.signals import user_logged_in as allauth_user_logged_in
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from accounts import services
from accounts.middleware import READER_LANGUAGE_SESSION_KEY
from accounts.models import Profile, SavedPaper, Subscription, Upvote
from accounts.reader_cache import reader_changed
from accounts.tasks import refresh_recommendations
from catalog.changes import catalog_changed
from catalog.models import Author
from catalog.signals import authors_merged
from core import background


@receiver(post_save, sender=get_user_model())
def create_profile(
    sender: type[User], instance: User, created: bool, raw: bool = False, **kwargs: Any
) -> None:
    if created and not raw:
        Profile.objects.get_or_create(user=instance)


@receiver(post_save, sender=get_user_model())
def confirm_superuser_address(
    sender: type[User],
    instance: User,
    raw: bool = False,
    update_fields: frozenset[str] | None = None,
    **kwargs: Any,
) -> None:
    """A superuser's address was given by whoever runs the site (createsuperuser,
    or a superuser in admin), so it counts as confirmed: they log in on the site
    as in admin, without the confirmation mail readers answer."""
    if raw or not instance.is_superuser or not instance.email:
        return
    if update_fields is not None and not {"email", "is_superuser"} & set(update_fields):
        return  # a log-in's last_login, and the like
    address = instance.email.lower()
    held = EmailAddress.objects.filter(email__iexact=address, verified=True)
    if held.exists():
        return  # confirmed already, or another account's (which keeps it)
    if not EmailAddress.objects.filter(user=instance, email__iexact=address).update(verified=True):
        EmailAddress.objects.create(
            user=instance,
            email=address,
            verified=True,
            primary=not EmailAddress.objects.filter(user=instance, primary=True).exists(),
        )


@receiver([post_save, post_delete], sender=get_user_model())
def forget_cached_user(sender: type[User], instance: User, **kwargs: Any) -> None:
    # Whatever changed (password, active flag, address, last log-in), from
    # whatever path (admin, allauth, a command): cached copies go.
    reader_changed(user_id=instance.pk)


@receiver([post_save, post_delete], sender=Subscription)
@receiver([post_save, post_delete], sender=SavedPaper)
@receiver([post_save, post_delete], sender=Upvote)
def forget_cached_reader_ids(
    sender: type[Subscription | SavedPaper | Upvote],
    instance: Subscription | SavedPaper | Upvote,
    **kwargs: Any,
) -> None:
    reader_changed(user_id=instance.user_id)


@receiver(authors_merged, dispatch_uid="accounts_follow_merged_authors")
def follow_kept_author(
    sender: type[Author], kept: Author, merged_ids: list[int], **kwargs: Any
) -> None:
    """Readers who followed a merged author follow the kept one. An update sends
    no signal: each reader's cached ids are let go here."""
    follows = Subscription.objects.filter(author_id__in=merged_ids)
    user_ids = set(follows.values_list("user_id", flat=True))
    already = Subscription.objects.filter(author=kept, user_id__in=user_ids)
    follows.filter(user_id__in=already.values("user_id")).delete()
    follows.update(author=kept)
    for user_id in user_ids:
        reader_changed(user_id=user_id)


# What a paper's credit line shows (curation/credits.py): a public reader's name.
CREDIT_FIELDS = frozenset({"display_name", "public_profile"})


@receiver(post_save, sender=Profile)
def freshen_credits(
    sender: type[Profile],
    instance: Profile,
    created: bool,
    update_fields: frozenset[str] | None = None,
    **kwargs: Any,
) -> None:
    """Paper pages name public readers: a change to a reader's name or opt-in
    freshens cached pages (catalog.changes), like any write to what they show."""
    if created and not instance.public_profile:
        return
    if update_fields is None or CREDIT_FIELDS & set(update_fields):
        catalog_changed()


@receiver(post_save, sender=get_user_model())
def freshen_credits_of_user(
    sender: type[User],
    instance: User,
    created: bool,
    raw: bool = False,
    update_fields: frozenset[str] | None = None,
    **kwargs: Any,
) -> None:
    """A deactivated reader is credited nowhere (and has no profile page), an
    active one again where they opted in."""
    if created or raw or (update_fields is not None and "is_active" not in update_fields):
        return
    if Profile.objects.filter(user=instance, public_profile=True).exists():
        catalog_changed()


@receiver(post_delete, sender=Profile)
def forget_credits(sender: type[Profile], instance: Profile, **kwargs: Any) -> None:
    if instance.public_profile:
        catalog_changed()


@receiver(post_save, sender=Subscription)
@receiver(post_save, sender=SavedPaper)
def recommend_from_new_interest(
    sender: type[Subscription | SavedPaper],
    instance: Subscription | SavedPaper,
    created: bool,
    raw: bool = False,
    **kwargs: Any,
) -> None:
    """For you follows a reader's saves and followed tags within the minute,
    once they are committed: a save brings in the papers most like it at once,
    a followed tag has the list ranked again in the background, and a reader's
    first saves have it ranked again too (their first list is small)."""
    if created and not raw and isinstance(instance, SavedPaper):
        user_id, paper_id = instance.user_id, instance.paper_id
        transaction.on_commit(lambda: _recommend_like_saved(user_id, paper_id), robust=True)
    elif created and not raw and isinstance(instance, Subscription) and instance.tag_id:
        user_id = instance.user_id
        transaction.on_commit(lambda: _recommend_with_new_tag(user_id), robust=True)


def _recommend_like_saved(user_id: int, paper_id: int) -> None:
    services.recommend_like_saved(user_id=user_id, paper_id=paper_id)
    if services.ask_for_recommendations_from_new_interest(user_id=user_id):
        background.send(refresh_recommendations, [user_id])


def _recommend_with_new_tag(user_id: int) -> None:
    if services.ask_for_recommendations_from_new_tag(user_id=user_id):
        background.send(refresh_recommendations, [user_id])


@receiver(user_logged_in)
def use_the_readers_language(
    sender: type[User], request: HttpRequest | None, user: User, **kwargs: Any
) -> None:
    if request is not None:
        language = Profile.objects.filter(user=user).values_list("language", flat=True).first()
        if language:
            request.session[READER_LANGUAGE_SESSION_KEY] = language


# allauth's own signal, sent for every log-in through the site (password,
# email confirmation, social account) with the response it will send.
@receiver(allauth_user_logged_in)
def complete_pending_actions(
    sender: object, request: HttpRequest, response: HttpResponse, user: User, **kwargs: Any
) -> None:
    services.complete_pending_actions(request=request, response=response, user=user)
