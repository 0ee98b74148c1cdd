"""Where the suite finds the services it talks to besides the database.

TEST_REDIS_URL (a server, without a database number; default the local Redis
on 6379) lets two checkouts run the suite side by side, each against its own
Redis server.
"""

import os


def redis_db_url(db: int) -> str:
    base = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379").rstrip("/")
    return f"{base}/{db}"
