"""What Sentinel-Memory knows about each client, in one table: where its project config lives,
what init writes there, the fix a refusal names, and the check doctor adds. init, doctor and
project.py read it from here.

A project config is meant to be committed, so what init writes into it is the same bytes on every
teammate's machine: the `sentinel-memory` executable by name (each teammate puts it on PATH once:
pipx or uv tool install), and the project given by what the client expands or by where the client
starts the server. No absolute path of an install or a checkout goes into a project file; a
`cwd` with one, which earlier versions wrote, is removed. Windsurf's config is global (one per
machine), so init prints that entry with this install's paths instead of editing it.

Imported by the server at start-up: the editing code (configedit, tomlkit) loads only in write().
"""

from __future__ import annotations

import json
import ntpath
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..invocation import ENTRY, EXECUTABLE
from . import hookconfig

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
            "in it once (or trust it when codex asks)",
            hooks_trust=", then open /hooks in codex and trust the sentinel-memory hooks (again after they change)",
        ),
        # Gemini CLI reads .gemini/settings.json in the folder it starts in and starts the server there.
        Client(
            "gemini",
            "Gemini CLI",
            Path(".gemini") / "settings.json",
            "mcpServers",
            {"command": COMMAND, "args": []},
            "start gemini in the project's root, where .gemini/settings.json is (the server starts there), "
            'or set "cwd" to the project in ~/.gemini/settings.json',
            ("gemini",),
            {"trust": True},
            hooks=Path(".gemini") / "settings.json",
            trust="Gemini CLI reads a project's .gemini/settings.json (its servers and hooks) only in a trusted "
            "folder: run gemini in the project and trust the folder when asked (or add it to "
            "~/.gemini/trustedFolders.json as TRUST_FOLDER)",
        ),
        Client(
            "windsurf",
            "Windsurf",
            None,
            "mcpServers",
            {},
            'in ~/.codeium/windsurf/mcp_config.json give "--project" and the absolute path',
            ("windsurf",),
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


def snippet(client: Client) -> str:
    """Our entry as the text to paste by hand."""
    if client.config is not None and client.config.suffix == ".toml":
        args = ", ".join(json.dumps(a) for a in client.entry["args"])
        return (
            f'[mcp_servers.{SERVER_NAME}] command = "{COMMAND}", args = [{args}], and '
            f'[mcp_servers.{SERVER_NAME}.tools.{SAVING_TOOL}] approval_mode = "approve"'
        )
    return json.dumps({client.servers: {SERVER_NAME: {**client.entry, **client.defaults}}}, ensure_ascii=False)


def write(key: str, root: Path) -> str:
    """Add or refresh our server in one client's project config; one line saying what was done,
    or why the file was left alone and what to add by hand."""
    from . import configedit, jsonedit

    client, root = CLIENTS[key], Path(root).resolve()
    if client.config is None:
        entry = {"command": ENTRY[0], "args": [*ENTRY[1:], "--project", str(root)]}
        return (
            f"left alone ~/.codeium/windsurf/mcp_config.json (global, one per machine): add under "
            f'"mcpServers": {json.dumps({SERVER_NAME: entry}, ensure_ascii=False)}'
        )
    path = root / client.config
    try:
        target = configedit.target(path, root)
        data = configedit.read(target)
        bom, text = configedit.split_bom(data) if data is not None else (b"", "")
        if client.config.suffix == ".toml":
            new, current, left = _merge_toml(configedit, text, client)
        else:
            left = ""
            new, current = jsonedit.merge_json_entry(
                text, client.servers, SERVER_NAME, client.entry, client.defaults, machine_specific
            )
        left += _twins_note(configedit, new, client, root)
        if data is not None and new == text:
            return f"unchanged {path}{left}"
        configedit.write(target, bom + new.encode("utf-8"))
    except configedit.Refused as exc:
        return f"left alone {path}: {exc}; add this yourself: {snippet(client)}"
    except RecursionError:
        return f"left alone {path}: it nests deeper than a config does; add this yourself: {snippet(client)}"
    shown = f"{path} (through the link, in {target})" if target != path else str(path)
    if client.defaults.get("tools") and not left and not _has_approval(current):
        left = (
            f'; set {SAVING_TOOL} approval_mode = "approve" (Codex saves without asking; make it "prompt" to be asked)'
        )
    if data is None:
        return f"created {shown}: server {SERVER_NAME!r}{left}"
    if current is None:
        return f"added to {shown}: server {SERVER_NAME!r} (the rest of the file kept){left}"
    dropped = [k for k, v in current.items() if k not in client.entry and machine_specific(k, v)]
    kept = [k for k in current if k not in client.entry and k not in client.defaults and k not in dropped]
    notes = ([f"removed this machine's {', '.join(dropped)}"] if dropped else []) + (
        [f"kept your {', '.join(kept)}"] if kept else []
    )
    return f"updated {shown}: server {SERVER_NAME!r}" + (f" ({'; '.join(notes)})" if notes else "") + left


def write_hooks(key: str, root: Path) -> list[str]:
    """Add or refresh our hooks in the client's hooks file (a user's own hooks kept); the line
    saying what was done (init adds the trust step, trust_step)."""
    from . import configedit, jsonedit

    client, root = CLIENTS[key], Path(root).resolve()
    if client.hooks is None:
        return []
    path = root / client.hooks
    wanted = hookconfig.definitions(COMMAND, key)
    top = {"version": 1} if key == "cursor" else {}
    try:
        target = configedit.target(path, root)
        data = configedit.read(target)
        bom, text = configedit.split_bom(data) if data is not None else (b"", "")
        new, changed = jsonedit.merge_json_hooks(text, wanted, hookconfig.is_ours, top, hookconfig.runs_ours)
        if data is not None and new == text:
            return [f"unchanged hooks in {path}"]
        configedit.write(target, bom + new.encode("utf-8"))
    except configedit.Refused as exc:
        shown = json.dumps({**top, "hooks": wanted}, ensure_ascii=False)
        return [f"left alone the hooks in {path}: {exc}; add this yourself: {shown}"]
    except RecursionError:
        return [f"left alone the hooks in {path}: it nests deeper than a config does"]
    verb = "created" if data is None else "updated"
    return [f"{verb} {path}: hooks {', '.join(changed)} run `{hookconfig.command(COMMAND, key)}`"]


def hooks_kept(key: str, root: Path) -> list[str]:
    """For init --no-hooks: the line saying our hooks already in the client's file stay (a
    teammate's --no-hooks must not take the team's hooks away), and how to remove them."""
    from . import configedit, jsonedit

    client, root = CLIENTS[key], Path(root).resolve()
    if client.hooks is None:
        return []
    path = root / client.hooks
    try:
        data = configedit.read(configedit.target(path, root))
        hooks = jsonedit.loads(data.decode("utf-8-sig")).get("hooks") if data else None
    except (configedit.Refused, ValueError, AttributeError, RecursionError):
        return []
    groups = [g for gs in hooks.values() if isinstance(gs, list) for g in gs] if isinstance(hooks, dict) else []
    entries = [
        e for g in groups if isinstance(g, dict) for e in (g["hooks"] if isinstance(g.get("hooks"), list) else [g])
    ]
    if not any(hookconfig.runs_ours(e) for e in entries):
        return []
    return [
        f"kept the hooks in {path} (--no-hooks adds none and removes none): to stop them, delete the "
        f"hooks that run `{hookconfig.command(COMMAND, key)}` from it"
    ]


def _merge_toml(configedit, text: str, client: Client) -> tuple[str, dict | None, str]:
    """Our table with the approval; when only the approval cannot be added (a tools table written
    inline), the table without it and a note saying what to add."""
    from . import tomledit

    where = (client.servers, SERVER_NAME)
    try:
        new, current = tomledit.merge_toml_table(text, where, client.entry, client.defaults, machine_specific)
        return new, current, ""
    except configedit.Refused:
        new, current = tomledit.merge_toml_table(text, where, client.entry, {}, machine_specific)
    return (
        new,
        current,
        (
            f"; left alone the approval of {SAVING_TOOL}: add [mcp_servers.{SERVER_NAME}.tools."
            f'{SAVING_TOOL}] approval_mode = "approve" yourself, or Codex asks before every save'
        ),
    )


def twins(servers: object, root: Path) -> list[str]:
    """The names of the other servers in a config's servers table that start this server for this
    project too (a user's own entry for it under another name): the client would run it twice. An
    entry with --project naming another folder serves another project's memory: not a twin."""
    from .hookconfig import starts_us

    def ours(entry: object) -> bool:
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            return False
        args = [a for a in entry.get("args") or [] if isinstance(a, str)]
        words = [entry["command"], *args[:2]]
        if not any(starts_us(words[:n]) for n in range(1, len(words) + 1)):
            return False
        given = [b for a, b in zip(args, args[1:], strict=False) if a == "--project"]
        given += [a.split("=", 1)[1] for a in args if a.startswith("--project=")]
        try:
            return all("${" in p or Path(p).expanduser().resolve() == Path(root).resolve() for p in given)
        except (OSError, RuntimeError, ValueError):
            return False

    if not isinstance(servers, dict):
        return []
    return [name for name, entry in servers.items() if name != SERVER_NAME and ours(entry)]


def _twins_note(configedit, text: str, client: Client, root: Path) -> str:
    from . import jsonedit

    try:
        if client.config is not None and client.config.suffix == ".toml":
            import tomllib

            servers = tomllib.loads(text).get(client.servers)
        else:
            servers = jsonedit.loads(text).get(client.servers)
    except (ValueError, AttributeError, RecursionError):
        return ""
    names = twins(servers, root)
    if not names:
        return ""
    return (
        f"; note: {', '.join(repr(n) for n in names)} {'starts' if len(names) == 1 else 'start'} {COMMAND} too, so "
        f"the client runs it twice: remove {'it' if len(names) == 1 else 'them'}"
    )


def _has_approval(table: dict | None) -> bool:
    tools = (table or {}).get("tools")
    tool = tools.get(SAVING_TOOL) if isinstance(tools, dict) else None
    return isinstance(tool, dict) and "approval_mode" in tool


def read_entry(root: Path, client: Client) -> tuple[Path, dict | None, str | None, list[str]]:
    """(the config's path, our entry in it or None, why it could not be read or None, warnings:
    what would make init leave the file alone, said as doctor's sentences)."""
    from .configedit import Refused, read, target
    from .jsonedit import loads

    assert client.config is not None, f"{client.key}'s config is global"
    path, warnings = Path(root) / client.config, []
    try:
        # Read what an edit would write, bounded, never through a link out of the project.
        raw_bytes = read(target(path, Path(root)))
    except Refused as exc:
        warnings.append(f"init leaves {path} alone: {exc}")
        return path, None, None, warnings
    duplicates: list[str] = []

    def pairs(items):
        names = [k for k, _v in items]
        duplicates.extend(k for k in dict.fromkeys(names) if names.count(k) > 1 and k in (client.servers, SERVER_NAME))
        return dict(items)

    try:
        if raw_bytes is None:
            raise FileNotFoundError(path)
        raw = raw_bytes.decode("utf-8-sig")
        if client.config.suffix == ".toml":
            import tomllib

            parsed = tomllib.loads(raw)
        else:
            parsed = loads(raw, object_pairs_hook=pairs)  # JSON, or JSONC as VS Code reads it
        servers = parsed.get(client.servers, {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    except UnicodeDecodeError:
        return path, None, f"{path} is not UTF-8 text: save it as UTF-8", warnings
    except (OSError, ValueError, AttributeError, RecursionError) as exc:
        kind = "TOML" if client.config.suffix == ".toml" else "JSON"
        return path, None, f"{path} is not valid {kind} ({str(exc)[:120]}): fix it", warnings
    names = twins(parsed.get(client.servers), Path(root))
    if names:
        warnings.append(
            f"{path} starts {COMMAND} under {', '.join(repr(n) for n in names)} too, so the client runs it twice: "
            f"remove {'it' if len(names) == 1 else 'them'} and keep {SERVER_NAME!r}"
        )
    warnings += [
        f"{path} has the {name!r} key more than once: the client reads only the last, so the servers in the "
        "others are ignored; merge them into one"
        for name in dict.fromkeys(duplicates)
    ]
    if not duplicates:  # what init would do with the file, said before it is run
        from . import configedit, jsonedit

        try:
            if client.config.suffix == ".toml":
                _merge_toml(configedit, raw, client)
            else:
                jsonedit.merge_json_entry(
                    raw, client.servers, SERVER_NAME, client.entry, client.defaults, machine_specific
                )
        except Refused as exc:
            warnings.append(f"init leaves {path} alone: {exc}")
        except RecursionError:
            pass
    return path, entry if isinstance(entry, dict) else None, None, warnings


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
