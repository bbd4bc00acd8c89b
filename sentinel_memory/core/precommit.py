"""The guard at the door: a git pre-commit check that refuses a commit whose staged .context/
holds a credential (docs/contract.md §6), so a key that reached the memory file by hand, from an
older install or a teammate's tool stops before it is in git's history for good.

`init` installs it as a marked section of the repository's pre-commit hook (in core.hooksPath
when that is set), next to the checks a hook already runs; a project that uses the pre-commit
framework gets told to add the `sentinel-memory-scan` hook this repository ships in
.pre-commit-hooks.yaml instead, since that framework owns the hook file. `doctor` reports which.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

from . import gitcmd, gitdriver
from .contextdir import QUARANTINE_FILE
from .secretscan import Finding, scan_bytes
from .store import MEMORY_FILE

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


def section(*command: str) -> str:
    """The hook's lines that run the check with this install (`command`: its entry words)."""
    run = " ".join(gitdriver.quote(word) for word in command)
    files = " ".join(f".context/{name}" for name in (MEMORY_FILE, QUARANTINE_FILE))
    return (f"{BEGIN}\n"
            "# Refuses a commit whose staged .context/ holds a credential; `scan --redact` removes it.\n"
            f"{gitcmd.shell_prefix()} \\\n  diff {' '.join(gitcmd.DIFF_OPTIONS)} --cached --quiet -- {files} || "
            f"{run} scan --staged || exit 1\n"
            f"{END}\n")


def install(root: Path, *command: str) -> str:
    """Put the check into the repository's pre-commit hook, keeping what the hook already does;
    returns one line saying what was done or what to do by hand."""
    framework = Path(root) / FRAMEWORK_CONFIG
    if framework.is_file():
        if HOOK_ID in framework.read_text(encoding="utf-8", errors="replace"):
            return f"unchanged {framework} (it runs the {HOOK_ID} hook)"
        return (f"left alone the pre-commit framework's hook: add the {HOOK_ID} hook to {framework} "
                "(docs/security.md shows the entry), then run `pre-commit install`")
    directory = hooks_dir(root)
    if directory is None:
        return "skipped the pre-commit credential check: not a git work tree (run init again after git init)"
    hook, wanted = directory / "pre-commit", section(*command)
    by_hand = f"add a step that runs `{' '.join(command)} scan --staged` and stops the commit when it exits 1"
    if hook.is_symlink():  # writing would change whatever file it points at
        return f"left alone {hook} (a symbolic link, to {os.readlink(hook)}): {by_hand}"
    if _elsewhere(root, directory):
        return (f"left alone {hook}: this repository's own config (core.hooksPath) keeps its hooks outside the "
                f"project and its git directory; if you trust that folder, {by_hand}")
    if not hook.exists():
        directory.mkdir(parents=True, exist_ok=True)
        hook.write_text("#!/bin/sh\n" + wanted, encoding="utf-8", newline="\n")
        _make_executable(hook)
        return f"created {hook} (refuses a commit whose staged .context/ holds a credential)"
    text = hook.read_text(encoding="utf-8", errors="replace")
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END) + 1
        new = text[:start] + wanted + text[end:]
        verb = "unchanged" if new == text else "updated"
    elif text.startswith("#!") and not _SHELLS.match(text):
        return (f"left alone {hook} (not a shell script): add a step that runs "
                f"`{' '.join(command)} scan --staged` and stops the commit when it exits 1")
    else:
        first, _, rest = text.partition("\n") if text.startswith("#!") else ("", "", text)
        new = (first + "\n" if first else "#!/bin/sh\n") + wanted + rest
        verb = "added the credential check to"
    if new != text:
        hook.write_text(new, encoding="utf-8", newline="\n")
    _make_executable(hook)
    return f"{verb} {hook}" + (" (its own checks kept)" if verb.startswith("added") else "")


def _elsewhere(root: Path, directory: Path) -> bool:
    """Whether the repository's own config (not the user's global one) points core.hooksPath at a
    folder outside the project and its git directory: a cloned repository could aim it at any
    folder of the user's."""
    inside = [os.path.realpath(root)]
    git_directory = gitdriver.git_dir(Path(root))
    if git_directory is not None:
        inside.append(os.path.realpath(git_directory))
    real = os.path.realpath(directory)
    if any(real == top or real.startswith(top.rstrip(os.sep) + os.sep) for top in inside):
        return False
    try:
        scope = gitcmd.run("config", "--show-scope", "--get", "core.hooksPath", cwd=root, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return True
    return scope.stdout.split("\t", 1)[0] in ("local", "worktree", "")


def _make_executable(path: Path) -> None:
    mode = path.stat().st_mode
    if mode & 0o111 != 0o111:
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def status(root: Path) -> tuple[bool | None, str]:
    """(True: the check runs on commit / False: it does not / None: not a git work tree, one sentence)."""
    framework = Path(root) / FRAMEWORK_CONFIG
    if framework.is_file() and HOOK_ID in framework.read_text(encoding="utf-8", errors="replace"):
        return True, f"pre-commit credential check: the pre-commit framework runs {HOOK_ID} ({framework})"
    directory = hooks_dir(root)
    if directory is None:
        return None, "pre-commit credential check: not a git work tree"
    hook = directory / "pre-commit"
    try:
        text = hook.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    if BEGIN not in text:
        return False, f"no pre-commit credential check in {hook}: run init to add it"
    if os.name != "nt" and not os.access(hook, os.X_OK):
        return False, f"{hook} holds the credential check but is not executable, so git skips it: chmod +x it"
    return True, f"pre-commit credential check active ({hook})"


def staged_findings(root: Path) -> list[Finding]:
    """The credentials in .context/'s memory and quarantine files as staged for the next commit."""
    def staged(name: str) -> bytes:
        try:
            result = gitcmd.run("show", *gitcmd.DIFF_OPTIONS, f":.context/{name}", cwd=root)
        except (OSError, subprocess.SubprocessError):
            return b""
        return result.stdout if result.returncode == 0 else b""

    return scan_bytes(staged(MEMORY_FILE), staged(QUARANTINE_FILE), MEMORY_FILE)
