"""The names git says the project's files had, for the hooks (a prompt or a write that names a file
also counts the records citing a name it was renamed from: docs/contract.md §4.2). They come from
the renames in the history since the oldest record that cites a file, as the stale marks read it
(git/history.py), which is one `git log` over that history: tens of milliseconds on a project of a
few thousand commits, seconds on a large one. So the renames are kept per HEAD in the user's cache
folder (hooks/state.py's), and one `git log` serves every event until HEAD moves. A hook reads it
within its own time bound (about 1 s); when git cannot answer in that time, the hook goes on
without the renames and starts the detached builder (hooks/background.py), which reads them with
git's own bound and keeps them for the events after it. One reader of a repository's history at a
time: a hook that finds another reading goes on without them. When the builder cannot read them
either (git slower than its own bound, or more renames than MAX_BYTES holds), that is kept instead,
and no event tries again for RETRY seconds. A kept file is read only if it and its folder are this
user's alone."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from ..errors import MemoryToolError
from ..git import command, history, staleness
from ..record import disk
from . import state

FORMAT = 1
MAX_BYTES = 4 << 20  # a longer list of renames is not kept (nor read): as if git had failed
RETRY = 600  # seconds after the builder could not read or keep a HEAD's renames before an event tries again
# Of the time a hook has left, the most its `git log` may take: the rest is for the lessons it can
# give without the renames (contract §7.1).
LOG_SHARE = 0.5
FAILED: list = []  # _read's answer for renames the builder could not read or keep (RETRY)


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
    kept; None when there is no history to read, another process is reading this repository's,
    or git failed (in a hook: then the builder is started, to read it past the hook's bound; the
    builder's own failure is kept too, and no event tries again for RETRY seconds)."""
    git = history.KeptHistory(root)
    repo = git.repo()
    sha = git.head(repo) if repo is not None else None
    if repo is None or sha is None:
        return None
    try:
        folder = state.folder()
    except state.Unavailable:  # no cache folder: read, not kept
        pairs = _read_git(git, repo, sha, since, LOG_SHARE if in_a_hook else None)
        return None if pairs is None else (repo, sha, pairs)
    place = f"{FORMAT}\0{repo.top}\0{repo.common}"
    key = f"{place}\0{sha}\0{since}\0{history.shallow_stamp(repo)}"
    where = os.path.join(folder, f"renames-{state.digest(key)}.cache")
    pairs = _read(where, key)
    if pairs is None:
        try:
            state.made(folder)
            # One reader of the repository's history at a time, whatever its HEAD: a hook that finds
            # another reading (a builder for a HEAD a commit has since moved) goes on without it.
            with disk.locked(os.path.join(folder, f"renames-{state.digest(place)}.cache"), 0):
                pairs = _read(where, key)  # kept while this one waited for the lock
                if pairs is None:
                    pairs = _read_git(git, repo, sha, since, LOG_SHARE if in_a_hook else None)
                    if pairs is not None or not in_a_hook:  # a hook cut short by its bound keeps nothing
                        _keep(where, key, pairs)
        except (MemoryToolError, OSError, state.Unavailable):  # another reads it (LockTimeout), or no usable folder
            return None
        if pairs is None and in_a_hook:
            from ..record.store import memory_path
            from . import background

            background.start(memory_path(Path(root)), renames_only=True)
    return None if pairs is None or pairs is FAILED else (repo, sha, pairs)


def _read_git(
    git: history.KeptHistory, repo: history.Repo, sha: str, since: int, share: float | None = None
) -> list | None:
    """The renames git reads; None when it fails or, with `share`, does not end within that share
    of the time left before the cap git/command.py end_by set."""
    cap = command.ends_by()
    if share is not None and cap is not None:
        command.end_by(min(cap, time.monotonic() + share * max(0.0, cap - time.monotonic())))
    try:
        read = git.history(repo, sha, since)
    finally:
        command.end_by(cap)
    if read.failed is not None:
        return None
    return [(old, e[3]) for old, events in read.events.items() for e in events if e[2] == "R" and e[3]]


def _read(where: str, key: str) -> list | None:
    """The renames kept at `where` for `key`; FAILED when the builder could not read or keep them
    less than RETRY seconds ago; None (none kept, not ours alone, or unreadable)."""
    if not state.owned(where):
        return None
    try:
        data = disk.read_regular(where, MAX_BYTES)
        kept = json.loads(data) if data is not None else None
    except (MemoryToolError, OSError, ValueError, RecursionError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key:
        return None
    failed = kept.get("failed")
    if isinstance(failed, (int, float)) and not isinstance(failed, bool):
        return FAILED if 0 <= time.time() - failed < RETRY else None
    pairs = kept.get("renames")
    if not isinstance(pairs, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p) for p in pairs
    ):
        return None
    return [(old, new) for old, new in pairs]


def _keep(where: str, key: str, pairs: list[tuple[str, str]] | None) -> None:
    """Keep the renames for `key` (atomically, mode 600), or, for None or a list over MAX_BYTES,
    the time they could not be kept; nothing when the file cannot be written."""
    data = json.dumps({"key": key, "renames": pairs}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if pairs is None or len(data) > MAX_BYTES:
        data = json.dumps({"key": key, "failed": time.time()}).encode("utf-8", "surrogatepass")
    try:
        disk.atomic_write(where, data, durable=False, private=True)
    except (MemoryToolError, OSError):
        pass
