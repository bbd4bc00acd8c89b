"""Id-aware merging of record sets: duplicates, three-way (base/ours/theirs) and two-way.

The rules are docs/contract.md §8.2's, and they are symmetric: merge(b, o, t) and merge(b, t, o) give the
same records, so merging either way round or rebasing produces the same bytes.
"""

from __future__ import annotations

from .records import Entry, meta_of, newer

Records = dict[str, Entry]


def keep_newest(entries: list[Entry]) -> tuple[Records, int]:
    """Collapse duplicate ids (e.g. after a union merge), the newer winning. Returns (records, dropped)."""
    out: Records = {}
    for entry in entries:
        seen = out.get(entry.id)
        out[entry.id] = entry if seen is None else newer(seen, entry)
    return out, len(entries) - len(out)


def merge_two_way(ours: Records, theirs: Records) -> Records:
    """Without a common base nothing can be known deleted: keep every id, the newer per id."""
    out = dict(ours)
    for rid, entry in theirs.items():
        out[rid] = entry if rid not in out else newer(out[rid], entry)
    return out


def merge_three_way(base: Records, ours: Records, theirs: Records) -> Records:
    """Per id: keep what is the same, take one-sided changes, and never let a deletion beat a change."""
    out: Records = {}
    for rid in base.keys() | ours.keys() | theirs.keys():
        b, o, t = base.get(rid), ours.get(rid), theirs.get(rid)
        merged = _merge_one(b, o, t)
        if merged is not None:
            out[rid] = merged
    return out


def _merge_one(b: Entry | None, o: Entry | None, t: Entry | None) -> Entry | None:
    if o is None and t is None:
        return None
    if o is None or t is None:
        side = o if o is not None else t
        assert side is not None
        # Deleted on one side: the deletion stands only if the other side left it untouched.
        if b is not None and side.record == b.record:
            return None
        return side
    if o.record == t.record:
        return min(o, t, key=lambda e: e.line)  # same content, maybe other bytes: pick stably
    if b is not None and o.record == b.record:
        return t
    if b is not None and t.record == b.record:
        return o
    return Entry.of(_merge_fields(b.record if b else {}, o.record, t.record, o is newer(o, t)))


def _merge_fields(b: dict, o: dict, t: dict, ours_newer: bool) -> dict:
    """Field by field: one-sided changes are taken; where both changed a field the newer side wins."""
    out = {}
    # Keys in the base's order, then keys new on either side sorted: the same order either way round.
    for key in [k for k in b if k in o or k in t] + sorted((o.keys() | t.keys()) - b.keys()):
        if key not in o or key not in t:
            bval, side = b.get(key), (o if key in o else t)
            if key in b and side[key] == bval:
                continue  # removed on one side, untouched on the other
            out[key] = side[key]
            continue
        ov, tv = o[key], t[key]
        if key == "meta" and isinstance(ov, dict) and isinstance(tv, dict):
            out[key] = _merge_fields(meta_of(b), ov, tv, ours_newer)
            continue
        if ov == tv:
            out[key] = ov
        elif key in b and ov == b[key]:
            out[key] = tv
        elif key in b and tv == b[key]:
            out[key] = ov
        else:
            out[key] = ov if ours_newer else tv
    return out
