"""What search_memory's answer lists, within its budget: the whole scope while the answer is small
(SMALL_ANSWER); past that the principles and the records that match (or the newest), best first,
up to about FOCUS_ANSWER tokens, and the rest counted by topic; the stale records listed, with
their `stale:` lines; and which of the first listed matches match strongly. tools/memory.py's
search gathers the scope, the ranking and the stale marks, and this fills its `Found` from them;
the words are tools/render.py's.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..record.records import Entry, topic_of
from ..search import strength
from ..search.match import Query
from . import blocks, render

if TYPE_CHECKING:  # for annotations only
    from ..git.staleness import Checker
    from ..search.index import SearchIndex
    from ..search.ranked import Ranked
    from .outcomes import Found

# The most UTF-8 bytes any search answer takes, beside its budget of tokens (tools/memory.py's
# DEFAULT_BUDGET): under what every client shows whole at its default settings (docs/clients.md).
MAX_BYTES = render.MAX_ANSWER_BYTES
# search_memory lists the whole scope while its answer fits SMALL_ANSWER tokens. Past that it lists
# the principles and the records that match, best first, until the answer reaches about
# FOCUS_ANSWER tokens (the matches get at least MATCH_ROOM after the principles), and counts the
# rest by topic.
SMALL_ANSWER = render.SMALL_ANSWER
FOCUS_ANSWER = render.FOCUS_ANSWER
MATCH_ROOM = 1_500
MEASURED = 12  # the first matching records listed whose match strength the answer's header weighs
# The reasons of a weak match that still share something of the request's own (render.strength_line):
# rare words, the English code name of one of its Korean words, its topic named in a long request.
SOME_EVIDENCE = ("words: ", "code names: ", "topic ")
MIN_BLOCK = 15  # estimated tokens of the shortest block a record can have
NOTICE_ALLOWANCE = 200  # the left-out and compact-required notices
STALE_NOTE_ALLOWANCE = 60  # the note that counts the stale records listed, when marks are possible


def _marked_cards(check: Checker):
    """For index.fit: an entry's card with its stale line, made once per entry and HEAD (kept by
    the checker), or the card as it is."""
    cards = check.lines

    def marked(entry: Entry, card):
        got = cards.get(entry, False)
        if got is False:
            mark = check.mark_entry(entry)
            got = cards[entry] = blocks.with_line(card, blocks.stale_line(mark)) if mark else None
        return got or card

    return marked


def fill(found: Found, search_index: SearchIndex, ranked: Ranked, check: Checker | None, query: str, former) -> None:
    """Fill `found`, whose scope and counts are set, with the numbered blocks that fit its budget
    and what they leave out. `ranked` is the scope's ranking for `query` (the text as given, which
    the strength measure reads) and the files asked about (`found.files`, and `former`, the names
    they had before a rename); `check` gives the stale marks (None: no record can be stale)."""
    snap, wanted, total, asked = found.snapshot, found.topic, found.total, found.files
    # The header, the notes and the notices that may follow count against the budget too.
    allowance = NOTICE_ALLOWANCE + (STALE_NOTE_ALLOWANCE if check is not None else 0)
    fixed = render.search_overhead(found) + allowance
    room = max(found.budget - fixed, 1) if found.budget else 0
    byte_room = max(MAX_BYTES - render.search_overhead_bytes(found), 1) if found.budget else 0
    marks = _marked_cards(check) if check is not None else None
    small = min(room, max(SMALL_ANSWER - fixed, 1)) if room else 0
    complete = False
    if not small or total <= small // MIN_BLOCK:  # else it cannot be small: not worth rendering
        found.blocks, shown, complete, _, _ = search_index.fit(ranked.best_first(), small, blocks, marks, 1, byte_room)
    if not complete:
        found.blocks, shown, complete, used, used_bytes = search_index.fit(
            ranked.principles(), room, blocks, marks, 1, byte_room
        )
        found.cut = not complete
        if complete:
            left = room - used
            focus = min(left, max(FOCUS_ANSWER - fixed - used, MATCH_ROOM))
            logs = ranked.matching_logs() if (found.ordered or asked) else ranked.newest_logs()
            more, more_shown, complete, _, more_bytes = search_index.fit(
                logs, focus, blocks, marks, len(found.blocks) + 1, max(byte_room - used_bytes, 1)
            )
            found.blocks += more
            shown += more_shown
            found.cut = not complete and (focus >= left or used_bytes + more_bytes + 2_000 > byte_room)
        if found.ordered or asked:
            if found.cut:
                listed = set(shown)
                found.left_matching = sum(1 for e in ranked.matching() if e not in listed)
            else:  # every principle is listed, and the logs listed are the best matching ones
                found.left_matching = ranked.matched() - ranked.matched_principles() - len(more_shown)
        unlisted: Counter = Counter({wanted: total}) if wanted else snap.topic_counts().copy()
        listed_topics = Counter(topic_of(e.record) for e in shown)
        unlisted.subtract(listed_topics)
        for topic in listed_topics:  # only these can have dropped to nothing
            if unlisted[topic] <= 0:
                del unlisted[topic]
        found.left_out, found.left_topics = total - len(shown), unlisted
    if check is not None:
        found.stale = sum(1 for e in shown if check.lines.get(e))
        found.shallow = check.shallow
    if found.query or asked:  # a query of stop words only matches nothing
        measured = Query.of(query, asked, former)
        number = {e: n for n, e in enumerate(shown, 1)}
        best = [
            number[e] for _, e in zip(range(len(number) + MEASURED), ranked.matching(), strict=False) if e in number
        ]
        found.matches_listed = len(best)
        measures = {n: strength.measure(search_index, shown[n - 1], measured) for n in best[:MEASURED]}
        found.strong = sorted(n for n, m in measures.items() if m.strong)
        found.some_words = any(r.startswith(SOME_EVIDENCE) for m in measures.values() for r in m.reasons)
