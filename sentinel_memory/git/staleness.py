"""Which records cite files that changed after the record was written (docs/contract.md §3.7, §4.2).

A record is stale when one of the files it cites was changed, deleted or renamed by a commit whose
committer date is later than the record's recency (meta.updated, else meta.created). Only commits
count: uncommitted changes in the working tree do not, and a teammate's commit that arrived by
`git pull` counts like one's own, by its date in the history, not by when it arrived.

Cheap by construction (git/history.py reads git): the history is read with one `git log
--name-status -M` per HEAD, over the commits since the oldest stamp of a citing record (at most
MAX_COMMITS), and kept while HEAD stays; HEAD itself is read from the repository's files, without a
git process, on every call. The mark of a record is computed once per (record line, history) and
kept. What is kept between calls is a KeptMarks' (one per project root, which tools/memory.py's
OpenMemory owns); `checker()` keeps nothing (a hook's one call). Outside a git repository, without
commits, or when git is missing or fails, nothing is stale and nothing fails.

Stdlib only: the commands and git's drivers import it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from ..record.citations import of as cited_files
from ..record.records import recency
from ..values import Value
from . import command
from .history import History, KeptHistory, Repo


class Change(Value):
    """What happened to one cited file after the record was written."""

    __slots__ = ("path", "commits", "latest", "date", "deleted", "renamed_to", "at_least", "outside")

    def __init__(
        self,
        path: str,
        commits: int,
        latest: str,
        date: str,
        deleted: bool = False,
        renamed_to: str | None = None,
        at_least: bool = False,
        outside: bool = False,
    ) -> None:
        self.path = path  # as the record cites it
        self.commits = commits  # commits that touched it since
        self.latest = latest  # the newest of them: short hash
        self.date = date  # and its committer date, YYYY-MM-DD (UTC)
        self.deleted = deleted  # the file is gone at HEAD
        # its path at HEAD (relative to the project root) when it was renamed
        self.renamed_to = renamed_to
        self.at_least = at_least  # the history read was cut at MAX_COMMITS before the record's date
        # renamed out of the project: renamed_to is relative to the repository's top
        self.outside = outside


Stale = tuple  # of Change; empty when the record is not stale


def stamp_seconds(stamp: str) -> int | None:
    """An ISO 8601 stamp as epoch seconds, or None when it is not one."""
    try:
        moment = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


# ------------------------------------------------------------------------------------ the marks


class Checker:
    """The stale marks of one project's records against one history; each computed once."""

    def __init__(self, repo: Repo, hist: History) -> None:
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
        last = newer[0]  # the newest in the history's order: the file's state at HEAD
        deleted, renamed, outside = last[2] == "D", None, False
        if last[2] == "R":
            # Followed through a chain of renames to its path at HEAD; what happened under each later
            # name counts too (a.py -> b.py -> c.py, then c.py changed: 3 commits, the change latest).
            target, hops = last[3] or "", 0  # a rename always names its target
            later = [[e for e in events.get(target, ()) if e[0] > written]]
            while hops < 20 and events.get(target) and events[target][0][2] == "R":
                target, hops = events[target][0][3] or "", hops + 1
                later.append([e for e in events.get(target, ()) if e[0] > written])
            deleted = bool(events.get(target)) and events[target][0][2] == "D"
            outside = not target.startswith(prefix)
            renamed = target if outside else target[len(prefix) :]
            # Newest first, as the history lists them: a later name's events came after an earlier's.
            newer = [e for events_of in reversed(later) for e in events_of] + newer
        latest = newer[0] if newer[0][0] >= max(e[0] for e in newer) else max(newer, key=lambda e: e[0])
        when = datetime.fromtimestamp(latest[0], UTC).strftime("%Y-%m-%d")
        at_least = (self.history.truncated and written < self.history.oldest) or (
            self.history.shallow is not None and written < self.history.shallow
        )
        commits = len({e[1] for e in newer})
        return Change(path, commits, latest[1], when, deleted, renamed, at_least, outside)


def renames(mark: Stale) -> dict[str, str]:
    """The cited paths of a stale mark that commits renamed to a path of the project that is still
    there at HEAD, each with that path (relative to the project root): what a refresh of the record
    follows (docs/contract.md §3.7)."""
    return {c.path: c.renamed_to for c in mark if c.renamed_to and not c.deleted and not c.outside}


class KeptMarks:
    """What a process keeps of one project's stale marks between calls: its repository and history
    (git/history.py's KeptHistory) and the checker of that history, whose marks are computed once.
    Each is replaced whole, never changed, so threads may share one."""

    def __init__(self, root: os.PathLike | str) -> None:
        self.git = KeptHistory(root)
        self._checker: Checker | None = None

    def checker(self, oldest: str | None) -> Checker | None:
        """The checker of the project for records written at `oldest` or later (the oldest
        recency of the records that cite files; None: none does, and git is not asked). None when
        the project is not in a git repository with commits."""
        if not oldest:
            return None
        since = stamp_seconds(oldest)
        if since is None:
            return None
        repo = self.git.repo()
        if repo is None:
            return None
        sha = self.git.head(repo)
        if sha is None:
            why = command.hazard(repo.top)  # a HEAD git would wait on reads as no commit
            return Checker(repo, History("", since, {}, False, since, failed=why)) if why else None
        hist = self.git.history(repo, sha, since)
        kept = self._checker
        if kept is not None and kept.history is hist and kept.repo == repo:
            return kept
        fresh = self._checker = Checker(repo, hist)
        return fresh


def checker(root: os.PathLike | str, oldest: str | None) -> Checker | None:
    """KeptMarks(root).checker(oldest), for a caller that asks once: read afresh, kept nowhere."""
    return KeptMarks(root).checker(oldest)


def oldest_citing(records) -> str | None:
    """The oldest recency among records that cite files, or None when none does."""
    stamps = [recency(r) for r in records if r.get("files")]
    stamps = [s for s in stamps if s]
    return min(stamps) if stamps else None
