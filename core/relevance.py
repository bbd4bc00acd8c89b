"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata
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
    unchanged: a query then touches only the entries that contain its terms.

    Order: score (query terms contained; topic matches weigh three), then the static order:
    principles, then the newest, then id. Every entry is in it; positions are into `entries`,
    which is in static order, so its first `principles` positions are the principles."""

    def __init__(self, entries) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.entries = sorted(
                entries, key=lambda e: (e.record.get("type") == "principle", recency(e.record), e.id), reverse=True
            )
            self.records = [e.record for e in self.entries]
            self.principles = sum(1 for r in self.records if r.get("type") == "principle")
            # term -> positions (plain ints: cheap to store, nothing for the GC to track)
            self.topic_postings: dict[str, list[int]] = {}
            self.body_postings: dict[str, list[int]] = {}
            self.by_topic: dict[object, list[int]] = {}  # exact topic -> its positions, ascending
            for position, entry in enumerate(self.entries):
                topic, body = entry.terms
                for term in topic:
                    self.topic_postings.setdefault(term, []).append(position)
                for term in body - topic:
                    self.body_postings.setdefault(term, []).append(position)
                self.by_topic.setdefault(entry.record.get("topic"), []).append(position)

    def rank(self, query_terms: set[str]) -> list[dict]:
        """Every record, the best match for query_terms first."""
        return [self.records[p] for p in self.ranked(query_terms).best_first()]

    def ranked(self, query_terms: set[str], topic: object = None) -> Ranked:
        """The positions of `topic`'s entries (all when None) ranked for query_terms."""
        scores = self._scores(query_terms)
        size = len(self.entries)
        # One int per matching entry, a higher score first, then the static order (position < size);
        # made and sorted in C (map), as there may be thousands.
        keys = list(map(sub, scores.keys(), map(mul, scores.values(), repeat(size))))
        keys.sort()
        scored = list(map(size.__rmod__, keys))
        scope = range(size) if topic is None else self.by_topic.get(topic, [])
        if topic is not None:
            inside = set(scope)
            scored = [p for p in scored if p in inside]
        return Ranked(scored, scores, scope, self.principles)

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


class Ranked:
    """Positions in one ranking's order: those that match the query (best first), then the rest
    of the scope in static order. Lazy past the matching ones, so taking the first few costs
    little however many entries there are."""

    def __init__(self, scored: list[int], scores: Counter, scope, principles: int) -> None:
        self.scored, self.scores, self.scope, self.principles = scored, scores, scope, principles

    def best_first(self) -> Iterator[int]:
        return chain(self.scored, (p for p in self.scope if p not in self.scores))

    def principles_first(self) -> Iterator[int]:
        """The same order, principles before the rest (they hold the static order's first positions)."""
        first, scores, scope = self.principles, self.scores, self.scope
        return chain((p for p in self.scored if p < first),
                     (p for p in takewhile(lambda p: p < first, scope) if p not in scores),
                     (p for p in self.scored if p >= first),
                     (p for p in dropwhile(lambda p: p < first, scope) if p not in scores))
