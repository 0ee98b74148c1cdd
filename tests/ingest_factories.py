import factory

from ingest.models import IngestSource, TagRule
from tests.factories import TagFactory


class IngestSourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = IngestSource
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"Testing papers {n}")
    query = "all:testing"
    max_results = 25

    @factory.post_generation
    def tags(self, create, extracted, **kwargs):
        if create and extracted:
            self.tags.set(extracted)


class TagRuleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TagRule

    tag = factory.SubFactory(TagFactory)
    keywords = "software testing"
