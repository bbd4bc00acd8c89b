"""`init`: prepare a project for Sentinel-Memory in one idempotent step, and say what was done."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import gitdriver
from .store import atomic_write, prepare_context_dir

SERVER_NAME = "sentinel-memory"
RULES_BEGIN = "<!-- sentinel-memory:begin -->"
RULES_END = "<!-- sentinel-memory:end -->"
INSTALL_DIR = Path(__file__).resolve().parents[1]
SERVER_SCRIPT = INSTALL_DIR / "server.py"
# abspath, not resolve: a venv's python is a symlink that must not be followed out of the venv.
PYTHON = os.path.abspath(sys.executable)

AGENTS_SECTION = """\
## Project memory (Sentinel-Memory)

This project keeps what earlier agent sessions learned in `.context/memory_log.jsonl`, through the
`sentinel-memory` MCP server. Before a task call `search_memory` and ask the user the relevant
`ask_next_time` questions; after a task call `log_memory` (topic, missing_context, lesson,
ask_next_time). When a result says compaction is required, call `compact_memory` and save one
principle per topic with `log_memory(type="principle", source_ids=[...])`.
"""


def server_entry(root: Path) -> dict:
    return {
        "command": PYTHON,
        "args": [str(SERVER_SCRIPT), "--project", "${workspaceFolder}"],
        "cwd": str(root),
    }


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))


def _merge_json_server(path: Path, key: str, wanted: dict) -> str:
    """Add or refresh our server under `key` in a client's JSON config, keeping every other server."""
    config: dict = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8-sig") or "{}")
        except ValueError as exc:
            return f"left alone {path}: it is not valid JSON ({exc}); fix it and run init again"
        if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
            return f"left alone {path}: it is not a JSON object with a {key!r} object"
    servers = config.setdefault(key, {})
    if servers.get(SERVER_NAME) == wanted:
        return f"unchanged {path}"
    verb = "updated" if SERVER_NAME in servers else ("added to" if path.exists() else "created")
    servers[SERVER_NAME] = wanted
    _write_text(path, json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    others = [name for name in servers if name != SERVER_NAME]
    kept = f" (kept {', '.join(others)})" if others else ""
    return f"{verb} {path}: server {SERVER_NAME!r}{kept}"


def cursor_config(root: Path) -> str:
    """.cursor/mcp.json: Cursor expands ${workspaceFolder} in args; cwd for clients that honour it."""
    return _merge_json_server(root / ".cursor" / "mcp.json", "mcpServers", server_entry(root))


def vscode_config(root: Path) -> str:
    """.vscode/mcp.json: VS Code's format ("servers", "type": "stdio"), ${workspaceFolder} expanded."""
    entry = {"type": "stdio", "command": PYTHON, "args": [str(SERVER_SCRIPT), "--project", "${workspaceFolder}"]}
    return _merge_json_server(root / ".vscode" / "mcp.json", "servers", entry)


def claude_config(root: Path) -> str:
    """.mcp.json (Claude Code, project scope): it starts servers in the project, so no --project."""
    entry = {"command": PYTHON, "args": [str(SERVER_SCRIPT)]}
    return _merge_json_server(root / ".mcp.json", "mcpServers", entry)


def codex_config(root: Path) -> str:
    """.codex/config.toml (a trusted project): our table appended once, the rest left as it is."""
    path = root / ".codex" / "config.toml"
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    if f"[mcp_servers.{SERVER_NAME}]" in current:
        return f"left alone {path}: it already has [mcp_servers.{SERVER_NAME}] (edit it by hand if it is stale)"
    table = (f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(PYTHON)}\n"
             f"args = [{json.dumps(str(SERVER_SCRIPT))}, \"--project\", {json.dumps(str(root))}]\n")
    _write_text(path, (current.rstrip("\n") + "\n\n" if current.strip() else "") + table)
    return f"{'added to' if current else 'created'} {path}: [mcp_servers.{SERVER_NAME}]"


def windsurf_config(root: Path) -> str:
    """Windsurf's MCP config is global: print the entry instead of editing a file outside the project."""
    entry = {"command": PYTHON, "args": [str(SERVER_SCRIPT), "--project", str(root)]}
    return ("left alone ~/.codeium/windsurf/mcp_config.json (global): add under \"mcpServers\": "
            f"{json.dumps({SERVER_NAME: entry}, ensure_ascii=False)}")


CLIENTS = {"cursor": cursor_config, "vscode": vscode_config, "claude": claude_config,
           "codex": codex_config, "windsurf": windsurf_config}


def _section(text: str) -> str:
    return f"{RULES_BEGIN}\n{text.rstrip()}\n{RULES_END}\n"


def merge_section(path: Path, text: str) -> str:
    """Put our section in a shared text file: create it, append it, or refresh it between markers."""
    section = _section(text)
    if not path.exists():
        _write_text(path, section)
        return f"created {path}"
    current = path.read_text(encoding="utf-8")
    if RULES_BEGIN in current and RULES_END in current:
        start = current.index(RULES_BEGIN)
        end = current.index(RULES_END, start) + len(RULES_END)
        updated = current[:start] + section.rstrip("\n") + current[end:]
        if updated == current:
            return f"unchanged {path}"
        _write_text(path, updated)
        return f"updated our section of {path}"
    _write_text(path, current.rstrip("\n") + "\n\n" + section)
    return f"appended our section to {path} (your text kept)"


def init(root: Path, agents_md: bool = False, clients: tuple[str, ...] = ("cursor",)) -> list[str]:
    """Prepare the project for the given clients; returns one line per thing done or left alone."""
    root = Path(root).resolve()
    report = [CLIENTS[name](root) for name in dict.fromkeys(clients)]
    rules = (INSTALL_DIR / ".cursorrules").read_text(encoding="utf-8")
    report.append(merge_section(root / ".cursorrules", rules))
    if agents_md:
        report.append(merge_section(root / "AGENTS.md", AGENTS_SECTION))
    context = root / ".context"
    had = {name: (context / name).exists() for name in (".gitignore", ".gitattributes")}
    prepare_context_dir(context)
    for name, existed in had.items():
        report.append(f"{'unchanged' if existed else 'created'} {context / name}")
    if gitdriver.git_dir(root) is None:
        report.append("skipped git drivers: not a git work tree (run init again after git init)")
    else:
        changed = gitdriver.configure(root, PYTHON, str(SERVER_SCRIPT))
        report.append(
            f"configured git merge and diff drivers in the local git config ({', '.join(changed)})"
            if changed else "unchanged git merge and diff drivers (already point at this install)"
        )
    return report
