"""The git repository a project is in and its history, read for the stale marks (git/staleness.py).

HEAD is read from the repository's files (loose refs, packed-refs; git itself only for a ref store
that is not files), cheap enough for every search. The history is one `git log -z -M
--name-status` over the commits since a given time (at most MAX_COMMITS). The functions keep
nothing; a KeptHistory, which its owner (git/staleness.py's KeptMarks) passes nowhere else, keeps
one project's repository, packed refs and history between calls, the history while HEAD, the time
it reaches back to and a shallow clone's boundary stay. When git is missing or fails, the answer is
None or an empty history, logged and never raised.

Stdlib only: the commands and git's drivers import it.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from ..errors import warn
from ..values import Value
from . import command

MAX_COMMITS = 10_000  # commits read per HEAD, the newest first
GIT_TIMEOUT = 10  # seconds; past it, no marks for this HEAD (logged)
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


# ------------------------------------------------------------------------------ the repository


class Repo(Value):
    __slots__ = ("top", "gitdir", "common", "prefix")

    def __init__(self, top: str, gitdir: str, common: str, prefix: str) -> None:
        self.top = top  # the work tree's top directory
        self.gitdir = gitdir  # its git directory (a linked work tree's own)
        self.common = common  # the directory that holds the refs shared by every work tree
        self.prefix = prefix  # the project root relative to top, "" or ending in "/"


SMALL = 1 << 20  # bytes: a HEAD, a ref, a `.git` file, commondir, a config
LARGE = 64 << 20  # bytes: packed-refs and a shallow clone's list, which grow with the repository


def read_small(path: str, limit: int = SMALL) -> str | None:
    """A small file's text, or None (os.read, cheaper than open(), because this runs on every
    search to read HEAD; bench/benchmark.py, S). A file over `limit` bytes is not one git wrote
    there: None, with nothing read past the limit."""
    try:  # O_NONBLOCK: a FIFO planted in the git folder is not waited on (nor read: below)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace") if size <= limit else None


def find_repo(root: os.PathLike | str) -> Repo | None:
    """The git work tree the project root is in (itself or an ancestor), or None."""
    real = os.path.realpath(os.fspath(root))
    here = real
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):  # a linked work tree or a submodule: "gitdir: <path>"
            text = (read_small(dotgit) or "").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = os.path.normpath(os.path.join(here, text[len("gitdir:") :].strip()))
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    common_text = (read_small(os.path.join(gitdir, "commondir")) or "").strip()
    common = os.path.normpath(os.path.join(gitdir, common_text)) if common_text else gitdir
    relative = os.path.relpath(real, here)
    prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
    return Repo(here, gitdir, common, prefix)


PackedRefs = dict[str, str]  # ref name -> commit
Stamp = tuple[int, int]  # a file's (mtime_ns, size)


def packed_refs(common: str, kept: tuple[Stamp, PackedRefs] | None = None) -> tuple[Stamp, PackedRefs] | None:
    """The packed-refs file of the repository whose shared git directory is `common`, with its
    stamp: `kept` itself while the file has its stamp, else read again; None when there is none."""
    path = os.path.join(common, "packed-refs")
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size)
    if kept is not None and kept[0] == stamp:
        return kept
    refs = {}
    for line in (read_small(path, LARGE) or "").splitlines():
        if line and line[0] not in "#^":
            sha, _, name = line.partition(" ")
            refs[name.strip()] = sha
    return stamp, refs


def head(repo: Repo, packed: Callable[[str], tuple[Stamp, PackedRefs] | None] = packed_refs) -> str | None:
    """HEAD's commit, read from the repository's files (git itself only for a ref store that is
    not files); None when there is no commit yet or it cannot be read. `packed`: how the
    packed-refs file is read (KeptHistory's keeps it)."""
    text = (read_small(os.path.join(repo.gitdir, "HEAD")) or "").strip()
    if _SHA.match(text):
        return text  # detached
    if text.startswith("ref:"):
        ref = text[4:].strip()
        for where in (repo.gitdir, repo.common):
            sha = (read_small(os.path.join(where, ref)) or "").strip()
            if _SHA.match(sha):
                return sha
        refs = packed(repo.common)
        listed = refs[1].get(ref) if refs is not None else None
        if listed and _SHA.match(listed):
            return listed
        if not os.path.exists(os.path.join(repo.common, "reftable")):
            return None  # a branch without commits yet
    result = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    sha = result.strip() if result else ""
    return sha if _SHA.match(sha) else None


def _git(repo: Repo, *args: str) -> str | None:
    """git's standard output, or None when git is missing or fails (logged, never raised)."""
    return _git_or_why(repo, *args)[0]


def _git_or_why(repo: Repo, *args: str) -> tuple[str | None, str | None]:
    """(git's standard output, None), or (None, why not) when git is missing or fails (logged)."""
    try:
        result = command.run("-c", "core.quotepath=false", *args, cwd=repo.top, timeout=GIT_TIMEOUT)
    except command.GitWouldWait as exc:
        why = str(exc)
    except subprocess.TimeoutExpired:
        why = f"git {args[0]} did not finish in {GIT_TIMEOUT:g} s"
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"git could not run ({exc})"
    else:
        if result.returncode == 0:
            return result.stdout.decode("utf-8", "replace"), None
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = f"git {args[0]} failed ({said[-1][:200] if said else f'exit {result.returncode}'})"
    warn("git unavailable for the stale marks: %s", why, info=True)
    return None, why


# --------------------------------------------------------------------------------- the history


class History:
    """The commits since `since` (epoch seconds) up to one HEAD, as events per repository path,
    newest first: (committer time, short hash, status, the new path of a rename).

    `shallow`: the committer time of the newest boundary commit of a shallow clone that the read
    reached (None: none). Such a commit's parents are not in the clone, so git lists every file it
    holds as added: its list says nothing and is skipped, and what changed before it is unknown.

    `failed`: why git could not give the history (None when it did); such a history is empty and
    is not kept, so the next call asks git again."""

    def __init__(
        self,
        head: str,
        since: int,
        events: dict[str, list[tuple[int, str, str, str | None]]],
        truncated: bool,
        oldest: int,
        shallow: int | None = None,
        failed: str | None = None,
    ) -> None:
        self.head, self.since, self.events, self.truncated, self.oldest = head, since, events, truncated, oldest
        self.shallow, self.failed = shallow, failed
        self.depth: tuple[int, int] | None = None  # the shallow file's stamp when it was read


def shallow_commits(repo: Repo) -> set[str]:
    """The boundary commits of a shallow clone (its `shallow` file); empty for a full clone."""
    return set((read_small(os.path.join(repo.common, "shallow"), LARGE) or "").split())


def history(repo: Repo, sha: str, since: int) -> History:
    """The history up to HEAD `sha` since `since`, read from git (kept nowhere: KeptHistory keeps it)."""
    stamp = datetime.fromtimestamp(since, UTC).isoformat()
    out, failed = _git_or_why(
        repo,
        "log",
        "-z",
        *command.DIFF_OPTIONS,
        "--no-merges",
        "-M",
        "--name-status",
        "--format=%x01%h %ct %H",
        f"--max-count={MAX_COMMITS}",
        f"--since={stamp}",
        sha,
        "--",
    )
    boundaries = shallow_commits(repo)
    events: dict[str, list] = {}
    commits, oldest, shallow = 0, since, None
    # NUL-separated: a commit's header (\x01 first, where a status is due), then per file a
    # status and its path (two for a rename or copy). A path may hold any byte but NUL, \x01 and a
    # newline too, so only the place of a token says what it is.
    tokens = (out or "").split("\0")
    i, ct, short, skip = 0, 0, "", True
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        i += 1
        if token.startswith("\x01"):
            short, _, when = token[1:].partition(" ")
            when, _, full = when.partition(" ")
            try:
                ct = int(when)
            except ValueError:
                skip = True
                continue
            skip = full.strip() in boundaries
            if skip:
                shallow = max(shallow or ct, ct)
                continue
            commits += 1
            oldest = min(oldest, ct) if commits > 1 else ct
            continue
        if not token:
            continue
        paths = 2 if token[0] in "RC" else 1
        named, i = tokens[i : i + paths], i + paths
        if skip or len(named) < paths:
            continue
        if paths == 2:
            old, new = named
            if token[0] == "R":
                events.setdefault(old, []).append((ct, short, "R", new))
            events.setdefault(new, []).append((ct, short, "M", None))
        else:
            events.setdefault(named[0], []).append((ct, short, "D" if token[0] == "D" else "M", None))
    return History(sha, since, events, commits >= MAX_COMMITS, oldest, shallow, failed)


def shallow_stamp(repo: Repo) -> Stamp | None:
    """The shallow file's (mtime, size), or None for a full clone."""
    try:
        st = os.stat(os.path.join(repo.common, "shallow"))
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


class KeptHistory:
    """What a process keeps of the repository of one project root between calls: the repository
    found (found again while there is none), its packed refs (read again when the file changes)
    and the history last read, reused while HEAD, the shallow file and the time it reaches back
    to allow. Each is replaced whole, never changed, so threads may share one; two threads that
    need a new history read it once."""

    def __init__(self, root: os.PathLike | str) -> None:
        self.root = os.fspath(root)
        self._repo: Repo | None = None
        self._packed: tuple[Stamp, PackedRefs] | None = None
        self._history: History | None = None
        self._reading = threading.Lock()

    def repo(self) -> Repo | None:
        """find_repo(root), kept once found (a repository removed since: HEAD can no longer be
        read, and nothing is marked)."""
        if self._repo is None:
            self._repo = find_repo(self.root)
        return self._repo

    def _packed_refs(self, common: str) -> tuple[Stamp, PackedRefs] | None:
        self._packed = packed_refs(common, self._packed)
        return self._packed

    def head(self, repo: Repo) -> str | None:
        """head(repo), with the packed refs kept."""
        return head(repo, self._packed_refs)

    def history(self, repo: Repo, sha: str, since: int) -> History:
        """The history up to HEAD `sha` since `since` at least: the one kept when it reaches back
        far enough, else read once (and kept unless git failed: then the next call asks again)."""
        depth = shallow_stamp(repo)  # `git fetch --unshallow` or `--deepen` changes it, not HEAD
        kept = self._history
        if kept is not None and kept.head == sha and kept.since <= since and kept.depth == depth:
            return kept
        with self._reading:
            kept = self._history
            if kept is not None and kept.head == sha and kept.since <= since and kept.depth == depth:
                return kept
            fresh = history(repo, sha, since)
            fresh.depth = depth
            if fresh.failed is None:
                self._history = fresh
            return fresh
