"""The operations the commands for people use beside the tools': every record, one record by id
or unique prefix, forget, fold a stray memory file, topics and stats. Each takes the memory file
as tools/memory.py's operations do (an OpenMemory, or its path) and returns plain data or a typed
result; the words are cli/console.py's."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidInput, StorageError
from ..git.staleness import stamp_seconds
from ..record import contextdir, store
from ..record.disk import read_regular
from ..record.merge import merge_two_way
from ..record.records import count_types, is_principle, prepare, recency, topic_of
from ..record.snapshot import Snapshot, lines_of
from ..tools import blocks
from ..tools.memory import DEFAULT_THRESHOLD, OpenMemory, Where, checker, opened, stale_marks, write
from ..visible import visible

MIN_PREFIX = 4  # an id may be shortened to a unique prefix of at least this many characters, as in git


def stale(where: Where) -> tuple[list[dict], dict]:
    """The stale records, oldest first, and their marks by id. When git could not give the
    history, StorageError says why: "none is stale" would be a guess."""
    memory = opened(where)
    check = checker(memory, memory.read())
    if check is not None and check.history.failed:
        raise StorageError(
            f"the stale marks could not be read: {check.history.failed}; which records are stale is unknown."
        )
    marks = stale_marks(memory)
    found = sorted((r for r in records(memory) if r["id"] in marks), key=lambda r: (recency(r), r["id"]))
    return found, marks


def records(where: Where) -> list[dict]:
    """Every record, in no particular order."""
    return [e.record for e in opened(where).read().records.values()]


def full_id(snap: Snapshot, given: str) -> str | None:
    """The id that `given` names exactly or as a unique prefix (at least MIN_PREFIX characters);
    None when none does. Several matches are an InvalidInput that lists them."""
    given = given.strip()
    if given in snap.records:
        return given
    prefix = given.lower()
    matches = sorted(rid for rid in snap.records if rid.startswith(prefix)) if len(prefix) >= MIN_PREFIX else []
    if len(matches) > 1:
        shown = ", ".join(map(visible, matches[:5])) + (" ..." if len(matches) > 5 else "")
        raise InvalidInput(
            f"id {given!r} is the start of {len(matches)} records ({shown}); give more of it. Nothing was changed."
        )
    return matches[0] if matches else None


def record(where: Where, given: str) -> dict | None:
    """The record an id or unique prefix names, or None."""
    snap = opened(where).read()
    rid = full_id(snap, given)
    return snap.records[rid].record if rid else None


@dataclass(frozen=True)
class Forgotten:
    unknown: list[str]  # given ids or prefixes that name no record: then nothing was deleted
    deleted: list[dict]  # the records deleted
    gone: list[str]  # ids deleted by someone else between the lookup and the locked write


@dataclass
class AtHead:
    """The memory file as the last commit holds it, for what git can show and restore."""

    ids: set[str]  # the records it holds (empty: no commit, or no memory file in it)
    other_changes: bool  # the work tree's file differs from it by more than the deleted records


def at_head(root: Path, memory_file: Path, deleted: set[str]) -> AtHead | None:
    """After `forget` of `deleted`: which records HEAD holds, and whether `git restore` of the file
    would undo more than the deletion (the file differs from HEAD less those records' lines).
    None outside git or when the committed file cannot be read."""
    from ..git import revisions
    from ..record.snapshot import lines_of, parse

    try:
        repo = revisions.repository(root)
        sha = revisions.commit_of(repo, "HEAD")
        found = revisions.blob(repo, sha, repo.prefix + ".context/memory_log.jsonl") if sha else None
        now = memory_file.read_bytes() if memory_file.is_file() else b""
    except (InvalidInput, OSError):
        return None
    if found is not None and found.problem:
        return None
    data = found.data if found is not None and found.data is not None else b""
    ids = set(parse(data).records)
    kept = [line for line in lines_of(data) if _id_of(line) not in deleted]
    return AtHead(ids, kept != lines_of(now))


def _id_of(line: bytes) -> object:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value.get("id") if isinstance(value, dict) else None


def forget(where: Where, given: list[str]) -> Forgotten:
    """Delete the records these ids or unique prefixes name, in one locked atomic write; all or
    nothing: when one names no record, nothing is deleted."""
    memory = opened(where)
    snap = memory.read()
    ids = {g: full_id(snap, g) for g in dict.fromkeys(i.strip() for i in given if i.strip())}
    unknown = [g for g, rid in ids.items() if rid is None]
    if unknown:
        return Forgotten(unknown, [], [])
    wanted = [rid for rid in dict.fromkeys(ids.values()) if rid is not None]

    def change(current: Snapshot) -> Snapshot | None:
        present = [i for i in wanted if i in current.records]
        return current.edited(drop=present) if present else None

    report = write(memory, change)
    deleted = [report.before.records[i].record for i in wanted if i in report.before.records]
    return Forgotten([], deleted, [i for i in wanted if i not in report.before.records])


@dataclass(frozen=True)
class Folded:
    stray: Path  # the other memory file, left as it was
    target: Path  # the project's memory file
    records: int  # records in the stray file
    added: int
    updated: int  # ids in both, the stray's version newer
    unreadable: int  # lines of the stray file that are not records (they stay there)
    quarantined: int = 0  # lines of the stray's quarantine file, now in the project's too
    copies: tuple[str, ...] = ()  # the stray folder's copies of conflicted files (git-ignored, local)
    quarantine_whole: bool = True  # every line of the stray's quarantine file reached the project's

    @property
    def folder(self) -> Path | None:
        """The stray file's .context/ folder, to delete once folded in; None when the file is not
        a memory file in a folder of that name, or is in the project's own .context/ (a copy or a
        merge's leftover beside the memory file): then only the file itself is the stray's."""
        parent = self.stray.parent
        if parent.name != ".context" or self.stray.name != self.target.name:
            return None
        return None if os.path.realpath(parent) == os.path.realpath(self.target.parent) else parent

    @property
    def already_there(self) -> int:
        return self.records - self.added - self.updated


def stray_path(root: Path, given: str) -> Path:
    """The memory file `given` names: the file itself, or a folder holding .context/memory_log.jsonl.
    A relative path is taken from the project's root (doctor prints them that way) or, failing
    that, from the current directory. A symbolic link, as the file or as its folder, is refused:
    fold reads the file it is given, never where a link leads."""
    if not given.strip():
        raise InvalidInput(
            "no file given: name the other .context/memory_log.jsonl, or the folder holding its "
            ".context/. Nothing was changed."
        )
    candidates = [Path(given)] if Path(given).is_absolute() else [root / given, Path.cwd() / given]
    for candidate in candidates:
        for path in (candidate, store.memory_path(candidate)):
            path = Path(os.path.abspath(path))
            link = next((p for p in (path, path.parent) if p.is_symlink()), None)
            if link is not None:
                raise InvalidInput(
                    f"{visible(str(link))} is a symbolic link (to {visible(os.readlink(link))}); fold reads only a regular "
                    "memory file, not a link. Nothing was changed."
                )
            if path.is_file():
                return path
    raise InvalidInput(
        f"{given!r} is neither a memory file nor a folder with .context/memory_log.jsonl. Nothing was changed."
    )


def fold(root: Path, given: str) -> Folded:
    """Merge a stray memory file's records into the project's memory, two-way (nothing is known to
    be deleted, so every id is kept, the newer version of an id both hold), in one locked write.
    The stray file is left as it is."""
    target = Path(os.path.abspath(store.memory_path(root)))  # not resolved: the store refuses a link
    stray = stray_path(root, given)
    if os.path.realpath(stray) == os.path.realpath(target):
        raise InvalidInput(
            f"{visible(str(stray))} is the project's own memory file; give the other one. Nothing was changed."
        )
    quiet = logging.getLogger("sentinel_memory")  # the reader's warning: fold's report counts them
    was, quiet.disabled = quiet.disabled, True
    try:
        other = OpenMemory(stray).read()
    finally:
        quiet.disabled = was
    if not other.records:
        count = len(other.unreadable)
        lines = (
            f" ({count} {'line that is not a record' if count == 1 else 'lines that are not records'})" if count else ""
        )
        raise InvalidInput(
            f"{visible(str(stray))} holds no memory records{lines}, so there is nothing to fold in; check that it "
            "is the other .context/memory_log.jsonl. Nothing was changed."
        )

    folder = Folded(stray, target, 0, 0, 0, 0).folder  # the stray's own .context/, if it has one
    set_aside = _lines_set_aside(folder)

    def change(snap: Snapshot) -> Snapshot | None:
        merged = merge_two_way(snap.records, other.records)
        put = [entry for rid, entry in merged.items() if snap.records.get(rid) is not entry]
        kept = set(lines_of(read_regular(str(target.parent / contextdir.QUARANTINE_FILE)) or b""))
        fresh = [line for line in set_aside if line not in kept]  # (a fold run again moves the rest)
        if not put and not fresh:
            return None
        new = snap.edited(put=put)
        new.unreadable = fresh  # the stray's quarantined lines join the project's, in the same write
        return new

    report = write(target, change)
    after = report.after or report.before
    changed = [rid for rid in other.records if after.records.get(rid) is not report.before.records.get(rid)]
    added = sum(rid not in report.before.records for rid in changed)
    copies = tuple(sorted(p.name for p in folder.glob("*.conflicted"))) if folder is not None else ()
    whole = not (report.set_aside_left_out or report.swallowed)  # else some stayed only in the stray's file
    return Folded(
        stray,
        target,
        len(other.records),
        added,
        len(changed) - added,
        len(other.unreadable),
        len(set_aside),
        copies,
        whole,
    )


def _lines_set_aside(folder: Path | None) -> list[bytes]:
    """The lines of a stray .context/ folder's quarantine file, as the store reads its own (no CR,
    no BOM, no blank line; a link or an oversized file is refused as the store refuses one)."""
    if folder is None:
        return []
    return lines_of(read_regular(str(folder / contextdir.QUARANTINE_FILE)) or b"")


@dataclass(frozen=True)
class TopicSummary:
    topic: str
    logs: int
    principles: int
    newest: str  # the newest updated/created stamp of its records


def _when(stamp: str) -> tuple[bool, int, str]:
    """A stamp's order among others: those read as a moment by that moment, after those that are
    not (a hand-written `2026/01/05` does not pass as newer than any date of this year)."""
    seconds = stamp_seconds(stamp)
    return seconds is not None, seconds or 0, stamp


def topics(records_: list[dict]) -> list[TopicSummary]:
    """Per topic, sorted by topic: how many logs and principles, and the newest stamp."""
    by_topic: dict[str, list[dict]] = {}
    for r in records_:
        by_topic.setdefault(topic_of(r) if r.get("topic") else "", []).append(r)
    out = []
    for topic in sorted(by_topic):
        members = by_topic[topic]
        logs, principles = count_types(members)
        newest = max((recency(r) for r in members), key=_when)
        out.append(TopicSummary(topic, logs, principles, newest))
    return out


@dataclass(frozen=True)
class Stats:
    file: Path
    records: int
    logs: int
    principles: int
    bytes: int
    estimated_tokens: int
    threshold: int
    unreadable_lines: int
    topics: list[TopicSummary]

    @property
    def over_threshold(self) -> int:
        return max(0, self.logs - self.threshold)

    @property
    def compaction_required(self) -> bool:
        return self.logs > self.threshold


def stats(where: Where, threshold: int = DEFAULT_THRESHOLD) -> Stats:
    memory = opened(where)
    snap = memory.read()
    logs, principles = snap.counts()
    path = memory.path
    size = path.stat().st_size if path.exists() else 0
    return Stats(
        path,
        len(snap.records),
        logs,
        principles,
        size,
        blocks.estimate_tokens(snap.text().decode("utf-8")),
        threshold,
        len(snap.unreadable),
        topics([e.record for e in snap.records.values()]),
    )


def _loose(text: object) -> str:
    """A text as a person would compare it: case, runs of spaces and a final full stop aside."""
    return " ".join(str(text).casefold().split()).rstrip(".!?。 ")


def refreshed(where: Where, topic: str, missing_context: str, principle: str | None = None) -> dict | None:
    """The record that logging this topic and missing context again would refresh (with `principle`,
    the principle of this topic and lesson), if any (its id is computed as log_memory computes it:
    after normalisation and redaction)."""
    draft = (
        prepare(topic, missing_context, "-") if principle is None else prepare(topic, "", principle, "", "principle")
    )
    entry = opened(where).read().records.get(draft.id)
    return entry.record if entry else None


def near_twins(where: Where, record: dict) -> list[dict]:
    """The other log records whose topic and missing context differ from this one's only by case,
    spacing or a final full stop: a refresh that made a new record instead."""
    key = (_loose(record.get("topic", "")), _loose(record.get("missing_context", "")))
    return [
        e.record
        for e in opened(where).read().records.values()
        if e.id != record.get("id")
        and not is_principle(e.record)
        and (_loose(e.record.get("topic", "")), _loose(e.record.get("missing_context", ""))) == key
    ]
