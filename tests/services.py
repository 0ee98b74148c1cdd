"""Where the suite finds the services it talks to besides the database.

TEST_REDIS_URL (a server; a database number in it is ignored; default the
local Redis on 6379) lets two checkouts run the suite side by side, each
against its own Redis server. `make reliability` sets it from REDIS_URL.
"""

import os
from urllib.parse import urlsplit

from celery import Celery


def redis_db_url(db: int) -> str:
    base = urlsplit(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379"))
    return base._replace(path=f"/{db}").geturl()


def celery_client(broker: str) -> Celery:
    """A Celery client sending to broker, for tests that run real workers. It
    never becomes the process's current app: the project's tasks, which resolve
    their app as the current one, would then go to that broker instead of
    running inline for the tests after it."""
    return Celery("papershelf-test", broker=broker, set_as_current=False)
