"""Hypothesis properties of the store and the merge: what goes in comes out, within the limits."""

import atexit
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sentinel_memory.record.store import memory_path
from sentinel_memory.errors import InvalidInput
from sentinel_memory.tools.answers import log
from sentinel_memory.record.merge import merge_three_way
from sentinel_memory.record.records import LIMITS, Entry, prepare
from sentinel_memory.record.snapshot import Snapshot, parse
from sentinel_memory.record.store import read

text = st.text(
    alphabet=st.one_of(st.characters(codec="utf-8", exclude_categories=("Cs",)), st.sampled_from("가나다 \n\u2028")),
    max_size=80,
)
record_args = st.fixed_dictionaries({
    "topic": st.text(min_size=1, max_size=20).filter(lambda s: s.strip()),
    "missing_context": text.filter(lambda s: s.strip()),
    "lesson": text.filter(lambda s: s.strip()),
    "ask_next_time": text,
})
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Each example gets its own folder inside one that is removed when the process ends.
SCRATCH = Path(tempfile.mkdtemp(prefix="sm-properties-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def fresh_path() -> Path:
    return memory_path(Path(tempfile.mkdtemp(dir=SCRATCH)))


@SETTINGS
@given(st.lists(record_args, min_size=1, max_size=8))
def test_round_trip_order_and_limits(batch):
    """Whatever is logged reads back with the same stored values; lines stay sorted by id, within limits."""
    path = fresh_path()
    expected = {}
    for args in batch:
        try:
            draft = prepare(**args)
        except InvalidInput:
            continue
        if any(ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029" for c in draft.topic):
            with pytest.raises(InvalidInput, match="topic holds a line break or another control character"):
                log(path, **args)  # a topic on more than one line, or with an escape: refused (contract §3.5)
            continue
        log(path, **args)
        expected[draft.id] = draft
    if not expected:
        assert not path.exists(), "calls that were all refused must not create the file"
        return
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(expected)
    ids = [json.loads(x)["id"] for x in lines[:-1]]
    assert ids == sorted(ids)
    for rid, entry in read(path).records.items():
        assert {k: entry.record[k] for k in expected[rid].fields()} == expected[rid].fields()
        for name, limit in LIMITS.items():
            assert len(entry.record[name].encode("utf-8")) <= limit


@SETTINGS
@given(record_args)
def test_upsert_is_idempotent(args):
    """Logging the same thing twice leaves the file byte for byte as after the first time."""
    path = fresh_path()
    try:
        log(path, **args)
    except InvalidInput:
        assert not path.exists(), "a refused call must not create the file"
        return
    first = path.read_bytes()
    assert log(path, **args).startswith("unchanged:")
    assert path.read_bytes() == first


def entries(draw_ids, lessons):
    return {rid: Entry.of({"id": rid, "type": "log", "topic": "t", "missing_context": rid, "lesson": lesson,
                           "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})
            for rid, lesson in zip(draw_ids, lessons, strict=True)}


side = st.dictionaries(st.sampled_from("abcdef"), st.sampled_from(["x", "y", "z"]), max_size=6)


@SETTINGS
@given(side, side, side)
def test_three_way_merge_is_symmetric(base, ours, theirs):
    """Merging ours into theirs or theirs into ours gives the same bytes."""
    b, o, t = (entries(list(s), list(s.values())) for s in (base, ours, theirs))
    one = Snapshot(records=merge_three_way(b, o, t)).text()
    two = Snapshot(records=merge_three_way(b, t, o)).text()
    assert one == two


@SETTINGS
@given(side, side)
def test_a_deletion_never_beats_a_change(base, theirs):
    """If ours deleted everything but theirs changed a record, the changed record is kept."""
    b, t = entries(list(base), list(base.values())), entries(list(theirs), list(theirs.values()))
    merged = merge_three_way(b, {}, t)
    for rid, entry in t.items():
        if rid not in b or b[rid].record != entry.record:
            assert merged[rid].record == entry.record
        else:
            assert rid not in merged


@SETTINGS
@given(st.lists(record_args, min_size=1, max_size=12), st.text(max_size=20))
def test_search_order_is_a_permutation_with_the_matching_records_first(batch, query):
    """Search orders every record exactly once; the records that hold a word of the query that
    counts come before those that hold none (docs/contract.md §4.2)."""
    from sentinel_memory.search.index import index_of, record_terms, terms

    path = fresh_path()
    for args in batch:
        try:
            log(path, **args)
        except InvalidInput:
            pass
    snap = read(path)
    ranked = [e.record for e in index_of(snap).ranked(terms(query)).best_first()]
    assert sorted(r["id"] for r in ranked) == sorted(snap.records)
    # a lone ASCII letter or a one- or two-digit number counts only when nothing else is asked
    wanted = {t for t in terms(query) if not (t.isascii() and (len(t) == 1 or (t.isdigit() and len(t) <= 2)))} \
        or terms(query)
    holds = [bool(wanted & set().union(*record_terms(r))) for r in ranked]
    assert holds == sorted(holds, reverse=True)


ids16 = st.text(alphabet="0123456789abcdef", min_size=2, max_size=2)


def entry(rid: str, lesson: str, type_: str = "log") -> Entry:
    return Entry.of({"id": rid, "type": type_, "topic": "t", "missing_context": rid, "lesson": lesson,
                     "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})


@SETTINGS
@given(st.dictionaries(ids16, st.sampled_from(["x", "y"]), max_size=12), st.booleans(),
       st.lists(st.tuples(st.dictionaries(ids16, st.tuples(st.sampled_from(["x", "y", "z"]),
                                                            st.sampled_from(["log", "principle"])), max_size=4),
                          st.lists(ids16, max_size=3)), max_size=6))
def test_a_spliced_write_equals_a_full_rewrite(start, in_order, edits):
    """Edits spliced into the file's text give the same bytes and the same counts as sorting and
    counting every record afresh, whether the file on disk was already in id order or not."""
    file_order = sorted(start) if in_order else sorted(start, reverse=True)
    snap = parse(b"".join(entry(rid, start[rid]).data for rid in file_order))
    for put, drop in edits:
        before, before_text = snap, snap.text()
        snap = snap.edited(put=[entry(rid, lesson, type_) for rid, (lesson, type_) in put.items()], drop=drop)
        afresh = Snapshot(records=dict(snap.records))
        assert snap.text() == afresh.text() and snap.counts() == afresh.counts()
        assert set(snap.records) == (set(before.records) - set(drop)) | set(put)
        assert before.text() == before_text, "the older snapshot still gives its own text"
    ids = [json.loads(line)["id"] for line in snap.text().splitlines()]
    assert ids == sorted(ids) and set(ids) == set(snap.records)


queries = st.sampled_from(["", "x", "yy zzz", "t", "u", "결제 환불", "w"])
days = st.sampled_from(["2026-01-01T00:00:00+00:00", "2026-03-01T00:00:00+00:00", "2025-12-31T00:00:00+00:00"])


@SETTINGS
@given(st.dictionaries(ids16, st.sampled_from(["x", "y"]), max_size=12),
       st.lists(st.tuples(st.dictionaries(ids16, st.tuples(st.sampled_from(["x", "yy", "zzz w"]),
                                                            st.sampled_from(["log", "principle"]),
                                                            st.sampled_from(["t", "u"]), days), max_size=3),
                          st.lists(ids16, max_size=2), st.booleans(), queries), max_size=10))
def test_a_search_index_derived_after_writes_ranks_as_one_built_afresh(start, edits):
    """After writes in this process, search derives the new snapshot's index from the previous one;
    it orders every query (and topic) exactly as an index built from all the records would."""
    from sentinel_memory.search.index import SearchIndex, terms

    def made(rid, lesson, type_, topic, created):
        return Entry.of({"id": rid, "type": type_, "topic": topic, "missing_context": rid, "lesson": lesson,
                         "ask_next_time": "", "meta": {"created": created}})

    snap = parse(b"".join(entry(rid, start[rid]).data for rid in sorted(start)))
    base, ranking = snap, SearchIndex(snap.records.values())
    removed, added = [], {}
    for put, drop, search, query in edits:
        snap = snap.edited(put=[made(rid, *fields) for rid, fields in put.items()], drop=drop)
        for old in snap.edit.removed:  # what the writes hand over, gathered as search.follow does
            if old in added:
                del added[old]
            else:
                removed.append(old)
        added.update(dict.fromkeys(snap.edit.added))
        if not search:
            continue
        derived, fresh = ranking.derive(removed, added), SearchIndex(snap.records.values())
        assert derived is not None, "a difference made by edits always fits"
        assert derived.entries == fresh.entries and derived.principles == fresh.principles
        assert sorted(derived.ranks) == derived.ranks and len(set(derived.ranks)) == len(derived.ranks)
        earlier = SearchIndex(base.records.values())
        for topic in (None, "t", "u", "none"):
            one, two = derived.ranked(terms(query), topic), fresh.ranked(terms(query), topic)
            assert list(one.best_first()) == list(two.best_first())
            assert list(one.principles_first()) == list(two.principles_first())
            assert one.principles_in_scope() == two.principles_in_scope()
            assert list(ranking.ranked(terms(query), topic).best_first()) == \
                list(earlier.ranked(terms(query), topic).best_first()), "the earlier index is left as it was"
        base, ranking, removed, added = snap, derived, [], {}
