"""Text laid out for a terminal: display widths that count Korean and other wide characters as
two columns, aligned tables, colour only on a terminal (and never with NO_COLOR), and lines fitted to
the terminal's width. cli/console.py's words use it; pipes and files get the text as it is."""

from __future__ import annotations

import os
import re
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
    lines = [
        "  ".join(pad(str(cell), cols[i], numeric[i]) for i, cell in enumerate(r)).rstrip() for r in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * c for c in cols))
    return "\n".join(lines)


def colour(text: str, code: str, stream=None) -> str:
    """Wrap text in an ANSI colour when the stream is a terminal and NO_COLOR is unset or empty."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or not getattr(stream, "isatty", lambda: False)():
        return text
    return f"\033[{code}m{text}\033[0m"


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _columns(text: str) -> int:
    """Display columns, our own colour codes aside."""
    return width(_COLOUR.sub("", text))


def fit(line: str, columns: int) -> list[str]:
    """One printed line as lines of at most `columns` display columns, broken at spaces, each
    continuation indented two columns past the line's own indent. A word longer than the room
    (a path, an id) stays whole on its own line."""
    if _columns(line) <= columns:
        return [line]
    indent = line[: len(line) - len(line.lstrip(" "))]
    more = indent + "  "
    out: list[str] = []
    current = indent
    for word in line.strip(" ").split(" "):
        if not word:
            continue
        room = _columns(current) + (0 if current.strip() == "" else 1) + _columns(word)
        if current.strip() and room > columns:
            out.append(current)
            current = more + word
        else:
            current += ("" if current.strip() == "" else " ") + word
    out.append(current)
    return out


class Wrapped:
    """A terminal's text stream whose lines are fitted to its width (pipes and files are left as
    they are: the caller wraps only a terminal)."""

    def __init__(self, stream, columns: int):
        self.stream, self.columns, self.pending = stream, max(columns, 40), ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            self.stream.write("\n".join(fit(line, self.columns)) + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending:
            self.stream.write("\n".join(fit(self.pending, self.columns)))
            self.pending = ""
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)
