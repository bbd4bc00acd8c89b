"""Credentials already in a memory file: find them (`scan`) and redact them in place (`redact_file`).

The sanitizer runs on every write, but a file can hold values from before a rule existed, from a
hand edit or from a teammate's older install. `scan` reads without the lock and reports where a
credential sits (record id, field, rule name), never the value. `redact_file` applies the same
policy as log_memory (docs/contract.md §6: every rule on missing_context and lesson, the strict provider rules
on topic and ask_next_time) in one locked read-modify-write, atomically.

A line that is not a record (a hand edit that broke the JSON) has no fields, so every rule applies
to it: in the memory file, and in the quarantine file, which is tracked too and is where every
write moves such lines. `redact_file` moves them there, then redacts that file in place under the
memory file's lock (the lock that guards both files).

A record whose text changes gets a new id, because ids are computed on the stored values (docs/contract.md §3.4):
the redacted record keeps its meta, gains meta.updated, and replaces the old line. When the new id
is already taken by another record, the one logged or updated last is kept, as for duplicate ids
(the stamp of the redaction itself does not count, so it cannot hide a teammate's later update).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import NamedTuple

from ..record.contextdir import QUARANTINE_FILE
from ..record.disk import atomic_write, read_regular
from ..record.merge import Records
from ..record.records import STRICT_ONLY, TYPES, Entry, meta_of, newer, record_id, utc_now
from ..record.snapshot import Snapshot, parse
from ..record.store import read, update
from ..redaction import redact, rules_hit


class Finding(NamedTuple):
    """A credential found in the memory file: where it is and which rule saw it, never its value.
    In a line that is not a record, record_id is "<file name>:<line number>" and field is "line"."""

    record_id: str
    field: str
    rule: str


def scan(path: Path) -> list[Finding]:
    """Every credential in the memory file at path (records by id, then lines that are not
    records) and in its quarantine file; reads without the lock and creates nothing."""
    path = Path(path)
    return findings(read(path), _lines(path), _lines(path.parent / QUARANTINE_FILE), path.name)


def scan_bytes(memory: bytes, quarantine: bytes, name: str = "memory_log.jsonl") -> list[Finding]:
    """scan() of a memory file's and a quarantine file's bytes (e.g. as staged in git's index)."""
    return findings(parse(memory), _split(memory), _split(quarantine), name)


def findings(snap: Snapshot, memory_lines: list[bytes], quarantine_lines: list[bytes], name: str) -> list[Finding]:
    found = []
    for rid in sorted(snap.records):
        record = snap.records[rid].record
        for field, strict in STRICT_ONLY.items():
            value = record.get(field)
            if isinstance(value, str):
                found += [Finding(rid, field, name) for name in rules_hit(value, strict_only=strict)]
    unreadable = set(snap.unreadable)
    for file, lines, only_unreadable in ((name, memory_lines, True), (QUARANTINE_FILE, quarantine_lines, False)):
        numbered = [
            (number, line)
            for number, line in enumerate(lines, 1)
            if not only_unreadable or line.removeprefix(b"\xef\xbb\xbf").rstrip(b"\r") in unreadable
        ]
        each: Counter[str] = Counter()
        for number, line in numbered:
            hits = rules_hit(_text(line))
            each.update(hits)
            found += [Finding(f"{file}:{number}", "line", rule) for rule in hits]
        # A value that spans lines (a pasted PEM block) shows only in the lines read together.
        if len(numbered) > 1:
            together = Counter(rules_hit("\n".join(_text(line) for _, line in numbered))) - each
            span = f"{file}:{numbered[0][0]}-{numbered[-1][0]}"
            found += [Finding(span, "lines", rule) for rule in together.elements()]
    return found


def redact_file(path: Path, timeout: float | None = None) -> tuple[int, int]:
    """Redact every credential in the memory file and its quarantine file in place, under the
    lock, atomically.

    Returns (records changed, values redacted). A file with nothing to redact is not rewritten.
    """
    path = Path(path)
    totals = [0, 0]

    def change(snap: Snapshot) -> Snapshot | None:
        kept: Records = {}
        changed = []
        for rid, entry in snap.records.items():
            record, values = _redacted(entry.record)
            if values:
                changed.append(record)
                totals[0] += 1
                totals[1] += values
            else:
                kept[rid] = entry
        if not changed:
            # Rewriting moves leaky unreadable lines to the quarantine file, redacting them on the way.
            leaky = rules_hit("\n".join(_text(line) for line in snap.unreadable))
            return snap.edited() if leaky else None
        redacted: Records = {}  # by new id, the version logged or updated last, before stamping
        for record in changed:
            entry = Entry.of(record)
            rival = redacted.get(entry.id) or kept.get(entry.id)
            if rival is None or newer(rival, entry) is entry:
                redacted[entry.id] = entry
        for rid, entry in redacted.items():
            kept[rid] = Entry.of(_stamped(entry.record))
        return Snapshot(records=kept)

    def change_quarantine(_snap: Snapshot) -> None:
        quarantine = path.parent / QUARANTINE_FILE
        data = read_regular(str(quarantine)) or b""
        text, count = redact(_text(data))  # as one text: a value may span lines
        totals[1] += count
        if count:
            atomic_write(quarantine, text.encode("utf-8", "surrogateescape"))
        return None  # the memory file itself is left as it is

    # The write redacts unreadable lines on their way to the quarantine file; count those too.
    report = update(path, change, timeout=timeout)
    totals[1] += report.quarantine_redactions
    if (path.parent / QUARANTINE_FILE).exists():
        update(path, change_quarantine, timeout=timeout)
    return totals[0], totals[1]


def _lines(path: Path) -> list[bytes]:
    """The lines of a file as bytes (no newline); none if it does not exist."""
    return _split(read_regular(str(path)) or b"")


def _split(data: bytes) -> list[bytes]:
    return data.removesuffix(b"\n").split(b"\n") if data else []


def _text(line: bytes) -> str:
    """A line as text; bytes that are not UTF-8 survive a round trip (surrogateescape)."""
    return line.decode("utf-8", "surrogateescape")


def _redacted(record: dict) -> tuple[dict, int]:
    """The record with its fields redacted and re-identified; and how many values went."""
    out, count = dict(record), 0
    for field, strict in STRICT_ONLY.items():
        if isinstance(out.get(field), str):
            out[field], n = redact(out[field], strict_only=strict)
            count += n
    if not count:
        return record, 0
    type_ = out.get("type", "log")
    if type_ in TYPES and all(isinstance(out.get(f), str) for f in ("topic", "missing_context", "lesson")):
        out["id"] = record_id(type_, out["topic"], out["missing_context"], out["lesson"])
    return out, count


def _stamped(record: dict) -> dict:
    """The record with meta.updated set to now (its other meta kept)."""
    meta = dict(meta_of(record))
    meta["updated"] = utc_now()
    return {**record, "meta": meta}
