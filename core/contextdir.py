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

from .disk import atomic_write, is_temporary
from .errors import StorageError
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
memory_log.quarantine.jsonl text eol=lf
"""


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
        if is_temporary(other, stem):
            with suppress(OSError):
                os.unlink(os.path.join(context, other))
    if ".gitignore" not in names or ".gitattributes" not in names:
        prepare(Path(context))


def quarantine(context: str, lines: list[bytes]) -> tuple[int, int]:
    """Append lines not already kept to the quarantine file (atomically), each with its credentials
    redacted: the file is tracked, and a broken line may hold a key. Returns (lines, values redacted)."""
    from .sanitizer import redact  # only when there is something to quarantine (its patterns compile on import)

    target = Path(context) / QUARANTINE_FILE
    try:
        existing = target.read_bytes()
    except FileNotFoundError:
        existing = b""
    known = set(lines_of(existing))
    redacted = 0
    fresh = []
    for line in dict.fromkeys(lines):
        # surrogateescape: bytes that are not UTF-8 go back out exactly as they came in.
        text, count = redact(line.decode("utf-8", "surrogateescape"))
        clean = text.encode("utf-8", "surrogateescape")
        if clean not in known:
            fresh.append(clean)
            known.add(clean)
            redacted += count
    if fresh:
        if existing and not existing.endswith(b"\n"):
            existing += b"\n"
        atomic_write(target, existing + b"".join(line + b"\n" for line in fresh))
    return len(lines), redacted


def keep_conflicted(memory_file: str, data: bytes) -> Path:
    """Copy a file with conflict markers aside (git-ignored) before it is replaced by its merge:
    <name>.<time>.conflicted, or <name>.<time>-2.conflicted and so on when that is taken."""
    path, stamp = Path(memory_file), time.strftime("%Y%m%dT%H%M%S")
    candidate, n = path.with_name(f"{path.name}.{stamp}.conflicted"), 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{stamp}-{n}.conflicted")
    atomic_write(candidate, data)
    return candidate
