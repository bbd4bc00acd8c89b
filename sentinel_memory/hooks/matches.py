"""The records a prompt matches strongly, fast enough for a hook that starts afresh on every prompt.

The MCP server keeps the search index of the memory in its process; a hook process would build it
on every run (at 10,000 records, seconds). So the hook keeps a copy of the index in the user's
cache folder, `sentinel-memory/hooks/index-<hash of the memory file's path>.pickle`, valid for
the memory file's exact bytes (a BLAKE2 digest) and this code (the sizes and times of the modules
that shape the index). A hook that finds no valid copy answers from a fresh index as before and
starts a detached, low-priority process (`hook --warm PATH`) that builds and stores the copy, so
the next prompt is fast; a session's first hook starts it too. Beside the index the copy holds
the records whose shown text the credential rules change, as shown (tools/blocks.py
without_credentials; usually none), so that a hook answering from it never loads those rules. A memory file under WARM_FROM bytes
is indexed in the hook itself (milliseconds) and no builder starts: a process and a file in the
user's cache would cost more than they save. Past HOOK_MAX the prompt hook looks nothing up and no
copy is kept; nor is one kept of a file with a conflict region, whose records hang on git's index
stages (read as search reads them). The copy is read only when it is a
regular file of this user in a folder only they can enter (pickle runs what its bytes say: the
same trust as the user's own shell files); anything odd and it is rebuilt.

strong() is tools/memory.py strong_matches over a given index (tests/test_hooks.py checks that
both choose the same records).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import MemoryToolError
from ..record import disk
from ..values import Value
from . import state

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from ..record.snapshot import Snapshot
    from ..search.index import SearchIndex
    from ..search.match import Match

FORMAT = b"sentinel-memory hook index 2\n"
MAX_BYTES = 512 << 20  # a copy bigger than this is not read
# Below this size (about 180 records of the usual length) the hook indexes the memory itself, a few
# milliseconds more than reading a kept copy, and no builder runs (docs/performance.md, "The hook's
# kept index").
WARM_FROM = 64 << 10
# Above this size (about 20,000 records of the usual length) the prompt hook looks nothing up: its
# index, built or read back (one call that holds the interpreter, so the time bound cannot end it),
# takes longer than the hook may, and its copy would be hundreds of MB in the user's cache (a
# 30 MB memory: a 174 MB copy, 2.5 s to read back). Such a memory wants compact_memory.
HOOK_MAX = 8 << 20
# The modules whose code shapes the copy (a folder: each of its modules): a change to any gives the
# copy another stamp.
SHAPED_BY = (
    "search/index.py",
    "search/match.py",
    "search/terms.py",
    "search/ranked.py",
    "record/records.py",
    "record/snapshot.py",
    "record/utf16.py",
    "tools/blocks.py",
    "redaction/",
    "hooks/matches.py",
    "values.py",
)
HERE = Path(__file__).resolve().parents[1]


class Copy(Value):
    """What the kept copy holds: the index, and by id the records as the hooks show them where that
    differs from the record (a value that looks like a credential, redacted)."""

    __slots__ = ("index", "redacted")

    def __init__(self, index: SearchIndex, redacted: dict[str, dict]) -> None:
        self.index = index
        self.redacted = redacted

    def shown(self, record: dict) -> dict:
        """The record as a hook shows it (tools/blocks.py without_credentials applied)."""
        return self.redacted.get(record.get("id"), record)  # type: ignore[arg-type]


def _code() -> bytes:
    parts = []
    for name in SHAPED_BY:
        try:
            names = (
                sorted(f"{name}{n}" for n in os.listdir(HERE / name) if n.endswith(".py"))
                if name.endswith("/")
                else [name]
            )
        except OSError:
            names = [name]
        for module in names:
            try:
                st = os.stat(HERE / module)
                parts.append(f"{module}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                parts.append(f"{module}:?")
    from .. import __version__  # beside the files' sizes and times, which an install may give every file alike

    return "|".join(parts + [sys.version, __version__]).encode()


def where(memory: Path) -> str:
    return os.path.join(state.folder(), f"index-{state.digest(os.path.realpath(memory))}.pickle")


def _stamp(data: bytes) -> bytes:
    return state.digest(_code() + b"\0" + data).encode() + b"\n"


def read(memory: Path) -> Snapshot:
    """The memory file's records as the tools read them: while git merges it and its conflict has
    two sides only, the records git's index stages give (a record one side deleted stays deleted;
    docs/contract.md §5.5). git/drivers.py is loaded only for such a file."""
    from ..record import store

    return store.MemoryFile(memory, _index_stages).read()


def _index_stages(path: Path) -> tuple[bytes, bytes, bytes] | None:
    """git's index stages of the file; raises TimeoutError when the hook's time bound cut git short
    (the records would be both sides' whole, a lesson one side deleted among them: nothing is said)."""
    import time

    from ..git import command
    from ..git.drivers import index_stages

    stages = index_stages(path)
    deadline = command.ends_by()
    if stages is None and deadline is not None and time.monotonic() >= deadline:
        raise TimeoutError("git's index stages of the conflicted memory file were not read in time")
    return stages


def _memory_bytes(memory: Path) -> bytes | None:
    """The memory file's bytes as the store reads them: never through a .context/ that is a link
    (a project's .context/ linked to another project's would get that project's kept index)."""
    disk.check_directory(os.path.dirname(os.fspath(memory)))
    return disk.read_regular(os.fspath(memory))


def kept(memory: Path) -> Copy | None:
    """The kept copy for the memory file as it is now, or None (no valid copy; none is kept for a
    file with conflict markers)."""
    try:
        data = _memory_bytes(memory)
        if data is None or _conflicted(data):
            return None
        path = where(memory)
        head = FORMAT + _stamp(data)
        if not state.owned(path) or not _starts_with(path, head):  # a copy for other bytes is not read whole
            return None
        blob = disk.read_regular(path, MAX_BYTES)
    except (MemoryToolError, OSError, state.Unavailable):
        return None
    if blob is None or not blob.startswith(head):
        return None
    import pickle

    from ..search.index import SearchIndex

    try:
        found = pickle.loads(blob[len(head) :])
    except Exception:  # a copy from another version, cut short, or not ours: rebuilt
        return None
    return found if isinstance(found, Copy) and isinstance(found.index, SearchIndex) else None


def fresh(memory: Path) -> bool:
    """Whether the kept copy is the one for the memory file as it is now (its head only is read)."""
    try:
        data = _memory_bytes(memory)
        path = where(memory)
    except (MemoryToolError, OSError, state.Unavailable):
        return True  # nothing a builder could do better
    if data is None or _conflicted(data):
        return True
    return _starts_with(path, FORMAT + _stamp(data))


def _conflicted(data: bytes) -> bool:
    """Whether the memory file's bytes hold a conflict region. Its records then depend on git's
    index stages as much as on its bytes (`git checkout -m` brings the stages back, `git add` takes
    them away, the bytes unchanged), so no copy is kept or read for it: the hook indexes the file
    itself, reading the stages (read()), until the merge is over."""
    return data.lstrip(b"\xef\xbb\xbf").startswith(b"<<<<<<<") or b"\n<<<<<<<" in data


def _starts_with(path: str, head: bytes) -> bool:
    """Whether the file at `path` starts with `head` (only that much is read; a link is not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        return os.read(fd, len(head)) == head
    except OSError:
        return False
    finally:
        os.close(fd)


def build(memory: Path) -> None:
    """Build the index of the memory file and keep it (what `hook --warm` runs)."""
    from ..search import index

    if too_big(memory):
        return
    path = where(memory)
    state.made(os.path.dirname(path))  # not through a link (kept() reads only a private copy)
    with disk.locked(path, 0):  # one builder at a time; the others leave at once
        data = _memory_bytes(memory)
        if data is None or _conflicted(data):
            return
        head = FORMAT + _stamp(data)
        try:
            current = disk.read_regular(path, MAX_BYTES)
        except MemoryToolError:
            current = None
        if current is not None and current.startswith(head):
            return
        snap = read(memory)
        if _memory_bytes(memory) != data:
            return  # changed while it was read: the next hook starts another builder
        built = index.index_of(snap)
        import pickle

        copy = Copy(built, _redacted(built))
        disk.atomic_write(
            path, head + pickle.dumps(copy, protocol=pickle.HIGHEST_PROTOCOL), durable=False, private=True
        )


def oldest_citing(memory: Path) -> str | None:
    """The oldest recency of the memory's records that cite files (hooks/renames.py's `since`):
    from the kept copy when it is valid (no second parse of a large memory), else from the file
    (while git merges it, both sides' records: no git runs before the renames' lock is taken)."""
    from ..git.staleness import oldest_citing as oldest

    copy = kept(memory)
    if copy is not None:
        return oldest(e.record for e in copy.index.entries)
    from ..record import store

    return oldest(e.record for e in store.read(memory).records.values())


def _redacted(built: SearchIndex) -> dict[str, dict]:
    """By id, the records whose shown form the credential rules change, as shown."""
    from ..tools.blocks import without_credentials

    out = {}
    for entry in built.entries:
        shown = without_credentials(entry.record)
        if shown is not entry.record:
            out[entry.record["id"]] = shown
    return out


def worth_keeping(memory: Path) -> bool:
    """Whether the memory file is large enough that a kept copy of its index pays (WARM_FROM), and
    small enough for the prompt hook (HOOK_MAX)."""
    try:
        return WARM_FROM <= os.stat(memory).st_size <= HOOK_MAX
    except OSError:
        return False


def too_big(memory: Path) -> bool:
    """Whether the memory file is past what the prompt hook looks up in time (HOOK_MAX)."""
    try:
        return os.stat(memory).st_size > HOOK_MAX
    except OSError:
        return False


def warm_later(memory: Path) -> bool:
    """Start the builder, detached and at low priority (it outlives this hook's time bound), when
    the memory file is worth it: whether one was started."""
    from . import background

    return worth_keeping(memory) and background.start(memory)


def strong(memory: Path, query: str, files: list[str], limit: int, found: SearchIndex) -> list[Match]:
    """tools/memory.py strong_matches, over the index `found` of the memory file."""
    from ..git import staleness
    from ..record import citations
    from ..search import index, strength
    from . import renames

    root = Path(memory).parent.parent
    asked = citations.asked(root, list(files))
    query_terms = index.terms(query or "")
    if not found.entries or not (query_terms or asked) or limit < 1:
        return []
    former = renames.former_names(root, asked, staleness.oldest_citing(e.record for e in found.entries))
    return strength.strongest(found, query, asked, former, limit)
