"""The memory file: reading it (a MemoryFile keeps what it last read or wrote between calls) and
the locked read-modify-write that every change goes through (docs/contract.md §5).

Reads take no lock (a replace is atomic, so a reader sees the old file or the new one) and create
nothing. A write holds the lock on "<file>.lock" around read-modify-write only; before the file
is replaced, lines that are not records go to the quarantine file and a conflicted file is copied
aside, so nothing is ever lost. The disk work itself is record/disk.py's; .context/'s side files
are record/contextdir.py's; the line format is record/snapshot.py's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import LockTimeout, warn
from ..gcpause import paused
from ..values import Value
from . import contextdir, disk, gitlock
from .merge import merge_three_way
from .snapshot import Snapshot, parse

MEMORY_FILE = "memory_log.jsonl"
LOCK_TIMEOUT = 10.0
LOCK_TIMEOUT_ENV = "SENTINEL_MEMORY_LOCK_TIMEOUT"
# A write that finds the file changed under it starts again on what is there; this many times at
# most. git replaces a file once per command, so a second round is already rare.
MAX_ROUNDS = 8


Stages = tuple[bytes, bytes, bytes]
# (base, ours, theirs) of a file git is merging, or None. The file layer runs no git: whoever makes
# a MemoryFile gives it the reader (tools/memory.py: git/drivers.py's index_stages).
StageReader = Callable[[Path], Stages | None]


def memory_path(root: Path) -> Path:
    return Path(root) / ".context" / MEMORY_FILE


def lock_timeout() -> float:
    """Seconds a write waits for the lock: $SENTINEL_MEMORY_LOCK_TIMEOUT, else 10."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw) if raw else LOCK_TIMEOUT
    except ValueError:
        return LOCK_TIMEOUT
    return value if 0 <= value < float("inf") else LOCK_TIMEOUT


class _Cached(Value):
    """The last snapshot read or written of one file; its fingerprint when this process wrote it
    (else None); and the bytes it was read from, once compared."""

    __slots__ = ("snapshot", "fingerprint", "data")

    def __init__(self, snapshot: Snapshot, fingerprint: disk.Fingerprint | None, data: bytes | None) -> None:
        self.snapshot = snapshot
        self.fingerprint = fingerprint
        self.data = data


class MemoryFile:
    """One memory file as one process reads and writes it. It keeps the snapshot it last read or
    wrote: a read whose fingerprint or bytes match reuses it instead of parsing again (a
    long-running server reads the file on every call; parsing 50,000 records takes far longer
    than comparing their bytes). `merge_stages` reads git's index stages of the file while git
    merges it (None: two-way markers are read as they are). Whoever makes one keeps it as long
    as its snapshot may be reused: the server for its life, a command for its run."""

    def __init__(self, path: Path | str, merge_stages: StageReader | None = None) -> None:
        self.path = Path(path)
        self._key = os.fspath(path)
        self._merge_stages = merge_stages
        self._cached: _Cached | None = None

    def read(self) -> Snapshot:
        """Read the memory file without locking or creating anything; a missing file is empty.
        The returned snapshot may be shared with other callers: never change it."""
        return self._read()[0]

    def update(self, change: Callable[[Snapshot], Snapshot | None], timeout: float | None = None) -> WriteReport:
        """Locked read-modify-write. change() gets the current snapshot and returns the new one
        (made with snap.edited(...) or Snapshot(records=...)), or None to leave the file untouched.
        Before the file is replaced, unreadable lines (and the lines the new snapshot's `unreadable`
        sets aside) go to the quarantine file and a conflicted file is copied aside, so nothing is
        ever lost. What was written is kept for the next read.

        While git is at work in the repository (gitlock.at_work: it may be replacing tracked
        files), the write waits, within the lock timeout, then raises LockTimeout with nothing
        saved. When the file changed between the read and the replace, or git replaced it right
        after, the read-modify-write starts again on what is there now (docs/contract.md §5.8):
        change() may be called more than once, and only its last result is written."""
        return _update(self, change, timeout)

    def _read(self) -> tuple[Snapshot, disk.Fingerprint | None]:
        """The snapshot, and the file's fingerprint from just before its bytes were read (None when
        it is missing): the file is still what the snapshot says while fingerprint(key) equals it."""
        key = self._key
        cached = self._cached
        if cached is not None and cached.fingerprint is not None and disk.fingerprint(key) == cached.fingerprint:
            return cached.snapshot, cached.fingerprint  # still exactly the file this process wrote
        disk.check_directory(os.path.dirname(key))
        data, seen = disk.read_fingerprinted(key)
        if data is None:
            return Snapshot(), None
        if cached is not None:
            if cached.data is None:
                cached.data = cached.snapshot.raw  # joined once: later comparisons need not join the pieces again
            if cached.data == data:
                return cached.snapshot, seen
        with paused():
            snap = parse(data)
        if snap.conflict_regions and not snap.conflict_base and self._merge_stages is not None:
            snap = _merged_from_index(self._merge_stages(self.path), snap)
        self._cached = _Cached(snap, None, data)
        return snap, seen

    def _wrote(self, snap: Snapshot, fingerprint: disk.Fingerprint | None) -> None:
        """This process just wrote `snap`; the file's stamped fingerprint after it (None: the stamp did
        not stick, so the next read compares the bytes)."""
        self._cached = _Cached(snap, fingerprint, None)


def read(path: Path | str) -> Snapshot:
    """MemoryFile.read of the file at `path`, once, keeping nothing; git's index stages unread."""
    return MemoryFile(path).read()


def _merged_from_index(stages: Stages | None, snap: Snapshot) -> Snapshot:
    """Two-way markers cannot tell a deletion from an addition, but while git is still merging
    the file its index holds the base, ours and theirs: merge those exactly instead."""
    if stages is None:
        return snap
    base, ours, theirs = (parse(blob) for blob in stages)
    if any(side.unreadable or side.conflict_regions for side in (base, ours, theirs)):
        return snap
    return Snapshot(
        records=merge_three_way(base.records, ours.records, theirs.records),
        unreadable=snap.unreadable,
        conflict_regions=snap.conflict_regions,
        conflict_base=True,
        duplicates=snap.duplicates,
        raw_bytes=snap.raw_bytes,
    )


class WriteReport(Value):
    """What a locked update found and did: the file as read under the lock (before), as written
    (after; None when nothing was written), and what it set aside on the way."""

    __slots__ = (
        "before",
        "after",
        "quarantined",
        "quarantine_redactions",
        "conflict_copy",
        "swallowed",
        "past_bound",
        "set_aside_left_out",
    )

    def __init__(self, before: Snapshot) -> None:
        self.before = before
        self.after: Snapshot | None = None
        self.quarantined = 0
        self.quarantine_redactions = 0
        self.conflict_copy: Path | None = None
        # An unfinished key in the lines set aside took the lines after it when redacted: the file
        # as it was is kept in conflict_copy (contextdir.redacted_lines).
        self.swallowed = False
        # Lines past what one write redacts (contextdir.REDACTED_PER_WRITE): not in the quarantine
        # file; the file as it was is kept in conflict_copy.
        self.past_bound = 0
        # Lines the change set aside (its snapshot's `unreadable`) that were left out the same way:
        # the change's caller says where they are (scan --redact: in conflict_copy; fold: the stray).
        self.set_aside_left_out = 0

    @property
    def written(self) -> bool:
        return self.after is not None


def past_bound_sentence(lines: int, copy: str, moved: int) -> str:
    """What a write says of the lines past what it redacts into the quarantine file (`moved`: the
    lines it did move there)."""
    what, were = ("line that is not a record", "was") if lines == 1 else ("lines that are not records", "were")
    return (
        f"{lines:,}{' more' if moved else ''} {what}, past the {contextdir.REDACTED_PER_WRITE >> 10} KiB of such lines one write "
        f"redacts into {contextdir.QUARANTINE_FILE}, {were} left out of it; the file as it was is kept as "
        f"{copy} (git-ignored, on this machine only): read them there"
    )


def update(path: Path, change: Callable[[Snapshot], Snapshot | None], timeout: float | None = None) -> WriteReport:
    """MemoryFile.update of the file at `path`, once, keeping nothing."""
    return _update(MemoryFile(path), change, timeout)


def _update(target: MemoryFile, change: Callable[[Snapshot], Snapshot | None], timeout: float | None) -> WriteReport:
    key = target._key
    context = os.path.dirname(key)
    wait = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + wait  # for the lock and git together
    disk.check_directory(context)
    gitdir = gitlock.git_dir(context)
    if not os.path.isdir(context):
        _settled(gitdir, deadline, wait)  # a checkout may be creating .context/ and its files right now
        contextdir.prepare(Path(context))
    undone: list[WriteReport] = []  # rounds whose write git replaced right after
    with disk.locked(key, max(deadline - time.monotonic(), 0.0), told=wait):
        for _ in range(MAX_ROUNDS):
            git = _settled(gitdir, deadline, wait)
            contextdir.tidy(key)
            report = _read_modify_write(target, change, gitdir, git, deadline, wait, undone)
            if report is not None and undone and not report.written:
                # What git left already holds the change (it carried the write along, as `git
                # checkout -m` does): report the first write, which made it.
                first = undone[0]
                first.after = report.before
                return first
            if report is not None:
                return report
    raise LockTimeout(
        f"{key} was replaced {MAX_ROUNDS} times while this write was saving it (git, or a program that "
        "does not take the lock, is rewriting it). Nothing was saved; try again once it has finished."
    )


def _read_modify_write(
    target: MemoryFile,
    change: Callable[[Snapshot], Snapshot | None],
    gitdir: str | None,
    git: gitlock.State,
    deadline: float,
    wait: float,
    undone: list[WriteReport],
) -> WriteReport | None:
    """One round of update, begun when git was settled in state `git`: the report, or None when
    git or another program changed the file under it and the round must be done again."""
    key = target._key
    context = os.path.dirname(key)
    snap, seen = target._read()
    report = WriteReport(before=snap)
    new = change(snap)
    if new is None:
        return report
    read_as = {key: seen}  # every file replaced, with its fingerprint when it was read
    # Every file this write changes is staged (written and fsynced aside) before any is put in
    # place, so a write that fails on one (a full disk) changes none. The side files go first:
    # once the memory file is replaced, what they keep is nowhere else.
    staged: list[disk.Staged] = []
    # What goes to the quarantine file: the lines the read could not take as records, and those the
    # change sets aside in the snapshot it returns (scan --redact's older twin, fold's lines of a
    # stray's quarantine file), staged with the memory file so that either both land or neither.
    read_aside = set(snap.unreadable)
    extra = [line for line in new.unreadable if line not in read_aside]
    aside = snap.unreadable + extra
    try:
        if aside:
            quarantine = os.path.join(context, contextdir.QUARANTINE_FILE)
            read_as[quarantine] = disk.fingerprint(quarantine)  # taken before quarantine() reads it
            moved = contextdir.quarantine(context, aside)
            report.quarantined, report.quarantine_redactions = moved.lines, moved.redacted
            staged += [moved.staged] if moved.staged else []
            # (the lines left out are the last ones: the change's before the file's own)
            report.set_aside_left_out = min(moved.past_bound, len(extra))
            report.swallowed, report.past_bound = not moved.whole, moved.past_bound - report.set_aside_left_out
        if snap.conflict_regions or report.swallowed or report.past_bound or report.set_aside_left_out:
            # the file as it was, kept aside (the change's lines left out: its caller says where they are)
            staged.append(contextdir.conflicted_copy(key, snap.raw))
            report.conflict_copy = Path(staged[-1].path)
            if report.swallowed:  # said by every command that writes (log_memory's answer says it too)
                warn(
                    "a value among the lines set aside spanned lines (a pasted key); the "
                    "file as it was is kept as %s (git-ignored, on this machine only)",
                    report.conflict_copy.name,
                )
            if report.past_bound:
                warn("%s", past_bound_sentence(report.past_bound, report.conflict_copy.name, report.quarantined))
        stamp = disk.stamp()
        staged.append(disk.Staged(key, new.file_text().buffers(), mtime_ns=stamp))
        # The last look before the replace, as close to it as can be: git back at work may be
        # writing these files, and a file that is no longer the one read would be replaced by
        # what was made from its old bytes. Either way, do it again once git is done.
        if gitlock.state(gitdir) != git or any(disk.fingerprint(name) != was for name, was in read_as.items()):
            return None
        for file in staged:
            file.commit()
    finally:
        for file in staged:
            file.discard()  # those not committed: a failure left them aside
    written = staged[-1].stat
    # git may have begun in the instant between that look and the replace, and judged the file
    # unchanged just before it changed: then it replaces it with its own version. Wait for git to
    # be done, and do the write again if the file is no longer the one written.
    if gitlock.state(gitdir) != git:
        settled, _ = gitlock.wait_settled(gitdir, deadline)
        if not settled:
            raise LockTimeout(
                f"git began replacing files in this repository as the record was being saved and is still "
                f"at work after {wait:g} s ({gitlock.lock_path(gitdir)}), so the record may not survive what "
                "git does. Search for it once git has finished, and log it again if it is missing."
            )
    report.after = new
    if disk.fingerprint(key) != disk.fingerprint_of(written):
        undone.append(report)
        return None
    target._wrote(new, disk.stamped_fingerprint(written, stamp))
    return report


def _settled(gitdir: str | None, deadline: float, wait: float) -> gitlock.State:
    """Wait until git is not at work in the repository (gitlock.at_work); its state then."""
    settled, state = gitlock.wait_settled(gitdir, deadline)
    if not settled:
        raise LockTimeout(
            f"git is at work in this repository ({gitlock.lock_path(gitdir)}) and has not finished within the "
            f"{wait:g} s a write waits. Nothing was saved; try again once git has finished, or delete that "
            "file if no git process is running."
        )
    return state
