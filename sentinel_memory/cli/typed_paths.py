"""Paths typed on the command line (`search --file`, `log --file`), read as a person means them,
and the refusal of one that names nothing in the terms it was typed in (the words are
cli/console.py's)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InvalidInput
from ..record import citations
from . import console


def from_here(root: Path, given: list[str]) -> list[str]:
    """Paths typed on the command line, as a person means them: from the folder they are in when
    that is inside the project (what tab completion gives in a subfolder), else from the project's
    root; `search --file` and `log --file` alike. The result is checked against the project as the
    tools' `files` are; a path that leaves the project is passed on unchanged, to be refused with
    the reason."""
    here = Path.cwd()
    try:
        inside = here.resolve().is_relative_to(root.resolve())
    except OSError:
        inside = False
    out = []
    for typed in given:
        path = typed.replace("\\", "/")  # `..\x` from a subfolder, as Windows writes it (contract §3.7)
        if os.path.isabs(path):
            out.append(citations.under(root, path) or typed)  # through a link to the project too
            continue
        full = (here if inside else root) / path
        try:
            relative = Path(os.path.relpath(full.absolute(), root.absolute()))
        except ValueError:  # another drive on Windows
            relative = Path(path)
        out.append(typed if ".." in relative.parts else relative.as_posix())
    return out


def subfolder(root: Path) -> str | None:
    """The current folder, relative to the project's root ("/"-separated), when it is a folder
    inside the project other than the root; else None."""
    try:
        relative = Path.cwd().resolve().relative_to(Path(root).resolve())
    except (OSError, ValueError):
        return None
    return relative.as_posix() if relative.parts else None


def check_from_here(root: Path, given: list[str], files: list[str]) -> None:
    """In a subfolder, a --file that names nothing is refused in the terms it was typed in: read
    from the current folder, with the same-named files as one would type them from there. Other
    refusals (a path that leaves the project, a directory) are the tool's own, with the reason."""
    sub = subfolder(root)
    if sub is None:
        return
    for typed, path in zip(given, files, strict=True):
        if ".." in Path(path).parts or os.path.isabs(path) or os.path.lexists(os.path.join(root, path)):
            continue
        raise InvalidInput(console.not_a_file_here(typed, path, sub, root))
