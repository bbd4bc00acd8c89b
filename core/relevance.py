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


class Ranking:
    """An inverted index over one snapshot's entries, built once and reused while the file is
    unchanged: a query then touches only the entries that contain its terms. After a write, the
    next snapshot's index is derived from this one (derive) at the cost of the changed entries.

    Order: score (query terms contained; topic matches weigh three), then the static order:
    principles, then the newest, then id. Every entry is in it; positions are into `entries`,
    which is in static order, so its first `principles` positions are the principles."""

    def __init__(self, entries) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.entries = sorted(entries, key=_static_key, reverse=True)
            self.positions = dict(zip(self.entries, range(len(self.entries))))
            self.principles = sum(1 for e in self.entries if e.record.get("type") == "principle")
            # term -> the entries that hold it, in no particular order (scoring only counts them)
            self.topic_postings: dict[str, list] = {}
            self.body_postings: dict[str, list] = {}
            self.by_topic: dict[object, list] = {}  # exact topic -> its entries
            for entry in self.entries:
                topic, body = entry.terms
                for term in topic:
                    self.topic_postings.setdefault(term, []).append(entry)
                for term in body - topic:
                    self.body_postings.setdefault(term, []).append(entry)
                self.by_topic.setdefault(entry.record.get("topic"), []).append(entry)

    def derive(self, removed, added) -> Ranking | None:
        """The ranking of these entries less `removed`, plus `added`, made from this one (left as it
        is: another thread may be reading it) by changing only what those entries touch. None if
        the difference does not fit this ranking (the caller then builds one afresh)."""
        positions = self.positions
        if any(e not in positions for e in removed) or any(e in positions for e in added):
            return None
        new = Ranking.__new__(Ranking)
        with paused():
            entries = list(self.entries)
            for position in sorted((positions[e] for e in removed), reverse=True):
                del entries[position]
            for entry in added:
                entries.insert(_static_position(entries, entry), entry)
            new.entries = entries
            new.positions = dict(zip(entries, range(len(entries))))
            new.principles = (self.principles - sum(e.record.get("type") == "principle" for e in removed)
                              + sum(e.record.get("type") == "principle" for e in added))
            new.topic_postings, new.body_postings = dict(self.topic_postings), dict(self.body_postings)
            new.by_topic = dict(self.by_topic)
            for entry, change in [(e, _without) for e in removed] + [(e, _with) for e in added]:
                topic, body = entry.terms
                for term in topic:
                    change(new.topic_postings, term, entry)
                for term in body - topic:
                    change(new.body_postings, term, entry)
                change(new.by_topic, entry.record.get("topic"), entry)
        return new

    def rank(self, query_terms: set[str]) -> list[dict]:
        """Every record, the best match for query_terms first."""
        return [self.entries[p].record for p in self.ranked(query_terms).best_first()]

    def ranked(self, query_terms: set[str], topic: object = None) -> Ranked:
        """The positions of `topic`'s entries (all when None) ranked for query_terms."""
        scores = self._scores(query_terms)
        size = len(self.entries)
        # One int per matching entry, a higher score first, then the static order (position < size);
        # made and sorted in C (map), as there may be thousands.
        keys = list(map(sub, map(self.positions.__getitem__, scores.keys()), map(mul, scores.values(), repeat(size))))
        keys.sort()
        scored = list(map(size.__rmod__, keys))
        if topic is None:
            scope = range(size)
        else:
            scope = sorted(map(self.positions.__getitem__, self.by_topic.get(topic, ())))
            inside = set(scope)
            scored = [p for p in scored if p in inside]
        return Ranked(scored, scope, self.principles)

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


def _with(index: dict, key, entry) -> None:
    index[key] = index.get(key, []) + [entry]  # a new list: the old one may be another ranking's


def _without(index: dict, key, entry) -> None:
    left = [e for e in index[key] if e is not entry]
    if left:
        index[key] = left
    else:
        del index[key]


class Ranked:
    """Positions in one ranking's order: those that match the query (best first), then the rest
    of the scope in static order. Lazy past the matching ones, so taking the first few costs
    little however many entries there are."""

    def __init__(self, scored: list[int], scope, principles: int) -> None:
        self.scored, self.scope, self.principles = scored, scope, principles
        self.matched = set(scored)

    def principles_in_scope(self) -> int:
        return bisect_left(self.scope, self.principles)

    def best_first(self) -> Iterator[int]:
        return chain(self.scored, (p for p in self.scope if p not in self.matched))

    def principles_first(self) -> Iterator[int]:
        """The same order, principles before the rest (they hold the static order's first positions)."""
        first, matched, scope = self.principles, self.matched, self.scope
        return chain((p for p in self.scored if p < first),
                     (p for p in takewhile(lambda p: p < first, scope) if p not in matched),
                     (p for p in self.scored if p >= first),
                     (p for p in dropwhile(lambda p: p < first, scope) if p not in matched))
