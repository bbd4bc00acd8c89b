"""Everything the commands print for people: record blocks, topic tables, stats and the commands'
sentences (the Markdown of `export` and `review` is cli/markdown.py's), laid out by cli/layout.py
(display widths that count Korean as two columns, colour on a terminal only). (What the tools
answer the agent is tools/render.py's.)"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from ..invocation import SELF
from ..record.contextdir import QUARANTINE_FILE
from ..tools.blocks import files_line, header, plural, stale_line
from ..visible import visible, visible_record
from .layout import colour, table

if TYPE_CHECKING:  # the operations' results, for annotations only
    from ..search.match import Match
    from .maintenance import AtHead, Folded, Forgotten, Stats, TopicSummary


def record_block(record: dict, stale: tuple = ()) -> str:
    """A record for `search` and `stale`: its id in colour, then its dates, its stale mark (in
    colour), the files it cites and its fields; what the record holds with its control characters
    visible (visible.py), so the colours are the only escape sequences printed."""
    cited = files_line(record)  # before visible_record: a name with a control character is quoted
    cited = visible(cited) if cited else cited  # and what else shows nothing (BiDi) made visible
    record = visible_record(record)
    lines = [colour(record["id"], "1;36") + "  " + header(record).split(" | ", 1)[1]]
    if stale:
        lines.append("  " + colour(visible(stale_line(stale)), "33"))
    if cited:
        lines.append(f"  {colour('files', '2')}: " + cited.split(": ", 1)[1])
    for name in ("missing_context", "lesson", "ask_next_time"):
        if record.get(name):
            lines.append(f"  {colour(name, '2')}: " + str(record[name]).replace("\n", "\n    "))
    return "\n".join(lines)


def search_result(
    found: list[Match],
    in_scope: int,
    query: str,
    topic: str | None,
    file: Path,
    any_records: bool,
    stale: dict | None = None,
    files: list[str] | None = None,
) -> str:
    """The records that match (or every record, without words or files), each with how strongly
    and why; what the others do not share."""
    files = files or []
    asked = " or ".join(filter(None, [repr(query) if query.strip() else "", visible(", ".join(files))]))
    if not found:
        scope = f" with topic {topic!r}" if topic else ""
        what = f" match {asked}" if in_scope else ""
        return f"No records{scope}{what} in {visible(str(file))}." + (
            f" `{SELF} list` shows the topics." if any_records else ""
        )
    stale = stale or {}
    searched = bool(asked)
    blocks = []
    for m in found:
        block = record_block(m.record, stale.get(m.record["id"], ()))
        if searched:
            how = colour("strong", "32") if m.strong else "weak"
            reason = (
                visible("; ".join(m.reasons))
                or "only words most records hold or any task uses, numbers, or parts of words or paths"
            )
            block += f"\n  {colour('match', '2')}: {how} {m.strength:.2f}: {reason}"
        blocks.append(block)
    text = "\n\n".join(blocks)
    if searched and not any(m.strong for m in found):
        text = (
            "Nothing matches strongly (no record cites a file asked about, other than a common one such as "
            "package.json, or holds an identifier, the exact topic or enough rare words of the query); these share "
            "less:\n\n" + text
        )
    others = in_scope - len(found)
    if others:
        one = others == 1
        why = []
        if query.strip():
            why.append(
                f"{'shares' if one else 'share'} no word of {query!r} that counts (words most records hold do not)"
            )
        if files:
            why.append(f"{'cites' if one else 'cite'} none of the files nor a file in their directories")
        text += (
            f"\n\n({plural(others, 'other record')} {' and '.join(why)}; "
            f"`{SELF} search` without words shows every record.)"
        )
    return text


def topic_table(topics: list[TopicSummary]) -> str:
    rows = [[visible(t.topic), str(t.logs), str(t.principles), visible(t.newest[:10])] for t in topics]
    return table(rows, ["topic", "logs", "principles", "newest"])


def compact_line(logs: int, threshold: int) -> str:
    """What a person reads where the agent is told to compact: who does it, and how."""
    return (
        f"Compaction required: {logs} logs, past the threshold of {threshold}. Ask your agent to compact the "
        "memory: its compact_memory tool groups the records by topic, and it saves one principle per topic, "
        "which replaces them."
    )


def stats_report(stats: Stats) -> str:
    lines = [
        f"{visible(str(stats.file))}: {plural(stats.records, 'record')} ({plural(stats.logs, 'log')}, "
        f"{plural(stats.principles, 'principle')}), {stats.bytes:,} bytes, ~{stats.estimated_tokens:,} tokens"
    ]
    if stats.compaction_required:
        lines.append(
            colour(
                f"compaction required: {stats.logs} logs, {stats.over_threshold} past the threshold of "
                f"{stats.threshold} (the agent's compact_memory folds each topic into a principle)",
                "33",
            )
        )
    else:
        lines.append(f"compaction not required: {stats.logs} of {stats.threshold} logs")
    if stats.unreadable_lines:
        lines.append(
            f"{plural(stats.unreadable_lines, 'unreadable line')} (moved to the quarantine file on the next write)"
        )
    if stats.records:
        lines.append("\n" + topic_table(stats.topics))
    return "\n".join(lines)


def not_found(given: str, file: Path, min_prefix: int) -> str:
    if len(given.strip()) < min_prefix:
        return (
            f"{given!r} is too short to name a record: give the id or a prefix of at least {min_prefix} "
            f"characters (`{SELF} search` shows the ids)"
        )
    return (
        f"no record with id {given!r} in {visible(str(file))} (`{SELF} search` shows the ids; "
        f"a prefix needs at least {min_prefix} characters)"
    )


def forget_report(result: Forgotten, file: Path, head: AtHead | None = None) -> tuple[list[str], list[str]]:
    """(lines for stdout, lines for stderr) after `forget`; `head` says which of the records the
    last commit holds (None: not in git, or not known), so the line names only what git shows."""
    out = [
        f"deleted {visible(str(r['id']))} ({r.get('type', 'log')}, topic {str(r.get('topic') or '')!r})"
        for r in result.deleted
    ]
    errors = [f"{visible(rid)} was already gone" for rid in result.gone]  # deleted by someone else meanwhile
    if not result.deleted:
        return out, errors
    if head is None:
        them = "it" if len(result.deleted) == 1 else "them"
        out.append(
            f"`git diff -- {visible(shlex.quote(str(file)))}` now shows {plural(len(result.deleted), 'removed record')}; commit it to share "
            f"the change, or, if the file was committed, bring {them} back with `git restore -- {visible(shlex.quote(str(file)))}`."
        )
        return out, errors
    shown = [r for r in result.deleted if r["id"] in head.ids]
    never = len(result.deleted) - len(shown)
    if shown:
        them = "it" if len(shown) == 1 else "them"
        also = " (which also undoes the file's other uncommitted changes)" if head.other_changes else ""
        out.append(
            f"`git diff -- {visible(shlex.quote(str(file)))}` now shows {plural(len(shown), 'removed record')}; commit it to share the "
            f"change, or bring {them} back with `git restore -- {visible(shlex.quote(str(file)))}`{also}."
        )
    if never:
        were = "was" if never == 1 else "were"
        it = "it" if never == 1 else "them"
        out.append(
            f"{plural(never, 'deleted record')} {were} never committed: `git diff` does not show {it}, and git "
            f"cannot bring {it} back."
        )
    return out, errors


def fold_report(folded: Folded, self_name: str) -> str:
    stray, target = visible(str(folded.stray)), visible(str(folded.target))
    lines = [
        f"folded {plural(folded.records, 'record')} of {stray} into {target}: {folded.added} added, "
        f"{folded.updated} updated (the newer version), {folded.already_there} already there"
    ]
    if folded.unreadable:
        lines.append(
            f"{plural(folded.unreadable, 'line')} of {stray} {'is' if folded.unreadable == 1 else 'are'} "
            "not a record and stayed there: look at them before deleting the file"
        )
    if folded.quarantined and not folded.quarantine_whole:
        lines.append(
            f"its quarantine file ({plural(folded.quarantined, 'line')}, not records) is more than one write sets aside, "
            f"or holds a key that runs over lines: not all of it reached the project's; keep {visible(str(folded.folder))} "
            "and run fold again to move the rest (a key over lines: move it by hand)"
        )
        return "\n".join(lines)
    if folded.quarantined:
        lines.append(
            f"{plural(folded.quarantined, 'line')} of its quarantine file (not records) {'is' if folded.quarantined == 1 else 'are'} "
            f"now in {visible(str(folded.target.parent / QUARANTINE_FILE))} too"
        )
    if folded.copies:
        lines.append(
            f"{visible(str(folded.folder))} also keeps {'a copy' if len(folded.copies) == 1 else f'{len(folded.copies)} copies'} "
            f"of a conflicted memory file ({', '.join(visible(c) for c in folded.copies)}, on this machine only): look "
            f"at {'it' if len(folded.copies) == 1 else 'them'} before deleting the folder"
        )
    if folded.folder is not None:
        gone = f"then delete {visible(str(folded.folder))} (git rm -r it if it was committed)"
    else:
        gone = f"then delete {stray} (git rm it if it was committed)"
    lines.append(
        f"review with `git diff -- {visible(shlex.quote(str(folded.target)))}`; {gone}. `{self_name} doctor` no longer lists it once it is gone."
    )
    return "\n".join(lines)


def scan_report(findings: list, file: Path) -> list[str]:
    lines = [f"{visible(f.record_id)}  {visible(f.field)}: looks like {f.rule}" for f in findings]
    lines.append(
        f"{plural(len(findings), 'possible credential')} in {visible(str(file))}"
        + (". Run scan --redact to replace them." if findings else ".")
    )
    return lines


def staged_refusal(findings: list, self_name: str, prefix: str = "") -> str:
    """Why the commit was stopped and what to run, from the repository's top (where git runs the
    hook); `prefix`: the project's folder there, "" at the top."""
    from ..setup.staged import CONFLICTED_COPY

    copies = [f.record_id for f in findings if f.field == CONFLICTED_COPY]
    if copies:
        named = " ".join(visible(shlex.quote(prefix + c)) for c in copies[:10])
        return (
            f"the staged {visible(prefix)}.context/ holds {'a copy' if len(copies) == 1 else f'{len(copies)} copies'} "
            "of a conflicted memory file, kept aside by a write to stay on this machine (it holds the file's bytes as they were, "
            f"credentials too); the commit was stopped. Unstage it (`git rm --cached {named}`) and commit again; "
            f"`{self_name} init` makes .context/.gitignore ignore such copies."
        )
    from ..setup.scan import ENOUGH

    where = "; ".join(f"{visible(f.record_id)} {visible(f.field)}: looks like {f.rule}" for f in findings[:10])
    capped = len(findings) > ENOUGH  # the check stops counting there
    more = " and more" if capped else f" and {len(findings) - 10} more" if len(findings) > 10 else ""
    counted = f"more than {ENOUGH} possible credentials" if capped else plural(len(findings), "possible credential")
    folder = visible(shlex.quote(prefix)) if prefix else ""
    context = visible(shlex.quote(prefix + ".context")) if prefix else ".context"
    return (
        f"the staged {visible(prefix)}.context/ holds {counted} ({where}{more}); "
        f"the commit was stopped. Run `{self_name}{f' --project {folder}' if prefix else ''} scan --redact`, then "
        f"`git add {context}` "
        "and commit again, and rotate the key. To commit anyway (a false alarm): git commit --no-verify."
    )


def redact_report(records: int, values: int, file: Path) -> str:
    return (
        f"Redacted {plural(values, 'value')} ({plural(records, 'record')} changed; values in "
        f"lines that are not records are redacted in the quarantine file) in {visible(str(file))}; review with git diff "
        "(a redacted log gets a new id), and rotate the keys: git history still has them."
    )


def stale_report(records: list[dict], marks: dict, file: Path) -> str:
    """`stale`: the stale records, oldest first, each with why; or that none is."""
    if not records:
        return f"No stale records in {visible(str(file))}: no file a record cites was changed by a commit after it was written."
    blocks = [record_block(r, marks[r["id"]]) for r in records]
    return "\n\n".join(
        [
            *blocks,
            f"{plural(len(records), 'stale record')} in {visible(str(file))}. Verify each against the code; "
            "if it still holds, log it again to refresh it (a log: the same topic and missing context; "
            "a principle: `log --type principle` with the same topic and lesson), else correct it or `forget` it.",
        ]
    )


# The fields a person may change by logging a lesson again, in the order `show` lists them.
REFRESHABLE = ("lesson", "ask_next_time", "files")


def changed_fields(old: dict | None, new: dict) -> list[str]:
    """The fields a refresh changed (all of them for a new record); a principle's missing context
    too, which is not part of its id (docs/contract.md §3.4)."""
    names = ("missing_context", *REFRESHABLE) if new.get("type") == "principle" else REFRESHABLE
    return [name for name in names if (old or {}).get(name) != new.get(name) and (old or new.get(name))]


def changed_line(changed: list[str], followed: bool = False) -> str:
    """What a refresh changed, for a record that was there before (`followed`: its files by git's
    renames, with --file left out)."""
    if not changed:
        return "changed: nothing (the record was refreshed as it was)."
    if followed and "files" in changed:
        return (
            "changed: " + ", ".join(changed) + " (to follow git's rename; the other fields left out kept their values)."
        )
    return "changed: " + ", ".join(changed) + " (the fields left out kept their values)."


def near_twin_line(twin: dict, new_id: str) -> str:
    return (
        f"note: record {visible(str(twin['id']))} has nearly the same topic and missing context ({twin.get('topic', '')!r}, "
        f"{twin.get('missing_context', '')!r}); to refresh it instead, log again with exactly those, "
        f"then `{SELF} forget {new_id}`."
    )


def not_a_file_here(typed: str, path: str, sub: str, root: Path) -> str:
    """A --file typed in a subfolder that names no file there."""
    return (
        f"--file {visible(typed)!r} names no file: in a subfolder a path is read from the current folder "
        f"({visible(sub)}/), so it means {visible(path)} in the project ({visible(str(root))}). Nothing was saved."
        + same_name_hint(root, [path], here=Path.cwd())
    )


def same_name_hint(root: Path, given: list[str], limit: int = 20_000, here: Path | None = None) -> str:
    """For a refused path that names no file: the project's files with that name, as a suggestion
    (a bounded walk that skips .git/, .context/ and links); relative to the root, or to `here`."""
    wanted = {os.path.basename(p) for p in given if p and not os.path.exists(os.path.join(root, p))}
    found: list[str] = []
    seen = 0
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in (".git", ".context", "node_modules")]
        seen += len(files)
        found += [os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "/") for f in files if f in wanted]
        if seen > limit or len(found) > 3:
            break
    shown = sorted(found)[:3]
    if here is not None:
        shown = [os.path.relpath(os.path.join(os.path.realpath(root), f), here).replace(os.sep, "/") for f in shown]
    return f" Did you mean {visible(', '.join(shown))}?" if found else ""


def topic_hint(given: str, topics: list[TopicSummary]) -> str:
    """For a --topic that no record has: the topics that differ from it only by case or spacing
    (a topic is matched exactly, as search_memory matches it), else the nearest by spelling."""
    import difflib

    names = [t.topic for t in topics]
    loose = " ".join(given.casefold().split())
    same = [n for n in names if " ".join(n.casefold().split()) == loose]
    close = same or difflib.get_close_matches(given, names, n=2, cutoff=0.75)
    return f"Did you mean --topic {' or '.join(repr(n) for n in close)}? (topics match exactly)" if close else ""
