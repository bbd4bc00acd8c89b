"""The commands on the memory's records, each one call into the rooms below (tools/memory.py,
cli/maintenance.py, cli/review.py, setup/scan.py) and a print in cli/console.py's words: those that
show them (search, list, show, stats, stale, export), change them (log, forget, fold), look for
credentials in them (scan) and compare them between two revisions (review). --json prints what
they found as JSON; cli/commands.py runs them.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

from ..errors import ChangedMeanwhile, InvalidInput, LockTimeout, MemoryToolError
from ..git import drivers as gitdriver
from ..invocation import SELF
from ..record.records import revision
from ..tools import blocks, memory, render
from ..visible import visible, visible_json
from . import console, maintenance, markdown
from .maintenance import MIN_PREFIX
from .streams import fail, refuse_link_out, refuse_own_file, write_into
from .typed_paths import check_from_here, from_here


def _dump(value) -> None:
    """--json: UTF-8 JSON, Korean as itself; what a terminal would act on (C1 controls, DEL, BiDi
    controls) and a lone surrogate (a `\\ud800` in the memory file) as JSON escapes."""
    print(visible_json(json.dumps(value, ensure_ascii=False, indent=2)))


def cmd_search(root, args) -> int:
    query = " ".join(args.query)
    opened = memory.OpenMemory(root.memory_file)
    files = None if args.files is None else from_here(root.path, args.files)
    found, in_scope = memory.ranked_matches(opened, query, args.topic, files)
    if args.json:
        _dump([{**m.record, "match": m.as_json()} for m in found])
    else:
        print(
            console.search_result(
                found,
                in_scope,
                query,
                args.topic,
                root.memory_file,
                bool(in_scope) or bool(maintenance.records(opened)),
                memory.stale_marks(opened),
                files or [],
            )
        )
        if args.topic and not in_scope:
            hint = console.topic_hint(args.topic, maintenance.topics(maintenance.records(opened)))
            if hint:
                print(hint)
    return 0 if found else 1


def cmd_list(root, args) -> int:
    topics = maintenance.topics(maintenance.records(root.memory_file))
    if args.json:
        _dump([asdict(t) for t in topics])
    elif topics:
        print(console.topic_table(topics))
    else:
        print(f"No records in {visible(str(root.memory_file))}.")
    return 0


def _unfound(given: str) -> int:
    """The exit code for an id no record has: 1 (nothing found), or 2 (bad usage) when it is too
    short to be a prefix, so nothing was looked up."""
    return 2 if len(given.strip()) < MIN_PREFIX else 1


def cmd_show(root, args) -> int:
    opened = memory.OpenMemory(root.memory_file)
    record = maintenance.record(opened, args.id)
    if record is None:
        return fail(console.not_found(args.id, root.memory_file, maintenance.MIN_PREFIX), _unfound(args.id))
    if args.json:
        _dump(record)
    else:
        mark = memory.stale_marks(opened).get(record["id"])
        print(gitdriver.readable_block(record).rstrip() + (f"\n  {visible(blocks.stale_line(mark))}" if mark else ""))
    return 0


def cmd_stats(root, args) -> int:
    stats = maintenance.stats(root.memory_file, args.threshold)
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


# How many times a refresh reads the record again when another writer changed it in between.
_REFRESH_TRIES = 20


def cmd_log(root, args) -> int:
    """Save or refresh a lesson. A field left out keeps what the refreshed record holds (an explicit
    "" clears it); the output says which fields changed, and names a near-identical record that a
    refresh was probably meant for (docs/contract.md §7). The fields left out are read before the
    lock; the write checks under the lock that the record is still the version read, and reads it
    again if another writer changed it, so that no acknowledged change is written over."""
    opened = memory.OpenMemory(root.memory_file)
    principle = args.type == "principle"
    if principle and args.lesson is None:  # found by its topic and lesson (docs/contract.md §3.4)
        raise InvalidInput("--lesson is required with --type principle: it names the principle. Nothing was saved.")
    if not principle and args.missing_context is None:
        raise InvalidInput("--missing-context is required (a principle alone may leave it out). Nothing was saved.")
    files = None if args.files is None else from_here(root.path, args.files)
    if files:
        check_from_here(root.path, args.files, files)
    for attempt in range(_REFRESH_TRIES):
        if principle:
            old = maintenance.refreshed(opened, args.topic, "", args.lesson)
        else:
            old = maintenance.refreshed(opened, args.topic, args.missing_context)
        missing = args.missing_context if args.missing_context is not None else (old or {}).get("missing_context", "")
        lesson = args.lesson if args.lesson is not None else (old or {}).get("lesson")
        if lesson is None:
            raise InvalidInput(
                "--lesson is required for a new record (only a refresh of an existing one may leave it out). "
                "Nothing was saved."
            )
        ask = args.ask_next_time if args.ask_next_time is not None else (old or {}).get("ask_next_time", "")
        _carried_is_text(old, args)
        read_as = revision(old) if old is not None else ""
        try:
            logged = memory.upsert(opened, args.topic, missing, lesson, ask, args.type, files=files, read_as=read_as)
            break
        except ChangedMeanwhile:
            if attempt == _REFRESH_TRIES - 1:
                raise LockTimeout(
                    "Other writers kept changing this record while it was being refreshed. Nothing was saved; "
                    "run the command again."
                ) from None
        except InvalidInput as exc:
            raise InvalidInput(str(exc) + console.same_name_hint(root.path, files or [])) from None
    # The agent's notice (call compact_memory now) in a person's words.
    text = render.log_answer(logged).replace(
        render.compact_notice(logged.logs, logged.threshold), console.compact_line(logged.logs, logged.threshold)
    )
    changed = console.changed_fields(old, logged.record)
    twins = maintenance.near_twins(opened, logged.record) if old is None and not principle else []
    if args.json:
        _dump(
            {
                "status": logged.status,
                "id": logged.record["id"],
                "record": logged.record,
                "changed": changed,
                "near_identical": [t["id"] for t in twins],
                "message": text,
            }
        )
    else:
        print(visible(text, lines=True))
        if old is not None:
            print(console.changed_line(changed, bool(logged.followed)))
        for twin in twins:
            print(console.near_twin_line(twin, logged.record["id"]))
    return 0


def _carried_is_text(old: dict | None, args) -> None:
    """Refuse, naming the stored record and the flag that replaces it, a field left out whose stored
    value cannot be written as UTF-8 (a lone surrogate a hand edit left; the file keeps it escaped):
    the person did not type it, so the usual message about their value would mislead."""
    if old is None:
        return
    for name in ("missing_context", "lesson", "ask_next_time"):
        value = old.get(name)
        if getattr(args, name) is not None or not isinstance(value, str):
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            flag = "--" + name.replace("_", "-")
            raise InvalidInput(
                f"the record {old['id']} holds a lone surrogate in its {name} (a hand edit can leave one), which "
                f'cannot be written back; give {flag} to replace that text (an explicit "" clears it). '
                "Nothing was saved."
            ) from None


def cmd_stale(root, args) -> int:
    opened = memory.OpenMemory(root.memory_file)
    records, marks = maintenance.stale(opened)
    if args.json:
        _dump(
            [
                {
                    "id": r["id"],
                    "topic": r.get("topic"),
                    "stale": blocks.stale_line(marks[r["id"]]),
                    "changes": [c.as_dict() for c in marks[r["id"]]],
                    "record": r,
                }
                for r in records
            ]
        )
    else:
        print(console.stale_report(records, marks, root.memory_file))
        if memory.shallow_history(opened):
            print(render.SHALLOW_NOTE)
    return 0 if records else 1


def cmd_forget(root, args) -> int:
    if not any(i.strip() for i in args.ids):
        raise InvalidInput(
            "no id given: name the records to delete by id, or by a unique prefix of at least "
            f"{MIN_PREFIX} characters (search shows them). Nothing was deleted."
        )
    result = maintenance.forget(root.memory_file, args.ids)
    if result.unknown:
        for given in result.unknown:
            fail(console.not_found(given, root.memory_file, maintenance.MIN_PREFIX), 1)
        return fail("nothing was deleted", max(map(_unfound, result.unknown)))
    head = maintenance.at_head(root.path, root.memory_file, {r["id"] for r in result.deleted})
    out, errors = console.forget_report(result, root.memory_file, head)
    for line in out:
        print(line)
    for line in errors:
        fail(line, 1)
    return 1 if errors else 0


def cmd_export(root, args) -> int:
    opened = memory.OpenMemory(root.memory_file)
    records = maintenance.records(opened)
    text = markdown.markdown(records, root.memory_file, memory.stale_marks(opened))
    if args.output:
        refuse_own_file(root.memory_file.parent, args.output)
        refuse_link_out(root.path, args.output)
        write_into(args.output, text.encode("utf-8"))
        print(f"wrote {blocks.plural(len(records), 'record')} to {visible(args.output)}")
    else:
        sys.stdout.write(text)
    return 0


def cmd_scan(root, args) -> int:
    from ..setup.scan import nul_in_quarantine, redact_file, scan

    if args.staged:
        from ..setup.precommit import project_prefix
        from ..setup.staged import staged_findings

        findings = staged_findings(root.path)
        if args.json:
            _dump([f._asdict() for f in findings])
        elif findings:
            fail(console.staged_refusal(findings, SELF, project_prefix(root.path)), 1)
        return 1 if findings else 0
    findings = scan(root.memory_file)
    if args.json:
        _dump([f._asdict() for f in findings])
    if args.redact and not findings and nul_in_quarantine(root.memory_file):
        redact_file(root.memory_file)
        print(
            "No credentials found. The NUL bytes an earlier version kept in the quarantine file are now "
            "written as \\u0000, so git merges it as text again; commit .context/.",
            file=sys.stderr if args.json else sys.stdout,
        )
        return 0
    if findings and args.redact:
        if not args.json:
            print("\n".join(console.scan_report(findings, root.memory_file)[:-1]))
        report = console.redact_report(*redact_file(root.memory_file), root.memory_file)
        print(report, file=sys.stderr if args.json else sys.stdout)  # --json: stdout holds the JSON alone
        return 0
    if not args.json:
        print("\n".join(console.scan_report(findings, root.memory_file)))
    return 1 if findings else 0


def cmd_review(root, args) -> int:
    from . import review_report
    from .review import review

    try:
        result = review(root, args.base, args.head)
    except (MemoryToolError, KeyboardInterrupt):
        raise
    except Exception as exc:  # a repository we did not foresee: one sentence, never a traceback
        raise MemoryToolError(f"review could not finish ({type(exc).__name__}: {exc}); nothing was changed.") from exc
    if args.format == "markdown":
        sys.stdout.write(review_report.markdown(result, args.max_chars))
    else:
        print(review_report.text(result))
    return result.status


def cmd_fold(root, args) -> int:
    folded = maintenance.fold(root.path, args.file)
    print(console.fold_report(folded, SELF))
    return 0
