"""The operations' typed results (tools/memory.py makes them): what search_memory found, what one
upsert did, what compact_memory shows. They hold no sentence: tools/render.py and
tools/compaction_answer.py put them into words."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..record.records import Draft
from ..record.snapshot import Snapshot

if TYPE_CHECKING:  # for annotations only
    from ..git.staleness import Stale
    from ..record.store import WriteReport


@dataclass
class Found:
    """What search_memory found: the scope's counts, and the numbered blocks that fit the budget."""

    path: Path
    snapshot: Snapshot
    query: str
    ordered: bool  # the query has terms to order by
    topic: str | None
    total: int  # records in scope
    logs: int  # in scope
    principles: int  # in scope
    budget: int
    files: list[str] = field(default_factory=list)  # the files asked about
    blocks: list[str] = field(default_factory=list)
    left_out: int = 0
    left_topics: Counter = field(default_factory=Counter)  # topics of what was left out
    left_matching: int = 0  # of those left out, how many match the query or the files
    cut: bool = False  # the budget, not the focus, stopped the listing
    stale: int = 0  # of the records listed, how many carry a stale mark
    shallow: bool = False  # the marks come from a shallow clone's history (render.SHALLOW_NOTE)
    strong: list[int] | None = None  # the numbers of the listed blocks that match strongly (None: no query)
    matches_listed: int = 0  # how many listed blocks match the query or the files at all
    some_words: bool = (
        False  # a measured listed block shares rare words, a code name or the topic, too little to be strong
    )

    @property
    def all_logs(self) -> int:
        return self.snapshot.counts()[0]


@dataclass(frozen=True)
class Logged:
    """What one upsert did (docs/contract.md §4): its status, the record as stored, the sources it
    deleted or did not find, and what the write set aside on the way."""

    path: Path
    draft: Draft
    status: str  # "saved", "updated" or "unchanged"
    record: dict
    deleted: list[str]
    missing: list[str]
    logs: int
    principles: int
    threshold: int
    report: WriteReport
    files: list[str] = field(default_factory=list)  # the files the stored record cites
    was_stale: Stale = ()  # the stale mark the record had before this save (which clears it)
    # Sources named with a version the file no longer holds (changed since compact_memory showed
    # them): kept, not deleted; their records as the file holds them now.
    changed: list[dict] = field(default_factory=list)
    # The files the save that folds them in passes, so that the principle keeps the citations of
    # what it folds: those the principle and the kept sources cite that are still files, at most 10.
    fold_files: list[str] = field(default_factory=list)
    # The cited paths a refresh replaced by the name git renamed them to (old, new): contract §3.7.
    followed: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Compaction:
    """What compact_memory shows (it changes nothing): the records of the scope grouped by topic,
    principles first, and clusters of similar topics that may be merged."""

    path: Path
    snapshot: Snapshot
    threshold: int
    topic: str | None
    groups: dict[str, list[dict]]
    clusters: list[list[str]]
    budget: int
    stale: dict[str, Stale] = field(default_factory=dict)  # the marks of the stale records in scope, by id
    files: dict[str, list[str]] = field(default_factory=dict)  # per topic, the files its principle may cite
    shallow: bool = False  # the stale marks come from a shallow clone's history

    @property
    def all_logs(self) -> int:
        return self.snapshot.counts()[0]

    @property
    def required(self) -> bool:
        return self.all_logs > self.threshold
