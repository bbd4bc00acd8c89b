"""Commands beside the server, for people and for git: `python server.py <command> ...`.

Stdlib argparse only and no FastMCP import, so git's drivers start fast. Exit codes that scripts
can rely on: 0 success, 1 nothing found or a check failed, 2 bad usage or input, 3 lock or disk.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import gitdriver, render
from .errors import InvalidInput, MemoryToolError, ProjectRootError
from .memory import DEFAULT_THRESHOLD, find, forget, log
from .project import resolve
from .store import read
from .terminal import colour, table

COMMANDS = ("search", "list", "show", "stats", "log", "forget", "export", "scan", "init", "doctor", "merge-driver", "textconv")


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
    parser = argparse.ArgumentParser(
        prog="server.py",
        description="Sentinel-Memory. With no command: the MCP server on stdio. With a command: see below.",
    )
    parser.add_argument("--project", metavar="DIR", help="project root (default: $SENTINEL_MEMORY_PROJECT, else cwd)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="command")

    p = sub.add_parser("search", help="records most relevant to QUERY (all of them, best first)")
    p.add_argument("query", nargs="?", default="")
    p.add_argument("--topic", help="only this exact topic")
    p.add_argument("--json", action="store_true", help="one JSON array of records")
    p = sub.add_parser("list", help="topics with record counts and newest dates")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("show", help="one record, whole")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("stats", help="records by type and topic, size, tokens, compaction status")
    p.add_argument("--json", action="store_true")
    p.add_argument("--threshold", type=int, default=DEFAULT_THRESHOLD)
    p = sub.add_parser("log", help="add a lesson by hand (same validation and redaction as the tool)")
    p.add_argument("--topic", required=True)
    p.add_argument("--missing-context", required=True)
    p.add_argument("--lesson", required=True)
    p.add_argument("--ask-next-time", default="")
    p = sub.add_parser("forget", help="delete records by id (atomic, under the lock)")
    p.add_argument("ids", nargs="+", metavar="ID")
    p = sub.add_parser("export", help="the whole memory as a readable document")
    p.add_argument("--format", choices=["markdown"], default="markdown")

    p = sub.add_parser("scan", help="look for credentials already in the memory file; --redact replaces them")
    p.add_argument("--redact", action="store_true", help="replace them in place (atomic, under the lock)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("init", help="prepare a project: client config, rules, .context/, git drivers")
    p.add_argument("--agents-md", action="store_true", help="also add a section to AGENTS.md")
    p.add_argument("--client", action="append", choices=["cursor", "vscode", "claude", "codex", "windsurf"],
                   help="client to configure (repeat for several; default: cursor)")
    sub.add_parser("doctor", help="check the install, the project, the memory file and the git wiring")
    p = sub.add_parser("merge-driver", help="git merge driver (git runs it with %%O %%A %%B %%P)")
    for name in ("base", "ours", "theirs"):
        p.add_argument(name)
    p.add_argument("name", nargs="?", default="")
    p = sub.add_parser("textconv", help="git diff textconv: one readable block per record")
    p.add_argument("file")
    return parser


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8")
    args = _parser().parse_args(argv)
    try:
        if args.command == "merge-driver":
            return gitdriver.merge_driver(args.base, args.ours, args.theirs, args.name)
        if args.command == "textconv":
            return gitdriver.textconv(args.file)
        root = resolve(args.project)
        if args.command in ("log", "forget", "init") or getattr(args, "redact", False):
            _refuse_guarded(root)
        return HANDLERS[args.command](root, args)
    except (InvalidInput, ProjectRootError) as exc:
        print(f"sentinel-memory: {exc}", file=sys.stderr)
        return 2
    except MemoryToolError as exc:
        print(f"sentinel-memory: {exc}", file=sys.stderr)
        return 3
    except BrokenPipeError:  # output piped into `head` and the like: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _refuse_guarded(root) -> None:
    if root.guarded:
        raise ProjectRootError(f"{root.path} is the home directory or a filesystem root; run this in the project "
                               "or pass --project DIR.")


def _records(root):
    return read(root.memory_file)


def _dump(value) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def cmd_search(root, args) -> int:
    found = find(_records(root), args.query, args.topic)
    if args.json:
        _dump(found)
    elif not found:
        print(f"No records{' with topic ' + repr(args.topic) if args.topic else ''} in {root.memory_file}.")
    else:
        print("\n\n".join(_block(r) for r in found))
    return 0 if found else 1


def _block(record: dict) -> str:
    head = render.header(0, record).split(" | ", 1)[1]
    lines = [colour(record["id"], "1;36") + "  " + head]
    for name in ("missing_context", "lesson", "ask_next_time"):
        if record.get(name):
            lines.append(f"  {colour(name, '2')}: " + str(record[name]).replace("\n", "\n    "))
    return "\n".join(lines)


def _topics(records: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in records:
        t = out.setdefault(str(r.get("topic", "")), {"topic": str(r.get("topic", "")), "logs": 0, "principles": 0, "newest": ""})
        t["principles" if r.get("type") == "principle" else "logs"] += 1
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        t["newest"] = max(t["newest"], str(meta.get("updated") or meta.get("created") or ""))
    return dict(sorted(out.items()))


def cmd_list(root, args) -> int:
    topics = _topics([e.record for e in _records(root).records.values()])
    if args.json:
        _dump(list(topics.values()))
    elif topics:
        rows = [[t["topic"], str(t["logs"]), str(t["principles"]), t["newest"][:10]] for t in topics.values()]
        print(table(rows, ["topic", "logs", "principles", "newest"]))
    else:
        print(f"No records in {root.memory_file}.")
    return 0


def cmd_show(root, args) -> int:
    entry = _records(root).records.get(args.id.strip())
    if entry is None:
        print(f"sentinel-memory: no record with id {args.id!r} in {root.memory_file}.", file=sys.stderr)
        return 1
    if args.json:
        _dump(entry.record)
    else:
        print(gitdriver.readable_block(entry.record).rstrip())
    return 0


def cmd_stats(root, args) -> int:
    snap = _records(root)
    records = [e.record for e in snap.records.values()]
    logs, principles = render.counts(records)
    size = root.memory_file.stat().st_size if root.memory_file.exists() else 0
    stats = {
        "file": str(root.memory_file), "records": len(records), "logs": logs, "principles": principles,
        "bytes": size, "estimated_tokens": render.estimate_tokens(snap.text().decode("utf-8")),
        "threshold": args.threshold, "over_threshold": max(0, logs - args.threshold),
        "compaction_required": logs > args.threshold, "unreadable_lines": len(snap.unreadable),
        "topics": list(_topics(records).values()),
    }
    if args.json:
        _dump(stats)
        return 0
    print(f"{stats['file']}: {render.plural(len(records), 'record')} ({render.plural(logs, 'log')}, "
          f"{render.plural(principles, 'principle')}), "
          f"{size:,} bytes, ~{stats['estimated_tokens']:,} tokens")
    if stats["compaction_required"]:
        print(colour(f"compaction required: {logs} logs, {stats['over_threshold']} past the threshold of "
                     f"{args.threshold}", "33"))
    else:
        print(f"compaction not required: {logs} of {args.threshold} logs")
    if stats["unreadable_lines"]:
        print(f"{stats['unreadable_lines']} unreadable lines (moved to the quarantine file on the next write)")
    if records:
        print()
        print(table([[t["topic"], str(t["logs"]), str(t["principles"]), t["newest"][:10]] for t in stats["topics"]],
                    ["topic", "logs", "principles", "newest"]))
    return 0


def cmd_log(root, args) -> int:
    print(log(root.memory_file, args.topic, args.missing_context, args.lesson, args.ask_next_time))
    return 0


def cmd_forget(root, args) -> int:
    deleted, missing = forget(root.memory_file, args.ids)
    for r in deleted:
        print(f"deleted {r['id']} ({r.get('type')}, topic {r.get('topic')!r}): git diff will show this line removed "
              f"from {root.memory_file.name}")
    for rid in missing:
        print(f"not found: {rid}", file=sys.stderr)
    if deleted:
        print(f"Review with: git diff -- {root.memory_file}")
    return 0 if deleted and not missing else 1


def cmd_export(root, args) -> int:
    records = [e.record for e in _records(root).records.values()]
    print(f"# Project memory\n\n{len(records)} records from `{root.memory_file}`.\n")
    for topic, _ in _topics(records).items():
        print(f"## {topic}\n")
        for r in sorted((r for r in records if r.get("topic") == topic),
                        key=lambda r: (r.get("type") != "principle", r["id"])):
            meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
            when = f"compacted {render.day(meta.get('compacted_at'))} from {meta.get('source_count', 0)} records" \
                if r.get("type") == "principle" else render.day(meta.get("created"))
            print(f"### {r.get('type', 'log')} `{r['id']}` ({when})\n")
            for name in ("missing_context", "lesson", "ask_next_time"):
                if r.get(name):
                    print(f"- **{name}**: {r[name]}")
            print()
    return 0


def cmd_scan(root, args) -> int:
    from .secretscan import redact_file, scan

    findings = scan(root.memory_file)
    if args.json:
        _dump([f._asdict() for f in findings])
    for f in findings if not args.json else []:
        print(f"{f.record_id}  {f.field}: looks like {f.rule}")
    if findings and args.redact:
        records, values = redact_file(root.memory_file)
        print(f"Redacted {values} values in {records} records of {root.memory_file}; review with git diff "
              "(a redacted log gets a new id), and rotate the keys: git history still has them.")
        return 0
    if not args.json:
        print(f"{len(findings)} possible credentials in {root.memory_file}"
              + (". Run scan --redact to replace them." if findings else "."))
    return 1 if findings else 0


def cmd_init(root, args) -> int:
    from .setup import init

    for line in init(root.path, agents_md=args.agents_md, clients=tuple(args.client or ["cursor"])):
        print(line)
    return 0


def cmd_doctor(root, args) -> int:
    from .doctor import FAIL, OK, check

    results = check(root)
    for status, sentence in results:
        code = "32" if status == OK else "31" if status == FAIL else "33"
        print(f"[{colour(f'{status:>4}', code)}] {sentence}")
    return 1 if any(status == FAIL for status, _ in results) else 0


HANDLERS = {
    "search": cmd_search, "list": cmd_list, "show": cmd_show, "stats": cmd_stats, "log": cmd_log,
    "forget": cmd_forget, "export": cmd_export, "scan": cmd_scan, "init": cmd_init, "doctor": cmd_doctor,
}
