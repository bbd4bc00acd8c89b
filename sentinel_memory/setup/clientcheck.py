"""`doctor`'s checks of the clients' project configs: each MCP entry of ours (can this machine start
what it names; is it portable) and each hooks file of ours (every event once, each command started
as the client would and run on sample events, its answers in the client's shape); and whether the
clients that ask for it trust the project yet (their records in the user's home). Read-only."""

from __future__ import annotations

import os
import re
import shutil
import tomllib
from pathlib import Path

from ..errors import StorageError
from ..invocation import SELF, path_fix
from ..record.disk import read_regular
from .clientconfig import read_entry
from .clients import CLIENTS, COMMAND, SERVER_NAME, extra_check, machine_specific, trust_step

OK, WARN, FAIL = "ok", "warn", "FAIL"  # the status of each of doctor's lines


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


def hook_files(root: Path) -> tuple[list[tuple[str, str]], list[tuple[Path, str]], set[str]]:
    """Per client whose hooks file holds ours: every event there, once each; each command as the
    client would start it (a name on this machine's PATH), run on sample events in a scratch
    project, its answers in the client's shape; and the trust step the client asks for first.
    Also (the file, the executable) for each command not on PATH, for client_configs' line about PATH,
    and the clients whose hooks file holds ours."""
    from . import configedit, hookconfig, jsonedit

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


# -------------------------------------------------------------------------------------- trust
# Whether Codex and Gemini CLI have been told to trust the project yet, read from their own records
# in the user's home, for `doctor`. Both read nothing of a project they do not trust, and Codex also
# skips project hooks nobody has reviewed, without a word; so doctor says which step is still to do.
#
# What each client does, observed here (Codex 0.171, Gemini CLI 0.61):
# - Codex: `[projects."<the project's root>"] trust_level = "trusted"` in $CODEX_HOME/config.toml
#   (~/.codex); a trusted parent folder or a subfolder does not count. Each project hook runs only
#   once /hooks has recorded `[hooks.state."<root>/.codex/hooks.json:<event>:<group>:<handler>"]
#   trusted_hash = "sha256:…"`. Its hash is Codex's own, so doctor can tell a hook never reviewed
#   from one reviewed, not a review made before the hook last changed.
# - Gemini CLI: GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder (false, or
#   GEMINI_RESTRICTED_MODE=true, none); `security.folderTrust.enabled: false` in
#   ~/.gemini/settings.json turns the check off; else the longest rule of ~/.gemini/trustedFolders.json
#   that holds the folder decides (TRUST_FOLDER, TRUST_PARENT: its parent folder, DO_NOT_TRUST).
#   GEMINI_CLI_HOME stands for the home, GEMINI_CLI_TRUSTED_FOLDERS_PATH for that file.
#
# Read-only: the user's own files (a link is followed: dotfiles are often linked), at most 1 MiB,
# a FIFO or device never opened. A file that cannot be read or parsed leaves doctor saying the step
# as init does.

HOME_FILE_BYTES = 1024 * 1024  # a client's own file in the home: read at most this much
CLAUDE_STATE_BYTES = 32 * 1024 * 1024  # ~/.claude.json, which also keeps each project's history
CODEX_HOOKS = CLIENTS["codex"].hooks or Path()
_UNKNOWN = object()  # a file that exists but could not be read or parsed


def trust_lines(root: Path, clients: set[str], hooked: set[str]) -> list[tuple[str, str]]:
    """doctor's line per client of `clients` that needs trust (Claude Code, Codex, Gemini CLI): OK
    when its records trust the project (and, for Codex, each of our hooks when `hooked` holds it;
    for Claude Code, the project's server approved), WARN with the step when they do not, the step
    alone when they cannot tell (the client never used on this machine, or its file unreadable)."""
    out = []
    if "claude" in clients:
        out += _claude(root, "claude" in hooked)
    if "codex" in clients:
        out.append(_codex(root, "codex" in hooked))
    if "gemini" in clients:
        out.append(_gemini(root, "gemini" in hooked))
    if "gemini" in hooked:
        out += _gemini_hooks_off(root)
    return out


CLAUDE_STEP = CLIENTS["claude"].trust


def _claude(root: Path, hooked: bool) -> list[tuple[str, str]]:
    """Claude Code (in a terminal) starts a project's .mcp.json server only in a folder you trusted
    (`hasTrustDialogAccepted` under the project's root in ~/.claude.json, $CLAUDE_CONFIG_DIR's when
    set) and once you chose to use it (`enabledMcpjsonServers` or `enableAllProjectMcpServers` in
    any settings file); `disabledMcpjsonServers` in any of them, or `disabledMcpServers` (/mcp) in
    ~/.claude.json, turns it off. Observed with Claude Code 2.1.332's `claude mcp list`. With our
    hooks in `hooked`, also `disableAllHooks` in any settings file, which runs none of them (seen:
    a prompt naming a lesson's file then got nothing in `claude -p`)."""
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    state_path = Path(config_dir or Path.home()) / ".claude.json"
    user_path = Path(config_dir) / "settings.json" if config_dir else Path.home() / ".claude" / "settings.json"
    folder = (CLIENTS["claude"].hooks or Path()).parent  # .claude/
    settings = [(_shown(user_path), _read(user_path, _jsonc))]
    settings += [_in_project(root, folder / name) for name in ("settings.json", "settings.local.json")]
    out = [_claude_server(root, settings, state_path)]
    off = [where for where, data in settings if isinstance(data, dict) and data.get("disableAllHooks") is True]
    if hooked and off:
        reason = f"{off[0]} sets disableAllHooks, so Claude Code runs none of the sentinel-memory hooks"
        out.insert(0, (WARN, f"{reason}: remove it to have them"))
    return out


def _claude_server(root: Path, settings: list, state_path: Path) -> tuple[str, str]:
    """Whether Claude Code trusts the folder and uses the project's server (see _claude)."""
    rejected = next((where for where, data in settings if SERVER_NAME in _names(data, "disabledMcpjsonServers")), None)
    if rejected:
        return WARN, (
            f"{rejected} lists {SERVER_NAME!r} in disabledMcpjsonServers, so Claude Code never starts the project's "
            f"server: remove it there, or run `claude mcp reset-project-choices` in the project and choose 'Use this "
            "MCP server' when claude asks"
        )
    state = _read(state_path, _jsonc, CLAUDE_STATE_BYTES)
    if state is None or state is _UNKNOWN:
        return OK, CLAUDE_STEP[:1].upper() + CLAUDE_STEP[1:]
    shown = _shown(state_path)
    project = next(
        (_table(_table(state, "projects"), p) for p in _spellings(root) if _table(_table(state, "projects"), p)), {}
    )
    if SERVER_NAME in _names(project, "disabledMcpServers"):
        return WARN, f"{shown}: the project's {SERVER_NAME!r} server is turned off for this project: turn it on in /mcp"
    approved = any(
        SERVER_NAME in _names(data, "enabledMcpjsonServers")
        or (isinstance(data, dict) and data.get("enableAllProjectMcpServers") is True)
        for _, data in settings
    )
    if project.get("hasTrustDialogAccepted") is not True:
        return WARN, f"{shown} does not trust this folder yet: {CLAUDE_STEP}"
    if not approved:
        return WARN, (
            f"Claude Code trusts this folder but was not told to use the project's {SERVER_NAME!r} server yet (`claude "
            "mcp list` shows it pending approval): run claude in the project and choose 'Use this MCP server'"
        )
    return OK, f"Claude Code trusts this folder and uses the project's {SERVER_NAME!r} server ({shown})"


def _names(data: object, key: str) -> list:
    """data[key] when data is a table holding a list there, else an empty one."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, list) else []


def _codex(root: Path, hooked: bool) -> tuple[str, str]:
    step = trust_step(CLIENTS["codex"], hooked)
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / _folder("codex"))
    config = _read(home / "config.toml", tomllib.loads)
    if config is _UNKNOWN or (config is None and not home.is_dir()):
        return OK, step
    config = config if isinstance(config, dict) else {}
    shown = _shown(home / "config.toml")
    projects = _table(config, "projects")
    trust = next((_table(projects, p) for p in _spellings(root) if _table(projects, p)), {})
    if trust.get("trust_level") != "trusted":
        said = "marks this project untrusted" if trust.get("trust_level") else "does not trust this project yet"
        return WARN, f"{shown} {said}, so Codex reads nothing in {_folder('codex')}/: {_action(step)}"
    if not hooked:
        return OK, f"{shown} trusts this project"
    if _table(config, "features").get("hooks") is False:  # seen to run none with Codex 0.171
        return WARN, f"{shown} sets hooks = false under [features], so Codex runs no hooks: remove it to have ours"
    state = _table(_table(config, "hooks"), "state")
    keys = _codex_hook_keys(root)
    if not keys:
        return OK, step
    unreviewed = [k for k in keys if not any(_table(state, spelling).get("trusted_hash") for spelling in k)]
    if unreviewed:
        return WARN, (
            f"{shown} trusts this project but not the sentinel-memory hooks yet ({len(unreviewed)} of {len(keys)} "
            "never reviewed), and Codex skips them without a word: open /hooks in codex and trust them"
        )
    return OK, (
        f"{shown} trusts this project and has reviewed the sentinel-memory hooks (if they changed since, "
        "/hooks shows them as modified and Codex skips them until you trust them again)"
    )


def _codex_hook_keys(root: Path) -> list[list[str]]:
    """Per hook of ours in .codex/hooks.json, the keys Codex may file its review under (one per
    spelling of the root): `<hooks.json>:<event in snake_case>:<group>:<handler>`."""
    from .hookconfig import runs_ours

    hooks = _table(_in_project(root, CODEX_HOOKS)[1], "hooks")
    keys = []
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if runs_ours(handler):
                    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
                    keys.append([f"{Path(p) / CODEX_HOOKS}:{snake}:{g}:{h}" for p in _spellings(root)])
    return keys


def _gemini(root: Path, hooked: bool) -> tuple[str, str]:
    step = trust_step(CLIENTS["gemini"], hooked)
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true" or os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return WARN, f"this shell's environment tells Gemini CLI to trust no folder: {_action(step)}"
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return OK, "Gemini CLI trusts every folder (GEMINI_CLI_TRUST_WORKSPACE=true in this shell's environment)"
    home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / _folder("gemini")
    settings = _read(home / "settings.json", _jsonc)
    if _table(_table(settings, "security"), "folderTrust").get("enabled") is False:
        return (
            OK,
            f"Gemini CLI's folder trust is off ({_shown(home / 'settings.json')}): it reads this project's settings",
        )
    path = Path(os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or home / "trustedFolders.json")
    rules = _read(path, _jsonc)
    if rules is _UNKNOWN or (rules is None and not home.is_dir()):
        return OK, step
    level = _gemini_level(root, rules if isinstance(rules, dict) else {})
    shown = _shown(path)
    if level in ("TRUST_FOLDER", "TRUST_PARENT"):
        return OK, f"{shown} trusts this folder"
    said = "says DO_NOT_TRUST for this folder" if level == "DO_NOT_TRUST" else "does not trust this folder yet"
    return WARN, f"{shown} {said}, so Gemini CLI reads nothing in {_folder('gemini')}/ here: {_action(step)}"


def _gemini_hooks_off(root: Path) -> list[tuple[str, str]]:
    """A warning when Gemini CLI's settings keep our hooks from running: `hooksConfig.enabled`
    false (the project's settings over the user's) runs no hook, and `hooksConfig.disabled` (a
    union of both) names the hooks it skips. Seen with Gemini CLI 0.61: a prompt naming a lesson's
    file then got nothing."""
    user = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / _folder("gemini") / "settings.json"
    sources = [(_shown(user), _read(user, _jsonc)), _in_project(root, CLIENTS["gemini"].config or Path())]
    enabled = [(where, _table(data, "hooksConfig").get("enabled")) for where, data in sources]
    said = [(where, value) for where, value in enabled if isinstance(value, bool)]
    if said and said[-1][1] is False:
        return [
            (
                WARN,
                f"{said[-1][0]} sets hooksConfig.enabled to false, so Gemini CLI runs no hooks: remove it to have ours",
            )
        ]
    named = [where for where, data in sources if SERVER_NAME in _names(_table(data, "hooksConfig"), "disabled")]
    if named:
        return [
            (
                WARN,
                f"{named[0]} lists {SERVER_NAME!r} in hooksConfig.disabled, so Gemini CLI skips our hooks: remove it to have them",
            )
        ]
    return []


def _gemini_level(root: Path, rules: dict) -> str | None:
    """The trust level of the longest rule that holds the project (TRUST_PARENT: its parent)."""
    where = Path(os.path.realpath(root))
    best, level = -1, None
    for rule, value in rules.items():
        if value not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST") or not isinstance(rule, str):
            continue
        folder = Path(os.path.realpath(os.path.dirname(rule) if value == "TRUST_PARENT" else rule))
        if (where == folder or folder in where.parents) and len(rule) > best:
            best, level = len(rule), value
    return level


def _read(path: Path, parse, limit: int = HOME_FILE_BYTES):
    """The parsed file; None when it does not exist; _UNKNOWN when it cannot be read or parsed."""
    try:
        data = read_regular(os.path.realpath(path), limit)
        return None if data is None else parse(data.decode("utf-8-sig"))
    except (StorageError, ValueError, RecursionError):
        return _UNKNOWN


def _in_project(root: Path, relative: Path) -> tuple[str, object]:
    """(the relative path, the parsed JSON or JSONC file of the project there): None when absent,
    _UNKNOWN when refused (a link out of the project, a FIFO, too big) or unparsable."""
    from . import configedit

    try:
        data = configedit.read(configedit.target(root / relative, root))
        return str(relative), _jsonc(data.decode("utf-8-sig")) if data else None
    except (configedit.Refused, ValueError, RecursionError):
        return str(relative), _UNKNOWN


def _folder(client: str) -> str:
    """The folder of the client's project config (.codex, .gemini): the client keeps its user
    files in a folder of the same name in the home."""
    config = CLIENTS[client].config
    assert config is not None
    return config.parts[0]


def _table(data: object, key: str) -> dict:
    """data[key] when data is a table and that is a table too, else an empty one."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _jsonc(text: str):
    from .jsonedit import loads

    return loads(text)


def _spellings(root: Path) -> list[str]:
    """The root as given and as resolved (a link in it), each also with forward slashes (a client
    may file a Windows path so), each once."""
    found = [str(root), os.path.realpath(root)]
    return list(dict.fromkeys(found + [f.replace("\\", "/") for f in found]))


def _shown(path: Path) -> str:
    """A path of the home as people write it (~/.codex/config.toml)."""
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text.startswith(home + os.sep) else text


def _action(step: str) -> str:
    """What the user does, from trust_step's sentence (why, a colon, then what to do)."""
    return step.split(": ", 1)[-1]
