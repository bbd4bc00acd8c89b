"""What search does with a ranking (search/index.py ranks): the order one query gives an index's
entries, those that match it best first, then the rest of the scope in static order, with the
views search walks (principles first, the matching logs, the newest logs); and the walk that lists
them, numbered, as far as the token budget reaches. Lazy past the matching ones: taking the first
few costs little however many entries there are."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator
from itertools import chain, dropwhile, takewhile

from ..record.records import Entry

Card = tuple[str, int, int]  # a record's block, its estimated tokens, its UTF-8 bytes


TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from typing import Protocol

    class Layout(Protocol):
        """The words of a listing, given by the caller (blocks.py's)."""

        def card(self, record: dict) -> Card: ...

        def numbered(self, number: int, body: str) -> str: ...


class Ranked:
    """Entries in one index's order: those that match the query (best first), then the rest of
    the scope in static order. Lazy past the matching ones, so taking the first few costs little
    however many entries there are."""

    def __init__(self, by_rank: dict[int, Entry], scored: list[int], scope: list[int], first_log: int) -> None:
        self._by_rank, self._scored, self._scope, self._first_log = by_rank, scored, scope, first_log
        self._matched_set: set[int] | None = None

    @property
    def _matched(self) -> set[int]:
        if self._matched_set is None:
            self._matched_set = set(self._scored)
        return self._matched_set

    def scope(self) -> list[int]:
        """The ranks of the entries in scope."""
        return self._scope

    def principles_in_scope(self) -> int:
        return bisect_left(self._scope, self._first_log)

    def matching(self) -> Iterator[Entry]:
        """The entries that match (hold a query term that can make them match, or are near the
        files asked about: docs/contract.md §4.2), best first."""
        return map(self._by_rank.__getitem__, self._scored)

    def matched(self) -> int:
        """How many entries in scope hold a query term or are near the files asked about."""
        return len(self._scored)

    def matched_principles(self) -> int:
        """How many of those are principles."""
        first_log = self._first_log
        if not self._scope or self._scope[0] >= first_log:  # no principle in scope
            return 0
        return len([r for r in self._scored if r < first_log])

    def principles(self) -> Iterator[Entry]:
        """The principles in scope: the matching ones best first, then the rest in static order."""
        first_log = self._first_log
        if not self._scope or self._scope[0] >= first_log:  # no principle in scope
            return iter(())
        matched = self._matched
        return map(
            self._by_rank.__getitem__,
            chain(
                (r for r in self._scored if r < first_log),
                (r for r in takewhile(lambda r: r < first_log, self._scope) if r not in matched),
            ),
        )

    def matching_logs(self) -> Iterator[Entry]:
        """The logs that hold a query term or are near the files asked about, best first."""
        first_log = self._first_log
        return map(self._by_rank.__getitem__, (r for r in self._scored if r >= first_log))

    def newest_logs(self) -> Iterator[Entry]:
        """The logs in scope, newest first."""
        return map(self._by_rank.__getitem__, dropwhile(lambda r: r < self._first_log, self._scope))

    def best_first(self) -> Iterator[Entry]:
        """Every entry in scope: the matching ones best first, then the rest in static order."""
        matched = self._matched
        return map(self._by_rank.__getitem__, chain(self._scored, (r for r in self._scope if r not in matched)))

    def principles_first(self) -> Iterator[Entry]:
        """The same order, principles before the rest."""
        first_log, matched, scope, scored = self._first_log, self._matched, self._scope, self._scored
        return map(
            self._by_rank.__getitem__,
            chain(
                (r for r in scored if r < first_log),
                (r for r in takewhile(lambda r: r < first_log, scope) if r not in matched),
                (r for r in scored if r >= first_log),
                (r for r in dropwhile(lambda r: r < first_log, scope) if r not in matched),
            ),
        )


def fit(
    cards: dict[Entry, Card],
    entries: Iterable[Entry],
    room: int,
    layout: Layout,
    marks=None,
    first: int = 1,
    byte_room: int = 0,
) -> tuple[list[str], list[Entry], bool, int, int]:
    """SearchIndex.fit's walk: `cards` are the index's cards, made here when an entry is first listed."""
    blocks: list[str] = []
    shown: list[Entry] = []
    used, used_bytes = 0, 0
    for entry in entries:
        card = cards.get(entry)
        if card is None:
            card = cards[entry] = layout.card(entry.record)
        if marks is not None:
            card = marks(entry, card)
        body, tokens, size = card
        number = len(blocks) + first
        tokens += len(str(number))  # "#n " and the blank line: about a token a digit
        size += len(str(number)) + 3
        if (room and used + tokens > room) or (byte_room and used_bytes + size > byte_room):
            return blocks, shown, False, used, used_bytes
        blocks.append(layout.numbered(number, body))
        shown.append(entry)
        used += tokens
        used_bytes += size
    return blocks, shown, True, used, used_bytes
