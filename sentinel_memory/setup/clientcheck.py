"""`doctor`'s checks of the clients' project configs: each MCP entry of ours (can this machine start
what it names; is it portable) and each hooks file of ours (every event once, each command started
as the client would and run on sample events, its answers in the client's shape). Whether the
clients trust the project yet is setup/clienttrust.py's. Read-only."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..invocation import SELF, path_fix
from .clientconfig import read_entry
from .clients import CLIENTS, COMMAND, SERVER_NAME, extra_check, machine_specific

OK, WARN, FAIL = "ok", "warn", "FAIL"  # the status of each of doctor's lines
NOTE = "note"  # a step the user may still have to take, which doctor cannot check here


def looks_like_path(word: str) -> bool:
    return "/" in word or "\\" in word or word.endswith(".py")


def client_configs(
    root: Path, hooks_unstartable: list[tuple[Path, str]], configured: set[str]
) -> list[tuple[str, str]]:
    """Every project-level client config init writes; a warning only when none has our server.
    The configs whose command is not on PATH, and the hooks files (hooks_unstartable), in one
    line per command. Adds to `configured` the clients whose config has our entry."""
    out, unstartable = [], []
    for client in CLIENTS.values():
        if client.config is None or not (root / client.config).exists():
            continue
        path, entry, error, warnings = read_entry(root, client)
        out += [(WARN, w) for w in warnings]
        if error:
            out.append((FAIL, error))
        elif entry:
            configured.add(client.key)
            command = entry.get("command", "")
            if isinstance(command, str) and command and not looks_like_path(command) and not shutil.which(command):
                if command == COMMAND:
                    unstartable.append((path, command))
                else:  # not ours: installing ours would not help
                    first = (
                        "fix what is said above, then "
                        if any(w.startswith(f"init leaves {path}") for w in warnings)
                        else ""
                    )
                    out.append(
                        (
                            FAIL,
                            f"{path} starts `{command}`, which is not on this machine's PATH: {first}run {SELF} "
                            f"init --client {client.key} to write `{COMMAND}`, then commit the file",
                        )
                    )
            else:
                out.append(_entry(path, command, entry.get("args", [])))
            out += [(WARN, e) for e in [extra_check(client, path, entry)] if e]
            elsewhere = _memory_elsewhere(root, entry)
            if elsewhere:
                out.append(
                    (
                        WARN,
                        f"{path} has the server keep its memory in {elsewhere}, not in this project: a cloned "
                        f"repository may point it at any folder; remove that {elsewhere!r} from the entry "
                        "unless you put it there",
                    )
                )
            out += [
                (
                    WARN,
                    f"{path} holds this machine's path in {k!r}, which a teammate's checkout does not have: "
                    f"run {SELF} init to remove it",
                )
                for k, v in entry.items()
                if machine_specific(k, v)
            ]
    none = not out
    everything = unstartable + hooks_unstartable
    for command in dict.fromkeys(c for _p, c in everything):
        named = list(dict.fromkeys(str(p.relative_to(root)) for p, c in everything if c == command))
        what = "the server" + (" or its hooks" if any(c == command for _p, c in hooks_unstartable) else "")
        out.append(
            (
                FAIL,
                f"{', '.join(named)} start{'s' if len(named) == 1 else ''} `{command}`, which is not on this "
                f"machine's PATH, so the client cannot start {what}: {path_fix()}",
            )
        )
    if none and not unstartable:
        out.append(
            (
                WARN,
                f"no client config in {root} names the {SERVER_NAME!r} server: run {SELF} init "
                f"(--client {'|'.join(CLIENTS)}; windsurf's config is global, so this "
                "check cannot see it), or configure your client (docs/clients.md)",
            )
        )
    return out


def _memory_elsewhere(root: Path, entry: dict) -> str:
    """The folder an MCP entry of ours names as the project (`--project DIR` in its args, or
    SENTINEL_MEMORY_PROJECT in its env) when it is not this project, or ''."""
    from .project import ENV_VAR

    named = []
    env = entry.get("env")
    if isinstance(env, dict) and isinstance(env.get(ENV_VAR), str):
        named.append(env[ENV_VAR])
    args = entry.get("args")
    words = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
    for i, word in enumerate(words):
        if word == "--project" and i + 1 < len(words):
            named.append(words[i + 1])
        elif word.startswith("--project="):
            named.append(word.split("=", 1)[1])
    here = root.resolve()
    for folder in named:
        # ${workspaceFolder}: the client's own word for the folder it opened (init writes it for
        # Cursor and VS Code); any other variable (${userHome}, ${workspaceFolder}/..) may be anywhere
        if folder.rstrip("/\\") in ("", ".", "${workspaceFolder}", "${workspaceRoot}"):
            continue
        if "${" in folder or (here / Path(folder).expanduser()).resolve() != here:
            return folder
    return ""


def hook_files(root: Path) -> tuple[list[tuple[str, str]], list[tuple[Path, str]], set[str]]:
    """Per client whose hooks file holds ours: every event there, once each; each command as the
    client would start it (a name on this machine's PATH), run on sample events in a scratch
    project, its answers in the client's shape; and the trust step the client asks for first.
    Also (the file, the executable) for each command not on PATH, for client_configs' line about PATH,
    and the clients whose hooks file holds ours."""
    from ..configfiles import configedit, jsonedit
    from . import hookconfig

    out, unstartable, trusted = [], [], set()
    for client in CLIENTS.values():
        if client.hooks is None or not (root / client.hooks).exists():
            continue
        path = root / client.hooks
        try:
            data = configedit.read(configedit.target(path, root))
            hooks = jsonedit.loads((data or b"{}").decode("utf-8-sig")).get("hooks")
        except configedit.Refused as exc:
            if client.hooks != client.config:  # else the config's own check has said it
                out.append((WARN, f"init leaves the hooks in {path} alone: {exc}"))
            continue
        except (ValueError, AttributeError, RecursionError) as exc:
            out.append(
                (
                    WARN,
                    f"{path}: its hooks could not be read ({str(exc)[:120]}): fix it, then run {SELF} init "
                    f"--client {client.key}",
                )
            )
            continue
        ours = {
            event: [
                entry
                for group in groups
                if isinstance(group, dict)
                for entry in (group["hooks"] if isinstance(group.get("hooks"), list) else [group])
                if hookconfig.runs_ours(entry)
            ]
            for event, groups in (hooks.items() if isinstance(hooks, dict) else ())
            if isinstance(groups, list)
        }
        wanted = hookconfig.definitions(COMMAND, client.key)
        present = [event for event in wanted if ours.get(event)]
        if not present:
            continue
        missing = [event for event in wanted if event not in present]
        if missing:
            out.append(
                (
                    WARN,
                    f"{path} lacks our hook for {', '.join(missing)}: run {SELF} init --client {client.key} to add "
                    f"{'it' if len(missing) == 1 else 'them'}, or leave this if you removed "
                    f"{'it' if len(missing) == 1 else 'them'} on purpose",
                )
            )
        twice = [event for event in present if len(ours[event]) > 1]
        if twice:
            out.append(
                (
                    WARN,
                    f"{path} runs our hook more than once on {', '.join(twice)}: run {SELF} init --client {client.key}",
                )
            )
        for command in dict.fromkeys(entry["command"] for event in present for entry in ours[event]):
            executable = hookconfig.command_words(command)[0]
            if not looks_like_path(executable) and shutil.which(executable) is None:
                unstartable.append((path, executable))
            else:
                out.append(_hook_command(client, root, path, command))
        trusted.add(client.key)
    return out, unstartable, trusted


def _hook_command(client, root: Path, path: Path, command: str) -> tuple[str, str]:
    """Whether the client can start the hook `command` on this machine, and whether what starts
    answers in the client's shape. A name is looked up on PATH, as the client does; a path, which
    a teammate's machine does not have, is not run."""
    from . import hookconfig

    argv = hookconfig.command_words(command)
    portable = f"`{hookconfig.command(COMMAND, client.key)}`"
    paths = [w for w in argv[:-3] if looks_like_path(w)]  # what starts it: never a file of the project run
    if paths:
        missing = [
            p for p in paths if not (root / p).exists()
        ]  # a relative one: from the project, where the client runs it
        if missing:
            return (
                FAIL,
                f"{path} runs the hook as `{command}`, and {missing[0]} does not exist on this machine: run "
                f"{SELF} init --client {client.key} (it writes {portable}, found on each teammate's PATH)",
            )
        return (
            WARN,
            f"{path} runs the hook as `{command}`, through a path ({paths[0]}) that doctor does not run and a "
            f"teammate's machine may not have: run {SELF} init --client {client.key} to write {portable} instead, "
            "then commit the file",
        )
    found = shutil.which(argv[0]) or argv[0]
    wrong = hookconfig.probe([found, *argv[1:]], client.key)
    if wrong:
        return (
            FAIL,
            f"{client.title}'s hooks in {path} (`{command}`, {found}) did not answer in its shape: "
            f"{'; '.join(wrong)}; run {SELF} init --client {client.key}, and check that `{argv[0]}` on PATH "
            "is this version",
        )
    moments = "session start, write, stop" if client.key == "cursor" else "prompt, write, stop"
    return (OK, f"{client.title}'s hooks in {path} answer in its shape ({moments}; `{command}`, {found})")


def _entry(path: Path, command, args) -> tuple[str, str]:
    """Whether this machine can start what the config names. A bare name is looked up on PATH (the
    committed form); an absolute path works only on the machine that wrote it."""
    args = args if isinstance(args, list) else []
    if not isinstance(command, str) or not command:
        return (FAIL, f"{path} names no command for {SERVER_NAME!r}: run {SELF} init")
    if not looks_like_path(command):
        return (OK, f"{path} starts {' '.join([command, *map(str, args)])} ({shutil.which(command)})")
    missing = [
        p for p in [command] + [a for a in args if isinstance(a, str) and a.endswith(".py")] if not Path(p).exists()
    ]
    if missing:
        return (
            FAIL,
            f"{path} points at {', '.join(missing)}, which does not exist on this machine: run {SELF} init "
            f"(it writes `{COMMAND}` instead, found on each teammate's PATH)",
        )
    return (
        WARN,
        f"{path} starts {command}, an absolute path of this machine that a teammate does not have: run "
        f"{SELF} init to write `{COMMAND}` instead, then commit the file",
    )
