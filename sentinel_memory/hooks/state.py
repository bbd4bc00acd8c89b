"""What the hook remembers of one session between its runs: the records already shown, the files
already warned about, whether it asked the agent to log, and the work tree's and the memory file's
fingerprints at the session's first hook. Never the prompt.

One small JSON file per session and project in the user's cache folder (faststart/cache.py's
folder: $XDG_CACHE_HOME or ~/.cache, ~/Library/Caches, %LOCALAPPDATA%), never in the project:
`sentinel-memory/hooks/<hash of client, session and project>.json`. Read with a size bound and
never through a link (record/disk.py), written atomically under a lock, kept short (the newest
MAX_ITEMS ids and files, within MAX_BYTES), and removed a day after its last change (the folder is
swept at most once every SWEEP_EVERY, a bounded part of it at a time: _sweep).
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from contextlib import ExitStack, contextmanager

from ..errors import LockTimeout, MemoryToolError
from ..faststart import cache
from ..record import disk
from ..values import Value

try:  # hashlib's own BLAKE2 (hashlib.blake2b is this), without hashlib, which loads OpenSSL first:
    from _blake2 import blake2b  # 4-5 ms of a hook's start (docs/performance.md)
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

ENV = "SENTINEL_MEMORY_HOOK_STATE"  # another folder for the state (doctor's probe, tests)
FORMAT = 1
MAX_BYTES = 64 * 1024
MAX_ITEMS = 200  # ids and files kept per session
MAX_ITEM = 256  # characters of one id or file kept as it is; a longer one is kept as its digest
EXPIRES = 24 * 3600  # seconds after its last change
KEEP_INDEX = 7 * 24 * 3600  # a kept search index unchanged this long is removed (rebuilt when next needed)
LOCK_WAIT = 0.3  # seconds
SWEEP_EVERY = 3600  # seconds: the folder is swept of expired files at most this often
SWEPT = "swept"  # the file whose modification time says when it was last swept (its text: where to go on)
SWEEP_LOOK = 2000  # entries of the folder a sweep looks at, at most (a new session's first save waits for it)
SWEEP_REACH = 50_000  # entries of the folder's listing a sweep goes past, at most (skipped ones included)
SWEEP_TIME = 0.2  # seconds: a sweep stops sooner on a slow disk or a busy machine (the hook's bound is about 1 s)

# The names the hook itself gives files in the folder, and nothing else is ever removed there (the
# folder may be one ENV names, holding other programs' files): a session's state (path_for) and its
# lock (disk.locked: "<path>.lock"); a kept search index (hooks/matches.py where) and its lock; the
# renames of a HEAD (hooks/renames.py); the temporary file of an atomic write of any of these or of
# SWEPT (disk.Staged: ".<name>.<8 hex>.tmp").
_DIGEST = "[0-9a-f]{40}"
_TEMPORARY = rf"\.(?:{_DIGEST}\.json|index-{_DIGEST}\.pickle|renames-{_DIGEST}\.cache|{SWEPT})\.[0-9a-f]{{8}}\.tmp"
# removed EXPIRES after their last change
_STATE_NAME = re.compile(rf"(?:renames-{_DIGEST}\.cache|{_DIGEST}\.json)(?:\.lock)?|{_TEMPORARY}")
_INDEX_NAME = re.compile(rf"index-{_DIGEST}\.pickle(?:\.lock)?")  # removed KEEP_INDEX after


class Unavailable(Exception):
    """No usable state folder or file: the hook answers nothing that needs it."""


class Session(Value):
    __slots__ = ("tree", "memory", "shown", "warned", "asked", "new", "checked")
    SAVED = ("tree", "memory", "shown", "warned", "asked")  # what the file keeps of it

    def __init__(
        self,
        tree: str | None = None,
        memory: list | None = None,
        shown: list[str] | None = None,
        warned: list[str] | None = None,
        asked: bool = False,
        new: bool = False,
    ) -> None:
        self.tree = tree  # the work tree's fingerprint at the session's first hook
        self.memory = memory  # the memory file's (size, mtime_ns, inode) then, or None
        self.shown: list[str] = [] if shown is None else shown  # record ids already given to the model
        self.warned: list[str] = [] if warned is None else warned  # project paths whose first write was stopped
        self.asked = asked  # the agent was asked to log
        self.new = new  # not on disk yet (not saved)
        self.checked = False  # this run looked whether the folder is due a sweep (not saved)

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
    return "#" + digest(text, 32)


def digest(text: str | bytes, size: int = 20) -> str:
    """`size` bytes of the BLAKE2b of `text` (its UTF-8, a lone surrogate included), in hex: the
    names the hooks give their files, and the fingerprints they keep."""
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return blake2b(data, digest_size=size).hexdigest()


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
    return os.path.join(where, digest("\0".join((client, session, project))) + ".json")


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
        made(directory)
        if session.new and not session.checked:
            session.checked = True  # once a run: not again at its save after the answer is claimed
            _sweep_if_due(directory)
        disk.atomic_write(path, data, durable=False, private=True)  # a cache: atomic, not fsynced
    except (MemoryToolError, OSError) as exc:
        raise Unavailable(str(exc)) from None


def made(directory: str) -> None:
    """Make the folder (mode 700, with the missing ones above it) for a file of ours; refuse one
    that is a link (disk.check_directory)."""
    cache.private_folders(directory)
    disk.check_directory(directory)


def _fitted(session: Session) -> bytes:
    """The state's bytes within MAX_BYTES (a file over it is not read back): the oldest ids and
    files are dropped, from the list that holds more, until it fits."""
    while True:
        body = {name: getattr(session, name) for name in Session.SAVED}
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
            cache.private_folders(os.path.dirname(path))
            disk.check_directory(os.path.dirname(path))  # the lock file is not made through a link
            stack.enter_context(disk.locked(path, LOCK_WAIT))
        except LockTimeout:
            raise Unavailable(f"another run of the hook held this session's state for {LOCK_WAIT} s ({path})") from None
        except (MemoryToolError, OSError) as exc:
            raise Unavailable(str(exc)) from None
        yield


def _sweep_if_due(directory: str) -> None:
    """Sweep the folder if it is due (_sweep_from), and only one of this user that no one else can
    write; then say in SWEPT when it was swept and where the next sweep goes on."""
    start = _sweep_from(directory)
    if start is None or not _private(directory):
        return
    going_on = _sweep(directory, start)
    try:
        disk.atomic_write(
            os.path.join(directory, SWEPT), b"" if going_on is None else b"%d" % going_on, durable=False, private=True
        )
    except (MemoryToolError, OSError):
        pass  # the next new session sweeps again


def _sweep_from(directory: str) -> int | None:
    """Where in the folder's listing the sweep due now starts, or None when none is due. A pass
    over the folder that stopped part way (SWEPT holds where) goes on at the next new session; one
    that went to the end waits SWEEP_EVERY (SWEPT's modification time says when it ended), as a new
    session should not pay for a pass each time."""
    try:
        data, seen = disk.read_fingerprinted(os.path.join(directory, SWEPT), 32)
    except (MemoryToolError, OSError):
        return 0
    if data is None or seen is None:
        return 0
    if data.isdigit():
        return min(int(data), SWEEP_REACH)
    return 0 if time.time() - seen[3] / 1e9 >= SWEEP_EVERY else None


def owned(path: str) -> bool:
    """The file and its folder are this user's and no one else can write them (where the platform
    has owners; elsewhere: a regular file, not a link)."""
    if not hasattr(os, "getuid"):
        return os.path.isfile(path) and not os.path.islink(path)
    try:
        folder, st = os.stat(os.path.dirname(path)), os.lstat(path)
    except OSError:
        return False
    uid = os.getuid()
    return folder.st_uid == uid and not folder.st_mode & 0o022 and st.st_uid == uid and not st.st_mode & 0o022


def _private(directory: str) -> bool:
    """The folder is this user's and no one else can write in it (where the platform has owners)."""
    if not hasattr(os, "getuid"):
        return True
    try:
        st = os.lstat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _limit(name: str) -> int | None:
    """How long after its last change a file of this name is removed; None: not a name of ours."""
    if _STATE_NAME.fullmatch(name):
        return EXPIRES
    if _INDEX_NAME.fullmatch(name):
        return KEEP_INDEX
    return None


def _sweep(directory: str, start: int = 0) -> int | None:
    """Remove state files (and their locks, and temporary files a killed write left) unchanged for
    longer than EXPIRES, and copies of search indexes (hooks/matches.py) built longer than
    KEEP_INDEX ago: files of the hook's own names only (_limit), never another program's.

    One sweep looks at SWEEP_LOOK entries at most, from the `start`th of the folder's listing on,
    and stops sooner past SWEEP_TIME: a new session's first save waits for it, within the hook's
    time bound. It returns where the next sweep goes on (the entries it removed no longer come
    before that), or None when it reached the end of the listing (the next pass starts from the
    first). So successive sweeps go over every file whatever order the folder lists them in: a
    sweep of the first few only would never reach the oldest files on tmpfs, which lists the newest
    first. A folder of more than SWEEP_REACH entries has only its first SWEEP_REACH looked at."""
    now, ends = time.time(), time.monotonic() + SWEEP_TIME
    position = looked = removed = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if position >= SWEEP_REACH:
                    return None
                position += 1
                if position <= start:
                    if position % 64 == 0 and time.monotonic() > ends:
                        return None  # too slow to reach where the last sweep stopped: start over
                    continue
                looked += 1
                limit = _limit(entry.name)
                try:
                    if (
                        limit is not None
                        and entry.is_file(follow_symlinks=False)
                        and entry.stat(follow_symlinks=False).st_mtime < now - limit
                    ):
                        os.unlink(entry.path)
                        removed += 1
                except OSError:
                    pass  # gone already, or not ours to remove
                if looked >= SWEEP_LOOK or time.monotonic() > ends:
                    return position - removed if position < SWEEP_REACH else None
    except OSError:
        pass
    return None
