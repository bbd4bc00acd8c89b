"""Commands beside the server, for people and for git: `python server.py <command> ...`.

Stdlib argparse only and no FastMCP import, so git's drivers start fast. Exit codes that scripts
can rely on are in EXIT_CODES; `--project DIR` is accepted before or after the command name.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path

from . import blocks, console, gitdriver, memory, render, review
from .clients import CLIENTS as CLIENT_KEYS
from .disk import atomic_write
from .errors import InvalidInput, MemoryToolError, ProjectRootError
from .install import SELF
from .memory import DEFAULT_THRESHOLD
from .project import ENV_VAR, resolve
from .records import LIMITS
from .review import MIN_PREFIX

EXIT_CODES = (
    "exit codes: 0 success; 1 nothing found, or a check failed; 2 bad usage or input (nothing "
    "changed); 3 the memory file is locked, or could not be read or written; 130 interrupted"
)
PROJECT_HELP = f"the project (default: ${ENV_VAR}, else the current directory); before or after the command"
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
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")

    def command(name: str, summary: str, for_people: bool = True) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=summary,
            description=summary[0].upper() + summary[1:] + ".",
            parents=[project] if for_people else [],
            epilog=EXIT_CODES if for_people else None,
        )

    p = command("search", "records that mention QUERY, most relevant first; without QUERY every record")
    p.add_argument(
        "query",
        nargs="*",
        metavar="QUERY",
        help="words to look for (quotes not needed); Korean matches inside words too",
    )
    p.add_argument("--topic", metavar="T", help="only records whose topic is exactly T")
    p.add_argument("--json", action="store_true", help=JSON_HELP)
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
        help=f"log records above N make compaction required (default {DEFAULT_THRESHOLD})",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p = command("log", "add a lesson by hand, with the same validation, limits and redaction as log_memory")
    for name, required, what in (
        ("topic", True, "a module-level tag such as auth or payment"),
        ("missing_context", True, "what the instructions lacked"),
        ("lesson", True, "the rule to apply next time"),
        ("ask_next_time", False, "a question to ask first next time"),
    ):
        p.add_argument(
            "--" + name.replace("_", "-"),
            metavar="TEXT",
            required=required,
            default="",
            help=f"{what}; at most {LIMITS[name]:,} bytes in UTF-8",
        )
    p.add_argument(
        "--file",
        metavar="PATH",
        action="append",
        dest="files",
        help="a file the lesson is about, relative to the project root (repeat for several, at most "
        "10); the record is marked stale when a commit changes it",
    )
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
    p = command("init", "prepare a project: client config, rules, .context/, git merge and diff drivers")
    p.add_argument(
        "--client",
        action="append",
        choices=list(CLIENT_KEYS),
        help="client to configure (repeat for several; default: cursor)",
    )
    p.add_argument(
        "--rules",
        choices=["cursorrules", "mdc"],
        help="where Cursor's workflow rules go: .cursorrules, or "
        ".cursor/rules/sentinel-memory.mdc (default: the form the project already uses)",
    )
    p.add_argument("--agents-md", action="store_true", help="also add the workflow to AGENTS.md")
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


def names_a_command(argv: list[str]) -> bool:
    """True when argv names a command (anything else starts the MCP server)."""
    return _command_word(argv) is not None


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


def _parse(argv: list[str]) -> argparse.Namespace:
    """Parse argv; a typo'd command or option gets a suggestion, and usage errors exit 2."""
    parser, commands = build_parser()
    argv = _glued(argv, [parser, *commands.values()])
    word = _command_word(argv)
    if word is not None and word not in commands:
        parser.error(f"unknown command {word!r}{_suggest(word, commands)} (`server.py --help` lists them)")
    args, extra = parser.parse_known_args(argv)
    if extra:
        sub = commands[args.command]
        options = re.findall(r"--[\w-]+", sub.format_usage())
        sub.error(f"unrecognized arguments: {' '.join(extra)}{_suggest(extra[0], options)}")
    return args


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")
    args = _parse(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "merge-driver":
            return gitdriver.merge_driver(args.base, args.ours, args.theirs, args.name)
        if args.command == "textconv":
            return gitdriver.textconv(args.file)
        root = resolve(args.project)
        if args.command in ("log", "forget", "init", "fold") or getattr(args, "redact", False):
            _refuse_guarded(root)
        return HANDLERS[args.command](root, args)
    except (InvalidInput, ProjectRootError) as exc:
        return _fail(exc, 2)
    except MemoryToolError as exc:
        return _fail(exc, 3)
    except KeyboardInterrupt:  # Ctrl+C: writes are atomic, so the file is the old one or the new one
        return _fail("interrupted", 130)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _fail(message: object, code: int) -> int:
    print(f"sentinel-memory: {message}", file=sys.stderr)
    return code


def _refuse_guarded(root) -> None:
    if root.guarded:
        raise ProjectRootError(
            f"{root.path} is the home directory or a filesystem root; run this in the project or pass --project DIR."
        )


def _dump(value) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def cmd_search(root, args) -> int:
    query = " ".join(args.query)
    found, in_scope = memory.matching(root.memory_file, query, args.topic)
    if args.json:
        _dump(found)
    else:
        print(
            console.search_result(
                found,
                in_scope,
                query,
                args.topic,
                root.memory_file,
                bool(in_scope) or bool(review.records(root.memory_file)),
                memory.stale_marks(root.memory_file),
            )
        )
    return 0 if found else 1


def cmd_list(root, args) -> int:
    topics = review.topics(review.records(root.memory_file))
    if args.json:
        _dump([asdict(t) for t in topics])
    elif topics:
        print(console.topic_table(topics))
    else:
        print(f"No records in {root.memory_file}.")
    return 0


def cmd_show(root, args) -> int:
    record = review.record(root.memory_file, args.id)
    if record is None:
        return _fail(console.not_found(args.id, root.memory_file, review.MIN_PREFIX), 1)
    if args.json:
        _dump(record)
    else:
        mark = memory.stale_marks(root.memory_file).get(record["id"])
        print(gitdriver.readable_block(record).rstrip() + (f"\n  {blocks.stale_line(mark)}" if mark else ""))
    return 0


def cmd_stats(root, args) -> int:
    stats = review.stats(root.memory_file, args.threshold)
    if args.json:
        _dump(
            {
                "file": str(stats.file),
                "records": stats.records,
                "logs": stats.logs,
                "principles": stats.principles,
                "bytes": stats.bytes,
                "estimated_tokens": stats.estimated_tokens,
                "threshold": stats.threshold,
                "over_threshold": stats.over_threshold,
                "compaction_required": stats.compaction_required,
                "unreadable_lines": stats.unreadable_lines,
                "topics": [asdict(t) for t in stats.topics],
            }
        )
    else:
        print(console.stats_report(stats))
    return 0


def cmd_log(root, args) -> int:
    logged = memory.upsert(
        root.memory_file, args.topic, args.missing_context, args.lesson, args.ask_next_time, files=args.files
    )
    text = render.log_answer(logged)
    if args.json:
        _dump({"status": logged.status, "id": logged.record["id"], "record": logged.record, "message": text})
    else:
        print(text)
    return 0


def cmd_stale(root, args) -> int:
    records, marks = review.stale(root.memory_file)
    if args.json:
        _dump(
            [
                {
                    "id": r["id"],
                    "topic": r.get("topic"),
                    "stale": blocks.stale_line(marks[r["id"]]),
                    "changes": [asdict(c) for c in marks[r["id"]]],
                    "record": r,
                }
                for r in records
            ]
        )
    else:
        print(console.stale_report(records, marks, root.memory_file))
        if memory.shallow_history(root.memory_file):
            print(render.SHALLOW_NOTE)
    return 0 if records else 1


def cmd_forget(root, args) -> int:
    if not any(i.strip() for i in args.ids):
        raise InvalidInput(
            "no id given: name the records to delete by id, or by a unique prefix of at least "
            f"{MIN_PREFIX} characters (search or list shows them). Nothing was deleted."
        )
    result = review.forget(root.memory_file, args.ids)
    if result.unknown:
        for given in result.unknown:
            _fail(console.not_found(given, root.memory_file, review.MIN_PREFIX), 1)
        return _fail("nothing was deleted", 1)
    out, errors = console.forget_report(result, root.memory_file)
    for line in out:
        print(line)
    for line in errors:
        _fail(line, 1)
    return 1 if errors else 0


def cmd_export(root, args) -> int:
    records = review.records(root.memory_file)
    text = console.markdown(records, root.memory_file, memory.stale_marks(root.memory_file))
    if args.output:
        atomic_write(Path(args.output), text.encode("utf-8"))
        print(f"wrote {blocks.plural(len(records), 'record')} to {args.output}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_scan(root, args) -> int:
    from .secretscan import redact_file, scan

    if args.staged:
        from .precommit import staged_findings

        findings = staged_findings(root.path)
        if args.json:
            _dump([f._asdict() for f in findings])
        elif findings:
            _fail(console.staged_refusal(findings, SELF), 1)
        return 1 if findings else 0
    findings = scan(root.memory_file)
    if args.json:
        _dump([f._asdict() for f in findings])
    if findings and args.redact:
        if not args.json:
            print("\n".join(console.scan_report(findings, root.memory_file)[:-1]))
        print(console.redact_report(*redact_file(root.memory_file), root.memory_file))
        return 0
    if not args.json:
        print("\n".join(console.scan_report(findings, root.memory_file)))
    return 1 if findings else 0


def cmd_fold(root, args) -> int:
    folded = review.fold(root.path, args.file)
    print(console.fold_report(folded, SELF))
    return 0


def cmd_init(root, args) -> int:
    from .init import init

    for line in init(root.path, agents_md=args.agents_md, clients=tuple(args.client or ["cursor"]), rules=args.rules):
        print(line)
    return 0


def cmd_doctor(root, args) -> int:
    from .doctor import FAIL, OK, check

    results = check(root)
    for status, sentence in results:
        code = "32" if status == OK else "31" if status == FAIL else "33"
        print(f"[{console.colour(f'{status:>4}', code)}] {sentence}")
    return 1 if any(status == FAIL for status, _ in results) else 0


HANDLERS = {
    "search": cmd_search,
    "list": cmd_list,
    "show": cmd_show,
    "stats": cmd_stats,
    "log": cmd_log,
    "stale": cmd_stale,
    "forget": cmd_forget,
    "export": cmd_export,
    "scan": cmd_scan,
    "init": cmd_init,
    "doctor": cmd_doctor,
    "fold": cmd_fold,
}
COMMANDS = tuple(build_parser()[1])
