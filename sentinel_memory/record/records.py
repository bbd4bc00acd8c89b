"""The record: normalisation, limits, ids and the exact line format of memory_log.jsonl."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime

from ..errors import InvalidInput
from ..values import Value

TYPES = ("log", "principle")
LIMITS = {"topic": 64, "missing_context": 1024, "lesson": 1024, "ask_next_time": 512}
# "files" (the cited files, docs/contract.md §3.7) comes after the keys of the first format, so
# readers that predate it keep it as an unknown field.
FIELD_ORDER = ("id", "type", "topic", "missing_context", "lesson", "ask_next_time", "meta", "files")
META_ORDER = ("created", "updated", "compacted_at", "source_count")
CONTENT_FIELDS = ("type", "topic", "missing_context", "lesson", "ask_next_time")
# Which redaction rules each text field gets (docs/contract.md §6): every rule on the free-text
# fields; only the unambiguous provider-format rules (strict) on the short ones.
STRICT_ONLY = {"topic": True, "missing_context": False, "lesson": False, "ask_next_time": True}

# Some line readers split on these even inside JSON strings; json.dumps leaves them raw.
_LINE_BREAKERS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"}
NOTHING_SAVED = "Nothing was saved."


def utc_now() -> str:
    """The current time as ISO 8601 UTC with seconds, e.g. 2026-02-27T10:30:00+00:00."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def normalize(value: str) -> str:
    """Strip surrounding whitespace and NFC-normalise, so every OS computes the same id."""
    return unicodedata.normalize("NFC", value.strip())


def utf8_len(value: str) -> int:
    return len(value.encode("utf-8"))


def truncate_utf8(value: str, limit: int) -> str:
    """Cut value to at most limit UTF-8 bytes without splitting a character."""
    return value.encode("utf-8")[:limit].decode("utf-8", "ignore").rstrip()


def record_id(type_: str, topic: str, missing_context: str, lesson: str) -> str:
    """First 16 hex chars of SHA-256 over topic+missing_context (log) or topic+lesson (principle)."""
    import hashlib  # here: a hook that shows records makes no id, and hashlib loads OpenSSL (4-5 ms)

    key = topic + (lesson if type_ == "principle" else missing_context)
    # surrogatepass: the same bytes for any text a write accepts; `scan --redact` re-identifies a
    # hand-written record whose text holds a lone surrogate ("\ud800" in the file) too
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# What a principle's author read of a source record: its text and cited files, not its dates
# (logging the same lesson again to clear a stale mark leaves it the same version).
REVISION_FIELDS = (*CONTENT_FIELDS, "files")
REVISION_LENGTH = 8


def revision(record: dict) -> str:
    """The version of a record's content: the first REVISION_LENGTH hex chars of SHA-256 over its
    text fields and cited files. compact_memory shows it as `<id>@<revision>`; a principle's save
    deletes a source only while the file still holds that version (docs/contract.md §4.3)."""
    body = json.dumps([record.get(name) for name in REVISION_FIELDS], ensure_ascii=False, sort_keys=True)
    import hashlib

    # surrogatepass: the same bytes for any text; a lone surrogate a hand edit left ("\\ud800") gets a version too
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:REVISION_LENGTH]


def versioned(record: dict) -> str:
    """The record's id with its version, as a principle's source_ids names what its author read."""
    return f"{record['id']}@{revision(record)}"


class Draft(Value):
    """A validated record body, ready to be upserted. redactions counts replaced secrets."""

    __slots__ = ("id", "type", "topic", "missing_context", "lesson", "ask_next_time", "redactions")

    def __init__(
        self, id: str, type: str, topic: str, missing_context: str, lesson: str, ask_next_time: str, redactions: int
    ) -> None:
        self.id = id
        self.type = type
        self.topic = topic
        self.missing_context = missing_context
        self.lesson = lesson
        self.ask_next_time = ask_next_time
        self.redactions = redactions

    def fields(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in CONTENT_FIELDS}


def _text(name: str, value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {type(value).__name__}. {NOTHING_SAVED}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8 from a command line, or a lone surrogate escape
        raise InvalidInput(
            f"{name} is not valid UTF-8 text (it holds bytes that are not UTF-8, or a lone surrogate); "
            f"write it as UTF-8 text and try again. {NOTHING_SAVED}"
        ) from None
    return normalize(value)


# A value more than this many times its limit cannot fit even after redaction, unless it is
# almost all credentials: it is refused before the costly steps (normalising, redacting) run on it.
EARLY_FACTOR = 8


def _bounded(name: str, value: object, cut: bool) -> object:
    """The value, refused at once (or, with cut, shortened) when its characters alone exceed
    EARLY_FACTOR times its byte limit (a character is at least one byte)."""
    if not isinstance(value, str) or len(value) <= EARLY_FACTOR * LIMITS[name]:
        return value
    value = value.strip()
    room = EARLY_FACTOR * LIMITS[name]
    if len(value) <= room:
        return value
    if cut:
        return value[:room]  # redacted and cut to its limit afterwards, like any principle's question
    raise InvalidInput(
        f"{name} is {len(value):,} characters; the limit is {LIMITS[name]:,} bytes in UTF-8, and a value "
        f"this long cannot fit even after redaction. Shorten it and try again. {NOTHING_SAVED}"
    )


def _too_long(name: str, value: str) -> InvalidInput:
    size, limit = utf8_len(value), LIMITS[name]
    return InvalidInput(
        f"{name} is {size:,} bytes in UTF-8; the limit is {limit:,}. Shorten it and try again. {NOTHING_SAVED}"
    )


def prepare(
    topic: object,
    missing_context: object,
    lesson: object,
    ask_next_time: object = "",
    type: object = "log",
) -> Draft:
    """Validate, normalise, redact and limit-check one record; raise InvalidInput on any fault.

    Order (docs/contract.md §3.5): trim + NFC, then redaction, then the byte limits on the values that
    will be stored, then the id. Only a principle's ask_next_time is ever truncated.
    """
    if type not in TYPES:
        raise InvalidInput(f'type must be "log" or "principle", not {str(type)[:40]!r}. {NOTHING_SAVED}')
    raw = {"topic": topic, "missing_context": missing_context, "lesson": lesson, "ask_next_time": ask_next_time}
    values = {
        name: _text(name, _bounded(name, value, cut=name == "ask_next_time" and type == "principle"))
        for name, value in raw.items()
    }
    if not values["topic"]:
        raise InvalidInput(f"topic is empty; give a short module-level tag such as auth or payment. {NOTHING_SAVED}")
    if not values["lesson"]:
        raise InvalidInput(f"lesson is empty; state the rule to apply next time. {NOTHING_SAVED}")
    if type == "log" and not values["missing_context"]:
        raise InvalidInput(
            "missing_context is empty; say what the instructions lacked "
            f'(only a type="principle" record may leave it empty). {NOTHING_SAVED}'
        )

    # Imported here, not at the top: building the redaction rules takes time that the server's
    # start-up, the read-only commands and git's drivers need not pay (their patterns compile
    # later still, when a text first reaches them: lazy.py).
    from ..redaction import redact

    redactions = 0
    for name, value in values.items():
        values[name], count = redact(value, strict_only=STRICT_ONLY[name])
        redactions += count

    for name, value in values.items():
        if utf8_len(value) <= LIMITS[name]:
            continue
        if name == "ask_next_time" and type == "principle":
            values[name] = truncate_utf8(value, LIMITS[name])
        else:
            raise _too_long(name, value)

    rid = record_id(type, values["topic"], values["missing_context"], values["lesson"])
    return Draft(id=rid, type=type, redactions=redactions, **values)


def _ordered(mapping: dict, order: tuple[str, ...]) -> dict:
    out = {key: mapping[key] for key in order if key in mapping}
    out.update((key, value) for key, value in mapping.items() if key not in out)
    return out


def canonical(record: dict) -> dict:
    """The record with keys in the contract's order; unknown keys kept, after the known ones."""
    out = _ordered(record, FIELD_ORDER)
    if isinstance(out.get("meta"), dict):
        out["meta"] = _ordered(out["meta"], META_ORDER)
    return out


def to_line(record: dict) -> str:
    """One JSONL line (no newline): UTF-8 text as itself, U+2028/U+2029/U+0085 escaped."""
    return json_text(canonical(record))


def json_text(value: object) -> str:
    """JSON on one line: UTF-8 text as itself, but the line breaks JSON leaves raw (U+2028, U+2029,
    U+0085) escaped, which some readers would split a line at, and a lone surrogate, which UTF-8
    cannot hold, escaped as JSON writes it (\\ud800)."""
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _LINE_BREAKERS.items():
        if raw in text:
            text = text.replace(raw, escaped)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate a hand edit left ("\ud800" in the file)
        import re

        text = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def parse_line(line: str) -> dict | None:
    """The record on one line, or None when the line is not a JSON object with a string id."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: thousands of nested brackets
        return None
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        return value
    return None


# ------------------------------------------------------------------ reading a record safely
# A record read from the file may come from another tool or a hand edit: these accessors never
# assume more than parse_line checked (a JSON object with a string id).


def meta_of(record: dict) -> dict:
    """The record's meta object, or {} when it has none (or something else in its place)."""
    meta = record.get("meta")
    return meta if isinstance(meta, dict) else {}


def topic_of(record: dict) -> str:
    """The record's topic, as the key that groups and filters it: a string NFC-normalised (as a
    write stores it; a hand edit on a Mac may leave 결제 decomposed, which is the same topic); a
    value of another JSON type (a hand edit: a number, a list) as its text, as compaction names
    its group."""
    topic = record.get("topic", "")
    if not isinstance(topic, str):
        return str(topic)
    return topic if topic.isascii() or unicodedata.is_normalized("NFC", topic) else unicodedata.normalize("NFC", topic)


def is_principle(record: dict) -> bool:
    return record.get("type") == "principle"


def count_types(records: Iterable[dict]) -> tuple[int, int]:
    """(logs, principles) among these records; anything that is not a principle counts as a log."""
    total = principles = 0
    for record in records:
        total += 1
        principles += is_principle(record)
    return total - principles, principles


def stands_for(record: dict) -> int:
    """How many original logs a record stands for: 1 for a log, source_count for a principle."""
    if is_principle(record):
        count = meta_of(record).get("source_count")
        return count if isinstance(count, int) and count > 0 else 1
    return 1


def recency(record: dict) -> str:
    """The record's newest timestamp (updated, else created), for newer-wins decisions."""
    meta = meta_of(record)
    stamp = meta.get("updated") or meta.get("created") or ""
    return stamp if isinstance(stamp, str) else ""


class Entry:
    """A record and the exact line it was read from (so unchanged lines are copied byte for byte).

    Treat it as immutable: snapshots are cached and shared. `data` is the line's bytes with its
    newline, ready to write. Entries compare by identity (the search index relies on it).
    """

    __slots__ = ("record", "line", "data")

    def __init__(self, record: dict, line: str, data: bytes | None = None):
        self.record = record
        self.line = line
        self.data = data if data is not None else (line + "\n").encode("utf-8")

    @property
    def id(self) -> str:
        return self.record["id"]

    @classmethod
    def of(cls, record: dict) -> Entry:
        record = canonical(record)
        return cls(record, to_line(record))

    def __repr__(self) -> str:
        return f"Entry({self.line!r})"


def newer(a: Entry, b: Entry) -> Entry:
    """The newer of two versions of one record; ties broken on content so the choice is symmetric."""
    return max(a, b, key=lambda e: (recency(e.record), e.line))
