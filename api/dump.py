"""The nightly dump of the catalog: every visible paper as the API's list item
(schemas.PaperItem), one JSON object a line, gzip, with a manifest giving its
SHA-256 and the change token (catalog.sync) it is consistent with. A client
loads it, then follows /changes from its token: the log is sealed before the
papers are read, in one snapshot, so any change the dump misses is numbered
above the token; one both in the dump and after it is applied twice, harmlessly.
"""

import gzip
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Prefetch
from django.utils import timezone

from api import serializers
from catalog import sync
from catalog.models import Category, Paper
from catalog.selectors import with_list_related

MANIFEST = "manifest.json"
KEPT = 2
CHUNK = 1_000


class SiteAddress:
    """What the serializers ask a request for, from SITE_ROOT: a dump has no request."""

    def build_absolute_uri(self, location: str | None = None) -> str:
        address: str = urljoin(settings.SITE_ROOT, location or "/")
        return address


def write_dump() -> dict[str, Any]:
    """Write a dump and its manifest into DUMP_DIR, each put in place whole
    (a temporary file renamed), keeping the last KEPT dumps; the manifest."""
    folder = Path(settings.DUMP_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    token = sync.seal()
    created = timezone.now()
    name = f"papers-{created:%Y%m%dT%H%M%SZ}.jsonl.gz"
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".tmp", delete=False) as raw:
        try:
            papers = _write_papers(raw, digest)
        except BaseException:
            os.unlink(raw.name)
            raise
    os.replace(raw.name, folder / name)
    manifest = {
        "file": name,
        "sha256": digest.hexdigest(),
        "bytes": (folder / name).stat().st_size,
        "papers": papers,
        "token": str(token),
        "created_at": created.isoformat(),
    }
    with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as out:
        json.dump(manifest, out)
    os.replace(out.name, folder / MANIFEST)
    for old in sorted(folder.glob("papers-*.jsonl.gz"))[:-KEPT]:
        old.unlink()
    return manifest


def _write_papers(raw: Any, digest: "hashlib._Hash") -> int:
    """Every visible paper, read in one snapshot, streamed in chunks; how many."""
    address = SiteAddress()
    count = 0
    # Its own transaction takes the snapshot; inside another (a test's) the
    # isolation is that one's.
    own = not connection.in_atomic_block
    with transaction.atomic():
        if connection.vendor == "postgresql" and own:
            connection.cursor().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        papers = with_list_related(Paper.objects.visible().order_by("id")).prefetch_related(
            Prefetch("categories", queryset=Category.objects.order_by("code"))
        )
        with _Hashed(raw, digest) as hashed, gzip.GzipFile(fileobj=hashed, mode="wb") as out:
            for paper in papers.iterator(chunk_size=CHUNK):
                # The serializer asks its request only for absolute addresses.
                item = serializers.paper_item(address, paper)  # type: ignore[arg-type]
                out.write(json.dumps(item, cls=DjangoJSONEncoder).encode() + b"\n")
                count += 1
    return count


class _Hashed:
    """A file that hashes what is written to it."""

    def __init__(self, raw: Any, digest: "hashlib._Hash") -> None:
        self.raw, self.digest = raw, digest

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        written: int = self.raw.write(data)
        return written

    def flush(self) -> None:
        self.raw.flush()

    def __enter__(self) -> "_Hashed":
        return self

    def __exit__(self, *exc: object) -> None:
        self.raw.flush()


def manifest() -> dict[str, Any] | None:
    """The latest dump's manifest, None before the first dump."""
    try:
        found: dict[str, Any] = json.loads((Path(settings.DUMP_DIR) / MANIFEST).read_text())
    except FileNotFoundError:
        return None
    return found
