"""Every periodic job, declared once: Celery beat's schedule.

`migrate` writes these into django-celery-beat's tables (core.schedule), so
the admin shows them before beat first starts, and beat's DatabaseScheduler
writes them again when it starts. An entry is found by its name: renaming one
leaves the old row behind, to delete in admin. Each ingest source's own
schedule is set on the source in admin (ingest.schedules).
"""

from datetime import timedelta
from zoneinfo import ZoneInfo

from django_celery_beat.tzcrontab import TzAwareCrontab

UTC = ZoneInfo("UTC")
# arXiv announces Sunday to Thursday at 20:00 in New York and rebuilds its
# listing feeds around midnight there: its calendar is New York's, daylight
# saving included.
NEW_YORK = ZoneInfo("America/New_York")

BEAT_SCHEDULE = {
    # Check every five minutes from the announcement until 04:00; holidays
    # are skipped by the task itself (ingest.announcements).
    "Read arXiv listings: announcement evenings": {
        "task": "ingest.tasks.check_announcements",
        "schedule": TzAwareCrontab(minute="*/5", hour="20-23", day_of_week="0-4", tz=NEW_YORK),
    },
    "Read arXiv listings: the hours after midnight": {
        "task": "ingest.tasks.check_announcements",
        "schedule": TzAwareCrontab(minute="*/5", hour="0-3", day_of_week="1-5", tz=NEW_YORK),
    },
    # A run whose worker died is marked interrupted within minutes, and its
    # source ingests again on its next turn. Not queued again behind itself.
    "Mark ingest runs whose worker died as interrupted": {
        "task": "ingest.tasks.interrupt_stale_runs",
        "schedule": timedelta(minutes=1),
        "options": {"expire_seconds": 50},
    },
    # Trending scores lag reader signals by at most five minutes.
    "Refresh trending scores": {
        "task": "catalog.tasks.refresh_trending",
        "schedule": timedelta(minutes=5),
    },
    # Upvote counts recounted as votes leave a window and their readers'
    # accounts become old enough to count; a vote recounts its paper at once.
    "Refresh upvote counts": {
        "task": "accounts.tasks.refresh_vote_counts",
        "schedule": timedelta(minutes=5),
    },
    # The counts the triggers keep as deltas, folded into one row each.
    "Fold tag and category counts": {
        "task": "catalog.tasks.fold_paper_counts",
        "schedule": timedelta(minutes=15),
    },
    # The change log keeps each paper's latest row only (catalog.sync.prune).
    "Prune the change log": {
        "task": "catalog.tasks.prune_paper_changes",
        "schedule": timedelta(hours=1),
    },
    # Nightly, after the night's ingest: the dump clients load before following
    # /api/v1/changes.
    "Dump the catalog": {
        "task": "api.tasks.dump_catalog",
        "schedule": TzAwareCrontab(minute="0", hour="5", tz=UTC),
    },
    # Nightly, after arXiv's announcements: vectors (refitting the model when
    # due) and every paper's neighbours...
    "Discovery: vectors (refitting the model when due) and every paper's neighbours": {
        "task": "discovery.tasks.refresh_discovery",
        "schedule": TzAwareCrontab(minute="30", hour="1", tz=UTC),
    },
    # ...then every reader's For-you list from them.
    "For you: every reader's recommendations": {
        "task": "accounts.tasks.refresh_recommendations",
        "schedule": TzAwareCrontab(minute="30", hour="4", tz=UTC),
    },
    "Send due email digests": {
        "task": "accounts.tasks.send_due_digests",
        "schedule": TzAwareCrontab(minute="0", tz=UTC),
    },
    # Followers of a discussion get its new comments at most every half hour, in one mail.
    "Send new comments to the discussions' followers": {
        "task": "discussion.tasks.send_discussion_mail",
        "schedule": timedelta(minutes=30),
    },
    # Sessions past their expiry are never read again; their rows go.
    "Delete expired sessions": {
        "task": "core.tasks.clear_expired_sessions",
        "schedule": TzAwareCrontab(minute="15", hour="3", tz=UTC),
    },
}
