"""Commands beside the server, for people and for git: `python server.py <command> ...`. This runs
one: the streams, the project root, each failure as its exit code, and the table of commands. The
parser is cli/parser.py's; the commands on the memory's records are cli/record_commands.py's, and
those that set a project up (init, doctor, hook) are here: each loads its room only when run.

Stdlib only and no FastMCP import, so git's drivers start fast. Exit codes that scripts can rely on
are in parser.EXIT_CODES; `--project DIR` is accepted before or after the command name.
"""

from __future__ import annotations

import os
import sys

from ..errors import InvalidInput, MemoryToolError, ProjectRootError
from ..git import drivers as gitdriver
from ..setup.project import PERSON, resolve
from ..visible import visible
from . import layout
from .parser import build_parser, parse
from .record_commands import (
    cmd_export,
    cmd_fold,
    cmd_forget,
    cmd_list,
    cmd_log,
    cmd_review,
    cmd_scan,
    cmd_search,
    cmd_show,
    cmd_stale,
    cmd_stats,
)
from .streams import Output, OutputError, fail, fit_to_terminal, warnings_once


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")
    args = parse(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None and args.command in HANDLERS and args.command != "hook":
        # started with its output closed (`>&-`): what it would say could not be seen
        return fail("the standard output is closed, so nothing could be shown; nothing was done.", 3)
    if sys.stdout is not None and args.command != "hook":  # a hook prints nothing on any failure
        sys.stdout = Output(sys.stdout)
    fit_to_terminal(args)
    try:
        if args.command == "merge-driver":
            return gitdriver.merge_driver(args.base, args.ours, args.theirs, args.name)
        if args.command == "textconv":
            return gitdriver.textconv(args.file)
        warnings_once()
        if args.project is not None and not args.project.strip():  # `--project "$DIR"` with DIR unset
            raise ProjectRootError(
                "--project is empty (an unset variable?); give the project's folder, or leave --project out "
                "for the project of the current directory. Nothing was changed."
            )
        root = resolve(args.project, client=PERSON)
        if args.command in ("log", "forget", "init", "fold") or getattr(args, "redact", False):
            _refuse_guarded(root)
        code = HANDLERS[args.command](root, args)
        if sys.stdout is not None:
            sys.stdout.flush()
        return code
    except (InvalidInput, ProjectRootError) as exc:
        return fail(exc, 2)
    except MemoryToolError as exc:
        return fail(exc, 3)
    except KeyboardInterrupt:  # Ctrl+C: writes are atomic, so the file is the old one or the new one
        return fail("interrupted", 130)
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OutputError as exc:  # a full disk, a descriptor opened for reading: one sentence
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return fail(f"the output could not be written ({exc}); what the command saved, if anything, stays saved.", 3)


def _refuse_guarded(root) -> None:
    if root.guarded:
        raise ProjectRootError(
            f"{root.path} is the home directory or a filesystem root; run this in the project or pass --project DIR."
        )


def cmd_init(root, args) -> int:
    from ..setup.initialise import init

    for line in init(
        root.path,
        agents_md=args.agents_md,
        clients=tuple(args.client) if args.client else None,
        rules=args.rules,
        hooks=not args.no_hooks,
        workflow=not args.no_rules,
    ):
        print(visible(line, lines=True))  # a clone's names and link targets, with their escapes shown
    return 0


def cmd_hook(root, args) -> int:
    from ..hooks.run import main as hook

    return hook(["--client", args.client, "--project", str(root.path)])


def cmd_doctor(root, args) -> int:
    from ..setup.clientcheck import NOTE
    from ..setup.doctor import FAIL, OK, check

    results = check(root)
    for status, sentence in results:
        code = "32" if status == OK else "31" if status == FAIL else "36" if status == NOTE else "33"
        print(f"[{layout.colour(f'{status:>4}', code)}] {visible(sentence, lines=True)}")
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
    "hook": cmd_hook,
    "fold": cmd_fold,
    "review": cmd_review,
}
COMMANDS = tuple(build_parser()[1])
