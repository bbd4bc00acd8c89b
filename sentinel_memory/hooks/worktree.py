"""Whether a session changed the project: a fingerprint of the work tree (HEAD, and what
`git status` lists, with each listed file's size and modification time, `.context/` aside) and
one of the memory file. Git runs through git/command.py's hardened calls, with a time limit and
a bound on what is read; a project outside git has no fingerprint (the stop hook then never asks).
"""

from __future__ import annotations

import os
import subprocess

from ..git import command as gitcmd
from ..git.history import find_repo, head
from .state import blake2b

MAX_ENTRIES = 5_000  # status entries whose size and modification time are looked at, at most


def tree(root: str, timeout: float) -> str | None:
    """The work tree's fingerprint, or None (not in git, git missing or too slow)."""
    repo = find_repo(root)
    if repo is None or timeout <= 0:
        return None
    try:
        pins = gitcmd.filter_pins(root, timeout)  # status would run a tracked file's clean filter
        result = gitcmd.run(
            *pins,
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignore-submodules=dirty",  # a submodule's new commit counts; git runs nothing in it
            "--no-renames",
            "--",
            ".",
            cwd=root,
            timeout=timeout,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    # The project's own .context/ (porcelain paths are the top's; the project may be a folder in it).
    context = f"{repo.prefix}.context/".encode("utf-8", "surrogateescape")
    digest = blake2b((head(repo) or "").encode(), digest_size=16)
    looked = 0
    for item in result.stdout.split(b"\0"):
        name = item[3:]
        if not name or (name + b"/").startswith(context):
            continue
        # Every entry counts by its name and status (a new file after thousands of others too); the
        # first MAX_ENTRIES also by their size and modification time (a file edited again).
        seen = "-"
        if looked < MAX_ENTRIES:
            looked += 1
            try:
                st = os.lstat(os.path.join(repo.top, name.decode("utf-8", "surrogateescape")))
                seen = f"{st.st_size}:{st.st_mtime_ns}"
            except OSError:
                seen = "gone"
        digest.update(item + b"\0" + seen.encode() + b"\0")
    return digest.hexdigest()


def memory(path: str) -> list | None:
    """The memory file's (size, mtime_ns, inode), or None when it is absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]
