import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

MOVED = {'enrichment': ['papervector'], 'accounts': ['recommendation', 'dismissedpaper']}


def move_content_types(apps, schema_editor):
    # Permissions (the Curators group's among them) and admin history follow.
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app_label, models in MOVED.items():
        ContentType.objects.filter(app_label=app_label, model__in=models).update(
            app_label="discovery"
        )


def restore_content_types(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for app_label, models in MOVED.items():
        ContentType.objects.filter(app_label="discovery", model__in=models).update(
            app_label=app_label
        )



class Migration(migrations.Migration):
    """Paper vectors (from enrichment) and For you's lists and dismissals (from
    accounts), moved here with their tables and rows."""

    initial = True

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('enrichment', '0002_discovery_schedule'),
        ('accounts', '0008_api_tokens'),
        ('catalog', '0013_paper_vacuum_settings'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='PaperVector',
                    fields=[
                        ('paper', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='vector', serialize=False, to='catalog.paper')),
                        ('key', models.CharField(max_length=120)),
                        ('dimensions', models.PositiveSmallIntegerField()),
                        ('vector', models.BinaryField()),
                        ('terms', models.JSONField(blank=True, default=list)),
                        ('computed_at', models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={
                        'indexes': [models.Index(fields=['key'], name='papervector_key')],
                    },
                ),
                migrations.CreateModel(
                    name='DismissedPaper',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('paper', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.paper')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='dismissed_papers', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'constraints': [models.UniqueConstraint(fields=('user', 'paper'), name='dismissed_paper_once')],
                    },
                ),
                migrations.CreateModel(
                    name='Recommendation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('score', models.FloatField()),
                        ('computed_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('because_paper', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.paper')),
                        ('because_tag', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.tag')),
                        ('paper', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='recommendations', to='catalog.paper')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='recommendations', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'indexes': [models.Index(fields=['user', '-score'], name='recommendation_user_score')],
                        'constraints': [models.UniqueConstraint(fields=('user', 'paper'), name='recommendation_once')],
                    },
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE enrichment_papervector RENAME TO discovery_papervector",
                    "ALTER TABLE discovery_papervector RENAME TO enrichment_papervector",
                ),
                migrations.RunSQL(
                    "ALTER TABLE accounts_recommendation RENAME TO discovery_recommendation",
                    "ALTER TABLE discovery_recommendation RENAME TO accounts_recommendation",
                ),
                migrations.RunSQL(
                    "ALTER TABLE accounts_dismissedpaper RENAME TO discovery_dismissedpaper",
                    "ALTER TABLE discovery_dismissedpaper RENAME TO accounts_dismissedpaper",
                ),
            ],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
