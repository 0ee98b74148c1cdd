import functools

import factory
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from accounts.models import SavedPaper, Subscription
from curation.roles import CURATORS, sync_curators_group

PASSWORD = "correct horse battery staple"


@functools.cache
def password_hash() -> str:
    # Argon2 is slow by design: hash once, not once per reader.
    return make_password(PASSWORD)


class UserFactory(factory.django.DjangoModelFactory):
    """A reader with a verified primary email, as after sign-up and confirmation."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"reader{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.LazyFunction(password_hash)

    @factory.post_generation
    def verified_email(self, create, extracted, **kwargs):
        if create:
            # A superuser's address is confirmed on save already (accounts.signals).
            EmailAddress.objects.update_or_create(
                user=self, email=self.email, defaults={"primary": True, "verified": True}
            )


class SubscriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subscription

    user = factory.SubFactory(UserFactory)


class SavedPaperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SavedPaper

    user = factory.SubFactory(UserFactory)


def curators_group() -> Group:
    """The group migrate sets up, made again if a flush (after a transactional
    test) emptied the database."""
    group = Group.objects.filter(name=CURATORS).first()
    return group if group is not None else sync_curators_group()


class CuratorFactory(UserFactory):
    """A staff member in the Curators group, not a superuser."""

    username = factory.Sequence(lambda n: f"curator{n}")
    is_staff = True

    @factory.post_generation
    def curator(self, create, extracted, **kwargs):
        if create:
            self.groups.add(curators_group())
