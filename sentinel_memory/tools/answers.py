"""The three tools' answers: each runs one operation (tools/memory.py) and puts its result into
words (tools/render.py). server.py's tools and the tests call these (docs/contract.md §4) with the
memory file: an OpenMemory, or its path (read afresh). Each answer is sendable: a lone surrogate
that a record holds is shown as its escape (blocks.sendable)."""

from __future__ import annotations

from . import compaction_answer, memory, render
from .blocks import sendable
from .memory import Where


def search(where: Where, query: str = "", topic: str | None = None, files: object = None) -> str:
    """search_memory: the records (or one exact topic's) near `files` and most relevant to query
    first; the whole memory while it is small, else the principles and the matches."""
    return sendable(render.search_answer(memory.search(where, query, topic, files)))


def log(
    where: Where,
    topic: object,
    missing_context: object,
    lesson: object,
    ask_next_time: object = "",
    type: object = "log",
    compact_threshold: object = memory.DEFAULT_THRESHOLD,
    source_ids: object = None,
    files: object = None,
) -> str:
    """log_memory: upsert one record by id; a principle's source_ids are deleted in the same write;
    `files` are the paths it cites (relative to the project root)."""
    return sendable(
        render.log_answer(
            memory.upsert(
                where, topic, missing_context, lesson, ask_next_time, type, compact_threshold, source_ids, files
            )
        )
    )


def compact(where: Where, target_topic: str | None = None, compact_threshold: object = memory.DEFAULT_THRESHOLD) -> str:
    """compact_memory: the records grouped by topic, similar topics, and the calls that finish it."""
    return sendable(compaction_answer.compact_answer(memory.compact(where, target_topic, compact_threshold)))
