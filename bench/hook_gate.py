"""How well the prompt hook's gate picks what to put in front of the model, on memories built from
the real commit history of public repositories. Prints one table; asserts nothing; fetches nothing.

    .venv/bin/python bench/hook_gate.py GITDIR [GITDIR ...] [--sizes 300,1000] [--tasks 60]
        [--client claude] [--time SECONDS]

GITDIR is a git directory read with `git log` (bench/search_quality.py's kind; its records, its
definitions; GITDIR@--all reads every branch). At size N the memory is the N commits that end
--later commits before the newest one, written into a scratch project that also holds the files those records cite (small
placeholders, as a checkout would have them: the hook counts a path a prompt names only when the
file exists; --no-files leaves them out). Then the real hook command, `server.py hook --client C`, one
process per prompt (a new session each, its state in a scratch folder), is given the client's
prompt event:
  related    the subjects of the commits after the memory whose task has relevant lessons (the
             memory's commits that changed one of the task's files, changelog-like and very common
             files left out, as search_quality.py defines them), the first --tasks of them;
             hit = at least one relevant record injected
  unrelated  --tasks subjects of the next repository given (the last one's: the first's);
             any = anything injected at all
Targets (issue 30): related hit >= 50 %, unrelated any <= 5 %.
--prompts described gives each prompt, related and unrelated, the commit's subject and then the
first paragraph of its body (when it has one), as a person who describes the task in a few
sentences would write it; subject (the default) gives the subject alone, as terse as a prompt gets;
long gives related prompts as described does and each unrelated prompt four of the other project's
commits described one after another (some 20 to 200 words: a pasted page, a long brief), which is
where a prompt names a topic or a rare word by chance.
With a client whose hook sees writes (claude, gemini), each task then goes on in the same session:
its first WRITTEN files (the commit's, changelog-like and very common ones left out) are about to be
written, one write event each (an unrelated prompt's session writes the other project's task's
files, which this project mostly lacks):
  task       related tasks shown at least one relevant record, before the prompt or in a write's
             refusal (what the hooks put in front of the model over the task's start)
  t-any      another project's tasks shown anything at all, at the prompt or a write
  f-task     by search_quality.py's stricter truth (only focused commits relevant), the related
             tasks that have a focused relevant record shown one
At the end, the same gate at the other thresholds of search_quality.py (its strengths and gate,
in-process, the prompt alone): what moving the one threshold would trade. Also per row: fired (related prompts that got anything), srch@3 (the reference: related prompts
whose search_memory answer for the same words lists a relevant record among its first three, what
a gate that always fired would reach), evid and ev>=.5 (the ceiling of any gate that shows only what
the prompt gives evidence for: related prompts for which a relevant record among the search's
best-ranked candidates has any strength at all, and a strength of at least half the threshold,
search/match.py's measure), records injected per related prompt (mean), and the hook's wall time per spawn
(median, 95th percentile) with the count of runs that took 1 s or more (the hook's default time
bound: with it, those print nothing by design). --time raises the bound so that the gate is
measured apart from the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import client_hooks  # noqa: E402
import search_quality as sq  # noqa: E402  (puts the repository root on sys.path)

# The checkout whose server.py runs the hook (default: this one)
PRODUCT = Path(os.environ.get("SM_PRODUCT", str(sq.ROOT)))
_ID = re.compile(r"\b[0-9a-f]{16}\b")
EVENTS = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}
WRITTEN = 2  # the task's files written after its prompt, in the same session (the first ones it changed)


def name_of(gitdir: str) -> str:
    path = Path(gitdir).resolve()
    return path.parent.name if path.name in ("repo", ".git") else path.name


def prompt_of(commit: dict, prompts: str) -> str:
    """What the person types for this commit's task (--prompts)."""
    body = commit["body"]
    return (
        f"{commit['subject']}\n\n{body}"
        if prompts == "described" and body and body != commit["subject"]
        else commit["subject"]
    )


def unrelated_prompt(commits: list[dict], at: int, prompts: str) -> str:
    """The other project's prompt of its commit `at` (--prompts): for long, that commit and the
    three before it, each described, one after another."""
    if prompts != "long":
        return prompt_of(commits[at], prompts)
    return "\n\n".join(prompt_of(c, "described") for c in commits[max(0, at - 3) : at + 1])


def related_tasks(
    commits: list[dict],
    common: set[str],
    window_ids: list[tuple[dict, str]],
    end: int,
    wanted: int,
    prompts: str = "subject",
) -> list[tuple[str, set[str], list[str], set[str]]]:
    """(prompt, relevant ids, the task's files, the focused relevant ids: search_quality.py's
    stricter truth) per task."""
    by_file: dict[str, set[str]] = {}
    focused = set()
    for c, rid in window_ids:
        for f in c["files"]:
            if f not in common:
                by_file.setdefault(f, set()).add(rid)
        if len({f for f in c["files"] if f not in common}) <= sq.FOCUSED:
            focused.add(rid)
    tasks = []
    for c in commits[end:]:
        own = [f for f in dict.fromkeys(c["files"]) if f not in common]
        relevant = set().union(*(by_file.get(f, set()) for f in own)) if own else set()
        if relevant:
            tasks.append((prompt_of(c, prompts), relevant, own, relevant & focused))
        if len(tasks) >= wanted:
            break
    return tasks


WRITES = {"claude": ("PreToolUse", "Write"), "codex": None, "gemini": ("BeforeTool", "write_file")}


def hook(
    client: str, project: Path, state: Path, prompt: str, bound: str | None, session: str = "", write: str = ""
) -> tuple[str, float]:
    """(what the hook printed, its wall time from spawn to exit in seconds): the prompt event, or
    with `write` (a path in the project) the event before that file is written."""
    event = {"session_id": session or str(uuid.uuid4()), "cwd": str(project), "hook_event_name": EVENTS[client]}
    if write:
        name, tool = WRITES[client]
        event.update(
            hook_event_name=name, tool_name=tool, tool_input={"file_path": str(project / write), "content": ""}
        )
    else:
        event["prompt"] = prompt
    if client != "gemini":
        event.update(transcript_path="", permission_mode="default")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["SENTINEL_MEMORY_HOOK_STATE"] = str(state)
    if bound is not None:
        env["SENTINEL_MEMORY_HOOK_TIME"] = bound
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(PRODUCT / "server.py"), "hook", "--client", client],
        input=json.dumps(event).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=30,
    )
    return done.stdout.decode("utf-8", "replace"), time.perf_counter() - start


def injected(out: str) -> tuple[str, set[str]]:
    """The text the hook put before the prompt (or, refusing a write, gave as its reason), and the
    record ids in it."""
    if not out.strip():
        return "", set()
    try:
        reply = json.loads(out)
    except ValueError:
        return "", set()
    if not isinstance(reply, dict):
        return "", set()
    specific = reply.get("hookSpecificOutput") or {}
    text = specific.get("additionalContext") or specific.get("permissionDecisionReason") or reply.get("reason")
    if not isinstance(text, str):
        return "", set()
    return text, set(_ID.findall(text))


def run(histories, sizes, wanted, later, client, bound, examples, files=True, prompts="subject") -> list[dict]:
    rows = []
    writes = WRITES[client] is not None
    deadline = 1.0  # the product's default time bound: runs this long would print nothing by default
    for k, (name, commits, common) in enumerate(histories):
        _, foreign, foreign_common = histories[(k + 1) % len(histories)]
        unrelated = [
            (
                unrelated_prompt(foreign, len(foreign) - wanted + i, prompts),
                [f for f in c["files"] if f not in foreign_common],
            )
            for i, c in enumerate(foreign[-wanted:])
        ]
        for size in sizes:
            end = len(commits) - later
            window = commits[max(0, end - size) : end]
            entries = [sq.record_of(c, common) for c in window]
            ids_of = list(zip(window, [e.id for e in entries], strict=True))
            tasks = related_tasks(commits, common, ids_of, end, wanted, "described" if prompts == "long" else prompts)
            scratch = Path(tempfile.mkdtemp(prefix="sm-gate-"))
            try:
                project = scratch / "app"
                subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
                sq.write_memory(project, entries)
                if files:
                    client_hooks.materialize(project, entries)
                ids = {e.id for e in entries}
                times, hits, counts, anys, slow, fired, top3 = [], 0, [], 0, 0, 0, 0
                evidence, half, swept, foreign_swept = 0, 0, [], []
                task_hits, write_anys, focused_tasks, focused_hits = 0, 0, 0, 0
                from sentinel_memory.tools import answers as tools

                shown_example = False
                for prompt, relevant, own, focused in tasks:
                    session = str(uuid.uuid4())
                    out, took = hook(client, project, scratch / "state", prompt, bound, session)
                    times.append(took)
                    slow += took >= deadline
                    text, got = injected(out)
                    got &= ids
                    counts.append(len(got))
                    fired += bool(text)
                    # the reference: search_memory's first three records for the same words
                    top3 += bool(set(sq.ids_in(tools.search(sq.memory_path(project), prompt))[0][:3]) & relevant)
                    # the ceiling: how strongly the best relevant candidate matches the prompt alone
                    found = sq.strengths(sq.memory_path(project), prompt, None) or []
                    best = max((s for s, rid in found if rid in relevant), default=0.0)
                    evidence += best > 0
                    half += best >= 0.5
                    swept.append([sq.gate(found, t, relevant) for t in sq.THRESHOLDS])
                    if got & relevant:
                        hits += 1
                        if examples and not shown_example:
                            print(f"--- {name} {size}: prompt {prompt!r} received:\n{text}\n", flush=True)
                            shown_example = True
                    if writes:  # then the task's first files are written, in the same session
                        for path in own[:WRITTEN]:
                            out, took = hook(client, project, scratch / "state", "", bound, session, path)
                            times.append(took)
                            got |= injected(out)[1] & ids
                    task_hits += bool(got & relevant)
                    focused_tasks += bool(focused)
                    focused_hits += bool(got & focused)
                for prompt, own in unrelated:
                    session = str(uuid.uuid4())
                    out, took = hook(client, project, scratch / "state", prompt, bound, session)
                    times.append(took)
                    slow += took >= deadline
                    text, got = injected(out)
                    found = sq.strengths(sq.memory_path(project), prompt, None) or []
                    foreign_swept.append([sq.gate(found, t, None) for t in sq.THRESHOLDS])
                    if text:
                        anys += 1
                        if examples:
                            print(f"--- {name} {size}: UNRELATED prompt {prompt!r} received:\n{text}\n", flush=True)
                    if writes:
                        shown = bool(text)
                        for path in own[:WRITTEN]:
                            out, took = hook(client, project, scratch / "state", "", bound, session, path)
                            times.append(took)
                            shown |= bool(injected(out)[0])
                        write_anys += shown
                times.sort()
                rows.append(
                    {
                        "repo": name,
                        "size": size,
                        "related": len(tasks),
                        "hit": hits / max(1, len(tasks)),
                        "fired": fired / max(1, len(tasks)),
                        "top3": top3 / max(1, len(tasks)),
                        "evidence": evidence / max(1, len(tasks)),
                        "half": half / max(1, len(tasks)),
                        "swept": [sum(col) for col in zip(*swept, strict=True)] if swept else [],
                        "foreign_swept": [sum(col) for col in zip(*foreign_swept, strict=True)]
                        if foreign_swept
                        else [],
                        "records": statistics.mean(counts) if counts else 0.0,
                        "unrelated": len(unrelated),
                        "any": anys / max(1, len(unrelated)),
                        "task": task_hits / max(1, len(tasks)),
                        "task_any": write_anys / max(1, len(unrelated)),
                        "focused": focused_tasks,
                        "f_task": focused_hits / max(1, focused_tasks),
                        "median_ms": statistics.median(times) * 1000,
                        "p95_ms": times[int(0.95 * (len(times) - 1))] * 1000,
                        "at_bound": slow,
                        "runs": len(times),
                    }
                )
                r = rows[-1]
                print(
                    f"{name:<22} {size:>5} {r['related']:>4} {r['hit']:>6.0%} {r['fired']:>6.0%} {r['top3']:>6.0%} "
                    f"{r['evidence']:>6.0%} {r['half']:>6.0%} {r['records']:>5.2f} {r['unrelated']:>4} "
                    f"{r['any']:>6.0%} {r['median_ms']:>7.0f} {r['p95_ms']:>7.0f} {r['at_bound']:>4}"
                    + (f" {r['task']:>6.0%} {r['task_any']:>6.0%} {r['f_task']:>6.0%}" if writes else ""),
                    flush=True,
                )
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdirs", nargs="+", help="GITDIR, or GITDIR@REVISION (e.g. @--all: every branch)")
    parser.add_argument("--sizes", default="300,1000")
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--later", type=int, default=400, help="commits kept after the memory for tasks")
    parser.add_argument("--client", default="claude", choices=sorted(EVENTS))
    parser.add_argument(
        "--time", help="the hook's time bound in seconds (SENTINEL_MEMORY_HOOK_TIME); default: the product's"
    )
    parser.add_argument(
        "--no-files",
        action="store_true",
        help="leave the project without the files the memory cites (placeholders by default)",
    )
    parser.add_argument(
        "--prompts",
        default="subject",
        choices=["subject", "described", "long"],
        help="a commit's subject as the prompt, or its subject and its body's first paragraph, or (long) that "
        "for related prompts and four commits' for unrelated ones",
    )
    parser.add_argument(
        "--examples", action="store_true", help="print what one hit and every unrelated injection put before the prompt"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    histories = []
    for spec in args.gitdirs:
        gitdir, _, revision = spec.partition("@")  # GITDIR@--all: every branch, as search_quality.py reads it
        commits = sq.history(gitdir, revision or "HEAD")
        histories.append((name_of(gitdir) + (f"@{revision}" if revision else ""), commits, sq.common_files(commits)))
    print(
        f"{'repository':<22} {'size':>5} {'rel':>4} {'hit':>6} {'fired':>6} {'srch@3':>6} {'evid':>6} {'ev>=.5':>6} {'recs':>5} {'unr':>4} {'any':>6} "
        f"{'med ms':>7} {'p95 ms':>7} {'>=1s':>4}"
        + (f" {'task':>6} {'t-any':>6} {'f-task':>6}" if WRITES[args.client] else ""),
        flush=True,
    )
    rows = run(
        histories,
        list(map(int, args.sizes.split(","))),
        args.tasks,
        args.later,
        args.client,
        args.time,
        args.examples,
        not args.no_files,
        args.prompts,
    )
    print()
    for size in sorted({r["size"] for r in rows}):
        some = [r for r in rows if r["size"] == size]
        related = sum(r["related"] for r in some)
        unrelated = sum(r["unrelated"] for r in some)
        hit = sum(r["hit"] * r["related"] for r in some) / max(1, related)
        anys = sum(r["any"] * r["unrelated"] for r in some) / max(1, unrelated)
        evidence = sum(r["evidence"] * r["related"] for r in some) / max(1, related)
        half = sum(r["half"] * r["related"] for r in some) / max(1, related)
        print(
            f"ALL at {size}: related prompts with a relevant lesson injected {hit:.0%} of {related} "
            f"(target >= 50%); unrelated prompts with anything injected {anys:.0%} of {unrelated} (target <= 5%)"
        )
        print(
            f"ALL at {size}, the ceiling: related prompts whose best relevant candidate has any evidence in "
            f"the prompt {evidence:.0%}, evidence of at least half the threshold {half:.0%}"
        )
        if all(r["swept"] and r["foreign_swept"] for r in some):
            at = [
                f"{t}: {sum(r['swept'][i] for r in some) / max(1, related):.0%} / "
                f"{sum(r['foreign_swept'][i] for r in some) / max(1, unrelated):.0%}"
                for i, t in enumerate(sq.THRESHOLDS)
            ]
            print(f"ALL at {size}, the prompt alone at other thresholds (related hit / unrelated any): {', '.join(at)}")
        if "task" in some[0]:
            task = sum(r["task"] * r["related"] for r in some) / max(1, related)
            task_any = sum(r["task_any"] * r["unrelated"] for r in some) / max(1, unrelated)
            focused = sum(r["focused"] for r in some)
            f_task = sum(r["f_task"] * r["focused"] for r in some) / max(1, focused)
            print(
                f"ALL at {size}, the prompt and the first {WRITTEN} writes of each task: related tasks shown a "
                f"relevant lesson {task:.0%}; another project's tasks shown anything {task_any:.0%}; "
                f"of the {focused} tasks with a focused relevant lesson, shown one {f_task:.0%}"
            )
    print(f"python -c pass in this run: {_python_pass():.0f} ms median; {time.monotonic() - started:.0f} s in all")


def _python_pass() -> float:
    times = []
    for _ in range(10):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


if __name__ == "__main__":
    main()
