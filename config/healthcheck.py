"""Container health checks: `python -m config.healthcheck web|beat`, exit status 0 when healthy.

Workers are checked with Celery's own `celery -A config inspect ping`.
"""

import http.client
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

from django.conf import settings

# Beat ticks at least every 5 seconds; a heartbeat this old means it hangs.
BEAT_HEARTBEAT_MAX_AGE = 60


def check_web() -> None:
    """/healthz answers 200: the site and its database are up (a Redis down
    leaves it "degraded", still 200). It is answered before the host check and
    the HTTPS redirect; it is asked with a host the site serves all the same."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", int(os.environ.get("PORT", "8000")), timeout=10
    )
    try:
        connection.request("GET", "/healthz", headers={"Host": served_host()})
        status = connection.getresponse().status
    finally:
        connection.close()
    if status != 200:
        raise RuntimeError(f"/healthz answered {status}")


def served_host() -> str:
    hosts: list[str] = settings.ALLOWED_HOSTS
    for host in hosts:
        name = host.lstrip(".")
        if name and name != "*":
            return name
    return "localhost"


def check_beat() -> None:
    heartbeat = Path(settings.BEAT_HEARTBEAT_FILE)
    age = time.time() - heartbeat.stat().st_mtime
    if age > BEAT_HEARTBEAT_MAX_AGE:
        raise RuntimeError(f"beat's last tick was {age:.0f}s ago")


CHECKS = {"web": check_web, "beat": check_beat}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in CHECKS:
        print(f"usage: python -m config.healthcheck {'|'.join(CHECKS)}", file=sys.stderr)
        return 2
    try:
        CHECKS[argv[0]]()
    except Exception as error:  # unhealthy, whatever the reason: say why
        print(f"{argv[0]} unhealthy: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
