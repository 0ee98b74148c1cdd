"""With SENTRY_DSN set, server errors and failed tasks reach Sentry.

The site runs in a fresh process, as deployed, reporting to a stand-in for
Sentry on 127.0.0.1.
"""

import json
import subprocess
import sys
from pathlib import Path

from tests.sentry_server import exceptions

PROJECT = Path(__file__).resolve().parent.parent

SITE = """
import json
import wsgiref.util

import sentry_sdk
from django.test import override_settings

from config.wsgi import application
from tests.failures import failing_task

# A request through the WSGI entry point, as gunicorn makes it.
environ = {"PATH_INFO": "/fail/", "HTTP_HOST": "testserver", "wsgi.url_scheme": "https"}
wsgiref.util.setup_testing_defaults(environ)
answer = {}
with override_settings(ROOT_URLCONF="tests.failures"):
    application(environ, lambda status, headers: answer.update(headers, status=status))
result = failing_task.apply(throw=False)
sentry_sdk.flush(timeout=10)
print(json.dumps({"status": answer["status"], "request_id": answer["X-Request-ID"],
                  "task_id": result.id}))
"""


def run_site(environment: dict[str, str]) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", SITE],
        cwd=PROJECT,
        env={
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "sentry-test-key",
            "ALLOWED_HOSTS": "testserver",
            "DATABASE_URL": "sqlite://:memory:",
            "REDIS_URL": "",
            **environment,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def test_server_errors_and_failed_tasks_reach_sentry(fake_sentry):
    site = run_site({"SENTRY_DSN": fake_sentry.dsn, "SENTRY_ENVIRONMENT": "staging"})

    assert site["status"] == "500 Internal Server Error"
    events = fake_sentry.wait_for_events(2)
    [web] = [e for e in events if e.get("request")]
    assert exceptions(web) == [("DeliberateFailure", "the view failed on purpose")]
    assert web["request"]["url"] == "https://testserver/fail/"
    assert web["tags"]["request_id"] == site["request_id"]
    assert web["environment"] == "staging"
    assert web["exception"]["values"][0]["mechanism"]["type"] == "django"
    [task] = [e for e in events if "celery-job" in e.get("extra", {})]
    assert exceptions(task) == [("DeliberateFailure", "the task failed on purpose")]
    assert task["extra"]["celery-job"]["task_name"] == "tests.failures.failing_task"
    assert task["tags"]["celery_task_id"] == site["task_id"]
    assert task["exception"]["values"][0]["mechanism"]["type"] == "celery"
