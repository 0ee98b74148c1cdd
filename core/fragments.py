"""HTML fragments rendered once and shared by every request of a process.

A fragment is kept under a digest of what changes it: the versions of the
rows it shows, the options it was rendered with, and the source of its
templates (template_digest), so a change to any of them gives another key
and nothing ever needs invalidating. This works the same with or without
Redis. Each store is sized by a setting of its own; least recently used
entries go first.
"""

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import Template, engines
from django.template.backends.django import DjangoTemplates
from django.template.base import FilterExpression
from django.template.loader_tags import ExtendsNode, IncludeNode
from django.urls import reverse

_all: list["Fragments"] = []


def digest(*parts: object) -> bytes:
    """A key for these values (their repr)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()


class Fragments:
    def __init__(self, size_setting: str) -> None:
        self.size_setting = size_setting
        self.entries: OrderedDict[bytes, str] = OrderedDict()
        self.lock = threading.Lock()
        _all.append(self)

    @property
    def size(self) -> int:
        size: int = getattr(settings, self.size_setting)
        return size

    def get_or_render(self, key: bytes, render: Callable[[], str]) -> str:
        """The fragment under key, rendered now if this process has none (or the size is 0)."""
        size = self.size
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


# Per compiled template: the template loader keeps one until its templates
# change (a deploy, or an edit that the development server reloads).
_template_digests: weakref.WeakKeyDictionary[Template, bytes] = weakref.WeakKeyDictionary()


def template_digest(name: str) -> bytes:
    """A digest of a template's source and of those it extends or includes by
    name, read once per compiled template: a fragment keyed on it is rendered
    afresh after any of them is edited."""
    backend = engines["django"]
    if not isinstance(backend, DjangoTemplates):
        raise TypeError(f"The 'django' template engine is {type(backend).__name__}.")
    template = backend.engine.get_template(name)
    found = _template_digests.get(template)
    if found is None:
        found = _template_digests[template] = digest(*_sources(template, seen=set()))
    return found


def _sources(template: Template, *, seen: set[str | bytes | None]) -> list[str]:
    seen.add(template.origin.template_name)
    sources = [template.source]
    # The stubs take one node class; Django hands it to isinstance, which takes a tuple.
    nodes = template.nodelist.get_nodes_by_type((ExtendsNode, IncludeNode))  # type: ignore[arg-type]
    for node in nodes:
        if isinstance(node, ExtendsNode):
            named = node.parent_name
        elif isinstance(node, IncludeNode):
            named = node.template
        else:
            continue
        var = named.var if isinstance(named, FilterExpression) else None
        name = var if isinstance(var, str) else None  # a constant name
        if name and name not in seen:
            sources += _sources(template.engine.get_template(name), seen=seen)
    return sources


def address_parts(name: str) -> tuple[str, str]:
    """The address of a view taking one id, as what comes before the id and
    after it: a fragment rendered with a stand-in for the id gets each
    object's address without a reverse() per object."""
    prefix, _, suffix = reverse(name, args=[1]).rpartition("/1/")
    return f"{prefix}/", f"/{suffix}"


@receiver(setting_changed)
def _forget_fragments(**kwargs: Any) -> None:
    # Fragments show addresses and text built from settings; tests change settings at run time.
    for fragments in _all:
        fragments.clear()
