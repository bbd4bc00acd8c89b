"""Search, in one place: the terms of a text, the index of a snapshot's records, its derivation
after a write, ranking, and the walk that fits the ranked records into a token budget.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). A query only orders records: nothing is ever dropped because of a low score.

The index of the snapshot last searched is kept (index_of). When a write of this process makes
the next snapshot, the write hands over what changed (follow), and the next search derives the
new index from the old one at the cost of the changed records instead of indexing every record.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, dropwhile, repeat, takewhile
from operator import mul, sub

from . import render
from .gcpause import paused
from .records import Entry, is_principle, recency
from .snapshot import Snapshot

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]{2,}")


def terms(text: str) -> set[str]:
    """The words and CJK bigrams of text, lower-cased and NFC-normalised."""
    text = unicodedata.normalize("NFC", text).casefold()
    found = set(_WORD.findall(text))
    for run in _CJK.findall(text):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    found.discard("_")
    return found


def record_terms(record: dict) -> tuple[set[str], set[str]]:
    """(terms of the topic, terms of the text fields) of one record."""
    topic = terms(str(record.get("topic", "")))
    body = terms(" ".join(str(record.get(k, "")) for k in ("missing_context", "lesson", "ask_next_time")))
    return topic, body


TOPIC_WEIGHT = 3  # a query term in the topic counts three times one in the text


# Every entry of an index has a rank: an int in static order (principles, newest, id), with
# room between neighbours, so that a derived index gives a new entry one without renumbering
# the others. Ranks stay below 2**30, where ints are one machine word (cheap to hash and compare):
# a fresh index starts them at the middle, up to 65,536 apart, leaving the lower half for newer
# entries (the newest come first).
_LIMIT = 1 << 30  # every rank is below it: a query's sort key is rank - score * _LIMIT


class SearchIndex:
    """An inverted index over one snapshot's entries, built once and reused while the file is
    unchanged: a query then touches only the entries that contain its terms.

    Order: score (query terms contained; topic matches weigh three), then the static order:
    principles, then the newest, then id. `entries` are in static order and `ranks` (ascending)
    go with them; postings and topics list ranks. Queries answer with entries."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.entries = sorted(entries, key=_static_key, reverse=True)
            self.space = min((_LIMIT // 2) // (len(self.entries) + 1), 1 << 16)
            self.ranks = list(range(_LIMIT // 2, _LIMIT // 2 + len(self.entries) * self.space, self.space))
            self._by_rank: dict[int, Entry] | None = None
            self.principles = sum(1 for e in self.entries if is_principle(e.record))
            self.topic_postings: dict[str, list[int]] = {}  # term -> the ranks of the entries that hold it
            self.body_postings: dict[str, list[int]] = {}
            self.by_topic: dict[object, list[int]] = {}  # exact topic -> its entries' ranks
            # entry -> its block as search lists it, with that text's ASCII and other characters;
            # made when first listed, shared with the indexes derived from this one.
            self._cards: dict[Entry, tuple[str, int, int]] = {}
            for rank, entry in zip(self.ranks, self.entries, strict=True):
                self._index(entry, rank, _add)

    def _index(self, entry: Entry, rank: int, change) -> None:
        topic, body = record_terms(entry.record)
        for term in topic:
            change(self.topic_postings, term, rank)
        for term in body - topic:
            change(self.body_postings, term, rank)
        change(self.by_topic, entry.record.get("topic"), rank)

    def derive(self, removed: Iterable[Entry], added: Iterable[Entry]) -> SearchIndex | None:
        """The index of these entries less `removed`, plus `added`, made from this one (left as it
        is: another thread may be reading it) by changing only what those entries touch. None if
        the difference does not fit this index (the caller then builds one afresh)."""
        new = SearchIndex.__new__(SearchIndex)
        new.entries, new.ranks = list(self.entries), list(self.ranks)
        new.topic_postings, new.body_postings = dict(self.topic_postings), dict(self.body_postings)
        new.by_topic = dict(self.by_topic)
        new.principles, new.space, new._by_rank, new._cards = self.principles, self.space, None, self._cards
        with paused():
            for entry in removed:
                try:
                    at = new.entries.index(entry)  # identity: entries define no equality
                except ValueError:
                    return None
                new._index(entry, new.ranks[at], _remove)
                del new.entries[at], new.ranks[at]
                new.principles -= is_principle(entry.record)
                self._cards.pop(entry, None)
            for entry in added:
                at = _static_position(new.entries, entry)
                if at < len(new.entries) and new.entries[at] is entry:
                    return None
                rank = _rank_between(new.ranks[at - 1] if at else None, new.ranks[at] if at < len(new.ranks) else None,
                                     new.space)
                if rank is None:
                    return None
                new.entries.insert(at, entry)
                new.ranks.insert(at, rank)
                new._index(entry, rank, _with_new_list)
                new.principles += is_principle(entry.record)
        return new

    @property
    def by_rank(self) -> dict[int, Entry]:
        """rank -> entry, made once per index (in C) when a query first needs it."""
        if self._by_rank is None:
            self._by_rank = dict(zip(self.ranks, self.entries, strict=True))
        return self._by_rank

    def ranked(self, query_terms: set[str], topic: object = None) -> Ranked:
        """`topic`'s entries (all when None) ranked for query_terms."""
        scores = self._scores(query_terms)
        # One int per matching entry, a higher score first, then the static order (rank < _LIMIT);
        # made and sorted in C (map), as there may be thousands.
        keys = list(map(sub, scores.keys(), map(mul, scores.values(), repeat(_LIMIT))))
        keys.sort()
        scored = list(map(_LIMIT.__rmod__, keys))
        if topic is None:
            scope = self.ranks
        else:
            scope = sorted(self.by_topic.get(topic, ()))
            inside = set(scope)
            scored = [r for r in scored if r in inside]
        first_log = self.ranks[self.principles] if self.principles < len(self.ranks) else _LIMIT
        return Ranked(self.by_rank, scored, scope, first_log)

    def _scores(self, query_terms: set[str]) -> Counter:
        scores: Counter = Counter()
        for term in query_terms:
            topic = self.topic_postings.get(term)
            if topic:
                for _ in range(TOPIC_WEIGHT):  # Counter.update counts in C: three passes beat a loop
                    scores.update(topic)
            body = self.body_postings.get(term)
            if body:
                scores.update(body)
        return scores

    def fit(self, entries: Iterable[Entry], room: int, marks=None) -> tuple[list[str], list[Entry], bool]:
        """The numbered blocks of these entries, in order, as many as fit in `room` estimated
        tokens (0: no limit); the entries listed; and whether all of them fit. Only what is
        listed is rendered, each record's block once per index lineage. `marks(entry, card)`
        gives the card to list instead (the block with the record's stale mark under its header:
        the mark depends on git's HEAD, so it is not part of the card kept here)."""
        blocks: list[str] = []
        shown: list[Entry] = []
        used, cards = 0, self._cards
        for entry in entries:
            card = cards.get(entry)
            if card is None:
                card = cards[entry] = _card(entry.record)
            if marks is not None:
                card = marks(entry, card)
            body, ascii_chars, other_chars = card
            block = render.numbered(len(blocks) + 1, body)
            used += render.tokens_of(ascii_chars + len(block) - len(body), other_chars)  # the number is ASCII
            if room and used > room:
                return blocks, shown, False
            blocks.append(block)
            shown.append(entry)
        return blocks, shown, True


def with_line(card: tuple[str, int, int], line: str) -> tuple[str, int, int]:
    """A card with one more line under the block's header (a stale mark)."""
    body, ascii_chars, other_chars = card
    cut = body.find("\n") + 1
    extra = len(line.encode("ascii", "ignore"))
    return f"{body[:cut]}{line}\n{body[cut:]}", ascii_chars + extra + 1, other_chars + len(line) - extra


def _card(record: dict) -> tuple[str, int, int]:
    body = render.record_body(record)
    ascii_chars = len(body.encode("ascii", "ignore"))
    return body, ascii_chars, len(body) - ascii_chars


def _static_key(entry: Entry) -> tuple:
    return is_principle(entry.record), recency(entry.record), entry.id


def _static_position(entries: list, entry: Entry) -> int:
    """Where entry goes in entries, which are in descending static order (ids are unique)."""
    key, low, high = _static_key(entry), 0, len(entries)
    while low < high:
        middle = (low + high) // 2
        if _static_key(entries[middle]) > key:
            low = middle + 1
        else:
            high = middle
    return low


def _rank_between(before: int | None, after: int | None, space: int) -> int | None:
    """A rank between two neighbours' (None: no neighbour there), or None if there is no room."""
    if before is None and after is None:
        return _LIMIT // 2
    if after is not None and before is None:
        return after - space if after - space >= 0 else None
    if before is not None and after is None:
        return before + space if before + space < _LIMIT else None
    assert before is not None and after is not None
    return (before + after) // 2 if after - before > 1 else None


def _add(index: dict, key, rank: int) -> None:
    index.setdefault(key, []).append(rank)


def _with_new_list(index: dict, key, rank: int) -> None:
    index[key] = index.get(key, []) + [rank]  # a new list: the old one may be another index's


def _remove(index: dict, key, rank: int) -> None:
    left = [r for r in index[key] if r != rank]
    if left:
        index[key] = left
    else:
        del index[key]


class Ranked:
    """Entries in one index's order: those that match the query (best first), then the rest of
    the scope in static order. Lazy past the matching ones, so taking the first few costs little
    however many entries there are."""

    def __init__(self, by_rank: dict[int, Entry], scored: list[int], scope: list[int], first_log: int) -> None:
        self._by_rank, self._scored, self._scope, self._first_log = by_rank, scored, scope, first_log
        self._matched = set(scored)

    def principles_in_scope(self) -> int:
        return bisect_left(self._scope, self._first_log)

    def matching(self) -> Iterator[Entry]:
        """The entries that hold at least one query term, best first."""
        return map(self._by_rank.__getitem__, self._scored)

    def best_first(self) -> Iterator[Entry]:
        """Every entry in scope: the matching ones best first, then the rest in static order."""
        matched = self._matched
        return map(self._by_rank.__getitem__, chain(self._scored, (r for r in self._scope if r not in matched)))

    def principles_first(self) -> Iterator[Entry]:
        """The same order, principles before the rest."""
        first_log, matched, scope, scored = self._first_log, self._matched, self._scope, self._scored
        return map(self._by_rank.__getitem__, chain(
            (r for r in scored if r < first_log),
            (r for r in takewhile(lambda r: r < first_log, scope) if r not in matched),
            (r for r in scored if r >= first_log),
            (r for r in dropwhile(lambda r: r < first_log, scope) if r not in matched)))


# ------------------------------------------------------------------- the index of the last snapshot

_MAX_PENDING = 512  # changed entries an index may still be derived through; past it, one is built afresh


@dataclass
class _Current:
    """The snapshot last searched or written, and its index, or what its index is to be derived
    from: an earlier index and the entries removed from and added to it since."""

    snapshot: Snapshot
    index: SearchIndex | None = None
    base: SearchIndex | None = None
    removed: tuple[Entry, ...] = ()
    added: tuple[Entry, ...] = ()


_current: _Current | None = None


def index_of(snap: Snapshot) -> SearchIndex:
    """The index of this snapshot: the one kept when it is the snapshot last searched; derived
    when a write handed it over (follow); else built from its records."""
    global _current
    current = _current
    if current is not None and current.snapshot is snap:
        if current.index is not None:
            return current.index
        assert current.base is not None  # no index yet: follow() left a base to derive it from
        index = current.base.derive(current.removed, current.added) or SearchIndex(snap.records.values())
    else:
        index = SearchIndex(snap.records.values())
    _current = _Current(snap, index)
    return index


def follow(before: Snapshot, after: Snapshot | None) -> None:
    """A write turned `before` into `after` (after.edit says how; None: nothing was written):
    keep what is needed to derive after's index from before's when it is next searched."""
    global _current
    current = _current
    if after is None or after.edit is None or current is None or current.snapshot is not before:
        return
    base: SearchIndex | None
    if current.index is not None:
        base, removed, added = current.index, [], {}
    else:
        base, removed, added = current.base, list(current.removed), dict.fromkeys(current.added)
    for entry in after.edit.removed:
        if entry in added:
            del added[entry]  # added since the base, gone again
        else:
            removed.append(entry)
    added.update(dict.fromkeys(after.edit.added))
    if len(removed) + len(added) > _MAX_PENDING:
        _current = None
        return
    _current = _Current(after, None, base, tuple(removed), tuple(added))
