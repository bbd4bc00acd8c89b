"""Context rules for a credential written in a table: a cell of a Markdown table or a CSV file in a
column headed by a credential word or a key's name (| Service | API Key |, service,datadog_api_key),
the second cell of a two-column table of names and values, and SQL: the value an UPDATE sets on
the setting a credential names, and the literal of an INSERT's VALUES under a credential's column.
redaction/forms.py runs them in its order, among the rules for the other written forms."""

from __future__ import annotations

import bisect
import functools
import re

from ..lazy import lazy
from .gates import _PROSE_GATE, _words
from .rules import Rule
from .values import _GENERIC_KEY, _SECRET_KEYWORD, _is_placeholder, _looks_like_secret, _random_value, _strongly_secret

# A table: a cell of a Markdown table or of CSV in a column whose header is a credential word or
# a key name (| Service | API Key |, service,datadog_api_key,owner).
_TABLE_CELL = lazy(r"(?m)(?<=\|)[ \t]*`?(?P<bare>[^|\s`]{8,256})`?[ \t]*(?=\|)")
_CSV_CELL = lazy(r"""(?m)(?:^|(?<=,))(?P<bare>[^,\s"'`|]{8,256})(?=,|[ \t]*\r?$)""")
_CREDENTIAL_HEADER = lazy(
    r"[ \t*_`\"]*(?:(?i:(?:api|access|secret|private|auth)?[ _\-]?(?:key|token|secret|password|passwd|credential)s?)"
    r"|비밀번호|토큰|시크릿|키|인증키|API[ ]?키|[\w.\- ]{0,60}?(?:"
    + _SECRET_KEYWORD
    + "|"
    + _GENERIC_KEY
    + r"))[ \t*_`\"]*",
)
_TABLE_RULE_LINE = lazy(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*:?-*:?[ \t]*")
_LOOK_BACK_LINES = 64  # the rows a header may stand above a cell (a bound on the work per cell)


def _lines_above(text: str, line_start: int) -> list[str]:
    """Up to _LOOK_BACK_LINES lines above the line that starts at line_start, nearest first."""
    lines: list[str] = []
    end = line_start - 1
    while end >= 0 and len(lines) < _LOOK_BACK_LINES:
        start = text.rfind("\n", 0, end) + 1
        lines.append(text[start:end].rstrip("\r"))
        end = start - 1
    return lines


def _secret_cell(value: str) -> bool:
    return not _is_placeholder(value) and (_random_value(value) or _looks_like_secret(value))


def _table_cell(match: re.Match, value: str) -> bool:
    """The cell's column must be headed by a credential word (the header is the row above the
    |---| line of the table that holds the cell), and the value must look like a secret."""
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    column = text.count("|", line_start, match.start())
    if column >= 2:  # a two-column table of names and values: | **API key** | `…` |
        line_end = text.find("\n", match.end())
        row = text[line_start : len(text) if line_end == -1 else line_end].split("|")
        if _CREDENTIAL_HEADER.fullmatch(row[column - 1]) and _secret_cell(value):
            return True
    above = _lines_above(text, line_start)
    for i, line in enumerate(above[:-1]):
        if _TABLE_RULE_LINE.fullmatch(line):
            header = above[i + 1].split("|")
            break
        if "|" not in line:
            return False
    else:
        return False
    return column < len(header) and bool(_CREDENTIAL_HEADER.fullmatch(header[column])) and _secret_cell(value)


def _csv_cell(match: re.Match, value: str) -> bool:
    """The header is the first of the lines above with as many commas as the cell's line."""
    if not _secret_cell(value):
        return False
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    header = _csv_headers(text).get(line_start)
    if header is None:
        return False
    cells = header.split(",")
    column = text.count(",", line_start, match.start())
    return bool(_CREDENTIAL_HEADER.fullmatch(cells[column]))


@functools.lru_cache(maxsize=16)
def _csv_headers(text: str) -> dict[int, str]:
    """For each line under the first of a run of lines with the same number of commas (one or
    more): where it starts, and that first line (one pass per text: its cells share it)."""
    out: dict[int, str] = {}
    header, previous, start = "", -1, 0
    for line in text.split("\n"):
        commas = line.count(",")
        if commas and commas == previous:
            out[start] = header
        else:
            header = line.rstrip("\r")
        previous, start = commas, start + len(line) + 1
    return out


def _csv_gate(low: str) -> bool:
    return "\n" in low and _PROSE_GATE(low)


# SQL: UPDATE settings SET value = '…' WHERE name = 'nytimes_api_key'; and INSERT INTO t (service,
# api_key) VALUES ('x', '…'): the literal in the column, or of the row, that a credential names.
_SQL_NAMED = lazy(
    r"""(?i:set)[ \t]+[\w.]{0,30}?(?i:value|val)[ \t]*=[ \t]*'(?P<sq>[^'\n]{6,200})'[ \t]+(?i:where)[ \t]+"""
    r"""[\w.]{0,30}?(?i:name|key|setting|id)[ \t]*=[ \t]*'[\w.\-]{0,60}?(?:"""
    + _SECRET_KEYWORD
    + "|"
    + _GENERIC_KEY
    + r")'"
)
_SQL_INSERT = lazy(
    r"(?i:insert[ \t]+into)[ \t]+[\w.\"`]{1,80}[ \t]*\((?P<cols>[^()\n]{1,400})\)[ \t]*(?i:values)[ \t]*\("
    r"(?P<vals>(?:[ \t]*(?:'[^'\n]{0,256}'|[\w.\-]{1,40})[ \t]*,){0,20}[ \t]*(?:'[^'\n]{0,256}'|[\w.\-]{1,40}))[ \t]*\)"
)
_SQL_LITERAL = lazy(r"'([^'\n]{0,256})'|[\w.\-]{1,40}")
_COLUMN_NAME = lazy(r"[ \t\"`]*[\w.\-]{0,60}?(?:" + _SECRET_KEYWORD + "|" + _GENERIC_KEY + r")[ \t\"`]*")


_INSERT_AT = lazy(r"(?i:insert[ \t]+into)")
_SQL_VALUE = lazy(r"'(?P<sq>[^'\n]{6,256})'")


def _sql_insert_value(match: re.Match, value: str) -> bool:
    """A literal of an INSERT's VALUES under a column named like a credential."""
    text = match.string
    starts = _insert_starts(text)
    i = bisect.bisect_left(starts, match.start())
    columns = _insert_columns(text, starts[i - 1]) if i else {}
    return columns.get(match.start(), False) and _secret_cell(value)


@functools.lru_cache(maxsize=64)
def _insert_starts(text: str) -> list[int]:
    return [m.start() for m in _INSERT_AT.finditer(text)]


@functools.lru_cache(maxsize=64)
def _insert_columns(text: str, at: int) -> dict[int, bool]:
    """Where each literal of the INSERT at `at` starts, and whether its column names a credential
    (once per statement: its literals share it)."""
    statement = _SQL_INSERT.match(text, at)
    if statement is None:
        return {}
    cols = statement.group("cols").split(",")
    literals = _SQL_LITERAL.finditer(text, statement.start("vals"), statement.end("vals"))
    return {lit.start(): i < len(cols) and bool(_COLUMN_NAME.fullmatch(cols[i])) for i, lit in enumerate(literals)}


def _sql_insert_gate(low: str) -> bool:
    return "insert" in low and "values" in low


TABLE_COLUMN = Rule(
    name="table_column",
    pattern=_TABLE_CELL,
    strict=False,
    groups=("bare",),
    accept=_table_cell,
    needles=("|",),
    gate=_PROSE_GATE,
)

CSV_COLUMN = Rule(
    name="csv_column",
    pattern=_CSV_CELL,
    strict=False,
    groups=("bare",),
    accept=_csv_cell,
    needles=(",",),
    gate=_csv_gate,
)

SQL_NAMED_VALUE = Rule(
    name="sql_named_value",
    pattern=_SQL_NAMED,
    strict=False,
    groups=("sq",),
    accept=lambda m, v: _random_value(v) or _strongly_secret(v),
    gate=_words("where"),
)

SQL_INSERT_VALUE = Rule(
    name="sql_insert_value",
    pattern=_SQL_VALUE,
    strict=False,
    groups=("sq",),
    accept=_sql_insert_value,
    gate=_sql_insert_gate,
)
