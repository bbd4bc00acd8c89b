"""Sentinel-Memory: an MCP server that keeps a coding agent's lessons in a git-tracked file inside
the project (`.context/memory_log.jsonl`).

This package is importable at no cost: its rooms (tools, cli, setup, configfiles, hooks, search, git,
record, redaction, faststart), `server` (the FastMCP adapter) and `__main__` (the one entry point) are
imported only by whoever needs them. docs/design.md maps the rooms and their modules.
"""

# The product's version: the one place it is written (pyproject.toml reads it, the MCP handshake
# reports it as serverInfo.version, CHANGELOG.md says what each release changed).
__version__ = "0.2.0"
