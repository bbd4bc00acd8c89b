"""The operations behind the three tools: search (with the hooks' `strong_matches` and the commands'
`ranked_matches`), upsert (log), compact (read-only), with the stale marks they show. cli/maintenance.py holds the operations only the
commands for people use; what search's answer lists within its budget is tools/listing.py's.

Each takes the memory file (an OpenMemory, whose caches it uses and updates, or the file's path,
read afresh) and plain arguments and returns a typed result (tools/outcomes.py); the words are
tools/render.py's (the tools) and cli/console.py's (the commands). What an upsert stores is
record/revise.py's. Expected failures raise MemoryToolError subclasses whose message is the whole
story (docs/contract.md §4).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import ChangedMeanwhile, InvalidInput
from ..git import drivers, staleness
from ..git.staleness import Stale
from ..record import citations, revise, store
from ..record.records import NOTHING_SAVED, Entry, is_principle, normalize, prepare, recency, revision, topic_of
from ..record.snapshot import Snapshot
from ..search import index, strength
from ..search.kept import KeptIndex
from ..search.match import Match, Query
from ..search.topics import group_by_topic, similar_groups
from . import blocks, citing, listing, render
from .outcomes import Compaction, Found, Logged

DEFAULT_THRESHOLD = render.DEFAULT_THRESHOLD
# The most tokens (estimated, within ~10% of cl100k) any answer of search_memory or compact_memory
# takes (a search answer's bytes are bounded too: tools/listing.py's MAX_BYTES): under what every
# client shows whole at its default settings (docs/clients.md): Codex keeps about 10,000 tokens of
# a tool result (counted as bytes / 4), Gemini CLI 40,000 characters, Claude Code 50,000 characters.
DEFAULT_BUDGET = 9_000
CANDIDATES = strength.CANDIDATES  # the best-ranked matching records strong_matches measures
BUDGET_ENV = render.BUDGET_ENV


def search_budget() -> int:
    """The most tokens (estimated) search_memory and compact_memory return; 0 means no limit."""
    raw = os.environ.get(BUDGET_ENV, "").strip()
    # An integer in ASCII digits, as a person sets a variable; not 1_000, ٣٠٠٠ or +5, which int() takes.
    return max(0, int(raw)) if re.fullmatch(r"-?[0-9]{1,12}", raw) else DEFAULT_BUDGET


def _threshold(value: object, outcome: str = NOTHING_SAVED) -> int:
    """compact_threshold, checked; `outcome` ends the refusal: what the refused call did not do."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        # A number of thousands of digits has no repr (Python refuses to make it); a long text is cut.
        shown = "a number of that size" if isinstance(value, int) and value.bit_length() > 128 else repr(value)
        raise InvalidInput(
            f"compact_threshold must be a whole number of at least 1, not {blocks.echoed(shown)}. {outcome}"
        )
    return value


def _topic(value: object) -> str | None:
    return normalize(value) if isinstance(value, str) and value.strip() else None


# ------------------------------------------------------------------------------- the open memory


class OpenMemory:
    """One process's use of one memory file: what it keeps between calls, so that a call on an
    unchanged file costs no parse and no index. The file's last snapshot (record/store.py's
    MemoryFile, which reads git's index stages of a conflicted file through git/drivers.py), the
    index of the snapshot last searched (search/kept.py's KeptIndex), the oldest recency of the
    records that cite files (the stale marks' history starts there), and the project's repository,
    history and stale marks (git/staleness.py's KeptMarks: git log once per HEAD). The adapters make one and
    pass it to every operation on that file: the server one per memory file for its life, a command
    one for its run. No file is held open; what it keeps is replaced whole, never changed, so the
    server's worker threads may share one."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.file = store.MemoryFile(self.path, drivers.index_stages)
        self.index = KeptIndex()
        self.marks = staleness.KeptMarks(self.path.parent.parent)
        self._oldest: tuple[Snapshot, str | None] | None = None

    def read(self) -> Snapshot:
        """The file's snapshot (record/store.py's MemoryFile.read): never change it."""
        return self.file.read()

    def oldest_citing(self, snap: Snapshot) -> str | None:
        """The oldest recency of the snapshot's records that cite files (None: none does); found
        once per snapshot."""
        kept = self._oldest
        if kept is not None and kept[0] is snap:
            return kept[1]
        value = staleness.oldest_citing(e.record for e in snap.records.values())
        self._oldest = (snap, value)
        return value

    def follow(self, before: Snapshot, after: Snapshot | None) -> None:
        """A write turned `before` into `after`: hand the index what changed, and derive after's
        oldest citing recency from before's (instead of scanning every record; bench/benchmark.py,
        S) unless the write removed the record that held it."""
        self.index.follow(before, after)
        kept = self._oldest
        if after is None or after.edit is None or kept is None or kept[0] is not before:
            return
        value = kept[1]
        if value is not None and any(e.record.get("files") and recency(e.record) <= value for e in after.edit.removed):
            return  # the oldest may be gone: found afresh when next needed
        added = staleness.oldest_citing(e.record for e in after.edit.added)
        if added is not None:
            value = added if value is None else min(value, added)
        self._oldest = (after, value)


Where = OpenMemory | Path | str


def opened(where: Where) -> OpenMemory:
    """`where` when it is an OpenMemory; else the memory file at that path, opened for one call."""
    return where if isinstance(where, OpenMemory) else OpenMemory(where)


# ------------------------------------------------------------------------------- stale marks


def checker(where: Where, snap: Snapshot) -> staleness.Checker | None:
    """The stale marks of this memory file's records (None: none can be stale: no record cites a
    file, or the project is not in a git repository with commits)."""
    memory = opened(where)
    return memory.marks.checker(memory.oldest_citing(snap))


def shallow_history(where: Where) -> bool:
    """Whether the stale marks come from a shallow clone's history, which ends before some record
    was written (what changed before its boundary is unknown)."""
    memory = opened(where)
    check = checker(memory, memory.read())
    return check is not None and check.shallow


def stale_marks(where: Where) -> dict[str, Stale]:
    """The marks of every stale record of the memory file, by id."""
    memory = opened(where)
    snap = memory.read()
    check = checker(memory, snap)
    if check is None:
        return {}
    marks = {rid: check.mark_entry(e) for rid, e in snap.records.items()}
    return {rid: mark for rid, mark in marks.items() if mark}


def search(where: Where, query: str = "", topic: str | None = None, files: object = None) -> Found:
    """The records in scope (every record, or those whose topic equals `topic` exactly), the ones
    near `files` (paths the agent is about to read or change) and the most relevant to `query`
    first. The whole scope while its answer is small; past that, the principles and the records
    that match, and the rest counted by topic (what fits the budget: tools/listing.py)."""
    memory = opened(where)
    root = memory.path.parent.parent
    asked = citations.asked(root, files)  # refuse a bad path before anything is read
    snap = memory.read()
    wanted = _topic(topic)
    total = len(snap.records) if wanted is None else snap.topic_counts().get(wanted, 0)
    query_terms = index.terms(query or "")
    found = Found(
        memory.path, snap, (query or "").strip(), bool(query_terms), wanted, total, 0, 0, search_budget(), asked
    )
    if not total:
        return found
    search_index = memory.index.index_of(snap)
    asked = found.files = _with_named(root, query, asked)
    check = checker(memory, snap)
    former = check.former_names(asked) if check is not None and asked else ()
    near = strength.with_named_files(search_index, query or "", asked)
    ranked = search_index.ranked(search_index.query_terms(query or ""), wanted, near, former)
    if wanted is None:
        found.logs, found.principles = snap.counts()
    else:
        found.principles = ranked.principles_in_scope()
        found.logs = total - found.principles
    listing.fill(found, search_index, ranked, check, query or "", former)
    return found


def _with_named(root: Path, query: str | None, asked: list[str]) -> list[str]:
    """The files asked about, then the project's files the query names by a path (relative or
    absolute, as the prompt hook reads a prompt: contract §3.7): a file the task names is a file
    asked about. A relative path is read from the folder this process runs in first (the client's,
    when it starts the server in a subfolder of the project), then from the project's root."""
    named = citations.named(root, query or "", absolute=True, cwd=_here()) if query else []
    return [*asked, *(p for p in named if p not in asked)][: max(len(asked), citations.MAX_FILES)]


def _here() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed under it
        return None


def strong_matches(where: Where, query: str, files: Sequence[str] = (), limit: int = 3) -> list[Match]:
    """The records that match the query and the files (paths about to be read or written) strongly
    (search/match.py: STRONG), in the search's order, at most `limit`: what the hooks show
    (hooks/matches.py strong, over the index a hook reads or builds; tests/test_hooks.py checks that
    both choose the same records). Read-only and cheap: the kept index, the best-ranked CANDIDATES
    measured. A bad path is refused as search refuses it."""
    memory = opened(where)
    asked = citations.asked(memory.path.parent.parent, list(files))
    snap = memory.read()
    query_terms = index.terms(query or "")
    if not snap.records or not (query_terms or asked) or limit < 1:
        return []
    search_index = memory.index.index_of(snap)
    check = checker(memory, snap) if asked else None
    former = check.former_names(asked) if check is not None else ()
    return strength.strongest(search_index, query, asked, former, limit)


def ranked_matches(
    where: Where, query: str = "", topic: str | None = None, files: object = None
) -> tuple[list[Match], int]:
    """(every record in scope that matches the query or the files, best first, with how strongly
    and why; how many records are in scope): the command line's search --json and --file."""
    memory = opened(where)
    asked = citations.asked(memory.path.parent.parent, files)
    snap = memory.read()
    search_index = memory.index.index_of(snap)
    asked = _with_named(memory.path.parent.parent, query, asked)
    check = checker(memory, snap) if asked else None
    former = check.former_names(asked) if check is not None else ()
    near = strength.with_named_files(search_index, query or "", asked)
    ranked = search_index.ranked(search_index.query_terms(query or ""), _topic(topic), near, former)
    measured = Query.of(query or "", asked, former)
    if (query or "").strip() or asked:  # a query of stop words only matches nothing
        return [strength.measure(search_index, e, measured) for e in ranked.matching()], len(ranked.scope())
    return [Match(e.record, 0.0) for e in ranked.best_first()], len(ranked.scope())


# ------------------------------------------------------------------------------------------- log


def upsert(
    where: Where,
    topic: object,
    missing_context: object,
    lesson: object,
    ask_next_time: object = "",
    type: object = "log",
    compact_threshold: object = DEFAULT_THRESHOLD,
    source_ids: object = None,
    files: object = None,
    read_as: str | None = None,
) -> Logged:
    """Upsert one record by id; a principle's source_ids are deleted in the same locked write.

    `read_as`: the version of the record the caller read its values from ("" when it read none);
    if the file holds another version under the lock, nothing is written and ChangedMeanwhile is
    raised, so that a refresh filling the fields left out never writes back values another writer
    has replaced since.

    A source given as `<id>@<revision>` (what compact_memory shows) is deleted only while the file
    holds that version of it: one changed since (by this or another session, or by a `git pull`)
    is kept and reported in `changed`. A bare id deletes whatever version the file holds.

    `files`: the paths the record cites (relative to the project root); None keeps the ones the
    stored record cites, one that its stale mark says a commit renamed by its path at HEAD. Paths
    the lesson or missing_context names count too (record/citations.py).
    A record that is stale is saved again even when nothing else changed: its new date clears the
    mark."""
    threshold = _threshold(compact_threshold)
    draft = prepare(topic, missing_context, lesson, ask_next_time, type)
    given = dict(revise.source_ids(source_ids, draft.type))
    wanted = {rid: rev for rid, rev in given.items() if rid != draft.id}
    sources = list(wanted)
    memory = opened(where)
    root = memory.path.parent.parent
    citations.listed(root, files)  # refuse a bad path before anything else is read
    current = memory.read()
    revise.one_line_topic(draft.topic, current.topic_counts())
    check = checker(memory, current)  # outside the lock: it may run git once for a new HEAD
    marks: dict[str, Stale] = {}
    moves: dict[str, list[tuple[str, str]]] = {}

    def change(snap: Snapshot) -> Snapshot | None:
        old = snap.records.get(draft.id)
        if read_as is not None and read_as != (revision(old.record) if old else ""):
            raise ChangedMeanwhile(draft.id)
        folded_in_place: list[Entry] = []
        if old is not None and is_principle(old.record) != (draft.type == "principle"):
            # A log the principle names in source_ids (its version, if given, still the file's)
            # is folded into it in place; any other record of the other type is refused.
            if (
                draft.type != "principle"
                or draft.id not in given
                or given[draft.id] not in (None, revision(old.record))
            ):
                raise InvalidInput(revise.other_type(draft, old.record))
            folded_in_place, old = [old], None
        present = [snap.records[i] for i in sources if i in snap.records]
        deleted = [e for e in present if wanted[e.id] is None or revision(e.record) == wanted[e.id]]
        if folded_in_place:
            new = revise.revised(
                draft,
                None,
                [*deleted, *folded_in_place],
                citations.cited(root, files, [], draft.missing_context, draft.lesson),
            )
            assert new is not None  # a record new to the file is always written
            return snap.edited(put=[Entry.of(new)], drop=[e.id for e in deleted])
        kept = citations.of(old.record) if old else []
        stale = check.mark(old.record) if check is not None and old is not None else ()
        marks["was"], moves["followed"] = stale, []
        if files is None and stale:  # a refresh cites a file git renamed by its name at HEAD (§3.7)
            kept, moves["followed"] = citing.followed(root, kept, stale)
        cited = citations.cited(root, files, kept, draft.missing_context, draft.lesson)
        new = revise.revised(draft, old.record if old else None, deleted, cited, bool(stale))
        if new is None and not deleted and not snap.duplicates:
            return None
        return snap.edited(put=[Entry.of(new)] if new is not None else [], drop=[e.id for e in deleted])

    report = write(memory, change)
    before, after = report.before, report.after or report.before
    old, stored = before.records.get(draft.id), after.records[draft.id]
    in_place = old is not None and is_principle(old.record) != is_principle(stored.record)  # a log folded in place
    status = "saved" if old is None or in_place else "unchanged" if stored is old else "updated"
    deleted = [i for i in sources if i in before.records and i not in after.records] + ([draft.id] if in_place else [])
    missing = [i if wanted[i] is None else f"{i}@{wanted[i]}" for i in sources if i not in before.records]  # as given
    changed = [after.records[i].record for i in sources if i in after.records]
    logs, principles = after.counts()
    return Logged(
        memory.path,
        draft,
        status,
        stored.record,
        deleted,
        missing,
        logs,
        principles,
        threshold,
        report,
        citations.of(stored.record),
        marks.get("was", ()),
        changed,
        citing.cited_by(root, [stored.record, *changed]) if changed else [],
        [(was, now) for was, now in moves.get("followed", []) if now in citations.of(stored.record)],
    )


def write(where: Where, change) -> store.WriteReport:
    """The file's locked update (record/store.py), then hand the memory's caches what changed, so
    the next search derives its index."""
    memory = opened(where)
    report = memory.file.update(change)
    memory.follow(report.before, report.after)
    return report


# --------------------------------------------------------------------------------------- compact


def compact(where: Where, target_topic: str | None = None, compact_threshold: object = DEFAULT_THRESHOLD) -> Compaction:
    """Read-only: the records grouped by topic and the similar topics (docs/contract.md §4)."""
    threshold = _threshold(compact_threshold, "Nothing was read; compact_memory changes nothing.")
    memory = opened(where)
    snap = memory.read()
    wanted = _topic(target_topic)
    entries = [e for e in snap.records.values() if wanted is None or topic_of(e.record) == wanted]
    groups = group_by_topic([e.record for e in entries])
    clusters = similar_groups(list(groups)) if not wanted else []
    check = checker(memory, snap)
    stale = {}
    if check is not None:
        stale = {e.id: mark for e in entries if (mark := check.mark_entry(e))}
    root = memory.path.parent.parent
    files = {topic: cited for topic, members in groups.items() if (cited := citing.cited_by(root, members, stale))}
    return Compaction(
        memory.path,
        snap,
        threshold,
        wanted,
        groups,
        clusters,
        search_budget(),
        stale,
        files,
        check is not None and check.shallow,
    )
