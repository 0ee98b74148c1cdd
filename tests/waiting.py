"""Waiting for what another thread or process does: until a condition holds,
checked again and again up to a deadline, for conditions nothing signals (a
row another process writes). A fake server's own events are waited on
directly (FakeArxiv.wait_for_requests, FakeSentry.wait_for_events)."""

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], *, timeout: float = 30, every: float = 0.05):
    """condition()'s first true value; AssertionError (naming the condition by
    its docstring or name) if none comes within timeout seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            what = condition.__doc__ or getattr(condition, "__name__", repr(condition))
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)
    return value
