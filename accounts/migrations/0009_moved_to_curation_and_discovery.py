from django.db import migrations


class Migration(migrations.Migration):
    """Suggestions moved to curation, For you's lists and dismissals to discovery:
    their tables went with them (those apps' first migrations)."""

    dependencies = [
        ('discovery', '0001_initial'),
        ('curation', '0001_initial'),
        ('accounts', '0008_api_tokens'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='recommendation',
                    name='because_paper',
                ),
                migrations.RemoveField(
                    model_name='recommendation',
                    name='because_tag',
                ),
                migrations.RemoveField(
                    model_name='recommendation',
                    name='paper',
                ),
                migrations.RemoveField(
                    model_name='recommendation',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='suggestedpaper',
                    name='link_request',
                ),
                migrations.RemoveField(
                    model_name='suggestedpaper',
                    name='paper',
                ),
                migrations.RemoveField(
                    model_name='suggestedpaper',
                    name='reviewed_by',
                ),
                migrations.RemoveField(
                    model_name='suggestion',
                    name='suggested_paper',
                ),
                migrations.RemoveField(
                    model_name='suggestion',
                    name='tag',
                ),
                migrations.RemoveField(
                    model_name='suggestion',
                    name='user',
                ),
                migrations.DeleteModel(
                    name='DismissedPaper',
                ),
                migrations.DeleteModel(
                    name='Recommendation',
                ),
                migrations.DeleteModel(
                    name='SuggestedPaper',
                ),
                migrations.DeleteModel(
                    name='Suggestion',
                ),
            ],
        ),
    ]
