"""`doctor`: check the install, the project root, the memory file, the git wiring and the client
config, and say what to fix. Read-only."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

from ..errors import MemoryToolError
from ..git import command as gitcmd, drivers as gitdriver
from ..invocation import ENTRY, SELF
from ..record.contextdir import QUARANTINE_FILE, REDACTED_PER_WRITE
from ..record.merge import merge_three_way
from ..record.records import LIMITS
from ..record.snapshot import parse, read_as_utf16
from ..record.store import memory_path, read
from ..tools.render import plural
from . import precommit
from .clientcheck import FAIL, OK, WARN, client_configs, hook_files, looks_like_path
from .clienttrust import trust_lines
from .project import ProjectRoot, enclosing_project
from .scan import ENOUGH, scan

# Folders not searched for stray memory files outside git (dependencies, environments, builds).
SKIP_DIRS = {"node_modules", ".venv", "venv", "env", "__pycache__", "build", "dist", "target", ".tox", ".git"}
STRAY_SEARCH_LIMIT = 20_000  # directories visited at most outside git


def check(root: ProjectRoot) -> list[tuple[str, str]]:
    """(status, sentence) pairs, in the order a person would fix them."""
    out: list[tuple[str, str]] = []
    missing = [m for m in ("fastmcp", "filelock") if importlib.util.find_spec(m) is None]
    out.append(
        (FAIL, f"{', '.join(missing)} not installed for {sys.executable}: pip install -r requirements.txt")
        if missing
        else (OK, f"install: {sys.executable} has fastmcp and filelock")
    )
    if not missing:
        from ..faststart.cache import status  # standard library only

        fixable, sentence = status(["--project", str(root.path)])
        out.append((WARN if fixable else OK, sentence))
    if root.guarded:
        out.append(
            (
                FAIL,
                f"project root {root.path} is the home directory or a filesystem root: run in the project "
                "or pass --project DIR",
            )
        )
        return out  # the checks below are about a project; the home's projects each have their own
    else:
        out.append((OK, f"project root {root.path} (from {root.describe()})"))
    out += _memory_file(root.memory_file)
    out += _strays(root.path)
    above = enclosing_project(root.path)
    if above is not None:
        out.append(
            (
                WARN,
                f"{root.memory_file} is below {above}, which has a memory file of its own: run "
                f"`{SELF} fold {root.path.relative_to(above)}` in {above} to bring these records there, "
                "then delete this .context/ folder",
            )
        )
    out += _git(root.path, root.memory_file)
    active, sentence = precommit.status(root.path)
    if active is not None:
        out.append((OK if active else WARN, sentence))
    hooks, unstartable, hooked = hook_files(root.path)
    configured: set[str] = set()
    out += client_configs(root.path, unstartable, configured)
    out += hooks
    out += trust_lines(root.path, configured | hooked, hooked)
    return out


def _memory_file(path: Path) -> list[tuple[str, str]]:
    if not os.path.lexists(path):
        return [(OK, f"memory file {path} does not exist yet (created on the first log)")]
    try:
        snap = read(path)
    except MemoryToolError as exc:  # a folder, a link, a FIFO, too big: the other checks still run
        return [(FAIL, str(exc))]
    out = [(OK, f"memory file {path}: {plural(len(snap.records), 'record')}")]
    if snap.unreadable:
        out.append(
            (
                WARN,
                f"{plural(len(snap.unreadable), 'unreadable line')}: the next write moves them to the quarantine file"
                + (
                    f" (the first {REDACTED_PER_WRITE >> 10} KiB of them; the rest it keeps in a git-ignored copy of "
                    "the file as it was)"
                    if sum(len(line) + 1 for line in snap.unreadable) > REDACTED_PER_WRITE
                    else ""
                ),
            )
        )
    if snap.conflict_regions:
        out.append(
            (
                WARN,
                f"{plural(snap.conflict_regions, 'git conflict region')}: readable as merged; the next "
                f"write stores the merge (or run the merge driver setup: {SELF} init)",
            )
        )
    if snap.duplicates:
        out.append((WARN, f"{plural(snap.duplicates, 'duplicate id')}: the next write keeps the newer of each"))
    if read_as_utf16(snap.raw):
        out.append(
            (
                WARN,
                "the file is UTF-16 (what Windows PowerShell 5.1's `>` writes), which git shows as binary: "
                "its records are read, and the next write stores it as UTF-8",
            )
        )
    elif not snap.unreadable and not snap.conflict_regions and snap.text() != snap.raw:
        out.append(
            (WARN, "the file is not in canonical form (order, BOM, CRLF or spacing): the next write normalises it")
        )
    over = sum(
        any(
            isinstance(e.record.get(k), str) and len(e.record[k].encode("utf-8", "surrogatepass")) > n
            for k, n in LIMITS.items()
        )
        for e in snap.records.values()
    )
    if over:
        out.append(
            (
                WARN,
                f"{plural(over, 'record')} {'exceeds' if over == 1 else 'exceed'} a byte limit "
                "(edited by hand?): shorten them",
            )
        )
    try:
        secrets = scan(path, limit=ENOUGH)
    except MemoryToolError as exc:  # the quarantine file a link, a FIFO, too big: the other checks still run
        return [*out, (FAIL, str(exc))]
    if secrets:
        counted = f"more than {ENOUGH} values" if len(secrets) > ENOUGH else plural(len(secrets), "value")
        out.append(
            (
                FAIL,
                f"{counted} with the shape of a credential: run {SELF} scan --redact, and rotate the keys",
            )
        )
    out += _merge_in_progress(path, snap)
    return out


def _merge_in_progress(path: Path, snap) -> list[tuple[str, str]]:
    """While git is merging the file its index holds base, ours and theirs: compare with the file."""
    stages = gitdriver.index_stages(path)
    if stages is None:
        return []
    base, ours, theirs = (parse(blob) for blob in stages)
    merged = merge_three_way(base.records, ours.records, theirs.records)
    lost = len(merged.keys() - snap.records.keys())
    redo = (
        f"run {SELF} init, then `git checkout -m -- {path.name}` in {path.parent} to redo the merge by id, "
        "then git add it"
    )
    if lost:
        return [
            (
                FAIL,
                f"git is merging {path.name} and the file lacks {plural(lost, 'record')} that merging both sides keeps "
                f"(a merge driver that did not run leaves one side): {redo}",
            )
        ]
    return [(WARN, f"git is merging {path.name} (unmerged in the index): when it reads right, git add it; or {redo}")]


def _git(root: Path, memory: Path) -> list[tuple[str, str]]:
    if gitdriver.git_dir(root) is None:
        return [(WARN, "not a git work tree: the memory is not shared until the project is in git")]
    out = []
    routed = _attributes(root, memory)
    if routed != {"merge": gitdriver.DRIVER, "diff": gitdriver.DRIVER}:
        shown = ", ".join(f"{k}={v}" for k, v in routed.items())
        out.append(
            (
                WARN,
                f"git does not route {memory.name} to the drivers ({shown}): run {SELF} init and "
                "commit .context/.gitattributes",
            )
        )
    elif _attributes(root, memory.with_name(QUARANTINE_FILE)).get("merge") != "union":
        out.append(
            (
                WARN,
                f"git merges {QUARANTINE_FILE} as text, so two branches that each set lines aside conflict: "
                f"run {SELF} init (it brings .context/.gitattributes up to date) and commit it",
            )
        )
    config = gitdriver.current_config(root)
    wanted = gitdriver.driver_commands(*ENTRY)
    for key, what in (
        (f"merge.{gitdriver.DRIVER}.driver", "merge driver"),
        (f"diff.{gitdriver.DRIVER}.textconv", "diff textconv"),
    ):
        command = config.get(key)
        if not command:
            out.append((WARN, f"the git {what} is not configured here: run {SELF} init (or let the server run once)"))
            continue
        words = _entry_words(command)
        missing = [w for w in words if looks_like_path(w) and not Path(w).exists()]
        if not words or missing:
            out.append(
                (
                    FAIL,
                    f"the git {what} points at {' '.join(missing) or command!r}, which does not exist: "
                    f"run {SELF} init from the current install",
                )
            )
        elif command != wanted[key]:
            out.append(
                (
                    WARN,
                    f"the git {what} runs another install ({' '.join(words)}), not this one's command: run {SELF} init "
                    "(the MCP server also refreshes it when it starts here)",
                )
            )
        else:
            out.append((OK, f"the git {what} calls {' '.join(words[1:] if len(words) > 1 else words)}"))
    return out


def _entry_words(command: str) -> list[str]:
    """The words of a driver command before its subcommand: what starts the install."""
    try:
        words = shlex.split(command.split(";", 1)[0].split("||", 1)[0])
    except ValueError:
        return []
    cut = next((i for i, w in enumerate(words) if w in ("merge-driver", "textconv")), None)
    return words[:cut] if cut else []


def _strays(root: Path) -> list[tuple[str, str]]:
    """Memory files in folders below the project: a session started in a subfolder before the
    server looked for the project's root. Each is folded in with `fold`."""
    out = []
    for path in sorted(_nested_memory_files(root)):
        if path.is_symlink() or path.parent.is_symlink():  # fold refuses links; a clone may hold one to anywhere
            out.append(
                (
                    WARN,
                    f"another memory file below the project, {path}, is a symbolic link (or in a linked "
                    f".context/ folder), which `{SELF} fold` does not follow: delete the link, or replace it "
                    "with a copy of the file if its records are yours to fold in",
                )
            )
            continue
        out.append(
            (
                WARN,
                f"another memory file below the project, {path}: its records are not in the project's memory. "
                f"Fold them in with `{SELF} fold {path.relative_to(root)}` (merged by id, the newer of each "
                "kept), then delete that .context/ folder",
            )
        )
    return out


def _nested_memory_files(root: Path):
    """Memory files below root, the project's own excluded: in git, every file git sees (tracked
    or untracked, not ignored; submodules and nested repositories are projects of their own);
    elsewhere a bounded walk that skips dependency and build folders."""
    own = memory_path(root).resolve()
    if gitdriver.git_dir(root) is not None:
        try:
            result = gitcmd.run(
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                ":(glob)**/.context/memory_log.jsonl",
                cwd=root,
            )
            if result.returncode == 0:
                for name in dict.fromkeys(result.stdout.decode("utf-8", "replace").split("\0")):
                    path = root / name if name else None  # as it is below the project, a link not followed
                    if path is not None and path.resolve() != own and path.is_file():
                        yield path
                return
        except (OSError, subprocess.SubprocessError):
            pass
    visited = 0
    for directory, subdirs, _files in os.walk(root):
        visited += 1
        if visited > STRAY_SEARCH_LIMIT:
            return
        subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and (d == ".context" or not d.startswith("."))]
        candidate = Path(directory) / ".context" / "memory_log.jsonl"
        if ".context" in subdirs and candidate.resolve() != own and candidate.is_file():
            yield candidate


def _attributes(root: Path, path: Path) -> dict[str, str]:
    """The merge and diff attributes git applies to a file of .context/ (`git check-attr`)."""
    try:
        result = gitcmd.run(
            "check-attr", "merge", "diff", "--", str(path.relative_to(root)), cwd=root, text=True, timeout=10
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    pairs = (line.rsplit(": ", 2)[1:] for line in result.stdout.splitlines() if line.count(": ") >= 2)
    return {attr: value for attr, value in pairs}
