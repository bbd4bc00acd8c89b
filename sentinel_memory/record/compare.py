"""Two versions of the memory compared by record id, for `review`: the records added, changed (field
by field, `meta` key by key) and removed, and which removed records a principle folded.

A principle does not store the ids it folded (docs/contract.md §4.3 deletes them in the same write),
so the folding is read from the change itself: a record removed in it whose topic is the topic of
a principle added in it, or of one whose `source_count` grew, was folded into that principle (the
way compact_memory groups them). A removed record that no such principle names by topic is
reported on its own. A line rewritten with other spacing or key order is not a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .merge import Records
from .records import FIELD_ORDER, META_ORDER, is_principle, meta_of, stands_for


@dataclass(frozen=True)
class FieldChange:
    name: str  # a top-level key, or "meta.<key>"
    old: object  # None when absent
    new: object


@dataclass(frozen=True)
class Changed:
    old: dict
    new: dict
    fields: tuple[FieldChange, ...]


@dataclass(frozen=True)
class Fold:
    """A principle that folded records in this change."""

    principle: dict
    before: dict | None  # the principle as it was, when it existed already
    folded: tuple[dict, ...]  # the removed records of its topic
    counted: int  # how many original logs its source_count says this change added

    @property
    def unmatched(self) -> int:
        """Logs its source_count counts that no removed record of its topic accounts for."""
        return max(0, self.counted - sum(stands_for(r) for r in self.folded))


@dataclass
class Comparison:
    added: list[dict] = field(default_factory=list)  # records only the new side has (folding principles too)
    changed: list[Changed] = field(default_factory=list)
    removed: list[dict] = field(default_factory=list)  # removed and folded by no principle
    folds: list[Fold] = field(default_factory=list)

    @property
    def folded(self) -> int:
        return sum(len(f.folded) for f in self.folds)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.folds)


def compare(old: Records, new: Records) -> Comparison:
    """What changed from `old` to `new` (both by id), each list sorted by id."""
    out = Comparison()
    gone: list[dict] = []
    for rid in sorted(old.keys() | new.keys()):
        before, after = old.get(rid), new.get(rid)
        if before is None and after is not None:
            out.added.append(after.record)
        elif after is None and before is not None:
            gone.append(before.record)
        elif before is not None and after is not None and before.line != after.line:
            fields = differences(before.record, after.record)
            if fields:
                out.changed.append(Changed(before.record, after.record, fields))
    folding: dict[str, list[tuple[dict, dict | None, int]]] = {}  # topic -> principles that folded
    for record in out.added:
        if is_principle(record):
            folding.setdefault(_topic(record), []).append((record, None, _count(record)))
    for change in out.changed:
        if is_principle(change.new) and _count(change.new) > _count(change.old):
            folding.setdefault(_topic(change.new), []).append(
                (change.new, change.old, _count(change.new) - _count(change.old))
            )
    folded: dict[str, list[dict]] = {}
    for record in gone:
        candidates = folding.get(_topic(record))
        if not candidates:
            out.removed.append(record)
            continue
        # Several principles of one topic: the first whose count still has room, else the first.
        room = [p for p, _, n in candidates if n > sum(stands_for(r) for r in folded.get(p["id"], []))]
        folded.setdefault((room or [candidates[0][0]])[0]["id"], []).append(record)
    for topic in sorted(folding):
        for principle, was, counted in folding[topic]:
            sources = tuple(folded.get(principle["id"], ()))
            if sources:
                out.folds.append(Fold(principle, was, sources, counted))
    in_folds = {f.principle["id"] for f in out.folds}
    out.added = [r for r in out.added if r["id"] not in in_folds]
    out.changed = [c for c in out.changed if c.new["id"] not in in_folds]
    return out


def differences(old: dict, new: dict) -> tuple[FieldChange, ...]:
    """The fields that differ, in the contract's order (unknown ones after), `meta` key by key."""
    found = []
    for name in _ordered(old.keys() | new.keys(), FIELD_ORDER):
        a, b = old.get(name), new.get(name)
        if name == "meta" and (isinstance(a, dict) or isinstance(b, dict)):
            ma, mb = meta_of(old), meta_of(new)
            found += [
                FieldChange(f"meta.{key}", ma.get(key), mb.get(key))
                for key in _ordered(ma.keys() | mb.keys(), META_ORDER)
                if ma.get(key) != mb.get(key) or (key in ma) != (key in mb)
            ]
        elif a != b or (name in old) != (name in new):
            found.append(FieldChange(name, a, b))
    return tuple(found)


def _ordered(keys, order: tuple[str, ...]) -> list[str]:
    return [k for k in order if k in keys] + sorted(k for k in keys if k not in order)


def _topic(record: dict) -> str:
    return str(record.get("topic", ""))


def _count(record: dict) -> int:
    count = meta_of(record).get("source_count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0
