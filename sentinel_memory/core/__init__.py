"""Sentinel-Memory's core: everything but the MCP adapter. Imports no FastMCP, so git drivers
and the command line start fast. The public surface is this page; docs/design.md maps the
modules behind it."""

from . import gitdriver, store
from .errors import InvalidInput, LockTimeout, MemoryToolError, ProjectRootError, StorageError
from .memory import DEFAULT_THRESHOLD
from .project import ProjectRoot, refusal, resolve
from .store import memory_path
from .tools import compact, log, search

# The file layer reads git's index stages of a conflicted memory file through this callable.
store.merge_stages = gitdriver.index_stages

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
