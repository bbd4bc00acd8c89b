"""Sentinel-Memory: an MCP server that keeps a coding agent's lessons in a git-tracked file inside
the project (`.context/memory_log.jsonl`).

This package is importable at no cost: `core` (the rules, no FastMCP), `server` (the FastMCP
adapter), `fast_start` and `fast_cache` (the handshake while fastmcp loads, from fastmcp's answers
recorded in the user's cache) and `__main__` (the one entry point) are imported only by whoever
needs them. docs/design.md maps the modules.
"""

# The product's version: the one place it is written (pyproject.toml reads it, the MCP handshake
# reports it as serverInfo.version, CHANGELOG.md says what each release changed).
__version__ = "0.2.0"
