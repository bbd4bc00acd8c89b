"""The words of `review` (cli/review.py): the one-line summary, the report for a terminal (the
record blocks of `show`, a changed field as old -> new, widths that count Korean as two columns)
and the Markdown for a pull-request comment or a job summary (long sections collapsed, the whole
within a comment's size, and what was left out said)."""

from __future__ import annotations

from ..git.drivers import readable_block
from ..invocation import SELF
from ..record.citations import shown
from ..record.compare import Changed, Fold
from ..record.records import is_principle, meta_of
from ..tools.blocks import day, plural, stale_line
from ..visible import visible
from .layout import colour, width
from .markdown import code, md
from .review import Review
from .review_flags import KINDS, Flag

FEW = 5  # a Markdown section with more records than this is collapsed
COMMENT_LIMIT = 65_536  # characters of a pull-request comment on GitHub, the most common code host
MARKER = "<!-- sentinel-memory review -->"  # lets a CI step find and update its one comment
COLUMNS = 100  # a changed field fits on one line as old -> new within this many columns
_RESERVE = 800  # characters kept for what was left out and the closing tags


def summary(review: Review) -> str:
    """ "3 lessons added, 1 changed, 12 folded into 2 principles, 1 flag"."""
    c = review.comparison
    principles = sum(1 for r in c.added if is_principle(r))
    parts = []
    if len(c.added) - principles:
        parts.append(f"{plural(len(c.added) - principles, 'lesson')} added")
    if principles:
        parts.append(f"{plural(principles, 'principle')} added")
    if c.changed:
        parts.append(f"{len(c.changed):,} changed")
    if c.folds:
        parts.append(f"{c.folded:,} folded into {plural(len(c.folds), 'principle')}")
    if c.removed:
        parts.append(f"{len(c.removed):,} removed")
    if not parts:
        parts.append("no change to the memory")
    parts.append(plural(len(review.flags), "flag") if review.flags else "no flags")
    return ", ".join(parts)


def _sides(review: Review) -> str:
    path = review.head.path or review.base.path or ".context/memory_log.jsonl"
    return f"{review.base.label} -> {review.head.label}, {path}"


def _flag_text(flag: Flag) -> str:
    return visible(f"{KINDS[flag.kind]}: " + (f"{flag.record_id} " if flag.record_id else "") + flag.detail)


# ------------------------------------------------------------------------------------- terminal


def text(review: Review) -> str:
    c = review.comparison
    out = [colour(summary(review), "1"), f"  {visible(_sides(review))}"]
    out += [colour(f"  note: {visible(note)}", "33") for note in review.notes]
    if review.flags:
        out += ["", colour(f"Flags ({len(review.flags):,})", "1;31")]
        out += [f"  ! {_flag_text(f)}" for f in review.flags]
    if c.added:
        out += ["", colour(f"Added ({len(c.added):,})", "1;32")]
        out += _spaced(_block(r, review) for r in c.added)
    if c.changed:
        out += ["", colour(f"Changed ({len(c.changed):,})", "1;33")]
        out += _spaced(_changed_text(ch) for ch in c.changed)
    if c.folds:
        out += ["", colour(f"Compacted ({c.folded:,} folded into {plural(len(c.folds), 'principle')})", "1;35")]
        out += _spaced(_fold_text(f, review) for f in c.folds)
    if c.removed:
        out += ["", colour(f"Removed, no principle of their topic folded them ({len(c.removed):,})", "1;31")]
        out += _spaced(_block(r, review) for r in c.removed)
    return "\n".join(out)


def _spaced(blocks) -> list[str]:
    """Blocks with a blank line between them."""
    out: list[str] = []
    for block in blocks:
        out += [block, ""]
    return out[:-1]


def _block(record: dict, review: Review) -> str:
    """The block `show` prints, with the record's stale mark at HEAD."""
    mark = review.stale.get(record["id"])
    return readable_block(record).rstrip() + (f"\n  {colour(stale_line(mark), '33')}" if mark else "")


def _value(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return ", ".join(shown(str(v)) for v in value) or "[]"
    return visible(str(value), lines=True)


def _changed_text(change: Changed) -> str:
    new = change.new
    lines = [visible(f"[{new.get('topic', '')}] {new.get('type', 'log')} {new['id']}")]
    for f in change.fields:
        old, now = _value(f.old).replace("\n", " "), _value(f.new).replace("\n", " ")
        name = visible(f.name)
        inline = f"  {name}: {old} -> {now}"
        if width(inline) <= COLUMNS:
            lines.append(inline)
        else:
            lines += [f"  {name}:", colour(f"    - {old}", "31"), colour(f"    + {now}", "32")]
    return "\n".join(lines)


def _fold_text(fold: Fold, review: Review) -> str:
    lines = [_block(fold.principle, review)]
    if fold.before is not None:
        lines.append(f"  (updated: source_count {_count(fold.before)} -> {_count(fold.principle)})")
    lines.append(f"  folded {plural(len(fold.folded), 'record')}:")
    for r in fold.folded:
        lesson = visible(str(r.get("lesson", "")).replace("\n", " "))
        lines.append(f"    - {visible(str(r['id']))}  {lesson}")
    if fold.unmatched:
        lines.append(f"  ({_unmatched(fold)})")
    return "\n".join(lines)


def _count(record: dict) -> object:
    return meta_of(record).get("source_count", 0)


def _unmatched(fold: Fold) -> str:
    return (
        f"its source_count counts {fold.unmatched:,} more than the records this change removed from topic "
        f"{fold.principle.get('topic', '')!r}: records of other topics, or ones already gone"
    )


# ------------------------------------------------------------------------------------- markdown


def _md_head(record: dict) -> str:
    meta = meta_of(record)
    kind = str(record.get("type", "log"))
    if is_principle(record):
        when = f"compacted {day(meta.get('compacted_at') or meta.get('created'))}, stands for {plural(_int(meta.get('source_count')), 'record')}"
    else:
        when = day(meta.get("created"))
    if meta.get("updated"):
        when += f", updated {day(meta.get('updated'))}"
    return f"**{md(kind)}** {code(record['id'])} · topic **{md(record.get('topic', ''))}** · {md(when)}"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _md_fields(record: dict, review: Review) -> list[str]:
    out = []
    mark = review.stale.get(record["id"])
    if mark:
        out.append(f"- ⚠️ **{md(stale_line(mark))}**")
    files = record.get("files")
    if isinstance(files, list) and files:
        out.append("- **files**: " + ", ".join(code(f) for f in files))
    for name in ("missing_context", "lesson", "ask_next_time"):
        if record.get(name):
            out.append(f"- **{name}**: {md(record[name])}")
    known = {"id", "type", "topic", "missing_context", "lesson", "ask_next_time", "meta", "files"}
    out += [f"- **{md(k)}**: {md(_value(v))}" for k, v in record.items() if k not in known]
    return out


def _md_record(record: dict, review: Review) -> str:
    return "\n".join([_md_head(record), "", *_md_fields(record, review), ""])


def _md_changed(change: Changed) -> str:
    lines = [_md_head(change.new), ""]
    for f in change.fields:
        lines += [f"- **{md(f.name)}**", f"  - was: {md(_value(f.old))}", f"  - now: {md(_value(f.new))}"]
    return "\n".join([*lines, ""])


def _md_fold(fold: Fold, review: Review) -> str:
    lines = [_md_head(fold.principle), "", *_md_fields(fold.principle, review)]
    if fold.before is not None:
        lines.append(f"- **source_count**: {md(_count(fold.before))} → {md(_count(fold.principle))}")
    folded = [f"  - {code(r['id'])} {md(r.get('lesson', ''))}" for r in fold.folded]
    what = f"folded {plural(len(fold.folded), 'record')}, by their lessons"
    if len(folded) > FEW:
        lines += [f"- <details><summary>{what}</summary>", "", *folded, "", "  </details>"]
    else:
        lines += [f"- {what}:", *folded]
    if fold.unmatched:
        lines.append(f"- {md(_unmatched(fold))}")
    return "\n".join([*lines, ""])


class _Budget:
    """Characters left for the comment; what did not fit is counted by section."""

    def __init__(self, limit: int) -> None:
        self.left = limit - _RESERVE
        self.omitted: dict[str, tuple[int, int]] = {}  # section -> (left out, of)

    def take(self, text: str) -> bool:
        if len(text) + 1 > self.left:
            return False
        self.left -= len(text) + 1
        return True


def markdown(review: Review, limit: int = COMMENT_LIMIT) -> str:
    """The report as Markdown within `limit` characters (a pull-request comment's size): sections
    of more than FEW records collapsed; what did not fit named at the end."""
    c = review.comparison
    budget = _Budget(limit)
    out: list[str] = []

    def put(line: str) -> None:
        budget.left -= len(line) + 1
        out.append(line)

    put(MARKER)
    put(f"### Memory review: {md(summary(review))}")
    put("")
    put(
        f"{md(review.base.label)} → {md(review.head.label)} · {code(review.head.path or review.base.path or '.context/memory_log.jsonl')}"
    )
    put("")
    for note in review.notes:  # a note names what a record holds (unknown types, fields): kept short
        put(f"> **Note**: {md(note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS] + '…')}")
        put("")
    if review.flags:
        put(f"#### ⚠️ Flags ({len(review.flags):,})")
        put("")
        lines = [
            f"- **{KINDS[f.kind]}**" + (f" {code(f.record_id)}" if f.record_id else "") + f": {md(f.detail)}"
            for f in review.flags
        ]
        _section(out, budget, "flags", lines, share=0.5)  # records keep at least half
        put("")
    sections = [
        ("added", f"Added ({len(c.added):,})", [_md_record(r, review) for r in c.added]),
        ("changed", f"Changed ({len(c.changed):,})", [_md_changed(ch) for ch in c.changed]),
        (
            "compacted",
            f"Compacted: {c.folded:,} folded into {plural(len(c.folds), 'principle')}",
            [_md_fold(f, review) for f in c.folds],
        ),
        (
            "removed",
            f"Removed, no principle of their topic folded them ({len(c.removed):,})",
            [_md_record(r, review) for r in c.removed],
        ),
    ]
    for name, title, items in sections:
        if not items:
            continue
        collapse = len(items) > FEW or (name == "compacted" and c.folded > FEW)
        if collapse:
            opening = ["<details>", f"<summary><b>{title}</b></summary>", ""]
        else:
            opening = [f"#### {title}", ""]
        if not budget.take("\n".join(opening) + "\n</details>\n"):
            budget.omitted[name] = (len(items), len(items))
            continue
        out += opening
        _section(out, budget, name, items)
        if collapse:
            out += ["</details>", ""]
    if budget.omitted:
        left = "; ".join(f"{n:,} of {of:,} {name}" for name, (n, of) in budget.omitted.items())
        out.append(
            f"_Left out to stay within a comment's {limit:,} characters: {left}. "
            f"`{SELF} review` in a clone shows everything._"
        )
    out.append("")
    return _within("\n".join(out), limit)


NOTE_CHARS = 600  # characters of one note the Markdown report shows


def _within(text: str, limit: int) -> str:
    """The report cut, if it must be, at a line break to stay within `limit` characters, saying so
    (the sections keep to the budget; the head and the notes, which always go first, may not)."""
    if len(text) <= limit:
        return text
    tail = f"\n_Cut to stay within {limit:,} characters: `{SELF} review` in a clone shows everything._\n"
    if len(tail) >= limit:
        return text[:limit]
    head = text[: limit - len(tail)]
    return (head[: head.rfind("\n")] if "\n" in head else head) + tail


def _section(out: list[str], budget: _Budget, name: str, items: list[str], share: float = 1.0) -> None:
    """As many items as fit in `share` of the characters left; the rest counted as left out."""
    floor = budget.left * (1 - share)
    for i, item in enumerate(items):
        if budget.left - len(item) < floor or not budget.take(item):
            budget.omitted[name] = (len(items) - i, len(items))
            return
        out.append(item)
