"""Authors' names folded again, now without accents too: rows that became one
name are merged into the oldest (their papers credit it), every author gets a
slug, and papers store their authors' names and slugs afresh."""

from typing import Any

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

from catalog.models import author_slug_base
from catalog.names import normalize_name

BATCH = 2000


def renormalise(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    author_model = apps.get_model("catalog", "Author")
    paper_author = apps.get_model("catalog", "PaperAuthor")
    paper_model = apps.get_model("catalog", "Paper")
    kept_by_key: dict[str, int] = {}
    merged: dict[int, int] = {}
    renamed: dict[int, str] = {}
    for pk, name, key in author_model.objects.order_by("pk").values_list(
        "pk", "name", "normalized_name"
    ):
        new_key = normalize_name(name)
        if new_key in kept_by_key:
            merged[pk] = kept_by_key[new_key]
        else:
            kept_by_key[new_key] = pk
            if new_key != key:
                renamed[pk] = new_key
    touched: set[int] = set()
    for merged_id, kept_id in merged.items():
        rows = paper_author.objects.filter(author_id=merged_id)
        paper_ids = set(rows.values_list("paper_id", flat=True))
        touched |= paper_ids
        crediting = paper_author.objects.filter(author_id=kept_id, paper_id__in=paper_ids)
        rows.filter(paper_id__in=crediting.values("paper_id")).delete()
        rows.update(author_id=kept_id)
    author_model.objects.filter(pk__in=list(merged)).delete()
    for pk, key in renamed.items():
        author_model.objects.filter(pk=pk).update(normalized_name=key)

    taken: set[str] = set()
    authors = list(author_model.objects.order_by("pk").only("name"))
    for author in authors:
        base = author_slug_base(author.name)
        slug, number = base, 1
        while slug in taken:
            number += 1
            slug = f"{base}-{number}"
        taken.add(slug)
        author.slug = slug
    author_model.objects.bulk_update(authors, ["slug"], batch_size=BATCH)

    paper_ids = sorted(set(paper_author.objects.values_list("paper_id", flat=True)))
    for start in range(0, len(paper_ids), BATCH):
        batch = paper_ids[start : start + BATCH]
        credited: dict[int, list[tuple[str, str]]] = {pk: [] for pk in batch}
        rows = paper_author.objects.filter(paper_id__in=batch).order_by("paper_id", "position")
        for paper_id, name, slug in rows.values_list("paper_id", "author__name", "author__slug"):
            credited[paper_id].append((name, slug))
        papers = list(paper_model.objects.filter(pk__in=batch).only("author_list"))
        for paper in papers:
            paper.author_slugs = [slug for _, slug in credited[paper.pk]]
            paper.author_list = [name for name, _ in credited[paper.pk]]
            paper.author_names = ", ".join(paper.author_list)
        fields = ["author_slugs"]
        if touched.intersection(batch):
            fields += ["author_list", "author_names"]
        paper_model.objects.bulk_update(papers, fields)


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0021_authors"),
    ]

    operations = [
        migrations.RunPython(renormalise, migrations.RunPython.noop),
    ]
