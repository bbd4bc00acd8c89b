"""Id-aware merging (docs/contract.md §8.2 rules, used by the loader for conflict markers)."""

from sentinel_memory.record.merge import merge_three_way, merge_two_way
from sentinel_memory.record.records import Entry


def rec(rid, lesson="l", ask="", updated=None, **extra):
    meta = {"created": "2026-01-01T00:00:00+00:00", **({"updated": updated} if updated else {})}
    return Entry.of({"id": rid, "type": "log", "topic": "t", "missing_context": rid, "lesson": lesson,
                     "ask_next_time": ask, "meta": meta, **extra})


def test_both_changed_different_fields_merge_field_by_field():
    """One side fixed the lesson, the other the question: the merge keeps both fixes."""
    base = {"a": rec("a")}
    ours = {"a": rec("a", lesson="ours", updated="2026-02-01T00:00:00+00:00")}
    theirs = {"a": rec("a", ask="theirs?", updated="2026-03-01T00:00:00+00:00")}
    merged = merge_three_way(base, ours, theirs)["a"].record
    assert merged["lesson"] == "ours" and merged["ask_next_time"] == "theirs?"
    assert merged["meta"]["updated"] == "2026-03-01T00:00:00+00:00"


def test_both_changed_the_same_field_newer_wins():
    """Where both sides changed the same field, the side updated later wins."""
    base = {"a": rec("a")}
    ours = {"a": rec("a", lesson="older", updated="2026-02-01T00:00:00+00:00")}
    theirs = {"a": rec("a", lesson="newer", updated="2026-03-01T00:00:00+00:00")}
    assert merge_three_way(base, ours, theirs)["a"].record["lesson"] == "newer"
    assert merge_three_way(base, theirs, ours)["a"].record["lesson"] == "newer"


def test_compaction_on_one_side_does_not_swallow_a_correction_on_the_other():
    """Ours deleted a record (compaction) while theirs corrected it: the correction survives."""
    base = {"a": rec("a"), "b": rec("b")}
    ours = {}
    theirs = {"a": rec("a", lesson="corrected"), "b": rec("b")}
    merged = merge_three_way(base, ours, theirs)
    assert list(merged) == ["a"] and merged["a"].record["lesson"] == "corrected"


def test_unchanged_records_keep_their_exact_bytes():
    """A record nobody changed is copied byte for byte, even if it was written with other spacing."""
    odd = Entry(rec("a").record, rec("a").line.replace(": ", ":"))  # bytes follow the line
    merged = merge_three_way({"a": odd}, {"a": odd}, {"a": odd, "b": rec("b")})
    assert merged["a"].line == odd.line


def test_unknown_fields_are_preserved():
    """Fields this version does not know survive a field-level merge."""
    base = {"a": rec("a", x_team="core")}
    ours = {"a": rec("a", lesson="o", x_team="core", updated="2026-02-01T00:00:00+00:00")}
    theirs = {"a": rec("a", ask="t", x_team="core", updated="2026-02-02T00:00:00+00:00")}
    assert merge_three_way(base, ours, theirs)["a"].record["x_team"] == "core"


def test_two_way_keeps_everything_with_ties_broken_on_content():
    """Without a base, each id keeps the newer version; equal dates pick the same side either way."""
    ours = {"a": rec("a", lesson="p"), "b": rec("b")}
    theirs = {"a": rec("a", lesson="q"), "c": rec("c")}
    one, two = merge_two_way(ours, theirs), merge_two_way(theirs, ours)
    assert sorted(one) == ["a", "b", "c"] and one["a"].line == two["a"].line
