import os
import shutil

import pytest

from bench.clusters import PostgresCluster


@pytest.fixture
def cluster():
    """A private PostgreSQL cluster on a free port, for tests that stop or crash it."""
    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("needs root to run a private cluster as the postgres user")
    cluster = PostgresCluster()
    try:
        cluster.init()
        yield cluster
    finally:
        cluster.destroy()
