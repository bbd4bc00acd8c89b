"""The names git says the project's files had, for the hooks (a prompt or a write that names a file
also counts the records citing a name it was renamed from: docs/contract.md §4.2). They come from
the renames in the history since the oldest record that cites a file, as the stale marks read it
(git/history.py), which is one `git log` over that history: tens of milliseconds on a project of a
few thousand commits, seconds on a large one. So the renames are kept per HEAD in the user's cache
folder (hooks/state.py's), and one `git log` serves every event until HEAD moves. A hook reads it
within its own time bound (about 1 s); when git cannot answer in that time, the hook goes on
without the renames and starts the detached builder (hooks/background.py), which reads them with
git's own bound and keeps them for the events after it. One reader at a time: a hook that finds
another reading goes on without them. Nothing is kept when git fails; a kept file is read only if
it and its folder are this user's alone."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

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
    found = _renames(root, since, in_a_hook=True)
    if found is None:
        return []
    repo, sha, pairs = found
    renames = history.History(sha, since, {}, False, since)
    for old, new in pairs:
        renames.events.setdefault(old, []).append((since, "", "R", new))
    return staleness.Checker(repo, renames).former_names(paths)


def keep(root: os.PathLike | str, oldest: str | None) -> None:
    """Read and keep the renames at HEAD since `oldest` (former_names'), if they are not kept yet:
    what the detached builder does, within git's own time bound (git/history.py GIT_TIMEOUT)
    rather than a hook's."""
    since = staleness.stamp_seconds(oldest) if oldest else None
    if since is not None:
        _renames(root, since, in_a_hook=False)


def _renames(root: os.PathLike | str, since: int, in_a_hook: bool) -> tuple[history.Repo, str, list] | None:
    """(the repository, HEAD, the (old, new) renames since `since`), kept or read from git and
    kept; None when there is no history to read, another process is reading it, or git failed (in
    a hook: then the builder is started, to read it past the hook's bound)."""
    git = history.KeptHistory(root)
    repo = git.repo()
    sha = git.head(repo) if repo is not None else None
    if repo is None or sha is None:
        return None
    key = f"{FORMAT}\0{repo.top}\0{repo.common}\0{sha}\0{since}\0{history.shallow_stamp(repo)}"
    where = _where(key)
    pairs = _read(where, key)
    if pairs is not None:
        return repo, sha, pairs
    try:
        if where is None:  # no cache folder: read, not kept
            pairs = _read_git(git, repo, sha, since)
        else:
            state.made(os.path.dirname(where))
            with disk.locked(where, 0):  # one reader of this history at a time
                pairs = _read(where, key)  # kept while this one waited for the lock
                if pairs is None:
                    pairs = _read_git(git, repo, sha, since)
                    if pairs is not None:
                        _keep(where, key, pairs)
    except (MemoryToolError, OSError, state.Unavailable):  # another reads it (LockTimeout), or no usable folder
        return None
    if pairs is None and in_a_hook and where is not None:
        from ..record.store import memory_path
        from . import background

        background.start(memory_path(Path(root)))
    return None if pairs is None else (repo, sha, pairs)


def _read_git(git: history.KeptHistory, repo: history.Repo, sha: str, since: int) -> list | None:
    read = git.history(repo, sha, since)
    if read.failed is not None:
        return None
    return [(old, e[3]) for old, events in read.events.items() for e in events if e[2] == "R" and e[3]]


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
    """Keep the renames for `key` (atomically, mode 600; nothing when too long or not writable)."""
    if where is None:
        return
    data = json.dumps({"key": key, "renames": pairs}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        return
    try:
        disk.atomic_write(where, data, durable=False, private=True)
    except (MemoryToolError, OSError):
        pass
