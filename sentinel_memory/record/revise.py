"""What an upsert stores (tools/memory.py runs it under the lock): the source ids a principle
names, each `<id>@<revision>` as compact_memory shows it or a bare id, and the record built from
the draft over the stored one: its dates, a principle's source_count, its cited files. Plain
functions of the values given: no file is read here."""

from __future__ import annotations

from collections.abc import Container

from ..errors import InvalidInput
from .records import NOTHING_SAVED, REVISION_LENGTH, Draft, Entry, is_principle, meta_of, stands_for, utc_now


def source_ids(value: object, type_: str) -> list[tuple[str, str | None]]:
    """(id, revision or None for a bare id) of each source, in order, without repeats."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInput(
            f"source_ids must be a list of record ids as compact_memory shows them, such as "
            f'["1a2b3c4d5e6f7a8b@9c8d7e6f"]. {NOTHING_SAVED}'
        )
    if value and type_ != "principle":
        raise InvalidInput(
            'source_ids is only valid with type="principle" (the ids a principle summarises are deleted '
            f'when it is saved). Drop source_ids or set type="principle". {NOTHING_SAVED}'
        )
    ids = []
    for item in value:
        if not isinstance(item, str):
            raise InvalidInput(
                f"source_ids must hold record ids as strings, not {type(item).__name__}. {NOTHING_SAVED}"
            )
        if item.strip():
            ids.append(versioned_id(item.strip()))
    first: dict[str, str | None] = {}
    for rid, rev in ids:
        first.setdefault(rid, rev)
    return list(first.items())


def versioned_id(item: str) -> tuple[str, str | None]:
    """`<id>@<revision>` as (id, revision); any other string is a bare id (None)."""
    rid, at, rev = item.rpartition("@")
    if at and rid and len(rev) == REVISION_LENGTH and all(c in "0123456789abcdef" for c in rev.lower()):
        return rid, rev.lower()
    return item, None


def revised(
    draft: Draft, old: dict | None, deleted: list[Entry], files: list[str] | None = None, refresh: bool = False
) -> dict | None:
    """The record to store, or None when the stored one already says exactly this (and is not
    stale: `refresh` saves it again so that its new date clears the mark)."""
    body = {"id": draft.id, **draft.fields()}
    folded = sum(stands_for(e.record) for e in deleted)
    files = files or []
    same_files = old is not None and ((old.get("files") == files) if files else "files" not in old)
    if old is not None and not folded and not refresh and same_files and all(old.get(k) == v for k, v in body.items()):
        return None
    now = utc_now()
    meta = dict(meta_of(old)) if old else {}
    meta.setdefault("created", now)
    if old is not None:
        meta["updated"] = now
    if draft.type == "principle":
        prior = meta.get("source_count") if old and is_principle(old) else 0
        meta["compacted_at"] = now
        meta["source_count"] = (prior if isinstance(prior, int) else 0) + folded
    else:
        meta.pop("compacted_at", None)
        meta.pop("source_count", None)
    record = {**(old or {}), **body, "meta": meta}
    if files:
        record["files"] = files
    else:
        record.pop("files", None)
    return record


def one_line_topic(topic: str, topics: Container[str]) -> None:
    """Refuse a topic that holds a line break or another control character (contract §3.5), unless
    `topics` (the memory's) has it already (a hand edit or an earlier version wrote it): then the
    record is refreshed and its topic folded into a principle as compact_memory shows it."""
    hidden = next((c for c in topic if ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029"), None)
    if hidden is not None and topic not in topics:
        raise InvalidInput(
            f"topic holds a line break or another control character (U+{ord(hidden):04X}); a topic is a short "
            f"tag on one line, such as auth or payment. {NOTHING_SAVED}"
        )


def other_type(draft: Draft, stored: dict) -> str:
    """Why a record cannot replace one of the other type that has its id (a log's id comes from
    its topic and missing_context, a principle's from its topic and lesson: §3.4)."""
    if draft.type == "principle":
        same = f"this lesson is word for word the missing_context of the log {stored['id']} in topic {draft.topic!r}"
        fix = "word the principle's lesson otherwise (state the rule in full)"
    else:
        same = (
            f"this missing_context is word for word the lesson of the principle {stored['id']} in topic {draft.topic!r}"
        )
        fix = "word the missing_context otherwise (what the instructions lacked)"
    return (
        f"{same}, so the two would share an id and this {draft.type} would replace that "
        f"{stored.get('type', 'log')}: {fix}. {NOTHING_SAVED}"
    )
