"""Terminal output for people: display width that counts Korean as two columns, colour on a TTY only."""

from __future__ import annotations

import os
import sys
import unicodedata


def width(text: str) -> int:
    """Columns the text takes in a terminal: wide and full-width characters count two."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, columns: int, right: bool = False) -> str:
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


def table(rows: list[list[str]], header: list[str]) -> str:
    """A plain aligned table; columns sized by display width, numbers aligned on the right."""
    cols = [max(width(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    numeric = [bool(rows) and all(str(r[i]).isdigit() for r in rows) for i in range(len(header))]
    lines = ["  ".join(pad(str(cell), cols[i], numeric[i]) for i, cell in enumerate(r)).rstrip()
             for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * c for c in cols))
    return "\n".join(lines)


def colour(text: str, code: str, stream=None) -> str:
    """Wrap text in an ANSI colour when the stream is a terminal and NO_COLOR is not set."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        return text
    return f"\033[{code}m{text}\033[0m"
