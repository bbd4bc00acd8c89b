"""Grouping by topic and suggestions of similar topics, for compact_memory (read-only)."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

_SPLIT = re.compile(r"[\s\-_./:]+")


def group_by_topic(records: list[dict]) -> dict[str, list[dict]]:
    """Records by exact topic, topics sorted, principles first inside a topic, then by id."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        groups.setdefault(str(record.get("topic", "")), []).append(record)
    return {
        topic: sorted(groups[topic], key=lambda r: (r.get("type") != "principle", r["id"])) for topic in sorted(groups)
    }


def _tokens(topic: str) -> tuple[str, ...]:
    return tuple(t for t in _SPLIT.split(topic.casefold()) if t)


def similar(a: str, b: str) -> bool:
    """Topics that probably name one subject: same words, one a word-prefix of the other
    (auth ~ auth-login), half their words shared, or near-identical spelling (payment ~ payments)."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return False
    if ta == tb:
        return True
    short, long_ = sorted((ta, tb), key=len)
    if long_[: len(short)] == short:
        return True
    shared = set(ta) & set(tb)
    if len(shared) * 2 >= len(set(ta) | set(tb)):
        return True
    joined_a, joined_b = "".join(ta), "".join(tb)
    if min(len(joined_a), len(joined_b)) < 4:
        return False
    matcher = SequenceMatcher(None, joined_a, joined_b)
    return matcher.real_quick_ratio() >= 0.85 and matcher.quick_ratio() >= 0.85 and matcher.ratio() >= 0.85


def similar_groups(topics: list[str]) -> list[list[str]]:
    """Clusters (two or more topics) of pairwise-linked similar topics, each sorted."""
    parent = {t: t for t in topics}

    def root(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for i, a in enumerate(topics):
        for b in topics[i + 1 :]:
            if similar(a, b):
                parent[root(a)] = root(b)
    clusters: dict[str, list[str]] = {}
    for t in topics:
        clusters.setdefault(root(t), []).append(t)
    return sorted(sorted(c) for c in clusters.values() if len(c) > 1)
