"""The command line's streams: a failure to write the standard output as one sentence (OutputError),
the readers' warnings once per run with their control characters visible, lines broken at spaces
on a terminal narrower than them, and the one sentence a command fails with (fail)."""

from __future__ import annotations

import logging
import shutil
import sys

from ..visible import visible
from . import console


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
            setattr(sys, name, console.Wrapped(stream, shutil.get_terminal_size().columns))


def fail(message: object, code: int) -> int:
    """One sentence on stderr; a path or value in it with its control characters visible."""
    print(f"sentinel-memory: {visible(str(message), lines=True)}", file=sys.stderr)
    return code
