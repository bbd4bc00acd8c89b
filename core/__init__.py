"""Sentinel-Memory's core: everything but the MCP adapter. Imports no FastMCP, so git drivers
and the command line start fast. The public surface is this page."""

from .errors import InvalidInput, LockTimeout, MemoryToolError, ProjectRootError, StorageError
from .memory import DEFAULT_THRESHOLD, compact, log, search
from .project import ProjectRoot, refusal, resolve
from .store import memory_path

__all__ = [
    "DEFAULT_THRESHOLD",
    "InvalidInput",
    "LockTimeout",
    "MemoryToolError",
    "ProjectRoot",
    "ProjectRootError",
    "StorageError",
    "compact",
    "log",
    "memory_path",
    "refusal",
    "resolve",
    "search",
]
