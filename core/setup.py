"""`init`: prepare a project for Sentinel-Memory in one idempotent step, and say what was done."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import gitdriver
from .contextdir import GITATTRIBUTES, GITIGNORE, prepare as prepare_context_dir
from .disk import atomic_write

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
ask_next_time, and the `files` the lesson is about). A record with a `stale:` line cites a file that
changed since it was written: verify it before applying; if it still holds, log it again to refresh
it. When a result says compaction is required, call `compact_memory` and save one
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
    """.codex/config.toml (a trusted project): our table added once, its command and args kept
    current; every other line (other servers, keys added to our table by hand) left as it is."""
    path = root / ".codex" / "config.toml"
    header = f"[mcp_servers.{SERVER_NAME}]"
    wanted = {"command": json.dumps(PYTHON),
              "args": f"[{json.dumps(str(SERVER_SCRIPT))}, \"--project\", {json.dumps(str(root))}]"}
    current = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    lines = current.splitlines()
    if header not in (line.strip() for line in lines):
        table = "\n".join([header, *(f"{key} = {value}" for key, value in wanted.items())]) + "\n"
        _write_text(path, (current.rstrip("\n") + "\n\n" if current.strip() else "") + table)
        return f"{'added to' if current else 'created'} {path}: {header}"
    start = [line.strip() for line in lines].index(header) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    updated, absent = list(lines), []
    for key, value in wanted.items():
        found = [i for i in range(start, end) if lines[i].split("=", 1)[0].strip() == key]
        if found and _spans_lines(lines[found[0]].split("=", 1)[-1].strip()):
            return f"left alone {path}: {header} spreads {key} over several lines; set it by hand to {value}"
        if found:
            updated[found[0]] = f"{key} = {value}"
        else:
            absent.append(f"{key} = {value}")
    updated[start:start] = absent
    if updated == lines:
        return f"unchanged {path}"
    _write_text(path, "\n".join(updated) + "\n")
    return f"updated {path}: {header} command and args (other keys kept)"


def _spans_lines(value: str) -> bool:
    """Whether a TOML value starts here and goes on past this line (an array, a multi-line string)."""
    return (value.startswith("[") and "]" not in value) or value.startswith(('"""', "'''"))


def windsurf_config(root: Path) -> str:
    """Windsurf's MCP config is global: print the entry instead of editing a file outside the project."""
    entry = {"command": PYTHON, "args": [str(SERVER_SCRIPT), "--project", str(root)]}
    return ("left alone ~/.codeium/windsurf/mcp_config.json (global): add under \"mcpServers\": "
            f"{json.dumps({SERVER_NAME: entry}, ensure_ascii=False)}")


CLIENTS = {"cursor": cursor_config, "vscode": vscode_config, "claude": claude_config,
           "codex": codex_config, "windsurf": windsurf_config}


RULES_FILES = {"cursorrules": Path(".cursorrules"), "mdc": Path(".cursor") / "rules" / f"{SERVER_NAME}.mdc"}
# Cursor's project rules: Markdown with front matter; alwaysApply puts the workflow in every request.
MDC_FRONT_MATTER = (
    "---\ndescription: Sentinel-Memory workflow - search the project memory before a task, log what "
    "was missing after it\nglobs:\nalwaysApply: true\n---\n"
)


def rules_choice(root: Path, rules: str | None = None) -> str:
    """Where the workflow goes: the form asked for; else our .mdc if it exists, else an existing
    .cursorrules, else an .mdc when the project keeps its rules in .cursor/rules/, else .cursorrules
    (the form this install ships; Cursor also reads .cursor/rules/*.mdc and calls .cursorrules legacy)."""
    if rules:
        return rules
    if (root / RULES_FILES["mdc"]).exists():
        return "mdc"
    if (root / RULES_FILES["cursorrules"]).exists() or not (root / ".cursor" / "rules").is_dir():
        return "cursorrules"
    return "mdc"


def _section(text: str) -> str:
    return f"{RULES_BEGIN}\n{text.rstrip()}\n{RULES_END}\n"


def merge_section(path: Path, text: str, head: str = "") -> str:
    """Put our section in a shared text file: create it (after `head`), append it, or refresh it
    between the markers."""
    section = _section(text)
    if not path.exists():
        _write_text(path, head + section)
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


def _merge_lines(path: Path, template: str) -> str:
    """Append the template's rule lines that a user's own file lacks (ours route the memory file
    to the drivers and keep locks and copies out of git); the user's lines stay as they are."""
    current = path.read_text(encoding="utf-8-sig")
    have = {line.strip() for line in current.splitlines()}
    missing = [line for line in template.splitlines() if line.strip() and not line.startswith("#")
               and line.strip() not in have]
    if not missing:
        return f"unchanged {path}"
    kept = current.rstrip("\n") + "\n" if current.strip() else ""
    _write_text(path, kept + "\n".join([template.splitlines()[0], *missing]) + "\n")
    return f"added {len(missing)} lines to {path} (your lines kept)"


def rules_files(root: Path, rules: str | None = None) -> list[str]:
    """The workflow in .cursorrules or .cursor/rules/sentinel-memory.mdc, never in both."""
    chosen = rules_choice(root, rules)
    text = (INSTALL_DIR / ".cursorrules").read_text(encoding="utf-8")
    report = [merge_section(root / RULES_FILES[chosen], text, MDC_FRONT_MATTER if chosen == "mdc" else "")]
    for form, other in RULES_FILES.items():
        other = root / other
        if form != chosen and other.exists() and RULES_BEGIN in other.read_text(encoding="utf-8", errors="replace"):
            report.append(f"left alone {other}: it also holds the workflow; remove it from one of the two so "
                          "Cursor does not read it twice")
    return report


def init(root: Path, agents_md: bool = False, clients: tuple[str, ...] = ("cursor",),
         rules: str | None = None) -> list[str]:
    """Prepare the project for the given clients; returns one line per thing done or left alone.
    rules: "cursorrules" or "mdc" (Cursor's .cursor/rules/*.mdc); None picks what the project uses."""
    root = Path(root).resolve()
    report = [CLIENTS[name](root) for name in dict.fromkeys(clients)]
    report += rules_files(root, rules)
    if agents_md:
        report.append(merge_section(root / "AGENTS.md", AGENTS_SECTION))
    context = root / ".context"
    had = {name: (context / name).exists() for name in (".gitignore", ".gitattributes")}
    prepare_context_dir(context)
    for (name, existed), template in zip(had.items(), (GITIGNORE, GITATTRIBUTES)):
        report.append(_merge_lines(context / name, template) if existed else f"created {context / name}")
    if gitdriver.git_dir(root) is None:
        report.append("skipped git drivers: not a git work tree (run init again after git init)")
    else:
        changed = gitdriver.configure(root, PYTHON, str(SERVER_SCRIPT))
        report.append(
            f"configured git merge and diff drivers in the local git config ({', '.join(changed)})"
            if changed else "unchanged git merge and diff drivers (already point at this install)"
        )
    return report
