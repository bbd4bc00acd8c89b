"""Whether git is at work in the repository that holds the memory file, seen without running git
(docs/contract.md §5.8).

git replaces a tracked file by unlinking it, creating it again and writing into it, all while it
holds `<git dir>/index.lock` (checkout, merge, pull, rebase, stash, reset --hard). A write that read
the file in that gap would take a missing or half-written file for the whole memory, and one that
replaced the file just before git rewrote it would be undone by git. store.update waits while git
is at work: while it holds the index lock, and until its directory has been still for SETTLE
seconds (the gaps between the steps of a command made of several git processes).

Nothing here reads more than a `.git` file of a few hundred bytes (through disk.read_regular, which
opens no link, FIFO or device), follows no link to read it, and starts no process.
"""

from __future__ import annotations

import os
import stat as stat_
import time

from ..errors import StorageError
from .disk import read_regular

INDEX_LOCK = "index.lock"
# How far up from the memory file the walk looks for `.git`: deeper trees are not projects.
MAX_DEPTH = 64
# Several git commands run in steps, each a process of its own holding the index lock, with a
# few milliseconds between them in which no lock is held: `git stash` records the work tree, then
# runs `git reset --hard`; a refused `git merge` (and so `git pull`) records it with `git stash
# create`, tries the merge, then runs `git read-tree --reset -u` and `git stash apply`. A write in
# such a gap is discarded by the next step. Every step takes or drops a lock in the git directory,
# which changes the directory's modification time: git counts as at work until that time is this
# many seconds old.
SETTLE = 0.25
# A `.git` file ("gitdir: <path>", written by `git worktree add` and for submodules) is one short
# line; anything longer is not one.
MAX_GITFILE_BYTES = 4096


def git_dir(start: str) -> str | None:
    """The git directory of the repository that holds the directory `start`, as git would find it
    from there: the first `.git` on the way up that is a directory, or a file that names one
    (`gitdir: <path>`, relative to the file's folder). None outside a repository, and when the
    `.git` found is neither (a FIFO, a device, a file that names no directory)."""
    here = os.path.abspath(start)
    for _ in range(MAX_DEPTH):
        dotgit = os.path.join(here, ".git")
        try:
            st = os.lstat(dotgit)
        except OSError:
            st = None
        if st is not None:
            if stat_.S_ISDIR(st.st_mode) or (stat_.S_ISLNK(st.st_mode) and os.path.isdir(dotgit)):
                return dotgit  # a link is only stat'ed through (git follows it too), never read
            if stat_.S_ISREG(st.st_mode):
                return _named_by(here, dotgit)
            return None
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _named_by(folder: str, gitfile: str) -> str | None:
    try:
        data = read_regular(gitfile, MAX_GITFILE_BYTES)
    except StorageError:
        return None
    text = (data or b"").decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    target = os.path.join(folder, text[len("gitdir:") :].strip())
    return target if os.path.isdir(target) else None


def held(gitdir: str | None) -> bool:
    """Whether git holds the index lock of that git directory (never when there is none)."""
    return gitdir is not None and os.path.lexists(os.path.join(gitdir, INDEX_LOCK))


State = tuple[int, bool] | None  # (the git directory's modification time in ns, the index lock held)


def state(gitdir: str | None) -> State:
    """What a write compares before and after its replace: the git directory's modification time
    (git changes it whenever it takes, drops or renames a lock or a ref there) and whether the
    index lock is held. None outside a repository."""
    if gitdir is None:
        return None
    try:
        mtime = os.stat(gitdir).st_mtime_ns
    except OSError:
        return None
    return mtime, held(gitdir)


def at_work(now: State) -> bool:
    """Whether git holds its index lock or touched its directory less than SETTLE seconds ago."""
    if now is None:
        return False
    mtime, locked = now
    age = time.time_ns() - mtime
    return locked or -1_000_000_000 < age < SETTLE * 1_000_000_000


def wait_settled(gitdir: str | None, deadline: float) -> tuple[bool, State]:
    """Wait until git is not at work, or until time.monotonic() reaches deadline: whether it
    stopped, and the state seen last. The checks start a millisecond apart and grow to 25 ms."""
    delay = 0.001
    while at_work(now := state(gitdir)):
        left = deadline - time.monotonic()
        if left <= 0:
            return False, now
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.025)
    return True, now


def lock_path(gitdir: str | None) -> str:
    """The index lock's path, for messages."""
    return os.path.join(gitdir or ".git", INDEX_LOCK)
