"""The .context/ directory around the memory file: created on the first write with its
.gitignore and .gitattributes, tidied of what a killed writer left, and the two side files a
write may add — the quarantine file for lines that are not records, and a copy of a conflicted
file (docs/contract.md §5). The bytes go to disk through disk.atomic_write.
"""

from __future__ import annotations

import os
import time
from contextlib import suppress
from pathlib import Path

from ..errors import StorageError
from ..values import Value
from .disk import Staged, atomic_write, is_temporary, read_regular
from .snapshot import lines_of

QUARANTINE_FILE = "memory_log.quarantine.jsonl"

GITIGNORE = """\
# Sentinel-Memory: the lock, temporary files and copies of conflicted files stay local.
*.lock
*.tmp
*.conflicted
"""
GITATTRIBUTES = """\
# Sentinel-Memory: LF endings, and the id-aware merge and readable diff where configured.
memory_log.jsonl text eol=lf merge=sentinel-memory diff=sentinel-memory
memory_log.quarantine.jsonl text eol=lf merge=union
"""
# Our lines as earlier versions wrote them -> as they are now (`init` brings them up to date in
# place): the quarantine file only ever gains lines, so two branches that each set lines aside
# merge by keeping both sides' (merge=union) instead of conflicting.
EARLIER_LINES = {"memory_log.quarantine.jsonl text eol=lf": "memory_log.quarantine.jsonl text eol=lf merge=union"}


def ours(context: str | os.PathLike) -> bool:
    """Whether `context` is a .context/ folder of ours (init or a write made it: its .gitattributes
    or .gitignore starts with our line) and not a link: a project set up before its first lesson."""
    if os.path.islink(context) or not os.path.isdir(context):
        return False
    for name in (".gitattributes", ".gitignore"):
        try:
            head = read_regular(os.path.join(context, name), 1 << 20)
        except StorageError:
            continue
        if head is not None and head.lstrip(b"\xef\xbb\xbf").startswith(_OUR_LINE):
            return True
    return False


_OUR_LINE = b"# Sentinel-Memory:"


def prepare(context: Path) -> None:
    """Create .context/ with its .gitignore and .gitattributes (those missing) on the first write."""
    try:
        if not os.path.isdir(context):
            Path(context).mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", GITIGNORE), (".gitattributes", GITATTRIBUTES)):
            target = os.path.join(context, name)
            if not os.path.exists(target):
                atomic_write(target, text.encode("utf-8"))
    except OSError as exc:
        raise StorageError(
            f"Could not create {context}: {exc.strerror or exc}. Nothing was saved; "
            "check that the project directory is writable."
        ) from exc


def ignored(context: str) -> None:
    """A .context/.gitignore that holds our patterns: one that a team wrote before a pattern existed
    (only `*.lock`) gets the missing ones added at its end; a missing one is made. One that is not a
    regular file of ours (a link) is left alone; the pre-commit check still refuses a conflicted
    copy (setup/staged.py)."""
    target = os.path.join(context, ".gitignore")
    try:
        existing = read_regular(target, 1 << 20)
    except StorageError:
        return
    if existing is None:
        prepare(Path(context))
        return
    have = {line.strip() for line in existing.decode("utf-8", "replace").splitlines()}
    missing = [line for line in GITIGNORE.splitlines()[1:] if line not in have]
    if missing:
        start = existing if not existing or existing.endswith(b"\n") else existing + b"\n"
        with suppress(OSError):
            atomic_write(target, start + (GITIGNORE.splitlines()[0] + "\n" + "\n".join(missing) + "\n").encode())


def tidy(memory_file: str) -> None:
    """With one listing of .context/: delete the temporary files a killed writer left behind, and
    put back a .gitignore or .gitattributes that went missing. Call it under the lock: only then
    can no other writer of this file have a temporary file open (they exist only under the lock)."""
    context, name = os.path.split(memory_file)
    try:
        names = os.listdir(context)
    except OSError:
        names = []
    stem = name.split(".")[0]  # the memory file's and the quarantine file's temporary files alike
    for other in names:
        if is_temporary(other, stem) or (
            other.startswith((".gitignore.", ".gitattributes."))
            and other.endswith(".tmp")
            and _older_than(os.path.join(context, other), 60)
        ):
            # (.gitignore and .gitattributes are also written outside the lock, by `init` and by the
            # first write: only a temporary file a minute old is surely a killed writer's.)
            with suppress(OSError):
                os.unlink(os.path.join(context, other))
    if ".gitignore" not in names or ".gitattributes" not in names:
        prepare(Path(context))


def _older_than(path: str, seconds: float) -> bool:
    try:
        return time.time() - os.lstat(path).st_mtime > seconds
    except OSError:
        return False


# Bytes of lines that are not records one write redacts into the quarantine file, at most: the
# first lines in the file's order up to this many. The rules read ordinary text at about 1 MB a
# second, but text made of random key=value-like runs (a corrupted or crafted file) at tens of KB:
# 2 MB of it held a write, and the lock, for minutes. The lines past it stay out of the quarantine
# file, and the file as it was is kept aside, as a copy of a conflicted file is (docs/contract.md
# §5.4).
REDACTED_PER_WRITE = 128 << 10


class Quarantined(Value):
    """What a write sets aside of the lines that are not records."""

    __slots__ = ("lines", "redacted", "staged", "whole", "past_bound")

    def __init__(self, lines: int, redacted: int, staged: Staged | None, whole: bool, past_bound: int) -> None:
        self.lines = lines  # moved to the quarantine file (redacted)
        self.redacted = redacted  # credential values redacted in them
        self.staged = staged  # the quarantine file with them appended, or None when nothing is new
        self.whole = whole  # every line came through the redaction as a line of its own (redacted_lines)
        self.past_bound = past_bound  # lines past REDACTED_PER_WRITE: not in the quarantine file


def quarantine(context: str, lines: list[bytes]) -> Quarantined:
    """The quarantine file with the lines not already kept appended, staged (not yet in place):
    the first lines up to REDACTED_PER_WRITE bytes, redacted."""
    target = os.path.join(context, QUARANTINE_FILE)
    # A NUL an earlier version kept there is written as redacted_lines writes it.
    existing = (read_regular(target) or b"").replace(b"\0", b"\\u0000")
    known = set(lines_of(existing))
    taken, size = 0, 0
    for line in lines:
        size += len(line) + 1
        if size > REDACTED_PER_WRITE:
            break
        taken += 1
    past, lines = len(lines) - taken, lines[:taken]
    cleaned, redacted, whole = redacted_lines(lines) if lines else ([], 0, True)
    fresh = []
    for clean in cleaned:
        if clean.strip() and clean not in known:
            fresh.append(clean)
            known.add(clean)
    if not fresh:
        return Quarantined(len(lines), redacted, None, whole, past)
    if existing and not existing.endswith(b"\n"):
        existing += b"\n"
    staged = Staged(target, existing + b"".join(line + b"\n" for line in fresh))
    return Quarantined(len(lines), redacted, staged, whole, past)


def redacted_lines(lines: list[bytes]) -> tuple[list[bytes], int, bool]:
    """Lines that are not records, redacted before they reach the tracked quarantine file: (the
    lines, the values redacted, whether as many lines came out as went in). They are redacted
    together, as one text, in their order (repeats included: a second key's BEGIN line starts its
    own block), so a value that spans lines (a pasted PEM block, however its lines are quoted) goes
    whole; an unfinished block is redacted to the end of the text, the lines after it with it (then
    fewer lines come out: the caller keeps the lines as they were in a git-ignored copy). Bytes that
    are not UTF-8 go back out as they came in (surrogateescape); a NUL byte as `\\u0000` (git takes
    a file holding one for binary, and its union merge of the quarantine file, which keeps both
    branches' lines, would stop with a conflict)."""
    from ..redaction import redact  # only when there is something to redact (building its rules takes time)

    text, redacted = redact("\n".join(line.decode("utf-8", "surrogateescape") for line in lines))
    out = [part.encode("utf-8", "surrogateescape").replace(b"\0", b"\\u0000") for part in text.split("\n")]
    return out, redacted, len(out) == len(lines)


def conflicted_copy(memory_file: str, data: bytes) -> Staged:
    """A copy of a file with conflict markers, staged to be kept aside (git-ignored) when it is
    replaced by its merge: <name>.<time>.conflicted, or <name>.<time>-2.conflicted and so on. It
    holds the file's bytes as they were, so `.context/.gitignore` is made to ignore it first
    (ignored)."""
    ignored(os.path.dirname(memory_file))
    path, stamp = Path(memory_file), time.strftime("%Y%m%dT%H%M%S")
    candidate, n = path.with_name(f"{path.name}.{stamp}.conflicted"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{n}.conflicted")
    return Staged(candidate, data)
