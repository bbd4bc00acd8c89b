"""Markdown for people to read in a pull request or a wiki: `export`'s document of the memory, and
the escaping `review`'s report shares. What a record holds shows as it is, never as Markdown,
HTML or an @-mention of its own; control characters show as escapes (visible.py)."""

from __future__ import annotations

import re
from pathlib import Path

from ..record.citations import shown
from ..record.records import is_principle, meta_of
from ..tools.blocks import day, files_line, plural, stale_line
from ..visible import visible

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#|~!$])")  # `$`: GitHub reads $...$ as math
# What starts a block of its own at the start of a line that md() leaves as it is: a list item
# (`-`, `+`, `1.`, `1)`), a setext heading's underline (`===`).
_LINE_START = re.compile(r"^(\s*)(?:([-+=])|(\d+)([.)]))")


# Where GitHub's Markdown makes a bare address a link (its autolink extension): a scheme's `:`
# before `//`, and `www.`. Escaped (`http\://`, `www\.`), they show the same and link nothing.
_AUTOLINK = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*:(?=//)|\bwww\.")


def md(value: object) -> str:
    """Text as Markdown that shows it as it is: no formatting, HTML or @-mention of its own, one
    line (a line break as `<br>`); control characters visible (visible.py)."""
    out = _MARKDOWN_SPECIAL.sub(r"\\\1", visible(str(value), lines=True))
    out = _AUTOLINK.sub(lambda m: m.group(0)[:-1] + "\\" + m.group(0)[-1], out)  # http\://, www\.
    out = out.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("@", "@&#8203;")
    return out.replace("\r\n", "\n").replace("\n", "<br>")


def md_lines(value: object, indent: str = "  ") -> str:
    """md() of a text over several lines: each line on a line of its own, indented to stay inside
    a list item, none able to start a block of its own (a heading, a list, a fence, a table)."""
    lines = visible(str(value), lines=True).split("\n")
    out = [md(lines[0])] + [_LINE_START.sub(_escape_start, md(line)) for line in lines[1:]]
    return ("\n" + indent).join(out)


def _escape_start(match: re.Match) -> str:
    space, sign, number, end = match.groups()
    return f"{space}\\{sign}" if sign else f"{space}{number}\\{end}"


def code(value: object) -> str:
    """Inline code for an id or a path: fenced by one backtick more than its longest run of them, so
    no text of a record ends the code early (and what followed would be read as Markdown)."""
    text = visible(shown(str(value))).replace("\n", " ")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def markdown(records: list[dict], source: Path, stale: dict | None = None) -> str:
    """The memory as a Markdown document: one section per topic, principles first, then logs;
    a stale record carries its mark. What a record holds shows as it is, never as Markdown or
    HTML of its own (md(), code()), so the file can be read in a pull request or a wiki; control
    characters show as escapes (visible.py)."""
    stale = stale or {}
    out = [f"# Project memory\n\n{plural(len(records), 'record')} from {code(source)}.\n"]
    by_topic: dict[str, list[dict]] = {}
    for r in records:
        by_topic.setdefault(str(r.get("topic") or ""), []).append(r)
    for topic in sorted(by_topic):
        out.append(f"## {md(visible(topic)) if topic else '(no topic)'}\n")
        for r in sorted(by_topic[topic], key=lambda r: (not is_principle(r), str(r["id"]))):
            meta = meta_of(r)
            if is_principle(r):
                when = f"compacted {day(meta.get('compacted_at'))} from {meta.get('source_count', 0)} records"
            else:
                when = day(meta.get("created"))
            if meta.get("updated"):
                when += f", updated {day(meta.get('updated'))}"
            out.append(f"### {md(visible(str(r.get('type', 'log'))))} {code(r['id'])} ({md(visible(when))})\n")
            if r["id"] in stale:
                out.append(f"- **{md(stale_line(stale[r['id']]))}**")
            if files_line(r):
                out.append("- **files**: " + ", ".join(code(f) for f in r["files"]))
            out += [
                f"- **{name}**: " + md_lines(r[name])
                for name in ("missing_context", "lesson", "ask_next_time")
                if r.get(name)
            ]
            out.append("")
    return "\n".join(out)
