"""Pausing Python's cyclic garbage collector around a burst of short-lived allocations."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one build (restored after, even on an
    error; left alone if the caller had it off). A build makes no reference cycles, but
    the thousands of short-lived candidates, rows and cache entries it allocates would
    otherwise trigger collections in mid-build that traverse every tracked object of the
    process and move the build's live objects to the old generation, which then brings on
    full collections (measured: 5-20% of a cold 2,000-packet build). Reference counting
    still frees everything the build drops at once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
