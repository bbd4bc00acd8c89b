"""`doctor`: check the install, the project root, the memory file, the git wiring and the client
config, and say what to fix. Read-only."""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from ..git import command as gitcmd, drivers as gitdriver
from ..invocation import ENTRY, SELF, path_fix
from ..record.merge import merge_three_way
from ..record.records import LIMITS
from ..record.snapshot import parse
from ..record.store import memory_path, read
from ..tools.render import plural
from . import precommit
from .clients import CLIENTS, COMMAND, SERVER_NAME, extra_check, machine_specific, read_entry, trust_step
from .project import ProjectRoot, enclosing_project
from .scan import scan

OK, WARN, FAIL = "ok", "warn", "FAIL"
# Folders not searched for stray memory files outside git (dependencies, environments, builds).
SKIP_DIRS = {"node_modules", ".venv", "venv", "env", "__pycache__", "build", "dist", "target", ".tox", ".git"}
STRAY_SEARCH_LIMIT = 20_000  # directories visited at most outside git


def check(root: ProjectRoot) -> list[tuple[str, str]]:
    """(status, sentence) pairs, in the order a person would fix them."""
    out: list[tuple[str, str]] = []
    missing = [m for m in ("fastmcp", "filelock") if importlib.util.find_spec(m) is None]
    out.append(
        (FAIL, f"{', '.join(missing)} not installed for {sys.executable}: pip install -r requirements.txt")
        if missing
        else (OK, f"install: {sys.executable} has fastmcp and filelock")
    )
    if not missing:
        from ..faststart.cache import status  # standard library only

        fixable, sentence = status(["--project", str(root.path)])
        out.append((WARN if fixable else OK, sentence))
    if root.guarded:
        out.append(
            (
                FAIL,
                f"project root {root.path} is the home directory or a filesystem root: run in the project "
                "or pass --project DIR",
            )
        )
        return out  # the checks below are about a project; the home's projects each have their own
    else:
        out.append((OK, f"project root {root.path} (from {root.describe()})"))
    out += _memory_file(root.memory_file)
    out += _strays(root.path)
    above = enclosing_project(root.path)
    if above is not None:
        out.append(
            (
                WARN,
                f"{root.memory_file} is below {above}, which has a memory file of its own: run "
                f"`{SELF} fold {root.path.relative_to(above)}` in {above} to bring these records there, "
                "then delete this .context/ folder",
            )
        )
    out += _git(root.path, root.memory_file)
    active, sentence = precommit.status(root.path)
    if active is not None:
        out.append((OK if active else WARN, sentence))
    hooks, unstartable, hooked = _hooks(root.path)
    configured: set[str] = set()
    out += _client(root.path, unstartable, configured)
    out += hooks
    # Said, not warned: doctor cannot see the clients' own trust records.
    out += [
        (OK, trust_step(client, client.key in hooked))
        for client in CLIENTS.values()
        if client.trust and client.key in configured | hooked
    ]
    return out


def _memory_file(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return [(OK, f"memory file {path} does not exist yet (created on the first log)")]
    snap = read(path)
    out = [(OK, f"memory file {path}: {plural(len(snap.records), 'record')}")]
    if snap.unreadable:
        out.append(
            (
                WARN,
                f"{plural(len(snap.unreadable), 'unreadable line')}: the next write moves them to the quarantine file",
            )
        )
    if snap.conflict_regions:
        out.append(
            (
                WARN,
                f"{plural(snap.conflict_regions, 'git conflict region')}: readable as merged; the next "
                f"write stores the merge (or run the merge driver setup: {SELF} init)",
            )
        )
    if snap.duplicates:
        out.append((WARN, f"{plural(snap.duplicates, 'duplicate id')}: the next write keeps the newer of each"))
    if not snap.unreadable and not snap.conflict_regions and snap.text() != snap.raw:
        out.append(
            (WARN, "the file is not in canonical form (order, BOM, CRLF or spacing): the next write normalises it")
        )
    over = sum(
        any(isinstance(e.record.get(k), str) and len(e.record[k].encode()) > n for k, n in LIMITS.items())
        for e in snap.records.values()
    )
    if over:
        out.append(
            (
                WARN,
                f"{plural(over, 'record')} {'exceeds' if over == 1 else 'exceed'} a byte limit "
                "(edited by hand?): shorten them",
            )
        )
    secrets = scan(path)
    if secrets:
        out.append(
            (
                FAIL,
                f"{plural(len(secrets), 'value')} with the shape of a credential: run {SELF} scan --redact, and rotate the keys",
            )
        )
    out += _merge_in_progress(path, snap)
    return out


def _merge_in_progress(path: Path, snap) -> list[tuple[str, str]]:
    """While git is merging the file its index holds base, ours and theirs: compare with the file."""
    stages = gitdriver.index_stages(path)
    if stages is None:
        return []
    base, ours, theirs = (parse(blob) for blob in stages)
    merged = merge_three_way(base.records, ours.records, theirs.records)
    lost = len(merged.keys() - snap.records.keys())
    redo = (
        f"run {SELF} init, then `git checkout -m -- {path.name}` in {path.parent} to redo the merge by id, "
        "then git add it"
    )
    if lost:
        return [
            (
                FAIL,
                f"git is merging {path.name} and the file lacks {plural(lost, 'record')} that merging both sides keeps "
                f"(a merge driver that did not run leaves one side): {redo}",
            )
        ]
    return [(WARN, f"git is merging {path.name} (unmerged in the index): when it reads right, git add it; or {redo}")]


def _git(root: Path, memory: Path) -> list[tuple[str, str]]:
    if gitdriver.git_dir(root) is None:
        return [(WARN, "not a git work tree: the memory is not shared until the project is in git")]
    out = []
    routed = _attributes(root, memory)
    if routed != {"merge": gitdriver.DRIVER, "diff": gitdriver.DRIVER}:
        shown = ", ".join(f"{k}={v}" for k, v in routed.items())
        out.append(
            (
                WARN,
                f"git does not route {memory.name} to the drivers ({shown}): run {SELF} init and "
                "commit .context/.gitattributes",
            )
        )
    config = gitdriver.current_config(root)
    wanted = gitdriver.driver_commands(*ENTRY)
    for key, what in (
        (f"merge.{gitdriver.DRIVER}.driver", "merge driver"),
        (f"diff.{gitdriver.DRIVER}.textconv", "diff textconv"),
    ):
        command = config.get(key)
        if not command:
            out.append((WARN, f"the git {what} is not configured here: run {SELF} init (or let the server run once)"))
            continue
        words = _entry_words(command)
        missing = [w for w in words if _looks_like_path(w) and not Path(w).exists()]
        if not words or missing:
            out.append(
                (
                    FAIL,
                    f"the git {what} points at {' '.join(missing) or command!r}, which does not exist: "
                    f"run {SELF} init from the current install",
                )
            )
        elif command != wanted[key]:
            out.append(
                (
                    WARN,
                    f"the git {what} runs {command!r}, not this install's command: run {SELF} init "
                    "(the MCP server also refreshes it when it starts here)",
                )
            )
        else:
            out.append((OK, f"the git {what} calls {' '.join(words[1:] if len(words) > 1 else words)}"))
    return out


def _entry_words(command: str) -> list[str]:
    """The words of a driver command before its subcommand: what starts the install."""
    try:
        words = shlex.split(command.split(";", 1)[0].split("||", 1)[0])
    except ValueError:
        return []
    cut = next((i for i, w in enumerate(words) if w in ("merge-driver", "textconv")), None)
    return words[:cut] if cut else []


def _looks_like_path(word: str) -> bool:
    return "/" in word or "\\" in word or word.endswith(".py")


def _strays(root: Path) -> list[tuple[str, str]]:
    """Memory files in folders below the project: a session started in a subfolder before the
    server looked for the project's root. Each is folded in with `fold`."""
    found = sorted(_nested_memory_files(root))
    return [
        (
            WARN,
            f"another memory file below the project, {path}: its records are not in the project's memory. "
            f"Fold them in with `{SELF} fold {path.relative_to(root)}` (merged by id, the newer of each "
            "kept), then delete that .context/ folder",
        )
        for path in found
    ]


def _nested_memory_files(root: Path):
    """Memory files below root, the project's own excluded: in git, every file git sees (tracked
    or untracked, not ignored; submodules and nested repositories are projects of their own);
    elsewhere a bounded walk that skips dependency and build folders."""
    own = memory_path(root).resolve()
    if gitdriver.git_dir(root) is not None:
        try:
            result = gitcmd.run(
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                ":(glob)**/.context/memory_log.jsonl",
                cwd=root,
            )
            if result.returncode == 0:
                for name in dict.fromkeys(result.stdout.decode("utf-8", "replace").split("\0")):
                    path = (root / name).resolve() if name else None
                    if path is not None and path != own and path.is_file():
                        yield path
                return
        except (OSError, subprocess.SubprocessError):
            pass
    visited = 0
    for directory, subdirs, _files in os.walk(root):
        visited += 1
        if visited > STRAY_SEARCH_LIMIT:
            return
        subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and (d == ".context" or not d.startswith("."))]
        candidate = Path(directory) / ".context" / "memory_log.jsonl"
        if ".context" in subdirs and candidate.resolve() != own and candidate.is_file():
            yield candidate.resolve()


def _attributes(root: Path, memory: Path) -> dict[str, str]:
    """The merge and diff attributes git applies to the memory file (`git check-attr`)."""
    try:
        result = gitcmd.run(
            "check-attr", "merge", "diff", "--", str(memory.relative_to(root)), cwd=root, text=True, timeout=10
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    pairs = (line.rsplit(": ", 2)[1:] for line in result.stdout.splitlines() if line.count(": ") >= 2)
    return {attr: value for attr, value in pairs}


def _client(root: Path, hooks_unstartable: list[tuple[Path, str]], configured: set[str]) -> list[tuple[str, str]]:
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
            if isinstance(command, str) and command and not _looks_like_path(command) and not shutil.which(command):
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


def _hooks(root: Path) -> tuple[list[tuple[str, str]], list[tuple[Path, str]], set[str]]:
    """Per client whose hooks file holds ours: every event there, once each; each command as the
    client would start it (a name on this machine's PATH), run on sample events in a scratch
    project, its answers in the client's shape; and the trust step the client asks for first.
    Also (the file, the executable) for each command not on PATH, for _client's line about PATH,
    and the clients whose hooks file holds ours."""
    from . import configedit, hookconfig

    out, unstartable, trusted = [], [], set()
    for client in CLIENTS.values():
        if client.hooks is None or not (root / client.hooks).exists():
            continue
        path = root / client.hooks
        try:
            data = configedit.read(configedit.target(path, root))
            hooks = configedit.loads((data or b"{}").decode("utf-8-sig")).get("hooks")
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
            out.append((WARN, f"{path} lacks our hook for {', '.join(missing)}: run {SELF} init --client {client.key}"))
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
            if not _looks_like_path(executable) and shutil.which(executable) is None:
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
    paths = [w for w in argv[:-3] if _looks_like_path(w)]  # what starts it: never a file of the project run
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
    if not _looks_like_path(command):
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
