"""The three tools without FastMCP: `search`, `log` and `compact` return the answer's text; the MCP
adapter (sentinel_memory/server.py) only maps their arguments and errors, and keeps one
`OpenMemory` per memory file that it passes to them.

They are loaded when first asked for (PEP 562): a client hook that only lists a record's block
(tools/blocks.py) imports this package too, and need not pay for the tools (about 17 ms)."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from .answers import compact, log, search
    from .memory import OpenMemory

__all__ = ["OpenMemory", "compact", "log", "search"]


def __getattr__(name: str) -> object:
    if name in ("compact", "log", "search"):
        from . import answers

        return getattr(answers, name)
    if name == "OpenMemory":
        from .memory import OpenMemory

        return OpenMemory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
