"""Sentinel-Memory benchmark: one command, one table, the targets checked as ratios of one run.

    /tmp/venv/bin/python bench/benchmark.py            # full run (docs/performance.md gives its time)
    /tmp/venv/bin/python bench/benchmark.py --quick    # fast subset: sizes 50 and 1,000, fewer calls
    options: --sizes 50,1000,10000,50000 --calls 30 --rounds 100 --big-calls 10 --spawns 11 --procs 2,4,8
             --loaded-spawns 11 --burners N --first-turn 1.5 --startup-only
             --per-proc 50 --driver-size 10000 --driver-runs 5 --node-dir /tmp/sm-bench-node
             --no-reference --profile

Sections of the table (times in ms; "n" is how many samples the median and p95 come from):
  A  spawn -> first tools/list answer: `python -c pass`, a bare server on the `mcp` SDK's low-level
     API (bench/bare_lowlevel_server.py, one tool), `python server.py` with the fast start and
     without (SENTINEL_MEMORY_FAST_START=0), the Node reference server; a search_memory sent at
     once after tools/list, and the first and later ones sent --first-turn seconds apart.
  A' the same with CPU burners on the other cores (--burners N, --loaded-spawns N; 0 skips it).
  B  per call over stdio (official `mcp` client) at each size: log_memory new / upsert,
     search_memory, compact_memory; the reference server's create_entities / add_observations /
     read_graph / search_nodes at the same sizes (its file pre-filled in its own JSONL format).
  C  the same operations in-process on core, beside the raw floor: the same bytes written to a temp
     file with fsync and os.replace; "x floor" is the ratio that matters. Writes and floors are
     timed in interleaved rounds (one of each per round), so the disk's slow spells hit all alike.
  D  K concurrent real stdio server processes on one file, each logging N distinct records:
     throughput and records lost (counted in the file afterwards), ours and the reference's.
  E  `server.py merge-driver` and `server.py textconv` on a 10,000-record file, process start to exit.
  S  stale marks: in-process search at 10,000 records of which 1,000 cite a file each, in a git
     repository whose history since the records changed, deleted or renamed some of those files,
     beside the same memory file in a directory outside git (no marks possible): steady search,
     and the first search after a start (every cache dropped: parse, index, and the one git log).
  F  cl100k_base tokens of search_memory's output for 50 records beside the raw JSONL of the same
     records (tiktoken, with the cl100k_base ranks that the npm package js-tiktoken ships: offline).
  T  the targets, each as a ratio measured in this run, MET or MISSED.

Files are pre-filled by writing lines directly (bench/stdio_latency.py: prepare + Entry.of +
Snapshot(records=...).text() + atomic_write), never through tool calls. The Node packages are
installed with npm into --node-dir (default /tmp/sm-bench-node, outside the repo) when missing.
Everything temporary lives under the system temp directory and is deleted afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import stdio_latency  # noqa: E402
from filelock import lock_descriptor  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from stdio_latency import (  # noqa: E402  (also puts the repo root on sys.path)
    ROOT,
    SERVER,
    SERVER_LOG,
    child_env,
    fill,
    generate,
    new_project,
    params,
    pct,
    time_calls,
)

from sentinel_memory import tools as core  # noqa: E402
from sentinel_memory.record import store  # noqa: E402
from sentinel_memory.record.records import Entry, utc_now  # noqa: E402
from sentinel_memory.record.snapshot import Snapshot  # noqa: E402
from sentinel_memory.tools import memory, render  # noqa: E402
from sentinel_memory.tools.memory import BUDGET_ENV, search_budget  # noqa: E402

BARE = BENCH / "bare_lowlevel_server.py"
NODE_PACKAGES = {"@modelcontextprotocol/server-memory": "2026.8.31", "js-tiktoken": "1.0.21"}
REF_ENTRY = Path("node_modules/@modelcontextprotocol/server-memory/dist/index.js")
RANKS = Path("node_modules/js-tiktoken/dist/ranks/cl100k_base.js")
QUERY = "결제 환불 멱등 payment retry"


# ---------------------------------------------------------------------------------------- table


class Table:
    """One table: section lines, timing rows (median / p95 in ms) and figure rows."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str) -> None:
        self.lines.append(f"{title}")

    def timing(self, label: str, values: list[float], note: str = "") -> None:
        if not values:
            self.lines.append(f"  {label:<62}{'-':>5}{'-':>11}{'-':>10}  {note}")
            return
        self.lines.append(
            f"  {label:<62}{len(values):>5}{statistics.median(values) * 1000:>11.1f}"
            f"{pct(values, 95) * 1000:>10.1f}  {note}"
        )

    def figure(self, label: str, value: str, note: str = "") -> None:
        self.lines.append(f"  {label:<62}{'':>5}{value:>21}  {note}")

    def text(self, title: str) -> str:
        head = f"  {'measure':<62}{'n':>5}{'median ms':>11}{'p95 ms':>10}  notes"
        rule = "-" * 122
        return "\n".join([title, rule, head, rule, *self.lines, rule])


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b and b == b and a == a else "n/a"


# ------------------------------------------------------------------------------- node and tokens


def ensure_node(node_dir: Path) -> bool:
    """Install the reference server and js-tiktoken into node_dir (outside the repo) if missing."""
    if (node_dir / REF_ENTRY).exists() and (node_dir / RANKS).exists():
        return True
    if shutil.which("npm") is None:
        return False
    node_dir.mkdir(parents=True, exist_ok=True)
    if not (node_dir / "package.json").exists():
        (node_dir / "package.json").write_text('{"private": true}\n')
    specs = [f"{name}@{version}" for name, version in NODE_PACKAGES.items()]
    result = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", *specs], cwd=node_dir, capture_output=True, text=True
    )
    if result.returncode != 0:
        print(f"npm install failed:\n{result.stderr[-2000:]}", file=sys.stderr)
    return (node_dir / REF_ENTRY).exists()


class Tokens:
    """cl100k_base token counts offline: tiktoken's BPE core with the mergeable ranks that the npm
    package js-tiktoken ships (tiktoken itself would download them from the internet). Falls back
    to js-tiktoken under node when the Python package is missing."""

    def __init__(self, node_dir: Path) -> None:
        self.node_dir = node_dir
        self.how = "unavailable"
        self.encoding = None
        ranks_file = node_dir / RANKS
        if not ranks_file.exists():
            return
        try:
            import tiktoken
        except ImportError:
            if shutil.which("node"):
                self.how = f"js-tiktoken {NODE_PACKAGES['js-tiktoken']} under node (cl100k_base)"
            return
        src = ranks_file.read_text(encoding="utf-8")
        data = json.loads(src[src.index("{") : src.rindex("}") + 1])
        ranks: dict[bytes, int] = {}
        for line in data["bpe_ranks"].split("\n"):
            if line:
                _, offset, *tokens = line.split(" ")
                for i, token in enumerate(tokens):
                    ranks[base64.b64decode(token)] = int(offset) + i
        try:  # tiktoken's own pattern and special tokens; only the ranks come from the npm package
            from tiktoken_ext.openai_public import CL100K_PATTERN as pattern
        except ImportError:
            pattern = data["pat_str"]
        self.encoding = tiktoken.Encoding(
            name="cl100k_base", pat_str=pattern, mergeable_ranks=ranks, special_tokens=data["special_tokens"]
        )
        assert self.encoding.encode("hello world") == [15339, 1917], "cl100k_base ranks look wrong"
        self.how = (
            f"tiktoken {tiktoken.__version__} + cl100k_base ranks from npm js-tiktoken {NODE_PACKAGES['js-tiktoken']}"
        )

    def count(self, text: str) -> int | None:
        if self.encoding is not None:
            return len(self.encoding.encode(text, disallowed_special=()))
        if self.how.startswith("js-tiktoken"):
            script = (
                "const {getEncoding}=require('js-tiktoken');let s='';process.stdin.on('data',d=>s+=d);"
                "process.stdin.on('end',()=>console.log(getEncoding('cl100k_base').encode(s).length))"
            )
            out = subprocess.run(
                ["node", "-e", script], input=text, capture_output=True, text=True, cwd=self.node_dir, check=True
            )
            return int(out.stdout.strip())
        return None


# --------------------------------------------------------------------------------- reference server


def ref_params(node_dir: Path, memory_file: Path) -> StdioServerParameters:
    env = dict(os.environ, MEMORY_FILE_PATH=str(memory_file))
    return StdioServerParameters(command="node", args=[str(node_dir / REF_ENTRY)], env=env, cwd=str(memory_file.parent))


def ref_entity(entry: Entry) -> dict:
    """One of our records as the reference server's entity: name, type, observations."""
    r = entry.record
    return {
        "name": f"{r['topic']}-{r['id']}",
        "entityType": r["topic"],
        "observations": [r["missing_context"], r["lesson"], r["ask_next_time"]],
    }


def ref_fill(memory_file: Path, count: int) -> list[str]:
    """Write count entities in the reference server's own format (its saveGraph: one
    JSON.stringify'd {"type":"entity",name,entityType,observations} per line, joined by \\n)."""
    entities = [ref_entity(e) for e in generate(count)]
    lines = [json.dumps({"type": "entity", **e}, ensure_ascii=False, separators=(",", ":")) for e in entities]
    memory_file.write_text("\n".join(lines), encoding="utf-8")
    return [e["name"] for e in entities]


def ref_count(memory_file: Path) -> int:
    try:
        text = memory_file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return 0
    return sum(1 for line in text.split("\n") if line.strip() and json.loads(line).get("type") == "entity")


# ----------------------------------------------------------------------------------------- timing


def spawn_plain(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=child_env())
    return time.perf_counter() - start


async def spawn_to_tools_list(
    server: StdioServerParameters, call: str | None = None, wait: float = 0.0, calls: int = 1
) -> tuple[float, list[float]]:
    """Spawn -> tools/list answered; with `call`, then that tool called `calls` times, each after
    `wait` seconds (as an agent's turns would), returning how long each call itself took."""
    start = time.perf_counter()
    called = []
    async with stdio_client(server, errlog=SERVER_LOG) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            elapsed = time.perf_counter() - start
            for _ in range(calls if call is not None else 0):
                if wait:
                    await asyncio.sleep(wait)
                began = time.perf_counter()
                result = await session.call_tool(call, {"query": QUERY})
                called.append(time.perf_counter() - began)
                assert not result.is_error, result
    assert tools.tools, "no tools listed"
    return elapsed, called


def burners(count: int) -> list[subprocess.Popen]:
    """CPU burners: busy processes that load `count` cores while the start-up is measured."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def ours_params(project: Path, fast: bool) -> StdioServerParameters:
    server = params(project)
    server.env = dict(server.env or {}, SENTINEL_MEMORY_FAST_START="1" if fast else "0")
    return server


async def startup_round(args, node_dir: Path | None, kinds: dict[str, list[float]], suffix: str = "") -> None:
    """One spawn of each kind, interleaved, so drift in machine load hits every kind alike."""
    bare = StdioServerParameters(command=sys.executable, args=[str(BARE)], env=child_env())
    kinds["pass" + suffix].append(spawn_plain("pass"))
    kinds["bare" + suffix].append((await spawn_to_tools_list(bare))[0])
    project = new_project()
    try:
        listed, called = await spawn_to_tools_list(ours_params(project, True), "search_memory")
        kinds["ours" + suffix].append(listed)
        kinds["ready" + suffix].append(listed + called[0])  # a call sent at once waits for fastmcp to load
        listed, called = await spawn_to_tools_list(ours_params(project, True), "search_memory", args.first_turn, 3)
        kinds["first call" + suffix].append(called[0])
        kinds["later call" + suffix] += called[1:]
        kinds["ours off" + suffix].append((await spawn_to_tools_list(ours_params(project, False)))[0])
        if node_dir:
            kinds["ref" + suffix].append((await spawn_to_tools_list(ref_params(node_dir, project / "ref.jsonl")))[0])
    finally:
        shutil.rmtree(project, ignore_errors=True)


async def startup(table: Table, args, node_dir: Path | None) -> dict[str, list[float]]:
    kinds: dict[str, list[float]] = {}
    for suffix in ("", " loaded"):
        for kind in ("pass", "bare", "ours", "ready", "first call", "later call", "ours off", "ref"):
            kinds[kind + suffix] = []
    # Untimed: a start writes the compiled modules, as pip does on a user's machine. With the fast
    # start off, so the timed series begins with the first start after an install: an ordinary one
    # that records fastmcp's answers in the run's empty cache folder (stdio_latency.CACHE).
    warm = new_project()
    try:
        await spawn_to_tools_list(StdioServerParameters(command=sys.executable, args=[str(BARE)], env=child_env()))
        await spawn_to_tools_list(ours_params(warm, False))
    finally:
        shutil.rmtree(warm, ignore_errors=True)
    for _ in range(args.spawns):
        await startup_round(args, node_dir, kinds)
    load = (
        (args.burners if args.burners is not None else max(1, (os.cpu_count() or 2) - 1)) if args.loaded_spawns else 0
    )
    if load:
        busy = burners(load)
        stdio_latency.new_cache()  # the loaded series begins with a first start too
        try:
            time.sleep(0.5)
            for _ in range(args.loaded_spawns):
                await startup_round(args, node_dir, kinds, " loaded")
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()
    for suffix, title in (
        ("", "A. spawn -> first tools/list answer (process start, initialize, tools/list)"),
        (" loaded", f"A'. the same with {load} CPU burner process{'es' if load > 1 else ''} (busy loops) running"),
    ):
        if not kinds["ours" + suffix]:
            continue
        bare = med(kinds["bare" + suffix])
        ref = med(kinds["ref" + suffix])
        vs_ref = f"; {ratio(med(kinds['ours' + suffix]), ref)} node reference" if kinds["ref" + suffix] else ""
        table.section(title)
        table.timing("python -c pass", kinds["pass" + suffix])
        table.timing(
            "bare mcp low-level server, 1 tool (bench/bare_lowlevel_server)", kinds["bare" + suffix], "1.00x bare"
        )
        table.timing(
            "python server.py (fastmcp behind the fast start), every start",
            kinds["ours" + suffix],
            f"{ratio(med(kinds['ours' + suffix]), bare)} bare{vs_ref}",
        )
        ours = kinds["ours" + suffix]
        table.timing(
            "  its first start (ordinary: records fastmcp's answers)",
            ours[:1],
            f"{ratio(ours[0], ref)} node reference" if kinds["ref" + suffix] else "",
        )
        table.timing(
            "  the later starts (answered from the recorded answers)",
            ours[1:],
            f"{ratio(med(ours[1:]), ref)} node reference" if kinds["ref" + suffix] and ours[1:] else "",
        )
        table.timing(
            "python server.py, SENTINEL_MEMORY_FAST_START=0 (fastmcp alone)",
            kinds["ours off" + suffix],
            f"{ratio(med(kinds['ours off' + suffix]), bare)} bare",
        )
        if kinds["ref" + suffix]:
            table.timing(
                "reference @modelcontextprotocol/server-memory (node)",
                kinds["ref" + suffix],
                f"{ratio(ref, bare)} bare",
            )
        table.timing(
            "  spawn -> a search_memory sent at once after tools/list answered",
            kinds["ready" + suffix],
            "waits for fastmcp to load",
        )
        table.timing(
            f"  first search_memory, sent {args.first_turn:g} s after tools/list (an agent's first turn)",
            kinds["first call" + suffix],
            "the call alone",
        )
        table.timing(
            f"  the 2nd and 3rd search_memory, each {args.first_turn:g} s after the previous answer",
            kinds["later call" + suffix],
            "the same spacing: the steady state an agent sees",
        )
    return kinds


def startup_targets(target, spawn: dict[str, list[float]], ours_stdio: dict) -> None:
    """Start-up beside the Node reference server, quiet and loaded; the first call beside the
    steady state."""
    for suffix, how in (("", "quiet"), (" loaded", "loaded")):
        ours, ref, bare = spawn["ours" + suffix], spawn["ref" + suffix], spawn["bare" + suffix]
        if ours and ref:
            x = med(ours) / med(ref)
            target(
                f"spawn -> tools/list <= 0.3x node reference server ({how}; every start, the first included)",
                f"{x:.2f}x",
                x <= 0.3,
                f"{med(ours) * 1000:.0f} ms vs {med(ref) * 1000:.0f} ms; bare low-level "
                f"{med(bare) * 1000:.0f} ms; fast start off {med(spawn['ours off' + suffix]) * 1000:.0f} ms",
            )
    for suffix, how in (("", "quiet"), (" loaded", "loaded")):
        first, later = spawn["first call" + suffix], spawn["later call" + suffix]
        if first and later:
            x = med(first) / med(later)
            back_to_back = ours_stdio.get(50, {}).get("search")
            note = f"; back to back (B, 50 records) {med(back_to_back) * 1000:.1f} ms" if back_to_back else ""
            target(
                f"first search_memory <= 1.25x later ones, same spacing ({how})",
                f"{x:.2f}x",
                x <= 1.25,
                f"{med(first) * 1000:.1f} ms vs {med(later) * 1000:.1f} ms{note}",
            )


def calls_for(size: int, args) -> int:
    return args.big_calls if size >= 50_000 else args.calls


async def stdio_ours(size: int, calls: int) -> dict[str, list[float]]:
    project = new_project()
    try:
        fill(project, size)
        out = {}
        async with stdio_client(params(project), errlog=SERVER_LOG) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                out["log new"], e1 = await time_calls(
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
                out["log upsert"], e2 = await time_calls(
                    session,
                    "log_memory",
                    lambda i: {
                        "topic": "upsert",
                        "missing_context": "one record rewritten on every call",
                        "lesson": f"Lesson revision {i + 1}: the latest text wins.",
                    },
                    calls,
                )
                out["search"], e3 = await time_calls(session, "search_memory", lambda i: {"query": QUERY}, calls)
                out["compact"], e4 = await time_calls(session, "compact_memory", lambda i: {}, calls)
        out["errors"] = e1 + e2 + e3 + e4
        out["final"] = store.memory_path(project).read_bytes().count(b"\n")
        return out
    finally:
        shutil.rmtree(project, ignore_errors=True)


async def stdio_ref(node_dir: Path, size: int, calls: int) -> dict:
    project = new_project()
    try:
        memory_file = project / "memory.jsonl"
        names = ref_fill(memory_file, size)
        out = {}
        async with stdio_client(ref_params(node_dir, memory_file), errlog=SERVER_LOG) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                out["create"], e1 = await time_calls(
                    session,
                    "create_entities",
                    lambda i: {
                        "entities": [
                            {
                                "name": f"bench-new-{i + 1}",
                                "entityType": "bench",
                                "observations": [
                                    f"new record {i + 1}: the bench needed a fresh id",
                                    "Measure before guessing.",
                                    "Which sizes matter?",
                                ],
                            }
                        ]
                    },
                    calls,
                )
                target = names[len(names) // 2]
                out["add"], e2 = await time_calls(
                    session,
                    "add_observations",
                    lambda i: {
                        "observations": [
                            {"entityName": target, "contents": [f"Lesson revision {i + 1}: the latest text wins."]}
                        ]
                    },
                    calls,
                )
                out["read_graph"], e3 = await time_calls(session, "read_graph", lambda i: {}, calls)
                out["search_nodes"], e4 = await time_calls(
                    session, "search_nodes", lambda i: {"query": "payment"}, calls
                )
        out["errors"] = e1 + e2 + e3 + e4
        out["final"] = ref_count(memory_file)
        return out
    finally:
        shutil.rmtree(project, ignore_errors=True)


def timed(fn, calls: int, before=None) -> list[float]:
    out = []
    for i in range(calls):
        if before:
            before()
        start = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - start)
    return out


def raw_floor(path: Path, data: bytes) -> None:
    """The least a durable whole-file rewrite costs: temp file, write, fsync, os.replace."""
    tmp = path.with_name(f".floor.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def raw_floor_dir(path: Path, data: bytes) -> None:
    """The floor plus the directory fsync that makes the rename itself durable (atomic_write does it)."""
    raw_floor(path, data)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def locked_floor(path: Path, data: bytes) -> None:
    """The least a locked durable rewrite costs: the floor and the directory fsync, both under the
    native lock on "<file>.lock" (the one filelock's FileLock takes), as docs/contract.md §5 requires."""
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        lock_descriptor(fd)
        raw_floor_dir(path, data)
    finally:
        os.close(fd)


def inprocess(size: int, rounds: int) -> dict:
    """In-process core calls at one size: the reads first, on the file as filled; then writes and
    floors, interleaved: each round times one of each, so a slow spell of the disk or the machine
    weighs on all of them alike and their ratios stay put. The floors write the memory file's
    bytes as they are at that round (it grows by a record a round, as logging does)."""
    project = new_project()
    try:
        path = fill(project, size)
        os.environ.pop(BUDGET_ENV, None)
        out = {"bytes": len(path.read_bytes())}
        # Each cold search on the memory file opened afresh (what a new process has: nothing kept);
        # every later call on the last one opened, as the server keeps it between calls.
        opened = memory.OpenMemory(path)

        def reopen() -> None:
            nonlocal opened
            opened = memory.OpenMemory(path)

        out["search cold"] = timed(lambda i: core.search(opened, QUERY), min(rounds, 5), before=reopen)
        out["search"] = timed(lambda i: core.search(opened, QUERY), rounds)
        out["compact"] = timed(lambda i: core.compact(opened), min(rounds, 30))
        out["search text"] = core.search(opened, QUERY)
        out["compact chars"] = len(core.compact(opened))
        floor_target = path.with_name("floor.jsonl")
        writes = {
            "floor": lambda i, data: raw_floor(floor_target, data),
            "floor dir": lambda i, data: raw_floor_dir(floor_target, data),
            "floor locked": lambda i, data: locked_floor(floor_target, data),
            "log new": lambda i, data: core.log(
                opened,
                "bench",
                f"new record {i + 1}: the bench needed a fresh id",
                "Measure before guessing.",
                "Which sizes matter?",
            ),
            "log upsert": lambda i, data: core.log(
                opened,
                "upsert",
                "one record rewritten on every call",
                f"Lesson revision {i + 1}: the latest text wins.",
            ),
        }
        out.update({name: [] for name in writes})
        core.log(opened, "upsert", "one record rewritten on every call", "Lesson revision 0.")  # warm-up
        for i in range(rounds):
            data = path.read_bytes()  # the floors write exactly the bytes of the memory file as it is
            for name, write in writes.items():
                start = time.perf_counter()
                write(i, data)
                out[name].append(time.perf_counter() - start)
        # A search right after a write of this process: its index is derived from the previous one.
        core.search(opened, QUERY)
        out["search after write"] = timed(
            lambda i: core.search(opened, QUERY),
            min(rounds, 30),
            before=lambda: core.log(
                opened, "bench", f"then search {time.perf_counter_ns()}", "A write, then a search."
            ),
        )
        return out
    finally:
        shutil.rmtree(project, ignore_errors=True)


async def concurrent(
    make_server, tool: str, make_args, warm_tool: str, warm_args: dict, procs: int, per_proc: int
) -> tuple[list[float], float, int]:
    """procs real stdio servers on one file, all started first, then each makes per_proc calls at once.
    Returns (call latencies, wall seconds for all calls, error results)."""
    latencies: list[float] = []
    errors = 0
    async with AsyncExitStack() as stack:
        sessions = []
        for k in range(procs):
            read, write = await stack.enter_async_context(stdio_client(make_server(k), errlog=SERVER_LOG))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            await session.call_tool(warm_tool, warm_args)  # imports, first-call set-up, git check
            sessions.append(session)

        async def worker(k: int, session: ClientSession) -> None:
            nonlocal errors
            for i in range(per_proc):
                start = time.perf_counter()
                result = await session.call_tool(tool, make_args(k, i))
                latencies.append(time.perf_counter() - start)
                errors += bool(result.is_error)

        start = time.perf_counter()
        await asyncio.gather(*(worker(k, s) for k, s in enumerate(sessions)))
        wall = time.perf_counter() - start
    return latencies, wall, errors


async def concurrency(table: Table, args, node_dir: Path | None) -> dict:
    results = {}
    table.section(
        f"D. concurrent writers on one file: K real stdio server processes x {args.per_proc} distinct "
        "records each (latency = one call)"
    )
    for procs in args.procs:
        project = new_project()
        try:
            lat, wall, errors = await concurrent(
                lambda k, project=project: params(project),
                "log_memory",
                lambda k, i: {
                    "topic": f"proc{k}",
                    "missing_context": f"process {k} record {i}: distinct",
                    "lesson": "Concurrent writers must not lose records.",
                },
                "search_memory",
                {"query": "warm"},
                procs,
                args.per_proc,
            )
            want = procs * args.per_proc
            have = store.memory_path(project).read_bytes().count(b"\n")
            results[("ours", procs)] = want - have
            table.timing(
                f"sentinel log_memory, {procs} processes",
                lat,
                f"{want / wall:7.1f} rec/s; in file {have}/{want}; LOST {want - have}; errors {errors}",
            )
        finally:
            shutil.rmtree(project, ignore_errors=True)
        if node_dir:
            project = new_project()
            try:
                memory_file = project / "memory.jsonl"
                lat, wall, errors = await concurrent(
                    lambda k, memory_file=memory_file: ref_params(node_dir, memory_file),
                    "create_entities",
                    lambda k, i: {
                        "entities": [
                            {
                                "name": f"proc{k}-record{i}",
                                "entityType": f"proc{k}",
                                "observations": ["Concurrent writers must not lose records."],
                            }
                        ]
                    },
                    "read_graph",
                    {},
                    procs,
                    args.per_proc,
                )
                want = procs * args.per_proc
                have = ref_count(memory_file)
                results[("ref", procs)] = want - have
                table.timing(
                    f"reference create_entities, {procs} processes",
                    lat,
                    f"{want / wall:7.1f} rec/s; in file {have}/{want}; LOST {want - have}; errors {errors}",
                )
            finally:
                shutil.rmtree(project, ignore_errors=True)
    return results


def git_drivers(table: Table, args) -> dict[str, list[float]]:
    """merge-driver on base/ours/theirs of driver_size records (each side adds and changes some),
    and textconv on the base; process start to exit."""
    size = args.driver_size
    work = Path(tempfile.mkdtemp(prefix="sm-bench-git-"))
    try:
        everything = generate(size + 200)
        base_entries = everything[:size]
        later = utc_now()

        def changed(entry: Entry, side: str) -> Entry:
            r = entry.record
            return Entry.of({**r, "lesson": f"{r['lesson']} ({side})", "meta": {**r["meta"], "updated": later}})

        def side(extra: list[Entry], change: range, name: str) -> bytes:
            records = {e.id: e for e in base_entries}
            for i in change:
                records[base_entries[i].id] = changed(base_entries[i], name)
            records.update({e.id: e for e in extra})
            return Snapshot(records=records).text()

        (work / "base").write_bytes(Snapshot(records={e.id: e for e in base_entries}).text())
        ours = side(everything[size : size + 100], range(0, 100, 2), "ours")
        (work / "theirs").write_bytes(side(everything[size + 100 :], range(1, 100, 2), "theirs"))
        merge, conv = [], []
        for _ in range(args.driver_runs):
            (work / "ours").write_bytes(ours)
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, str(SERVER), "merge-driver", "base", "ours", "theirs", ".context/memory_log.jsonl"],
                cwd=work,
                env=child_env(),
            )
            merge.append(time.perf_counter() - start)
            assert result.returncode == 0, "merge-driver failed"
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, str(SERVER), "textconv", "base"],
                cwd=work,
                env=child_env(),
                stdout=subprocess.DEVNULL,
                check=True,
            )
            conv.append(time.perf_counter() - start)
        merged = (work / "ours").read_bytes().count(b"\n")
        table.section(f"E. git drivers on {size:,} records (process start to exit)")
        table.timing(
            "python server.py merge-driver base ours theirs",
            merge,
            f"each side +100 new, 50 changed; merged file {merged:,} records (want {size + 200:,})",
        )
        table.timing("python server.py textconv base", conv)
        return {"merge": merge, "textconv": conv}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def git_quiet(cwd: Path, *args: str, when: str | None = None) -> None:
    env = child_env()
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    subprocess.run(
        ["git", "-C", str(cwd), "-c", "commit.gpgsign=false", *args], env=env, check=True, capture_output=True
    )


def opened_afresh(path: Path) -> memory.OpenMemory:
    """What a new process starts with: the memory file opened afresh (no snapshot, no index) and
    no history or marks of git's kept (its KeptMarks is new too)."""
    return memory.OpenMemory(path)


def stale_marks(table: Table, args) -> dict[str, list[float]]:
    """Search with stale marks against the same memory without them (docs/performance.md, S)."""
    size, citing, commits = args.stale_size, args.stale_files, args.stale_commits
    work = Path(tempfile.mkdtemp(prefix="sm-bench-stale-"))
    try:
        repo, plain = work / "repo", work / "plain"
        for root in (repo, plain):
            (root / "src").mkdir(parents=True)
            for i in range(citing):
                (root / "src" / f"mod{i}.py").write_text(f"VALUE = {i}\n")
        git_quiet(work, "init", "-q", "-b", "main", str(repo))
        git_quiet(repo, "add", "-A")
        git_quiet(repo, "commit", "-q", "-m", "the code", when="2026-01-01T00:00:00+00:00")
        # The memory: `size` records, the first `citing` of them citing one file each, written on
        # 2026-01-02; the others on 2025-06-01.
        entries = {}
        for i, entry in enumerate(generate(size)):
            record = dict(entry.record)
            # The citing records are the newest, so that the answer lists them (and their marks) first.
            if i < citing:
                record.update(files=[f"src/mod{i}.py"], meta={"created": "2026-01-02T00:00:00+00:00"})
            else:
                record.update(meta={"created": "2025-06-01T00:00:00+00:00"})
            entries[record["id"]] = Entry.of(record)
        text = Snapshot(records=entries).text()
        for root in (repo, plain):
            path = store.memory_path(root)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
        # The history since: `commits` commits, each changing two cited files; every 10th also
        # renames one and every 25th deletes one (so about a fifth of the citing records are stale).
        for c in range(commits):
            day = f"2026-02-{1 + c % 28:02d}T{c % 24:02d}:00:00+00:00"
            for j in (c * 2, c * 2 + 1):
                f = repo / "src" / f"mod{(j * 7) % citing}.py"
                if f.exists():
                    f.write_text(f.read_text() + f"# change {c}\n")
            if c % 10 == 9 and (repo / "src" / f"mod{(c * 13) % citing}.py").exists():
                git_quiet(repo, "mv", f"src/mod{(c * 13) % citing}.py", f"src/renamed{c}.py")
            if c % 25 == 24 and (repo / "src" / f"mod{(c * 17) % citing}.py").exists():
                git_quiet(repo, "rm", "-q", f"src/mod{(c * 17) % citing}.py")
            git_quiet(repo, "add", "-A")
            git_quiet(repo, "commit", "-q", "-m", f"change {c}", when=day)
        os.environ.pop(BUDGET_ENV, None)
        out: dict[str, list[float]] = {"plain": [], "git": [], "plain cold": [], "git cold": []}
        paths = {"plain": store.memory_path(plain), "git": store.memory_path(repo)}
        texts = {name: core.search(p, QUERY) for name, p in paths.items()}
        for _ in range(args.stale_cold):  # interleaved, each with the file opened afresh (no cache)
            for name, path in paths.items():
                p = opened_afresh(path)
                start = time.perf_counter()
                core.search(p, QUERY)
                out[f"{name} cold"].append(time.perf_counter() - start)
        # Steady searches in alternating blocks, each file opened as the server keeps it (each
        # block starts with one untimed search).
        opened = {name: opened_afresh(path) for name, path in paths.items()}
        blocks = max(1, args.rounds // 8)  # short blocks, so that the machine's slow spells hit both alike
        for _ in range(blocks):
            for name, p in opened.items():
                core.search(p, QUERY)
                for _ in range(max(1, args.rounds // blocks)):
                    start = time.perf_counter()
                    core.search(p, QUERY)
                    out[name].append(time.perf_counter() - start)
        stale = len(memory.stale_marks(opened["git"]))
        marked = texts["git"].count("\nstale: ")
        table.section(
            f"S. stale marks: in-process search at {size:,} records, {citing:,} citing a file each; "
            f"{commits} commits since them, {stale} records stale"
        )
        table.timing("core.search, same memory outside git (no marks possible)", out["plain"], "1.00x")
        table.timing(
            "core.search in the git repository (marks)",
            out["git"],
            f"{ratio(med(out['git']), med(out['plain']))}; {marked} stale lines in the answer",
        )
        table.timing("first search after a start, outside git (parse + index)", out["plain cold"], "1.00x")
        table.timing(
            "first search after a start, in git (parse + index + git log)",
            out["git cold"],
            f"{ratio(med(out['git cold']), med(out['plain cold']))}",
        )
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def profile(size: int) -> None:
    """cProfile of in-process log_memory (new) and search_memory at one size, to stderr."""
    import cProfile
    import pstats

    project = new_project()
    try:
        opened = memory.OpenMemory(fill(project, size))
        core.log(opened, "bench", "warm-up record", "Warm the cache.")
        core.search(opened, QUERY)
        for name, fn in (
            ("log_memory new", lambda i: core.log(opened, "bench", f"profiled record {i}", "Profile.")),
            ("search_memory", lambda i: core.search(opened, QUERY)),
        ):
            prof = cProfile.Profile()
            prof.enable()
            for i in range(10):
                fn(i)
            prof.disable()
            print(f"\n== cProfile: 10 x {name} at {size:,} records (in-process) ==", file=sys.stderr)
            pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(18)
    finally:
        shutil.rmtree(project, ignore_errors=True)


# ------------------------------------------------------------------------------------------- main


def code_version() -> str:
    """The commit the product code is at, and whether sentinel_memory/ or server.py differ from it (read-only git)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "sentinel_memory", "server.py"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head or 'unknown'}{' + uncommitted sentinel_memory/ or server.py changes' if dirty else ''}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fast subset: sizes 50,1000, fewer calls and spawns")
    parser.add_argument("--sizes", help="memory sizes, comma-separated (default 50,1000,10000,50000)")
    parser.add_argument("--calls", type=int, help="timed calls per operation and size (default 30)")
    parser.add_argument(
        "--big-calls", type=int, help="timed calls (and in-process rounds) at sizes >= 50,000 (default 10)"
    )
    parser.add_argument("--rounds", type=int, help="in-process rounds per size below 50,000 (default 100)")
    parser.add_argument("--spawns", type=int, help="spawns per start-up row (default 11)")
    parser.add_argument(
        "--loaded-spawns",
        type=int,
        help="spawns per start-up row again with CPU burners on the other cores (default 11; 0: skip)",
    )
    parser.add_argument(
        "--burners", type=int, help="CPU burner processes for the loaded start-up rows (default: one per core but one)"
    )
    parser.add_argument(
        "--first-turn",
        type=float,
        default=1.5,
        help="seconds between tools/list and the first tools/call in section A (default 1.5)",
    )
    parser.add_argument("--startup-only", action="store_true", help="only section A and its targets")
    parser.add_argument("--procs", help="concurrent process counts, comma-separated (default 2,4,8)")
    parser.add_argument("--per-proc", type=int, help="distinct records each concurrent process logs (default 50)")
    parser.add_argument("--driver-size", type=int, help="records in the git driver files (default 10000)")
    parser.add_argument("--driver-runs", type=int, help="runs of each git driver (default 5)")
    parser.add_argument(
        "--node-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "sm-bench-node",
        help="where the Node reference server and js-tiktoken are (npm-installed when missing)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip the Node reference server")
    parser.add_argument("--stale-size", type=int, help="records in section S (default 10000)")
    parser.add_argument("--stale-files", type=int, help="of them, records citing a file each (default 1000)")
    parser.add_argument("--stale-commits", type=int, help="commits after the records in section S (default 200)")
    parser.add_argument("--stale-cold", type=int, help="first searches after a start timed in section S (default 7)")
    parser.add_argument("--only-stale", action="store_true", help="run section S (and its targets) only")
    parser.add_argument("--profile", action="store_true", help="also print cProfile of in-process log/search to stderr")
    args = parser.parse_args()
    quick = args.quick
    defaults = dict(
        sizes="50,1000" if quick else "50,1000,10000,50000",
        calls=10 if quick else 30,
        rounds=30 if quick else 100,
        big_calls=5 if quick else 10,
        spawns=3 if quick else 11,
        loaded_spawns=3 if quick else 11,
        procs="2,4" if quick else "2,4,8",
        per_proc=10 if quick else 50,
        driver_size=2000 if quick else 10_000,
        driver_runs=3 if quick else 5,
        stale_size=2000 if quick else 10_000,
        stale_files=200 if quick else 1000,
        stale_commits=50 if quick else 200,
        stale_cold=3 if quick else 7,
    )
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    args.procs = [int(s) for s in str(args.procs).split(",") if s.strip()]
    return args


def stale_targets(table: Table, stale: dict[str, list[float]]) -> None:
    for label, name, limit in (
        ("search with stale marks <= 1.2x without", "", 1.2),
        ("first search after a start with marks <= 1.5x without", " cold", 1.5),
    ):
        x = med(stale["git" + name]) / med(stale["plain" + name])
        table.figure(
            label,
            f"{x:.2f}x",
            f"{'MET' if x <= limit else 'MISSED':<7}"
            f"{med(stale['git' + name]) * 1000:.1f} vs {med(stale['plain' + name]) * 1000:.1f} ms",
        )


async def main() -> None:
    args = parse_args()
    began = time.perf_counter()
    version = code_version()
    node_dir = None if args.no_reference or not ensure_node(args.node_dir) else args.node_dir
    if node_dir is None and not args.no_reference:
        print("reference server unavailable (npm install failed); its rows are skipped", file=sys.stderr)
    tokens = Tokens(args.node_dir)
    table = Table()
    generate(max([*args.sizes, args.driver_size + 200, args.stale_size]))  # the records every section shares
    if args.only_stale:
        stale = stale_marks(table, args)
        stale_targets(table, stale)
        print(
            table.text(
                f"Sentinel-Memory benchmark at {version}, section S only - Python "
                f"{sys.version.split()[0]}, {os.cpu_count()} cores, {args.rounds} rounds, "
                f"run took {time.perf_counter() - began:.0f} s"
            )
        )
        return

    spawn = await startup(table, args, node_dir)
    if args.startup_only:
        table.section("T. targets (ratios from this run)")
        startup_targets(
            lambda label, value, ok, note="": table.figure(
                label, value, f"{'n/a' if ok is None else ('MET' if ok else 'MISSED'):<7}{note}"
            ),
            spawn,
            {},
        )
        print(
            table.text(
                f"Sentinel-Memory start-up at {version} - Python {sys.version.split()[0]}, "
                f"{os.cpu_count()} cores, {args.spawns} + {args.loaded_spawns} loaded spawns, "
                f"run took {time.perf_counter() - began:.0f} s"
            )
        )
        return

    ours_stdio, ref_stdio, inproc = {}, {}, {}
    table.section("B. per call over stdio (official mcp client; one server process per size; 1 warm-up call each)")
    for size in args.sizes:
        calls = calls_for(size, args)
        r = ours_stdio[size] = await stdio_ours(size, calls)
        table.section(f"   {size:,} records")
        table.timing("sentinel log_memory (new record)", r["log new"])
        table.timing("sentinel log_memory (upsert, lesson changed)", r["log upsert"])
        table.timing("sentinel search_memory", r["search"])
        table.timing(
            "sentinel compact_memory", r["compact"], f"errors {r['errors']}; records in file afterwards {r['final']:,}"
        )
        if node_dir:
            f = ref_stdio[size] = await stdio_ref(node_dir, size, calls)
            table.timing(
                "reference create_entities (new entity)  ~ log new",
                f["create"],
                f"{ratio(med(r['log new']), med(f['create']))} ours/ref",
            )
            table.timing(
                "reference add_observations (existing)  ~ upsert",
                f["add"],
                f"{ratio(med(r['log upsert']), med(f['add']))} ours/ref",
            )
            table.timing(
                "reference read_graph  ~ search_memory",
                f["read_graph"],
                f"{ratio(med(r['search']), med(f['read_graph']))} ours/ref",
            )
            table.timing(
                "reference search_nodes 'payment'",
                f["search_nodes"],
                f"errors {f['errors']}; entities in file afterwards {f['final']:,}",
            )

    table.section(
        "C. in-process on core (no MCP), beside the raw floor: same bytes -> temp file, fsync, os.replace;"
        " interleaved rounds"
    )
    for size in args.sizes:
        r = inproc[size] = inprocess(size, args.big_calls if size >= 50_000 else args.rounds)
        floor = med(r["floor"])
        table.section(
            f"   {size:,} records ({r['bytes'] / 1e6:.2f} MB file); the writes' rounds take it to "
            f"{size + len(r['log new']) + 1:,}"
        )
        table.timing("raw floor (write + fsync + os.replace)", r["floor"], "1.00x floor")
        table.timing(
            "raw floor + directory fsync (as atomic_write does)",
            r["floor dir"],
            f"{ratio(med(r['floor dir']), floor)} floor",
        )
        table.timing(
            "raw floor + directory fsync + the lock (what docs/contract.md §5 requires)",
            r["floor locked"],
            f"{ratio(med(r['floor locked']), floor)} floor",
        )
        table.timing(
            "core.log (new record)",
            r["log new"],
            f"{ratio(med(r['log new']), floor)} floor; {ratio(med(r['log new']), med(r['floor locked']))} locked floor",
        )
        table.timing("core.log (upsert)", r["log upsert"], f"{ratio(med(r['log upsert']), floor)} floor")
        table.timing(
            "core.search (cached snapshot)",
            r["search"],
            f"~{render.estimate_tokens(r['search text']):,} est. tokens out",
        )
        table.timing("core.search (cold: parse the file first)", r["search cold"])
        table.timing("core.search right after a core.log (index derived)", r["search after write"])
        table.timing("core.compact", r["compact"], f"{r['compact chars']:,} chars out")

    conc = await concurrency(table, args, node_dir)
    drivers = git_drivers(table, args)
    stale = stale_marks(table, args)

    # F. tokens
    table.section(f"F. tokens, cl100k_base ({tokens.how})")
    project = new_project()
    try:
        path = fill(project, 50)
        raw = path.read_text(encoding="utf-8")
        search50 = core.search(path, "")
        search50_q = core.search(path, QUERY)
    finally:
        shutil.rmtree(project, ignore_errors=True)
    t_raw, t_search, t_search_q = tokens.count(raw), tokens.count(search50), tokens.count(search50_q)
    table.figure("raw JSONL of the 50 records", f"{t_raw} tok", f"{len(raw):,} chars")
    table.figure(
        "search_memory output, 50 records, empty query",
        f"{t_search} tok",
        f"{ratio(t_search or 0, t_raw or 0)} raw; estimate_tokens says {render.estimate_tokens(search50):,}",
    )
    table.figure(
        "search_memory output, 50 records, with a query",
        f"{t_search_q} tok",
        f"{ratio(t_search_q or 0, t_raw or 0)} raw",
    )
    big = max((s for s in args.sizes if s <= 10_000), default=None)
    if big is not None:
        text = inproc[big]["search text"]
        table.figure(
            f"search_memory output, {big:,} records",
            f"{tokens.count(text)} tok",
            f"estimate_tokens says {render.estimate_tokens(text):,}; budget {search_budget():,} (estimated)",
        )
    if node_dir:
        graph = {"entities": [ref_entity(e) for e in generate(50)], "relations": []}
        t_graph = tokens.count(json.dumps(graph, ensure_ascii=False, indent=2))
        table.figure(
            "reference read_graph text, same 50 records",
            f"{t_graph} tok",
            f"{ratio(t_graph or 0, t_raw or 0)} raw (its text content; structuredContent repeats it)",
        )

    # T. targets
    table.section("T. targets (ratios from this run)")

    def verdict(ok: bool | None) -> str:
        return "n/a" if ok is None else ("MET" if ok else "MISSED")

    def target(label: str, value: str, ok: bool | None, note: str = "") -> None:
        table.figure(label, value, f"{verdict(ok):<7}{note}")

    for size, limit in ((1000, 2.0), (50_000, 3.0)):
        if size in inproc:
            x = med(inproc[size]["log new"]) / med(inproc[size]["floor"])
            target(
                f"in-process log_memory @ {size:,} <= {limit:g}x raw floor",
                f"{x:.2f}x",
                x <= limit,
                f"upsert {ratio(med(inproc[size]['log upsert']), med(inproc[size]['floor']))}; "
                f"the locked floor alone {ratio(med(inproc[size]['floor locked']), med(inproc[size]['floor']))}",
            )
    if 10_000 in inproc:
        est = render.estimate_tokens(inproc[10_000]["search text"])
        target(
            "search_memory @ 10,000 within its token budget",
            f"{est:,} est.",
            est <= search_budget(),
            f"budget {search_budget():,}",
        )
        if 50 in ours_stdio:
            x = med(ours_stdio[10_000]["search"]) / med(ours_stdio[50]["search"])
            y = med(inproc[10_000]["search"]) / med(inproc[50]["search"])
            target(
                "search_memory @ 10,000 < 10x the 50-record time (stdio)",
                f"{x:.2f}x",
                x < 10,
                f"in-process {y:.2f}x ({verdict(y < 10)})",
            )
    top = max(args.procs)
    if ("ours", top) in conc:
        lost = conc[("ours", top)]
        ref = ", ".join(f"{p} procs: {conc[('ref', p)]}" for p in args.procs if ("ref", p) in conc)
        target(f"zero lost records at {top} processes", f"{lost} lost", lost == 0, f"reference lost {ref or 'n/a'}")
    for name in ("merge", "textconv"):
        m = med(drivers[name])
        target(
            f"{'merge-driver' if name == 'merge' else 'textconv'} on {args.driver_size:,} records < 1 s",
            f"{m * 1000:.0f} ms",
            m < 1.0,
        )
    startup_targets(target, spawn, ours_stdio)
    stale_targets(table, stale)
    if t_search and t_raw:
        x = t_search / t_raw
        target(
            "search output tokens <= 0.85x raw JSONL (50 records)",
            f"{x:.2f}x",
            x <= 0.85,
            f"{t_search} vs {t_raw} tokens",
        )

    title = (
        f"Sentinel-Memory benchmark at {version} - Python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"{'--quick, ' if args.quick else ''}sizes {','.join(map(str, args.sizes))}, "
        f"{args.calls} calls and {args.rounds} in-process rounds ({args.big_calls} at >=50,000), "
        f"{args.spawns} spawns, "
        f"run took {time.perf_counter() - began:.0f} s"
    )
    print(table.text(title))
    if args.profile:
        profile(max(args.sizes))


if __name__ == "__main__":
    asyncio.run(main())
