"""Credentials already in a memory file: find them (`scan`) and redact them in place (`redact_file`).

Redaction runs on every write, but a file can hold values from before a rule existed, from a
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

import logging
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from ..errors import StorageError
from ..record import contextdir
from ..record.contextdir import QUARANTINE_FILE, redacted_lines
from ..record.disk import atomic_write, read_regular
from ..record.merge import Records
from ..record.records import STRICT_ONLY, TYPES, Entry, meta_of, newer, record_id, utc_now
from ..record.snapshot import Snapshot, parse, utf8
from ..record.store import read, update
from ..redaction import redact, rules_hit


class Finding(NamedTuple):
    """A credential found in the memory file: where it is and which rule saw it, never its value.
    In a line that is not a record, record_id is "<file name>:<line number>" and field is "line"."""

    record_id: str
    field: str
    rule: str


# Checks that only need to know whether a file holds credentials (doctor, the pre-commit check)
# stop past this many: a cloned file of megabytes of credential-shaped lines would take minutes.
ENOUGH = 100


def scan(path: Path, limit: int | None = None) -> list[Finding]:
    """Every credential in the memory file at path (records by id, then lines that are not
    records) and in its quarantine file; reads without the lock and creates nothing. With
    `limit`, it stops once more than that many are found (those found so far)."""
    path = Path(path)
    return findings(read(path), _lines(path, memory=True), _lines(path.parent / QUARANTINE_FILE), path.name, limit)


def scan_bytes(
    memory: bytes, quarantine: bytes, name: str = "memory_log.jsonl", limit: int | None = None
) -> list[Finding]:
    """scan() of a memory file's and a quarantine file's bytes (e.g. as staged in git's index)."""
    return findings(parse(memory), _split(utf8(memory)), _split(quarantine), name, limit)


def findings(
    snap: Snapshot, memory_lines: list[bytes], quarantine_lines: list[bytes], name: str, limit: int | None = None
) -> list[Finding]:
    found: list[Finding] = []

    def enough() -> bool:
        return limit is not None and len(found) > limit

    for rid in sorted(snap.records):
        for field, value, strict in record_strings(snap.records[rid].record):
            hits = rules_hit(value, strict_only=strict)
            if hits:  # named by its id, redacted (the id may be a credential: a report is printed, logged)
                found += [Finding(redact(rid, strict_only=True)[0], field, rule) for rule in hits]
            if enough():
                return found
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
            if enough():
                return found
        # A value that spans lines (a pasted PEM block) shows only in the lines read together.
        if len(numbered) > 1:
            together = Counter(rules_hit("\n".join(_text(line) for _, line in numbered))) - each
            span = f"{file}:{numbered[0][0]}-{numbered[-1][0]}"
            found += [Finding(span, "lines", rule) for rule in together.elements()]
    return found


# What a person wrote in a record beside its topic (a log's id also holds its missing context, a
# principle's its lesson): a set-aside twin that differs in one of them says something else.
_OWN_FIELDS = ("missing_context", "lesson", "ask_next_time", "files")


def redact_file(path: Path, timeout: float | None = None) -> tuple[int, int]:
    """Redact every credential in the memory file and its quarantine file in place, under the
    lock, atomically.

    Returns (records changed, values redacted). A file with nothing to redact is not rewritten.
    """
    path = Path(path)
    totals = [0, 0]
    set_aside: list[Entry] = []

    def change(snap: Snapshot) -> Snapshot | None:
        kept: Records = {}
        changed = []
        set_aside.clear()  # (change() runs again when the file changed before the replace)
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
            if rival is not None:  # two lessons that differed only by a key: the older is set aside, not lost
                winner, loser = (entry, rival) if redacted.get(entry.id) is entry else (rival, entry)
                if any(loser.record.get(k) != winner.record.get(k) for k in _OWN_FIELDS):
                    set_aside.append(loser)
        for rid, entry in redacted.items():
            kept[rid] = Entry.of(_stamped(entry.record))
        # (to the quarantine file, staged with the memory file: both land or neither)
        return Snapshot(records=kept, unreadable=[e.data.rstrip(b"\n") for e in set_aside])

    def change_quarantine(_snap: Snapshot) -> None:
        quarantine = path.parent / QUARANTINE_FILE
        data = read_regular(str(quarantine)) or b""
        lines, count, whole = redacted_lines(_split(data))  # as the write redacts them: a key may span lines
        totals[1] += count
        if not whole:  # a key took lines with it: the file as it was, kept aside, and said
            copy = contextdir.conflicted_copy(str(quarantine), data)
            copy.commit()
            logging.getLogger("sentinel_memory").warning(
                "a value in the quarantine file spanned lines (a pasted key); the file as it was is kept as "
                "%s (git-ignored, on this machine only)",
                Path(copy.path).name,
            )
        if count or b"\0" in data:  # a NUL an earlier version kept goes too (redacted_lines)
            atomic_write(quarantine, b"".join(line + b"\n" for line in lines))
        return None  # the memory file itself is left as it is

    # The write redacts unreadable lines on their way to the quarantine file; count those too.
    report = update(path, change, timeout=timeout)
    totals[1] += report.quarantine_redactions
    if set_aside:
        where = (
            f"kept as the file was in {report.conflict_copy.name} (git-ignored, on this machine only)"
            if report.conflict_copy is not None and (report.set_aside_left_out or report.swallowed)
            else f"kept, redacted, in {QUARANTINE_FILE}"
        )
        logging.getLogger("sentinel_memory").warning(
            "%s became the same record as a newer one once the key was gone (the same id); %s: move what "
            "it adds into the record that stayed",
            "1 redacted record" if len(set_aside) == 1 else f"{len(set_aside)} redacted records",
            where,
        )
    if (path.parent / QUARANTINE_FILE).exists():
        update(path, change_quarantine, timeout=timeout)
    return totals[0], totals[1]


def nul_in_quarantine(path: Path) -> bool:
    """Whether the quarantine file beside the memory file at path holds a NUL byte, which an
    earlier version kept there and redact_file writes as redacted_lines does."""
    try:
        return b"\0" in (read_regular(str(Path(path).parent / QUARANTINE_FILE)) or b"")
    except StorageError:
        return False


def _lines(path: Path, memory: bool = False) -> list[bytes]:
    """The lines of a file as bytes (no newline); none if it does not exist. The memory file's as
    its reader reads them (a UTF-16 file as its text: record/snapshot.py utf8)."""
    data = read_regular(str(path)) or b""
    return _split(utf8(data) if memory else data)


def _split(data: bytes) -> list[bytes]:
    return data.removesuffix(b"\n").split(b"\n") if data else []


def _text(line: bytes) -> str:
    """A line as text; bytes that are not UTF-8 survive a round trip (surrogateescape)."""
    return line.decode("utf-8", "surrogateescape")


def _strict(field: str) -> bool:
    """Whether only the strict rules apply to what a record holds under a top-level key: the short
    fields' own rule (§6); every rule for everything else, which no write of ours checked."""
    return STRICT_ONLY.get(field, False)


def record_strings(record: dict) -> Iterator[tuple[str, str, bool]]:
    """Every string a record holds, wherever it is (a known field, an unknown or nested one, a
    meta key or value, a `files` entry, a list where a string belongs, the keys too): (where,
    the string, whether only the strict rules apply). Walked without recursion: a line may nest
    as deep as the JSON reader allows."""
    stack: list[tuple[str, object, bool]] = [(str(key), value, _strict(str(key))) for key, value in record.items()]
    stack.reverse()
    for key in record:
        if isinstance(key, str) and key not in STRICT_ONLY:
            yield "key", key, False
    while stack:
        where, value, strict = stack.pop()
        if isinstance(value, str):
            yield where, value, strict
        elif isinstance(value, dict):
            items = list(value.items())
            for key, _ in items:
                yield _place(where, "key"), str(key), strict
            stack += [(_place(where, str(key)), item, strict) for key, item in reversed(items)]
        elif isinstance(value, list):
            stack += [(f"{where}[{n}]", item, strict) for n, item in reversed(list(enumerate(value)))]


def _place(where: str, key: str) -> str:
    """A nested place's name for a report, e.g. meta.origin; kept short (a path may nest deep)."""
    name = f"{where}.{key}"
    return name if len(name) <= 80 else name[:38] + "..." + name[-39:]


def _redact_all(value, strict: bool) -> tuple[object, int]:
    """value with every string in it redacted (dict keys too), built without recursion; and how
    many values went."""
    count = 0

    def one(text: str) -> str:
        nonlocal count
        text, n = redact(text, strict_only=strict)
        count += n
        return text

    if not isinstance(value, (dict, list)):
        return (one(value) if isinstance(value, str) else value), count
    top: dict | list = {} if isinstance(value, dict) else []
    stack: list[tuple[dict | list, dict | list]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        for key, item in source.items() if isinstance(source, dict) else enumerate(source):
            if isinstance(item, (dict, list)):
                child: object = {} if isinstance(item, dict) else []
                stack.append((item, child))  # type: ignore[arg-type]  # a dict or a list, as made
            else:
                child = one(item) if isinstance(item, str) else item
            if isinstance(target, dict):
                target[one(key) if isinstance(key, str) else key] = child
            else:
                target.append(child)
    return top, count


def _redacted(record: dict) -> tuple[dict, int]:
    """The record with every string in it redacted (as `record_strings` lists them) and re-identified;
    and how many values went."""
    out: dict = {}
    count = 0
    for field, value in record.items():
        key = field
        if field not in STRICT_ONLY:
            key, n = redact(field)
            count += n
        out[key], n = _redact_all(value, _strict(field))
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
