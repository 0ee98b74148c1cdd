import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED = {'accounts': ['suggestedpaper', 'suggestion']}


def move_content_types(apps, schema_editor):
    # Permissions (the Curators group's among them) and admin history follow.
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app_label, models in MOVED.items():
        ContentType.objects.filter(app_label=app_label, model__in=models).update(
            app_label="curation"
        )


def restore_content_types(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app_label, models in MOVED.items():
        ContentType.objects.filter(app_label="curation", model__in=models).update(
            app_label=app_label
        )



class Migration(migrations.Migration):
    """Readers' suggestions, moved here from accounts with their tables and rows."""

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('accounts', '0008_api_tokens'),
        ('catalog', '0013_paper_vacuum_settings'),
        ('ingest', '0007_run_kinds'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='SuggestedPaper',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('arxiv_id', models.CharField(max_length=64, unique=True, verbose_name='arXiv id')),
                        ('state', models.CharField(choices=[('pending', 'waiting for a curator'), ('approved', 'approved, being added'), ('added', 'added'), ('declined', 'declined'), ('not_found', 'not found on arXiv')], default='pending', max_length=16)),
                        ('decline_reason', models.TextField(blank=True)),
                        ('reviewed_at', models.DateTimeField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, verbose_name='first suggested')),
                        ('last_suggested_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('link_request', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='ingest.linkrequest')),
                        ('paper', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='suggested', to='catalog.paper')),
                        ('reviewed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['-last_suggested_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='Suggestion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('link', models.CharField(help_text='What the reader pasted.', max_length=500)),
                        ('note', models.CharField(blank=True, max_length=500)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('suggested_paper', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='suggestions', to='curation.suggestedpaper')),
                        ('tag', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='catalog.tag')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='suggestions', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.AddIndex(
                    model_name='suggestedpaper',
                    index=models.Index(fields=['state', '-last_suggested_at'], name='suggested_state_last'),
                ),
                migrations.AddIndex(
                    model_name='suggestion',
                    index=models.Index(fields=['user', 'created_at'], name='suggestion_user_created'),
                ),
                migrations.AddIndex(
                    model_name='suggestion',
                    index=models.Index(fields=['suggested_paper', 'created_at'], name='suggestion_paper_created'),
                ),
                migrations.AddConstraint(
                    model_name='suggestion',
                    constraint=models.UniqueConstraint(fields=('user', 'suggested_paper'), name='suggestion_once'),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE accounts_suggestedpaper RENAME TO curation_suggestedpaper",
                    "ALTER TABLE curation_suggestedpaper RENAME TO accounts_suggestedpaper",
                ),
                migrations.RunSQL(
                    "ALTER TABLE accounts_suggestion RENAME TO curation_suggestion",
                    "ALTER TABLE curation_suggestion RENAME TO accounts_suggestion",
                ),
            ],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
