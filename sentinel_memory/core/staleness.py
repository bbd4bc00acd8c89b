"""Which records cite files that changed after the record was written (docs/contract.md §3.7, §4.2).

A record is stale when one of the files it cites was changed, deleted or renamed by a commit whose
committer date is later than the record's recency (meta.updated, else meta.created). Only commits
count: uncommitted changes in the working tree do not, and a teammate's commit that arrived by
`git pull` counts like one's own, by its date in the history, not by when it arrived.

Cheap by construction: the history is read with one `git log --name-status -M` per HEAD, over the
commits since the oldest stamp of a citing record (at most MAX_COMMITS), and kept while HEAD stays;
HEAD itself is read from the repository's files, without a git process, on every call. The mark of
a record is computed once per (record line, history) and kept. Outside a git repository, without
commits, or when git is missing or fails, nothing is stale and nothing fails.

Stdlib only: the commands and git's drivers import it.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from . import gitcmd
from .citations import of as cited_files
from .records import recency

log = logging.getLogger("sentinel_memory")

MAX_COMMITS = 10_000  # commits read per HEAD, the newest first
GIT_TIMEOUT = 10  # seconds; past it, no marks for this HEAD (logged)
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


@dataclass(frozen=True)
class Change:
    """What happened to one cited file after the record was written."""

    path: str  # as the record cites it
    commits: int  # commits that touched it since
    latest: str  # the newest of them: short hash
    date: str  # and its committer date, YYYY-MM-DD (UTC)
    deleted: bool = False  # the file is gone at HEAD
    renamed_to: str | None = None  # its path at HEAD (relative to the project root) when it was renamed
    at_least: bool = False  # the history read was cut at MAX_COMMITS before the record's date


Stale = tuple  # of Change; empty when the record is not stale


# ------------------------------------------------------------------------------ the repository


@dataclass(frozen=True)
class _Repo:
    top: str  # the work tree's top directory
    gitdir: str  # its git directory (a linked work tree's own)
    common: str  # the directory that holds the refs shared by every work tree
    prefix: str  # the project root relative to top, "" or ending in "/"


_repos: dict[str, _Repo] = {}


def _read(path: str) -> str | None:
    """A small file's text, or None (os.read, cheaper than open(), because this runs on every
    search to read HEAD; bench/benchmark.py, S)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def find_repo(root: os.PathLike | str) -> _Repo | None:
    """The git work tree the project root is in (itself or an ancestor), or None."""
    key = os.fspath(root)
    found = _repos.get(key)
    if found is not None:
        return found  # (a repository removed since: HEAD can no longer be read, and nothing is marked)
    real = os.path.realpath(key)
    here = real
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):  # a linked work tree or a submodule: "gitdir: <path>"
            text = (_read(dotgit) or "").strip()
            if not text.startswith("gitdir:"):
                return None
            gitdir = os.path.normpath(os.path.join(here, text[len("gitdir:") :].strip()))
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    common_text = (_read(os.path.join(gitdir, "commondir")) or "").strip()
    common = os.path.normpath(os.path.join(gitdir, common_text)) if common_text else gitdir
    relative = os.path.relpath(real, here)
    prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
    repo = _Repo(here, gitdir, common, prefix)
    _repos[key] = repo
    return repo


_packed: dict[str, tuple[tuple[int, int], dict[str, str]]] = {}


def _packed_refs(common: str) -> dict[str, str]:
    path = os.path.join(common, "packed-refs")
    try:
        st = os.stat(path)
    except OSError:
        return {}
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _packed.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    refs = {}
    for line in (_read(path) or "").splitlines():
        if line and line[0] not in "#^":
            sha, _, name = line.partition(" ")
            refs[name.strip()] = sha
    _packed[path] = (stamp, refs)
    return refs


def head(repo: _Repo) -> str | None:
    """HEAD's commit, read from the repository's files (git itself only for a ref store that is
    not files); None when there is no commit yet or it cannot be read."""
    text = (_read(os.path.join(repo.gitdir, "HEAD")) or "").strip()
    if _SHA.match(text):
        return text  # detached
    if text.startswith("ref:"):
        ref = text[4:].strip()
        for where in (repo.gitdir, repo.common):
            sha = (_read(os.path.join(where, ref)) or "").strip()
            if _SHA.match(sha):
                return sha
        packed = _packed_refs(repo.common).get(ref)
        if packed and _SHA.match(packed):
            return packed
        if not os.path.exists(os.path.join(repo.common, "reftable")):
            return None  # a branch without commits yet
    result = _git(repo, "rev-parse", "--verify", "-q", "HEAD")
    sha = result.strip() if result else ""
    return sha if _SHA.match(sha) else None


def _git(repo: _Repo, *args: str) -> str | None:
    """git's standard output, or None when git is missing or fails (logged, never raised)."""
    try:
        result = gitcmd.run("-c", "core.quotepath=false", *args, cwd=repo.top, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("git unavailable for the stale marks: %s", exc)
        return None
    if result.returncode != 0:
        log.info(
            "git %s failed for the stale marks: %s", args[0], result.stderr.decode("utf-8", "replace").strip()[:200]
        )
        return None
    return result.stdout.decode("utf-8", "replace")


# --------------------------------------------------------------------------------- the history


class History:
    """The commits since `since` (epoch seconds) up to one HEAD, as events per repository path,
    newest first: (committer time, short hash, status, the new path of a rename).

    `shallow`: the committer time of the newest boundary commit of a shallow clone that the read
    reached (None: none). Such a commit's parents are not in the clone, so git lists every file it
    holds as added: its list says nothing and is skipped, and what changed before it is unknown."""

    def __init__(
        self,
        head: str,
        since: int,
        events: dict[str, list[tuple[int, str, str, str | None]]],
        truncated: bool,
        oldest: int,
        shallow: int | None = None,
    ) -> None:
        self.head, self.since, self.events, self.truncated, self.oldest = head, since, events, truncated, oldest
        self.shallow = shallow
        self.depth: tuple[int, int] | None = None  # the shallow file's stamp when it was read


def shallow_commits(repo: _Repo) -> set[str]:
    """The boundary commits of a shallow clone (its `shallow` file); empty for a full clone."""
    return set((_read(os.path.join(repo.common, "shallow")) or "").split())


def _read_history(repo: _Repo, sha: str, since: int) -> History:
    stamp = datetime.fromtimestamp(since, timezone.utc).isoformat()
    out = _git(
        repo,
        "log",
        "-z",
        *gitcmd.DIFF_OPTIONS,
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
    for chunk in (out or "").split("\x01"):
        if not chunk:
            continue
        head_line, _, rest = chunk.partition("\0")
        short, _, when = head_line.partition(" ")
        when, _, full = when.partition(" ")
        try:
            ct = int(when)
        except ValueError:
            continue
        if full.strip() in boundaries:
            shallow = max(shallow or ct, ct)
            continue
        commits += 1
        oldest = min(oldest, ct) if commits > 1 else ct
        tokens = rest.lstrip("\n").split("\0")
        i = 0
        while i < len(tokens):
            status = tokens[i]
            if not status:
                i += 1
                continue
            if status[0] in "RC" and i + 2 < len(tokens):
                old, new = tokens[i + 1], tokens[i + 2]
                if status[0] == "R":
                    events.setdefault(old, []).append((ct, short, "R", new))
                events.setdefault(new, []).append((ct, short, "M", None))
                i += 3
            elif i + 1 < len(tokens):
                events.setdefault(tokens[i + 1], []).append((ct, short, "D" if status[0] == "D" else "M", None))
                i += 2
            else:
                break
    return History(sha, since, events, commits >= MAX_COMMITS, oldest, shallow)


_histories: dict[str, History] = {}
_reading = threading.Lock()


def history(repo: _Repo, sha: str, since: int) -> History:
    """The history up to HEAD `sha` since `since` at least: the one kept for this HEAD when it
    reaches back far enough, else read once (and kept)."""
    depth = _shallow_stamp(repo)  # `git fetch --unshallow` or `--deepen` changes it, not HEAD
    kept = _histories.get(repo.gitdir)
    if kept is not None and kept.head == sha and kept.since <= since and kept.depth == depth:
        return kept
    with _reading:
        kept = _histories.get(repo.gitdir)
        if kept is not None and kept.head == sha and kept.since <= since and kept.depth == depth:
            return kept
        fresh = _read_history(repo, sha, since)
        fresh.depth = depth
        _histories[repo.gitdir] = fresh
        return fresh


def _shallow_stamp(repo: _Repo) -> tuple[int, int] | None:
    """The shallow file's (mtime, size), or None for a full clone."""
    try:
        st = os.stat(os.path.join(repo.common, "shallow"))
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def stamp_seconds(stamp: str) -> int | None:
    """An ISO 8601 stamp as epoch seconds, or None when it is not one."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp())


# ------------------------------------------------------------------------------------ the marks


class Checker:
    """The stale marks of one project's records against one history; each computed once."""

    def __init__(self, repo: _Repo, hist: History) -> None:
        self.repo, self.history = repo, hist
        self._paths: dict[str, str] = {}  # a cited folder -> the folder git tracks ("" for the top)
        self._marks: dict[object, Stale] = {}
        self.lines: dict[object, object] = {}  # entry -> its block with the stale line, kept for the caller
        self._renamed_from: dict[str, list[str]] | None = None  # new path -> the paths renamed to it

    def mark(self, record: dict) -> Stale:
        """The changes to the files the record cites since it was written (empty: not stale)."""
        files = cited_files(record)
        if not files:
            return ()
        written = stamp_seconds(recency(record))
        if written is None:
            return ()
        return tuple(c for c in (self._change(path, written) for path in files) if c is not None)

    def mark_entry(self, entry) -> Stale:
        """mark(entry.record), kept per entry (entries are never changed)."""
        found = self._marks.get(entry)
        if found is None:
            if "files" not in entry.record:
                return ()
            if len(self._marks) > 200_000:
                self._marks.clear()
                self.lines.clear()
            found = self._marks[entry] = self.mark(entry.record)
        return found

    @property
    def shallow(self) -> bool:
        """The history read reached the boundary of a shallow clone: older changes are unknown."""
        return self.history.shallow is not None

    def tracked(self, path: str) -> str:
        """The path git tracks for a cited path: its folders resolved through symbolic links that
        stay inside the work tree (git records `src/pay.py`, not `lib/pay.py` through `lib -> src`);
        the file's own name is kept, as git tracks a link itself."""
        folder, _, name = (self.repo.prefix + path).rpartition("/")
        if not folder:
            return name
        resolved = self._paths.get(folder)
        if resolved is None:
            real = os.path.realpath(os.path.join(self.repo.top, folder))
            try:
                inside = os.path.relpath(real, self.repo.top).replace(os.sep, "/")
            except ValueError:  # another drive
                inside = ".."
            resolved = folder if inside == ".." or inside.startswith("../") else "" if inside == "." else inside
            if len(self._paths) > 10_000:
                self._paths.clear()
            self._paths[folder] = resolved
        return f"{resolved}/{name}" if resolved else name

    def former_names(self, paths: list[str]) -> list[str]:
        """The paths (relative to the project root) that commits in the history renamed, directly
        or through other names, to one of `paths`."""
        prefix = self.repo.prefix
        if self._renamed_from is None:
            back: dict[str, list[str]] = {}
            for old, events in self.history.events.items():
                for event in events:
                    if event[2] == "R" and event[3]:
                        back.setdefault(event[3], []).append(old)
            self._renamed_from = back
        found: list[str] = []
        todo = [prefix + p for p in paths]
        seen = set(todo)
        while todo and len(found) < 1000:
            for old in self._renamed_from.get(todo.pop(), ()):
                if old not in seen:
                    seen.add(old)
                    todo.append(old)
                    if old.startswith(prefix):
                        found.append(old[len(prefix) :])
        return found

    def _change(self, path: str, written: int) -> Change | None:
        prefix, events = self.repo.prefix, self.history.events
        newer = [e for e in events.get(self.tracked(path), ()) if e[0] > written]
        if not newer:
            return None
        latest = max(newer, key=lambda e: e[0])
        when = datetime.fromtimestamp(latest[0], timezone.utc).strftime("%Y-%m-%d")
        last = newer[0]  # the newest in the history's order: the file's state at HEAD
        deleted, renamed = last[2] == "D", None
        if last[2] == "R":
            target, hops = last[3] or "", 0  # a rename always names its target
            while hops < 20 and events.get(target) and events[target][0][2] == "R":
                target, hops = events[target][0][3] or "", hops + 1
            deleted = bool(events.get(target)) and events[target][0][2] == "D"
            renamed = target[len(prefix) :] if target.startswith(prefix) else target
        at_least = (self.history.truncated and written < self.history.oldest) or (
            self.history.shallow is not None and written < self.history.shallow
        )
        return Change(path, len(newer), latest[1], when, deleted, renamed, at_least)


_checkers: dict[str, Checker] = {}


def checker(root: os.PathLike | str, oldest: str | None) -> Checker | None:
    """The checker of the project at `root` for records written at `oldest` or later (the oldest
    recency of the records that cite files; None: none does, and git is not asked). None when the
    project is not in a git repository with commits."""
    if not oldest:
        return None
    since = stamp_seconds(oldest)
    if since is None:
        return None
    repo = find_repo(root)
    if repo is None:
        return None
    sha = head(repo)
    if sha is None:
        return None
    hist = history(repo, sha, since)
    key = os.fspath(root)
    kept = _checkers.get(key)
    if kept is not None and kept.history is hist and kept.repo == repo:
        return kept
    fresh = _checkers[key] = Checker(repo, hist)
    return fresh


def drop_caches() -> None:
    """Forget every repository, history and mark kept (as a new process starts)."""
    _repos.clear()
    _packed.clear()
    _histories.clear()
    _checkers.clear()


def oldest_citing(records) -> str | None:
    """The oldest recency among records that cite files, or None when none does."""
    stamps = [recency(r) for r in records if r.get("files")]
    stamps = [s for s in stamps if s]
    return min(stamps) if stamps else None
