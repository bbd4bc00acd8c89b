"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata

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


TOPIC_WEIGHT = 3.0  # a query term in the topic counts three times one in the text


class Ranking:
    """An inverted index over one snapshot's entries, built once and reused while the file is
    unchanged: a query then touches only the entries that contain its terms.

    Order: score (query terms contained; topic matches weigh three), then principles, then the
    newest, then id; every entry is returned."""

    def __init__(self, entries) -> None:
        with paused():  # see gcpause: the collector tripled this at 10,000 records
            self.static = sorted(
                entries, key=lambda e: (e.record.get("type") == "principle", recency(e.record), e.id), reverse=True
            )
            self.records = [e.record for e in self.static]
            # term -> positions in self.static (plain ints: cheap to store, nothing for the GC to track)
            self.topic_postings: dict[str, list[int]] = {}
            self.body_postings: dict[str, list[int]] = {}
            for position, entry in enumerate(self.static):
                topic, body = entry.terms
                for term in topic:
                    self.topic_postings.setdefault(term, []).append(position)
                for term in body - topic:
                    self.body_postings.setdefault(term, []).append(position)

    def rank(self, query_terms: set[str]) -> list[dict]:
        """Every record, the best match for query_terms first."""
        scores: dict[int, float] = {}
        for term in query_terms:
            for postings, weight in ((self.topic_postings, TOPIC_WEIGHT), (self.body_postings, 1.0)):
                for position in postings.get(term, ()):
                    scores[position] = scores.get(position, 0.0) + weight
        records = self.records
        if not scores:
            return list(records)
        # One number per entry: a higher score first, then the static order (position < size).
        size = len(records)
        scored = sorted(scores, key=lambda p: p - scores[p] * size)
        return [records[p] for p in scored] + [r for p, r in enumerate(records) if p not in scores]
