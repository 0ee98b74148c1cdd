import functools

import factory
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password

from accounts.models import SavedPaper, Subscription

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
            EmailAddress.objects.create(user=self, email=self.email, primary=True, verified=True)


class SubscriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subscription

    user = factory.SubFactory(UserFactory)


class SavedPaperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SavedPaper

    user = factory.SubFactory(UserFactory)
