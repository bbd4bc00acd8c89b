"""The guard at the door: a git pre-commit check that refuses a commit whose staged .context/
holds a credential (docs/contract.md §6), so a key that reached the memory file by hand, from an
older install or a teammate's tool stops before it is in git's history for good.

`init` installs it as a marked section of the clone's pre-commit hook (in core.hooksPath when
that is set and inside the git folder), next to the checks a hook already runs, keeping every byte
of it. A hook it cannot safely extend is left byte for byte, with what to add said instead: a
compiled program or a script in another language; a hook the team shares (a hooks folder in the
work tree, a link to a tracked script), which must not carry this machine's paths; and a hook
manager's (the pre-commit framework: the `sentinel-memory-scan` hook this repository ships in
.pre-commit-hooks.yaml; husky: a line in .husky/pre-commit; lefthook: a command in lefthook.yml).
`doctor` reports which.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from ..git import command as gitcmd, drivers, history
from ..record.contextdir import QUARANTINE_FILE
from ..record.store import MEMORY_FILE
from ..visible import controls_visible

BEGIN = "# sentinel-memory:begin"
END = "# sentinel-memory:end"
HOOK_ID = "sentinel-memory-scan"
FRAMEWORK_CONFIG = ".pre-commit-config.yaml"
_SHELLS = re.compile(r"#!\s*(/usr/bin/env\s+)?(/bin/|/usr/bin/)?(ba|da|z|k)?sh\b")


def hooks_dir(root: Path) -> Path | None:
    """Where git looks for this repository's hooks (core.hooksPath, else the git directory's
    hooks/), or None outside a git work tree."""
    try:
        result = gitcmd.run("rev-parse", "--git-path", "hooks", cwd=root, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0 or not result.stdout.strip():
        return None
    return (Path(root) / result.stdout.strip()).resolve()


def project_prefix(root: Path) -> str:
    """The project root relative to its repository's top ("" or ending in "/"): git runs a hook
    at the top, so a project in a subfolder (a monorepo's) is named in the hook's words."""
    repo = history.find_repo(root)
    return repo.prefix if repo is not None else ""


def markers(prefix: str = "") -> tuple[str, str]:
    """The lines around one project's section: a repository may hold several projects, each its own.
    They are shell comments: a control character of the folder's name (a line break would end the
    comment and run the rest of the name) is written as its escape (visible.py); every other
    character as it is, as earlier versions wrote the markers (a hook they made is found again)."""
    tail = f" {controls_visible(drivers.quote(prefix))}" if prefix else ""
    return BEGIN + tail, END + tail


def _files(prefix: str) -> str:
    """The pathspecs of what the check reads: the memory and quarantine files, and any copy of a
    conflicted file (git-ignored, but `git add -f` stages it); quoted where the shell would read
    them (a folder's name, the glob git matches itself)."""
    names = [f"{prefix}.context/{name}" for name in (MEMORY_FILE, QUARANTINE_FILE)]
    plain = [name if not prefix else drivers.quote(name) for name in names]
    return " ".join([*plain, drivers.quote(f"{prefix}.context/*.conflicted")])


def _scan_words(prefix: str) -> str:
    return "scan --staged" + (f" --project {drivers.quote(prefix)}" if prefix else "")


def section(*command: str, prefix: str = "") -> str:
    """The hook's lines that run the check with this install (`command`: its entry words) for the
    project at `prefix` in the repository."""
    run = " ".join(drivers.quote(word) for word in command)
    begin, end = markers(prefix)
    return (
        f"{begin}\n"
        "# Refuses a commit whose staged .context/ holds a credential; `scan --redact` removes it.\n"
        f"{gitcmd.shell_prefix()} \\\n  diff {' '.join(gitcmd.DIFF_OPTIONS)} --cached --quiet -- {_files(prefix)} || "
        f"{run} {_scan_words(prefix)} || exit 1\n"
        f"{end}\n"
    )


def find_section(data: bytes, prefix: str = "") -> tuple[int, int] | None:
    """Where the project's section is in a hook: (start, end past its last line), or None."""
    found = find_sections(data, prefix)
    return found[0] if found else None


def find_sections(data: bytes, prefix: str = "") -> list[tuple[int, int]]:
    """Where the project's sections are in a hook, in order: its markers as this version writes
    them, and as earlier versions did, with the folder's control characters as they are (a TAB,
    DEL or U+2028 in its name; a version between them may have added a second section), so that
    an upgrade keeps one section and removes the others."""
    written = markers(prefix)
    earlier = (BEGIN + f" {drivers.quote(prefix)}", END + f" {drivers.quote(prefix)}") if prefix else written
    found = []
    for pair in dict.fromkeys((written, earlier)):
        begin, end = (re.escape(m.encode("utf-8")) for m in pair)
        opened = re.search(rb"^" + begin + rb"\r?$", data, re.MULTILINE)
        if opened is None:
            continue
        closed = re.compile(rb"^" + end + rb"\r?(\n|$)", re.MULTILINE).search(data, opened.end())
        if closed is not None:
            found.append((opened.start(), closed.end()))
    found.sort()
    return [span for n, span in enumerate(found) if n == 0 or span[0] >= found[n - 1][1]]


# Hook managers own the hook file and regenerate it: each gets the step in its own config.
LEFTHOOK_CONFIGS = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml")
MANAGED = (
    (b"lefthook", "lefthook"),
    (b"husky", "husky"),
    (b"pre-commit.com", "the pre-commit framework"),
    (b"File generated by pre-commit", "the pre-commit framework"),
)
MAX_HOOK_BYTES = 1024 * 1024


def portable_line(prefix: str = "") -> str:
    """The check as one shell line with nothing machine-specific: for a hook the team commits."""
    return f"git diff --cached --quiet -- {_files(prefix)} || sentinel-memory {_scan_words(prefix)} || exit 1"


def _manager(root: Path, directory: Path | None) -> tuple[str, Path, str] | None:
    """(the hook manager, its config file, what to add there) when the project uses one whose
    config does not run the check yet; ("", config, "") when it does."""
    root = Path(root)
    prefix = project_prefix(root)
    framework = root / FRAMEWORK_CONFIG
    if framework.is_file():
        return (
            "the pre-commit framework",
            framework,
            f"add the {HOOK_ID} hook to {framework} (docs/security.md shows the entry), then run `pre-commit install`",
        )
    for name in LEFTHOOK_CONFIGS:
        if (root / name).is_file():
            return (
                "lefthook",
                root / name,
                f"add to {root / name}: pre-commit: commands: sentinel-memory: run: sentinel-memory {_scan_words(prefix)} "
                f'(with glob: "{prefix}.context/*.jsonl"), then run `lefthook install`',
            )
    husky = root / ".husky"
    if husky.is_dir() or (directory is not None and ".husky" in directory.parts):
        return (
            "husky",
            husky / "pre-commit",
            f"add this line to {husky / 'pre-commit'} and commit it: {portable_line(prefix)}",
        )
    return None


def _runs_check(path: Path) -> bool:
    try:
        data = _read_hook(path) or b""
    except OSError:
        return False
    return b"scan --staged" in data or HOOK_ID.encode() in data


class NotRegular(OSError):
    """A hook or a hook manager's file that is not a regular file (a FIFO, a device, a folder)."""


def _read_hook(path: Path) -> bytes | None:
    """The first MAX_HOOK_BYTES + 1 bytes of a hook (links followed), or None when there is none.
    Only a regular file is read: its type is checked before it is opened, and it is opened without
    waiting, so a FIFO planted in the hooks folder never blocks init or doctor (NotRegular)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular(0, "it is not a regular file (a FIFO, a device or a folder)")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the check
            raise NotRegular(0, "it is not a regular file (a FIFO, a device or a folder)")
        chunks, size = [], 0
        while size <= MAX_HOOK_BYTES:
            chunk = os.read(fd, MAX_HOOK_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def common_dir(root: Path) -> Path | None:
    """The repository's common git folder (a worktree's main one), absolute; None when git cannot say."""
    try:
        result = gitcmd.run("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=root, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(result.stdout.strip()).resolve() if result.returncode == 0 and result.stdout.strip() else None


def _not_ours(hook: Path, real: Path, data: bytes | None, root: Path) -> str | None:
    """Why the hook must be left byte for byte as it is (None when init may extend it)."""
    git_dir = common_dir(root)
    if git_dir is None or not real.is_relative_to(git_dir):
        shared = (
            "a file in the work tree, shared with the team"
            if real.is_relative_to(Path(root).resolve())
            else f"outside this repository's git folder ({real}), shared with other repositories"
        )
        return f"it is {shared}, and init writes this machine's paths only into files of this clone"
    if data is None:
        return None
    for mark, manager in MANAGED:
        if mark in data:
            return f"{manager} writes it and would overwrite the check"
    if b"\0" in data[:8192] or data.startswith(b"\x7fELF") or data.startswith(b"MZ"):
        return "it is a compiled program, not a script init can extend"
    if data.startswith(b"#!") and not _SHELLS.match(data.split(b"\n", 1)[0].decode("latin-1")):
        return "it is not a shell script"
    if not data.startswith(b"#!"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "it is neither a shell script nor UTF-8 text"
    return None


def install(root: Path, *command: str) -> str:
    """Put the check into the repository's pre-commit hook, keeping every byte the hook already
    has; a hook init cannot safely extend is left as it is, with what to add there. Returns one line."""
    from ..configfiles import configedit

    directory = hooks_dir(root)
    managed = _manager(root, directory)
    if managed is not None:
        manager, config, todo = managed
        if _runs_check(config):
            return f"unchanged {config} ({manager} runs the credential check)"
        return f"left alone {manager}'s pre-commit hook: {todo}"
    if directory is None:
        return "skipped the pre-commit credential check: not a git work tree (run init again after git init)"
    prefix = project_prefix(root)
    hook, wanted = directory / "pre-commit", section(*command, prefix=prefix).encode("utf-8")
    real = Path(os.path.realpath(hook))
    how = f"add a step that runs `{' '.join(command)} {_scan_words(prefix)}` and stops the commit when it exits 1"
    try:
        data = _read_hook(real)
    except NotRegular as exc:
        return f"left alone {hook}: {exc.strerror}; {how}"
    except OSError as exc:
        return f"left alone {hook}: it cannot be read ({exc.strerror}); {how}"
    if data is not None and len(data) > MAX_HOOK_BYTES:
        return f"left alone {hook}: it is over {MAX_HOOK_BYTES} bytes; {how}"
    reason = _not_ours(hook, real, data, root)
    if reason:
        if data is not None and find_section(data, prefix) is not None:
            return f"unchanged {hook} (it holds the credential check)"
        shared = "shared" in reason
        return f"left alone {hook}: {reason}; " + (f"add this line to it: {portable_line(prefix)}" if shared else how)
    found = find_sections(data, prefix) if data is not None else []
    if data is None:
        new, verb = b"#!/bin/sh\n" + wanted, "created"
    elif found:
        new = data
        for start, end in reversed(found[1:]):  # a second section, an earlier version's: removed
            new = new[:start] + new[end:]
        start, end = found[0]
        new = new[:start] + wanted + new[end:]
        verb = "unchanged" if new == data else "updated"
    elif data.startswith(b"#!"):
        first, newline, rest = data.partition(b"\n")
        new, verb = first + (newline or b"\n") + wanted + rest, "added the credential check to"
    else:
        new, verb = b"#!/bin/sh\n" + wanted + data, "added the credential check to"
    shown = f"{hook} (through the link, in {real})" if real != hook else str(hook)
    try:
        if new != data:
            configedit.write(real, new)
        _make_executable(real)
    except configedit.Refused as exc:
        return f"left alone {hook}: {exc}; {how}"
    if verb == "created":
        return f"created {shown} (refuses a commit whose staged .context/ holds a credential)"
    return f"{verb} {shown}" + (" (its own checks kept)" if verb.startswith("added") else "")


def _make_executable(path: Path) -> None:
    """Executable for whoever may read it, when nobody may run it (a mode someone chose is kept)."""
    mode = path.stat().st_mode
    if not mode & 0o111:
        path.chmod(mode | ((mode & 0o444) >> 2))


def status(root: Path) -> tuple[bool | None, str]:
    """(True: the check runs on commit / False: it does not / None: not a git work tree, one sentence)."""
    directory = hooks_dir(root)
    managed = _manager(root, directory)
    if managed is not None:
        manager, config, todo = managed
        if _runs_check(config):
            what = HOOK_ID if config.name == FRAMEWORK_CONFIG else "sentinel-memory scan --staged"
            return True, f"pre-commit credential check: {manager} runs {what} ({config})"
        return False, f"no pre-commit credential check in {manager}'s hook: {todo}"
    if directory is None:
        return None, "pre-commit credential check: not a git work tree"
    hook = directory / "pre-commit"
    real = Path(os.path.realpath(hook))
    prefix = project_prefix(root)
    try:
        data = _read_hook(real)
    except NotRegular as exc:
        return False, f"no pre-commit credential check in {hook}: {exc.strerror}; remove it and run init"
    except OSError as exc:  # core.hooksPath names a file, say: init cannot write there either
        return False, (
            f"no pre-commit credential check: {hook} cannot be read ({exc.strerror}); point core.hooksPath "
            "at a folder (or unset it) and run init"
        )
    if data is None or find_section(data, prefix) is None:
        reason = _not_ours(hook, real, data, root)
        if data is not None and _scan_words(prefix).encode() in data:
            return True, f"pre-commit credential check active ({hook} runs {_scan_words(prefix)})"
        if reason and "shared" in reason:
            return (
                False,
                f"no pre-commit credential check in {hook} ({reason}): add this line to it: {portable_line(prefix)}",
            )
        if reason:
            return False, f"no pre-commit credential check in {hook} ({reason}): add a step that runs scan --staged"
        return False, f"no pre-commit credential check in {hook}: run init to add it"
    if os.name != "nt" and not os.access(real, os.X_OK):
        return False, f"{hook} holds the credential check but is not executable, so git skips it: chmod +x it"
    return True, f"pre-commit credential check active ({hook})"
