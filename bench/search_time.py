"""Search time of two checkouts' code on one memory of real commits: medians and their ratio.
Prints a few lines; asserts nothing; fetches nothing.

    .venv/bin/python bench/search_time.py --old DIR [--new DIR] [--records 10000] [--rounds 5] GITDIR [GITDIR ...]

The memory is built as bench/search_quality.py's timing builds it (every history's commits cycled,
each copy under its own topic suffix, until --records) and written once; each checkout's code then
searches it in its own process, the two alternating --rounds times so that the machine's load falls
on both alike. A process warms its index with one search, then answers each task's query (the
newest 20 commits of each history: subject, and with `files` their files), the query alone and
with files; the time is the CPU time of that process per search (time.process_time). Printed: the
median per mode and checkout, and new / old. With --new's code, also strong_matches (what a hook
calls per prompt).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(code: str, memory: str, tasks_file: str) -> None:
    sys.path.insert(0, code)
    from sentinel_memory.tools import answers

    tasks = json.loads(Path(tasks_file).read_text(encoding="utf-8"))
    try:  # the memory file as the server keeps it between searches
        from sentinel_memory.tools.memory import OpenMemory

        path = OpenMemory(memory)
    except ImportError:  # code that kept its caches in the modules
        path = Path(memory)
    answers.search(path, "warm up")
    out: dict[str, list[float]] = {"query": [], "query+files": []}
    for query, files in tasks:
        for mode, given in (("query", None), ("query+files", files)):
            start = time.process_time()
            answers.search(path, query, files=given) if given else answers.search(path, query)
            out[mode].append((time.process_time() - start) * 1000)
    try:
        from sentinel_memory.tools.memory import strong_matches
    except ImportError:
        strong_matches = None
    if strong_matches is not None:
        out["strong_matches"] = []
        for query, files in tasks:
            start = time.process_time()
            strong_matches(path, query, files)
            out["strong_matches"].append((time.process_time() - start) * 1000)
    print(json.dumps(out))


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdirs", nargs="+")
    parser.add_argument("--old", required=True, help="the checkout whose code is today's")
    parser.add_argument("--new", default=str(HERE.parent), help="the checkout to compare (default: this one)")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import search_quality as quality  # noqa: E402 (this checkout's helpers build the memory)

    histories = []
    for gitdir in args.gitdirs:
        commits = quality.history(gitdir)
        histories.append((gitdir, commits, quality.common_files(commits)))
    entries, seen, copy = [], set(), 0
    while len(entries) < args.records:
        for _, commits, common in histories:
            for c in commits:
                e = quality.record_of(c, common, f"-{copy}" if copy else "")
                if e.id not in seen and len(entries) < args.records:
                    seen.add(e.id)
                    entries.append(e)
        copy += 1
    tasks = [
        (c["subject"], [f for f in dict.fromkeys(c["files"]) if f not in common][:10])
        for _, commits, common in histories
        for c in commits[-20:]
    ]
    with tempfile.TemporaryDirectory(prefix="sm-time-") as tmp:
        project = Path(tmp)
        path = quality.write_memory(project, entries)
        tasks_file = project / "tasks.json"
        tasks_file.write_text(json.dumps(tasks), encoding="utf-8")
        times: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
        started = time.monotonic()
        for _ in range(args.rounds):
            for name, code in (("old", args.old), ("new", args.new)):
                out = subprocess.run(
                    [sys.executable, __file__, "--worker", code, str(path), str(tasks_file)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                for mode, values in json.loads(out.strip().splitlines()[-1]).items():
                    times[name].setdefault(mode, []).extend(values)
    print(
        f"search time at {len(entries):,} records, {len(tasks)} tasks x {args.rounds} rounds per checkout "
        f"({time.monotonic() - started:.0f} s): median CPU ms per search"
    )
    for mode in ("query", "query+files"):
        old, new = statistics.median(times["old"][mode]), statistics.median(times["new"][mode])
        print(f"  {mode:<12} old {old:6.2f}  new {new:6.2f}  new/old {new / old:.2f}")
    if "strong_matches" in times["new"]:
        print(f"  strong_matches (new only) {statistics.median(times['new']['strong_matches']):.2f}")


if __name__ == "__main__":
    main()
