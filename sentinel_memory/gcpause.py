"""Pause Python's cyclic garbage collector while building many objects that are not garbage.

Parsing 10,000 records or indexing them allocates millions of objects; each allocation burst
triggers collections that scan everything built so far, which can triple the time. Nothing
built there is cyclic, so reference counting frees it all the same. Importing the MCP server
(fastmcp, pydantic's models) is the same: a third of its CPU went to collections that found
nothing to free (loaded())."""

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


@contextmanager
def loaded():
    """Pause the collector while a large import runs, then freeze what it made: the modules and
    classes live as long as the process, so later collections need not scan them again."""
    with paused():
        yield
    gc.freeze()
