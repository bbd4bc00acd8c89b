"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata

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
        self.static = sorted(
            entries, key=lambda e: (e.record.get("type") == "principle", recency(e.record), e.id), reverse=True
        )
        self.position = {e: i for i, e in enumerate(self.static)}
        self.postings: dict[str, list] = {}
        for entry in self.static:
            topic, body = entry.terms
            for term in topic:
                self.postings.setdefault(term, []).append((entry, TOPIC_WEIGHT))
            for term in body - topic:
                self.postings.setdefault(term, []).append((entry, 1.0))

    def rank(self, query_terms: set[str]) -> list:
        scores: dict = {}
        for term in query_terms:
            for entry, weight in self.postings.get(term, ()):
                scores[entry] = scores.get(entry, 0.0) + weight
        if not scores:
            return list(self.static)
        # One number per entry: a higher score first, then the static order (position < len).
        size, position = len(self.static), self.position
        scored = sorted(scores, key=lambda e: position[e] - scores[e] * size)
        return scored + [e for e in self.static if e not in scores]
