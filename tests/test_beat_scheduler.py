"""Beat's scheduler (config.beat): a job's last run is in the database before
the job is sent, so a beat started again reads it (tests/faults/
test_beat_restart.py kills a real one)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from config.beat import HeartbeatScheduler
from config.celery import app

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_jobs_last_run_is_saved_before_it_is_sent(settings, tmp_path):
    settings.BEAT_HEARTBEAT_FILE = tmp_path / "heartbeat"
    every = IntervalSchedule.objects.create(every=300, period=IntervalSchedule.SECONDS)
    long_ago = timezone.now() - timedelta(hours=1)
    job = PeriodicTask.objects.create(
        name="Probe", task="tests.probe", interval=every, last_run_at=long_ago
    )
    scheduler = HeartbeatScheduler(app=app, lazy=True)
    scheduler.setup_schedule()
    sent = []

    def send_but_read_first(entry, producer=None):
        # What a beat killed right now would read on starting again.
        job.refresh_from_db()
        sent.append((entry.name, job.last_run_at, job.total_run_count))

    scheduler.apply_entry = send_but_read_first
    scheduler.tick()

    [(_, last_run_at, runs)] = [s for s in sent if s[0] == "Probe"]
    assert last_run_at > long_ago + timedelta(minutes=59)
    assert runs == 1
