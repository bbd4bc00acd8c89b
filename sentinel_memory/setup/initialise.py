"""`init`: prepare a project for Sentinel-Memory in one idempotent step, and say what was done."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..git import drivers as gitdriver
from ..invocation import ENTRY, path_fix
from ..record.contextdir import EARLIER_LINES, GITATTRIBUTES, GITIGNORE, prepare as prepare_context_dir
from ..tools.render import plural
from . import clientconfig, clients as table, precommit
from .clients import RULES_FILES

RULES_BEGIN = "<!-- sentinel-memory:begin -->"
RULES_END = "<!-- sentinel-memory:end -->"

AGENTS_SECTION = """\
## Project memory (Sentinel-Memory)

This project keeps what earlier agent sessions learned in `.context/memory_log.jsonl`, through the
`sentinel-memory` MCP server. Before a task call `search_memory` with the task in a few words and,
in `files`, the paths you are about to read or change (the lessons about them come first), and ask
the user the relevant `ask` questions; after a task call `log_memory` (topic, missing_context, lesson,
ask_next_time, and the `files` the lesson is about). A record with a `stale:` line cites a file that
changed since it was written: verify it before applying; if it still holds, log it again to refresh
it. When a result says compaction is required, call `compact_memory` and save one
principle per topic with `log_memory(type="principle", source_ids=[...])`.
"""


def on_path() -> str | None:
    """A warning when the executable the committed configs start is not on this machine's PATH."""
    if shutil.which(table.COMMAND):
        return None
    return (
        f"warning: the client configs start `{table.COMMAND}`, which is not on PATH here, so a client "
        f"cannot start the server yet: {path_fix()}"
    )


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
    if (root / RULES_FILES["cursorrules"]).exists() or not (root / RULES_FILES["mdc"].parent).is_dir():
        return "cursorrules"
    return "mdc"


def _section(text: str) -> str:
    return f"{RULES_BEGIN}\n{text.rstrip()}\n{RULES_END}\n"


def _ours(text: str) -> tuple[int, int] | None:
    """Where our section is: the first begin marker followed by an end marker with no other marker
    between them (a marker left alone by a hand edit never makes the user's text part of ours)."""
    marks = sorted(
        [(m.start(), RULES_BEGIN) for m in re.finditer(re.escape(RULES_BEGIN), text)]
        + [(m.start(), RULES_END) for m in re.finditer(re.escape(RULES_END), text)]
    )
    for (at, kind), (until, after) in zip(marks, marks[1:], strict=False):
        if kind == RULES_BEGIN and after == RULES_END:
            return at, until + len(RULES_END)
    return None


def merge_section(path: Path, text: str, head: str = "", root: Path | None = None) -> str:
    """Put our section in a shared text file: create it (after `head`), append it, or refresh it
    between the markers. Every other byte stays (a BOM, CRLF, the file's mode); a link inside
    `root` is followed, and a file init must not edit is left alone with the reason."""
    from ..configfiles import configedit

    try:
        real = configedit.target(path, root or path.parent)
        data = configedit.read(real)
        if data is None:
            configedit.write(real, (head + _section(text)).encode("utf-8"))
            return f"created {path}"
        bom, current = configedit.split_bom(data)
        section = _section(text).replace("\n", configedit.newline_of(current))
        found = _ours(current)
        if found is not None:
            start, end = found
            updated = current[:start] + section.rstrip("\r\n") + current[end:]
            verb = f"updated our section of {path}"
        else:
            newline = configedit.newline_of(current)
            updated = current.rstrip("\r\n") + newline + newline + section
            verb = f"appended our section to {path} (your text kept)"
        if updated == current:
            return f"unchanged {path}"
        configedit.write(real, bom + updated.encode("utf-8"))
        return verb
    except configedit.Refused as exc:
        return f"left alone {path}: {exc}; the workflow goes between {RULES_BEGIN} and {RULES_END} (docs/clients.md shows it)"


def _merge_lines(path: Path, template: str, root: Path) -> str:
    """Append the template's rule lines that a user's own file lacks (ours route the memory file
    to the drivers and keep locks and copies out of git); the user's lines, a BOM, CRLF and the
    file's mode stay as they are, and a file init must not edit is left alone with the reason."""
    from ..configfiles import configedit

    try:
        real = configedit.target(path, root)
        data = configedit.read(real)
        if data is None:
            configedit.write(real, template.encode("utf-8"))
            return f"created {path}"
        bom, current = configedit.split_bom(data)
        lines = current.splitlines(keepends=True)
        wanted = {line.strip() for line in template.splitlines()}
        upgraded = 0
        for i, line in enumerate(lines):  # a line of ours in an earlier form, brought up to date where it is
            newer = EARLIER_LINES.get(line.strip())
            if newer in wanted and newer not in {x.strip() for x in lines}:
                lines[i] = line.replace(line.strip(), newer, 1)
                upgraded += 1
        current = "".join(lines)
        have = {line.strip() for line in current.splitlines()}
        missing = [
            line
            for line in template.splitlines()
            if line.strip() and not line.startswith("#") and line.strip() not in have
        ]
        if not missing and not upgraded:
            return f"unchanged {path}"
        newline = configedit.newline_of(current)
        kept = current.rstrip("\r\n") + newline if current.strip() else ""
        added = newline.join([template.splitlines()[0], *missing]) + newline if missing else ""
        configedit.write(real, bom + (kept + added).encode("utf-8"))
        said = [f"added {plural(len(missing), 'line')} to {path}"] if missing else []
        said += [f"brought {plural(upgraded, 'line')} of ours in {path} up to date"] if upgraded else []
        return "; ".join(said) + " (your lines kept)"
    except configedit.Refused as exc:
        ours = "; ".join(line for line in template.splitlines() if line.strip() and not line.startswith("#"))
        return f"left alone {path}: {exc}; it should hold these lines: {ours}"


def workflow_rules() -> str:
    """The workflow text that init writes into a project's rules file (package data beside this module)."""
    path = Path(__file__).with_name("cursorrules.md")
    if path.is_file():
        return path.read_text(encoding="utf-8")
    raise FileNotFoundError(f"the workflow rules are missing from this install ({path}): reinstall it")


def _bytes_or_nothing(path: Path) -> bytes:
    """A file's bytes through the careful reader (bounded, no FIFO or device); b"" when absent or refused."""
    from ..configfiles import configedit

    try:
        return configedit.read(path) or b""
    except configedit.Refused:
        return b""


def rules_files(root: Path, rules: str | None = None, clients: tuple[str, ...] = ("cursor",)) -> list[str]:
    """The workflow in .cursorrules or .cursor/rules/sentinel-memory.mdc, never in both: for Cursor
    among the clients, for a form asked for, or to refresh Cursor rules that hold it already (a
    teammate on another client keeps the team's rules current); nothing otherwise."""
    if (
        "cursor" not in clients
        and not rules
        and not any(RULES_BEGIN.encode() in _bytes_or_nothing(root / path) for path in RULES_FILES.values())
    ):
        return []
    chosen = rules_choice(root, rules)
    text = workflow_rules()
    report = [merge_section(root / RULES_FILES[chosen], text, MDC_FRONT_MATTER if chosen == "mdc" else "", root)]
    for form, other in RULES_FILES.items():
        other = root / other
        if form != chosen and RULES_BEGIN.encode() in _bytes_or_nothing(other):
            report.append(
                f"left alone {other}: it also holds the workflow; remove it from one of the two so "
                "Cursor does not read it twice"
            )
    return report


# A line of CLAUDE.md or GEMINI.md that imports AGENTS.md (`@AGENTS.md`, `@./AGENTS.md`).
_IMPORTS_AGENTS = re.compile(rb"^[ \t]*@(?:\./)?AGENTS\.md[ \t]*\r?$", re.M)


def instruction_files(root: Path, clients: tuple[str, ...], agents_md: bool) -> list[str]:
    """The workflow section in the file each client reads as its instructions (CLAUDE.md,
    GEMINI.md, AGENTS.md) and, with agents_md, in AGENTS.md. A file that imports AGENTS.md while
    AGENTS.md holds the section is left as it is: the client would read the workflow twice (when it
    holds the section too, init says so, as for two rules files)."""
    agents = Path("AGENTS.md")
    wanted = [table.CLIENTS[name].instructions for name in dict.fromkeys(clients)] + [agents if agents_md else None]
    files = sorted({f for f in wanted if f is not None}, key=lambda f: (f != agents, str(f)))
    report = []
    for name in files:
        path = root / name
        if (
            name != agents
            and _IMPORTS_AGENTS.search(_bytes_or_nothing(path))
            and RULES_BEGIN.encode() in _bytes_or_nothing(root / agents)
        ):
            report.append(
                f"left alone {path}: it imports AGENTS.md, which holds the workflow, and holds it too; remove it "
                "from one of the two so the client does not read it twice"
                if RULES_BEGIN.encode() in _bytes_or_nothing(path)
                else f"unchanged {path}: it imports AGENTS.md, which holds the workflow"
            )
        else:
            report.append(merge_section(path, AGENTS_SECTION, root=root))
    return report


DEFAULT_CLIENTS = ("cursor",)


def configured_clients(root: Path) -> dict[str, Path]:
    """The clients whose project config in `root` already holds our entry (in a clone: the configs
    the team committed), or whose config or hooks file names our command though it cannot be read
    (a merge left markers in it: init then says so for that client, rather than set up another),
    each with its config's path in the project, in the table's order. Windsurf's config is
    global: never found here."""
    return {
        client.key: client.config
        for client in table.CLIENTS.values()
        if client.config is not None
        and (
            clientconfig.read_entry(root, client)[1] is not None
            or _names_us(root, client.config)
            or _names_us(root, client.hooks)
        )
    }


def _names_us(root: Path, relative: Path | None) -> bool:
    """Whether the project file holds our command's name at all (read bounded, never through a link
    out of the project)."""
    from ..configfiles import configedit

    if relative is None:
        return False
    try:
        data = configedit.read(configedit.target(root / relative, root))
    except configedit.Refused:
        return False
    return data is not None and table.COMMAND.encode() in data


def chosen_clients(root: Path, asked: tuple[str, ...] | None) -> tuple[tuple[str, ...], list[str]]:
    """The clients init configures: those named (--client), else those the project's configs
    already start us for, else Cursor. So a teammate's plain init in a clone configures the team's
    clients and changes no committed file. With the line saying why when they were found and are
    not the default (a rerun in a Cursor project stays all "unchanged")."""
    if asked:
        return tuple(dict.fromkeys(asked)), []
    found = configured_clients(Path(root).resolve())
    if tuple(found) in ((), DEFAULT_CLIENTS):
        return DEFAULT_CLIENTS, []
    named = ", ".join(f"{table.CLIENTS[key].title} ({config.as_posix()})" for key, config in found.items())
    return tuple(found), [
        f"configuring the clients whose project config already starts {table.COMMAND}: {named}; "
        "--client chooses the clients instead"
    ]


def init(
    root: Path,
    agents_md: bool = False,
    clients: tuple[str, ...] | None = None,
    rules: str | None = None,
    hooks: bool = True,
    workflow: bool = True,
) -> list[str]:
    """Prepare the project for the given clients; returns one line per thing done or left alone.
    clients: None (no --client) picks them: those the project's configs already start us for, else Cursor.
    rules: "cursorrules" or "mdc" (Cursor's .cursor/rules/*.mdc); None picks what the project uses.
    hooks: also write the client hooks beside the MCP entry, where the client has them.
    workflow: write the workflow text (Cursor's rules, the clients' instruction files); False
    writes none and keeps what is there."""
    root = Path(root).resolve()
    clients, report = chosen_clients(root, clients)
    for name in clients:
        done = [clientconfig.write(name, root)]
        kept = [] if hooks else clientconfig.hooks_kept(name, root)
        done += clientconfig.write_hooks(name, root) if hooks else kept
        step = table.trust_step(table.CLIENTS[name], hooks or bool(kept))
        # Said when something was written or is left to the user; a rerun that changed nothing is quiet.
        if step and not all(line.startswith(("unchanged", "kept the hooks")) for line in done):
            done.append(f"note: {step}")
        report += done
    warning = on_path()
    if warning and any(table.CLIENTS[name].config is not None for name in clients):
        report.append(warning)
    if workflow:
        report += rules_files(root, rules, clients)
        report += instruction_files(root, clients, agents_md)
    else:
        report.append("wrote no workflow rules (--no-rules): the rules files and instruction files keep what they hold")
    context = root / ".context"
    if context.is_symlink() or (os.path.lexists(context) and not context.is_dir()):
        # A cloned repository's .context linking out of the project (or a file in its place): the
        # tools refuse it, and init writes nothing through it.
        what = f"a symbolic link (to {os.readlink(context)})" if context.is_symlink() else "not a folder"
        report.append(f"left {context} alone: it is {what}, which the tools refuse; remove it and run init again")
    else:
        had = {name: os.path.lexists(context / name) for name in (".gitignore", ".gitattributes")}
        prepare_context_dir(context)
        for (name, existed), template in zip(had.items(), (GITIGNORE, GITATTRIBUTES), strict=True):
            report.append(_merge_lines(context / name, template, root) if existed else f"created {context / name}")
    report.append(precommit.install(root, *ENTRY))
    if gitdriver.git_dir(root) is None:
        report.append("skipped git drivers: not a git work tree (run init again after git init)")
    else:
        changed = gitdriver.configure(root, *ENTRY)
        report.append(
            f"configured git merge and diff drivers in the local git config ({', '.join(changed)})"
            if changed
            else "unchanged git merge and diff drivers (already point at this install)"
        )
    return report
