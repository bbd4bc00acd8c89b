"""Start-up and per-call latency of `python server.py` over real stdio, driven by the official `mcp`
SDK client (as Cursor would drive it). Prints one table of figures; asserts nothing.
The full benchmark (stdio and in-process, concurrency, git drivers, the reference server, tokens,
targets) is bench/benchmark.py, which imports its helpers (fill, params, time_calls, ...) from here.

    /tmp/venv/bin/python bench/stdio_latency.py [--sizes 50,1000] [--calls 30] [--spawns 7]

(a) spawn -> first tools/list answer (process start, initialize, tools/list), beside `python -c pass`,
    `python -c "import fastmcp"` (lazy) and `from fastmcp import FastMCP, Context` for scale. Each spawn gets a fresh empty project.
(b) per tool call, at each memory size N (records pre-filled straight into the temp project's
    .context/memory_log.jsonl through record.records and record.store, exactly as log_memory would store them):
      search_memory      a query against N records
      compact_memory     all topics (read-only)
      log_memory new     a new record each call (the file grows N, N+1, ...)
      log_memory upsert  one existing record's lesson changed on every call
    Calls run in that order on one server process; one warm-up call of each precedes timing.
The server is spawned with sys.executable, cwd = the temp project and `--project <it>`;
FASTMCP_CHECK_FOR_UPDATES=off for every child; their stderr goes to a temporary file (its tail is
printed when a call returns an error). Temp projects are deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_memory.record.contextdir import prepare as prepare_context_dir  # noqa: E402
from sentinel_memory.record.disk import atomic_write  # noqa: E402
from sentinel_memory.record.records import Entry, prepare, utc_now  # noqa: E402
from sentinel_memory.record.snapshot import Snapshot  # noqa: E402
from sentinel_memory.record.store import memory_path  # noqa: E402

SERVER = ROOT / "server.py"
# The servers' stderr (fastmcp's start-up INFO line, any logged failure) goes here, not to the table.
SERVER_LOG = tempfile.TemporaryFile("w+", encoding="utf-8")
TOPICS = [
    "auth",
    "payment",
    "api-gateway",
    "db-migration",
    "frontend",
    "ci",
    "search",
    "billing",
    "notifications",
    "deploy",
    "logging",
    "cache",
]


# The servers' cache folder (where the fast start keeps fastmcp's answers): new and empty for each
# run, so the first start of the run is a first start after an install, and the user's is untouched.
CACHE = tempfile.mkdtemp(prefix="sentinel-memory-bench-cache-")
_CACHES = [CACHE]


def new_cache() -> str:
    """Start again from an empty cache folder: the next start is a first start after an install."""
    global CACHE
    CACHE = tempfile.mkdtemp(prefix="sentinel-memory-bench-cache-")
    _CACHES.append(CACHE)
    return CACHE


@atexit.register
def _remove_caches() -> None:
    for folder in _CACHES:
        shutil.rmtree(folder, ignore_errors=True)


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = CACHE
    env["FASTMCP_CHECK_FOR_UPDATES"] = "off"
    env.pop("SENTINEL_MEMORY_PROJECT", None)
    # Servers start as on a user's machine: Python caches the compiled modules after the first
    # start. (Some sandboxes set this; every start would then compile sentinel_memory/ again, ~50 ms.)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


_GENERATED: list[Entry] = []


def generate(count: int) -> list[Entry]:
    """The first `count` bench records (Korean and English text mixed), as the server would store
    them: prepare() (normalise, redact, limits, id) and Entry.of(). Generated once and cached, so
    every size shares a prefix of one list."""
    created = utc_now()
    for i in range(len(_GENERATED), count):
        topic = TOPICS[i % len(TOPICS)]
        if i % 3 == 0:
            missing = f"결제 모듈 {i}번 작업: 환불 API는 멱등 키가 필요하다는 점이 지시에 없었음"
            lesson = f"환불 요청 {i}에는 항상 Idempotency-Key 헤더를 붙이고 재시도 횟수를 3회로 제한할 것"
            ask = "이 변경이 기존 결제 흐름에 영향을 주나요?"
        else:
            missing = (
                f"Task {i}: the instructions did not say the {topic} service runs behind a proxy with a 30 s timeout"
            )
            lesson = (
                f"For {topic} change {i}, stream long responses and keep each request under 25 s; test against staging"
            )
            ask = f"Which environment should {topic} change {i} be verified in?"
        draft = prepare(topic, missing, lesson, ask, "log")
        _GENERATED.append(Entry.of({"id": draft.id, **draft.fields(), "meta": {"created": created}}))
    return _GENERATED[:count]


def fill(project: Path, count: int) -> Path:
    """Write `count` valid log records straight into the project's memory file (no tool calls):
    Snapshot(records=...).text() through atomic_write, byte for byte what log_memory would write."""
    records = {e.id: e for e in generate(count)}
    path = memory_path(project)
    prepare_context_dir(path.parent)
    atomic_write(path, Snapshot(records=records).text())
    return path


def new_project() -> Path:
    return Path(tempfile.mkdtemp(prefix="sm-bench-"))


def params(project: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=[str(SERVER), "--project", str(project)], env=child_env(), cwd=str(project)
    )


async def spawn_to_tools_list(project: Path) -> float:
    start = time.perf_counter()
    async with stdio_client(params(project), errlog=SERVER_LOG) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            elapsed = time.perf_counter() - start
    assert len(tools.tools) == 3, [t.name for t in tools.tools]
    return elapsed


def plain_spawn(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=child_env())
    return time.perf_counter() - start


async def time_calls(session: ClientSession, name: str, make_args, calls: int) -> tuple[list[float], int]:
    """(latencies in s, error results). One untimed warm-up call first."""
    errors = 0
    result = await session.call_tool(name, make_args(-1))
    errors += bool(result.is_error)
    out = []
    for i in range(calls):
        args = make_args(i)
        start = time.perf_counter()
        result = await session.call_tool(name, args)
        out.append(time.perf_counter() - start)
        errors += bool(result.is_error)
        if result.is_error and errors == 1:
            print(f"  ! {name} returned an error: {result.content[0].text[:200]}", file=sys.stderr)
            SERVER_LOG.seek(0)
            print("".join(SERVER_LOG.readlines()[-20:]), file=sys.stderr)
            SERVER_LOG.seek(0, os.SEEK_END)
    return out, errors


async def per_call(size: int, calls: int) -> list[tuple[str, list[float], int, str]]:
    project = new_project()
    try:
        fill(project, size)
        rows = []
        async with stdio_client(params(project), errlog=SERVER_LOG) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()

                lat, err = await time_calls(
                    session, "search_memory", lambda i: {"query": "결제 환불 멱등 payment retry"}, calls
                )
                rows.append(("search_memory", lat, err, ""))
                lat, err = await time_calls(session, "compact_memory", lambda i: {}, calls)
                rows.append(("compact_memory", lat, err, ""))
                lat, err = await time_calls(
                    session,
                    "log_memory",
                    lambda i: {
                        "topic": "bench",
                        "missing_context": f"new record {i + 1}: the bench needed a fresh id",
                        "lesson": "Measure before guessing.",
                        "ask_next_time": "Which sizes matter?",
                    },
                    calls,
                )
                rows.append(("log_memory (new record)", lat, err, ""))
                lat, err = await time_calls(
                    session,
                    "log_memory",
                    lambda i: {
                        "topic": "upsert",
                        "missing_context": "one record rewritten on every call",
                        "lesson": f"Lesson revision {i + 1}: the latest text wins.",
                    },
                    calls,
                )
                rows.append(("log_memory (upsert, lesson changed)", lat, err, ""))
        final = memory_path(project).read_bytes().count(b"\n")
        rows.append(("", [], 0, f"records in file afterwards: {final}"))
        return rows
    finally:
        shutil.rmtree(project, ignore_errors=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,1000", help="memory sizes to pre-fill, comma-separated")
    parser.add_argument("--calls", type=int, default=30, help="timed calls per tool and size")
    parser.add_argument("--spawns", type=int, default=7, help="spawns for the start-up figures")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]

    ms = lambda s: f"{s * 1000:8.1f}"  # noqa: E731
    lines = []

    startup = []
    for _ in range(args.spawns):
        project = new_project()
        try:
            startup.append(await spawn_to_tools_list(project))
        finally:
            shutil.rmtree(project, ignore_errors=True)
    bare = [plain_spawn("pass") for _ in range(args.spawns)]
    imp = [plain_spawn("import fastmcp") for _ in range(args.spawns)]
    # `import fastmcp` alone is lazy; the server classes are what server.py actually loads.
    imp_server = [plain_spawn("from fastmcp import FastMCP, Context") for _ in range(args.spawns)]

    lines.append(
        f"Sentinel-Memory over stdio - {sys.executable} (Python {sys.version.split()[0]}), "
        f"{args.spawns} spawns, {args.calls} timed calls per row"
    )
    lines.append(f"{'measure':<50}{'n':>5}{'median ms':>11}{'p95 ms':>10}{'min ms':>10}{'max ms':>10}  errors")
    lines.append("-" * 104)

    def row(label, values, errors=0):
        lines.append(
            f"{label:<50}{len(values):>5}  {ms(statistics.median(values))} {ms(pct(values, 95))}"
            f"  {ms(min(values))}  {ms(max(values))}  {errors}"
        )

    row("spawn -> first tools/list (python server.py)", startup)
    row("python -c pass", bare)
    row("python -c 'import fastmcp'", imp)
    row("python -c 'from fastmcp import FastMCP, Context'", imp_server)
    for size in sizes:
        lines.append(f"-- {size:,} records pre-filled")
        for label, values, errors, note in await per_call(size, args.calls):
            if note:
                lines.append(f"   ({note})")
            else:
                row(f"  {label}", values, errors)
    print("\n".join(lines))


if __name__ == "__main__":
    asyncio.run(main())
