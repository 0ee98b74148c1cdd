"""HTML fragments rendered once and shared by every request of a process.

A fragment is kept under a digest of everything it shows, so a change to any
of it gives another key and nothing ever needs invalidating: this works the
same with or without Redis. Least recently used entries go first.
"""

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from django.core.signals import setting_changed
from django.dispatch import receiver

_all: list["Fragments"] = []


def digest(*parts: object) -> bytes:
    """A key for these values (their repr)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


class Fragments:
    def __init__(self) -> None:
        self.entries: OrderedDict[bytes, str] = OrderedDict()
        self.lock = threading.Lock()
        _all.append(self)

    def get_or_render(self, key: bytes, render: Callable[[], str], *, size: int) -> str:
        """The fragment under key, rendered now if this process has none (or size is 0)."""
        if not size:
            return render()
        with self.lock:
            html = self.entries.get(key)
            if html is not None:
                self.entries.move_to_end(key)
                return html
        html = render()
        with self.lock:
            self.entries[key] = html
            while len(self.entries) > size:
                self.entries.popitem(last=False)
        return html

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


@receiver(setting_changed)
def _forget_fragments(**kwargs) -> None:
    # Fragments show addresses and text built from settings; tests change settings at run time.
    for fragments in _all:
        fragments.clear()
