"""The files records cite, as the tools pass them on: a stale record's paths that commits renamed,
followed to their paths at HEAD when log_memory refreshes it (docs/contract.md §3.7), and the files
a topic's records cite, which compact_memory suggests its principle keep."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..errors import InvalidInput
from ..git import staleness
from ..git.staleness import Stale
from ..record import citations


def followed(root: Path, kept: list[str], mark: Stale) -> tuple[list[str], list[tuple[str, str]]]:
    """The paths a stale record cites, each one that commits renamed (its stale mark says to what:
    the history already read, no git run) replaced by its path at HEAD when log_memory would take
    that path in `files`, without repeats; and the (old, new) paths so replaced. A file renamed and
    since deleted, or whose new path is no file in the work tree, keeps its old path."""
    moved = staleness.renames(mark)
    out: list[str] = []
    followed: list[tuple[str, str]] = []
    for path in kept:
        new = moved.get(path)
        if new is not None and new != path and citable(root, new):
            followed.append((path, new))
            path = new
        if path not in out:
            out.append(path)
    return out, followed


def cited_by(root: Path, members: list[dict], marks: dict[str, Stale] | None = None) -> list[str]:
    """The files a topic's records cite that are still files of the project, the most cited first,
    at most citations.MAX_FILES, sorted: what its principle's call passes, so that the principle
    keeps its sources' citations. A file that commits renamed (a record's stale mark in `marks`,
    by id, says to what) counts by its path at HEAD, as a refresh follows it (§3.7)."""

    def cited(record: dict) -> list[str]:
        mark = (marks or {}).get(record.get("id"))  # type: ignore[arg-type]
        return followed(root, citations.of(record), mark)[0] if mark else citations.of(record)

    counts = Counter(f for r in members for f in cited(r))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return sorted([f for f, _ in ranked if citable(root, f)][: citations.MAX_FILES])


def citable(root: Path, path: str) -> bool:
    """Whether log_memory would take this path in `files` (a record written by hand may cite
    /etc/passwd or ../x, which the suggested call must not pass on)."""
    try:
        return citations.listed(root, [path]) == [path]
    except InvalidInput:
        return False
