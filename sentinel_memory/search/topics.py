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


GROUP_TOPICS = 10  # topics in one suggested group at most: a seed and those similar to it


def similar_groups(topics: list[str]) -> list[list[str]]:
    """Groups of two to GROUP_TOPICS topics, each sorted, in which every topic is similar to the
    group's seed: the topics, in sorted order, each seed a group of the ungrouped topics similar to
    it. Not their transitive closure, which chains `a ~ b ~ c` into one group of hundreds that
    share nothing from end to end (file names as topics: `x-virtualenv-py3`, `y-virtualenv-py3`).

    A pair is compared only when the two share a word or their joined words begin or end with the
    same two characters (every pair `similar` accepts by its words shares a word; its spellings
    of one name, `payment` ~ `payments`, `lock_file` ~ `lockfile`, share an end), so 4,000 topics
    cost no 8 million comparisons."""
    order = sorted(set(topics))
    words = {t: _words(t) for t in order}
    near: dict[tuple[str, str], list[str]] = {}
    for t in order:
        tokens, _, joined = words[t]
        for key in _keys(tokens, joined):
            near.setdefault(key, []).append(t)
    grouped: set[str] = set()
    groups: list[list[str]] = []
    for seed in order:
        if seed in grouped:
            continue
        tokens, _, joined = words[seed]
        candidates = sorted({t for key in _keys(tokens, joined) for t in near[key]} - grouped - {seed})
        members = [seed]
        for t in candidates:
            if _similar(words[seed], words[t]):
                members.append(t)
                if len(members) == GROUP_TOPICS:
                    break
        if len(members) > 1:
            grouped.update(members)
            groups.append(sorted(members))
    return sorted(groups)


def _keys(tokens: tuple[str, ...], joined: str) -> set[tuple[str, str]]:
    """What a topic is filed under for the pairs worth comparing: its words, and the two
    characters its joined words begin and end with."""
    keys = {("word", t) for t in tokens}
    if joined:
        keys |= {("begins", joined[:2]), ("ends", joined[-2:])}
    return keys
