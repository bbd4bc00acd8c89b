"""The names git says the project's files had, for the hooks (a prompt or a write that names a file
also counts the records citing a name it was renamed from: docs/contract.md §4.2). They come from
the renames in the history since the oldest record that cites a file, as the stale marks read it
(git/history.py), which is one `git log` over that history: tens of milliseconds on a project of a
few thousand commits, seconds on a large one, where the hook's time bound (about 1 s) would end it
before it answered. So the renames are kept per HEAD in the user's cache folder (hooks/state.py's),
and a prompt or a write runs that `git log` once per HEAD, not once per event. Nothing is kept
when git fails; a kept file is read only if it and its folder are this user's alone."""

from __future__ import annotations

import hashlib
import json
import os

from ..errors import MemoryToolError
from ..git import history, staleness
from ..record import disk
from . import state

FORMAT = 1
MAX_BYTES = 4 << 20  # a longer list of renames is neither kept nor read: the next event reads git again


def former_names(root: os.PathLike | str, paths: list[str], oldest: str | None) -> list[str]:
    """The paths (relative to the project root) that commits since `oldest` (the oldest recency of
    the records that cite files, staleness.oldest_citing) renamed, directly or through other
    names, to one of `paths`: git/staleness.py Checker.former_names, with the renames kept."""
    since = staleness.stamp_seconds(oldest) if oldest else None
    if since is None or not paths:
        return []
    git = history.KeptHistory(root)
    repo = git.repo()
    sha = git.head(repo) if repo is not None else None
    if repo is None or sha is None:
        return []
    key = f"{FORMAT}\0{repo.top}\0{repo.common}\0{sha}\0{since}\0{history.shallow_stamp(repo)}"
    where = _where(key)
    pairs = _read(where, key)
    if pairs is None:
        read = git.history(repo, sha, since)
        if read.failed is not None:
            return []
        pairs = [(old, e[3]) for old, events in read.events.items() for e in events if e[2] == "R" and e[3]]
        _keep(where, key, pairs)
    renames = history.History(sha, since, {}, False, since)
    for old, new in pairs:
        renames.events.setdefault(old, []).append((since, "", "R", new))
    return staleness.Checker(repo, renames).former_names(paths)


def _where(key: str) -> str | None:
    try:
        folder = state.folder()
    except state.Unavailable:
        return None
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    return os.path.join(folder, f"renames-{digest}.cache")


def _read(where: str | None, key: str) -> list[tuple[str, str]] | None:
    """The renames kept at `where` for `key`, or None (none kept, not ours alone, or unreadable)."""
    if where is None or not state.owned(where):
        return None
    try:
        data = disk.read_regular(where, MAX_BYTES)
        kept = json.loads(data) if data is not None else None
    except (MemoryToolError, OSError, ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or not isinstance(kept.get("renames"), list):
        return None
    pairs = kept["renames"]
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p) for p in pairs):
        return None
    return [(old, new) for old, new in pairs]


def _keep(where: str | None, key: str, pairs: list[tuple[str, str]]) -> None:
    """Keep the renames for `key` (atomically; nothing when too long or the folder is not usable)."""
    if where is None:
        return
    data = json.dumps({"key": key, "renames": pairs}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        return
    try:
        state.made(os.path.dirname(where))
        disk.atomic_write(where, data, durable=False)
    except (MemoryToolError, OSError, state.Unavailable):
        pass
