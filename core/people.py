"""What the commands show people: record blocks, topic tables and the Markdown export. (The text
the tools return is for an LLM and lives in render.py.)"""

from __future__ import annotations

from pathlib import Path

from . import render
from .terminal import colour, table


def block(record: dict) -> str:
    head = render.header(0, record).split(" | ", 1)[1]
    lines = [colour(record["id"], "1;36") + "  " + head]
    for name in ("missing_context", "lesson", "ask_next_time"):
        if record.get(name):
            lines.append(f"  {colour(name, '2')}: " + str(record[name]).replace("\n", "\n    "))
    return "\n".join(lines)


def topic_of(record: dict) -> str:
    return str(record.get("topic") or "")


def topics(records: list[dict]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for r in records:
        t = out.setdefault(topic_of(r), {"topic": topic_of(r), "logs": 0, "principles": 0, "newest": ""})
        t["principles" if r.get("type") == "principle" else "logs"] += 1
        meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
        t["newest"] = max(t["newest"], str(meta.get("updated") or meta.get("created") or ""))
    return dict(sorted(out.items()))


def topic_table(by_topic: dict[str, dict]) -> str:
    rows = [[t["topic"], str(t["logs"]), str(t["principles"]), t["newest"][:10]] for t in by_topic.values()]
    return table(rows, ["topic", "logs", "principles", "newest"])


def markdown(records: list[dict], source: Path) -> str:
    """The memory as a Markdown document: one section per topic, principles first, then logs."""
    out = [f"# Project memory\n\n{render.plural(len(records), 'record')} from `{source}`.\n"]
    by_topic: dict[str, list[dict]] = {}
    for r in records:
        by_topic.setdefault(topic_of(r), []).append(r)
    for topic in sorted(by_topic):
        out.append(f"## {topic or '(no topic)'}\n")
        for r in sorted(by_topic[topic], key=lambda r: (r.get("type") != "principle", r["id"])):
            meta = r.get("meta") if isinstance(r.get("meta"), dict) else {}
            if r.get("type") == "principle":
                when = f"compacted {render.day(meta.get('compacted_at'))} from {meta.get('source_count', 0)} records"
            else:
                when = render.day(meta.get("created"))
            if meta.get("updated"):
                when += f", updated {render.day(meta.get('updated'))}"
            out.append(f"### {r.get('type', 'log')} `{r['id']}` ({when})\n")
            out += [f"- **{name}**: " + str(r[name]).replace("\n", "\n  ")
                    for name in ("missing_context", "lesson", "ask_next_time") if r.get(name)]
            out.append("")
    return "\n".join(out)
