"""A record's block as the tools list it (tools/render.py's answers and tools/compaction_answer.py's
list records this way, and cli/console.py's commands reuse its lines): the header, the cited
files, the fields by their short names, the stale line under the header; the card search keeps
(the block with its estimated tokens and UTF-8 bytes, ranked.Layout); and the token estimate."""

from __future__ import annotations

import re
from functools import lru_cache

from ..lazy import lazy
from ..record.citations import shown
from ..record.records import meta_of

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:  # for annotations only
    from ..git.staleness import Change


def day(stamp: object) -> str:
    return one_line(str(stamp)[:10]) if stamp else "?"


# What some reader or other takes for the end of a line.
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def field_line(name: str, value: object) -> str:
    """One field; continuation lines are indented so a value can never pose as a record header."""
    text = str(value) if value not in (None, "") else "-"
    return f"{name}: " + _LINE_BREAK.sub("\n  ", text)


def one_line(value: object) -> str:
    """A value for a block's first line: its line breaks as spaces, so that no value of a record
    (an id or a topic a hand edit gave a line break) can start a line that poses as another's."""
    return _LINE_BREAK.sub(" ", str(value))


def topic_name(topic: object) -> str:
    """A topic as a list or a heading names it: on one line, and redacted by the rules a write
    applies to a topic (a hand-written topic may hold a key; docs/contract.md §6)."""
    return _topic_name(one_line(topic))


@lru_cache(maxsize=4096)
def _topic_name(text: str) -> str:
    from ..record.records import LIMITS
    from ..redaction import redact

    room = SHOWN_OVER * LIMITS["topic"]
    shown = redact(text[: room + REDACTED_PAST], strict_only=True)[0]
    return over_limit(shown, text, room, LIMITS["topic"]) if len(text) > room else shown


def header(record: dict) -> str:
    """The record's first line in a listing: id, `principle` for a principle, topic and dates."""
    meta = meta_of(record)
    kind = record.get("type", "log")
    parts = [one_line(record["id"])]
    if kind != "log":
        parts.append(one_line(kind))
    parts.append(one_line(record.get("topic", "")))
    if kind == "principle":
        count = meta.get("source_count", 0)  # a hand edit may give it any JSON value
        sources = plural(count, "record") if isinstance(count, int) else "? records"
        when = f"compacted {day(meta.get('compacted_at') or meta.get('created'))} from {sources}"
    else:
        when = day(meta.get("created"))
    if meta.get("updated"):
        when += f", updated {day(meta.get('updated'))}"
    parts.append(when)
    return " | ".join(parts)


STALE_ADVICE = "Verify before applying; if it still holds, log it again to refresh it."


def _commits(change: Change) -> str:
    count = f"{change.commits}+" if change.at_least else str(change.commits)
    return f"{count} commit{'' if change.commits == 1 and not change.at_least else 's'} since"


def stale_change(change: Change) -> str:
    """What happened to one cited file: which, how, how many commits since, the latest one. The
    paths by the strict rules, as the record's `files` line shows them (a file named like a key)."""
    from ..redaction import redact

    latest = f"latest {change.latest} on {change.date}"
    path = shown(redact(change.path, strict_only=True)[0])
    if change.renamed_to:
        gone = ", since deleted" if change.deleted else ""
        renamed = shown(redact(change.renamed_to, strict_only=True)[0])
        return f"{path} was renamed to {renamed}{gone} ({_commits(change)}; {latest})"
    if change.deleted:
        return f"{path} was deleted ({_commits(change)}; {latest})"
    return f"{path} changed ({_commits(change)}; {latest})"


def stale_line(mark: tuple) -> str:
    """The line that marks a stale record: `stale:`, why, and what to do."""
    return (
        "stale: the code it cites changed after this was written: "
        + "; ".join(stale_change(c) for c in mark)
        + ". "
        + STALE_ADVICE
    )


def files_line(record: dict) -> str | None:
    files = record.get("files")
    if not isinstance(files, list) or not files:
        return None
    return "files: " + ", ".join(shown(str(f)) for f in files)


# A listed record's fields, by the short names its block gives them (the legend in search's header
# says what each holds); an empty field is left out.
FIELD_NAMES = (("missing_context", "missing"), ("lesson", "lesson"), ("ask_next_time", "ask"))
LEGEND = (
    "Each record: #n id | topic | date; files it cites; missing: what the task's instructions "
    "lacked; lesson: what to do; ask: a question for the user."
)


def record_body(record: dict, redacted: bool = False) -> str:
    """A record's block without its number: the same for a record wherever it is listed, so
    search makes it once per record however often it is searched. (Its stale mark is not part of
    it: search adds that line under the header as it lists the record.) Empty fields are left out;
    the text of the others is verbatim (continuation lines indented), but for a value that looks
    like a credential (without_credentials; redacted: the caller applied it already)."""
    if not redacted:
        record = without_credentials(record)
    lines = [header(record)]
    cited = files_line(record)
    if cited:
        lines.append(cited)
    for key, name in FIELD_NAMES:
        value = record.get(key)
        if value not in (None, ""):
            lines.append(field_line(name, value))
    return "\n".join(lines)


def without_credentials(record: dict) -> dict:
    """The record as the tools and the hooks show it: a value that looks like a credential replaced
    with [REDACTED] by the rules a write applies to that field, and the strict rules on the cited
    paths (docs/contract.md §6). A record written through the tools was redacted then and comes
    back unchanged; one written by hand, by another program or in a cloned repository may hold a
    key, which an answer or a hook would otherwise carry into the model's context and the client's
    transcript on disk. `scan` finds such values in the file and `scan --redact` removes them."""
    from ..record.records import LIMITS, STRICT_ONLY
    from ..redaction import redact

    changed: dict = {}
    # What the header shows besides the topic (a hand edit may make the id or the type anything):
    # by the strict rules, as a cited path is.
    for key in ("id", "type"):
        value = record.get(key)
        if value is not None and value != "log":
            text = value if isinstance(value, str) else str(value)
            shown, count = redact(text, strict_only=True)
            if count or not isinstance(value, str):
                changed[key] = shown
    for key, strict in STRICT_ONLY.items():
        value = record.get(key)
        if value is not None and not isinstance(value, str):  # a list or an object: shown as its text
            value = str(value)
            changed[key] = value
        if isinstance(value, str) and value:
            room = SHOWN_OVER * LIMITS[key]
            # Redacted a little past what is shown, so that a credential the cut goes through is
            # still whole when the rules read it.
            text, count = redact(value[: room + REDACTED_PAST], strict_only=strict)
            if len(value) > room:
                text, count = over_limit(text, value, room, LIMITS[key]), 1
            if count:
                changed[key] = text
    files = record.get("files")
    if isinstance(files, list) and files:
        paths = [redact(f if isinstance(f, str) else str(f), strict_only=True)[0] for f in files]
        if paths != files:
            changed["files"] = paths
    return {**record, **changed} if changed else record


SHOWN_OVER = 2  # a field is shown up to this many times its limit in characters (over_limit)
REDACTED_PAST = 4096  # characters past that which are redacted with it


def over_limit(redacted: str, value: str, room: int, limit: int) -> str:
    """A field that holds more than SHOWN_OVER times its limit in characters (a line written by
    hand or by another program: log_memory keeps the limit) as shown: the beginning of its redacted
    text, and how much is not shown. Redacting and listing a field of megabytes would hold an
    answer for minutes and fill it."""
    return (
        f"{redacted[:room]}… [{len(value) - room:,} more characters not shown: over the field's limit of {limit} bytes]"
    )


def source_lines(record: dict, ask: bool = True) -> list[str]:
    """A record's lesson (and its question, when `ask` and it has one), indented under its line, as
    compact_memory and a principle's save list the records a principle sums up; shown as blocks
    show them (without_credentials)."""
    view = without_credentials(record)
    lines = ["    " + field_line("lesson", view.get("lesson")).replace("\n", "\n    ")]
    if ask and view.get("ask_next_time"):
        lines.append("    " + field_line("ask_next_time", view.get("ask_next_time")).replace("\n", "\n    "))
    return lines


def numbered(number: int, body: str) -> str:
    """A record's block as the number-th of a listing."""
    return f"#{number} {body}"


# A lone surrogate: what a record's "\\ud800" escape reads as (JSON allows it; a hand edit or a
# cloned repository may hold one). It has no UTF-8, so an answer that held it could not be sent.
_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(text: str) -> str:
    """text with each lone surrogate as its escape (`\\ud800`, as the hooks and the commands show
    it), so a record holding one is listed like the others instead of failing the whole answer."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def card(record: dict) -> tuple[str, int, int]:
    """A record's block for a listing, with its estimated tokens and UTF-8 bytes (ranked.Layout)."""
    body = sendable(record_body(record))
    return body, estimate_tokens(body), len(body.encode("utf-8"))


def with_line(card: tuple[str, int, int], line: str) -> tuple[str, int, int]:
    """A card with one more line under the block's header (a stale mark)."""
    body, tokens, size = card
    line = sendable(line)
    if "\n" in body:
        cut = body.index("\n") + 1
        joined = f"{body[:cut]}{line}\n{body[cut:]}"
    else:
        joined = f"{body}\n{line}"
    return joined, tokens + estimate_tokens(line), size + len(line.encode("utf-8")) + 1


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


ECHO_LIMIT = 200  # characters of a caller's query or topic an answer repeats


def echoed(text: str) -> str:
    """A query or topic as an answer repeats it: cut to ECHO_LIMIT characters, saying how long it
    was, so a 1 MB argument does not come back whole (the answer's bound, docs/contract.md §4.6)."""
    if len(text) <= ECHO_LIMIT:
        return text
    return f"{text[:ECHO_LIMIT]}... ({len(text):,} characters)"


# The token estimate, fitted to cl100k on the blocks of memories built from four projects' commit
# history and on Korean records (bench/search_quality.py checks it): in thousandths of a token,
# what each of these adds: an ASCII character, plus a run of ASCII letters (a word), a digit, an
# ASCII punctuation mark; a Hangul syllable; any other character.
_ASCII, _WORD_RUN, _DIGIT, _PUNCT, _HANGUL, _OTHER = 82, 560, 760, 630, 1220, 1500
_LETTERS = re.compile(r"[A-Za-z]+")
_DIGITS = re.compile(r"[0-9]")
_PUNCTS = re.compile(r"[!-/:-@\[-`{-~]")
_SYLLABLES = lazy(r"[\uac00-\ud7a3]")  # (compiled for a text that is not ASCII only)


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate of text's cl100k tokens, within about 10% on English and Korean
    (bench/search_quality.py measures it)."""
    ascii_chars = len(text.encode("ascii", "ignore"))
    syllables = len(_SYLLABLES.findall(text)) if ascii_chars < len(text) else 0
    return (
        _ASCII * ascii_chars
        + _WORD_RUN * len(_LETTERS.findall(text))
        + _DIGIT * len(_DIGITS.findall(text))
        + _PUNCT * len(_PUNCTS.findall(text))
        + _HANGUL * syllables
        + _OTHER * (len(text) - ascii_chars - syllables)
    ) // 1000 + 1
