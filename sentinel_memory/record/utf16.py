"""Reading a memory file that starts with a UTF-16 byte order mark (docs/contract.md §3.1): what
Windows PowerShell 5.1's `>` and `Out-File` write, with what other tools appended to it since
(Git Bash's `echo >>` and Add-Content write UTF-8, PowerShell's `>>` UTF-16 again, from wherever
the file ended, at an odd byte or an even one).

The file is read as lines, each either UTF-16 from its own first byte (ended by a UTF-16 line
feed, or by a UTF-8 one right after UTF-16 text) or UTF-8 (ended by the byte 0x0A). Of the ways
to cut the file so, the one kept reads best as a whole (the best path over the places a line can
start, taken in the file's order): a line that reads as a record counts for far more than any
text, so a reading that loses a record does not win; then each character of text that decodes
cleanly counts for it, and what reads as nonsense (invalid UTF-8, NULs, controls, lone
surrogates, private use, the one-byte-off shape of UTF-16, every other byte the same script byte)
counts against it. A line that reads as a record, or as an empty UTF-16 line, in one reading and
not in the other is taken so without a choice. Either reading keeps every byte: a lone surrogate
passes, and an odd last byte is a piece of its own.

Bounded: each line is weighed by its first WEIGHED bytes; past MAX_CHOICES lines read more than
one way, or MAX_PLACES places, the reading goes on alone from the best place at the frontier, in
runs of clean lines (_onward), and past MAX_PLACES such steps the rest is read as UTF-16 in one go.
"""

from __future__ import annotations

import heapq
import json
import re
from array import array

MAX_CHOICES = 10_000  # lines read more than one way, at most
MAX_PLACES = 20_000  # places a line starts at read one by one, at most (then runs of clean lines)
KEY_CHECKED = 4096  # bytes of a line that is no record: at most this long, it is checked for a key read the other way
KEYS_CHECKED = 4 << 20  # bytes so checked in a file, at most
GLUED_RECORD = 16 * 1024  # bytes of a UTF-16 record after UTF-8 without a line feed, at most
GLUED_BACK = 8  # bytes before the end of such a piece where the UTF-16 line may begin, at most
CONTROLS = 3  # controls that may end such a piece, at most (a progress line's backspaces)
KEY_SPAN = 256  # characters on each side of such a piece's end looked at for a key split in two
SEAMS_CHECKED = 2_000  # such ends of pieces looked at for a key in a file, at most (then no glue)
KEY_LINES = 3  # lines that are not valid UTF-8 a UTF-16 line running on over them is checked for a key, at most
WEIGHED = 2048  # bytes of a line (its start) whose characters are weighed
RECORD_CHECKED = 64 * 1024  # bytes of a line looked at to tell whether it reads as a record
LONGEST = 1 << 20  # bytes of UTF-16 without a line feed read as one line, at most (the rest: more lines)
WINDOW = 2 * LONGEST  # bytes whose code units are searched at once for UTF-16 line feeds
RUN = 1 << 20  # bytes a run of lines (of records, or of clean lines) is looked for in, at most
GROWN = 4096  # bytes of the first window a run is looked for in (then fourfold, up to RUN)
CUT_LOOKS = 8  # bytes 0x0A after a place looked at for the end of UTF-16 text there, at most

_BLANK = "\ufeff \t\r\0"
RECORD = 10_000.0  # what a line that reads as a record counts
PRUNE = RECORD / 2  # a reading this far behind another at a place NEAR it is not read on
NEAR = 3  # bytes: places this close have read the same text but for a line feed's bytes
BAD = 3.0  # what a character of nonsense counts against a reading
CRLF = 2.0  # a UTF-16 line that ends as PowerShell ends its lines
SWITCH = 3.0  # a UTF-8 line after a UTF-16 one, or the reverse (tools take turns seldom)
# Characters no person writes in a note: controls (not a tab), lone surrogates, private use,
# specials and noncharacters.
_BAD16 = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ue000-\uf8ff\ufff0-\ufffc\ufffe\uffff]")
_BAD8 = re.compile(rb"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")  # (not ESC: a terminal's colours in build output)
# What ends a run of UTF-16 lines: a line feed without a CR before it, a control, a lone surrogate.
_NOT_IN_RUN16 = re.compile("(?<!\r)\n|\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")
# A line that reads as a record (_record_like), in text of many lines.
_RECORD_LINE = re.compile('^[\ufeff \t\r\0]*\\{[^\n]*"id"[^\n]*\\}[\ufeff \t\r\0]*$', re.M)
# What a record cannot hold raw: controls but a tab, lone surrogates.
_NOT_IN_RECORD = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff]")
# The high bytes of UTF-16 text of one script, most of whose characters share one: Latin ones,
# Greek, Cyrillic, Hebrew, Arabic, the Indic scripts, Thai (0x01-0x1F), kana (0x30, 0x31). Read
# as UTF-8, such text has that byte in every other place.
_SCRIPT_HIGH = frozenset((*range(0x01, 0x20), 0x30, 0x31))

U16, U8, U16_THEN_LF, U8_THEN_LINE16 = range(4)


def lines(data: bytes) -> tuple[list[bytes], bool]:
    """The text of a file that starts with a UTF-16 byte order mark, as UTF-8 pieces that joined
    are its lines, and whether any line was read as UTF-16 text."""
    order = "utf-16-be" if data.startswith(b"\xfe\xff") else "utf-16-le"
    body = data[2:]
    return _as_written(body, order) or _Reading(body, order).best()


def _as_written(body: bytes, order: str) -> tuple[list[bytes], bool] | None:
    """The common file, one that PowerShell wrote whole: every line a record or blank in UTF-16.
    None otherwise."""
    if len(body) % 2:
        return None
    text = body.decode(order, "surrogatepass")
    for line in text.split("\n"):
        stripped = line.strip(_BLANK)
        if stripped and not _record_like(stripped):
            return None
    return [text.encode("utf-8", "surrogatepass")], bool(text.strip(_BLANK + "\n"))


class _Reading:
    """The ways to read one file's body, and the best of them."""

    def __init__(self, body: bytes, order: str) -> None:
        self.body, self.order = body, order
        self.size = len(body)
        self.big = order == "utf-16-be"
        self.unit_lf = b"\x00\n" if self.big else b"\n\x00"
        self.unit_cr = b"\x00\r" if self.big else b"\r\x00"
        self.choices = self.places = self.key_checked = self.seams = 0
        self.brace16 = "{".encode(order)  # how a record's line starts, in UTF-16
        self.lf_unit = array("H", self.unit_lf)[0]  # as this machine reads two bytes
        self._window: dict[int, tuple[int, array]] = {}  # per alignment: where it starts, its code units
        self._known: dict[int, tuple[int, int, bool]] = {}  # per alignment: no line feed from, up to, one there
        # per alignment and line end: where the line searched began, and its last unclean character (-1: none)
        self._clean: dict[tuple[int, int], tuple[int, int]] = {}
        self._keyless8: set[tuple[int, int]] = set()  # lines that show no key read as UTF-8
        self._shown16: dict[tuple[int, int], bool] = {}  # whether UTF-16 text shows a key, by its span
        # per line end: a start looked from, and the first start from which the line reads as a note
        self._notes: dict[int, tuple[int, int]] = {}

    def best(self) -> tuple[list[bytes], bool]:
        """The pieces of the reading that counts most, and whether it read UTF-16 text. Places are
        taken in the file's order, each with the best count of a reading up to it (every line
        that ends there starts before it); one that is PRUNE behind a reading at a place NEAR it
        is not read on: it has lost a record that the other kept (a reading one byte off, through
        a file of records)."""
        # A place and whether the line before it was UTF-8 (the file starts as UTF-16).
        total: dict[tuple[int, bool], float] = {(0, False): 0.0}
        came: dict[tuple[int, bool], tuple[tuple[int, bool], int]] = {}  # the line that ended there
        ways: dict[int, list[tuple[int, int, float]]] = {}
        todo = [(0, False)]
        while todo:
            place = heapq.heappop(todo)
            at = place[0]
            if at >= self.size:
                continue
            near = max(
                total.get((n, u8), total[place]) for n in range(at - NEAR, at + NEAR + 1) for u8 in (False, True)
            )
            if total[place] < near - PRUNE:
                continue
            self.places += 1
            if self.choices >= MAX_CHOICES or self.places > MAX_PLACES:  # on from the best reading alone, in runs
                # the best reading at the frontier: one that jumped far ahead may have swallowed records
                frontier = [p for p in todo if p[0] < at + WEIGHED and p[0] < self.size]
                self._onward(max([place, *frontier], key=lambda p: (total[p], -p[0])), total, came)
                break
            if at not in ways:
                ways[at] = self._ways(at)
            for kind, end, score in ways[at]:
                # A switch where the line starts, and one within it (UTF-16 ended by a UTF-8 line feed).
                starts_utf8, after = kind in (U8, U8_THEN_LINE16), (end, kind in (U8, U16_THEN_LF))
                count = total[place] + score - SWITCH * ((starts_utf8 != place[1]) + (starts_utf8 != after[1]))
                if after not in total:
                    heapq.heappush(todo, after)
                elif count <= total[after]:
                    continue
                total[after], came[after] = count, (place, kind)
        steps = []
        place = max(((self.size, False), (self.size, True)), key=lambda p: total.get(p, float("-inf")))
        while place[0] > 0:
            before, kind = came[place]
            steps.append((kind, before[0], place[0]))
            place = before
        steps.reverse()
        pieces: list[bytes] = []
        read_utf16 = False
        for kind, at, end in steps:
            piece, holds = self._piece(kind, at, end)
            pieces.append(piece)
            read_utf16 = read_utf16 or holds
        return pieces, read_utf16

    def _ways(self, at: int) -> list[tuple[int, int, float]]:
        """(kind, where the line ends, what it counts) for each way to read a line from `at`."""
        lf = self._aligned_lf(at)
        end16 = lf + 2 if lf >= 0 else min(self.size, at + LONGEST)
        score16, record16 = self._weigh16(at, end16)
        if record16 or (score16 is None and end16 > at):  # a UTF-16 record or empty line, and those after it
            end, records = self._records16(end16)
            return [(U16, end, (score16 or 0.0) + RECORD * records)]
        byte_lf = self.body.find(b"\n", at)
        end8 = self.size if byte_lf < 0 else byte_lf + 1
        ways = [(U16, end16, score16 or 0.0)]
        if self.body.find(b"\0", at, end8) >= 0 and lf >= 0 and self._clean16(at, end16):
            # A NUL, and a clean UTF-16 line as PowerShell ends them: UTF-16 (text a tool writes as
            # UTF-8 has no NUL), unless only UTF-8 shows a key; or a piece without a line feed, then
            # a UTF-16 line (read from the piece, in step or one byte off, that line is nonsense,
            # which can read cleanly up to a line feed of it)
            glued = self._utf8_then_line16(at)
            if self._key_only_as_utf8(at, end8, end16):
                return [(U8, end8, self._weigh8(at, end8)[0]), *([glued] if glued else [])]
            if glued is not None:
                ways.append(glued)
        else:
            score8, record8 = self._weigh8(at, end8)
            if record8:  # a UTF-8 record, and the UTF-8 records after it
                end, records = self._records8(end8)
                return [(U8, end, score8 + RECORD * records)]
            glued = self._utf8_then_line16(at)
            if self._key_only_as_utf8(at, end8, end16) or self._swallows_key(at, end8, end16):
                # both read the key plain (the piece's line, or the UTF-16 line after it)
                return [(U8, end8, score8), *([glued] if glued else [])]
            ways.append((U8, end8, score8))
            if glued is not None:
                ways.append(glued)
        cut = self._utf16_then_lf(at, end16)
        if cut is not None:
            ways.append(cut)
        self.choices += len(ways) > 1
        return ways

    def _records16(self, at: int) -> tuple[int, int]:
        """Where the UTF-16 lines from `at` that are records or empty end (within RUN bytes), and
        how many records they are: read as one line, they leave no place inside them to read
        another way (what reads as a record in UTF-16 is UTF-16)."""
        for raw, last in self._growing(at):
            even = len(raw) - len(raw) % 2
            text = raw[:even].decode(self.order, "surrogatepass")
            whole = at + even == self.size  # the file's last line counts, whole though no line feed ends it
            taken = records = 0
            stopped = False
            while taken < len(text):
                lf = text.find("\n", taken)
                if lf < 0 and not whole:
                    break  # a line the window cut
                after = len(text) if lf < 0 else lf + 1
                stripped = text[taken:after].strip(_BLANK + "\n")
                if stripped:
                    if not _record_like(stripped):
                        stopped = True
                        break
                    records += 1
                taken = after
            if stopped or last:
                return at + len(text[:taken].encode(self.order, "surrogatepass")), records
        raise AssertionError("_growing ends with its last window")

    def _growing(self, at: int):
        """The bytes from `at` in windows that grow fourfold from GROWN bytes up to RUN (or the
        file's end), each with whether it is the last: a run that ends inside a window is read
        no further, so a run costs about its own length, not RUN (a file of records each followed
        by a note would otherwise decode RUN bytes per record)."""
        size = GROWN
        while True:
            raw = self.body[at : at + min(size, RUN)]
            last = size >= RUN or at + len(raw) >= self.size
            yield raw, last
            if last:
                return
            size *= 4

    def _onward(self, place: tuple[int, bool], total: dict, came: dict) -> None:
        """Past MAX_CHOICES: from `place` to the end, one reading, each step the better of the run
        of clean UTF-16 lines and the run of clean UTF-8 lines there (one line when none is clean).
        Clean UTF-8 lines that end before the first UTF-16 line there does come first: read as
        UTF-16, they would be one line of nonsense with what follows (a record, perhaps). Past
        MAX_PLACES steps (lines that read cleanly neither way), the rest as UTF-16 in one go."""
        lines = 0
        while place[0] < self.size:
            at = place[0]
            lines += 1
            if lines > MAX_PLACES:  # a file of nonsense lines: the rest as UTF-16, in one go
                after = (self.size, False)
                total[after], came[after], place = total[place], (place, U16), after
                break
            lf = self._aligned_lf(at)
            first16 = lf + 2 if lf >= 0 else min(self.size, at + LONGEST)
            utf16, utf8 = self._run(at, utf8=False), self._run(at, utf8=True)
            if (utf8[3] and utf8[1] <= first16) or self._key_only_as_utf8(at, utf8[1], first16):
                kind, end, score = utf8[:3]
            else:
                ways = [utf16[:3]] + ([utf8[:3]] if self.body.find(b"\0", at, utf8[1]) < 0 else [])
                kind, end, score = max(ways, key=lambda w: w[2] - SWITCH * ((w[0] == U8) != place[1]))
            after = (end, kind == U8)
            total[after] = total[place] + score - SWITCH * ((kind == U8) != place[1])
            came[after], place = (place, kind), after

    def _run(self, at: int, utf8: bool) -> tuple[int, int, float, bool]:
        """The lines from `at` (within RUN bytes, at least one) that read cleanly one way (UTF-8:
        valid, no NUL; UTF-16: no control but a tab, no lone surrogate, each line ended as
        PowerShell ends them, CR and LF: what a UTF-8 tool appended after them has no UTF-16 CR),
        as one step that counts for its records and its text, and whether it is clean. The first
        line is looked at first: when it is not clean, it alone, weighed."""
        if utf8:
            byte_lf = self.body.find(b"\n", at)
            first = self.size if byte_lf < 0 else byte_lf + 1
            clean_first = self.body.find(b"\0", at, first) < 0
            if clean_first:
                try:
                    self.body[at:first].decode("utf-8")
                except UnicodeDecodeError:
                    clean_first = False
            if not clean_first or first == self.size:
                return (U8, first, self._weigh8(at, first)[0], clean_first)
            for raw, last in self._growing(at):
                clean = raw.find(b"\0") % (len(raw) + 1)
                try:
                    raw[:clean].decode("utf-8")
                except UnicodeDecodeError as exc:
                    clean = exc.start
                # (what is unclean after the window's last line feed may be a character the window cut)
                if last or clean < raw.rfind(b"\n") + 1:
                    break
            cut = raw.rfind(b"\n", 0, clean) + 1
            text = raw[:cut].decode("utf-8")
        else:
            lf = self._aligned_lf(at)
            first = lf + 2 if lf >= 0 else min(self.size, at + LONGEST)
            if lf < 0 or not self._clean16(at, first):
                return (U16, first, self._weigh16(at, first)[0] or 0.0, False)
            for raw, last in self._growing(at):
                decoded = raw[: len(raw) - len(raw) % 2].decode(self.order, "surrogatepass")
                bad = _NOT_IN_RUN16.search(decoded)
                if last or (bad is not None and bad.start() <= decoded.rfind("\n")):
                    break
            text = decoded[: decoded.rfind("\n", 0, bad.start() if bad else len(decoded)) + 1]
            cut = len(text.encode(self.order, "surrogatepass"))
        records = len(_RECORD_LINE.findall(text))
        return (U8 if utf8 else U16, at + cut, RECORD * records + len(text), True)

    def _key_only_as_utf8(self, at: int, end8: int, end16: int) -> bool:
        """Whether the line from `at`, not valid UTF-8, shows a key of a provider's format (the
        strict rules) read as UTF-8 and not read as UTF-16 (a note in a legacy code page, cmd's
        `echo >>`, beside UTF-8 lines reads best as UTF-16 nonsense): then it is read as UTF-8, so
        that the rules that keep keys off the disk and out of commits see it. Lines of at most
        KEY_CHECKED bytes, at most KEYS_CHECKED bytes of a file."""
        if end8 - at > KEY_CHECKED or self.key_checked > KEYS_CHECKED:
            return False
        if (at, end8) in self._keyless8:  # (a line _swallows_key looks at again from another place)
            return False
        if self.body.find(b"\0", at, end8) < 0:
            try:  # valid UTF-8 without a NUL reads well as UTF-8 already: only a line that is not is looked at
                self.body[at:end8].decode("utf-8")
                return False
            except UnicodeDecodeError:
                pass
        from ..redaction import rules_hit

        self.key_checked += end8 - at
        # (NULs read as nothing: the rules would read the text again without them, as they hide a key)
        if not rules_hit(self.body[at:end8].replace(b"\0", b"").decode("utf-8", "replace"), strict_only=True):
            self._keyless8.add((at, end8))
            return False
        stop = min(end16, at + KEY_CHECKED)
        if (at, stop) not in self._shown16:
            self._shown16[(at, stop)] = bool(rules_hit(self._text16(at, stop), strict_only=True))
        return not self._shown16[(at, stop)]

    def _swallows_key(self, at: int, end8: int, end16: int) -> bool:
        """Whether the UTF-16 line at:end16 runs on over later UTF-8 lines (within KEY_CHECKED
        bytes of `at`, up to the first that holds a NUL, the first KEY_LINES that are not valid
        UTF-8), one of which _key_only_as_utf8 reads as
        UTF-8 (short lines, `ok`, or a note of cmd's in a legacy code page, then cmd's note with a
        key) whose key the UTF-16 line does not show either: then the line at `at`, a tool's line
        (no NUL), is UTF-8."""
        body, limit = self.body, min(end16, at + KEY_CHECKED)
        if end16 <= end8 or end8 >= limit or body.find(b"\0", at, end8) >= 0:
            return False
        nul = body.find(b"\0", end8, limit)
        if nul >= 0:  # UTF-16 text, or read one byte off, from that line on: no tool's note
            limit = body.rfind(b"\n", end8, nul) + 1
        line, looked = end8, 0
        while line < limit and looked < KEY_LINES:  # each line that is not valid UTF-8, and the valid ones after
            looked += 1
            try:
                body[line:limit].decode("utf-8")
            except UnicodeDecodeError as exc:
                bad = line + exc.start
            else:  # valid UTF-8 lines show a key when read so: unless the UTF-16 line runs on over them
                return self._valid_key_swallowed(at, line, limit)
            lf = body.find(b"\n", bad, limit)
            after = limit if lf < 0 else lf + 1
            if self._key_only_as_utf8(body.rfind(b"\n", line, bad) + 1 or line, after, end16):
                break
            line = after
        else:
            return False
        from ..redaction import rules_hit

        self.key_checked += after - at
        return not rules_hit(self._text16(at, after), strict_only=True)

    def _valid_key_swallowed(self, at: int, line: int, limit: int) -> bool:
        """Whether valid UTF-8 lines at line:limit show a key of a provider's format that the
        UTF-16 line from `at` over them does not (a cmd note whose code page's bytes are valid
        UTF-8, then a PowerShell line: read as UTF-16, the note is nonsense). Within KEYS_CHECKED."""
        if self.key_checked > KEYS_CHECKED or (line, limit) in self._keyless8:
            return False
        from ..redaction import rules_hit

        self.key_checked += limit - line
        if not rules_hit(self.body[line:limit].decode("utf-8"), strict_only=True):
            self._keyless8.add((line, limit))
            return False
        return not rules_hit(self._text16(at, limit), strict_only=True)

    def _records8(self, at: int) -> tuple[int, int]:
        """Where the UTF-8 lines from `at` that are records end (within RUN bytes), and how many
        they are (as _records16), line by line: a run costs its own length."""
        body, end, records = self.body, at, 0
        limit = min(self.size, at + RUN)
        while end < limit:
            lf = body.find(b"\n", end, limit)
            if lf < 0 and limit < self.size:
                break  # a line RUN cut
            after = limit if lf < 0 else lf + 1
            # not a blank line: a byte 0x0A is also half of a UTF-16 character (ਤ in BE)
            stripped = body[end:after].strip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf")
            try:
                if not stripped or b"\0" in stripped or not _record_like(stripped.decode("utf-8")):
                    break
            except UnicodeDecodeError:
                break
            records += 1
            end = after
        return end, records

    def _aligned_lf(self, at: int) -> int:
        """Where the first UTF-16 line feed from `at` in its alignment starts, within LONGEST bytes,
        or -1. Found by a C search for "\\n" in a window decoded per alignment; what a search found
        is kept (no line feed from one place up to another, and whether one is there), so that the
        places asked about, which only move on, search each part of the file once."""
        parity = at % 2
        since, upto, hit = self._known.get(parity, (-1, -1, False))
        if since <= at <= upto:
            if hit:
                return upto if upto < at + LONGEST else -1
            low = upto
        else:
            since, low = at, at
        high = min(at + LONGEST, self.size)
        start, units = self._window.get(parity, (-1, array("H")))
        if not start <= low or (high > start + 2 * len(units) and start + 2 * len(units) < self.size):
            raw = self.body[low : low + WINDOW]
            start, units = low, array("H", raw[: len(raw) - len(raw) % 2])
            self._window[parity] = (start, units)
        try:
            i = units.index(self.lf_unit, (low - start) // 2, (high - start + 1) // 2)
        except ValueError:
            self._known[parity] = (since, high, False)
            return -1
        self._known[parity] = (since, start + 2 * i, True)
        return start + 2 * i

    def _clean16(self, at: int, end: int) -> bool:
        """Whether the UTF-16 line at:end reads cleanly as PowerShell writes lines: _NOT_IN_RUN16
        finds nothing in it. The places a line can start are asked about in the file's order, and
        many lines from them end at one far line feed: the line from the first of them is searched
        once, for the last character that is not clean, and a line from a later place is clean when
        that character is before it (and the line does not start with what only its start makes
        unclean: a line feed, or the second half of a surrogate pair)."""
        known = self._clean.get((at % 2, end))
        if known is None or known[0] > at:
            text, last = self._text16(at, end), -1
            for bad in _NOT_IN_RUN16.finditer(text):
                last = bad.start()
            # (as bytes: a character beyond the BMP is four)
            known = (at, at + len(text[:last].encode(self.order, "surrogatepass")) if last >= 0 else -1)
            self._clean[(at % 2, end)] = known
        if known[1] >= at:
            return False
        unit = self.body[at : min(at + 2, end)]
        first = int.from_bytes(unit, "big" if self.big else "little") if len(unit) == 2 else 0
        return first != 0x0A and not 0xDC00 <= first <= 0xDFFF

    def _text16(self, at: int, end: int) -> str:
        raw = self.body[at:end]
        return raw[: len(raw) - len(raw) % 2].decode(self.order, "surrogatepass")

    def _weigh16(self, at: int, end: int, ends_line: bool = True) -> tuple[float | None, bool]:
        """What reading at:end as a UTF-16 line counts (None: a blank line), and whether it is a
        record."""
        body = self.body
        stop = end - 2 if ends_line and body[end - 2 : end] == self.unit_lf and end - at >= 2 else end
        crlf = stop != end and stop - at >= 2 and body[stop - 2 : stop] == self.unit_cr
        head = self._text16(at, min(stop, at + WEIGHED))
        stripped = head.strip(_BLANK)
        if not stripped and stop - at > WEIGHED:  # blank at its start only, perhaps
            stripped = self._text16(at, min(stop, at + RECORD_CHECKED)).strip(_BLANK)[: WEIGHED // 2]
        if not stripped:
            return None, False
        if stripped[0] == "{" and stop - at <= RECORD_CHECKED:
            whole = stripped if stop - at <= WEIGHED else self._text16(at, stop).strip(_BLANK)
            if _record_like(whole):
                return RECORD, True
        sample = stripped[: WEIGHED // 2]
        raw = body[at : min(stop, at + WEIGHED)]
        bad = len(_BAD16.findall(sample)) + _off_by_one(raw[: len(raw) - len(raw) % 2], self.big)
        odd = (end - at) % 2 and end == self.size
        return len(sample) - (1 + BAD) * bad - BAD * odd + CRLF * crlf, False

    def _weigh8(self, at: int, end: int) -> tuple[float, bool]:
        """What reading at:end as a UTF-8 line counts, and whether it is a record."""
        head = self.body[at : min(end, at + WEIGHED)]
        line = head.rstrip(b"\r\n") if end - at <= WEIGHED else head
        stripped = line.strip(b" \t\r").removeprefix(b"\xef\xbb\xbf")
        if not stripped:
            return -BAD * line.count(b"\0"), False
        if stripped[:1] == b"{" and end - at <= RECORD_CHECKED:
            whole = stripped if end - at <= WEIGHED else self.body[at:end].rstrip(b"\r\n").strip(b" \t\r")
            try:
                if _record_like(whole.decode("utf-8")):
                    return RECORD, True
            except UnicodeDecodeError:
                pass
        text = stripped.decode("utf-8", "replace")
        invalid = text.count("\ufffd") - stripped.count("\ufffd".encode())
        bad = invalid + len(_BAD8.findall(stripped)) + _script_bytes(stripped)
        return len(text) - invalid - (1 + BAD) * bad, False

    def _utf16_then_lf(self, at: int, before: int) -> tuple[int, int, float] | None:
        """UTF-16 text that a UTF-8 line feed ends (a UTF-16 line without its own, then a tool's
        UTF-8 line): at the first byte 0x0A, of the first CUT_LOOKS after `at`, where a UTF-16
        character would start, before the UTF-16 line feed."""
        body = self.body
        i = body.find(b"\n", at, before)
        for _ in range(CUT_LOOKS):
            if i < 0:
                return None
            if not (i - at) % 2 and (self.big or body[i + 1 : i + 2] != b"\x00"):
                break
            i = body.find(b"\n", i + 1, before)
        else:
            return None
        if i <= at:
            return None
        score, _ = self._weigh16(at, i, ends_line=False)
        return None if score is None else (U16_THEN_LF, i + 1, score)

    def _utf8_then_line16(self, at: int) -> tuple[int, int, float] | None:
        """UTF-8 without a line feed (printf's `x`, a prompt's colours) that a UTF-16 record or note
        follows at once, within KEY_CHECKED bytes, ended by CR, LF within GLUED_RECORD bytes
        (PowerShell's `>>` onto a file whose last line had no line feed, from an odd byte or an
        even one): a piece up to where that line begins, read as a line of its own. The line is in
        the alignment of its CR, LF and begins where the piece (valid UTF-8 without a NUL or a
        control) ends, or up to GLUED_BACK bytes before (its first character read as the end of
        the piece), never with a line feed in that character nor taking the end of a key into it."""
        body = self.body
        line_end = body.find(self.unit_cr + self.unit_lf, at + 1, min(self.size, at + KEY_CHECKED + GLUED_RECORD))
        if line_end < 0:
            return None
        # the piece: valid UTF-8 up to a byte a tool's text does not hold (a NUL, a control but a
        # tab, CR or a colour's ESC: Cyrillic in UTF-16 is 0x04 every other byte)
        lf = body.find(b"\n", at, line_end)  # (a piece holds no line feed, nor does the line's first character)
        raw = body[at : min(line_end if lf < 0 else lf, at + KEY_CHECKED)]
        control = _NOT_IN_PIECE.search(raw)
        raw = raw[: control.start()] if control else raw
        try:
            raw.decode("utf-8")
            valid = len(raw)
        except UnicodeDecodeError as exc:
            valid = exc.start
        # (a piece may end in one control that is no NUL, `printf 'ok\a'`, or in up to CONTROLS of
        # them before an ASCII character, `50%\b\b`: the line is then after them)
        past = 0
        if control and valid == len(raw):
            while past < CONTROLS and _control(body, at + valid + past):
                past += 1
            if past > 1 and not _ascii16(body, at + valid + past, self.big):
                past = 1
        for start in range(at + valid + past, max(at, at + valid - GLUED_BACK), -1):
            if (line_end - start) % 2 or line_end - start > GLUED_RECORD or _ascii_pair(body, start):
                continue  # (a line's first character is no two bytes of the piece)
            if b"\n" in body[start : start + 2] or b"\r" in body[start : start + 2] or self._cuts_key(at, start):
                continue
            if self._joins_key(at, start, line_end):
                return None  # (a line that begins earlier leaves the key in two halves too)
            if self._line16_ok(start, line_end):
                return (U8_THEN_LINE16, start, self._weigh8(at, start)[0])
        return None

    def _line16_ok(self, start: int, line_end: int) -> bool:
        """Whether start:line_end reads as a UTF-16 record or note (_note_from). A note's verdict is
        kept per line end, as the first place from which the rest of the line reads as one: a note
        of thousands of characters has as many places in it (each `上` holds the byte 0x0A)."""
        first_ok = self._notes.get(line_end)
        if first_ok is None or start < first_ok[0]:
            text = self._text16(start, line_end)
            first_ok = (start, start + 2 * _note_from(text))
            self._notes[line_end] = first_ok
        if start >= first_ok[1] and self._text16(start, min(line_end, start + 2 * WEIGHED)).strip(_BLANK):
            return True
        line = self._text16(start, line_end).strip(_BLANK)
        return line[:1] == "{" and _whole_record(line)

    def _joins_key(self, at: int, start: int, line_end: int) -> bool:
        """Whether the piece at:start and the UTF-16 line after it, read as two lines, would hide a
        key of a provider's format that their bytes show read on as one text (`printf 'K=AKIA…'
        >>`, then the rest from PowerShell; controls, NULs and characters that show nothing
        between the halves, which the rules read past): then they are not read so. Within
        KEY_SPAN characters of the seam."""
        body = self.body
        first = max(at, start - 4 * KEY_SPAN)
        piece = body[first:start].decode("utf-8", "replace")[-KEY_SPAN:]
        seen = piece.rstrip(_UNSEEN)
        if not seen or seen[-1] not in _KEY_CHARS or body[start : start + 2] == self.brace16:
            return False  # no key runs on from the piece (nor into a record, which starts with `{`)
        if self.seams >= SEAMS_CHECKED:  # past the bound: no glue there
            return True
        self.seams += 1
        from ..redaction import rules_hit

        stop = min(line_end, start + 2 * KEY_SPAN)
        whole = len(rules_hit(body[first:stop].decode("utf-8", "replace"), strict_only=True))
        if not whole:
            return False
        line = self._text16(start, stop)
        return whole > len(rules_hit(piece, strict_only=True)) + len(rules_hit(line, strict_only=True))

    def _cuts_key(self, at: int, start: int) -> bool:
        """Whether a UTF-16 line beginning at `start`, after the piece from `at`, would take the end
        of a key of a provider's format in the piece (`ghp_…Ty4`: its `4` and the next byte read as
        one character, no ASCII in UTF-16) into its first character: the piece would hide the key,
        cut short. The rules look only where a run of a key's characters crosses `start`."""
        body = self.body
        first = body[start : start + 2]
        if (
            len(first) < 2
            or first[0 if self.big else 1] == 0
            or body[start - 1] not in _TOKEN
            or first[0] not in _TOKEN
        ):
            return False
        if self.seams >= SEAMS_CHECKED:  # past the bound: no glue there
            return True
        self.seams += 1
        end = start
        while end < min(self.size, start + KEY_CHECKED) and body[end] in _TOKEN:
            end += 1
        from ..redaction import rules_hit

        whole = rules_hit(body[at:end].decode("utf-8", "replace"), strict_only=True)
        return len(whole) > len(rules_hit(body[at:start].decode("utf-8", "replace"), strict_only=True))

    def _piece(self, kind: int, at: int, end: int) -> tuple[bytes, bool]:
        """A line's UTF-8 bytes, and whether it is UTF-16 that holds something."""
        raw = self.body[at:end]
        if kind == U8:
            return raw, False
        if kind == U8_THEN_LINE16:  # a line of its own: the UTF-16 line after it starts one
            return raw + b"\n", False
        if kind == U16_THEN_LF:
            text = raw[:-1].decode(self.order, "surrogatepass")
            return text.encode("utf-8", "surrogatepass") + b"\n", True
        even = len(raw) - len(raw) % 2
        text = raw[:even].decode(self.order, "surrogatepass")
        piece = text.encode("utf-8", "surrogatepass")
        if raw[even:].strip():
            piece += b"\n" + raw[even:]
        return piece, bool(text.strip(_BLANK + "\n"))


_ZERO = bytes([1] + [0] * 255)  # bytes.translate: 1 for a zero byte, else 0
_NONZERO = bytes([0] + [1] * 255)


def _record_like(stripped: str) -> bool:
    """Whether a line (its blanks stripped) reads as a record: a JSON object's braces around an
    "id" key, and no character a record cannot hold raw (snapshot.py parses it afterwards)."""
    return stripped[:1] == "{" and stripped[-1:] == "}" and '"id"' in stripped and not _NOT_IN_RECORD.search(stripped)


# Three characters or more whose high byte is printable ASCII: with low bytes that are too, what
# UTF-8 text read as UTF-16 is made of.
_ASCII_HIGH_RUN = re.compile("[\u2000-\u7eff]{3,}")


def _control(body: bytes, at: int) -> bool:
    """Whether the byte at `at` is a control other than a NUL (DEL too)."""
    return at < len(body) and (0 < body[at] < 0x20 or body[at] == 0x7F)


def _ascii_pair(body: bytes, at: int) -> bool:
    """Whether the UTF-16 character at `at` is made of two printable ASCII bytes."""
    return all(0x20 <= byte <= 0x7E for byte in body[at : at + 2])


_TOKEN = frozenset(range(0x21, 0x7F))  # what a key is made of: printable ASCII but the space
# What a key is made of where it could run on from one piece into the next line
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/=.~%")
# What a piece (a tool's text) holds not: a NUL, or a control but a tab, CR or a colour's ESC.
_NOT_IN_PIECE = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")


def _note_from(text: str) -> int:
    """The first character of `text` (UTF-16 up to a line's CR, LF) from which the rest reads as a
    note PowerShell wrote: no character a note cannot hold, and no three in a row made of two
    printable ASCII bytes (UTF-8 text, or a record cut short and the lines after it, read as
    UTF-16: a key of 16 characters or more is 8 such). len(text) when none does."""
    first = 0
    for bad in _BAD16.finditer(text):
        first = bad.end()
    for run in _ASCII_HIGH_RUN.finditer(text, first):
        pairs = 0
        for i, c in enumerate(run.group(), run.start()):
            pairs = pairs + 1 if 0x20 <= ord(c) & 0xFF <= 0x7E else 0
            if pairs >= 3:
                first = max(first, i - 1)
    return first


def _ascii16(body: bytes, at: int, big: bool) -> bool:
    """Whether the UTF-16 character at `at` is ASCII (a record's `{`, a note's first letter)."""
    unit = body[at : at + 2]
    return len(unit) == 2 and unit[0 if big else 1] == 0 and 0x20 <= unit[1 if big else 0] <= 0x7E


# Characters that show nothing, which the rules read past (redaction/engine.py's hidden ones)
_UNSEEN = (
    "".join(
        map(
            chr,
            (
                *range(0x00, 0x09),
                *range(0x0B, 0x20),
                0x7F,
                0xAD,
                0x034F,
                0x061C,
                *range(0x200B, 0x2010),
                *range(0x202A, 0x202F),
                *range(0x2060, 0x2070),
                0xFEFF,
            ),
        )
    )
    + "\r"
)


def _whole_record(stripped: str) -> bool:
    """Whether a line is one JSON object that reads as a record, and nothing after it (text that
    only starts with one, as a record cut short and what followed it read as UTF-16, is not)."""
    if not _record_like(stripped):
        return False
    try:
        return isinstance(json.loads(stripped), dict)
    except (ValueError, RecursionError):
        return False


def _off_by_one(raw: bytes, big: bool) -> int:
    """How many UTF-16 characters of `raw` (an even number of bytes) whose low byte is zero, and
    high byte not, follow another such: ASCII in UTF-16 read one byte off. Counted on the bytes,
    one per character in a big integer, so that a long line costs no loop here."""
    low, high = (raw[1::2], raw[0::2]) if big else (raw[0::2], raw[1::2])
    both = int.from_bytes(low.translate(_ZERO), "big") & int.from_bytes(high.translate(_NONZERO), "big")
    return bin(both & (both >> 8)).count("1")


def _script_bytes(raw: bytes) -> int:
    """How many bytes of a UTF-8 reading are the high byte of UTF-16 text of one script: where most
    of the bytes in every other place are one byte of _SCRIPT_HIGH, those."""
    if len(raw) < 8:
        return 0
    most = 0
    for half in (raw[0::2], raw[1::2]):
        for byte in set(half) & _SCRIPT_HIGH:
            count = half.count(byte)
            if count * 2 > len(half):
                most = max(most, count)
    return most
