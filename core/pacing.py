"""Shared turns for requests to outside services, across every process and host.

arXiv asks for one connection at a time and a pause between requests: the API
reader, the OAI-PMH harvester and the PDF downloads all take the one "arxiv"
turn. Calls to a language model or an embedding endpoint are spaced to their
rate limit the same way, whichever worker makes them.

On PostgreSQL a turn is an advisory lock, which every worker on every host
sharing the database waits for, Redis or not; on SQLite, the single-process
development default, it is a lock of this process. The lock is the session's,
on the process's own connection; behind a pooler in transaction mode
(DATABASE_TRANSACTION_POOLING), where a session lock would stay on whichever
server connection took it, it is a transaction's, held by a connection opened
for the turn and released when that transaction ends.
"""

import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper

_process_locks: dict[str, threading.Lock] = {}
_process_locks_guard = threading.Lock()


class TurnNotTaken(Exception):
    """Another process kept the turn longer than the caller was willing to wait."""


@contextmanager
def turn(name: str, *, spacing: float, exclusive: bool, max_wait: float) -> Iterator[None]:
    """Wait for the named turn.

    exclusive: the body runs alone, and the next body starts `spacing` seconds
    after it ends (one request at a time, as arXiv asks). Otherwise bodies may
    overlap, but start at least `spacing` seconds apart (a rate limit; none
    when spacing is 0).
    """
    if not exclusive and spacing <= 0:
        yield
        return
    with _process_lock(name), _database_lock(name, max_wait=max_wait):
        if exclusive:
            try:
                yield
            finally:
                time.sleep(spacing)
        else:
            time.sleep(spacing)
    if not exclusive:
        yield


def spacing_of(rate: str) -> float:
    """Seconds between starts for a rate such as "10/m", "2/s" or "100/h"; 0 for none."""
    if not rate:
        return 0.0
    count, _, unit = rate.partition("/")
    seconds = {"s": 1, "m": 60, "h": 3600}[unit.strip()[:1] or "s"]
    return seconds / float(count)


def _process_lock(name: str) -> threading.Lock:
    with _process_locks_guard:
        return _process_locks.setdefault(name, threading.Lock())


def lock_key(name: str) -> int:
    """The advisory lock number of a turn (also what another process holds to wait it out)."""
    return zlib.crc32(f"papershelf:turn:{name}".encode())


@contextmanager
def _database_lock(name: str, *, max_wait: float) -> Iterator[None]:
    if connection.vendor != "postgresql":
        yield
        return
    if not settings.DATABASE_TRANSACTION_POOLING:
        _take(connection, "pg_try_advisory_lock", name, max_wait=max_wait)
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [lock_key(name)])
        return
    own = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        own.set_autocommit(False)
        _take(own, "pg_try_advisory_xact_lock", name, max_wait=max_wait)
        yield
    finally:
        # Ended here, not by the close: the server ends a closed connection's
        # transaction, and frees the lock, only when it notices, after the next
        # process may already have asked for the turn and been refused.
        with suppress(DatabaseError):
            own.rollback()
        own.close()


def _take(database: BaseDatabaseWrapper, function: str, name: str, *, max_wait: float) -> None:
    deadline = time.monotonic() + max_wait
    with database.cursor() as cursor:
        while True:
            cursor.execute(f"SELECT {function}(%s)", [lock_key(name)])
            if cursor.fetchone()[0]:
                return
            if time.monotonic() > deadline:
                raise TurnNotTaken(f"another process held the {name} turn over {max_wait:.0f} s")
            time.sleep(0.05)


def arxiv_turn(*, max_wait: float) -> AbstractContextManager[None]:
    """The one arXiv connection, kept ARXIV_DELAY_SECONDS after each request."""
    return turn("arxiv", spacing=settings.ARXIV_DELAY_SECONDS, exclusive=True, max_wait=max_wait)
