"""Commands beside the server, for people and for git: `python server.py <command> ...`.

Stdlib argparse only and no FastMCP import, so git's drivers start fast. Exit codes: 0 success,
1 a check or merge did not succeed, 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import sys

from . import gitdriver
from .errors import MemoryToolError
from .project import resolve

COMMANDS = ("init", "doctor", "merge-driver", "textconv")


def names_a_command(argv: list[str]) -> bool:
    """True when argv holds a word that is not an option (or --project's value): a command."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--project":
            skip = True
        elif not arg.startswith("-"):
            return True
    return False


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="server.py", description="Sentinel-Memory commands.")
    parser.add_argument("--project", metavar="DIR", help="project root (default: $SENTINEL_MEMORY_PROJECT, else cwd)")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("init", help="prepare a project: client config, rules, .context/, git drivers")
    p.add_argument("--agents-md", action="store_true", help="also add a section to AGENTS.md")
    sub.add_parser("doctor", help="check the install, the project, the memory file and the git wiring")
    p = sub.add_parser("merge-driver", help="git merge driver (git runs it: %%O %%A %%B %%P)")
    for name in ("base", "ours", "theirs"):
        p.add_argument(name)
    p.add_argument("name", nargs="?", default="")
    p = sub.add_parser("textconv", help="git diff textconv: one readable block per record")
    p.add_argument("file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "merge-driver":
            return gitdriver.merge_driver(args.base, args.ours, args.theirs, args.name)
        if args.command == "textconv":
            return gitdriver.textconv(args.file)
        root = resolve(args.project)
        if args.command == "init":
            from .setup import init

            for line in init(root.path, agents_md=args.agents_md):
                print(line)
            return 0
        if args.command == "doctor":
            from .doctor import FAIL, check

            results = check(root)
            for status, sentence in results:
                print(f"[{status:>4}] {sentence}")
            return 1 if any(status == FAIL for status, _ in results) else 0
    except MemoryToolError as exc:
        print(f"sentinel-memory: {exc}", file=sys.stderr)
        return 2
    return 2
