"""The flags of `review` (cli/review.py), what a reviewer should look at in a change of the memory:

- a credential-like value (the redaction rules, as `scan` applies them) in a record added or
  changed, or in a line that is new in the memory or quarantine file;
- a cited file that HEAD does not hold, of a record added or changed;
- a lesson stale at HEAD (git/staleness.py): added or changed, or made stale by this change (or,
  stale already, one whose file this change deletes or renames, or another of whose files it changes);
- a near-duplicate (most of its words shared) of another record at HEAD;
- a topic new to the memory beside a similar existing one (search/topics.py).

(The memory file's own flags, moved or newly conflicted, come with reading its sides.) No flag
holds a value a rule hits.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..git import revisions
from ..git.history import Repo, history
from ..git.staleness import Change, Checker, Stale, oldest_citing, stamp_seconds
from ..record.citations import of as cited_files
from ..record.compare import Comparison
from ..record.contextdir import QUARANTINE_FILE
from ..record.snapshot import Snapshot
from ..search.terms import terms
from ..search.topics import similar
from ..setup.project import ProjectRoot
from ..tools.blocks import stale_change

if TYPE_CHECKING:
    from .review import Side

NEAR = 0.75  # the share of words (Jaccard) two records' texts have in common to be near-duplicates
MIN_WORDS = 4  # fewer words than this say too little to call two texts alike

# The kinds of flag, in the order a report lists them, with the words that head each.
KINDS = {
    "file": "memory file",
    "credential": "credential-like value",
    "missing": "cited file missing at HEAD",
    "stale": "stale at HEAD",
    "duplicate": "near-duplicate",
    "topic": "new topic beside a similar one",
}


@dataclass(frozen=True)
class Flag:
    kind: str  # a key of KINDS
    record_id: str | None  # None for the memory file as a whole
    detail: str  # never a credential's value


def hits(record: dict, seen: dict | None = None) -> list[tuple[str, str]]:
    """(where, rule) for each value a redaction rule hits anywhere in the record, as `scan` looks:
    the text fields, and the id, the cited files, meta and any other key or value. `seen` keeps
    them by record (the same dict objects are flagged, then shown: redacted once)."""
    from ..redaction import rules_hit  # builds the rules: only when a review runs
    from ..setup.scan import record_strings

    if seen is not None and id(record) in seen:
        return seen[id(record)][1]
    found = [
        (where, rule)
        for where, value, strict in record_strings(record)
        for rule in rules_hit(value, strict_only=strict)
    ]
    if seen is not None:
        seen[id(record)] = (record, found)  # the record kept, so that its id() is not reused
    return found


def credentials(comparison: Comparison, old: Side, new: Side, seen: dict | None = None) -> list[Flag]:
    from ..redaction import rules_hit

    flags = []
    olds = {c.new["id"]: c.old for c in comparison.changed} | {
        f.principle["id"]: f.before for f in comparison.folds if f.before is not None
    }
    for record in [*comparison.added, *(c.new for c in comparison.changed), *(f.principle for f in comparison.folds)]:
        was = olds.get(record["id"])
        before = set(hits(was, seen)) if was is not None else set()
        for name, rule in dict.fromkeys(hits(record, seen)):
            if (name, rule) not in before:
                flags.append(Flag("credential", record["id"], f"{name} looks like {rule}"))
    for name, lines, earlier in (
        (revisions.MEMORY_NAME, new.snapshot.unreadable, old.snapshot.unreadable),
        (QUARANTINE_FILE, new.quarantine, old.quarantine),
    ):
        fresh = [line for line in dict.fromkeys(lines) if line not in set(earlier)]
        text = "\n".join(line.decode("utf-8", "surrogateescape") for line in fresh)
        for rule in dict.fromkeys(rules_hit(text)) if fresh else ():
            flags.append(Flag("credential", None, f"a line new in {name} that is not a record looks like {rule}"))
    return flags


def missing_files(
    repo: Repo, root: ProjectRoot, head_sha: str | None, records: list[dict]
) -> list[tuple[dict, list[str]]]:
    citing = [r for r in records if cited_files(r)]
    if not citing:
        return []
    if head_sha is None:

        def there(path: str) -> bool:
            return os.path.isfile(os.path.join(root.path, path))
    else:
        held = revisions.files_at(repo, head_sha)

        def there(path: str) -> bool:
            return repo.prefix + path in held

    found = []
    for record in citing:
        gone = [p for p in cited_files(record) if not there(p)]
        if gone:
            found.append((record, gone))
    return found


def stale(
    repo: Repo,
    head_sha: str | None,
    old: Side,
    new: Side,
    comparison: Comparison,
    missing: dict[str, set[str]],
    notes: list[str],
) -> tuple[dict[str, Stale], list[Flag]]:
    """The marks at HEAD of the records at HEAD, and a flag for each added or changed record that
    is stale, and for each other record this change made stale (or, stale already, whose file it
    deletes or renames, or another of whose files it changes)."""
    records = [e.record for e in new.snapshot.records.values()]
    since = stamp_seconds(oldest_citing(records) or "")
    head = head_sha or revisions.head_commit(repo)
    if since is None or head is None:
        return {}, []
    checker = Checker(repo, history(repo, head, since))
    if checker.shallow:
        notes.append(
            "this clone is shallow: stale marks count only the commits it holds "
            "(`git fetch --unshallow`, or `fetch-depth: 0` for actions/checkout)"
        )
    touched = {r["id"] for r in comparison.added} | {c.new["id"] for c in comparison.changed}
    touched |= {f.principle["id"] for f in comparison.folds}
    marks = {}
    for record in records:
        mark = checker.mark(record)
        if mark:
            marks[record["id"]] = mark
    if not marks:
        return {}, []
    before: Checker | None = None
    if old.commit is not None and any(rid not in touched for rid in marks):
        before = Checker(repo, history(repo, old.commit, since))
    flags = []
    for rid, mark in sorted(marks.items()):
        if rid not in touched:
            was = old.snapshot.records.get(rid)
            if before is None or was is None:
                continue
            # Stale already before this change: news only where this change makes it worse, a file
            # the mark did not name yet, or one it now deletes or renames (not another edit).
            seen = {c.path: c for c in before.mark(was.record)}
            mark = tuple(c for c in mark if _worse(c, seen.get(c.path)))
        changes = [c for c in mark if c.path not in missing.get(rid, set())]
        if changes:
            flags.append(Flag("stale", rid, "; ".join(stale_change(c) for c in changes)))
    return marks, flags


def _worse(now: Change, was: Change | None) -> bool:
    """Whether a cited file's change at HEAD is news against its change at BASE."""
    if was is None:
        return True
    return (now.deleted or now.renamed_to is not None) and not (was.deleted or was.renamed_to is not None)


def _words(record: dict) -> set[str]:
    return terms(" ".join(str(record.get(k) or "") for k in ("missing_context", "lesson")))


CANDIDATES = 50  # records compared with each added or changed one, at most


def duplicates(candidates: list[dict], snap: Snapshot) -> list[Flag]:
    """Each candidate whose words are mostly another record's at HEAD (Jaccard >= NEAR), found by
    prefix filtering: two sets that similar share one of their rarest words."""
    if not candidates:
        return []
    words = {rid: _words(e.record) for rid, e in snap.records.items()}
    frequency: dict[str, int] = {}
    for ws in words.values():
        for w in ws:
            frequency[w] = frequency.get(w, 0) + 1

    def prefix(ws: set[str]) -> list[str]:
        ranked = sorted(ws, key=lambda w: (frequency.get(w, 0), w))
        return ranked[: len(ws) - math.ceil(NEAR * len(ws)) + 1]

    index: dict[str, list[str]] = {}
    for rid, ws in words.items():
        if len(ws) >= MIN_WORDS:
            for w in prefix(ws):
                index.setdefault(w, []).append(rid)
    flags, reported = [], set()
    for record in candidates:
        rid, ws = record["id"], words.get(record["id"]) or _words(record)
        if len(ws) < MIN_WORDS:
            continue
        best, best_score = None, 0.0
        # The records sharing its rarest words first, at most CANDIDATES of them: a memory whose
        # words all are common (a generated one) would otherwise make this quadratic.
        others: dict[str, None] = {}
        for w in prefix(ws):
            others.update(dict.fromkeys(index.get(w, ())))
            if len(others) > CANDIDATES:
                break
        others.pop(rid, None)
        for other in list(others)[:CANDIDATES]:
            theirs = words[other]
            score = len(ws & theirs) / len(ws | theirs)
            if score >= NEAR and (score, other) > (best_score, best or ""):
                best, best_score = other, score
        if best is not None and frozenset((rid, best)) not in reported:
            reported.add(frozenset((rid, best)))
            topic = shown_topic(snap.records[best].record.get("topic", ""))
            flags.append(Flag("duplicate", rid, f"shares {best_score:.0%} of its words with {best} (topic {topic!r})"))
    return flags


def topics(old: Snapshot, new: Snapshot) -> list[Flag]:
    before = {str(t) for t in old.topic_counts() if t is not None}
    after: dict[str, int] = {}
    for t, n in new.topic_counts().items():
        if t is not None:
            after[str(t)] = after.get(str(t), 0) + n
    flags = []
    for topic in sorted(t for t in after if t not in before):
        near = sorted(shown_topic(t) for t in before if similar(topic, t))
        if near:
            count = after[topic]
            flags.append(
                Flag(
                    "topic",
                    None,
                    f"{shown_topic(topic)!r} ({count} record{'s' if count != 1 else ''}) is new; "
                    f"the memory already has {', '.join(repr(t) for t in near[:3])}: one topic groups lessons for compaction",
                )
            )
    return flags


def shown_topic(topic: object) -> str:
    """A topic as a flag names it: the strict rules' values redacted, as in a record's block."""
    from ..redaction import redact

    return redact(str(topic), strict_only=True)[0]
