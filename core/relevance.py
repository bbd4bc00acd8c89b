"""Lexical relevance of a record to a query, stdlib only, for English and Korean alike.

Words are lower-cased runs of letters and digits; Hangul and other CJK runs also yield
character bigrams, because Korean attaches particles to words ("결제모듈을" should still match
"결제 모듈"). This only orders records: nothing is ever dropped because of a low score.
"""

from __future__ import annotations

import re
import unicodedata

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


def score(query_terms: set[str], record_terms: tuple[set[str], set[str]]) -> float:
    """How many query terms the record contains; a match in the topic counts three times."""
    if not query_terms:
        return 0.0
    topic, body = record_terms
    return sum(3.0 if term in topic else 1.0 for term in query_terms if term in topic or term in body)
