"""`init`: prepare a project for Sentinel-Memory in one idempotent step, and say what was done."""

from __future__ import annotations

import json
from pathlib import Path

from . import gitdriver, precommit
from .contextdir import GITATTRIBUTES, GITIGNORE, prepare as prepare_context_dir
from .disk import atomic_write
from .install import ENTRY, INSTALL_DIR, PYTHON, SERVER_SCRIPT  # noqa: F401 (PYTHON, SERVER_SCRIPT: re-exported)
from .render import plural

SERVER_NAME = "sentinel-memory"
RULES_BEGIN = "<!-- sentinel-memory:begin -->"
RULES_END = "<!-- sentinel-memory:end -->"
# The tool that saves: a client that gates writes is told, once, to let it run (docs/clients.md).
SAVING_TOOL = "log_memory"

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


def command_and_args(*args: str) -> tuple[str, list[str]]:
    """A config's "command" and "args" that start this install with `args` after it."""
    return ENTRY[0], [*ENTRY[1:], *args]


def server_entry(root: Path) -> dict:
    command, args = command_and_args("--project", "${workspaceFolder}")
    return {"command": command, "args": args, "cwd": str(root)}


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))


def _json_style(text: str) -> tuple[str | int, str]:
    """The indentation and line ending a JSON file uses, to write it back the same way
    (two spaces for a new or one-line file)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            return ("\t" if indent.startswith("\t") else len(indent)), newline
    return 2, newline


def _merge_json_server(path: Path, key: str, wanted: dict, defaults: dict | None = None) -> str:
    """Add or refresh our server under `key` in a client's JSON config. Our keys (`wanted`) are
    set; every other key of our entry (env, envFile, disabled, ...), every other server and the
    rest of the file stay, in their order, with the file's indentation and line endings.
    `defaults` are added only when absent: a value the user changed (e.g. trust) is theirs."""
    defaults = defaults or {}
    config: dict = {}
    text = ""
    if path.exists():
        text = path.read_bytes().decode("utf-8-sig")  # bytes: read_text would hide CRLF
        try:
            config = json.loads(text or "{}")
        except ValueError as exc:
            entry = json.dumps({key: {SERVER_NAME: {**wanted, **defaults}}}, ensure_ascii=False)
            return (f"left alone {path}: it is not plain JSON ({exc}; a file with comments is not rewritten); "
                    f"add this yourself: {entry}")
        if not isinstance(config, dict) or not isinstance(config.get(key, {}), dict):
            return f"left alone {path}: it is not a JSON object with a {key!r} object"
    servers = config.setdefault(key, {})
    current = servers.get(SERVER_NAME)
    entry = dict(current) if isinstance(current, dict) else {}
    entry.update(wanted)
    for name, value in defaults.items():
        entry.setdefault(name, value)
    if entry == current:
        return f"unchanged {path}"
    verb = "updated" if SERVER_NAME in servers else ("added to" if path.exists() else "created")
    servers[SERVER_NAME] = entry
    indent, newline = _json_style(text)
    dumped = json.dumps(config, indent=indent, ensure_ascii=False) + "\n"
    _write_text(path, dumped.replace("\n", newline))
    others = [name for name in servers if name != SERVER_NAME]
    own = [name for name in entry if name not in wanted and name not in defaults]
    kept = ([f"kept {', '.join(others)}"] if others else []) + ([f"kept your {', '.join(own)}"] if own else [])
    return f"{verb} {path}: server {SERVER_NAME!r}" + (f" ({'; '.join(kept)})" if kept else "")


def cursor_config(root: Path) -> str:
    """.cursor/mcp.json: Cursor expands ${workspaceFolder} in args; cwd for clients that honour it."""
    return _merge_json_server(root / ".cursor" / "mcp.json", "mcpServers", server_entry(root))


def vscode_config(root: Path) -> str:
    """.vscode/mcp.json: VS Code's format ("servers", "type": "stdio"), ${workspaceFolder} expanded."""
    command, args = command_and_args("--project", "${workspaceFolder}")
    entry = {"type": "stdio", "command": command, "args": args}
    return _merge_json_server(root / ".vscode" / "mcp.json", "servers", entry)


def claude_config(root: Path) -> str:
    """.mcp.json (Claude Code, project scope): it starts servers in the project, so no --project.
    "alwaysLoad": true, once (a value you change is kept): Claude Code then waits for this server
    before the first turn (at most its 5 s connect limit) instead of starting without its tools,
    which headless `claude -p` otherwise does after about 2 s, and keeps the three tools in the
    prompt instead of behind its tool search (docs/clients.md)."""
    command, args = command_and_args()
    return _merge_json_server(root / ".mcp.json", "mcpServers", {"command": command, "args": args},
                              defaults={"alwaysLoad": True})


def gemini_config(root: Path) -> str:
    """.gemini/settings.json (Gemini CLI's project settings, read in a trusted folder): "cwd" is the
    project; "trust" lets the tools run without a confirmation each time, which headless
    `gemini -p` cannot give. trust is set once: a value you change is kept."""
    command, args = command_and_args()
    return _merge_json_server(root / ".gemini" / "settings.json", "mcpServers",
                              {"command": command, "args": args, "cwd": str(root)}, defaults={"trust": True})


CODEX_TOOL_HEADER = f"[mcp_servers.{SERVER_NAME}.tools.{SAVING_TOOL}]"
CODEX_APPROVAL = 'approval_mode = "approve"'


def codex_config(root: Path) -> str:
    """.codex/config.toml (a trusted project): our table added once, its command and args kept
    current; every other line (other servers, keys added to our table by hand) left as it is.
    Also, once, the approval Codex reads for log_memory: without it Codex asks before every save
    (the tool is annotated destructive) and headless `codex exec` cannot save at all."""
    path = root / ".codex" / "config.toml"
    header = f"[mcp_servers.{SERVER_NAME}]"
    command, args = command_and_args("--project", str(root))
    wanted = {"command": json.dumps(command), "args": "[" + ", ".join(json.dumps(a) for a in args) + "]"}
    current = path.read_text(encoding="utf-8-sig") if path.exists() else ""
    lines = current.splitlines()
    report = []
    text = current
    if header not in (line.strip() for line in lines):
        table = "\n".join([header, *(f"{key} = {value}" for key, value in wanted.items())]) + "\n"
        text = (current.rstrip("\n") + "\n\n" if current.strip() else "") + table
        report.append(f"{'added to' if current else 'created'} {path}: {header}")
    else:
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
        if updated != lines:
            text = "\n".join(updated) + "\n"
            report.append(f"updated {path}: {header} command and args (other keys kept)")
    text, approval = _codex_approval(path, text)
    report += approval
    if text == current:
        return f"unchanged {path}" + ("; " + "; ".join(approval) if approval else "")
    _write_text(path, text)
    return "; ".join(report)


def _codex_approval(path: Path, text: str) -> tuple[str, list[str]]:
    """Add `approval_mode = "approve"` for log_memory when the file sets no approval for it
    (Codex's [mcp_servers.NAME.tools.TOOL] approval_mode: "auto", "prompt" or "approve"). A value
    already there, ours or the user's, is kept. Checked by parsing: when the result would not
    parse (the table spelt another way), the file is left as it is and the report says what to add."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11: no parser, so only the plain case is recognised
        tomllib = None
    if tomllib is None:
        if CODEX_TOOL_HEADER in text:
            return text, []
    else:
        try:
            table = tomllib.loads(text).get("mcp_servers", {}).get(SERVER_NAME, {})
        except (ValueError, AttributeError):
            return text, []
        tools = table.get("tools", {}) if isinstance(table, dict) else {}
        tool = tools.get(SAVING_TOOL) if isinstance(tools, dict) else None
        if isinstance(tool, dict) and "approval_mode" in tool:
            return text, []
    lines = text.splitlines()
    stripped = [line.strip() for line in lines]
    if CODEX_TOOL_HEADER in stripped:
        at = stripped.index(CODEX_TOOL_HEADER) + 1
        candidate = "\n".join([*lines[:at], CODEX_APPROVAL, *lines[at:]]) + "\n"
    else:
        candidate = text.rstrip("\n") + f"\n\n{CODEX_TOOL_HEADER}\n{CODEX_APPROVAL}\n"
    if tomllib is not None:
        try:
            tomllib.loads(candidate)
        except ValueError:
            return text, [f"left alone the approval of {SAVING_TOOL} in {path}: add {CODEX_TOOL_HEADER} with "
                          f"{CODEX_APPROVAL} yourself, or Codex asks before every save"]
    return candidate, [f"set {CODEX_TOOL_HEADER} {CODEX_APPROVAL} (Codex saves without asking; "
                       'make it "prompt" to be asked each time)']


def _spans_lines(value: str) -> bool:
    """Whether a TOML value starts here and goes on past this line (an array, a multi-line string)."""
    return (value.startswith("[") and "]" not in value) or value.startswith(('"""', "'''"))


def windsurf_config(root: Path) -> str:
    """Windsurf's MCP config is global: print the entry instead of editing a file outside the project."""
    command, args = command_and_args("--project", str(root))
    entry = {"command": command, "args": args}
    return ("left alone ~/.codeium/windsurf/mcp_config.json (global): add under \"mcpServers\": "
            f"{json.dumps({SERVER_NAME: entry}, ensure_ascii=False)}")


CLIENTS = {"cursor": cursor_config, "vscode": vscode_config, "claude": claude_config,
           "codex": codex_config, "gemini": gemini_config, "windsurf": windsurf_config}


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
    return f"added {plural(len(missing), 'line')} to {path} (your lines kept)"


def workflow_rules() -> str:
    """The workflow text that init writes into a project's rules file (package data beside this module)."""
    path = Path(__file__).with_name("cursorrules.md")
    if path.is_file():
        return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"the workflow rules are missing from this install ({path}): reinstall it")


def rules_files(root: Path, rules: str | None = None) -> list[str]:
    """The workflow in .cursorrules or .cursor/rules/sentinel-memory.mdc, never in both."""
    chosen = rules_choice(root, rules)
    text = workflow_rules()
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
    for (name, existed), template in zip(had.items(), (GITIGNORE, GITATTRIBUTES), strict=True):
        report.append(_merge_lines(context / name, template) if existed else f"created {context / name}")
    report.append(precommit.install(root, *ENTRY))
    if gitdriver.git_dir(root) is None:
        report.append("skipped git drivers: not a git work tree (run init again after git init)")
    else:
        changed = gitdriver.configure(root, *ENTRY)
        report.append(
            f"configured git merge and diff drivers in the local git config ({', '.join(changed)})"
            if changed else "unchanged git merge and diff drivers (already point at this install)"
        )
    return report
