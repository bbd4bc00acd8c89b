"""The memory file's text as pieces of whole lines, kept in id order with the ids.

A write changes a line or two of a file that may hold thousands. Copying the whole text into a
new bytes object on every write is a measurable part of the write (bench/benchmark.py, C);
instead an edit splits the piece that holds the changed line and the write hands the pieces to
os.writev, so the only copy of the file's bytes is the one the kernel makes anyway. A text is
never changed once made: an edit returns a new one that shares the old one's bytes. After many
edits the pieces are joined again, once, so they stay few.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

MAX_PIECES = 64
Bytes = bytes  # inside FileText, `bytes` names its method


class FileText:
    """The bytes of a memory file whose lines are exactly `ids`' records, in that order.

    `pieces` are (buffer, start, end) spans that each hold whole lines; `firsts` has the index in
    `ids` of each piece's first line. `ids` belongs to the newest text: an edit moves it on.
    """

    __slots__ = ("pieces", "firsts", "ids")

    def __init__(self, data: bytes, ids: list[str]) -> None:
        self.pieces: list[tuple[bytes, int, int]] = [(data, 0, len(data))] if data else []
        self.firsts: list[int] = [0] if data else []
        self.ids: list[str] | None = ids

    def __len__(self) -> int:
        return sum(end - start for _, start, end in self.pieces)

    def bytes(self) -> bytes:
        """The text in one bytes object (joined, unless it is one piece already)."""
        if len(self.pieces) == 1 and self.pieces[0][1] == 0 and self.pieces[0][2] == len(self.pieces[0][0]):
            return self.pieces[0][0]
        return b"".join(self.buffers())

    def buffers(self) -> list[memoryview]:
        """The text as buffers to write in order (os.writev takes them as they are)."""
        return [memoryview(buf)[start:end] for buf, start, end in self.pieces]

    def edited(self, cuts: dict[str, Bytes | None], line_of: Callable[[str], Bytes]) -> FileText | None:
        """A new text with each id's line replaced by its bytes in `cuts`, inserted in id order
        when the id is new, or removed when they are None. line_of(id) gives the line an id has
        in this text. None if a line is not where it should be (the caller then builds the text
        afresh). This text keeps its bytes, but its ids move to the new one."""
        if self.ids is None:
            return None
        # One cut checks everything before it changes anything; with more, a later one may fail
        # after an earlier one changed the list, so they work on a copy.
        ids = self.ids if len(cuts) == 1 else list(self.ids)
        new = FileText(b"", ids)
        new.pieces, new.firsts = list(self.pieces), list(self.firsts)
        done: dict[str, Bytes | None] = {}

        def current(rid: str) -> Bytes | None:
            return done[rid] if rid in done else line_of(rid)

        for rid in sorted(cuts):
            if not new._cut(rid, cuts[rid], current):
                return None
            done[rid] = cuts[rid]
        self.ids = None
        if len(new.pieces) > MAX_PIECES:
            new.pieces, new.firsts = [(new.bytes(), 0, len(new))], [0]
        return new

    def _cut(self, rid: str, line: Bytes | None, current: Callable[[str], Bytes | None]) -> bool:
        ids, pieces, firsts = self.ids, self.pieces, self.firsts
        assert ids is not None  # edited() works on the newest text only
        at = bisect_left(ids, rid)
        present = at < len(ids) and ids[at] == rid
        if not present and line is None:
            return True  # nothing to remove
        spans, starts = [], []  # what replaces the piece the line is in (or follows the last one)
        if at < len(ids):
            where = self._find(at, current(ids[at]))  # the changed line, or the one a new line precedes
            if where is None:
                return False
            piece, offset = where
            buf, start, end = pieces[piece]
            if start < offset:
                spans.append((buf, start, offset))
                starts.append(firsts[piece])
            tail = (buf, offset + (len(current(rid) or b"") if present else 0), end)
            span = slice(piece, piece + 1)
        else:  # a new last line
            tail, span = None, slice(len(pieces), len(pieces))
        if line is not None:
            spans.append((line, 0, len(line)))
            starts.append(at)
        if tail is not None and tail[1] < tail[2]:
            spans.append(tail)
            starts.append(at + (line is not None))
        pieces[span], firsts[span] = spans, starts
        shift = (line is not None) - present
        after = span.start + len(spans)
        if shift:
            firsts[after:] = [f + shift for f in firsts[after:]]
        if not present:
            ids.insert(at, rid)
        elif line is None:
            del ids[at]
        return True

    def _find(self, at: int, line: Bytes | None) -> tuple[int, int] | None:
        """(piece, offset in its buffer) where `line`, the line of ids[at], starts; None if it is
        not there. It is searched for from a little before where its rank among the piece's lines
        suggests, so that a write does not scan the whole file."""
        piece = bisect_right(self.firsts, at) - 1
        if piece < 0 or line is None:
            return None
        buf, start, end = self.pieces[piece]
        first = self.firsts[piece]
        count = (self.firsts[piece + 1] if piece + 1 < len(self.firsts) else len(self.ids or ())) - first
        guess = start + (end - start) * (at - first) // count - 8192
        low = max(start, buf.rfind(b"\n", start, guess) + 1) if guess > start else start
        found = buf.find(line, low, end)
        if found < 0 and low > start:
            found = buf.find(line, start, end)
        if found < 0 or (found > start and buf[found - 1] != 10):
            return None
        return piece, found
