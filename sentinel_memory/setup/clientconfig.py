"""Our entry and our hooks in a client's project config, the files setup/clients.py's table names:
init's edits (`write`, `write_hooks`, and `hooks_kept` for --no-hooks) and doctor's read of our
entry (`read_entry`), with what would make init leave the file alone said before init is run. A
user's own servers, hooks, comments and formatting are kept (configfiles/jsonedit.py, configfiles/tomledit.py);
the file on disk is configfiles/configedit.py's. Another entry that starts this server for this project
too (`twins`) is named, never removed.

Loaded by init and doctor only: tomlkit loads only when a TOML config is edited.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..configfiles import configedit, jsonedit
from ..invocation import ENTRY
from . import hookconfig
from .clients import CLIENTS, COMMAND, SAVING_TOOL, SERVER_NAME, Client, machine_specific


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
            new, current, left = _merge_toml(text, client)
        else:
            left = ""
            new, current = jsonedit.merge_json_entry(
                text, client.servers, SERVER_NAME, client.entry, client.defaults, machine_specific
            )
        left += _twins_note(new, client, root)
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


def _merge_toml(text: str, client: Client) -> tuple[str, dict | None, str]:
    """Our table with the approval; when only the approval cannot be added (a tools table written
    inline), the table without it and a note saying what to add."""
    from ..configfiles import tomledit

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

    def ours(entry: object) -> bool:
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            return False
        args = [a for a in entry.get("args") or [] if isinstance(a, str)]
        words = [entry["command"], *args[:2]]
        if not any(hookconfig.starts_us(words[:n]) for n in range(1, len(words) + 1)):
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


def _twins_note(text: str, client: Client, root: Path) -> str:
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
    assert client.config is not None, f"{client.key}'s config is global"
    path, warnings = Path(root) / client.config, []
    try:
        # Read what an edit would write, bounded, never through a link out of the project.
        raw_bytes = configedit.read(configedit.target(path, Path(root)))
    except configedit.Refused as exc:
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
            parsed = jsonedit.loads(raw, object_pairs_hook=pairs)  # JSON, or JSONC as VS Code reads it
        if not isinstance(parsed, dict):
            return (
                path,
                None,
                f"{path} holds a JSON {type(parsed).__name__}, not an object, which a client reads: fix it",
                warnings,
            )
        servers = parsed.get(client.servers, {})
        entry = servers.get(SERVER_NAME) if isinstance(servers, dict) else None
    except UnicodeDecodeError:
        return path, None, f"{path} is not UTF-8 text: save it as UTF-8", warnings
    except RecursionError:
        return path, None, f"{path} nests deeper than a config does: fix it", warnings
    except (OSError, ValueError, AttributeError) as exc:
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
        try:
            if client.config.suffix == ".toml":
                _merge_toml(raw, client)
            else:
                jsonedit.merge_json_entry(
                    raw, client.servers, SERVER_NAME, client.entry, client.defaults, machine_specific
                )
        except configedit.Refused as exc:
            warnings.append(f"init leaves {path} alone: {exc}")
        except RecursionError:
            pass
    return path, entry if isinstance(entry, dict) else None, None, warnings
