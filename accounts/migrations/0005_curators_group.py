from django.db import migrations


class Migration(migrations.Migration):
    """Once created the Curators group; the group's permissions are now declared
    in curation/roles.py and set by every migrate."""

    dependencies = [
        ("accounts", "0004_suggestions"),
        ("catalog", "0007_curation"),
        ("ingest", "0004_review_inbox_and_links"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = []
