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

from ..errors import StorageError
from ..git import command as gitcmd, drivers, history
from ..record.contextdir import QUARANTINE_FILE
from ..record.disk import MAX_FILE_BYTES
from ..record.store import MEMORY_FILE
from ..visible import controls_visible
from .scan import ENOUGH, Finding, scan_bytes

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


def _git_dir(root: Path) -> Path | None:
    try:
        result = gitcmd.run("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=root, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(result.stdout.strip()).resolve() if result.returncode == 0 and result.stdout.strip() else None


def _not_ours(hook: Path, real: Path, data: bytes | None, root: Path) -> str | None:
    """Why the hook must be left byte for byte as it is (None when init may extend it)."""
    git_dir = _git_dir(root)
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


CONFLICTED_COPY = "conflicted copy"  # a Finding's field for a staged copy of a conflicted file


def staged_findings(root: Path) -> list[Finding]:
    """The credentials in .context/'s memory and quarantine files as staged for the next commit,
    and any copy of a conflicted file staged there (field CONFLICTED_COPY, its path).
    Fails closed: when what is staged cannot be read (git missing, failing or out of time), it
    raises StorageError, which stops the commit; a file that is not staged is empty."""
    names = {f".context/{name}": name for name in (MEMORY_FILE, QUARANTINE_FILE)}
    listed = _git(root, "ls-files", "--stage", "-z", "--", *names, index=_commit_index(root))
    blobs: dict[str, str] = {}
    for entry in listed.split(b"\0"):
        info, tab, path = entry.partition(b"\t")
        fields = info.split()
        if tab and len(fields) == 3 and fields[2] == b"0" and path.decode("utf-8", "replace") in names:
            blobs[names[path.decode()]] = fields[1].decode("ascii", "replace")
    staged = {name: _staged_blob(root, name, blob) for name, blob in blobs.items()}
    found = scan_bytes(staged.get(MEMORY_FILE, b""), staged.get(QUARANTINE_FILE, b""), MEMORY_FILE, ENOUGH)
    # A conflicted copy (record/contextdir.py) keeps a file's bytes as they were, credentials too:
    # it is a local file, git-ignored, never one to commit; staged, it stops the commit whatever it holds.
    copies = _git(root, "ls-files", "-z", "--", ".context/*.conflicted", index=_commit_index(root))
    for name in filter(None, copies.decode("utf-8", "replace").split("\0")):
        found.append(Finding(name, CONFLICTED_COPY, ""))
    return found


def _staged_blob(root: Path, name: str, blob: str) -> bytes:
    """A staged file's bytes, read only within the bound every reader of the memory keeps (a file
    past it is refused by the tools anyway): past it, StorageError stops the commit."""
    size = _git(root, "cat-file", "-s", blob).strip()
    if not size.isdigit() or int(size) > MAX_FILE_BYTES:
        raise StorageError(
            f"the staged .context/{name} is {int(size) if size.isdigit() else 0:,} bytes, over the "
            f"{MAX_FILE_BYTES:,} a memory file may hold, so it was not read for the credential check; the commit "
            "was stopped. Unstage it (git restore --staged .context) and keep the memory under that size."
        )
    return _git(root, "cat-file", "blob", blob)


def _commit_index(root: Path) -> str | None:
    """The index of the commit being made, as git gives it to the pre-commit hook (`commit -a` and
    `commit <paths>` stage into an index of their own), when it is one of this repository's: git
    runs for the project's own repository whatever the environment says (git/command.py)."""
    given = os.environ.get("GIT_INDEX_FILE")
    common = _git_dir(root) if given else None
    if not given or common is None:
        return None
    index = Path(os.path.realpath(given))  # relative: to the folder git runs the hook in, ours
    return str(index) if index.is_relative_to(common) else None


def _git(root: Path, *args: str, index: str | None = None) -> bytes:
    """git's output, or StorageError saying why what is staged could not be read."""
    try:
        result = gitcmd.run(*args, cwd=root, index=index)
    except subprocess.TimeoutExpired as exc:
        why = f"git {args[0]} did not finish in {exc.timeout:g} s"
    except gitcmd.GitWouldWait as exc:
        why = str(exc)
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"git could not run ({exc})"
    else:
        if result.returncode == 0:
            return result.stdout
        said = result.stderr.decode("utf-8", "replace").strip().splitlines()
        why = f"git {args[0]} failed ({said[-1] if said else f'exit {result.returncode}'})"
    raise StorageError(
        f"the staged .context/ could not be read for the credential check: {why}; the commit was stopped. "
        "Fix what git says and commit again; to commit anyway: git commit --no-verify."
    )
