import datetime

import factory
from django.utils import timezone

from catalog.models import Author, Category, CodeLink, Paper, PaperAuthor, PaperTag, Summary, Tag


class CategoryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Category
        django_get_or_create = ("code",)

    code = factory.Sequence(lambda n: f"cs.X{n}")
    name = factory.LazyAttribute(lambda o: f"Category {o.code}")


class TagFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tag

    name = factory.Sequence(lambda n: f"Topic_{n}")
    slug = factory.LazyAttribute(lambda o: o.name.lower().replace("_", "-"))
    description = factory.LazyAttribute(lambda o: f"Papers about {o.name}.")


class AuthorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Author

    name = factory.Sequence(lambda n: f"Author Number{n}")


class PaperFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Paper
        skip_postgeneration_save = True

    arxiv_id = factory.Sequence(lambda n: f"2505.{10000 + n}")
    version = 1
    title = factory.Sequence(lambda n: f"A study of reasoning, part {n}")
    abstract = "We propose a method for language model reasoning. It works well."
    primary_category = factory.SubFactory(CategoryFactory, code="cs.CL")
    published_at = factory.Sequence(
        lambda n: timezone.now() - datetime.timedelta(days=1, minutes=n)
    )
    updated_at = factory.LazyAttribute(lambda o: o.published_at)

    @factory.post_generation
    def authors(self, create, extracted, **kwargs):
        if not create or not extracted:
            return
        from catalog.services import set_authors

        set_authors(self, [a.name if isinstance(a, Author) else a for a in extracted])

    @factory.post_generation
    def tags(self, create, extracted, **kwargs):
        if create and extracted:
            PaperTag.objects.bulk_create(PaperTag(paper=self, tag=tag) for tag in extracted)

    @factory.post_generation
    def categories(self, create, extracted, **kwargs):
        if not create:
            return
        self.categories.set(extracted or [self.primary_category])


class PaperAuthorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PaperAuthor

    paper = factory.SubFactory(PaperFactory)
    author = factory.SubFactory(AuthorFactory)
    position = 0


class CodeLinkFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = CodeLink

    paper = factory.SubFactory(PaperFactory)
    url = factory.Sequence(lambda n: f"https://github.com/example/project-{n}")
    kind = CodeLink.Kind.OFFICIAL
    source = CodeLink.Source.ABSTRACT


class SummaryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Summary

    paper = factory.SubFactory(PaperFactory)
    language = "zh-hans"
    kind = Summary.Kind.SUMMARY
    body = "这是一篇关于推理的论文。"
    backend = Summary.Backend.LLM
    written_by = "test model"
