"""What a read of the memory file found: its records, parsed from the line format, and what had
to be set aside or resolved to get them.

`parse` tolerates BOMs, CRLF and blank lines, reads a UTF-16 file (PowerShell 5.1's `>` writes
one) as its text line by line, sets aside lines that are not records, resolves git
conflict markers (exactly with a diff3 base section, else keeping both sides) and duplicate ids
(the newer wins) — docs/contract.md §5. A Snapshot is never changed once made: `edited` returns
a new one that says what it gained and lost (`edit`), so the search index can follow it.
"""

from __future__ import annotations

import io
import logging
import re
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .filetext import FileText
from .merge import Records, keep_newest, merge_three_way, merge_two_way
from .records import Entry, count_types, is_principle, parse_line, topic_of

log = logging.getLogger("sentinel_memory")

BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")
# A marker line of any size (git makes them longer for a region inside a region, as a criss-cross
# merge leaves), which the reader of two or three sides may not have taken as one: in a file with a
# region it is left out of the lines set aside (the copy of the conflicted file keeps it).
_MARKER_LINE = re.compile(rb"(?:<{7,}|\|{7,}|={7,}|>{7,})(?:[ \t].*)?")


class Edit(NamedTuple):
    """How a snapshot made by Snapshot.edited differs from the one it was made from."""

    removed: tuple[Entry, ...]  # entries it had that this one has not (dropped or replaced)
    added: tuple[Entry, ...]  # entries this one has that it had not


@dataclass
class Snapshot:
    """The records of the memory file, and what had to be set aside or resolved to get them."""

    records: Records = field(default_factory=dict)
    unreadable: list[bytes] = field(default_factory=list)
    conflict_regions: int = 0
    conflict_base: bool = False
    duplicates: int = 0
    raw_bytes: bytes | None = field(default=None, repr=False)  # the bytes it was parsed from
    edit: Edit | None = field(default=None, repr=False)  # set by edited()
    # Computed once when first asked for (snapshots are shared between calls):
    _counts: tuple[int, int] | None = field(default=None, repr=False)
    _topics: Counter | None = field(default=None, repr=False)
    # The file as text() gives it: set by parse() when the file is exactly that already (sorted,
    # LF, nothing else on any line), by text(), and by edited(), which splits in its few changed
    # lines instead of sorting and joining every record again.
    _text: FileText | None = field(default=None, repr=False)

    @property
    def raw(self) -> bytes:
        """The bytes this snapshot was read from, or would be written as."""
        return self.raw_bytes if self.raw_bytes is not None else self.text()

    def counts(self) -> tuple[int, int]:
        """(logs, principles)."""
        if self._counts is None:
            self._counts = count_types(e.record for e in self.records.values())
        return self._counts

    def topic_counts(self) -> Counter:
        """Records per topic. Do not mutate: copy it."""
        if self._topics is None:
            self._topics = Counter(topic_of(e.record) for e in self.records.values())
        return self._topics

    def text(self) -> bytes:
        """The file as it should be: one line per record, sorted by id, LF, final newline."""
        return self.file_text().bytes()

    def file_text(self) -> FileText:
        """text() as pieces, for a write to hand to os.writev without joining them first."""
        if self._text is None:
            ids = sorted(self.records)
            self._text = FileText(b"".join([self.records[rid].data for rid in ids]), ids)
        return self._text

    def edited(self, put: Iterable[Entry] = (), drop: Iterable[str] = ()) -> Snapshot:
        """A new snapshot without the records `drop` names and with `put` added or replacing the
        record of the same id. This one keeps its records and its text (written, it would give
        the same bytes as before)."""
        put = list(put)
        drop = [rid for rid in dict.fromkeys(drop) if rid in self.records and rid not in {e.id for e in put}]
        records = dict(self.records)
        gone = [records.pop(rid) for rid in drop]
        for entry in put:
            previous = records.get(entry.id)
            if previous is not None:
                gone.append(previous)
            records[entry.id] = entry
        logs, principles = self.counts()  # kept by difference: counting every record costs more
        for entry, sign in [(e, -1) for e in gone] + [(e, 1) for e in put]:
            if is_principle(entry.record):
                principles += sign
            else:
                logs += sign
        new = Snapshot(records=records, edit=Edit(tuple(gone), tuple(put)), _counts=(logs, principles))
        if self._text is not None:
            cuts = {rid: None for rid in drop} | {e.id: e.data for e in put}
            new._text = self._text.edited(cuts, lambda rid: self.records[rid].data)
        return new


def parse(data: bytes) -> Snapshot:
    """Parse the file's bytes (docs/contract.md §5)."""
    text = utf8(data)
    lines = lines_of(text)
    snap = Snapshot(raw_bytes=data)
    if not any(line.startswith(_MARKERS) for line in lines):
        entries = _entries(lines, snap.unreadable)
        _warn(snap.unreadable)
        snap.records, snap.duplicates = keep_newest(entries)
        ids = [e.id for e in entries]
        # Already exactly what text() would write: keep these bytes as the text to splice into.
        if (
            text is data
            and not snap.duplicates
            and not snap.unreadable
            and ids == sorted(ids)
            and b"".join([e.data for e in entries]) == data
        ):
            snap._text = FileText(data, ids)
        return snap

    common: list[bytes] = []
    ours: list[bytes] = []
    base: list[bytes] = []
    theirs: list[bytes] = []
    state, regions, every_region_has_base, region_has_base = None, 0, True, False
    markers: set[int] = set()  # the lines read as conflict markers (one starting so elsewhere is text)
    for n, line in enumerate(lines):
        if state is None and line.startswith(b"<<<<<<<"):
            state, region_has_base, regions = "ours", False, regions + 1
        elif state == "ours" and line.startswith(b"|||||||"):
            state, region_has_base = "base", True
        elif state in ("ours", "base") and line.startswith(b"======="):
            state = "theirs"
        elif state == "theirs" and line.startswith(b">>>>>>>"):
            state, every_region_has_base = None, every_region_has_base and region_has_base
        else:
            {None: common, "ours": ours, "base": base, "theirs": theirs}[state].append(line)
            continue
        markers.add(n)
    if state is not None:  # a region never closed: keep everything from every side
        every_region_has_base = False

    sides = {}
    seen_bad: list[bytes] = []
    for name, own in (("base", base), ("ours", ours), ("theirs", theirs)):
        found, dropped = keep_newest(_entries(common + own, seen_bad))
        sides[name] = found
        snap.duplicates += dropped
    # The lines that are not records, as the file holds them: in its order, repeats kept (a line
    # outside the regions is read once per side above), so that what is set aside reads as it was
    # written (a key whose lines a region splits is still one text, contextdir.redacted_lines).
    bad = set(seen_bad)
    snap.unreadable = [
        line
        for n, line in enumerate(lines)
        if line in bad and n not in markers and not (regions and _MARKER_LINE.fullmatch(line))
    ]
    _warn(snap.unreadable)
    if every_region_has_base:
        snap.records = merge_three_way(sides["base"], sides["ours"], sides["theirs"])
    else:
        snap.records = merge_two_way(sides["ours"], sides["theirs"])
    snap.conflict_regions, snap.conflict_base = regions, every_region_has_base
    return snap


def utf16(data: bytes) -> bool:
    """Whether the bytes start with a UTF-16 byte order mark (and not UTF-32's)."""
    return data.startswith(UTF16_BOMS) and not data.startswith(b"\xff\xfe\x00\x00")


def utf8(data: bytes) -> bytes:
    """A file that starts with a UTF-16 byte order mark (what Windows PowerShell 5.1's `>` and
    `Out-File` write, say after `git show HEAD:.context/memory_log.jsonl > ...`) as UTF-8, so its
    records are read rather than set aside as unreadable lines; the next write stores UTF-8. Any
    other bytes are returned as they are, the same object. Read line by line (_utf16_lines)."""
    if not utf16(data):
        return data
    return b"".join(_utf16_lines(data)[0])


def read_as_utf16(data: bytes) -> bool:
    """Whether some line of the file was read as UTF-16 text (doctor names such a file)."""
    return utf16(data) and _utf16_lines(data)[1]


def _utf16_lines(data: bytes) -> tuple[list[bytes], bool]:
    """The text of a file that starts with a UTF-16 byte order mark, as UTF-8 pieces that joined
    are its lines, and whether any line was read as UTF-16. It is read as UTF-16 and cut where
    UTF-16 has a line feed. A blank line and one that reads as a record stay so; any other line is
    read as UTF-16 text unless it is UTF-8 (_bytes_are_text): what a tool that writes UTF-8 added
    (PowerShell's Add-Content, Git Bash's `>>`), or a UTF-8 file whose first bytes a tool damaged,
    is read as its text, so that its records are read and the redaction rules see a credential in
    it. Where such text and a UTF-16 record meet in one line, the line is cut there, and after UTF-8
    text the rest is read again as UTF-16 from that byte, whatever its alignment. Either reading
    keeps every byte: a lone surrogate passes, and an odd last byte is a piece of its own."""
    order = "utf-16-be" if data.startswith(b"\xfe\xff") else "utf-16-le"
    record_then_text = b"\x00}\n" if order == "utf-16-be" else b"}\x00\n"
    out: list[bytes] = []
    found_utf16 = False
    body: bytes | None = data[2:]
    seams = looked = reread = 0
    while body is not None:
        even = len(body) - len(body) % 2
        text, tail = body[:even].decode(order, "surrogatepass"), body[even:]
        again, at = None, 0
        for match in _OTHER_LINE.finditer(text):
            looked += 1
            if looked > MAX_LOOKED:  # a file of millions of such lines: the rest as UTF-16, in one go
                break
            kept = text[at : match.start()]  # records and blank lines
            out.append(kept.encode("utf-8", "surrogatepass"))
            found_utf16 = found_utf16 or bool(kept.strip(_BLANK + "\n"))
            at, line = match.end(), match.group()
            raw = line.encode(order, "surrogatepass")
            if at == len(text):
                raw, tail = raw + tail, b""
            cut = raw.find(record_then_text) if line.lstrip(_BLANK).startswith("{") else -1
            if seams < MAX_SEAMS and cut > 0:  # a UTF-16 record, then UTF-8 text
                seams += 1
                out.append(raw[: cut + 2].decode(order, "surrogatepass").encode("utf-8", "surrogatepass"))
                found_utf16, raw = True, raw[cut + 2 :]
            elif seams < MAX_SEAMS and reread < MAX_REREAD and (seam := _utf16_after_text(raw, order)) is not None:
                seams += 1  # UTF-8 text, then UTF-16: the rest read again from there
                again = body[len(text[: match.start()].encode(order, "surrogatepass")) + seam :]
                raw, reread = raw[:seam], reread + len(again)
            piece, as_utf16 = _piece(raw, order)
            out.append(piece)
            found_utf16 = found_utf16 or as_utf16
            if again is not None:
                break
        if again is None:
            kept = text[at:]
            out.append(kept.encode("utf-8", "surrogatepass"))
            found_utf16 = found_utf16 or bool(kept.strip(_BLANK + "\n"))
            if tail.strip():
                out.append(b"\n" + tail)
        body = again
    return out, found_utf16


MAX_SEAMS = 1000  # places where UTF-8 text and UTF-16 text meet that a file is cut at, at most
MAX_REREAD = 256 << 20  # bytes read again after such cuts, at most (each reads the rest of the file)
MAX_LOOKED = 10_000  # lines that are neither blank nor records looked at one by one, at most
_BLANK = "\ufeff \t\r\0"
# A line that is not blank and does not read as a record (one starts with "{" and ends with "}").
_OTHER_LINE = re.compile(r"^(?![\ufeff \t\r\0]*\{[^\n]*\}[\ufeff \t\r\0]*$)[^\n]*[^\s\ufeff\0][^\n]*$", re.M)


# A UTF-8 line feed followed by UTF-16 text of two ASCII characters, or by an empty UTF-16 line
# (its CR, then its LF or the end): where a tool's UTF-8 line ends and PowerShell's `>>` goes on
# in UTF-16. (Not any UTF-16 text: a byte 0x0A is half of many CJK characters, 上 among them, and
# cutting there would misread all that follows.)
_SEAM = {
    "utf-16-le": re.compile(rb"\n(?=(?:[\t\r\x20-\x7e]\x00){2}|\r\x00(?:\n\x00|\Z))"),
    "utf-16-be": re.compile(rb"\n(?=(?:\x00[\t\r\x20-\x7e]){2}|\x00\r(?:\x00\n|\Z))"),
}
SEAM_LOOKS = 20  # such line feeds of one line looked at, at most
SEAM_SAMPLE = 256  # bytes before such a line feed that decide whether they are UTF-8 text


def _utf16_after_text(raw: bytes, order: str) -> int | None:
    """Where UTF-16 text (or an empty UTF-16 line) starts after UTF-8 text in a line's bytes, past
    the UTF-8 line feed, or None: the first seam whose bytes before it are a UTF-8 line (_utf8_head),
    or nothing but the line feed (`echo >>`, cmd's `echo.>>`) before a UTF-16 record or empty line."""
    for n, seam in enumerate(_SEAM[order].finditer(raw)):
        if n >= SEAM_LOOKS:
            break
        end = seam.end()
        before = raw[:end]
        if not before.rstrip(b"\r\n"):
            alone = before == b"\n" if order == "utf-16-be" else before in (b"\n", b"\r\n")
            if alone and raw[end : end + 2] in _RECORD_OR_EMPTY[order]:
                return end
            continue
        start = max(0, end - SEAM_SAMPLE)
        if _utf8_head(raw[start - start % 2 : end], order, empty_line_after=raw[end : end + 1] in (b"\r", b"\x00")):
            return end
    return None


# What PowerShell's `>>` starts with in UTF-16: a record, or an empty line.
_RECORD_OR_EMPTY = {"utf-16-le": (b"{\x00", b"\r\x00"), "utf-16-be": (b"\x00{", b"\x00\r")}


def _utf8_head(head: bytes, order: str, empty_line_after: bool = False) -> bool:
    """Whether the bytes before a seam are a UTF-8 line: no control character but a tab in it
    (the line feed and a CR before it aside), no character of them read as UTF-16 with one zero
    byte (UTF-8 text has none; UTF-16 Chinese with a space has some), and _bytes_are_text. Before
    an empty UTF-16 line, at least 4 bytes: a short CJK note whose last character ends in 0x0A
    (上 in UTF-16 BE), just before its CR, looks like a short UTF-8 line."""
    line = head.rstrip(b"\r\n")
    if _CONTROL.search(line.rsplit(b"\n", 1)[-1]) or (empty_line_after and len(line) < 4):
        return False
    return _zero_bytes(head[: len(head) - len(head) % 2])[1] == 0 and _bytes_are_text(head, order)


def _zero_bytes(even: bytes) -> tuple[int, int]:
    """Of the characters of UTF-16 bytes (an even number of them): how many are both bytes zero
    (NULs a crash left), and how many have one zero byte (ASCII and Latin text, read as UTF-16)."""
    both = array("H", even).count(0)
    return both, even.count(0) - 2 * both


_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


def _piece(raw: bytes, order: str) -> tuple[bytes, bool]:
    """A line's bytes as UTF-8: as they are when they are UTF-8 text, else read as UTF-16 (an odd
    last byte a piece of its own); and whether it was read as UTF-16 and holds something."""
    if _bytes_are_text(raw, order):
        return raw, False
    even = len(raw) - len(raw) % 2
    line, odd = raw[:even].decode(order, "surrogatepass"), raw[even:]
    text = line.encode("utf-8", "surrogatepass") + (b"\n" + odd if odd.strip() else b"")
    return text, bool(line.strip(_BLANK))


SAMPLE = 16 * 1024  # bytes of a line (its start) that decide how it is read
# The high bytes of UTF-16 text of one script, most of whose characters share one: Latin ones,
# Greek, Cyrillic, Hebrew, Arabic, the Indic scripts, Thai (0x01-0x1F), kana (0x30, 0x31). Not
# 0x20 and up (a UTF-8 line of spaces, dashes or Cyrillic has one byte in every other place too).
_SCRIPT_HIGH = frozenset((*range(0x01, 0x20), 0x30, 0x31))


def _bytes_are_text(raw: bytes, order: str) -> bool:
    """Whether a line's bytes are UTF-8 rather than UTF-16, by its first SAMPLE bytes. UTF-16 it
    is when it ends in a UTF-16 carriage return (PowerShell ends its lines so), when many of its
    characters have one zero byte (ASCII and Latin text, or symbols such as U+2500), or when most
    share one high byte of a script (_SCRIPT_HIGH), NULs a crash left aside; else UTF-8 when its
    bytes are valid but for a few (a Latin-1 é). UTF-16 of Chinese or Korean, whose high bytes
    vary, rarely makes valid UTF-8; when it does, its bytes are kept as they are, which loses none
    of them."""
    if raw.endswith(b"\x00\r" if order == "utf-16-be" else b"\r\x00"):  # PowerShell's CRLF, in UTF-16
        return False
    sample = raw[:SAMPLE]
    even = sample[: len(sample) - len(sample) % 2]
    high = even[0::2] if order == "utf-16-be" else even[1::2]
    zeros, one_zero = _zero_bytes(even)
    chars = len(even) // 2 - zeros
    if chars and one_zero * 4 >= chars:
        return False
    if chars >= 4 and max((high.count(b) for b in set(high) & _SCRIPT_HIGH), default=0) * 2 > chars:
        return False
    bad = sample.decode("utf-8", "replace").count("\ufffd") - sample.count("\ufffd".encode())
    return bad * 10 <= len(sample) - sample.count(b"\0")


def lines_of(data: bytes) -> list[bytes]:
    """The non-blank lines of file bytes, without a BOM at their start or line endings (LF or
    CRLF). Read one line at a time: a file of millions of blank lines costs no list of them
    (data.split made one, ten times the file's size in memory)."""
    out = []
    for line in io.BytesIO(data):
        line = line.rstrip(b"\r\n").removeprefix(BOM)  # the file's, or one inside (files joined by `cat`)
        if line.strip():
            out.append(line)
    return out


def _entries(lines: list[bytes], unreadable: list[bytes]) -> list[Entry]:
    entries = []
    for raw in lines:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            record = None
        else:
            record = parse_line(line)
        if record is None:
            unreadable.append(raw)
        else:
            entries.append(Entry(record, line, raw + b"\n"))
    return entries


def _warn(unreadable: list[bytes]) -> None:
    """Say on stderr (the log) how many lines are not records, once per reading of the file."""
    if unreadable:
        n = len(unreadable)
        log.warning(
            "%s of the memory file %s not a record: left out here, and moved to "
            ".context/memory_log.quarantine.jsonl by the next write (nothing is lost)",
            "1 line" if n == 1 else f"{n} lines",
            "is" if n == 1 else "are",
        )
