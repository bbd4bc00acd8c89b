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
import re
from collections import Counter
from collections.abc import Iterable

from ..errors import warn
from ..values import Value
from .filetext import FileText
from .merge import Records, keep_newest, merge_three_way, merge_two_way
from .records import Entry, count_types, is_principle, parse_line, topic_of

BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_MARKERS = (b"<<<<<<<", b"|||||||", b"=======", b">>>>>>>")
# A marker line of any size (git makes them longer for a region inside a region, as a criss-cross
# merge leaves), which the reader of two or three sides may not have taken as one: in a file with a
# region it is left out of the lines set aside (the copy of the conflicted file keeps it).
_MARKER_LINE = re.compile(rb"(?:<{7,}|\|{7,}|={7,}|>{7,})(?:[ \t].*)?")


class Edit(Value):
    """How a snapshot made by Snapshot.edited differs from the one it was made from."""

    __slots__ = ("removed", "added")

    def __init__(self, removed: tuple[Entry, ...], added: tuple[Entry, ...]) -> None:
        self.removed = removed  # entries it had that this one has not (dropped or replaced)
        self.added = added  # entries this one has that it had not


class Snapshot(Value):
    """The records of the memory file, and what had to be set aside or resolved to get them."""

    __slots__ = (
        "records",
        "unreadable",
        "conflict_regions",
        "conflict_base",
        "duplicates",
        "raw_bytes",
        "edit",
        "_counts",
        "_topics",
        "_text",
    )
    UNSHOWN = ("raw_bytes", "edit")

    def __init__(
        self,
        records: Records | None = None,
        unreadable: list[bytes] | None = None,
        conflict_regions: int = 0,
        conflict_base: bool = False,
        duplicates: int = 0,
        raw_bytes: bytes | None = None,
        edit: Edit | None = None,
        _counts: tuple[int, int] | None = None,
    ) -> None:
        self.records: Records = {} if records is None else records
        self.unreadable: list[bytes] = [] if unreadable is None else unreadable
        self.conflict_regions = conflict_regions
        self.conflict_base = conflict_base
        self.duplicates = duplicates
        self.raw_bytes = raw_bytes  # the bytes it was parsed from
        self.edit = edit  # set by edited()
        # Computed once when first asked for (snapshots are shared between calls):
        self._counts = _counts
        self._topics: Counter | None = None
        # The file as text() gives it: set by parse() when the file is exactly that already
        # (sorted, LF, nothing else on any line), by text(), and by edited(), which splits in its
        # few changed lines instead of sorting and joining every record again.
        self._text: FileText | None = None

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
    other bytes are returned as they are, the same object. Read line by line (record/utf16.py)."""
    if not utf16(data):
        return data
    return b"".join(_utf16_read(data)[0])


def read_as_utf16(data: bytes) -> bool:
    """Whether some line of the file was read as UTF-16 text (doctor names such a file)."""
    return utf16(data) and _utf16_read(data)[1]


# The last UTF-16 file read, and its reading: scan, doctor and a write's check read the same bytes
# more than once (the records, then the lines), and a reading of megabytes takes seconds.
_last_read: tuple[bytes, tuple[list[bytes], bool]] | None = None


def _utf16_read(data: bytes) -> tuple[list[bytes], bool]:
    global _last_read
    last = _last_read
    if last is not None and last[0] == data:
        return last[1]
    from .utf16 import lines as utf16_lines  # (imported only for a file that reads as UTF-16)

    reading = utf16_lines(data)
    _last_read = (data, reading)
    return reading


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
        warn(
            "%s of the memory file %s not a record: left out here, and moved to "
            ".context/memory_log.quarantine.jsonl by the next write (nothing is lost)",
            "1 line" if n == 1 else f"{n} lines",
            "is" if n == 1 else "are",
        )
