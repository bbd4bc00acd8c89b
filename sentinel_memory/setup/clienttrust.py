"""`doctor`'s reading of whether the clients that ask for it trust the project yet (Claude Code:
its folder and its server; Codex: the project and each of our hooks; Gemini CLI: the folder), and
whether their own settings turn our hooks off: from their records in the user's home. Read-only."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

from ..errors import StorageError
from ..record.disk import read_regular
from .clientcheck import NOTE, OK, WARN
from .clients import CLIENTS, SERVER_NAME, trust_step

# Codex and Gemini CLI, in detail. Both read nothing of a project they do not trust, and Codex also
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
    for Claude Code, the project's server approved), WARN with the step when they do not, NOTE with
    the step when they cannot tell (the client never used on this machine, or its file unreadable)."""
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
        return NOTE, CLAUDE_STEP[:1].upper() + CLAUDE_STEP[1:]
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
        return NOTE, step
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
        return NOTE, step
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
        return NOTE, step
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
    from ..configfiles import configedit

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
    from ..configfiles.jsonedit import loads

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
