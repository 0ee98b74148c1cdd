# ruff: noqa: S608 (the SQL is built from this file's constant table names only)
import django.db.models.deletion
from django.db import migrations, models

# Each link table adds a part per statement (PostgreSQL) or per row (SQLite)
# for the links of visible papers; a paper whose visibility changes adds a part
# to each of its tags and categories.
LINKS = (
    # (link table, count table, target column)
    ("catalog_papertag", "catalog_tagcount", "tag_id"),
    ("catalog_paper_categories", "catalog_categorycount", "category_id"),
)
VISIBLE = "p.is_visible AND p.merged_into_id IS NULL"


def postgresql_triggers() -> list[str]:
    statements = []
    for links, counts, target in LINKS:
        function = f"{counts}_links"
        statements += [
            f"""CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO {counts} ({target}, papers)
    SELECT l.{target}, -count(*) FROM old_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE {VISIBLE} GROUP BY l.{target};
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO {counts} ({target}, papers)
    SELECT l.{target}, count(*) FROM new_links l JOIN catalog_paper p ON p.id = l.paper_id
    WHERE {VISIBLE} GROUP BY l.{target};
  END IF;
  RETURN NULL;
END $$""",
            f"CREATE TRIGGER {links}_added AFTER INSERT ON {links}"
            f" REFERENCING NEW TABLE AS new_links FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {links}_removed AFTER DELETE ON {links}"
            f" REFERENCING OLD TABLE AS old_links FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
            f"CREATE TRIGGER {links}_changed AFTER UPDATE ON {links}"
            " REFERENCING OLD TABLE AS old_links NEW TABLE AS new_links"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {function}()",
        ]
    parts = "\n  ".join(
        f"INSERT INTO {counts} ({target}, papers)"
        f" SELECT {target}, delta FROM {links} WHERE paper_id = NEW.id;"
        for links, counts, target in LINKS
    )
    statements += [
        f"""CREATE FUNCTION catalog_paper_visibility_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  delta integer := CASE WHEN NEW.is_visible AND NEW.merged_into_id IS NULL THEN 1 ELSE -1 END;
BEGIN
  {parts}
  RETURN NULL;
END $$""",
        "CREATE TRIGGER catalog_paper_visibility_counts"
        " AFTER UPDATE OF is_visible, merged_into_id ON catalog_paper FOR EACH ROW"
        " WHEN ((OLD.is_visible AND OLD.merged_into_id IS NULL)"
        " IS DISTINCT FROM (NEW.is_visible AND NEW.merged_into_id IS NULL))"
        " EXECUTE FUNCTION catalog_paper_visibility_counts()",
    ]
    return statements


def sqlite_triggers() -> list[str]:
    visible = "EXISTS (SELECT 1 FROM catalog_paper p WHERE p.id = {row}.paper_id AND {visible})"
    statements = []
    for links, counts, target in LINKS:
        for event, row, sign in (("INSERT", "NEW", ""), ("DELETE", "OLD", "-")):
            condition = visible.format(row=row, visible=VISIBLE)
            statements.append(
                f"CREATE TRIGGER {links}_{event.lower()}_counts AFTER {event} ON {links}"
                f" WHEN {condition} BEGIN"
                f" INSERT INTO {counts} ({target}, papers) VALUES ({row}.{target}, {sign}1); END"
            )
        statements.append(
            f"CREATE TRIGGER {links}_update_counts AFTER UPDATE ON {links} BEGIN"
            f" INSERT INTO {counts} ({target}, papers) SELECT OLD.{target}, -1"
            f" WHERE {visible.format(row='OLD', visible=VISIBLE)};"
            f" INSERT INTO {counts} ({target}, papers) SELECT NEW.{target}, 1"
            f" WHERE {visible.format(row='NEW', visible=VISIBLE)}; END"
        )
    delta = "CASE WHEN NEW.is_visible AND NEW.merged_into_id IS NULL THEN 1 ELSE -1 END"
    parts = " ".join(
        f"INSERT INTO {counts} ({target}, papers)"
        f" SELECT {target}, {delta} FROM {links} WHERE paper_id = NEW.id;"
        for links, counts, target in LINKS
    )
    statements.append(
        "CREATE TRIGGER catalog_paper_visibility_counts"
        " AFTER UPDATE OF is_visible, merged_into_id ON catalog_paper"
        " WHEN (OLD.is_visible AND OLD.merged_into_id IS NULL)"
        " IS NOT (NEW.is_visible AND NEW.merged_into_id IS NULL)"
        f" BEGIN {parts} END"
    )
    return statements


def create_triggers(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": postgresql_triggers, "sqlite": sqlite_triggers}[vendor]()
    for statement in statements:
        schema_editor.execute(statement)
    for links, counts, target in LINKS:
        schema_editor.execute(
            f"INSERT INTO {counts} ({target}, papers)"
            f" SELECT l.{target}, count(*) FROM {links} l JOIN catalog_paper p ON p.id = l.paper_id"
            f" WHERE {VISIBLE} GROUP BY l.{target}"
        )


def drop_triggers(apps, schema_editor):
    postgresql = schema_editor.connection.vendor == "postgresql"
    for links, counts, _ in LINKS:
        if postgresql:
            schema_editor.execute(f"DROP FUNCTION {counts}_links() CASCADE")
        else:
            for event in ("insert", "delete", "update"):
                schema_editor.execute(f"DROP TRIGGER {links}_{event}_counts")
    if postgresql:
        schema_editor.execute("DROP FUNCTION catalog_paper_visibility_counts() CASCADE")
    else:
        schema_editor.execute("DROP TRIGGER catalog_paper_visibility_counts")


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0009_category_code_pattern"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [
        migrations.CreateModel(
            name="CategoryCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("papers", models.IntegerField()),
                (
                    "category",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="count_parts",
                        to="catalog.category",
                    ),
                ),
            ],
        ),
        migrations.CreateModel(
            name="TagCount",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("papers", models.IntegerField()),
                (
                    "tag",
                    models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        related_name="count_parts",
                        to="catalog.tag",
                    ),
                ),
            ],
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
