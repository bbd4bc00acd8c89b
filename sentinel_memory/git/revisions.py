"""The memory file at a revision, for `review`: which revisions to compare (the merge base with the
default branch unless told), the file's bytes at a commit (bounded, a regular blob only), the
files a commit holds, and what a shallow clone leaves out.

Every git process goes through git/command.py, so a repository's own config runs nothing; blobs
are read with `cat-file` after `ls-tree` said what they are (a symbolic link or a submodule at the
memory file's path is not read through), never with a textconv or a filter.

Stdlib only.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from ..errors import InvalidInput
from . import command
from .history import Repo, find_repo, shallow_commits

MAX_BYTES = 64 * 1024 * 1024  # the bound record/disk.read_regular puts on the memory file
MEMORY_NAME = "memory_log.jsonl"
GIT_TIMEOUT = 60  # seconds


@dataclass(frozen=True)
class Base:
    """The revision a review compares against, and how it was chosen."""

    commit: str  # full hash
    label: str  # what the report calls it: "main (merge base 1a2b3c4)", "v2.0 (1a2b3c4)"
    note: str | None = None  # what a shallow clone made it settle for


def repository(root: os.PathLike | str) -> Repo:
    """The git work tree the project is in; InvalidInput outside one."""
    repo = find_repo(root)
    if repo is None:
        raise InvalidInput(f"{root} is not in a git repository; review compares two revisions of its memory file.")
    return repo


def _git(repo: Repo, *args: str, check: bool = False) -> subprocess.CompletedProcess:
    try:
        result = command.run("--literal-pathspecs", *args, cwd=repo.top, timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError) as exc:
        raise InvalidInput(f"git could not run ({type(exc).__name__}: {exc}); review needs git.") from exc
    if check and result.returncode != 0:
        why = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InvalidInput(f"git {args[0]} failed: {why[-1] if why else 'exit ' + str(result.returncode)}.")
    return result


def commit_of(repo: Repo, revision: str) -> str | None:
    """The commit a revision names, or None when it names none here."""
    if not revision or revision.startswith("-") or "\0" in revision:
        return None
    result = _git(repo, "rev-parse", "--verify", "-q", revision + "^{commit}")
    sha = result.stdout.decode("ascii", "replace").strip()
    return sha if result.returncode == 0 and sha else None


def short(sha: str) -> str:
    return sha[:7]


def is_shallow(repo: Repo) -> bool:
    return bool(shallow_commits(repo))


def named(repo: Repo, revision: str) -> str:
    """The commit a revision the user gave names; InvalidInput, saying why, when there is none."""
    sha = commit_of(repo, revision)
    if sha is not None:
        return sha
    shallow = " This clone is shallow: the commit may be one it does not hold (`git fetch --unshallow`)."
    raise InvalidInput(
        f"{revision!r} names no commit in {repo.top}.{shallow if is_shallow(repo) else ''} "
        "Give a branch, tag or commit (e.g. origin/main), or no revision for the merge base with the default branch."
    )


def default_branch(repo: Repo) -> str | None:
    """The default branch as a revision: what origin/HEAD points at, else main, else master
    (origin's before local ones)."""
    result = _git(repo, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD")
    pointed = result.stdout.decode("utf-8", "replace").strip()
    for candidate in ([pointed] if result.returncode == 0 and pointed else []) + [
        "origin/main",
        "origin/master",
        "main",
        "master",
    ]:
        if commit_of(repo, candidate):
            return candidate
    return None


def head_commit(repo: Repo) -> str | None:
    return commit_of(repo, "HEAD")


def default_base(repo: Repo) -> Base:
    """The merge base of HEAD and the default branch. A shallow clone that lacks it settles for
    the default branch's tip and says so; InvalidInput when there is nothing to compare with."""
    branch = default_branch(repo)
    head = head_commit(repo)
    if branch is None or head is None:
        what = "no commit yet" if head is None else "no origin/HEAD, main or master"
        raise InvalidInput(
            f"no base to compare with in {repo.top} ({what}); name one: `review BASE` (e.g. review origin/develop)."
        )
    tip = commit_of(repo, branch) or ""
    result = _git(repo, "merge-base", head, tip)
    base = result.stdout.decode("ascii", "replace").strip().splitlines()
    if result.returncode == 0 and base:
        return Base(base[0], f"{branch} (merge base {short(base[0])})")
    if is_shallow(repo):
        return Base(
            tip,
            f"{branch} ({short(tip)})",
            f"this clone is shallow and does not hold the merge base of HEAD and {branch}: compared with "
            f"{branch}'s tip instead, so records {branch} gained after the branch left it show as removed "
            "(fetch the whole history: `git fetch --unshallow`, or `fetch-depth: 0` for actions/checkout)",
        )
    raise InvalidInput(f"HEAD and {branch} share no history in {repo.top}; name a base: `review BASE`.")


@dataclass(frozen=True)
class Blob:
    """A file at a commit: its bytes, or why there are none."""

    data: bytes | None
    problem: str | None = None  # set when the path holds something that was not read


def blob(repo: Repo, sha: str, path: str) -> Blob:
    """The file at `path` (relative to the repository's top) in commit `sha`: absent (data None,
    no problem), read, or not read because it is a link, a submodule or over MAX_BYTES."""
    listing = _git(repo, "ls-tree", "-l", "-z", sha, "--", path, check=True).stdout
    entry = next((item for item in listing.split(b"\0") if item), None)
    if entry is None:
        return Blob(None)
    info, _, _name = entry.partition(b"\t")
    fields = info.split()
    if len(fields) < 4:
        return Blob(None, f"{path} at {short(sha)} could not be listed")
    mode, kind, obj, size = (f.decode("ascii", "replace") for f in fields[:4])
    if kind != "blob" or mode not in ("100644", "100755"):
        what = "a symbolic link" if mode == "120000" else "a submodule" if kind == "commit" else "not a file"
        return Blob(None, f"{path} at {short(sha)} is {what}; it was not read")
    if not size.isdigit() or int(size) > MAX_BYTES:
        return Blob(
            None, f"{path} at {short(sha)} is {int(size) if size.isdigit() else 0:,} bytes, over the {MAX_BYTES:,} read"
        )
    return Blob(_git(repo, "cat-file", "blob", obj, check=True).stdout)


def files_at(repo: Repo, sha: str) -> set[str]:
    """Every path the commit holds (relative to the repository's top)."""
    out = _git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", sha, check=True).stdout
    return {p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p}


def work_tree_files(repo: Repo, name: str) -> set[str]:
    """The paths in the work tree (tracked, or untracked and not ignored) whose file name is `name`."""
    out = _git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    found = set()
    for item in out.split(b"\0"):
        path = item.decode("utf-8", "surrogateescape")
        if path.rpartition("/")[2] == name:
            found.add(path)
    return found
