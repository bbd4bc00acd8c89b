"""The command line's streams: a failure to write the standard output as one sentence (OutputError),
the readers' warnings once per run with their control characters visible, lines broken at spaces
on a terminal narrower than them, the one sentence a command fails with (fail), and the file
`export --output` writes into (never one of the memory's own, never out of the project through a
link in it, written as a shell's `>` does)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

from ..errors import InvalidInput, StorageError
from ..visible import visible
from . import layout


class OutputError(Exception):
    """Writing the standard output failed, other than by a closed pipe."""


class Output:
    """The standard output, whose failures to write (a full disk, a descriptor opened for reading)
    are an OutputError: the command says so in one sentence rather than with a traceback."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.strerror or exc) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(exc.strerror or exc) from None

    def __getattr__(self, name):
        return getattr(self.stream, name)


def warnings_once() -> None:
    """What the readers warn about (a line of the memory file that is not a record) on stderr as
    one sentence of ours, once per run however often the command reads the file."""
    seen: set[str] = set()

    def first_time(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in seen:
            return False
        seen.add(message)
        return True

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(VisibleFormatter("sentinel-memory: %(message)s"))
    handler.addFilter(first_time)
    logger = logging.getLogger("sentinel_memory")
    logger.addHandler(handler)
    logger.propagate = False


class VisibleFormatter(logging.Formatter):
    """A warning with the control characters of a path or value in it visible."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record), lines=True)


def fit_to_terminal(args) -> None:
    """On a terminal narrower than a line, break lines at spaces (what a person reads); a pipe, a
    file, --json and git's drivers get the text as it is."""
    if getattr(args, "json", False) or args.command in ("merge-driver", "textconv"):
        return
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            tty = stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        if tty:
            setattr(sys, name, layout.Wrapped(stream, shutil.get_terminal_size().columns))


def fail(message: object, code: int) -> int:
    """One sentence on stderr; a path or value in it with its control characters visible."""
    print(f"sentinel-memory: {visible(str(message), lines=True)}", file=sys.stderr)
    return code


def refuse_own_file(context: Path, name: str) -> None:
    """`export --output` into a file of the memory's own (.context/'s memory file, its quarantine
    file, its lock; as itself, through a link or a hard link) would empty it: refused, nothing
    written."""
    try:
        target = os.stat(name)
        entries = list(os.scandir(context))
    except OSError:  # no such file yet (a new one is no file of ours), or no .context/
        return
    for entry in entries:
        try:
            own = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (own.st_dev, own.st_ino) == (target.st_dev, target.st_ino):
            raise InvalidInput(
                f"{visible(name)} is {visible(entry.path)}, a file of the memory's own; export writes "
                "the Markdown elsewhere (--output memory.md). Nothing was written."
            )


def refuse_link_out(project: Path, name: str) -> None:
    """A path inside the project that a link leads out of it (a cloned repository may hold
    `memory.md` -> ~/.bashrc): refused, nothing written. A path given outside the project is the
    person's own, links and all (/dev/stdout, ~/notes/memory.md)."""
    typed, real = os.path.abspath(name), os.path.realpath(name)
    homes = {os.path.abspath(project), os.path.realpath(project)}
    inside = any(typed == home or typed.startswith(home.rstrip(os.sep) + os.sep) for home in homes)
    home = os.path.realpath(project)
    if inside and not (real == home or real.startswith(home.rstrip(os.sep) + os.sep)):
        raise InvalidInput(
            f"{visible(name)} leads out of the project, to {visible(real)}, through a link (a cloned "
            "repository may hold one); remove the link or give another path. Nothing was written."
        )


def write_into(name: str, data: bytes) -> None:
    """Write data into the file `name` as a shell's `>` does (docs/commands.md, export): opened
    for writing, created with the default mode or emptied, never replaced, so a symbolic link, a
    FIFO, a device or a hard link stays what it is and a file keeps its mode and owner. A failure
    midway leaves what was written so far and says so."""
    try:
        handle = open(name, "wb")  # noqa: SIM115 (closed below, where a failure is reported)
    except OSError as exc:
        raise StorageError(
            f"could not open {visible(name)} for writing: {exc.strerror or exc}; nothing was written."
        ) from None
    try:
        with handle:
            handle.write(data)
    except OSError as exc:
        raise StorageError(
            f"writing {visible(name)} failed ({exc.strerror or exc}); it may hold only the start of the export."
        ) from None
