"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from itertools import chain, dropwhile, takewhile
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
        return [self.records[p] for p in self.order(query_terms)]

    def order(self, query_terms: set[str], topic: object = None, principles_first: bool = False) -> Iterator[int]:
        """Positions, the best match first; only `topic`'s when given; principles before the rest
        (each part in the same order) with principles_first. Lazy past the matching entries, so
        taking the first few costs little however many entries there are."""
        scores = self._scores(query_terms)
        size = len(self.entries)
        # One int per matching entry: a higher score first, then the static order (position < size).
        keys = [p - score * size for p, score in scores.items()]
        keys.sort()
        scored = [key % size for key in keys]
        scope = range(size) if topic is None else self.by_topic.get(topic, [])
        if topic is not None:
            inside = set(scope)
            scored = [p for p in scored if p in inside]
        if not principles_first:
            return chain(scored, (p for p in scope if p not in scores))
        first = self.principles
        return chain((p for p in scored if p < first),
                     (p for p in takewhile(lambda p: p < first, scope) if p not in scores),
                     (p for p in scored if p >= first),
                     (p for p in dropwhile(lambda p: p < first, scope) if p not in scores))

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
