"""`fold`: bring a stray memory file (one a session wrote in a subfolder before the server looked
for the project's root, or one copied from elsewhere) into the project's memory, merged by id."""

from __future__ import annotations

from pathlib import Path

from .errors import InvalidInput
from .install import SELF
from .merge import merge_two_way
from .render import plural
from .store import memory_path, read, update


def stray_path(root: Path, given: str) -> Path:
    """The memory file `given` names: the file itself, or a folder holding .context/memory_log.jsonl.
    A relative path is taken from the project's root (doctor prints them that way) or, failing
    that, from the current directory."""
    candidates = [Path(given)] if Path(given).is_absolute() else [root / given, Path.cwd() / given]
    for candidate in candidates:
        for path in (candidate, memory_path(candidate)):
            if path.is_file():
                return path.resolve()
    raise InvalidInput(f"{given!r} is neither a memory file nor a folder with .context/memory_log.jsonl. "
                       "Nothing was changed.")


def fold(root: Path, given: str) -> list[str]:
    """Merge the stray file's records into the project's memory (two-way: nothing is known to be
    deleted, so every id is kept, the newer version of an id shared by both) in one locked write.
    The stray file is left as it is. Returns the lines to print."""
    target = memory_path(root).resolve()
    stray = stray_path(root, given)
    if stray == target:
        raise InvalidInput(f"{stray} is the project's own memory file; give the other one. Nothing was changed.")
    other = read(stray)
    counts = {"added": 0, "updated": 0}

    def change(snap):
        merged = merge_two_way(snap.records, other.records)
        put = [entry for rid, entry in merged.items() if snap.records.get(rid) is not entry]
        counts["added"] = sum(rid not in snap.records for rid in (e.id for e in put))
        counts["updated"] = len(put) - counts["added"]
        return snap.edited(put=put) if put else None

    update(target, change)
    same = len(other.records) - counts["added"] - counts["updated"]
    lines = [f"folded {plural(len(other.records), 'record')} of {stray} into {target}: {counts['added']} added, "
             f"{counts['updated']} updated (the newer version), {same} already there"]
    if other.unreadable:
        lines.append(f"{plural(len(other.unreadable), 'line')} of {stray} {'is' if len(other.unreadable) == 1 else 'are'} "
                     "not a record and stayed there: look at them before deleting the file")
    lines.append(f"review with `git diff -- {target}`; then delete {stray.parent} (git rm -r it if it was committed). "
                 f"`{SELF} doctor` no longer lists it once it is gone.")
    return lines


def cmd_fold(root, args) -> int:
    for line in fold(root.path, args.file):
        print(line)
    return 0
