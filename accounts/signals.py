from allauth.account.signals import user_logged_in as allauth_user_logged_in
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from accounts import services
from accounts.middleware import READER_LANGUAGE_SESSION_KEY
from accounts.models import Profile, SavedPaper, Subscription
from accounts.reader_cache import reader_changed


@receiver(post_save, sender=get_user_model())
def create_profile(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    if created and not raw:
        Profile.objects.get_or_create(user=instance)


@receiver([post_save, post_delete], sender=get_user_model())
def forget_cached_user(sender, instance, **kwargs) -> None:
    # Whatever changed (password, active flag, address, last log-in), from
    # whatever path (admin, allauth, a command): cached copies go.
    reader_changed(user_id=instance.pk)


@receiver([post_save, post_delete], sender=Subscription)
@receiver([post_save, post_delete], sender=SavedPaper)
def forget_cached_reader_ids(sender, instance, **kwargs) -> None:
    reader_changed(user_id=instance.user_id)


@receiver(user_logged_in)
def use_the_readers_language(sender, request, user, **kwargs) -> None:
    if request is not None:
        language = Profile.objects.filter(user=user).values_list("language", flat=True).first()
        if language:
            request.session[READER_LANGUAGE_SESSION_KEY] = language


# allauth's own signal, sent for every log-in through the site (password,
# email confirmation, social account) with the response it will send.
@receiver(allauth_user_logged_in)
def complete_pending_actions(sender, request, response, user, **kwargs) -> None:
    services.complete_pending_actions(request=request, response=response, user=user)
