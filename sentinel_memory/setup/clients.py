"""What Sentinel-Memory knows about each client, in one table: where its project config lives,
what init writes there, the fix a refusal names, and the check doctor adds. init, doctor and
project.py read it from here; setup/clientconfig.py edits and reads the config files it names.

A project config is meant to be committed, so what init writes into it is the same bytes on every
teammate's machine: the `sentinel-memory` executable by name (each teammate puts it on PATH once:
pipx or uv tool install), and the project given by what the client expands or by where the client
starts the server. No absolute path of an install or a checkout goes into a project file; a
`cwd` with one, which earlier versions wrote, is removed. Windsurf's config is global (one per
machine), so init prints that entry with this install's paths instead of editing it.

Imported by the server at start-up (through project.py), so it holds the table and no editing code.
"""

from __future__ import annotations

import ntpath
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..invocation import EXECUTABLE

SERVER_NAME = "sentinel-memory"
# Where Cursor reads workflow rules: the legacy .cursorrules, or an always-applied .mdc in .cursor/rules/.
RULES_FILES = {"cursorrules": Path(".cursorrules"), "mdc": Path(".cursor") / "rules" / f"{SERVER_NAME}.mdc"}
# The tool that saves: a client that gates writes is told, once, to let it run (docs/clients.md).
SAVING_TOOL = "log_memory"
COMMAND = EXECUTABLE  # found on PATH by the client, on every teammate's machine
WORKSPACE = ["--project", "${workspaceFolder}"]


@dataclass(frozen=True)
class Client:
    key: str
    title: str
    config: Path | None  # the project config init writes; None: the client's config is global
    servers: str  # the key holding the servers ("mcp_servers" for TOML)
    entry: dict  # what init sets in our entry (portable)
    fix: str  # how to give the server its project, for a refusal
    names: tuple[str, ...]  # substrings of the clientInfo name the client sends
    defaults: dict = field(default_factory=dict)  # added once; a value the user changed is kept
    hooks: Path | None = None  # the project file init writes the client hooks into (setup/hookconfig.py)
    trust: str = ""  # the step a user takes before the client reads the project's files (server, hooks)
    hooks_trust: str = ""  # what the hooks need besides
    instructions: Path | None = None  # the project file the client reads as its instructions: init adds the workflow


CLIENTS: dict[str, Client] = {
    c.key: c
    for c in (
        Client(
            "cursor",
            "Cursor",
            Path(".cursor") / "mcp.json",
            "mcpServers",
            {"command": COMMAND, "args": WORKSPACE},
            'in .cursor/mcp.json give "args": ["--project", "${workspaceFolder}"] (Cursor expands it; init writes it)',
            ("cursor",),
            hooks=Path(".cursor") / "hooks.json",
        ),
        Client(
            "vscode",
            "VS Code",
            Path(".vscode") / "mcp.json",
            "servers",
            {"type": "stdio", "command": COMMAND, "args": WORKSPACE},
            'in .vscode/mcp.json give "args": ["--project", "${workspaceFolder}"] (VS Code expands it)',
            ("visual studio code", "vscode"),
            instructions=Path("AGENTS.md"),  # VS Code reads it as the workspace's instructions
        ),
        # Claude Code starts a project's servers in the folder it runs in: no --project needed.
        # alwaysLoad: it waits for the server before the first turn (docs/clients.md).
        Client(
            "claude",
            "Claude Code",
            Path(".mcp.json"),
            "mcpServers",
            {"command": COMMAND, "args": []},
            "add the server with `claude mcp add --scope project` in the project (Claude Code starts it there), "
            'or give "--project" and the absolute path in your own (local or user scope) entry',
            ("claude",),
            {"alwaysLoad": True},
            hooks=Path(".claude") / "settings.json",
            trust="in a terminal, Claude Code asks twice the first time it starts in the project: trust the folder, "
            "then choose 'Use this MCP server' (Enter alone continues without it); claude -p asks neither",
            instructions=Path("CLAUDE.md"),
        ),
        # Codex starts the server in the folder it runs in; the server finds the project's root from there.
        Client(
            "codex",
            "Codex CLI",
            Path(".codex") / "config.toml",
            "mcp_servers",
            {"command": COMMAND, "args": []},
            "start codex in the project (the server starts where Codex runs and finds the root), or give "
            'args "--project" and the absolute path in ~/.codex/config.toml',
            ("codex",),
            {"tools": {SAVING_TOOL: {"approval_mode": "approve"}}},
            hooks=Path(".codex") / "hooks.json",
            trust="Codex reads a project's .codex/ files only once you trust the project: run `codex exec --trust` "
            "in the project once (or trust it when codex asks)",
            hooks_trust=", then open /hooks in codex and trust the sentinel-memory hooks (again after they change)",
            instructions=Path("AGENTS.md"),
        ),
        # Gemini CLI reads .gemini/settings.json in the folder it starts in and starts the server there.
        Client(
            "gemini",
            "Gemini CLI",
            Path(".gemini") / "settings.json",
            "mcpServers",
            {"command": COMMAND, "args": []},
            "start gemini in the project's root or a folder of it, not your home folder (the server starts "
            "where gemini runs, from .gemini/settings.json or an entry without cwd in ~/.gemini/settings.json)",
            ("gemini",),
            {"trust": True},
            hooks=Path(".gemini") / "settings.json",
            trust="Gemini CLI reads a project's .gemini/settings.json (its servers and hooks) only in a trusted "
            "folder: run gemini in the project and trust the folder when asked (or add it to "
            "~/.gemini/trustedFolders.json as TRUST_FOLDER)",
            instructions=Path("GEMINI.md"),
        ),
        Client(
            "windsurf",
            "Windsurf",
            None,
            "mcpServers",
            {},
            'in ~/.codeium/windsurf/mcp_config.json give "--project" and the absolute path',
            ("windsurf",),
            instructions=Path("AGENTS.md"),  # at the project's root, a rule Windsurf always applies
        ),
    )
}


def trust_step(client: Client, hooks: bool) -> str:
    """The one line saying what the user does before the client reads what init wrote ("" when
    the client needs nothing): the project's trust, and the hooks' own where they are written."""
    return client.trust + (client.hooks_trust if hooks else "") if client.trust else ""


def machine_specific(key: str, value) -> bool:
    """A value in our entry that holds one machine's absolute path (earlier versions wrote cwd)."""
    return key == "cwd" and isinstance(value, str) and (posixpath.isabs(value) or ntpath.isabs(value))


def client_key(name: str | None) -> str | None:
    """Our short name for a client from its clientInfo name ("claude-code" -> "claude"), or None."""
    lowered = (name or "").lower()
    return next((c.key for c in CLIENTS.values() for part in c.names if part in lowered), None)


def extra_check(client: Client, path: Path, entry: dict) -> str | None:
    """A warning about a setting the client needs beyond the command (None when it is fine)."""
    if client.key == "gemini" and entry.get("trust") is not True:
        return (
            f"{path} does not trust the server: Gemini CLI asks before each tool call, and headless "
            "gemini -p cannot save (docs/clients.md)"
        )
    if client.key == "codex":
        tools = entry.get("tools", {})
        tool = tools.get(SAVING_TOOL) if isinstance(tools, dict) else None
        mode = tool.get("approval_mode") if isinstance(tool, dict) else None
        if mode is not None and mode != "approve":  # someone chose it: init keeps it
            return (
                f"{path} does not approve {SAVING_TOOL} (approval_mode is {mode}): Codex asks before every save "
                'and headless codex exec cannot save; set it to "approve" if saves need not ask'
            )
        if mode is None:
            return (
                f"{path} does not approve {SAVING_TOOL} (approval_mode is unset): Codex asks before every save "
                f"and headless codex exec cannot save; run init --client codex, or add [mcp_servers.{SERVER_NAME}"
                f'.tools.{SAVING_TOOL}] approval_mode = "approve" yourself where init says it cannot'
            )
    return None
