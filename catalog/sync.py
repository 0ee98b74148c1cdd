"""The change log a client follows to keep a copy of the catalog (the API's /changes).

A trigger on catalog_paper (catalog/sql/paper_changes.*.sql) writes a
PaperChange row, unnumbered, inside every transaction that inserts, deletes,
hides, merges or moves the version of a paper, whatever wrote it (bulk SQL
included). seal() numbers the committed, unnumbered rows above every number
handed out, one sealer at a time: a row is numbered only once its transaction
has committed, so a later commit always gets a higher number, and a client's
token (the last number it read) never skips a row committed after it.
changed_at alone could not say this: it is the writing statement's clock, and
a long transaction commits rows dated before ones already read.
"""

from dataclasses import dataclass
from typing import cast

from django.db import connections, router, transaction
from django.db.models import Exists, F, Max, OuterRef, Subquery

from catalog.models import PaperChange

# The key of the advisory lock sealers take in turn (PostgreSQL).
SEAL_LOCK = 0x5EA1


@dataclass(frozen=True)
class Change:
    sequence: int
    paper_id: int


def seal() -> int:
    """Number the committed, unnumbered log rows, in id order, above every
    number given before; the highest number given (0 before any)."""
    using = router.db_for_write(PaperChange)
    with transaction.atomic(using=using):
        if connections[using].vendor == "postgresql":
            with connections[using].cursor() as cursor:
                # Held until the commit: the next sealer sees these numbers.
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [SEAL_LOCK])
        # (SQLite has one writer at a time.)
        log = PaperChange.objects.using(using)
        top = log.aggregate(top=Max("sequence"))["top"] or 0
        first = log.filter(sequence=None).order_by("id").values_list("id", flat=True).first()
        if first is None:
            return top
        # Distinct and above `top` for every id from `first`; an older row
        # committed meanwhile (a lower id) waits for the next seal.
        log.filter(sequence=None, id__gte=first).update(sequence=F("id") + (top + 1 - first))
        sealed: int = log.aggregate(top=Max("sequence"))["top"]
        return sealed


def changes_since(since: int, *, limit: int) -> tuple[list[Change], bool]:
    """Up to `limit` papers changed after the token `since`, each once, at its
    latest change, in sealing order; and whether more remain. Seal first."""
    using = router.db_for_write(PaperChange)
    log = PaperChange.objects.using(using)
    latest = (
        log.filter(paper_id=OuterRef("paper_id"), sequence__isnull=False)
        .order_by("-sequence")
        .values("sequence")[:1]
    )
    rows = (
        log.filter(sequence__gt=since)
        .filter(sequence=Subquery(latest))
        .order_by("sequence")
        .values_list("sequence", "paper_id")[: limit + 1]
    )
    # sequence > since: never NULL here, whatever the column allows.
    found = [Change(sequence=cast(int, sequence), paper_id=paper_id) for sequence, paper_id in rows]
    return found[:limit], len(found) > limit


def prune() -> int:
    """Delete the numbered rows a later row of the same paper supersedes (what
    changes_since would never answer); the number deleted."""
    using = router.db_for_write(PaperChange)
    log = PaperChange.objects.using(using)
    later = log.filter(paper_id=OuterRef("paper_id"), sequence__gt=OuterRef("sequence"))
    deleted, _ = log.filter(sequence__isnull=False).filter(Exists(later)).delete()
    return deleted
