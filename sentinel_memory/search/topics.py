"""Grouping by topic and suggestions of similar topics, for compact_memory (read-only)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ..record.records import topic_of

_SPLIT = re.compile(r"[\s\-_./:]+")


def group_by_topic(records: list[dict]) -> dict[str, list[dict]]:
    """Records by exact topic, topics sorted, principles first inside a topic, then by id."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(topic_of(record), []).append(record)
    return {
        topic: sorted(groups[topic], key=lambda r: (r.get("type") != "principle", r["id"])) for topic in sorted(groups)
    }


def _tokens(topic: str) -> tuple[str, ...]:
    return tuple(t for t in _SPLIT.split(topic.casefold()) if t)


def similar(a: str, b: str) -> bool:
    """Topics that probably name one subject: same words, one a word-prefix of the other
    (auth ~ auth-login), half their words shared, or near-identical spelling (payment ~ payments)."""
    return _similar(_words(a), _words(b))


# What `similar` compares of a topic: its words in order, as a set, and joined.
_Words = tuple[tuple[str, ...], frozenset[str], str]


def _words(topic: str) -> _Words:
    tokens = _tokens(topic)
    return tokens, frozenset(tokens), "".join(tokens)


def _similar(a: _Words, b: _Words) -> bool:
    (ta, set_a, joined_a), (tb, set_b, joined_b) = a, b
    if not ta or not tb:
        return False
    if ta == tb:
        return True
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if long_[: len(short)] == short:
        return True
    if len(set_a & set_b) * 2 >= len(set_a | set_b):
        return True
    low, total = min(len(joined_a), len(joined_b)), len(joined_a) + len(joined_b)
    # real_quick_ratio, from the lengths alone, before the matcher is made (most pairs stop here)
    if low < 4 or 2.0 * low / total < 0.85:
        return False
    matcher = SequenceMatcher(None, joined_a, joined_b)
    return matcher.quick_ratio() >= 0.85 and matcher.ratio() >= 0.85


def similar_groups(topics: list[str]) -> list[list[str]]:
    """Clusters (two or more topics) of pairwise-linked similar topics, each sorted."""
    parent = {t: t for t in topics}

    def root(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    words = [_words(t) for t in topics]  # once per topic, not once per pair
    for i, a in enumerate(topics):
        for j in range(i + 1, len(topics)):
            if _similar(words[i], words[j]):
                parent[root(a)] = root(topics[j])
    clusters: dict[str, list[str]] = {}
    for t in topics:
        clusters.setdefault(root(t), []).append(t)
    return sorted(sorted(c) for c in clusters.values() if len(c) > 1)
