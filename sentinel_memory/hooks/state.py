"""What the hook remembers of one session between its runs: the records already shown, the files
already warned about, whether it asked the agent to log, and the work tree's and the memory file's
fingerprints at the session's first hook. Never the prompt.

One small JSON file per session and project in the user's cache folder (faststart/cache.py's
folder: $XDG_CACHE_HOME or ~/.cache, ~/Library/Caches, %LOCALAPPDATA%), never in the project:
`sentinel-memory/hooks/<hash of client, session and project>.json`. Read with a size bound and
never through a link (record/disk.py), written atomically under a lock, kept short (the newest
MAX_ITEMS ids and files, within MAX_BYTES), and removed a day after its last change (the folder is
swept at most once every SWEEP_EVERY).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field

from ..errors import LockTimeout, MemoryToolError
from ..faststart import cache
from ..record import disk

ENV = "SENTINEL_MEMORY_HOOK_STATE"  # another folder for the state (doctor's probe, tests)
FORMAT = 1
MAX_BYTES = 64 * 1024
MAX_ITEMS = 200  # ids and files kept per session
MAX_ITEM = 256  # characters of one id or file kept as it is; a longer one is kept as its digest
EXPIRES = 24 * 3600  # seconds after its last change
KEEP_INDEX = 7 * 24 * 3600  # a kept search index unchanged this long is removed (rebuilt when next needed)
LOCK_WAIT = 0.3  # seconds
SWEEP_EVERY = 3600  # seconds: the folder is swept of expired files at most this often
SWEPT = "swept"  # the file whose modification time says when it was last swept


class Unavailable(Exception):
    """No usable state folder or file: the hook answers nothing that needs it."""


@dataclass
class Session:
    tree: str | None = None  # the work tree's fingerprint at the session's first hook
    memory: list | None = None  # the memory file's (size, mtime_ns, inode) then, or None
    shown: list[str] = field(default_factory=list)  # record ids already given to the model
    warned: list[str] = field(default_factory=list)  # project paths whose first write was stopped
    asked: bool = False  # the agent was asked to log
    new: bool = False  # not on disk yet (not saved)

    def show(self, ids) -> None:
        self.shown = _newest(self.shown, [_key(i) for i in ids])

    def warn(self, paths) -> None:
        self.warned = _newest(self.warned, [_key(p) for p in paths])

    def was_shown(self, record_id: object) -> bool:
        return isinstance(record_id, str) and _key(record_id) in self.shown

    def was_warned(self, path: str) -> bool:
        return _key(path) in self.warned


def _key(text: str) -> str:
    """What is kept of an id or a file: itself, or the digest of one longer than MAX_ITEM (a
    cloned repository's record may have an id of any length)."""
    if len(text) <= MAX_ITEM:
        return text
    return "#" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _newest(kept: list[str], added) -> list[str]:
    """`kept` with `added` at its end, the oldest dropped past MAX_ITEMS."""
    merged = [k for k in kept if k not in added] + list(added)
    return merged[-MAX_ITEMS:]


def folder() -> str:
    override = os.environ.get(ENV, "")
    if override:
        if not os.path.isabs(override):
            raise Unavailable(f"{ENV} is not an absolute path")
        return override
    base = cache.folder()
    if base is None:
        raise Unavailable("no cache folder")
    return os.path.join(base, "hooks")


def path_for(client: str, session: str, project: str) -> str:
    where = folder()
    if cache.inside(where, project):
        raise Unavailable("the cache folder is inside the project")
    digest = hashlib.sha256(f"{client}\0{session}\0{project}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return os.path.join(where, f"{digest}.json")


def _decode(data: bytes) -> Session | None:
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):  # not ours (arrays nested thousands deep included)
        return None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        return None
    try:
        session = Session(
            tree=raw["tree"] if isinstance(raw.get("tree"), str) else None,
            memory=raw["memory"] if isinstance(raw.get("memory"), list) else None,
            shown=[i for i in raw.get("shown", []) if isinstance(i, str)][-MAX_ITEMS:],
            warned=[p for p in raw.get("warned", []) if isinstance(p, str)][-MAX_ITEMS:],
            asked=raw.get("asked") is True,
        )
    except (TypeError, ValueError):
        return None
    return session


def load(path: str) -> Session:
    """The session's state; a new one when there is none (or it expired: unchanged for EXPIRES, as
    the sweep removes it; or it is not ours)."""
    try:
        data, seen = disk.read_fingerprinted(path, MAX_BYTES)
    except (MemoryToolError, OSError) as exc:
        raise Unavailable(str(exc)) from None
    fresh = seen is not None and time.time() - seen[3] / 1e9 <= EXPIRES
    session = _decode(data) if data is not None and fresh else None
    return session if session is not None else Session(new=True)


def save(path: str, session: Session) -> None:
    """Write the state atomically (a private folder, mode 700); raises Unavailable when it cannot."""
    data = _fitted(session)
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        disk.check_directory(directory)
        if session.new and _sweep_due(directory):
            _sweep(directory)
        disk.atomic_write(path, data, durable=False)  # a cache: atomic, not fsynced
    except (MemoryToolError, OSError) as exc:
        raise Unavailable(str(exc)) from None


def _fitted(session: Session) -> bytes:
    """The state's bytes within MAX_BYTES (a file over it is not read back): the oldest ids and
    files are dropped, from the list that holds more, until it fits."""
    while True:
        body = {k: v for k, v in asdict(session).items() if k != "new"}
        # ASCII: escapes carry any string back as it was, a lone surrogate in an id included
        data = json.dumps({"format": FORMAT, **body}).encode("ascii")
        over = len(data) - MAX_BYTES
        items = max(session.shown, session.warned, key=lambda kept: sum(map(len, kept)))
        if over <= 0 or not items:
            return data
        while items and over > 0:
            over -= len(json.dumps(items.pop(0))) + 2


@contextmanager
def locked(path: str):
    """Hold the session's lock (its runs may overlap: a client runs hooks of parallel tool calls at
    once); raises Unavailable when it is not free soon."""
    with ExitStack() as stack:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            disk.check_directory(os.path.dirname(path))  # the lock file is not made through a link
            stack.enter_context(disk.locked(path, LOCK_WAIT))
        except LockTimeout:
            raise Unavailable(f"another run of the hook held this session's state for {LOCK_WAIT} s ({path})") from None
        except (MemoryToolError, OSError) as exc:
            raise Unavailable(str(exc)) from None
        yield


def _sweep_due(directory: str) -> bool:
    """Whether the folder was last swept SWEEP_EVERY ago or more (then it is marked swept now): a
    sweep looks at every file, and a new session should not pay for that each time."""
    marker = os.path.join(directory, SWEPT)
    try:
        if time.time() - os.stat(marker, follow_symlinks=False).st_mtime < SWEEP_EVERY:
            return False
    except OSError:
        pass
    try:
        disk.atomic_write(marker, b"", durable=False)
    except (MemoryToolError, OSError):
        pass  # swept anyway; the next new session tries again
    return True


def _sweep(directory: str) -> None:
    """Remove state files (and their locks, and temporary files a killed write left) unchanged for
    longer than EXPIRES, and copies of search indexes (hooks/matches.py) built longer than KEEP_INDEX ago.
    Every file is looked at: a sweep of the first few only would depend on the order the folder
    lists them in (tmpfs lists the newest first, and its old files would never go), and the
    folder holds about a day's sessions."""
    now = time.time()
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                name = entry.name
                if name.endswith((".pickle", ".pickle.lock")):
                    limit = KEEP_INDEX
                elif name.endswith((".json", ".json.lock", ".tmp")):
                    limit = EXPIRES
                else:
                    continue
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < now - limit:
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass
    except OSError:
        pass
