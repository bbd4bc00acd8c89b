"""`review`: what changed in the memory between two revisions, by record id, and what a reviewer
should look at (the flags). The words are cli/review_report.py's.

Each side is the memory file's bytes at a commit (git/revisions.py: hardened git, bounded, never a
link) or in the work tree, parsed by the product's own reader (record/snapshot.py: conflict
markers merged, unreadable lines set aside); the comparison is record/compare.py's. Flags:

- a credential-like value (the redaction rules, as `scan` applies them) in a record added or
  changed, or in a line that is new in the memory or quarantine file;
- a cited file that HEAD does not hold, of a record added or changed;
- a lesson stale at HEAD (git/staleness.py): added or changed, or made stale by this change;
- a near-duplicate (most of its words shared) of another record at HEAD;
- a topic new to the memory beside a similar existing one (search/topics.py);
- the memory file itself: moved away from where the agent reads it, or new conflict markers or
  unreadable lines at HEAD.

No value a rule hits is ever shown: every field the report prints is shown redacted where a rule
hits it, on either side.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace

from ..errors import StorageError
from ..git import revisions
from ..git.history import Repo, history
from ..git.staleness import Checker, Stale, oldest_citing, stamp_seconds
from ..record.citations import of as cited_files
from ..record.compare import Changed, Comparison, Fold, compare, differences
from ..record.contextdir import QUARANTINE_FILE
from ..record.disk import read_regular
from ..record.records import FIELD_ORDER, META_ORDER, STRICT_ONLY, TYPES, meta_of
from ..record.snapshot import Snapshot, lines_of, parse
from ..search.terms import terms
from ..search.topics import similar
from ..setup.project import ProjectRoot
from ..tools.blocks import stale_change

MEMORY_REL = ".context/memory_log.jsonl"
QUARANTINE_REL = ".context/" + QUARANTINE_FILE
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


@dataclass
class Side:
    """One revision of the memory file."""

    label: str  # "main (merge base 1a2b3c4)", "the work tree"
    commit: str | None  # None: the work tree
    path: str | None  # where the file was read, relative to the repository's top; None: no file
    snapshot: Snapshot = field(default_factory=Snapshot)
    quarantine: list[bytes] = field(default_factory=list)


@dataclass
class Review:
    base: Side
    head: Side
    comparison: Comparison
    flags: list[Flag]
    notes: list[str]  # what the reader should know about the comparison itself
    stale: dict[str, Stale]  # marks at HEAD of the records the report shows

    @property
    def status(self) -> int:
        """The exit status: 1 when there are flags, else 0."""
        return 1 if self.flags else 0


def review(root: ProjectRoot, base_rev: str | None = None, head_rev: str | None = None) -> Review:
    """Compare the memory at base_rev (default: the merge base with the default branch) with
    head_rev (default: the work tree). InvalidInput for a revision git does not know."""
    repo = revisions.repository(root.path)
    notes: list[str] = []
    if base_rev is None:
        base = revisions.default_base(repo)
        if base.note:
            notes.append(base.note)
        base_sha, base_label = base.commit, base.label
    else:
        base_sha = revisions.named(repo, base_rev)
        base_label = _label(base_rev, base_sha)
    head_sha = revisions.named(repo, head_rev) if head_rev is not None else None
    expected = repo.prefix + MEMORY_REL
    old = _side(repo, base_sha, base_label, root, expected, notes)
    new = _side(
        repo,
        head_sha,
        _label(head_rev, head_sha) if head_rev is not None and head_sha else "the work tree",
        root,
        expected,
        notes,
    )
    flags: list[Flag] = []
    _file_flags(old, new, expected, notes, flags)
    comparison = compare(old.snapshot.records, new.snapshot.records)
    _format_notes(old, new, notes)
    shown_new = [*comparison.added, *(c.new for c in comparison.changed), *(f.principle for f in comparison.folds)]
    flags += _credentials(comparison, old, new)
    missing = _missing_files(repo, root, head_sha, shown_new)
    flags += [
        Flag("missing", r["id"], f"cites {', '.join(paths)}, which {'is' if len(paths) == 1 else 'are'} not at HEAD")
        for r, paths in missing
    ]
    marks, stale_flags = _stale(repo, head_sha, old, new, comparison, {r["id"]: set(p) for r, p in missing}, notes)
    flags += stale_flags
    flags += _duplicates(shown_new, new.snapshot)
    flags += _topics(old.snapshot, new.snapshot)
    flags.sort(key=lambda f: (list(KINDS).index(f.kind), f.record_id or ""))
    return Review(old, new, _safe(comparison), flags, notes, marks)


# ------------------------------------------------------------------------------------- the sides


def _label(revision: str, sha: str) -> str:
    """A revision as the report names it: `main (1a2b3c4)`, or the short hash given a hash."""
    short = revisions.short(sha)
    hashed = len(revision) >= 7 and all(c in "0123456789abcdef" for c in revision.lower())
    return short if hashed and sha.startswith(revision.lower()) else f"{revision} ({short})"


def _side(repo: Repo, sha: str | None, label: str, root: ProjectRoot, expected: str, notes: list[str]) -> Side:
    side = Side(label, sha, None)
    if sha is not None:
        found = revisions.blob(repo, sha, expected)
        data = found.data
        if found.problem:
            notes.append(found.problem)
        path = expected if data is not None else None
        if data is None and not found.problem:
            elsewhere = sorted(p for p in revisions.files_at(repo, sha) if _is_renamed(p, repo.prefix))
            if elsewhere:
                path, data = elsewhere[0], revisions.blob(repo, sha, elsewhere[0]).data
        quarantine = revisions.blob(repo, sha, expected[: -len(MEMORY_REL)] + QUARANTINE_REL).data if data else None
    else:
        data = read_regular(str(root.memory_file))
        path = expected if data is not None else None
        if data is None:
            elsewhere = sorted(
                p for p in revisions.work_tree_files(repo, revisions.MEMORY_NAME) if _is_renamed(p, repo.prefix)
            )
            if elsewhere:
                path = elsewhere[0]
                data = read_regular(os.path.join(repo.top, path))
        try:
            quarantine = read_regular(str(root.memory_file.parent / QUARANTINE_FILE)) if data is not None else None
        except StorageError as exc:  # a link or a folder in its place: the quarantine is not read
            notes.append(str(exc))
            quarantine = None
    side.path = path if data is not None else None
    if data is not None:
        side.snapshot = parse(data)
        side.quarantine = lines_of(quarantine or b"")
    return side


def _is_renamed(path: str, prefix: str) -> bool:
    """A memory file in another folder right under the project root: .context/ renamed (a memory
    file deeper down, or outside the project, is another project's)."""
    if not path.startswith(prefix):
        return False
    folder, _, name = path[len(prefix) :].partition("/")
    return name == revisions.MEMORY_NAME and folder != ".context"


def _file_flags(old: Side, new: Side, expected: str, notes: list[str], flags: list[Flag]) -> None:
    if old.path is None:
        notes.append(f"{old.label} has no memory file: every record is new")
    elif old.path != expected:
        notes.append(
            f"{old.label} holds the memory at {old.path}, not at {expected}: compared with it "
            "(the .context/ folder was moved or renamed since)"
        )
    if new.path is None and old.path is not None:
        notes.append(f"{new.label} has no memory file: every record is removed")
        flags.append(Flag("file", None, f"{new.label} has no memory file at {expected}: every record is removed"))
    elif new.path is not None and new.path != expected:
        flags.append(
            Flag(
                "file",
                None,
                f"the memory file is at {new.path} in {new.label}, not at {expected}, where the agent reads it: "
                "after this change it finds no memory (was .context/ renamed or moved?)",
            )
        )
    for side in (old, new):
        snap = side.snapshot
        what = []
        if snap.conflict_regions:
            way = "exactly (diff3 base)" if snap.conflict_base else "keeping both sides"
            what.append(f"{snap.conflict_regions} git conflict region(s), read merged by id {way}")
        if snap.unreadable:
            what.append(f"{len(snap.unreadable)} line(s) that are not records, left out of the comparison")
        if snap.duplicates:
            what.append(f"{snap.duplicates} repeated id(s), the newer of each compared")
        if what:
            notes.append(f"the memory file in {side.label} holds " + "; ".join(what))
    fresh_bad = set(new.snapshot.unreadable) - set(old.snapshot.unreadable)
    if new.snapshot.conflict_regions and not old.snapshot.conflict_regions:
        flags.append(
            Flag(
                "file",
                None,
                f"{new.label} holds git conflict markers in the memory file: a merge was left unresolved",
            )
        )
    if fresh_bad:
        flags.append(
            Flag(
                "file",
                None,
                f"{len(fresh_bad)} new line(s) in the memory file are not records (the next write moves them to {QUARANTINE_FILE})",
            )
        )


def _format_notes(old: Side, new: Side, notes: list[str]) -> None:
    """Records of a format this version does not know (a newer release's): say what it cannot read."""
    known_fields, known_meta = set(FIELD_ORDER), set(META_ORDER)
    types: set[str] = set()
    fields: set[str] = set()
    ids: set[str] = set()
    for side in (old, new):
        for entry in side.snapshot.records.values():
            record = entry.record
            kind = record.get("type", "log")
            extra = {k for k in record if k not in known_fields} | {
                f"meta.{k}" for k in meta_of(record) if k not in known_meta
            }
            if extra or kind not in TYPES:
                ids.add(entry.id)
                fields |= extra
                if kind not in TYPES:
                    types.add(str(kind))
    if ids:
        what = [f"type {', '.join(sorted(types))}"] if types else []
        what += [f"fields {', '.join(sorted(fields)[:8])}"] if fields else []
        notes.append(
            f"{len(ids)} record(s) carry what this version of sentinel-memory does not know ({'; '.join(what)}), "
            "perhaps from a newer release: compared field by field as they are"
        )


# --------------------------------------------------------------------------------------- flags


def _text_fields(record: dict) -> dict[str, bool]:
    """The record's text fields and whether only the strict rules apply to each (docs/contract.md
    §6); a field this version does not know gets every rule."""
    out = {}
    for name, value in record.items():
        if isinstance(value, str) and name not in ("id", "type"):
            out[name] = STRICT_ONLY.get(name, False)
    return out


def _hits(record: dict) -> list[tuple[str, str]]:
    from ..redaction import rules_hit  # builds the rules: only when a review runs

    return [
        (name, rule)
        for name, strict in _text_fields(record).items()
        for rule in rules_hit(record[name], strict_only=strict)
    ]


def _credentials(comparison: Comparison, old: Side, new: Side) -> list[Flag]:
    from ..redaction import rules_hit

    flags = []
    olds = {c.new["id"]: c.old for c in comparison.changed} | {
        f.principle["id"]: f.before for f in comparison.folds if f.before is not None
    }
    for record in [*comparison.added, *(c.new for c in comparison.changed), *(f.principle for f in comparison.folds)]:
        was = olds.get(record["id"])
        before = set(_hits(was)) if was is not None else set()
        for name, rule in dict.fromkeys(_hits(record)):
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


def _missing_files(
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


def _stale(
    repo: Repo,
    head_sha: str | None,
    old: Side,
    new: Side,
    comparison: Comparison,
    missing: dict[str, set[str]],
    notes: list[str],
) -> tuple[dict[str, Stale], list[Flag]]:
    """The marks at HEAD of the records at HEAD, and a flag for each added or changed record that
    is stale, and for each other record this change made stale."""
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
            if before is None or was is None or before.mark(was.record):
                continue  # stale already before this change: not this change's news
        changes = [c for c in mark if c.path not in missing.get(rid, set())]
        if changes:
            flags.append(Flag("stale", rid, "; ".join(stale_change(c) for c in changes)))
    return marks, flags


def _words(record: dict) -> set[str]:
    return terms(" ".join(str(record.get(k) or "") for k in ("missing_context", "lesson")))


def _duplicates(candidates: list[dict], snap: Snapshot) -> list[Flag]:
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
        for other in {o for w in prefix(ws) for o in index.get(w, ())} - {rid}:
            theirs = words[other]
            score = len(ws & theirs) / len(ws | theirs)
            if score >= NEAR and (score, other) > (best_score, best or ""):
                best, best_score = other, score
        if best is not None and frozenset((rid, best)) not in reported:
            reported.add(frozenset((rid, best)))
            topic = _topic(snap.records[best].record.get("topic", ""))
            flags.append(Flag("duplicate", rid, f"shares {best_score:.0%} of its words with {best} (topic {topic!r})"))
    return flags


def _topics(old: Snapshot, new: Snapshot) -> list[Flag]:
    before = {str(t) for t in old.topic_counts() if t is not None}
    after: dict[str, int] = {}
    for t, n in new.topic_counts().items():
        if t is not None:
            after[str(t)] = after.get(str(t), 0) + n
    flags = []
    for topic in sorted(t for t in after if t not in before):
        near = sorted(_topic(t) for t in before if similar(topic, t))
        if near:
            count = after[topic]
            flags.append(
                Flag(
                    "topic",
                    None,
                    f"{_topic(topic)!r} ({count} record{'s' if count != 1 else ''}) is new; "
                    f"the memory already has {', '.join(repr(t) for t in near[:3])}: one topic groups lessons for compaction",
                )
            )
    return flags


# ----------------------------------------------------------------------------- what is shown


def _topic(topic: object) -> str:
    """A topic as a flag names it: the strict rules' values redacted, as in a record's block."""
    from ..redaction import redact

    return redact(str(topic), strict_only=True)[0]


def _safe(comparison: Comparison) -> Comparison:
    """The comparison with every value a redaction rule hits shown redacted, on either side."""
    from ..redaction import redact

    def clean(record: dict) -> dict:
        hit = {name for name, _ in _hits(record)}
        if not hit:
            return record
        strict = _text_fields(record)
        return {k: redact(v, strict_only=strict[k])[0] if k in hit else v for k, v in record.items()}

    def changed(c: Changed) -> Changed:
        old, new = clean(c.old), clean(c.new)
        return c if old is c.old and new is c.new else Changed(old, new, differences(old, new))

    def fold(f: Fold) -> Fold:
        return replace(
            f,
            principle=clean(f.principle),
            before=clean(f.before) if f.before is not None else None,
            folded=tuple(clean(r) for r in f.folded),
        )

    return Comparison(
        added=[clean(r) for r in comparison.added],
        changed=[changed(c) for c in comparison.changed],
        removed=[clean(r) for r in comparison.removed],
        folds=[fold(f) for f in comparison.folds],
    )
