"""The three tools without FastMCP: `search`, `log` and `compact` return the answer's text; the MCP
adapter (sentinel_memory/server.py) only maps their arguments and errors."""

from ..git import drivers
from ..record import store
from .answers import compact, log, search

# The file layer reads git's index stages of a conflicted memory file through this callable.
store.merge_stages = drivers.index_stages

__all__ = ["compact", "log", "search"]
