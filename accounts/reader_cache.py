"""A logged-in reader's user row and ids (selectors.reader_ids), kept in the
catalog cache between their requests: a page every reader shares, served from
the cache, then costs no query at all.

Each reader's entry is stored with their version, a counter beside it that
any change to the user, their subscriptions or their saved papers moves on
once it has committed (accounts.signals), from whatever process or device
made it. An entry is used only under the version it was stored with: a
request that read the database before a change committed stores what it read
under the version it saw, which the change has already left behind. Without
a shared cache (no Redis) nothing is kept and every request reads the
database. A write that sends no signal (QuerySet.update(), bulk_create(),
raw SQL) must call reader_changed() itself; none touches these rows today,
and an entry expires after CATALOG_CACHE_SECONDS whatever happens.

The ids carry the number of papers the reader follows, which only picks the
feed's query plan: an entry keeps it until the reader changes something or
the entry expires.
"""

import hashlib
from collections.abc import Callable
from functools import partial

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from accounts import selectors
from catalog.cache import (
    VERSION_KEY,
    bump_version,
    catalog_cache,
    current_version,
    keep_catalog_version,
    keep_reader_version,
    reader_version_key,
)

# What the ids hold, in the entry's key: entries stored by code whose ids held
# other things (a deploy that added upvoted papers) are never read.
IDS_SHAPE = hashlib.sha256(
    " ".join(sorted(selectors.ReaderIds.__annotations__)).encode()
).hexdigest()[:8]


def _keys(user_id: int) -> tuple[str, str]:
    return reader_version_key(user_id=user_id), f"reader:{user_id}:{IDS_SHAPE}"


def cached_reader(*, user_id: int, load: Callable[[], User | None]) -> User | None:
    """The reader with their ids read, from the cache when their version still
    holds, else from load() (None for a user who cannot log in: not kept)."""
    version_key, entry_key = _keys(user_id)
    cache = catalog_cache()
    # The catalog's version too: the page cache asks for it next.
    stored = cache.get_many([version_key, entry_key, VERSION_KEY])
    version = stored.get(version_key)
    if version is None:
        version = current_version(version_key)
        if version is None:  # no working cache
            return load()
    entry: tuple[int, User] | None = stored.get(entry_key)
    if entry is not None and entry[0] == version:
        keep_reader_version(entry[1], version)
        keep_catalog_version(entry[1], stored.get(VERSION_KEY))
        return entry[1]
    # Read on the primary (reads in a transaction go there): a replica behind
    # a change that has just committed would have what it replaced stored
    # under the change's own version.
    with transaction.atomic(savepoint=False):
        user = load()
        if user is not None:
            selectors.reader_ids(user=user)  # kept on the user object, and stored with it
    if user is not None:
        cache.set(entry_key, (version, user), settings.CATALOG_CACHE_SECONDS)
        keep_reader_version(user, version)
        keep_catalog_version(user, stored.get(VERSION_KEY))
    return user


def reader_changed(*, user_id: int) -> None:
    """After a change to the reader's row, subscriptions, saved papers or
    For-you list: once it commits, every process reads them afresh and their
    own pages are rendered again."""
    transaction.on_commit(partial(bump_version, _keys(user_id)[0]))
