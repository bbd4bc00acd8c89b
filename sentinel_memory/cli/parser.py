"""The command line's parser: every command and option `server.py <command>` accepts (the single
list, built once), `--project DIR` before or after the command, a suggestion for a typo'd command
or option, and `--option -value` read as the option's value. Usage errors exit 2 (argparse).

Stdlib argparse only and no FastMCP import, so git's drivers start fast.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import re

from .. import __version__
from ..invocation import SELF
from ..setup.clients import CLIENTS as CLIENT_KEYS
from ..setup.hookconfig import HOOK_CLIENTS, WRITES_ENV
from ..setup.project import ENV_VAR
from ..tools.memory import DEFAULT_THRESHOLD
from ..tools.parameters import LOG_MEMORY, SEARCH_MEMORY, THRESHOLD
from .maintenance import MIN_PREFIX

EXIT_CODES = (
    "exit codes: 0 success; 1 nothing found, or a check failed; 2 bad usage or input (nothing "
    "changed); 3 the memory file is locked, or could not be read or written; 130 interrupted"
)
PROJECT_HELP = (
    f"the project (default: ${ENV_VAR}, else the project of the current directory, found as git finds its "
    "root); before or after the command"
)
JSON_HELP = "print UTF-8 JSON for scripts instead of text"


@functools.cache
def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser and its commands by name (the single list of what the CLI accepts); built once."""
    # SUPPRESS: a --project after the command must not reset one given before it.
    project = argparse.ArgumentParser(add_help=False)
    project.add_argument("--project", metavar="DIR", default=argparse.SUPPRESS, help=PROJECT_HELP)
    parser = argparse.ArgumentParser(
        prog=SELF,
        epilog=EXIT_CODES,
        description="Sentinel-Memory. With no command: the MCP server on stdio (what a client starts). "
        "With a command: a tool for people and for git.",
    )
    parser.add_argument("--project", metavar="DIR", help=PROJECT_HELP)
    parser.add_argument("--version", action="version", version=f"sentinel-memory {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")

    def command(name: str, summary: str, for_people: bool = True) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=summary,
            description=(summary[0].upper() + summary[1:] + ".").replace("%%", "%"),  # help= is %-formatted
            parents=[project] if for_people else [],
            epilog=EXIT_CODES if for_people else None,
        )

    p = command("search", "records that mention QUERY, most relevant first; without QUERY every record")
    p.add_argument(
        "query",
        nargs="*",
        metavar="QUERY",
        help=SEARCH_MEMORY["query"].short,
    )
    p.add_argument("--topic", metavar="T", help=SEARCH_MEMORY["topic"].short)
    p.add_argument("--file", metavar="PATH", action="append", dest="files", help=SEARCH_MEMORY["files"].short)
    p.add_argument("--json", action="store_true", help=JSON_HELP + "; each record with its match strength and reasons")
    p = command("list", "topics with their log and principle counts and newest date")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("show", "one record, whole")
    p.add_argument("id", metavar="ID", help=f"the record's id, or a unique prefix of at least {MIN_PREFIX} characters")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("stats", "records by type and topic, file size, estimated tokens, compaction status")
    p.add_argument(
        "--threshold",
        metavar="N",
        type=_at_least_one,
        default=DEFAULT_THRESHOLD,
        help=THRESHOLD.short,
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("log", "add a lesson by hand, with the same validation, limits and redaction as log_memory")
    for name in ("topic", "missing_context", "lesson", "ask_next_time"):
        field = LOG_MEMORY[name]
        # Left out, lesson and ask_next_time keep what a refreshed record holds (None); "" clears.
        # missing_context is required of a log record (cmd_log), not of a principle.
        required = name == "topic"
        help = field.short + (
            "" if name in ("topic", "missing_context") else "; left out, a refreshed record keeps its own"
        )
        p.add_argument(field.option, metavar="TEXT", required=required, default=None, help=help)
    p.add_argument(
        "--type",
        choices=["log", "principle"],
        default="log",
        help="principle: save or refresh a principle, found by its topic and lesson (a stale one is refreshed so)",
    )
    p.add_argument("--file", metavar="PATH", action="append", dest="files", help=LOG_MEMORY["files"].short)
    p.add_argument("--json", action="store_true", help=JSON_HELP + " (the outcome and the stored record)")
    p = command(
        "stale", "records whose cited files a commit changed, deleted or renamed after they were written, with why"
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("forget", "delete records in one atomic write under the lock; says what git diff will show")
    p.add_argument(
        "ids",
        nargs="+",
        metavar="ID",
        help=f"ids or unique prefixes (at least {MIN_PREFIX} characters); if one is not found, nothing is deleted",
    )
    p = command("export", "the whole memory as a Markdown document, for a wiki or a review")
    p.add_argument("--format", choices=["markdown"], default="markdown", help="the document's format")
    p.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write UTF-8 to FILE instead of printing (safe on any console, e.g. PowerShell, whose > re-encodes)",
    )
    p = command("scan", "look for credentials already in the memory file")
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--redact", action="store_true", help="replace them with [REDACTED] in place (atomic, under the lock)"
    )
    how.add_argument(
        "--staged",
        action="store_true",
        help="look in .context/ as staged for the next commit instead "
        "(what the pre-commit check runs; exit 1 refuses the commit)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("review", "what changed in the memory between two revisions, by record id, with flags for a reviewer")
    p.add_argument(
        "base", nargs="?", metavar="BASE", help="a revision (default: the merge base with the default branch)"
    )
    p.add_argument("head", nargs="?", metavar="HEAD", help="a revision (default: the work tree)")
    p.add_argument(
        "--format",
        choices=["text", "markdown"],
        default="text",
        help="text for a terminal, or markdown for a pull-request comment or a CI job summary",
    )
    p.add_argument(
        "--max-chars",
        metavar="N",
        type=_at_least_one,
        default=65_536,
        help="markdown only: at most N characters, what did not fit named at the end (default: a GitHub comment's 65,536)",
    )
    p = command("init", "prepare a project: client config, rules, .context/, git merge and diff drivers")
    p.add_argument(
        "--client",
        action="append",
        choices=list(CLIENT_KEYS),
        type=_client_name,
        help="client to configure (repeat for several; default: those the project's configs already "
        "start sentinel-memory for, else cursor)",
    )
    text = p.add_mutually_exclusive_group()
    text.add_argument(
        "--rules",
        choices=["cursorrules", "mdc"],
        help="where Cursor's workflow rules go: .cursorrules, or "
        ".cursor/rules/sentinel-memory.mdc (default: the form the project already uses)",
    )
    text.add_argument(
        "--no-rules",
        action="store_true",
        help="write the workflow nowhere: no Cursor rules, no section in CLAUDE.md, GEMINI.md or AGENTS.md "
        "(what is there is kept; the hooks still run it)",
    )
    p.add_argument("--agents-md", action="store_true", help="also add the workflow to AGENTS.md")
    p.add_argument(
        "--no-hooks",
        action="store_true",
        help="leave the client hooks out (by default init writes them beside the MCP entry where the client has hooks)",
    )
    p = command(
        "hook",
        "answer one event of a coding client's hooks (JSON on stdin) in that client's shape; init configures it",
    )
    p.add_argument(
        "--client",
        required=True,
        choices=list(HOOK_CLIENTS),
        help=f"the client that runs the hook (its writes: ${WRITES_ENV}=deny, context or off)",
    )
    command("doctor", "check the install, the project, the memory file, the git wiring and the client config")
    p = command("fold", "merge a stray memory file (e.g. one doctor found in a subfolder) into the project's memory")
    p.add_argument(
        "file",
        metavar="FILE",
        help="the other .context/memory_log.jsonl, or the folder holding its "
        ".context/; merged by id, the newer version of a shared id kept; the file itself is left as it is",
    )
    p = command("merge-driver", "git's merge driver (git runs it with %%O %%A %%B %%P)", for_people=False)
    for name in ("base", "ours", "theirs"):
        p.add_argument(name)
    p.add_argument("name", nargs="?", default="")
    p = command("textconv", "git's diff textconv: one readable block per record", for_people=False)
    p.add_argument("file")
    return parser, sub.choices


def _at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return int(text)


def _client_name(text: str) -> str:
    """init's --client: our short name in any case ("Claude"); a typo gets the nearest name."""
    key = text.strip().lower()
    if key in CLIENT_KEYS:
        return key
    raise argparse.ArgumentTypeError(
        f"unknown client {text!r}{_suggest(key, CLIENT_KEYS)} (the clients: {', '.join(CLIENT_KEYS)})"
    )


def _command_word(argv: list[str]) -> str | None:
    """The first word that is not an option (nor --project's value): the command, if any."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--project":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _glued(argv: list[str], parsers) -> list[str]:
    """argv with `--option VALUE` written `--option=VALUE` where VALUE starts with '-' and is not an
    option itself (argparse would take `--file -dash.py` for two options)."""
    takes_value: set[str] = set()
    options: set[str] = set()
    for p in parsers:
        for action in p._actions:
            options.update(action.option_strings)
            if action.nargs != 0:
                takes_value.update(o for o in action.option_strings if o.startswith("--"))
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else None
        if (
            arg in takes_value
            and value is not None
            and value.startswith("-")
            and value != "--"
            and value.split("=", 1)[0] not in options
        ):
            out.append(f"{arg}={value}")
            i += 2
        else:
            out.append(arg)
            i += 1
    return out


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse argv; a typo'd command or option gets a suggestion, and usage errors exit 2."""
    parser, commands = build_parser()
    argv = _glued(argv, [parser, *commands.values()])
    word = _command_word(argv)
    if word is not None and word not in commands:
        parser.error(f"unknown command {word!r}{_suggest(word, commands)} (`{SELF} --help` lists them)")
    args, extra = parser.parse_known_args(argv)
    if extra:
        sub = commands[args.command]
        options = re.findall(r"--[\w-]+", sub.format_usage())
        sub.error(f"unrecognized arguments: {' '.join(extra)}{_suggest(extra[0], options)}")
    if args.command == "init" and args.no_rules and args.agents_md:
        commands["init"].error(
            "--agents-md writes the workflow into AGENTS.md and --no-rules writes it nowhere: give one"
        )
    return args
