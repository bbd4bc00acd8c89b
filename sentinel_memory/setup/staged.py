"""What the pre-commit check reads (setup/precommit.py installs it; `scan --staged` runs it): the
memory and quarantine files as staged for the next commit, read through git within the memory's
size bound, and any conflicted copy staged beside them. It fails closed: what cannot be read stops
the commit, with what to do (docs/contract.md §6)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import StorageError
from ..git import command as gitcmd
from ..record.contextdir import QUARANTINE_FILE
from ..record.disk import MAX_FILE_BYTES
from ..record.store import MEMORY_FILE
from .precommit import common_dir
from .scan import ENOUGH, Finding, scan_bytes

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
    common = common_dir(root) if given else None
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
