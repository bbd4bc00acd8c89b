"""The errors every room raises, and the warnings it gives. Each message is one plain sentence a
reader can act on."""

# Set by a process whose stderr its reader may show or take for an answer (a client hook): warn()
# then says nothing.
QUIET = False


def warn(message: str, *args: object, info: bool = False) -> None:
    """A warning (or, `info`, a note) on the package's logger, which the server and the commands
    show on stderr; `logging` is imported only when there is one to give (a hook imports none)."""
    if QUIET:
        return
    import logging

    logger = logging.getLogger("sentinel_memory")
    (logger.info if info else logger.warning)(message, *args)


class MemoryToolError(Exception):
    """Base of every expected failure; the message is safe to show to the client as is."""


class InvalidInput(MemoryToolError):
    """An argument breaks a rule (missing, too long, wrong type). Nothing was saved."""


class LockTimeout(MemoryToolError):
    """Another process held the memory file's lock for too long. Nothing was saved."""


class StorageError(MemoryToolError):
    """The file could not be written (disk full, permissions). The original is unchanged."""


class ProjectRootError(MemoryToolError):
    """The project root is not a place the memory may be written to."""


class ChangedMeanwhile(Exception):
    """The record a refresh read was written by another process before this one took the lock:
    read it again and redo the refresh (the CLI's `log` keeps the fields left out)."""
