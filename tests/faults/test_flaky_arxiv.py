"""A fake arXiv that fails 30% of requests at random (429, 503, timeouts, resets,
empty pages, broken XML): each harvest still completes, every paper stored once.

Uses the production retry count (ARXIV_MAX_RETRIES); only the waits are shortened.
The worker killed mid-ingest is tests/test_ingest_worker.py::
test_a_worker_killed_mid_run_loses_nothing_and_the_next_run_completes.
"""

import random

import pytest
from django.core.management import call_command

from catalog.models import Paper
from tests.arxiv_server import Fault, entry_id
from tests.ingest_factories import IngestSourceFactory

pytestmark = pytest.mark.django_db
FAILURE_RATE = 0.3
FAULTS = [
    Fault(status=429, headers={"Retry-After": "0"}),
    Fault(status=503),
    Fault(status=500),
    Fault(delay=1),  # past the client's timeout
    Fault(reset=True),
    Fault(empty=True),
    Fault(truncate=True),
    Fault(body=b"<?xml version='1.0'?><feed><entry><id>broken"),
]
SEEDS = range(20)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_harvest_through_a_flaky_arxiv_stores_every_paper_once(
    fake_arxiv, settings, seed, capsys
):
    settings.ARXIV_MAX_RETRIES = 5
    rng = random.Random(seed)
    planned = [rng.choice(FAULTS) if rng.random() < FAILURE_RATE else Fault() for _ in range(200)]
    fake_arxiv.queue(*planned)
    IngestSourceFactory(name="Flaky", max_results=len(fake_arxiv.entries))

    call_command("ingest_arxiv", "--source", "Flaky")

    served = sorted(entry_id(entry) for entry in fake_arxiv.entries)
    stored = sorted(Paper.objects.values_list("arxiv_id", flat=True))
    assert stored == served
    assert "succeeded" in capsys.readouterr().out
    injected = sum(fault != Fault() for fault in planned[: len(fake_arxiv.requests)])
    with capsys.disabled():
        print(f"\nseed {seed}: {len(fake_arxiv.requests)} requests, {injected} faults injected")
    assert injected > 0
