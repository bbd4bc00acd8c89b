"""Does the compaction workflow work end to end through the real clients, headless?

    .venv/bin/python bench/client_compaction.py GITDIR --clients DIR [--sizes 60,300] [--only claude,gemini,codex]
        [--out bench/client_compaction_results.txt]

DIR holds the clients installed from npm (`npm install @anthropic-ai/claude-code @google/gemini-cli
@openai/codex` in DIR). For each client and size: a scratch project (a git repository) whose memory
holds that many log records (60: past the threshold of 50) built from GITDIR's history as
bench/search_quality.py builds them, with the files they cite (placeholders), wired with the
product's own `server.py --project P init --client X` (the MCP entry and the hooks) and committed
with a date before the oldest record (so none is stale); a scratch HOME; and a scripted stand-in
for the model's API on 127.0.0.1 (bench/standin.py) that logs every request body whole and, in one
headless session (`claude -p`, `gemini -p`, `codex exec`), makes these calls in turn:
  a  log_memory with a new lesson: the tool result that reached the model holds the notice to call
     compact_memory now (docs/contract.md §4.3, §4.5)
  b  compact_memory: the answer reached the model whole (the same text tools.answers.compact gives
     for the file at that moment), grouped by topic, with merge suggestions, and every record
     shown with its source id as <id>@<version> (the file's version) or counted as not shown
  c  log_memory(type="principle") for the new lesson's topic (another when (b) shows it alone or not)
     with source_ids and files as (b) showed them: the file then holds the principle, citing those
     files, and none of its sources, every other line byte for byte as before, and `git diff` of
     the file (staged before the save) shows the principle added and the sources removed
  d  log_memory(type="principle") for the largest other topic with (b)'s source_ids, after one of
     those sources was changed on disk (its lesson edited in place, as a teammate's change
     arriving with `git pull` would) between (b) and the save: per docs/contract.md §4.3 the
     changed source is KEPT as the file holds it, the answer names it with its new version and the
     call that folds it in, the unchanged sources are deleted with the principle saved, every other
     line as before
  e  the fold-in call as (d)'s answer shows it: a new principle stands for the old one and the kept
     source (source_count), cites the files they cited, and they are gone; every other line as before
Prints, per size, each client's details and a table (per client and step: PASS or FAIL, and the
first characters of what reached the model); asserts nothing. Nothing is fetched; the clients' own
network calls other than the stand-in fail.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import client_hooks as ch  # noqa: E402
import search_quality as sq  # noqa: E402  (puts the repository root on sys.path)
import standin  # noqa: E402

from sentinel_memory.record.records import revision, versioned  # noqa: E402
from sentinel_memory.tools import answers as tools  # noqa: E402
from sentinel_memory.tools.render import compact_notice  # noqa: E402

LOG, COMPACT = "log_memory", "compact_memory"
THRESHOLD = 50
NEW_LESSON = {
    "topic": "termui",
    "missing_context": "The task did not say that prompt(hide_input=True) only hides input on a real terminal.",
    "lesson": "Test hidden prompts through a pseudo-terminal; CliRunner's input is never hidden.",
    "ask_next_time": "Does the change touch prompts that read passwords?",
}
PRINCIPLE_X = "Terminal UI: {n} lessons folded into one rule set (bench principle for topic {topic})."
PRINCIPLE_Y = "Pager and progress output: {n} lessons folded into one rule set (bench principle for topic {topic})."
CHANGED_LESSON = " (edited by a teammate after compact_memory showed it)"
_VERSIONED = re.compile(r"\b([0-9a-f]{16})@([0-9a-f]{8})\b")
_NEXT = re.compile(
    r'Next: log_memory\(type="principle", topic=("(?:[^"\\]|\\.)*"), .*?source_ids=(\[[^\]]*\])'
    r"(?:, files=(\[[^\]]*\]))?\)"
)
OLD_DATE = "2000-01-01T00:00:00+00:00"
STEPS = ("a", "b", "c", "d", "e")
TITLES = {
    "a": "log_memory: the notice to compact now",
    "b": "compact_memory: whole, topics, merges, id@ver",
    "c": "principle saved, sources gone, rest unchanged",
    "d": "stale source: kept and named, rest unchanged",
    "e": "the fold-in call as shown: all folded",
}


def now_lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def line_id(line: bytes) -> str:
    try:
        return str(json.loads(line)["id"])
    except (ValueError, KeyError, TypeError):
        return ""


class Compactor(standin.StandIn):
    """The model: a, b, c, d in turn (one tool call a turn, the next once the last one's result
    came back), then a short text. What each result was, and the file around each save, is kept."""

    deferred = LOG

    def __init__(self, project: Path, log: Path) -> None:
        self.project = project
        self.memory = sq.memory_path(project)
        self.results: list[str] = []  # the tool results, in order
        self.offered: list[str] = []
        self.state: dict = {}  # what the side steps found
        self.step_lock = threading.Lock()
        super().__init__(log)

    def call(self, client: str, offered: list[str], items: list[standin.Item]) -> standin.Call:
        with self.step_lock:
            names = {tool: t for t in offered for tool in (LOG, COMPACT) if t.endswith(tool)}
            if LOG not in names:  # a request not of the session (a title, a summary)
                return None
            ours = [i for i in items if i.kind == "call" and i.name.endswith((LOG, COMPACT))]
            results = [i.text for i in items if i.kind == "result"]
            if len(results) < len(ours):
                return None
            for n, text in enumerate(results[: len(ours)]):
                if n >= len(self.results):
                    self.results.append(text)
            self.offered = sorted(offered)
            done = len(ours)
            if done == 0:
                return names[LOG], dict(NEW_LESSON)
            if done == 1:
                return (names.get(COMPACT) or COMPACT), {}
            if done == 2:
                if "expected_b" not in self.state:
                    self.state["expected_b"] = tools.compact(self.memory)
                    self.state["plan"] = plan(self.results[1])
                    self.state["before_c"] = now_lines(self.memory)
                    # staged as a reviewer would (`git add .context`), so `git diff` shows the save alone
                    ch.git(self.project, "add", "--", ".context/memory_log.jsonl")
                x = self.state["plan"]["x"]
                if x is None:
                    return None
                return names[LOG], principle_call(x, PRINCIPLE_X)
            if done == 3:
                if "after_c" not in self.state:
                    self.state["after_c"] = now_lines(self.memory)
                    self.state["diff_c"] = git_diff(self.project)
                    y = self.state["plan"]["y"]
                    if y is not None:
                        self.state["changed"] = change_on_disk(self.memory, y["ids"][0].split("@")[0])
                    self.state["before_d"] = now_lines(self.memory)
                y = self.state["plan"]["y"]
                if y is None:
                    return None
                return names[LOG], principle_call(y, PRINCIPLE_Y)
            if done == 4:
                y = self.state["plan"]["y"]
                if "after_d" not in self.state:
                    self.state["after_d"] = now_lines(self.memory)
                fold = fold_call(self.results[3], principle_call(y, PRINCIPLE_Y)["lesson"]) if y else None
                if fold is None:
                    return None
                self.state["fold"] = fold
                return names[LOG], fold
            if done == 5 and "after_e" not in self.state:
                self.state["after_e"] = now_lines(self.memory)
            return None


def plan(answer: str) -> dict:
    """The topics whose calls the model makes, from the compact_memory answer it received: x the new
    lesson's topic (when the answer shows it with another record), y the largest other topic with at
    least two records."""
    calls = []
    for topic, ids, files in _NEXT.findall(answer):
        try:
            calls.append({"topic": json.loads(topic), "ids": json.loads(ids), "files": json.loads(files or "[]")})
        except ValueError:
            continue
    x = next((c for c in calls if c["topic"] == NEW_LESSON["topic"] and len(c["ids"]) >= 2), None)
    x = x or next((c for c in calls if len(c["ids"]) >= 2), None)  # else the first of two or more
    others = sorted((c for c in calls if c is not x and len(c["ids"]) >= 2), key=lambda c: (-len(c["ids"]), c["topic"]))
    return {"calls": calls, "x": x, "y": others[0] if others else None}


def principle_call(group: dict, text: str) -> dict:
    call = {
        "type": "principle",
        "topic": group["topic"],
        "missing_context": "",
        "lesson": text.format(n=len(group["ids"]), topic=group["topic"]),
        "ask_next_time": "",
        "source_ids": list(group["ids"]),
    }
    if group["files"]:
        call["files"] = list(group["files"])
    return call


_FOLD = re.compile(
    r'Fold (?:it|them) in with another save: log_memory\(type="principle", topic=("(?:[^"\\]|\\.)*"), '
    r".*?source_ids=(\[[^\]]*\])(?:, files=(\[[^\]]*\]))?\)"
)
FOLDED = "{lesson} It also keeps the rule a teammate changed since."


def fold_call(answer: str, lesson: str) -> dict | None:
    """The save that folds the kept sources in, as the answer shows it: the principle's lesson with
    the changed rule added, source_ids and files as shown."""
    found = _FOLD.search(answer)
    if not found:
        return None
    return {
        "type": "principle",
        "topic": json.loads(found.group(1)),
        "missing_context": "",
        "lesson": FOLDED.format(lesson=lesson),
        "ask_next_time": "",
        "source_ids": json.loads(found.group(2)),
        **({"files": json.loads(found.group(3))} if found.group(3) else {}),
    }


def change_on_disk(memory: Path, rid: str) -> dict:
    """Edit one record's lesson in place, as a change arriving with `git pull` would: its line
    rewritten in the server's own format, every other byte as it was."""
    lines = now_lines(memory)
    out, changed = [], {}
    for line in lines:
        if line_id(line) == rid:
            record = json.loads(line)
            old = versioned(record)
            record["lesson"] += CHANGED_LESSON
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            changed = {"id": rid, "old": old, "new": versioned(record), "line": line}
        out.append(line)
    temporary = memory.with_name(memory.name + ".bench")
    temporary.write_bytes(b"".join(out))
    os.replace(temporary, memory)
    return changed


def git_diff(project: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(project), "diff", "--", ".context/memory_log.jsonl"], capture_output=True, text=True
    ).stdout


# ------------------------------------------------------------------------------------ the checks


def first(text: str | None, heads: tuple[str, ...], size: int = 110) -> str:
    """The result's first characters, from the answer's first words (the stand-in reads a result's
    strings joined, a content part's type among them)."""
    if text is None:
        return "(nothing)"
    at = min((text.find(h) for h in heads if h in text), default=0)
    return text[at:].strip()[:size].replace("\n", " | ")


def check_a(results: list[str], logs: int) -> tuple[bool, str, str | None]:
    got = results[0] if results else None
    if got is None:
        return False, "log_memory was not called or its result did not come back", None
    notice = compact_notice(logs, THRESHOLD)
    ok = "saved: new log record" in got and notice in got
    return (
        ok,
        f"saved: {'saved: new log record' in got}; notice {notice[:60]!r}... whole in the result: {notice in got}",
        got,
    )


def check_b(results: list[str], state: dict, memory_ids: dict[str, str]) -> tuple[bool, str, str | None]:
    got = results[1] if len(results) > 1 else None
    expected = state.get("expected_b")
    if got is None or expected is None:
        return False, "compact_memory was not called or its result did not come back", got
    whole = expected in got
    topics = len(re.findall(r'^Topic "', expected, re.M))
    merges = "Similar topics you may merge" in got
    shown = {m[0]: m[1] for m in _VERSIONED.findall(got)}
    right = sum(1 for rid, ver in shown.items() if memory_ids.get(rid) == ver)
    # the records the budget left out are counted: "NOT SHOWN, to stay within ...: N records of M topics"
    counted = re.search(r"NOT SHOWN, to stay within[^:]*: ([\d,]+) records? of", got)
    left = int(counted.group(1).replace(",", "")) if counted else 0
    ok = whole and topics >= 2 and merges and right == len(shown) and len(shown) + left == len(memory_ids)
    why = (
        f"answer {len(expected):,} chars, {'WHOLE' if whole else 'CHANGED'} in a result of {len(got):,}; "
        f"{topics} topics; merge suggestions: {merges}; id@version of {right}/{len(shown)} shown as the file "
        f"holds them, {len(shown) + left}/{len(memory_ids)} records shown or counted as not shown"
    )
    return ok, why, got


def check_c(results: list[str], state: dict, project: Path) -> tuple[bool, str, str | None]:
    got = results[2] if len(results) > 2 else None
    x = (state.get("plan") or {}).get("x")
    if got is None or x is None or "after_c" not in state:
        return False, f"no principle save came back (plan: {bool(x)})", got
    before, after = state["before_c"], state["after_c"]
    sources = {i.split("@")[0] for i in x["ids"]}
    lesson = PRINCIPLE_X.format(n=len(x["ids"]), topic=x["topic"])
    new = [line for line in after if line not in before]
    principle = [json.loads(line) for line in new]
    held = len(principle) == 1 and principle[0].get("type") == "principle" and principle[0].get("lesson") == lesson
    gone = not any(line_id(line) in sources for line in after)
    rest_before = [line for line in before if line_id(line) not in sources]
    rest_after = [line for line in after if line not in new]
    same = rest_before == rest_after
    diff = state.get("diff_c", "")
    added = [line for line in diff.splitlines() if line.startswith("+") and lesson in line]
    removed = {i for i in sources if any(line.startswith("-") and i in line for line in diff.splitlines())}
    shows = bool(added) and removed == sources
    count = principle[0].get("meta", {}).get("source_count") if held else None
    cites = held and principle[0].get("files", []) == sorted(x["files"])
    ok = held and gone and same and shows and cites and f"Deleted the {len(sources)} source record" in got
    why = (
        f"topic {x['topic']!r}: principle in the file: {held} (source_count {count}, citing the "
        f"{len(x['files'])} files the call named: {cites}); its {len(sources)} sources "
        f"gone: {gone}; the other {len(rest_before)} lines byte for byte: {same}; git diff: principle added "
        f"{bool(added)}, sources removed {len(removed)}/{len(sources)}"
    )
    return ok, why, got


def check_d(results: list[str], state: dict) -> tuple[bool, str, str | None]:
    got = results[3] if len(results) > 3 else None
    y, changed = (state.get("plan") or {}).get("y"), state.get("changed")
    if got is None or y is None or not changed or "after_d" not in state:
        return False, f"no second principle save came back (plan: {bool(y)}, changed: {bool(changed)})", got
    before, after = state["before_d"], state["after_d"]
    sources = {i.split("@")[0] for i in y["ids"]}
    lesson = PRINCIPLE_Y.format(n=len(y["ids"]), topic=y["topic"])
    new = [line for line in after if line not in before]
    saved = len(new) == 1 and json.loads(new[0]).get("lesson") == lesson
    kept = changed["line"] in after
    others_gone = not any(line_id(line) in sources - {changed["id"]} for line in after)
    rest_before = [line for line in before if line_id(line) not in sources]
    rest_after = [line for line in after if line not in new and line_id(line) not in sources]
    same = rest_before == rest_after
    named = "KEPT, NOT DELETED" in got and changed["new"] in got and "Fold it in with another save" in got
    ok = saved and kept and others_gone and same and named and changed["old"] not in got.split("KEPT")[-1]
    why = (
        f"topic {y['topic']!r}, {changed['old']} changed on disk to {changed['new']}: kept as changed: {kept}; "
        f"answer names it ({changed['new']}) with the fold-in call: {named}; principle saved: {saved}; "
        f"the {len(sources) - 1} unchanged sources deleted: {others_gone}; the other {len(rest_before)} lines byte "
        f"for byte: {same}"
    )
    return ok, why, got


def check_e(results: list[str], state: dict) -> tuple[bool, str, str | None]:
    got = results[4] if len(results) > 4 else None
    fold, changed = state.get("fold"), state.get("changed")
    if got is None or not fold or not changed or "after_e" not in state:
        return False, f"no fold-in save came back (the call found in the answer: {bool(fold)})", got
    before, after = state["after_d"], state["after_e"]
    sources = {i.split("@")[0] for i in fold["source_ids"]}
    new = [line for line in after if line not in before]
    principle = json.loads(new[0]) if len(new) == 1 else {}
    old = [json.loads(line) for line in before if line_id(line) in sources and b'"principle"' in line]
    expected = (old[0].get("meta", {}).get("source_count", 0) + 1) if old else None
    count = principle.get("meta", {}).get("source_count")
    held = principle.get("lesson") == fold["lesson"] and count == expected
    gone = not any(line_id(line) in sources for line in after)
    same = [line for line in before if line_id(line) not in sources] == [line for line in after if line not in new]
    # the citations the folded records held (the project has every file they cite), at most 10
    folded = [json.loads(line) for line in before if line_id(line) in sources]
    cited = {f for r in folded for f in r.get("files", [])}
    kept = set(principle.get("files", []))
    cites = kept <= cited and len(kept) == min(len(cited), 10)
    ok = held and gone and same and cites and "KEPT" not in got
    why = (
        f"source_ids {', '.join(fold['source_ids'])}: new principle in the file with source_count {count} "
        f"(expected {expected}): {held}; citing {len(kept)} of the {len(cited)} files the folded records cited: "
        f"{cites}; the old principle and {changed['id']} gone: {gone}; the other lines byte for byte: {same}"
    )
    return ok, why, got


# ------------------------------------------------------------------------------ running a client


def memory_entries(gitdir: str, size: int) -> list:
    """`size` distinct log records from the commits before the newest."""
    commits = sq.history(gitdir)
    common = sq.common_files(commits)
    entries: dict[str, object] = {}
    for commit in reversed(commits[:-1]):
        entry = sq.record_of(commit, common)
        entries.setdefault(entry.id, entry)
        if len(entries) == size:
            break
    return list(entries.values())


def run_client(name: str, clients: Path, gitdir: str, size: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix=f"sm-compact-{name}-"))
    cell: dict = {"client": name}
    try:
        project = ch.new_project(scratch)
        entries = memory_entries(gitdir, size)
        sq.write_memory(project, entries)
        cell["wired"] = ch.wire(name, project)
        ch.materialize(project, entries)  # the files the memory cites, as a checkout holds them
        ch.git(project, "add", "-A")
        # committed before the oldest record was written, so that no record is stale (a commit that
        # changed a cited file later would mark it, docs/contract.md §3.7)
        subprocess.run(
            ["git", "-C", str(project), "commit", "-qm", "start"],
            check=True,
            capture_output=True,
            env={**os.environ, "GIT_AUTHOR_DATE": OLD_DATE, "GIT_COMMITTER_DATE": OLD_DATE},
        )
        stand = Compactor(project, scratch / "requests.jsonl")
        try:
            env, home = ch.client_env(name, scratch, clients, stand.port, project)
            if name == "codex" and ch.CODEX_TRUST == "review":
                ch.trust_codex_hooks(env, project, home)
            prompt = "Record this session's lesson in the project memory, then compact the memory."
            start = time.monotonic()
            try:
                done = subprocess.run(
                    ch.argv_for(name, prompt),
                    cwd=project,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=ch.TIMEOUT,
                    stdin=subprocess.DEVNULL,
                )
                cell["rc"], out = done.returncode, (done.stdout + "\n" + done.stderr).strip()
            except subprocess.TimeoutExpired:
                cell["rc"], out = None, f"(timed out after {ch.TIMEOUT} s)"
            cell["seconds"] = time.monotonic() - start
        finally:
            stand.close()
        cell["tail"] = out[-300:]
        cell["requests"] = len(stand.requests)
        cell["offered"] = [t for t in stand.offered if t.endswith("_memory")]
        memory = sq.memory_path(project)
        after_b = stand.state.get("before_c") or []
        ids = {}
        for line in after_b:
            record = json.loads(line)
            ids[record["id"]] = revision(record)
        checks = {
            "a": check_a(stand.results, len(entries) + 1),
            "b": check_b(stand.results, stand.state, ids),
            "c": check_c(stand.results, stand.state, project),
            "d": check_d(stand.results, stand.state),
            "e": check_e(stand.results, stand.state),
        }
        for step, (ok, why, got) in checks.items():
            heads = ("Compaction is",) if step == "b" else ("saved:", "updated:", "unchanged:")
            shown = got.replace(str(project), "<project>") if got else got
            cell[step] = {"ok": ok, "why": why, "got": first(shown, heads)}
        cell["final_records"] = len(now_lines(memory))
        return cell
    except Exception as exc:  # a harness failure is reported, not raised: the other clients still run
        cell["error"] = f"{type(exc).__name__}: {exc}"
        return cell
    finally:
        if not os.environ.get("SM_KEEP"):
            shutil.rmtree(scratch, ignore_errors=True)


def versions(clients: Path) -> str:
    out = []
    for name, label in (("claude", "Claude Code"), ("gemini", "Gemini CLI"), ("codex", "Codex")):
        try:
            got = subprocess.run(
                [str(clients / "node_modules" / ".bin" / name), "--version"], capture_output=True, text=True, timeout=60
            ).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            got = "?"
        number = re.search(r"\d+\.\d+\.\d+", got)
        out.append(f"{label} {number.group(0) if number else got}")
    return ", ".join(out)


def section(size: int, names: list[str], clients: Path, gitdir: str) -> list[str]:
    """Every client's run on a memory of `size` logs: its details, then the table."""
    lines = [f"## a memory of {size} logs (and the new lesson)"]
    print(lines[0], flush=True)
    cells = {}
    for name in names:
        cell = run_client(name, clients, gitdir, size)
        cells[name] = cell
        head = (
            f"== {name} ({cell.get('wired', '?')}): rc {cell.get('rc')} in {cell.get('seconds', 0):.1f} s, "
            f"{cell.get('requests', 0)} model requests; tools offered: {', '.join(cell.get('offered', [])) or '-'}"
        )
        block = [head]
        if cell.get("error"):
            block.append(f"   harness error: {cell['error']}")
        for step in STEPS:
            if step in cell:
                c = cell[step]
                block.append(f"   {step} {'PASS' if c['ok'] else 'FAIL'}: {c['why']}")
                block.append(f"     reached the model: {c['got']!r}")
        if any(not cell.get(s, {}).get("ok") for s in STEPS):
            block.append(f"   client said: {cell.get('tail', '')!r}")
        for line in block:
            print(line, flush=True)
        lines += block
    table = ["", f"{'step (memory of ' + str(size) + ' logs)':<52}" + "".join(f"{n:>8}" for n in names)]
    for step in STEPS:
        table.append(
            f"{step + ' ' + TITLES[step]:<52}"
            + "".join(f"{('PASS' if cells[n].get(step, {}).get('ok') else 'FAIL'):>8}" for n in names)
        )
    table.append("")
    table.append("first characters that reached the model:")
    for step in STEPS:
        for n in names:
            table.append(f"  {step} {n:<7} {cells[n].get(step, {}).get('got', '(nothing)')[:100]!r}")
    table.append("")
    for line in table:
        print(line, flush=True)
    return lines + table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdir")
    parser.add_argument("--clients", required=True, type=Path)
    parser.add_argument("--sizes", default="60", help="memory sizes (log records), one run of every client each")
    parser.add_argument("--only", default="claude,gemini,codex")
    parser.add_argument("--out", type=Path, help="also write the output to this file")
    args = parser.parse_args()
    clients = args.clients.resolve()
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "sentinel_memory", "server.py"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    source = Path(args.gitdir).parent.name if Path(args.gitdir).name == "repo" else args.gitdir
    lines = [
        f"# bench/client_compaction.py {source} --sizes {args.sizes}: at {commit}"
        f"{' (product changed since)' if dirty else ''}, {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; "
        f"{versions(clients)}"
    ]
    print(lines[0], flush=True)
    names = args.only.split(",")
    for size in [int(x) for x in args.sizes.split(",")]:
        lines += section(size, names, clients, args.gitdir)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
