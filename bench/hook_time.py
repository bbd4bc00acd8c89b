"""The client hook's cost: wall time from spawn to exit of `python server.py hook --client X`, at
1,000 and 10,000 records, beside `python -c pass` in the same run (docs/performance.md).

    .venv/bin/python bench/hook_time.py                 # 1,000 and 10,000 records, 21 runs each
    options: --sizes 1000,10000 --runs 21 --client claude --clone GITDIR

--clone GITDIR makes each project a clone of that repository instead (its real history): the
records cite 100 of its files, and are as old as the commit HISTORY commits before its HEAD, so a
prompt or a write that names a file reads the renames of those commits (hooks/renames.py).

Per size, in a real git repository with that many records (every tenth cites one of 100 files of
the project), the events a session sends most: a prompt that names a cited file (the lesson is
injected), an unrelated prompt (nothing), a prompt that is only "ok" (nothing), the first write of
a cited file (refused with its lessons) and a stop after a change. Each run is a new session (the
first hook of a session also takes the work tree's fingerprint), except the write (one session
that writes another cited file each round: each run is that file's first write, refused) and the stop (the session of
that round's "ok", whose first hook took the fingerprint before the change). Interleaved: one run of
each kind per round, so a slow spell of the machine hits all alike. Median and p95 (nearest rank)
in ms; the target: the prompt that names a file, median <= 150 ms at 1,000 records.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sentinel_memory.record.contextdir import prepare as prepare_context_dir  # noqa: E402
from sentinel_memory.record.disk import atomic_write  # noqa: E402
from sentinel_memory.record.records import Entry, prepare, utc_now  # noqa: E402
from sentinel_memory.record.snapshot import Snapshot  # noqa: E402
from sentinel_memory.record.store import memory_path  # noqa: E402

SERVER = ROOT / "server.py"
TOPICS = ["auth", "payment", "gateway", "migration", "frontend", "ci", "search", "billing", "notify", "deploy"]
FILES = 100


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, -(-len(ordered) * q // 100)) - 1]


HISTORY = 1000  # with --clone: the records are as old as the commit this many before HEAD


def project(size: int, where: Path, clone: str | None = None) -> tuple[Path, list[str]]:
    """A git repository with FILES files and `size` records, every tenth citing one of the files
    (with `clone`, a clone of that repository and FILES of its files); the files."""
    root = where / f"project-{size}"
    env = git_env(where)
    if clone:
        subprocess.run(["git", "clone", "-q", clone, str(root)], env=env, check=True, capture_output=True)
        listed = subprocess.run(["git", "ls-files"], cwd=root, env=env, capture_output=True, text=True).stdout
        files = [f for f in listed.splitlines() if f.endswith((".py", ".go", ".js", ".ts", ".java", ".rs"))][:FILES]
        old = subprocess.run(["git", "log", "--format=%cI"], cwd=root, env=env, capture_output=True, text=True)
        dates = old.stdout.split()
        created = dates[min(HISTORY, len(dates) - 1)]
    else:
        (root / "src").mkdir(parents=True)
        files = [f"src/module_{i}.py" for i in range(FILES)]
        for i, name in enumerate(files):
            (root / name).write_text(f"def handler_{i}():\n    return {i}\n", encoding="utf-8")
        created = utc_now()
    entries = {}
    for i in range(size):
        topic = TOPICS[i % len(TOPICS)]
        missing = f"Task {i}: the instructions did not say the {topic} service runs behind a proxy"
        lesson = f"For {topic} change {i}, stream long responses and keep each request under 25 s"
        draft = prepare(topic, missing, lesson, f"Which environment for {topic} change {i}?", "log")
        record = {"id": draft.id, **draft.fields(), "meta": {"created": created}}
        if i % 10 == 0:
            record["files"] = [files[(i // 10) % len(files)]]
        entries[draft.id] = Entry.of(record)
    path = memory_path(root)
    prepare_context_dir(path.parent)
    atomic_write(path, Snapshot(records=entries).text())
    for args in ([] if clone else [["init", "-q"]]) + [["add", "-A"], ["commit", "-q", "-m", "start"]]:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root, files


def git_env(where: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "SENTINEL_MEMORY_"))}
    env.update(
        HOME=str(where),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@example.com",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@example.com",
        XDG_CACHE_HOME=str(where / "cache"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # started as on a user's machine: bytecode cached
    return env


CPU: dict[str, list[float]] = {}  # per kind: the child's user + system time, ms


def spawn(argv: list[str], data: bytes, cwd: Path, env: dict) -> tuple[float, bytes, float]:
    """(wall ms from spawn to exit, what it said, the child's CPU ms: on a busy machine the steadier
    one). What it said is stdout, or stderr with exit code 2: how the Claude Code stop asks."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(argv, input=data, capture_output=True, cwd=cwd, env=env)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    said = result.stderr if result.returncode == 2 else result.stdout
    return wall, said, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--client", default="claude", choices=["claude", "codex", "gemini"])
    parser.add_argument("--clone", help="a git directory each project is a clone of (its real history)")
    args = parser.parse_args()
    began = time.perf_counter()
    where = Path(tempfile.mkdtemp(prefix="sm-hook-bench-"))
    try:
        env = git_env(where)
        hook = [sys.executable, str(SERVER), "hook", "--client", args.client]
        prompt_event, write_event, stop_event = {
            "claude": ("UserPromptSubmit", "PreToolUse", "Stop"),
            "codex": ("UserPromptSubmit", "PreToolUse", "Stop"),
            "gemini": ("BeforeAgent", "BeforeTool", "AfterAgent"),
        }[args.client]
        tool = {"claude": "Edit", "codex": "apply_patch", "gemini": "replace"}[args.client]
        rows: list[tuple[str, int, list[float], str]] = []
        for size in [int(s) for s in args.sizes.split(",")]:
            root, files = project(size, where, args.clone)
            kinds: dict[str, list[float]] = {}
            answered: dict[str, bool] = {}

            def run(
                kind: str,
                event: dict,
                root: Path = root,
                kinds: dict = kinds,
                answered: dict = answered,
                size: int = size,
            ) -> None:
                ms, out, cpu = spawn(hook, json.dumps({"cwd": str(root), **event}).encode(), root, env)
                kinds.setdefault(kind, []).append(ms)
                CPU.setdefault(f"{size}:{kind}", []).append(cpu)
                answered[kind] = answered.get(kind, False) or bool(out.strip())

            for n in range(args.runs + 1):  # the first round warms the disk cache and bytecode
                if n == 1:
                    kinds.clear()
                    for key in [k for k in CPU if k.startswith(f"{size}:")]:
                        del CPU[key]
                ms, _, cpu = spawn([sys.executable, "-c", "pass"], b"", root, env)
                kinds.setdefault("python -c pass", []).append(ms)
                CPU.setdefault(f"{size}:python -c pass", []).append(cpu)
                target = files[n % len(files)]
                run(
                    "prompt naming a cited file",
                    {
                        "session_id": f"p{size}-{n}",
                        "hook_event_name": prompt_event,
                        "prompt": f"Fix the handler in {target} please",
                    },
                )
                run(
                    "unrelated prompt",
                    {
                        "session_id": f"u{size}-{n}",
                        "hook_event_name": prompt_event,
                        "prompt": "Add a dark mode toggle to the settings page",
                    },
                )
                run("prompt 'ok'", {"session_id": f"o{size}-{n}", "hook_event_name": prompt_event, "prompt": "ok"})
                if args.client == "codex":
                    tool_input = {"command": f"*** Begin Patch\n*** Update File: {target}\n*** End Patch\n"}
                else:
                    tool_input = {"file_path": str(root / target), "old_string": "a", "new_string": "b"}
                run(
                    "first write of a cited file",
                    {
                        "session_id": f"w{size}",
                        "hook_event_name": write_event,
                        "tool_name": tool,
                        "tool_input": tool_input,
                    },
                )
                (root / files[0]).write_text(f"# {n}\n", encoding="utf-8")
                # The 'ok' prompt was that session's first hook: its stop sees a change and asks.
                run(
                    "stop after a change",
                    {"session_id": f"o{size}-{n}", "hook_event_name": stop_event, "stop_hook_active": False},
                )
            for kind, values in kinds.items():
                said = "" if kind == "python -c pass" else ("answered" if answered.get(kind) else "nothing")
                rows.append((kind, size, values, said))
        print(f"hook --client {args.client}: spawn to exit, ms (median / p95 of {args.runs} runs)")
        print(f"{'event':32} {'records':>8} {'median':>8} {'p95':>8} {'cpu med':>8}  printed")
        for kind, size, values, said in rows:
            cpu = sorted(CPU[f"{size}:{kind}"])
            print(
                f"{kind:32} {size:>8,} {pct(values, 50):>8.1f} {pct(values, 95):>8.1f} {cpu[len(cpu) // 2]:>8.1f}  {said}"
            )
        print(f"({time.perf_counter() - began:.0f} s in all)")
    finally:
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
