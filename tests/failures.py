"""A page and a Celery task that fail on purpose, for the tests of error reporting.

Served as a URLconf (`pytest.mark.urls("tests.failures")`) and loaded into real
workers with `celery worker --include tests.failures`.
"""

import logging

from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.celery import app

logger = logging.getLogger(__name__)


class DeliberateFailure(Exception):
    pass


def failing_view(request: HttpRequest) -> HttpResponse:
    logger.info("the view is about to fail")
    raise DeliberateFailure("the view failed on purpose")


urlpatterns = [path("fail/", failing_view)]


@app.task(name="tests.failures.failing_task")
def failing_task() -> None:
    logger.info("the task is about to fail")
    raise DeliberateFailure("the task failed on purpose")
