"""Beat SIGKILLed just after sending a job, then started again: the new beat
reads when the job was last sent and leaves it until its interval has passed,
as if nothing had happened. (django-celery-beat saves its jobs' last runs every
three minutes, and a beat restarted in between sent the job again at once.)"""

import json
import time
from datetime import timedelta

import pytest
import redis
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from tests.faults.processes import CeleryProcess, named_redis, site_env

pytestmark = [pytest.mark.slow, pytest.mark.long, pytest.mark.django_db(transaction=True)]
INTERVAL = 20
PROBE_TASK = "tests.faults.beat_probe"


@pytest.fixture
def broker():
    with named_redis(14) as url:
        yield url


def sends(broker: str) -> list[dict]:
    """The probe jobs beat has sent, waiting in the default queue."""
    messages = [json.loads(m) for m in redis.Redis.from_url(broker).lrange("celery", 0, -1)]
    return [m for m in messages if m["headers"]["task"] == PROBE_TASK]


def wait_until(condition, *, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
    return time.monotonic()


def test_beat_killed_and_restarted_never_sends_a_job_twice_within_its_interval(broker, tmp_path):
    every = IntervalSchedule.objects.create(every=INTERVAL, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(
        name="Probe",
        task=PROBE_TASK,
        interval=every,
        # Due at once.
        last_run_at=timezone.now() - timedelta(seconds=2 * INTERVAL),
    )
    env = {**site_env(redis=broker), "BEAT_HEARTBEAT_FILE": str(tmp_path / "heartbeat")}
    log = tmp_path / "beat.log"

    beat = CeleryProcess(env, "beat", "--loglevel=info", log=log)
    try:
        # The first send after beat starts is saved with all the others; a
        # later one was kept in memory only, for up to three minutes.
        wait_until(lambda: len(sends(broker)) == 1, timeout=90)
        second_send = wait_until(lambda: len(sends(broker)) == 2, timeout=INTERVAL + 10)
        time.sleep(1)
        beat.kill()
        heartbeat = tmp_path / "heartbeat"
        heartbeat.unlink()
        beat = CeleryProcess(env, "beat", "--loglevel=info", log=log)
        restarted = wait_until(heartbeat.exists, timeout=90)
        # Watched until shortly before the interval is up...
        while time.monotonic() < second_send + INTERVAL - 3:
            assert len(sends(broker)) == 2, log.read_text()
            time.sleep(0.5)
        # ...and then the job is sent again, on time.
        third_send = wait_until(lambda: len(sends(broker)) == 3, timeout=INTERVAL)
    finally:
        beat.stop()

    print(
        f"beat SIGKILLed 1 s after sending the job and ticking again "
        f"{restarted - second_send:.0f} s after it: the next send came "
        f"{third_send - second_send:.0f} s after the last (interval {INTERVAL} s)"
    )
    assert third_send - second_send >= INTERVAL - 3
