"""Turning command-line arguments into catalog objects, with a clear error."""

from django.core.management.base import CommandError

from catalog.arxiv_ids import normalize
from catalog.models import Paper


def paper_from_argument(raw: str) -> Paper:
    """The paper an argument such as "2505.15034", "arXiv:2505.15034v2" names."""
    arxiv_id = normalize(raw)
    if arxiv_id is None:
        raise CommandError(f"{raw!r} is not an arXiv id.")
    found = Paper.objects.filter(arxiv_id=arxiv_id).first()
    if found is None:
        raise CommandError(f"No paper with arXiv id {arxiv_id}.")
    return found
