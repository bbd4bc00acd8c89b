"""The three operations behind the tools: search, log (upsert) and compact (read-only).

Each takes the memory file's path and plain arguments, and returns the text for the caller.
Expected failures raise MemoryToolError subclasses whose message is the whole story.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from . import render, store
from .compaction import group_by_topic, similar_groups
from .errors import InvalidInput
from .records import NOTHING_SAVED, Entry, normalize, prepare, utc_now
from .relevance import Ranking, terms

DEFAULT_THRESHOLD = 50
# About 15,000 estimated tokens: on mixed Korean/English text the estimate runs ~20-30% under
# cl100k's count, so real answers stay near 20,000 tokens, under the 25,000 that clients cap.
DEFAULT_BUDGET = 15_000
NOTICE_ALLOWANCE = 200  # the left-out and compact-required notices
BUDGET_ENV = "SENTINEL_MEMORY_SEARCH_TOKENS"


def _threshold(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInput(f"compact_threshold must be a whole number of at least 1, not {value!r}. {NOTHING_SAVED}")
    return value


def _read_notes(snap: store.Snapshot) -> list[str]:
    notes = []
    if snap.unreadable:
        notes.append(
            f"Note: {render.plural(len(snap.unreadable), 'unreadable line')} in the file "
            f"{'was' if len(snap.unreadable) == 1 else 'were'} skipped; the next write moves "
            f"{'it' if len(snap.unreadable) == 1 else 'them'} to .context/{store.QUARANTINE_FILE} (nothing is lost)."
        )
    if snap.conflict_regions:
        how = "exactly, three-way from the common base" if snap.conflict_base else "keeping every record of both sides"
        notes.append(
            f"Note: the file has {render.plural(snap.conflict_regions, 'git conflict region')}; they were merged {how}. "
            "The next write stores the merged file and keeps a copy of the conflicted one."
        )
    return notes


def _topic(value: object) -> str | None:
    return normalize(value) if isinstance(value, str) and value.strip() else None


def find(snap: store.Snapshot, query: str = "", topic: str | None = None) -> list[dict]:
    """The records with exactly this topic (all when None), most relevant to query first, then
    principles, then newest. Nothing is dropped for a low score."""
    ranking = _ranking(snap)
    by_rank = ranking.by_rank
    return [by_rank[r].record for r in ranking.ranked(terms(query or ""), _topic(topic)).best_first()]


_last_ranking: tuple[store.Snapshot, Ranking] | None = None


def _ranking(snap: store.Snapshot) -> Ranking:
    """The search index of this snapshot: made when the snapshot changed, from the previous one
    when the snapshot is that one edited (a write of this process), else from its records."""
    global _last_ranking
    if _last_ranking is None or _last_ranking[0] is not snap:
        base = snap.edited_from()
        ranking = None
        if base is not None and _last_ranking is not None and base[0] is _last_ranking[0]:
            ranking = _last_ranking[1].derive(base[1], base[2])
        _last_ranking = (snap, ranking or Ranking(snap.records.values()))
        snap.settle()
    return _last_ranking[1]


def search(path: Path, query: str = "", topic: str | None = None) -> str:
    """Every record (or those whose topic equals `topic` exactly), most relevant to `query` first."""
    snap = store.read(path)
    wanted = _topic(topic)
    total = len(snap.records) if wanted is None else snap.topic_counts().get(wanted, 0)
    notes = _read_notes(snap)

    if not total:
        if wanted and snap.records:
            topics = sorted({str(e.record.get("topic")) for e in snap.records.values()})
            shown = ", ".join(topics[:30]) + (" ..." if len(topics) > 30 else "")
            head = (f'No records with topic exactly "{wanted}" in {path} '
                    f"({render.plural(len(snap.records), 'record')} under other topics: {shown}). "
                    "Call search_memory without topic to see them all.")
        else:
            head = f"No records yet in {path}."
        return "\n\n".join([head, *notes, render.gap_questions()])

    ranking, query_terms = _ranking(snap), terms(query or "")
    ranked = ranking.ranked(query_terms, wanted)
    if wanted is None:
        logs, principles = snap.counts()
    else:
        principles = ranked.principles_in_scope()
        logs = total - principles
    order = f', most relevant to "{query.strip()}" first' if query_terms else ", principles first, newest first"
    scope = f' with topic "{wanted}"' if wanted else ""
    head = (f"[memory_log - {render.plural(total, 'record')}{scope}: "
            f"{render.plural(logs, 'log')}, {render.plural(principles, 'principle')}{order}]\n"
            f"File: {path}\n{render.DATA_NOT_INSTRUCTIONS}")
    tail = list(notes)
    budget = search_budget()
    # The header, the notes and the notices that may follow count against the budget too.
    overhead = render.estimate_tokens(head + "".join(notes)) + NOTICE_ALLOWANCE
    blocks = _fitting_blocks(ranking, ranked.best_first(), budget - overhead if budget else 0)
    if blocks is None:  # not everything fits: principles first, then the most relevant
        shown = []
        blocks = _fitting_blocks(ranking, ranked.principles_first(), budget - overhead, shown)
        # Topics of what was left out: every topic in scope less those shown.
        left_topics = Counter({wanted: total}) if wanted else Counter(snap.topic_counts())
        left_topics.subtract(ranking.by_rank[r].record.get("topic") for r in shown)
        tail.insert(0, render.left_out_notice(total - len(shown), +left_topics, budget, bool(wanted)))
    all_logs, _ = snap.counts()
    if all_logs > DEFAULT_THRESHOLD:
        tail.append(render.compact_notice(all_logs, DEFAULT_THRESHOLD))
    return "\n\n".join([head, *blocks, *tail])


def search_budget() -> int:
    """The most tokens (estimated) search_memory and compact_memory return; 0 means no limit."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    try:
        return max(0, int(raw)) if raw else DEFAULT_BUDGET
    except ValueError:
        return DEFAULT_BUDGET


def _fitting_blocks(ranking: Ranking, ranks, room: int, shown: list[int] | None = None) -> list[str] | None:
    """The numbered blocks of the records with these ranks, in that order. With `shown` (a list
    to fill with the ranks listed), as many as fit in `room` estimated tokens; without, all of
    them, or None as soon as they would not fit (room 0: no limit). Only what is listed is
    rendered, from each record's block made once (Entry.shown)."""
    blocks, used, by_rank = [], 0, ranking.by_rank
    for rank in ranks:
        block, cost = render.numbered_block(len(blocks) + 1, by_rank[rank].shown)
        used += cost
        if room and used > room:
            return blocks if shown is not None else None
        blocks.append(block)
        if shown is not None:
            shown.append(rank)
    return blocks


def _source_ids(value: object, type_: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(f'source_ids must be a list of record ids such as ["1a2b3c4d5e6f7a8b"]. {NOTHING_SAVED}')
    if value and type_ != "principle":
        raise InvalidInput(
            'source_ids is only valid with type="principle" (the ids a principle summarises are deleted '
            f"when it is saved). Drop source_ids or set type=\"principle\". {NOTHING_SAVED}"
        )
    ids = []
    for item in value:
        if not isinstance(item, str):
            raise InvalidInput(f"source_ids must hold record ids as strings, not {type(item).__name__}. {NOTHING_SAVED}")
        if item.strip():
            ids.append(item.strip())
    return list(dict.fromkeys(ids))


def log(path: Path, *args, **kwargs) -> str:
    """Upsert one record by id and say what happened (the log_memory tool's answer); see upsert."""
    return upsert(path, *args, **kwargs).text


@dataclass(frozen=True)
class Logged:
    """What one upsert did: its status (saved / updated / unchanged), the record as stored, and
    the text the tool answers with."""

    status: str
    record: dict
    text: str


def upsert(
    path: Path,
    topic: object,
    missing_context: object,
    lesson: object,
    ask_next_time: object = "",
    type: object = "log",
    compact_threshold: object = DEFAULT_THRESHOLD,
    source_ids: object = None,
) -> Logged:
    """Upsert one record by id; a principle's source_ids are deleted in the same locked write."""
    threshold = _threshold(compact_threshold)
    draft = prepare(topic, missing_context, lesson, ask_next_time, type)
    sources = _source_ids(source_ids, draft.type)
    outcome: dict = {}

    def change(snap: store.Snapshot):
        old = snap.records.get(draft.id)
        deleted = [snap.records[i] for i in sources if i != draft.id and i in snap.records]
        outcome["missing"] = [i for i in sources if i != draft.id and i not in snap.records]
        outcome["deleted"] = [e.id for e in deleted]
        new = _build(draft, old.record if old else None, deleted)
        outcome["status"] = "saved" if old is None else ("unchanged" if new is None else "updated")
        stored = old if new is None else Entry.of(new)
        outcome["record"] = stored.record
        if new is None and not deleted and not snap.duplicates:
            outcome["counts"] = snap.counts()
            return None
        edited = snap.edited(put=[stored] if new is not None else [], drop=outcome["deleted"])
        outcome["counts"] = edited.counts()
        return edited

    report = store.update(path, change)
    text = _log_result(path, draft, outcome, report, threshold)
    return Logged(status=outcome["status"], record=outcome["record"], text=text)


def _build(draft, old: dict | None, deleted: list[Entry]) -> dict | None:
    """The record to store, or None when the stored one already says exactly this."""
    body = {"id": draft.id, **draft.fields()}
    folded = sum(_stands_for(e.record) for e in deleted)
    if old is not None and not folded and all(old.get(k) == v for k, v in body.items()):
        return None
    now = utc_now()
    meta = dict(old["meta"]) if old and isinstance(old.get("meta"), dict) else {}
    meta.setdefault("created", now)
    if old is not None:
        meta["updated"] = now
    if draft.type == "principle":
        prior = meta.get("source_count") if old and old.get("type") == "principle" else 0
        meta["compacted_at"] = now
        meta["source_count"] = (prior if isinstance(prior, int) else 0) + folded
    else:
        meta.pop("compacted_at", None)
        meta.pop("source_count", None)
    return {**(old or {}), **body, "meta": meta}


def _stands_for(record: dict) -> int:
    """How many original logs a record stands for: 1 for a log, source_count for a principle."""
    if record.get("type") == "principle":
        count = (record.get("meta") or {}).get("source_count")
        return count if isinstance(count, int) and count > 0 else 1
    return 1


def _log_result(path: Path, draft, outcome: dict, report: store.WriteReport, threshold: int) -> str:
    status, rid = outcome["status"], draft.id
    lines = {
        "saved": f'saved: new {draft.type} record {rid} (topic "{draft.topic}") in {path}.',
        "updated": f'updated: {draft.type} record {rid} (topic "{draft.topic}") in {path}; created date kept.',
        "unchanged": f"unchanged: record {rid} in {path} already holds exactly this; the file was not rewritten.",
    }
    out = [lines[status]]
    if outcome["deleted"]:
        out.append(f"Deleted the {render.plural(len(outcome['deleted']), 'source record')} this principle "
                   f"summarises: {', '.join(outcome['deleted'])}.")
    if outcome["missing"]:
        out.append(f"Not in the file (already deleted or never existed), so nothing to delete: "
                   f"{', '.join(outcome['missing'])}.")
    if draft.redactions:
        out.append(f"Redacted {render.plural(draft.redactions, 'value')} that looked like a credential "
                   "(replaced with [REDACTED] before saving).")
    logs, principles = outcome["counts"]
    out.append(f"The memory now holds {render.plural(logs + principles, 'record')}: "
               f"{render.plural(logs, 'log')}, {render.plural(principles, 'principle')}.")
    if report.quarantined:
        redacted = (f"; {render.plural(report.quarantine_redactions, 'value')} that looked like a credential "
                    "redacted there" if report.quarantine_redactions else "")
        out.append(f"Moved {render.plural(report.quarantined, 'unreadable line')} to .context/{store.QUARANTINE_FILE} "
                   f"(kept for review; nothing lost{redacted}).")
    if report.conflict_regions:
        out.append(f"Resolved {render.plural(report.conflict_regions, 'git conflict region')} in the file; "
                   f"the conflicted original was kept as {report.conflict_copy.name} (git-ignored).")
    if report.duplicates:
        out.append(f"Collapsed {render.plural(report.duplicates, 'duplicate id')} (the newer record kept).")
    if logs > threshold:
        out.append(render.compact_notice(logs, threshold))
    return "\n".join(out)


def compact(path: Path, target_topic: str | None = None, compact_threshold: object = DEFAULT_THRESHOLD) -> str:
    """Read-only: the records grouped by topic, similar topics, and the exact calls that finish it."""
    threshold = _threshold(compact_threshold)
    snap = store.read(path)
    everything = [e.record for e in snap.records.values()]
    all_logs, _ = snap.counts()
    wanted = _topic(target_topic)
    records = [r for r in everything if r.get("topic") == wanted] if wanted else everything
    required = all_logs > threshold
    state = (f"Compaction is REQUIRED: {render.plural(all_logs, 'log record')} exceed the threshold of {threshold}."
             if required else
             f"Compaction is not required yet: {render.plural(all_logs, 'log record')}, threshold {threshold}.")
    out = [state, f"File: {path}. This call changed nothing; the summarising is yours."]
    out += _read_notes(snap)
    if not records:
        out.append(f'No records with topic exactly "{wanted}".' if wanted else "The memory is empty; nothing to compact.")
        return "\n\n".join(out)

    groups = group_by_topic(records)
    clusters = similar_groups(list(groups)) if not wanted else []
    if clusters:
        out.append("Similar topics you may merge into one principle (merge only what is truly one subject; "
                   "pass the ids of every merged group in source_ids):\n"
                   + "\n".join(f"- {', '.join(c)}" for c in clusters))
    budget, used = search_budget(), sum(render.estimate_tokens(x) for x in out)
    not_shown: list[tuple[str, int]] = []
    shown = 0
    for topic, members in groups.items():
        block = _group_block(topic, members)
        cost = render.estimate_tokens(block)
        if not_shown or (budget and used + cost > budget):
            if not shown:
                # The very first topic alone is over the budget: offer as many of its records as fit.
                shown = 1
                kept = _fitting(topic, members, budget - used)
                out.append(_group_block(topic, members[:kept]))
                members = members[kept:]
            not_shown.append((topic, len(members)))
            continue
        out.append(block)
        used += cost
        shown += 1
    if not_shown:
        listed = ", ".join(f"{t} ({n})" for t, n in not_shown[:20]) + (" ..." if len(not_shown) > 20 else "")
        out.append(
            f"NOT SHOWN, to stay within about {budget:,} tokens (setting {BUDGET_ENV}): "
            f"{render.plural(sum(n for _, n in not_shown), 'record')} of {render.plural(len(not_shown), 'topic')}: "
            f"{listed}. Save the principles above first, then call compact_memory again (or with target_topic=...)."
        )
    out.append(
        "How to finish: for each topic above (or merged group), summarise its lessons into one sentence that keeps "
        "every rule, merge its ask_next_time questions (at most 512 bytes), and make the call shown. Saving the "
        "principle deletes exactly the ids in source_ids in the same write; records logged after this call are "
        "untouched unless you pass their ids."
    )
    return "\n\n".join(out)


def _group_block(topic: str, members: list[dict]) -> str:
    logs, principles = render.counts(members)
    lines = [f'Topic "{topic}" - {render.plural(logs, "log")}, {render.plural(principles, "principle")}']
    for r in members:
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        extra = f" (from {meta.get('source_count', 0)} records)" if r.get("type") == "principle" else ""
        lines.append(f"  - {r.get('type')} {r['id']}{extra}")
        lines.append("    " + render.field_line("lesson", r.get("lesson")).replace("\n", "\n    "))
        if r.get("ask_next_time"):
            lines.append("    " + render.field_line("ask_next_time", r.get("ask_next_time")).replace("\n", "\n    "))
    if logs or principles > 1:
        ids = ", ".join(f'"{r["id"]}"' for r in members)
        lines.append(
            f'  Next: log_memory(type="principle", topic={_quote(topic)}, missing_context="", '
            'lesson="<one sentence that keeps every rule above>", '
            'ask_next_time="<the questions above, merged, at most 512 bytes>", '
            f"source_ids=[{ids}])"
        )
    else:
        lines.append("  Nothing to compact here: a single principle.")
    return "\n".join(lines)


def _fitting(topic: str, members: list[dict], room: int) -> int:
    """How many of a topic's first records fit in `room` estimated tokens (at least one)."""
    kept = 1
    while kept < len(members) and render.estimate_tokens(_group_block(topic, members[: kept * 2])) <= room:
        kept *= 2
    while kept < len(members) and render.estimate_tokens(_group_block(topic, members[: kept + 1])) <= room:
        kept += 1
    return kept


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def forget(path: Path, ids: list[str]) -> tuple[list[dict], list[str]]:
    """Delete records by id in one locked atomic write. Returns (deleted records, ids not found)."""
    wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    result: dict = {}

    def change(snap: store.Snapshot):
        gone = [i for i in wanted if i in snap.records]
        result["deleted"] = [snap.records[i].record for i in gone]
        return snap.edited(drop=gone) if gone else None

    store.update(path, change)
    deleted = result["deleted"]
    return deleted, [i for i in wanted if i not in {r["id"] for r in deleted}]
