"""The API fuzzed from its own OpenAPI schema by schemathesis, against a live
server on 127.0.0.1, with all its checks: no server error, every answer as
the schema says (status code, content type, headers, body), bad input refused
and good input taken.

The suite runs a short pass; `make api-fuzz` a long one (API_FUZZ_EXAMPLES
examples per operation, API_FUZZ_SECONDS at most).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from accounts import services
from tests.accounts_factories import SavedPaperFactory, SubscriptionFactory, UserFactory
from tests.factories import (
    CategoryFactory,
    CodeLinkFactory,
    PaperFactory,
    SummaryFactory,
    TagFactory,
)

# Every check schemathesis has, through every phase (examples, coverage,
# fuzzing, and the stateful phase, which follows the links between answers).
# Positive data acceptance is told that 400 accepts too: the schema types a tag
# slug, a category code or a cursor as a string, and one the catalog never made
# is refused by design (a problem answer naming the parameter), not answered as
# if it named something. Any other status still fails it.
CHECKS = "all"
CONFIG = """
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "400", "401", "404", "429"]
"""
EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "10"))
SECONDS = int(os.environ.get("API_FUZZ_SECONDS", "30"))


@pytest.fixture
def catalog(transactional_db):
    tag, category = TagFactory(slug="agents"), CategoryFactory(code="cs.AI")
    papers = [PaperFactory(tags=[tag], categories=[category], authors=["A B"]) for _ in range(5)]
    CodeLinkFactory(paper=papers[0])
    SummaryFactory(paper=papers[0], kind="takeaways", body="1. One\n2. Two")
    PaperFactory(arxiv_id="hep-th/9901001")
    reader = UserFactory()
    SubscriptionFactory(user=reader, tag=tag)
    SavedPaperFactory(user=reader, paper=papers[1])
    _, secret = services.create_api_token(user=reader, name="fuzz")
    return secret


def schemathesis(url: str, *args: str, workdir: Path) -> subprocess.CompletedProcess:
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{url}/api/v1/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        str(EXAMPLES),
        "--max-time",
        str(SECONDS),
        "--workers",
        "1",
        "--no-color",
        *args,
    ]
    # In a scratch directory: schemathesis keeps a cache of what it found where
    # it runs, and reads its configuration from there.
    (workdir / "schemathesis.toml").write_text(CONFIG)
    return subprocess.run(
        command, cwd=workdir, capture_output=True, text=True, timeout=SECONDS * 3, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("client", ["with a token", "anonymous"])
def test_the_api_answers_as_its_schema_says_whatever_it_is_sent(
    live_server, catalog, tmp_path, client
):
    # Anonymous, the reader's operations answer 401 as their schema says.
    token = ["--header", f"Authorization: Bearer {catalog}"] if client == "with a token" else []
    run = schemathesis(live_server.url, *token, workdir=tmp_path)

    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    # How much was tried, for `make api-fuzz` (which shows the test's output).
    summary = run.stdout[run.stdout.find("Test cases:") :].strip().splitlines()[:2]
    print("\n".join(summary))
