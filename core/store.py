"""The memory file on disk: reading, the lock, atomic replace, quarantine and conflict recovery.

Every line that touches the lock, a temporary file, fsync or os.replace lives in this module.
Reads take no lock (a replace is atomic, so a reader sees the old file or the new one) and
create nothing; writes hold the lock on "<file>.lock" (the one filelock's FileLock takes) around
read-modify-write only.
"""

from __future__ import annotations

import errno
import logging
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from filelock import FileLock, Timeout, lock_descriptor

from .errors import LockTimeout, StorageError
from .filetext import FileText
from .gcpause import paused
from .merge import Records, keep_newest, merge_three_way, merge_two_way
from .records import Entry, parse_line

log = logging.getLogger("sentinel_memory")

MEMORY_FILE = "memory_log.jsonl"
QUARANTINE_FILE = "memory_log.quarantine.jsonl"
LOCK_TIMEOUT = 10.0
_BOM = b"\xef\xbb\xbf"
_WINDOWS = sys.platform == "win32"
_MAX_ORIGIN = 512  # entries an edited snapshot keeps as its difference from its origin
_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")

GITIGNORE = """\
# Sentinel-Memory: the lock, temporary files and copies of conflicted files stay local.
*.lock
*.tmp
*.conflicted
"""
GITATTRIBUTES = """\
# Sentinel-Memory: LF endings, and the id-aware merge and readable diff where configured.
memory_log.jsonl text eol=lf merge=sentinel-memory diff=sentinel-memory
memory_log.quarantine.jsonl text eol=lf
"""


def memory_path(root: Path) -> Path:
    return Path(root) / ".context" / MEMORY_FILE


@dataclass
class Snapshot:
    """What a read found: the records, and what had to be set aside or resolved to get them."""

    records: Records = field(default_factory=dict)
    unreadable: list[bytes] = field(default_factory=list)
    conflict_regions: int = 0
    conflict_base: bool = False
    duplicates: int = 0
    _raw: bytes | None = field(default=None, repr=False)
    _counts: tuple[int, int] | None = field(default=None, repr=False)
    _topics: Counter | None = field(default=None, repr=False)
    # The file as text() gives it, once known: set by parse() when the file is exactly that
    # already (sorted, LF, nothing else on any line), by text(), and by edited(), which splits in
    # its few changed lines instead of sorting and joining every record again.
    _text: FileText | None = field(default=None, repr=False)
    # (a snapshot, the entries it had that this one has not, the entries this one has that it had
    # not) when this one was made from it by edits: a search index can then be derived instead of
    # built from every record. See edited_from and settle.
    _origin: tuple[Snapshot, tuple[Entry, ...], tuple[Entry, ...]] | None = field(default=None, repr=False)

    @property
    def raw(self) -> bytes:
        """The bytes this snapshot was read from, or written as."""
        return self._raw if self._raw is not None else self.text()

    def counts(self) -> tuple[int, int]:
        """(logs, principles), counted once per snapshot (snapshots are cached between calls)."""
        if self._counts is None:
            principles = sum(1 for e in self.records.values() if e.record.get("type") == "principle")
            self._counts = (len(self.records) - principles, principles)
        return self._counts

    def topic_counts(self) -> Counter:
        """Records per topic, counted once per snapshot. Do not mutate: copy it."""
        if self._topics is None:
            self._topics = Counter(e.record.get("topic") for e in self.records.values())
        return self._topics

    def text(self) -> bytes:
        """The file as it should be: one line per record, sorted by id, LF, final newline."""
        return self.file_text().bytes()

    def file_text(self) -> FileText:
        """text() as pieces, for a write to hand to os.writev without joining them first."""
        if self._text is None:
            ids = sorted(self.records)
            self._text = FileText(b"".join([self.records[rid].data for rid in ids]), ids)
        return self._text

    def edited(self, put: Iterable[Entry] = (), drop: Iterable[str] = ()) -> Snapshot:
        """A new snapshot without the records `drop` names and with `put` added or replacing the
        record of the same id. This one keeps its records and its text (written, it would give
        the same bytes as before)."""
        put = list(put)
        drop = [rid for rid in dict.fromkeys(drop) if rid in self.records and rid not in {e.id for e in put}]
        records = dict(self.records)
        gone = [records.pop(rid) for rid in drop]
        for entry in put:
            previous = records.get(entry.id)
            if previous is not None:
                gone.append(previous)
            records[entry.id] = entry
        logs, principles = self.counts()  # kept by difference: counting every record costs more
        for entry, sign in [(e, -1) for e in gone] + [(e, 1) for e in put]:
            if entry.record.get("type") == "principle":
                principles += sign
            else:
                logs += sign
        new = Snapshot(records=records, _counts=(logs, principles))
        if self._text is not None:
            cuts = {rid: None for rid in drop} | {e.id: e.data for e in put}
            new._text = self._text.edited(cuts, lambda rid: self.records[rid].data)
        base, removed, added = self._origin or (self, (), ())
        added, removed = dict.fromkeys(added), list(removed)  # (a dict: in order, O(1) to remove)
        for entry in gone:
            if entry in added:
                del added[entry]  # added since the origin, gone again
            else:
                removed.append(entry)
        added.update(dict.fromkeys(put))
        if len(removed) + len(added) <= _MAX_ORIGIN:
            new._origin = (base, tuple(removed), tuple(added))
        return new

    def edited_from(self) -> tuple[Snapshot, tuple[Entry, ...], tuple[Entry, ...]] | None:
        """(an earlier snapshot, the entries it has and this one not, and the other way round)
        when this one came from it through edited(); None when it was read from the file."""
        return self._origin

    def settle(self) -> None:
        """Make this snapshot the one later edits are told apart from (its search index exists)."""
        self._origin = None


# The last snapshot read or written per file, and the file's fingerprint when this process wrote
# it (else None). A read whose fingerprint or bytes match reuses the snapshot instead of parsing
# again (a long-running server reads the file on every call; parsing 50,000 records takes far
# longer than comparing their bytes).
_last: dict[str, tuple[Snapshot, tuple[int, int, int, int] | None]] = {}


def read(path: Path) -> Snapshot:
    """Read the memory file without locking or creating anything; a missing file is empty.
    The returned snapshot may be shared: never mutate it, copy its records instead."""
    key = os.fspath(path)
    cached = _last.get(key)
    if cached is not None and cached[1] is not None and _fingerprint(key) == cached[1]:
        return cached[0]  # still exactly the file this process wrote: no need to read it back
    try:
        with open(key, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return Snapshot()
    except OSError as exc:
        raise StorageError(f"Could not read {path}: {exc.strerror or exc}. Check its permissions.") from exc
    if cached is not None and cached[0].raw == data:
        if cached[0]._raw is None:
            cached[0]._raw = data  # joined once: later comparisons need not join the pieces again
        return cached[0]
    with paused():
        snap = parse(data)
    if snap.conflict_regions and not snap.conflict_base:
        _merge_from_index(Path(path), snap)
    _last[key] = (snap, None)
    return snap


# How a read knows, from one stat, that the file is still the one this process wrote. A write sets
# the new file's modification time to a stamp of its own: now, with the digits below the
# microsecond drawn at random (never 000). Any later change to the file (in place, or a new file
# renamed over it, by git, an editor, another process) gets the kernel's clock instead, which
# would have to hit that very nanosecond, with the same size and inode, to go unnoticed. Where
# the stamp cannot be set or does not stick (Windows, a filesystem with coarse times), there is no
# fingerprint and every read compares the file's bytes.
_STAMPS = os.utime in os.supports_fd


def _stamp() -> int:
    return time.time_ns() // 1000 * 1000 + 1 + int.from_bytes(os.urandom(2), "big") % 999


def _fingerprint(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _merge_from_index(path: Path, snap: Snapshot) -> None:
    """Two-way markers cannot tell a deletion from an addition, but while git is still merging
    the file its index holds the base, ours and theirs: merge those exactly instead."""
    from .gitdriver import index_stages  # only here: reads of clean files never run git

    stages = index_stages(path)
    if stages is None:
        return
    base, ours, theirs = (parse(blob) for blob in stages)
    if any(side.unreadable or side.conflict_regions for side in (base, ours, theirs)):
        return
    snap.records = merge_three_way(base.records, ours.records, theirs.records)
    snap.conflict_base = True


def parse(data: bytes) -> Snapshot:
    """Parse file bytes: tolerate BOM, CRLF and blank lines; set aside unreadable lines; resolve
    git conflict markers (exactly with a diff3 base section, else keeping both sides) and
    duplicate ids (the newer wins)."""
    lines = _lines(data)
    snap = Snapshot(_raw=data)
    if not any(line.startswith(_MARKERS) for line in lines):
        entries = _entries(lines, snap.unreadable)
        snap.records, snap.duplicates = keep_newest(entries)
        ids = [e.id for e in entries]
        # Already exactly what text() would write: keep these bytes as the text to splice into.
        if not snap.duplicates and not snap.unreadable and ids == sorted(ids) and \
                b"".join([e.data for e in entries]) == data:
            snap._text = FileText(data, ids)
        return snap

    common, ours, base, theirs = [], [], [], []
    state, regions, every_region_has_base, region_has_base = None, 0, True, False
    for line in lines:
        if state is None and line.startswith(b"<<<<<<<"):
            state, region_has_base, regions = "ours", False, regions + 1
        elif state == "ours" and line.startswith(b"|||||||"):
            state, region_has_base = "base", True
        elif state in ("ours", "base") and line.startswith(b"======="):
            state = "theirs"
        elif state == "theirs" and line.startswith(b">>>>>>>"):
            state, every_region_has_base = None, every_region_has_base and region_has_base
        else:
            {None: common, "ours": ours, "base": base, "theirs": theirs}[state].append(line)
    if state is not None:  # a region never closed: keep everything from every side
        every_region_has_base = False

    sides = {}
    seen_bad: list[bytes] = []
    for name, own in (("base", base), ("ours", ours), ("theirs", theirs)):
        found, dropped = keep_newest(_entries(common + own, seen_bad))
        sides[name] = found
        snap.duplicates += dropped
    snap.unreadable = list(dict.fromkeys(seen_bad))
    if every_region_has_base:
        snap.records = merge_three_way(sides["base"], sides["ours"], sides["theirs"])
    else:
        snap.records = merge_two_way(sides["ours"], sides["theirs"])
    snap.conflict_regions, snap.conflict_base = regions, every_region_has_base
    return snap


def _lines(data: bytes) -> list[bytes]:
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    out = []
    for line in data.split(b"\n"):
        line = line.rstrip(b"\r")
        if line.strip():
            out.append(line)
    return out


def _entries(lines: list[bytes], unreadable: list[bytes]) -> list[Entry]:
    entries = []
    for raw in lines:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            record = None
        else:
            record = parse_line(line)
        if record is None:
            unreadable.append(raw)
        else:
            entries.append(Entry(record, line, raw + b"\n"))
    if unreadable:
        log.warning("skipped %d unreadable line(s) in the memory file", len(unreadable))
    return entries


@dataclass
class WriteReport:
    """What a locked update did besides its own change."""

    written: bool = False
    quarantined: int = 0
    quarantine_redactions: int = 0
    conflict_regions: int = 0
    conflict_copy: Path | None = None
    duplicates: int = 0
    snapshot: Snapshot | None = None  # the file as written, when written


def update(
    path: Path,
    change: Callable[[Snapshot], Snapshot | None],
    timeout: float = LOCK_TIMEOUT,
) -> WriteReport:
    """Locked read-modify-write. change() gets the current snapshot and returns the new one (made
    with snap.edited(...) or Snapshot(records=...)), or None to leave the file untouched. Before
    the file is replaced, unreadable lines go to the quarantine file and a conflicted file is
    copied aside, so nothing is ever lost."""
    key = os.fspath(path)
    context = os.path.dirname(key)
    if not os.path.isdir(context):
        prepare_context_dir(Path(context))
    with _locked(key, timeout):
        _tidy(key)
        snap = read(key)
        new = change(snap)
        if new is None:
            return WriteReport()
        report = WriteReport(written=True, duplicates=snap.duplicates)
        if snap.unreadable:
            report.quarantined, report.quarantine_redactions = _quarantine(Path(context) / QUARANTINE_FILE,
                                                                           snap.unreadable)
        if snap.conflict_regions:
            report.conflict_regions = snap.conflict_regions
            report.conflict_copy = _free_name(Path(key), time.strftime("%Y%m%dT%H%M%S"), "conflicted")
            atomic_write(report.conflict_copy, snap.raw)
        stamp = _stamp()
        st = atomic_write(key, new.file_text().buffers(), mtime_ns=stamp)
        stamped = st.st_mtime_ns == stamp
        _last[key] = (new, (st.st_dev, st.st_ino, st.st_size, stamp) if stamped else None)
        report.snapshot = new
        return report


@contextmanager
def _locked(path: str, timeout: float):
    """Hold "<file>.lock" for the block, or raise LockTimeout after `timeout` seconds.

    It is the lock filelock's FileLock takes on that file, so the two exclude each other. On POSIX
    it is taken straight on the file's descriptor (filelock's lock_descriptor: one flock call;
    a FileLock object costs ~0.17 ms of bookkeeping per write, a fifth of a whole rewrite at 1,000
    records). Each hold opens its own descriptor, so threads exclude each other as processes do.
    Windows, and a filesystem without flock, keep FileLock: it handles lock files that a peer is
    deleting as it releases, and falls back to a lock file of its own where flock is missing."""
    name = f"{path}.lock"
    fd = None if _WINDOWS or name in _NO_FLOCK else _flocked(name, path, timeout)
    if fd is None:
        try:
            with FileLock(name, timeout=timeout):
                yield
            return
        except Timeout:
            raise _lock_timeout(path, timeout) from None
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases its flock


_NO_FLOCK: set[str] = set()  # lock files on filesystems that refused flock


def _flocked(name: str, path: str, timeout: float) -> int | None:
    """A descriptor of the lock file that holds its flock; None if the filesystem has no flock."""
    deadline, delay = time.monotonic() + timeout, 0.001
    while True:
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise StorageError(f"Could not open the lock file {name}: {exc.strerror or exc}. Nothing was saved; "
                               "check that the .context directory is writable.") from exc
        try:
            while not lock_descriptor(fd, blocking=False):
                if time.monotonic() >= deadline:
                    raise _lock_timeout(path, timeout)
                time.sleep(delay)
                delay = min(delay * 2, 0.025)
            if os.fstat(fd).st_nlink:  # else the file was deleted before we locked it: lock the new one
                return fd
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK):
                _NO_FLOCK.add(name)
                return None
            raise
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _lock_timeout(path: str, timeout: float) -> LockTimeout:
    return LockTimeout(
        f"The memory file is locked by another process (waited {timeout:g} s for {path}.lock). "
        "Nothing was saved; try again in a moment."
    )


def _free_name(path: Path, stamp: str, suffix: str) -> Path:
    """<name>.<stamp>.<suffix>, or <name>.<stamp>-2.<suffix> and so on when that is taken."""
    candidate, n = path.with_name(f"{path.name}.{stamp}.{suffix}"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{n}.{suffix}")
    return candidate


def _tidy(path: str) -> None:
    """With one listing of .context/: delete the temporary files a killed writer left behind, and
    put back a .gitignore or .gitattributes that went missing. Call it under the lock: only then
    can no other writer of this file have a temporary file open (they exist only under the lock)."""
    context, name = os.path.split(path)
    prefix = f".{name.split('.')[0]}."
    try:
        names = os.listdir(context)
    except OSError:
        names = []
    for name in names:
        if name.startswith(prefix) and name.endswith(".tmp"):
            with suppress(OSError):
                os.unlink(os.path.join(context, name))
    if ".gitignore" not in names or ".gitattributes" not in names:
        prepare_context_dir(Path(context))


def prepare_context_dir(context: Path) -> None:
    """Create .context/ with its .gitignore and .gitattributes on the first write."""
    try:
        if not os.path.isdir(context):
            context.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)):
            target = context / name
            if not os.path.exists(target):
                atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise StorageError(
            f"Could not create {context}: {exc.strerror or exc}. Nothing was saved; "
            "check that the project directory is writable."
        ) from exc


def _quarantine(target: Path, lines: list[bytes]) -> tuple[int, int]:
    """Append lines not already kept to the quarantine file (atomically), each with its credentials
    redacted: the file is tracked, and a broken line may hold a key. Returns (lines, values redacted)."""
    from .sanitizer import redact  # only when there is something to quarantine

    try:
        existing = target.read_bytes()
    except FileNotFoundError:
        existing = b""
    known = set(_lines(existing))
    redacted = 0
    fresh = []
    for line in dict.fromkeys(lines):
        # surrogateescape: bytes that are not UTF-8 go back out exactly as they came in.
        text, count = redact(line.decode("utf-8", "surrogateescape"))
        clean = text.encode("utf-8", "surrogateescape")
        if clean not in known:
            fresh.append(clean)
            known.add(clean)
            redacted += count
    if fresh:
        if existing and not existing.endswith(b"\n"):
            existing += b"\n"
        atomic_write(target, existing + b"".join(line + b"\n" for line in fresh))
    return len(lines), redacted


def atomic_write(path: str | os.PathLike, data: bytes | list[memoryview], mtime_ns: int | None = None) -> os.stat_result:
    """Write data (bytes, or buffers to write one after another) to path so that readers see the
    old bytes or the new ones, never a mix.

    A temporary file in the same directory is written, flushed and fsynced, then renamed over
    the target with os.replace, then the directory is fsynced so the rename survives a crash.
    On failure the temporary file is removed and the target is left as it was. With mtime_ns the
    file's modification time is set to it (where the platform allows). Returns the new file's stat.
    """
    directory, name = os.path.split(os.fspath(path))
    tmp = os.path.join(directory, f".{name}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
        try:
            _write_all(fd, [data] if isinstance(data, bytes) else data)
            if mtime_ns is not None and _STAMPS:
                with suppress(OSError):  # only an optimisation: never a reason to fail the write
                    os.utime(fd, ns=(mtime_ns, mtime_ns))
            os.fsync(fd)
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        _replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise StorageError(
                f"Could not write {path}: {exc.strerror or exc}. The file is unchanged and nothing "
                "was saved; free disk space or fix permissions, then try again."
            ) from exc
        raise
    _fsync_dir(directory or ".")
    return stat


def _write_all(fd: int, buffers: list) -> None:
    """Write the buffers in order. os.write and os.writev may write less than asked (a signal, a
    full pipe): go on from where they stopped."""
    views = [view for view in map(memoryview, buffers) if view.nbytes]
    while views:
        done = os.writev(fd, views[:_IOV_MAX]) if _WRITEV else os.write(fd, views[0])
        if done <= 0:
            raise OSError(errno.EIO, "the disk accepted no bytes")
        while done:
            if done >= views[0].nbytes:
                done -= views.pop(0).nbytes
            else:
                views[0], done = views[0][done:], 0


_WRITEV = hasattr(os, "writev")
_IOV_MAX = 1024  # POSIX's smallest allowed limit on buffers per writev is 16; Linux and macOS allow 1024


def _replace(src: str, dst: str) -> None:
    # On Windows os.replace fails while another process (an editor, an indexer, a reader)
    # has the target open; that passes quickly, so retry for up to about a second.
    delay, deadline = 0.01, time.monotonic() + 1.0
    while True:
        try:
            os.replace(src, dst)
            return
        except PermissionError:
            if not _WINDOWS or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def _fsync_dir(directory: str) -> None:
    if _WINDOWS:
        return  # directories cannot be opened for fsync on Windows; NTFS journals the rename
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
