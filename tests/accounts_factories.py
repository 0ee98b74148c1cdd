import factory
from allauth.account.models import EmailAddress
from django.contrib.auth import get_user_model

from accounts.models import SavedPaper, Subscription

PASSWORD = "correct horse battery staple"


class UserFactory(factory.django.DjangoModelFactory):
    """A reader with a verified primary email, as after sign-up and confirmation."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"reader{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", PASSWORD)

    @factory.post_generation
    def verified_email(self, create, extracted, **kwargs):
        if create:
            self.save()
            EmailAddress.objects.create(user=self, email=self.email, primary=True, verified=True)


class SubscriptionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Subscription

    user = factory.SubFactory(UserFactory)


class SavedPaperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = SavedPaper

    user = factory.SubFactory(UserFactory)
