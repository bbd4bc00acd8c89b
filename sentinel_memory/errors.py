"""The errors every room raises. Each message is one plain sentence a reader can act on."""


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
