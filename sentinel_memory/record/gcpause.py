"""Pause Python's cyclic garbage collector while building many small, acyclic containers.

Parsing 10,000 records or indexing them allocates millions of objects; each allocation burst
triggers collections that scan everything built so far, which can triple the time. Nothing
built there is cyclic, so reference counting frees it all the same."""

from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
