"""The index of one memory file kept between searches (KeptIndex): the index of the snapshot last
searched, or, after a write of this process, what the next snapshot's index is to be derived from
(search/index.py SearchIndex.derive), at the cost of the changed records instead of every record.
tools/memory.py's OpenMemory owns one per memory file."""

from __future__ import annotations

from dataclasses import dataclass

from ..record.records import Entry
from ..record.snapshot import Snapshot
from .index import SearchIndex

_MAX_PENDING = 512  # changed entries an index may still be derived through; past it, one is built afresh


@dataclass
class _Current:
    """The snapshot last searched or written, and its index, or what its index is to be derived
    from: an earlier index and the entries removed from and added to it since."""

    snapshot: Snapshot
    index: SearchIndex | None = None
    base: SearchIndex | None = None
    removed: tuple[Entry, ...] = ()
    added: tuple[Entry, ...] = ()


class KeptIndex:
    """The index of the snapshot of one memory file last searched, kept between searches, or what
    it is to be derived from after a write. Its owner (tools/memory.py's OpenMemory) asks it for
    each snapshot's index (index_of) and tells it what each write changed (follow)."""

    def __init__(self) -> None:
        self._current: _Current | None = None

    def index_of(self, snap: Snapshot) -> SearchIndex:
        """The index of this snapshot: the one kept when it is the snapshot last searched; derived
        when a write handed it over (follow); else built from its records."""
        current = self._current
        if current is not None and current.snapshot is snap:
            if current.index is not None:
                return current.index
            assert current.base is not None  # no index yet: follow() left a base to derive it from
            index = current.base.derive(current.removed, current.added) or SearchIndex(snap.records.values())
        else:
            index = SearchIndex(snap.records.values())
        self._current = _Current(snap, index)
        return index

    def follow(self, before: Snapshot, after: Snapshot | None) -> None:
        """A write turned `before` into `after` (after.edit says how; None: nothing was written):
        keep what is needed to derive after's index from before's when it is next searched."""
        current = self._current
        if after is None or after.edit is None or current is None or current.snapshot is not before:
            return
        base: SearchIndex | None
        if current.index is not None:
            base, removed, added = current.index, [], {}
        else:
            base, removed, added = current.base, list(current.removed), dict.fromkeys(current.added)
        for entry in after.edit.removed:
            if entry in added:
                del added[entry]  # added since the base, gone again
            else:
                removed.append(entry)
        added.update(dict.fromkeys(after.edit.added))
        if len(removed) + len(added) > _MAX_PENDING:
            self._current = None
            return
        self._current = _Current(after, None, base, tuple(removed), tuple(added))
