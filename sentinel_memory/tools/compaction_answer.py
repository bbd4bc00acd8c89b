"""The words of compact_memory's answer: the stale records to verify first, the records grouped by
topic as they fit the budget, similar topics, and the exact call that saves each principle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..invocation import SELF
from ..record.records import count_types, is_principle, json_text, meta_of, versioned
from .blocks import (
    STALE_ADVICE,
    echoed,
    estimate_tokens,
    one_line,
    plural,
    source_lines,
    stale_line,
    topic_name,
    without_credentials,
)
from .render import BUDGET_ENV, SHALLOW_NOTE, read_notes

if TYPE_CHECKING:  # the operation's result, for annotations only
    from .outcomes import Compaction


def compact_answer(c: Compaction) -> str:
    """The groups as they fit the budget (a topic that does not fit is named, not shown), and how
    to finish."""
    state = (
        f"Compaction is REQUIRED: {plural(c.all_logs, 'log record')} exceed the threshold of {c.threshold}."
        if c.required
        else f"Compaction is not required yet: {plural(c.all_logs, 'log record')}, threshold {c.threshold}."
    )
    out = [state, f"File: {c.path}. This call changed nothing; the summarising is yours."]
    out += read_notes(c.snapshot)
    if not c.groups:
        out.append(
            f'No records with topic exactly "{echoed(c.topic)}".'
            if c.topic
            else "The memory is empty; nothing to compact."
        )
        return "\n\n".join(out)
    if c.stale:
        out.append(_stale_block(c))
    if c.shallow:
        out.append(SHALLOW_NOTE)
    if c.clusters:
        out.append(_similar_block(c))
    listed, not_shown = _listing(c, sum(_cost(x) for x in out) + _cost(FINISH))
    out += listed
    if not_shown:
        out.append(_not_shown(c.budget, not_shown))
    out.append(FINISH)
    return "\n\n".join(out)


FINISH = (
    "How to finish: for each topic above (or merged group), summarise its lessons into one sentence that keeps "
    "every rule, merge its ask_next_time questions (at most 512 bytes), and make the call shown. Saving the "
    "principle deletes, in the same write, the records source_ids names, each only if it is still the version "
    "shown here (id@version); one changed since is kept and the answer names it, to fold in with another save. "
    "Records logged after this call are untouched unless you pass their ids."
)
LISTED_NOT_SHOWN = 20  # topics the not-shown notice names; the rest are "..."


def _cost(part: str) -> int:
    """A part's estimated tokens and its join to the next ("\\n\\n" costs less than one): the parts'
    costs add up to at least the whole answer's estimate."""
    return estimate_tokens(part) + 1


def _listing(c: Compaction, used: int) -> tuple[list[str], list[tuple[str, int]]]:
    """The topic blocks that fit the budget beside the `used` tokens of the rest of the answer, in
    order, and the topics not shown with their record counts: whole topics while each fits with the
    notice that would name the topics after it; the first shown in part when it alone is over."""
    groups = list(c.groups.items())
    budget = c.budget

    def notice(start: int) -> int:
        """What the notice naming the topics from `start` on costs (0: there are none)."""
        rest = [(t, len(members)) for t, members in groups[start:]]
        return _cost(_not_shown(budget, rest)) if rest else 0

    shown: list[str] = []
    for n, (topic, members) in enumerate(groups):
        cited = c.files.get(topic)
        text = _group_block(topic, members, c.stale, cited)
        cost = _cost(text)
        if not budget or used + cost + notice(n + 1) <= budget:
            shown.append(text)
            used += cost
            continue
        if shown:  # past the budget: the rest are only counted, so their blocks are not made
            return shown, [(t, len(m)) for t, m in groups[n:]]
        # The very first topic alone is over the budget: offer as many of its records as fit
        # beside the notice (which names it with a count no larger than its whole one, or not).
        kept = _fitting(topic, members, budget - used - max(notice(n), notice(n + 1)), c.stale, cited)
        shown.append(_group_block(topic, members[:kept], c.stale, cited))
        rest = [(topic, len(members) - kept)] if kept < len(members) else []
        return shown, rest + [(t, len(m)) for t, m in groups[n + 1 :]]
    return shown, []


def _not_shown(budget: int, not_shown: list[tuple[str, int]]) -> str:
    listed = ", ".join(f"{topic_name(t)} ({n})" for t, n in not_shown[:LISTED_NOT_SHOWN])
    more = " ..." if len(not_shown) > LISTED_NOT_SHOWN else ""
    return (
        f"NOT SHOWN, to stay within about {budget:,} tokens (setting {BUDGET_ENV}): "
        f"{plural(sum(n for _, n in not_shown), 'record')} of {plural(len(not_shown), 'topic')}: "
        f"{listed}{more}. Save the principles above first, then call compact_memory again (or with target_topic=...)."
    )


STALE_SHOWN = 30  # stale records compact_memory lists one by one; the rest are counted
STALE_SHARE = 2  # and they take at most 1/STALE_SHARE of the budget
SIMILAR_SHARE = 4  # the suggested groups of similar topics, at most 1/SIMILAR_SHARE of it


def _within(head: str, items: list[list[str]], share: int, budget: int, rest, more: int = 0) -> str:
    """`head` and the items' lines, as many items as fit 1/share of the budget (0: no limit; the
    first item is always listed), then rest(n), the line that counts the n left out (`more` of them
    left out before)."""
    room = budget // share if budget else 0
    lines, used = [head], _cost(head)
    for n, item in enumerate(items):
        left = len(items) - n - 1 + more
        cost = sum(_cost(line) for line in item)
        if room and n and used + cost + (_cost(rest(left)) if left else 0) > room:
            return "\n".join([*lines, rest(len(items) - n + more)])
        lines += item
        used += cost
    return "\n".join([*lines, rest(more)] if more else lines)


def _similar_block(c: Compaction) -> str:
    """The suggested groups of similar topics, as many as fit their share of the budget."""
    head = (
        "Similar topics you may merge into one principle (merge only what is truly one subject; "
        "pass the ids of every merged group in source_ids):"
    )
    groups = [[f"- {', '.join(map(topic_name, cluster))}"] for cluster in c.clusters]
    return _within(
        head,
        groups,
        SIMILAR_SHARE,
        c.budget,
        lambda n: f"  ... and {plural(n, 'more group')}, left out to stay within the budget.",
    )


def _stale_block(c: Compaction) -> str:
    """The stale records first: to verify against the code, and rewrite or log again."""
    records = {r["id"]: r for members in c.groups.values() for r in members}
    ids = sorted(c.stale, key=lambda rid: (str(records[rid].get("topic")), rid))
    one = len(ids) == 1
    head = (
        f"VERIFY FIRST: {plural(len(ids), 'record')} {'cites' if one else 'cite'} files that commits "
        f"changed after {'it was' if one else 'they were'} written. Check each against the code before folding "
        "it into a principle: if it still holds, save it again to refresh it (a log: the same topic and "
        'missing_context; a principle: type="principle" with the same topic and lesson); if not, rewrite its '
        "lesson (log_memory) or leave the outdated rule out of the principle."
    )
    items = []
    for rid in ids[:STALE_SHOWN]:
        r = without_credentials(records[rid])
        item = [f'  - {one_line(r.get("type"))} {one_line(r["id"])} (topic "{topic_name(r.get("topic"))}")']
        item += source_lines(r, ask=False)
        item.append("    " + stale_line(c.stale[rid]).replace(" " + STALE_ADVICE, ""))
        items.append(item)
    return _within(
        head,
        items,
        STALE_SHARE,
        c.budget,
        lambda n: f"  ... and {plural(n, 'more stale record')} (`{SELF} stale` lists them all).",
        more=len(ids) - len(items),
    )


def _group_block(topic: str, members: list[dict], stale: dict | None = None, cited: list[str] | None = None) -> str:
    logs, principles = count_types(members)
    topic = without_credentials({"topic": topic})["topic"]  # as a save would store it
    lines = [f'Topic "{topic_name(topic)}" - {plural(logs, "log")}, {plural(principles, "principle")}']
    named = []  # each member as source_ids names it: id@version, or its id redacted (a hand edit made the id a key)
    for r in members:
        view = without_credentials(r)
        count = meta_of(r).get("source_count", 0)
        extra = f" (from {count if isinstance(count, int) else '?'} records)" if is_principle(r) else ""
        if stale and r["id"] in stale:
            extra += " [stale: verify first]"
        lines.append(f"  - {one_line(view.get('type'))} {one_line(view['id'])}{extra}")
        lines += source_lines(r)  # shown redacted; its version (source_ids) stays the stored record's
        named.append(versioned(r) if view["id"] == r["id"] else view["id"])
    if logs or principles > 1:
        ids = ", ".join(json_text(name) for name in named)
        files = f", files={json_text(cited)}" if cited else ""
        lines.append(
            f'  Next: log_memory(type="principle", topic={json_text(topic)}, missing_context="", '
            'lesson="<one sentence that keeps every rule above>", '
            'ask_next_time="<the questions above, merged, at most 512 bytes>", '
            f"source_ids=[{ids}]{files})"
        )
    else:
        lines.append("  Nothing to compact here: a single principle.")
    return "\n".join(lines)


def _fitting(topic: str, members: list[dict], room: int, stale: dict, cited: list[str] | None) -> int:
    """How many of a topic's first records fit in `room` estimated tokens (at least one), their
    block as the answer shows it (stale tags, cited files)."""

    def cost(count: int) -> int:
        return _cost(_group_block(topic, members[:count], stale, cited))

    kept = 1
    while kept < len(members) and cost(kept * 2) <= room:
        kept *= 2
    while kept < len(members) and cost(kept + 1) <= room:
        kept += 1
    return kept
