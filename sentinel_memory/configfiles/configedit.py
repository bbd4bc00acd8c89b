"""Editing a client's config file without breaking it: the one home for init's risky file work.

A config init edits is someone else's file, often committed and shared. So an edit changes only
the bytes of what init owns and keeps every other byte: JSON is edited by splicing our members
into the original text at positions a scanner found (configfiles/jsonedit.py); TOML goes through tomlkit
(configfiles/tomledit.py). This module holds what both share: the file on disk and the refusal. A file
that does not
parse, that names our table twice, that is read-only, that cannot be written, or that is a link
out of the project is refused with one sentence (Refused); a link inside the project is followed
and its target edited, never replaced by a file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import StorageError
from ..record.disk import Staged, read_regular

MAX_CONFIG_BYTES = 1024 * 1024  # a client config is a few KB; a bigger one is not read
BOM = b"\xef\xbb\xbf"


class Refused(Exception):
    """A config init will not edit, with the one sentence that says why and what to do."""


# ------------------------------------------------------------------------------ files on disk


def target(path: Path, root: Path) -> Path:
    """The file an edit of `path` writes: itself, or, for a symbolic link, what it points at, which
    must be a regular file inside the project (a cloned repository may point links anywhere)."""
    root = Path(root).resolve()
    resolved = Path(os.path.realpath(path))
    if path.is_symlink() and not resolved.exists():
        raise Refused(f"it is a link to {os.readlink(path)}, which leads to no file (missing, or links in a loop)")
    if not resolved.is_relative_to(root):
        raise Refused(f"it leads to {resolved}, outside the project; edit that file yourself")
    kept = _kept_folder(path, resolved, root)
    if kept:
        raise Refused(
            f"it leads to {resolved}, inside {kept}, which is no config (a cloned repository may point "
            "links there); replace the link with a file of its own"
        )
    for folder in reversed(resolved.parents):
        if folder.is_relative_to(root) and folder.exists() and not folder.is_dir():
            raise Refused(f"{folder} is a file, not a folder; move it aside so the folder can be made")
    if resolved.is_dir():
        raise Refused("it is a folder, not a file; move it aside so the file can be written")
    if resolved.exists() and not resolved.is_file():
        raise Refused("it is not a regular file (a FIFO or a device); remove it so the file can be written")
    return resolved


def _kept_folder(path: Path, resolved: Path, root: Path) -> str:
    """The folder a link reaches that no edit goes into, or '': git's folder (its config, its
    hooks) and .context/ (the memory file and what guards it). A link into either is followed by
    nothing init writes; the file itself in .context/ (.context/.gitattributes) is no link."""
    real = resolved.relative_to(root).parts
    given = os.path.abspath(path)
    lexical = next(
        (
            Path(os.path.relpath(given, top)).parts
            for top in (os.path.abspath(root), str(root))
            if not os.path.relpath(given, top).startswith("..")
        ),
        None,
    )
    if lexical == real:
        return ""  # no link followed
    if ".git" in real:
        return "the git folder"
    return ".context/" if ".context" in real else ""


def read(path: Path) -> bytes | None:
    """The file's bytes (None when absent), bounded; a device, FIFO or huge file is refused."""
    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    if size > MAX_CONFIG_BYTES:
        raise Refused(f"it is {size:,} bytes, more than a client config holds ({MAX_CONFIG_BYTES:,} read at most)")
    try:
        return read_regular(str(path), MAX_CONFIG_BYTES)
    except StorageError as exc:
        raise Refused(str(exc).split(";")[0]) from None


def write(path: Path, data: bytes) -> None:
    """Replace the file's bytes atomically, keeping its permission bits; a read-only file (no
    owner write bit, even for root) is refused: someone made it so. A new one gets 0666 & ~umask."""
    mode = None
    if path.exists():
        if not path.stat().st_mode & stat.S_IWUSR or not os.access(path, os.W_OK):
            raise Refused("it is read-only; make it writable (chmod u+w) and run init again")
        mode = stat.S_IMODE(path.stat().st_mode)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = Staged(path, data)
        if mode is not None and staged.tmp:
            os.chmod(staged.tmp, mode)
        staged.commit()
    except (OSError, StorageError) as exc:  # the folder not writable, the disk full: the file is as it was
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).split(":")[-1].split(".")[0]
        raise Refused(
            f"it could not be written ({reason.strip()}); make {path.parent} writable or free disk space, "
            "then run init again"
        ) from None


def split_bom(data: bytes) -> tuple[bytes, str]:
    """(the BOM or b"", the text); a file that is not UTF-8 is refused."""
    bom = BOM if data.startswith(BOM) else b""
    try:
        return bom, data[len(bom) :].decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("it is not UTF-8 text; save it as UTF-8") from None


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
