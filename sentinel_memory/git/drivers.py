"""Git integration: the id-aware merge driver, the readable diff textconv, and their wiring in a
repository's local config. Starts fast: no FastMCP, only the stdlib and this package's own modules."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from ..record.disk import atomic_write
from ..record.merge import merge_three_way
from ..record.snapshot import Snapshot, parse, utf8
from ..visible import visible, visible_record
from . import command as gitcmd, history

DRIVER = "sentinel-memory"
TEXT_MERGE_LABELS = ("-L", "ours", "-L", "base", "-L", "theirs")


def merge_driver(base: str, ours: str, theirs: str, name: str = "") -> int:
    """git's merge driver (%O %A %B %P): merge by id into `ours`; 0 when merged cleanly.

    When an input cannot be parsed (unreadable lines, conflict markers) or the merge itself
    fails, fall back to git's own three-way text merge, which writes conflict markers (with the
    base section) into `ours` — never leaving only one side in the file. A side in UTF-16 is
    first rewritten as the UTF-8 its readers see (git's text merge takes UTF-16 for binary)."""
    try:
        data = [_side(p) for p in (base, ours, theirs)]
        for n, (path, side) in enumerate(zip((base, ours, theirs), data, strict=True)):
            text = utf8(side)
            if text is not side:  # UTF-16 (PowerShell's `>`): merged as the text every reader reads
                atomic_write(Path(path), text)
                data[n] = text
    except _TooBig as exc:  # too big to read as records: both sides whole, copied, never only one
        print(
            f"sentinel-memory: merge-driver: {exc}; writing both sides whole between conflict markers", file=sys.stderr
        )
        return _conflict_or_say(base, ours, theirs, name)
    except OSError as exc:  # not what git gives a driver: nothing to merge, `ours` left as it is
        print(f"sentinel-memory: merge-driver: {exc}; nothing was merged", file=sys.stderr)
        return 1
    try:
        sides = [_parse_quietly(side) for side in data]
        if not any(s.unreadable or s.conflict_regions for s in sides):
            records = merge_three_way(sides[0].records, sides[1].records, sides[2].records)
            atomic_write(Path(ours), Snapshot(records=records).text())
            _say_twin_additions(name or ours, sides[0].records, sides[1].records, sides[2].records)
            return 0
        why = "has lines that are not records"
    except Exception as exc:  # any failure: git's text merge still keeps both sides
        why = f"could not be merged by id ({type(exc).__name__}: {exc})"
    print(f"sentinel-memory: {name or ours} {why}; using git's text merge", file=sys.stderr)
    try:  # -p: the result on stdout, saved atomically, so `ours` is whole until then
        result = subprocess.run(
            gitcmd.argv("merge-file", "-p", "--diff3", *TEXT_MERGE_LABELS, ours, base, theirs),
            env=gitcmd.environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            timeout=gitcmd.TIMEOUT,
        )
        merged = 0 <= result.returncode < 128  # the number of conflicts; 255: git refused (binary input)
        if merged:
            atomic_write(Path(ours), result.stdout)
    except (OSError, subprocess.TimeoutExpired):  # past the bound: `ours` untouched, both sides whole below
        merged = False
    if merged:
        return 1 if result.returncode else 0
    print(
        f"sentinel-memory: git's text merge refused {name or ours} too; writing both sides whole "
        "between conflict markers",
        file=sys.stderr,
    )
    return _conflict_or_say(base, ours, theirs, name)


def _conflict_or_say(base: str, ours: str, theirs: str, name: str) -> int:
    """_whole_sides_conflict, or, when the file cannot be written (a full disk), one sentence: git
    keeps the merge unfinished and every side stays in its history. Exit 1 either way (a conflict)."""
    try:
        _whole_sides_conflict(base, ours, theirs)
    except OSError as exc:
        print(
            f"sentinel-memory: could not write the merged {name or ours} ({exc.strerror or exc}); both sides are "
            "still in git: free the space, then `git merge --abort` and merge again",
            file=sys.stderr,
        )
    return 1


TWINS_SAID = 5  # records added on both sides that the merge names one by one; the rest are counted


def _say_twin_additions(name: str, base, ours, theirs) -> None:
    """On stderr, which git shows the person merging: the records both sides added under one id
    (the same topic and missing context) with different lessons or questions. They merge as a
    change on both sides, the newer side's text winning (docs/contract.md §8.2), so one teammate's
    lesson is no longer in the file; the history still holds it."""
    twins = [
        rid
        for rid in sorted((ours.keys() & theirs.keys()) - base.keys())
        if any(ours[rid].record.get(k) != theirs[rid].record.get(k) for k in ("lesson", "ask_next_time"))
    ]
    for rid in twins[:TWINS_SAID]:
        topic = visible(str(ours[rid].record.get("topic", "")))
        print(
            f"sentinel-memory: {name}: both sides added record {rid} (topic {topic!r}, the same missing context) "
            "with different lessons; the newer one's text was kept, the other's stays in the history "
            "(`review` on the merge shows it as changed)",
            file=sys.stderr,
        )
    if len(twins) > TWINS_SAID:
        print(f"sentinel-memory: {name}: and {len(twins) - TWINS_SAID} more records both sides added", file=sys.stderr)


def _whole_sides_conflict(base: str, ours: str, theirs: str) -> None:
    """Write into `ours` one diff3 conflict region holding every side whole, byte for byte, so a
    merge never ends with one side only: the loader merges the records of the three sides exactly
    (docs/contract.md §5.5) and sets aside what is not a record. Each side is copied a chunk at a
    time (one may be over the bound a reader keeps), into a file beside `ours` that replaces it."""
    import tempfile

    from ..record.disk import MAX_FILE_BYTES

    target = Path(ours)
    # A base over the bound is left out (two-way markers, which the loader also reads): the sides
    # are what must not be lost, and a base alone must not make the result too big to read.
    fd, size = _open_side(base)
    os.close(fd)
    parts = [(b"<<<<<<< ours\n", ours), (b"||||||| base\n", base), (b"=======\n", theirs)]
    if size > MAX_FILE_BYTES:
        del parts[1]
    fd, staged = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            for mark, path in parts:
                out.write(mark)
                if _copy_side(path, out) not in (b"", b"\n"):
                    out.write(b"\n")
            out.write(b">>>>>>> theirs\n")
            out.flush()
            os.fsync(out.fileno())
        os.chmod(staged, os.stat(target).st_mode & 0o7777)  # (mkstemp's file is 0600; keep ours' mode)
        os.replace(staged, target)
    except BaseException:
        try:
            os.unlink(staged)
        except OSError:
            pass
        raise


class _TooBig(OSError):
    """A side over the bound every reader of the memory keeps (a regular file all the same)."""


def _open_side(path: str) -> tuple[int, int]:
    """A descriptor of a file git hands a driver, and its size; OSError naming the path when it is
    missing, a folder, a FIFO or a device (which would block or never end)."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd, info.st_size


def _copy_side(path: str, out) -> bytes:
    """Copy one side into `out`, a chunk at a time; its last byte (b"" when it is empty)."""
    fd, _size = _open_side(path)
    last = b""
    try:
        while chunk := os.read(fd, 1 << 20):
            out.write(chunk)
            last = chunk[-1:]
    finally:
        os.close(fd)
    return last


def _side(path: str) -> bytes:
    """The bytes of a file git hands a driver (a regular file it wrote, or one a link leads to);
    OSError naming the path when it is missing, a folder, a FIFO or a device, and _TooBig when it
    is over the bound every reader of the memory keeps."""
    from ..record.disk import MAX_FILE_BYTES

    fd, size = _open_side(path)
    try:
        if size > MAX_FILE_BYTES:
            raise _TooBig(f"{path} is {size:,} bytes, over the {MAX_FILE_BYTES:,} a memory file may hold")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def textconv(path: str, out=None) -> int:
    """Print the memory file as one readable block per record, for `git diff`."""
    out = out or sys.stdout.buffer
    try:
        data = _side(path)
    except OSError as exc:
        print(f"sentinel-memory: textconv: {exc}", file=sys.stderr)
        return 1
    snap = _parse_quietly(data)
    blocks = [readable_block(snap.records[rid].record) for rid in sorted(snap.records)]
    blocks += [f"UNREADABLE LINE: {visible(raw.decode('utf-8', 'replace'))}\n" for raw in snap.unreadable]
    # A review must see what the blocks alone would hide: markers or duplicates in the file itself.
    if snap.duplicates:
        lines = _counted(snap.duplicates, "extra line")
        blocks.insert(0, f"DUPLICATE IDS IN THE FILE: {lines}, the newer of each shown\n")
    if snap.conflict_regions:
        regions = _counted(snap.conflict_regions, "region")
        blocks.insert(0, f"GIT CONFLICT MARKERS IN THE FILE: {regions}, shown merged by id\n")
    out.write("\n".join(blocks).encode("utf-8"))
    out.flush()
    return 0


def _parse_quietly(data: bytes) -> Snapshot:
    """parse() without the readers' warning about lines that are not records: it speaks of the
    memory file and its next write, and here git's copies of a revision are read (a warning for
    each revision `git log -p` shows). The textconv shows such lines, the driver says what it does."""
    logger = logging.getLogger("sentinel_memory")
    was, logger.disabled = logger.disabled, True
    try:
        return parse(data)
    finally:
        logger.disabled = was


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def readable_block(record: dict) -> str:
    """A record as `git diff` and `show` print it for a person: control, BiDi and zero-width
    characters as visible escapes (visible.py); a free-text field's line breaks kept, indented."""
    cited = record.get("files")
    record = visible_record(record)
    lines = [f"[{record.get('topic', '')}] {record.get('type', 'log')} {record['id']}"]
    for key, value in record.items():
        if key in ("id", "topic", "type"):
            continue
        if key == "files" and isinstance(cited, list):
            # JSON's own escapes for a name holding a control character, as contract §3.7 shows
            # them (escaping an escape would name another file)
            lines.append(f"  files: {visible(json.dumps(cited, ensure_ascii=False))}")
            continue
        if key == "meta" and isinstance(value, dict):
            lines += [f"  {k}: {visible(str(v))}" for k, v in value.items()]
            continue
        shown = value if isinstance(value, str) else visible(json.dumps(value, ensure_ascii=False))
        lines.append(f"  {key}: {shown}".rstrip().replace("\n", "\n    "))
    return "\n".join(lines) + "\n"


def index_stages(path: Path) -> tuple[bytes, bytes, bytes] | None:
    """(base, ours, theirs) of a file git is merging right now (`git ls-files -u` stages 1-3),
    or None when no merge of it is in progress. A missing base (both sides added) is empty."""
    path = Path(path)
    try:
        listing = gitcmd.run("ls-files", "-u", "-z", "--", path.name, cwd=path.parent, timeout=10)
        if listing.returncode != 0 or not listing.stdout:
            return None
        blobs = {}
        for item in listing.stdout.split(b"\0"):
            if item:
                _mode, sha, stage = item.split(b"\t", 1)[0].split()
                blobs[int(stage)] = sha.decode()
        if 2 not in blobs or 3 not in blobs:
            return None

        def blob(stage: int) -> bytes:
            if stage not in blobs:
                return b""
            return gitcmd.run("cat-file", "blob", blobs[stage], cwd=path.parent, timeout=10, check=True).stdout

        return blob(1), blob(2), blob(3)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def quote(arg: str) -> str:
    """Quote one word for the shell git runs drivers with (sh, also on Git for Windows)."""
    arg = arg.replace("\\", "/") if os.name == "nt" else arg
    return "'" + arg.replace("'", "'\\''") + "'"


def driver_commands(*command: str) -> dict[str, str]:
    """The local git config entries that wire the drivers to this install, started by `command`
    (`python server.py` from a checkout, the `sentinel-memory` executable when installed).

    git runs both through sh. Each command carries its own fallback for the day the install
    moves or its interpreter disappears, because git on its own would then keep only our side of
    a merge (a failed driver's %A is taken as the result) and stop every `git diff`, `git log -p`
    and `git show` ("unable to read files to diff"). So the merge falls back to git's text merge
    with diff3 markers, which the loader resolves exactly, and the diff to the raw lines.
    Our merge driver itself exits 0 (merged) or 1 (conflict, markers written): anything else
    means it did not run. The fallback's words are the same for every install and however init
    was started (the committed configs put `sentinel-memory` on every teammate's PATH), so no way
    of starting rewrites another's config. `--` ends the options: a path git passes may start
    with a dash (a project in a folder named `-app`)."""
    # abspath, not resolve: a venv's python is a symlink that must not be followed out of the venv.
    run = " ".join(quote(os.path.abspath(word) if _is_path(word) else word) for word in command)
    text_merge = " ".join(["git merge-file --diff3", *TEXT_MERGE_LABELS, "%A %O %B"])
    return {
        f"merge.{DRIVER}.name": "Sentinel-Memory id-aware merge of .context/memory_log.jsonl",
        f"merge.{DRIVER}.driver": (
            f"{run} merge-driver -- %O %A %B %P; s=$?; [ $s -le 1 ] && exit $s; "
            f"echo \"sentinel-memory: the merge driver did not run (exit $s); using git's text merge. "
            f'Run sentinel-memory doctor (or server.py doctor in its checkout)" >&2; {text_merge}'
        ),
        # git appends the file as "$@": our textconv gets it as $1, the fallback `cat` as "$@".
        f"diff.{DRIVER}.textconv": f'{run} textconv -- "$1" || cat',
    }


def _is_path(word: str) -> bool:
    """A word of the command that names a file (made absolute), not an option or a module name."""
    return os.sep in word or "/" in word or word.endswith(".py")


def git_dir(root: Path) -> Path | None:
    """The repository's git directory for a work tree at or above root, or None outside git.
    For a linked work tree (`git worktree add`) it is the main one's, where the config lives."""
    try:
        result = gitcmd.run("rev-parse", "--absolute-git-dir", cwd=root, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    directory = Path(result.stdout.strip())
    # A linked work tree's git directory names the common one in its `commondir` file (read as a
    # regular file only: a FIFO there is not waited on).
    common = (history.read_small(str(directory / "commondir")) or "").strip()
    return (directory / common).resolve() if common else directory


def current_config(root: Path) -> dict[str, str]:
    try:
        result = gitcmd.run(
            "config", "--local", "--get-regexp", rf"^(merge|diff)\.{DRIVER}\.", cwd=root, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    pairs = (line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    return {key: value for key, value in pairs}


def configure(root: Path, *command: str) -> list[str]:
    """Write the driver entries into the repository's local config where they differ.
    Returns the keys that were changed (empty when already right or not in a git work tree)."""
    if git_dir(root) is None:
        return []
    wanted, have = driver_commands(*command), current_config(root)
    changed = []
    for key, value in wanted.items():
        if have.get(key) != value:
            gitcmd.run("config", "--local", key, value, cwd=root, check=True, timeout=10)
            changed.append(key)
    return changed


def ensure_configured(root: Path, *command: str) -> None:
    """Cheap refresh for the server: configure when the repository's config lacks this install.
    Failures are logged, never raised: the memory works without the drivers."""
    directory = git_dir(root)
    if directory is None:
        return
    config = history.read_small(str(directory / "config")) or ""
    if all(value in config or _escaped(value) in config for value in driver_commands(*command).values()):
        return
    try:
        configure(root, *command)
    except (OSError, subprocess.SubprocessError) as exc:
        print(f"sentinel-memory: could not configure git drivers in {root}: {exc}", file=sys.stderr)


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
