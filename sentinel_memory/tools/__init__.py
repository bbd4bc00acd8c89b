"""The three tools without FastMCP: `search`, `log` and `compact` return the answer's text; the MCP
adapter (sentinel_memory/server.py) only maps their arguments and errors, and keeps one
`OpenMemory` per memory file that it passes to them."""

from .answers import compact, log, search
from .memory import OpenMemory

__all__ = ["OpenMemory", "compact", "log", "search"]
