"""`review`: what changed in the memory between two revisions, by record id, and what a reviewer
should look at (the flags). The words are cli/review_report.py's.

Each side is the memory file's bytes at a commit (git/revisions.py: hardened git, bounded, never a
link) or in the work tree, parsed by the product's own reader (record/snapshot.py: conflict
markers merged, unreadable lines set aside); the comparison is record/compare.py's. The memory
file's own flags (moved away from where the agent reads it, new conflict markers or unreadable
lines at HEAD) come from reading the sides; the records' flags are cli/review_flags.py's.

No value a rule hits is ever shown: every field the report prints is shown redacted where a rule
hits it, on either side.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from ..errors import StorageError
from ..git import revisions
from ..git.history import Repo
from ..git.staleness import Stale
from ..record.compare import Changed, Comparison, Fold, compare, differences
from ..record.contextdir import QUARANTINE_FILE
from ..record.disk import check_directory, read_regular
from ..record.records import FIELD_ORDER, META_ORDER, STRICT_ONLY, TYPES, meta_of
from ..record.snapshot import Snapshot, lines_of, parse
from ..setup.project import ProjectRoot
from . import review_flags

MEMORY_REL = ".context/memory_log.jsonl"
QUARANTINE_REL = ".context/" + QUARANTINE_FILE


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
    flags: list[review_flags.Flag]
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
    flags: list[review_flags.Flag] = []
    _file_flags(old, new, expected, notes, flags)
    comparison = compare(old.snapshot.records, new.snapshot.records)
    _format_notes(old, new, notes)
    shown_new = [*comparison.added, *(c.new for c in comparison.changed), *(f.principle for f in comparison.folds)]
    seen: dict = {}  # the redaction rules' hits per record, found once (review_flags.hits)
    flags += review_flags.credentials(comparison, old, new, seen)
    missing = review_flags.missing_files(repo, root, head_sha, shown_new)
    flags += [
        review_flags.Flag(
            "missing", r["id"], f"cites {', '.join(paths)}, which {'is' if len(paths) == 1 else 'are'} not at HEAD"
        )
        for r, paths in missing
    ]
    marks, stale_flags = review_flags.stale(
        repo, head_sha, old, new, comparison, {r["id"]: set(p) for r, p in missing}, notes
    )
    flags += stale_flags
    flags += review_flags.duplicates(shown_new, new.snapshot)
    flags += review_flags.topics(old.snapshot, new.snapshot)
    flags.sort(key=lambda f: (list(review_flags.KINDS).index(f.kind), f.record_id or ""))
    return Review(old, new, _safe(comparison, seen), [_safe_flag(f) for f in flags], notes, marks)


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
        # A .context/ that is a link is not read through (it may lead out of the project), as the
        # memory itself refuses it; read_regular refuses a link in the file's own place.
        check_directory(str(root.memory_file.parent))
        data = read_regular(str(root.memory_file))
        path = expected if data is not None else None
        if data is None:
            elsewhere = sorted(
                p for p in revisions.work_tree_files(repo, revisions.MEMORY_NAME) if _is_renamed(p, repo.prefix)
            )
            if elsewhere:
                path = elsewhere[0]
                check_directory(os.path.dirname(os.path.join(repo.top, path)))
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


def _file_flags(old: Side, new: Side, expected: str, notes: list[str], flags: list[review_flags.Flag]) -> None:
    if old.path is None:
        notes.append(f"{old.label} has no memory file: every record is new")
    elif old.path != expected:
        notes.append(
            f"{old.label} holds the memory at {old.path}, not at {expected}: compared with it "
            "(the .context/ folder was moved or renamed since)"
        )
    if new.path is None and old.path is not None:
        notes.append(f"{new.label} has no memory file: every record is removed")
        flags.append(
            review_flags.Flag("file", None, f"{new.label} has no memory file at {expected}: every record is removed")
        )
    elif new.path is not None and new.path != expected:
        flags.append(
            review_flags.Flag(
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
            review_flags.Flag(
                "file",
                None,
                f"{new.label} holds git conflict markers in the memory file: a merge was left unresolved",
            )
        )
    if fresh_bad:
        flags.append(
            review_flags.Flag(
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


# ----------------------------------------------------------------------------- what is shown


def _safe_flag(flag: review_flags.Flag) -> review_flags.Flag:
    """A flag whose record id and detail (a cited path, a stale file) show no credential: a
    hand-written record may hold one in its id or its files."""
    from ..redaction import redact

    rid = redact(flag.record_id, strict_only=True)[0] if flag.record_id else flag.record_id
    detail = redact(flag.detail, strict_only=True)[0]
    return flag if (rid, detail) == (flag.record_id, flag.detail) else replace(flag, record_id=rid, detail=detail)


def _safe(comparison: Comparison, seen: dict) -> Comparison:
    """The comparison with every value a redaction rule hits shown redacted, on either side."""
    from ..redaction import redact

    def shown(value: object, strict: bool) -> object:
        """A value with every string in it redacted (keys too), however it nests."""
        if isinstance(value, str):
            return redact(value, strict_only=strict)[0]
        if isinstance(value, dict):
            return {shown(k, strict): shown(v, strict) for k, v in value.items()}
        if isinstance(value, list):
            return [shown(v, strict) for v in value]
        return value

    def clean(record: dict) -> dict:
        if not review_flags.hits(record, seen):
            return record
        return {shown(k, False): shown(v, STRICT_ONLY.get(k, False)) for k, v in record.items()}

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
