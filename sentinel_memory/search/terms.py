"""The terms search counts: words (lowercased, English plurals as their singular), the parts of
identifiers and paths (snake_case, camelCase, a/b/c.py), and pairs of Korean or other CJK
characters. The same function makes the terms of a record and of a query (docs/contract.md §4.2)."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u4e00-\u9fff\uac00-\ud7af]{2,}")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SIBILANT = ("ches", "shes", "sses", "xes", "zes")


def stem(word: str) -> str:
    """An English plural as its singular (sessions -> session, queries -> query, matches ->
    match); any other word as it is. Applied alike to the records and the query."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha() or word[-1] != "s":
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(_SIBILANT):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def terms(text: str) -> set[str]:
    """The words of text, lower-cased, NFC-normalised and singular (stem); an identifier also
    yields its parts (SESSION_COOKIE_SAMESITE: session, cookie, samesite; maxRetries: max, retry;
    a path: its segments); Hangul and other CJK runs also yield character bigrams."""
    text = unicodedata.normalize("NFC", text)
    found = set()
    for word in _WORD.findall(text):
        low = word.casefold()
        found.add(stem(low))
        if (
            "_" in word
            or (not word.islower() and not word.isupper() and word.isascii())
            or (word.isalnum() and not word.isalpha() and not word.isdigit())
        ):
            for piece in word.split("_"):
                parts = _CAMEL.findall(piece) if piece.isascii() else [piece]
                found.update(stem(part.casefold()) for part in parts)
    for run in _CJK.findall(text):
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    found.discard("_")
    found.discard("")
    return found


def record_terms(record: dict) -> tuple[set[str], set[str]]:
    """(terms of the topic, terms of the text fields and of the paths of the files it cites)."""
    topic = terms(str(record.get("topic", "")))
    cited = record.get("files")
    paths = " ".join(f for f in cited if isinstance(f, str)) if isinstance(cited, list) else ""
    body = terms(" ".join([*(str(record.get(k, "")) for k in ("missing_context", "lesson", "ask_next_time")), paths]))
    return topic, body
