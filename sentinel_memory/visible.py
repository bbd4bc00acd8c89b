"""Text a person reads (the commands' output, git's diff through our textconv): every character
that a terminal acts on or that hides or reorders text becomes a visible escape, so a teammate's
record cannot set a window title or the clipboard (ESC, OSC 52), ring, hide text, overwrite a line
(CR), or show "deploy on Fridays is fine" where the file says otherwise (BiDi overrides).

Escaped: the C0 controls (line feed and tab kept where the format breaks lines), DEL, the C1
controls, Unicode's format characters (BiDi embeddings, overrides and isolates, zero-width
spaces and joiners, the soft hyphen, the byte order mark, tags), the line and paragraph
separators, and lone surrogates (bytes that were not UTF-8). As `\\x1b`, `\\u202e`, `\\U000e0041`.
The memory file keeps the bytes; only what is shown changes.
"""

from __future__ import annotations

import re

from .lazy import lazy

# Unicode's Cc, Cf, Zl, Zp and Cs characters, spelt out: computing them from unicodedata would cost
# every command's start. tests/test_visible.py checks the list against this Python's Unicode.
# FORMAT (Cf) is also what the redaction removes from a key it finds split (redaction/engine.py).
FORMAT = (
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_HIDDEN = "\x00-\x08\x0b-\x1f\x7f-\x9f" + FORMAT + "\u2028\u2029\ud800-\udfff"
# (Compiled when a text first holds a character that is not printable: str.isprintable() is false
# for each of them, and for the tab and the line feed.)
_ONE_LINE = lazy(f"[\t\n{_HIDDEN}]")
_LINES = lazy(f"[{_HIDDEN}]")
# Fields a block shows on one line of its own: a line break there is escaped too.
ONE_LINE_FIELDS = ("id", "type", "topic")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


# What ends or rewrites a line for a reader of lines (a shell, git): the C0 and C1 controls and the
# line and paragraph separators, and nothing else (a name's zero-width joiner stays).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def controls_visible(text: str) -> str:
    """text with its control characters and line separators as escapes, as visible() writes them."""
    return _CONTROLS.sub(_escape, text)


def visible(text: str, lines: bool = False) -> str:
    """text with its hidden and control characters as escapes; with `lines`, line feeds and tabs
    stay (for a field a block shows over several lines)."""
    if text.isprintable() or (lines and text.replace("\n", "").replace("\t", "").isprintable()):
        return text
    return (_LINES if lines else _ONE_LINE).sub(_escape, text)


def visible_record(record: dict) -> dict:
    """A copy of a record for showing: the strings of its fields, its meta and its cited files
    made visible (line breaks kept only in the free-text fields); other values as they are."""
    out: dict = {}
    for key, value in record.items():
        if isinstance(value, str):
            value = visible(value, lines=key not in ONE_LINE_FIELDS)
        elif key == "meta" and isinstance(value, dict):
            value = {visible(str(k)): visible(v) if isinstance(v, str) else v for k, v in value.items()}
        elif key == "files" and isinstance(value, list):
            value = [visible(f) if isinstance(f, str) else f for f in value]
        out[visible(str(key))] = value
    return out


def _json_escape(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible_json(text: str) -> str:
    """JSON text (json.dumps with ensure_ascii=False) with the hidden and control characters of its
    strings as JSON's escapes (`\\u202e`, a surrogate pair past U+FFFF, a lone surrogate as
    itself): the same values for a parser, nothing a terminal acts on, and always encodable."""
    return _LINES.sub(_json_escape, text)
