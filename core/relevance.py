"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from itertools import chain, dropwhile, repeat, takewhile
from operator import mul, sub
from typing import Iterator

from .gcpause import paused
from .records import recency

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


# Every entry of a ranking has a rank: an int in static order (principles, newest, id), with
# room between neighbours, so that a derived ranking gives a new entry one without renumbering
# the others. Ranks stay below 2**30, where ints are one machine word (cheap to hash and compare):
# a fresh ranking starts them at the middle, up to 65,536 apart, leaving the lower half for newer
# entries (the newest come first).
_LIMIT = 1 << 30  # every rank is below it: a query's sort key is rank - score * _LIMIT


class Ranking:
    """An inverted index over one snapshot's entries, built once and reused while the file is
    unchanged: a query then touches only the entries that contain its terms. After a write, the
    next snapshot's index is derived from this one (derive) at the cost of the changed entries.

    Order: score (query terms contained; topic matches weigh three), then the static order:
    principles, then the newest, then id. `entries` are in static order and `ranks` (ascending)
    go with them; postings and topics list ranks."""

    def __init__(self, entries) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.entries = sorted(entries, key=_static_key, reverse=True)
            self.space = min((_LIMIT // 2) // (len(self.entries) + 1), 1 << 16)
            self.ranks = list(range(_LIMIT // 2, _LIMIT // 2 + len(self.entries) * self.space, self.space))
            self._by_rank: dict[int, object] | None = None
            self.principles = sum(1 for e in self.entries if e.record.get("type") == "principle")
            self.topic_postings: dict[str, list[int]] = {}  # term -> the ranks of the entries that hold it
            self.body_postings: dict[str, list[int]] = {}
            self.by_topic: dict[object, list[int]] = {}  # exact topic -> its entries' ranks
            for rank, entry in zip(self.ranks, self.entries):
                self._index(entry, rank, _add)

    def _index(self, entry, rank: int, change) -> None:
        topic, body = entry.terms
        for term in topic:
            change(self.topic_postings, term, rank)
        for term in body - topic:
            change(self.body_postings, term, rank)
        change(self.by_topic, entry.record.get("topic"), rank)

    def derive(self, removed, added) -> Ranking | None:
        """The ranking of these entries less `removed`, plus `added`, made from this one (left as it
        is: another thread may be reading it) by changing only what those entries touch. None if
        the difference does not fit this ranking (the caller then builds one afresh)."""
        new = Ranking.__new__(Ranking)
        new.entries, new.ranks = list(self.entries), list(self.ranks)
        new.topic_postings, new.body_postings = dict(self.topic_postings), dict(self.body_postings)
        new.by_topic = dict(self.by_topic)
        new.principles, new.space, new._by_rank = self.principles, self.space, None
        with paused():
            for entry in removed:
                try:
                    at = new.entries.index(entry)  # identity: entries define no equality
                except ValueError:
                    return None
                new._index(entry, new.ranks[at], _remove)
                del new.entries[at], new.ranks[at]
                new.principles -= entry.record.get("type") == "principle"
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
                new.principles += entry.record.get("type") == "principle"
        return new

    @property
    def by_rank(self) -> dict:
        """rank -> entry, made once per ranking (in C) when a query first needs it."""
        if self._by_rank is None:
            self._by_rank = dict(zip(self.ranks, self.entries))
        return self._by_rank

    def ranked(self, query_terms: set[str], topic: object = None) -> Ranked:
        """The ranks of `topic`'s entries (all when None) ranked for query_terms."""
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
        return Ranked(scored, scope, first_log)

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


def _static_key(entry) -> tuple:
    return entry.record.get("type") == "principle", recency(entry.record), entry.id


def _static_position(entries: list, entry) -> int:
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
    if before is None:
        return after - space if after - space >= 0 else None
    if after is None:
        return before + space if before + space < _LIMIT else None
    return (before + after) // 2 if after - before > 1 else None


def _add(index: dict, key, rank: int) -> None:
    index.setdefault(key, []).append(rank)


def _with_new_list(index: dict, key, rank: int) -> None:
    index[key] = index.get(key, []) + [rank]  # a new list: the old one may be another ranking's


def _remove(index: dict, key, rank: int) -> None:
    left = [r for r in index[key] if r != rank]
    if left:
        index[key] = left
    else:
        del index[key]


class Ranked:
    """Ranks in one ranking's order: those that match the query (best first), then the rest of
    the scope in static order. Lazy past the matching ones, so taking the first few costs little
    however many entries there are. Ranks below `first_log` are principles'."""

    def __init__(self, scored: list[int], scope: list[int], first_log: int) -> None:
        self.scored, self.scope, self.first_log = scored, scope, first_log
        self.matched = set(scored)

    def principles_in_scope(self) -> int:
        return bisect_left(self.scope, self.first_log)

    def best_first(self) -> Iterator[int]:
        return chain(self.scored, (r for r in self.scope if r not in self.matched))

    def principles_first(self) -> Iterator[int]:
        """The same order, principles before the rest."""
        first_log, matched, scope = self.first_log, self.matched, self.scope
        return chain((r for r in self.scored if r < first_log),
                     (r for r in takewhile(lambda r: r < first_log, scope) if r not in matched),
                     (r for r in self.scored if r >= first_log),
                     (r for r in dropwhile(lambda r: r < first_log, scope) if r not in matched))
