"""Many writers on one memory file, and writers killed in the middle: no write is lost, the file
always parses, and an acknowledged record is always there. Real processes, no mocks."""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest
from conftest import lock_held_elsewhere

ROOT = Path(__file__).resolve().parents[1]

# A writer process: prints "ready", waits for the start file, then logs its records with tools.log
# directly (the same function the server's log_memory calls) and prints each id once it returned.
WRITER = textwrap.dedent(
    """
    import os, re, sys, time
    sys.path.insert(0, sys.argv[1])
    from sentinel_memory.tools import log
    from sentinel_memory.record.store import memory_path

    project, start, name, count = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    path = memory_path(project)
    print("ready", flush=True)
    while not os.path.exists(start):
        time.sleep(0.005)
    i = 0
    while count < 0 or i < count:
        out = log(path, name, f"{name} gap {i}", f"{name} lesson {i}: " + "x" * 200)
        if not out.startswith(("saved", "unchanged")):
            sys.exit("unexpected output: " + out)
        print(re.search(r"record ([0-9a-f]{16})", out).group(1), flush=True)
        i += 1
    """
)


def rid(topic: str, text: str) -> str:
    return hashlib.sha256((topic + text).encode("utf-8")).hexdigest()[:16]


def expected_ids(name: str, count: int) -> set[str]:
    return {rid(name, f"{name} gap {i}") for i in range(count)}


def check_file(records, path) -> list[str]:
    """Every line is a record, ids are unique and sorted; returns the ids."""
    ids = [r["id"] for r in records(path)]
    assert ids == sorted(ids), "lines must be sorted by id"
    assert len(ids) == len(set(ids)), "an id appears twice"
    return ids


def start_writer(project, start, name: str, count: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(ROOT), str(project), str(start), name, str(count)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_ready(proc: subprocess.Popen, timeout: float = 60) -> None:
    """Block until the writer printed "ready" (it has imported core), failing after timeout."""
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    if not line or line[0].strip() != "ready":
        proc.kill()
        raise AssertionError(f"writer did not start: {line} {proc.stderr.read()}")


# ---------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_concurrent_servers_lose_no_write(forked_connect, project, memory_file, records):
    """Four MCP servers on one project, each logging 25 records at once (some calls in parallel): every record is stored exactly once."""
    servers, per_server, lanes = 4, 25, 5
    connected, go = [0], anyio.Event()
    outputs: dict[str, list[str]] = {}

    async def agent(n: int) -> None:
        name = f"agent{n}"
        outputs[name] = []

        async def lane(first: int) -> None:
            for i in range(first, per_server, lanes):
                outputs[name].append(await server.ok(
                    "log_memory", topic=name, missing_context=f"{name} gap {i}", lesson=f"{name} lesson {i}"))

        async with forked_connect(project) as server:
            connected[0] += 1
            if connected[0] == servers:
                go.set()
            await go.wait()
            async with anyio.create_task_group() as group:
                for first in range(lanes):
                    group.start_soon(lane, first)

    with anyio.fail_after(180):
        async with anyio.create_task_group() as group:
            for n in range(servers):
                group.start_soon(agent, n)

    want = set().union(*(expected_ids(f"agent{n}", per_server) for n in range(servers)))
    for name, outs in outputs.items():
        assert len(outs) == per_server
        assert all(o.startswith("saved") for o in outs), f"{name}: {[o for o in outs if not o.startswith('saved')]}"
    ids = check_file(records, memory_file)
    assert set(ids) == want and len(ids) == servers * per_server


def test_threads_of_one_process_writing_at_once_lose_no_write(project, memory_file, records):
    """Eight threads of one process (as a server runs parallel tool calls) logging 25 records each at once: all 200 are stored exactly once."""
    from sentinel_memory.tools import log
    from sentinel_memory.record.store import memory_path

    writers, per_writer = 8, 25
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def write(name: str) -> None:
        try:
            start.wait()
            for i in range(per_writer):
                log(memory_path(project), name, f"{name} gap {i}", "a lesson")
        except BaseException as exc:  # reported below: a thread's exception would otherwise vanish
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(f"thread{n}",)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not failures, failures
    want = set().union(*(expected_ids(f"thread{n}", per_writer) for n in range(writers)))
    ids = check_file(records, memory_file)
    assert set(ids) == want and len(ids) == writers * per_writer


def test_eight_processes_writing_through_core_lose_no_write(tmp_path, project, memory_file, records):
    """Eight processes calling tools.log at the same moment, 25 records each: all 200 records are stored exactly once."""
    writers, per_writer = 8, 25
    start = tmp_path / "start"
    procs = [start_writer(project, start, f"proc{n}", per_writer) for n in range(writers)]
    try:
        for proc in procs:
            wait_ready(proc)
        start.touch()
        results = [proc.communicate(timeout=180) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for proc, (out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert len(out.split()) == per_writer
    want = set().union(*(expected_ids(f"proc{n}", per_writer) for n in range(writers)))
    ids = check_file(records, memory_file)
    assert set(ids) == want and len(ids) == writers * per_writer
    assert not list(memory_file.parent.glob("*.tmp")), "completed writes leave no temporary files"


def test_writers_killed_mid_write_never_corrupt_or_lose_acknowledged_records(tmp_path, project, memory_file, records):
    """A writer killed with SIGKILL at a random moment, ten times over, leaves a file that parses and holds every acknowledged record."""
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("SIGKILL is POSIX-only")
    rng = random.Random(20261122)
    start = tmp_path / "start"
    start.touch()  # the writers start as soon as they are ready
    acknowledged: set[str] = set()
    debris_per_round: list[int] = []
    seen_tmp: set[str] = set()
    for round_ in range(10):
        proc = start_writer(project, start, f"round{round_}", -1)
        try:
            wait_ready(proc)
            first = proc.stdout.readline()  # one acknowledged write per round, however busy the machine
            time.sleep(rng.uniform(0.05, 0.6))
            os.kill(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=60)
            out = first + out
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == -signal.SIGKILL, err
        # Only whole lines count: a line cut by the kill was not (fully) acknowledged.
        acked = [line for line in out.split("\n")[:-1] if re.fullmatch(r"[0-9a-f]{16}", line)]
        acknowledged.update(acked)

        ids = check_file(records, memory_file)
        assert acknowledged <= set(ids), f"round {round_}: acknowledged records are missing"
        tmp = {p.name for p in memory_file.parent.glob("*.tmp")}
        debris_per_round.append(len(tmp - seen_tmp))
        assert len(tmp - seen_tmp) <= 1, f"round {round_}: more than the killed write's temporary file: {tmp - seen_tmp}"
        assert all(re.fullmatch(r"\..+\.[0-9a-f]{8}\.tmp", name) for name in tmp), tmp
        seen_tmp |= tmp

    # After the kills a new writer is not blocked by a stale lock and stores its record.
    proc = start_writer(project, start, "after", 1)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert set(out.split()) == {"ready"} | expected_ids("after", 1)
    ids = check_file(records, memory_file)
    assert acknowledged | expected_ids("after", 1) <= set(ids)
    assert not list(memory_file.parent.glob("*.tmp")), "the next write removes what killed writers left"
    assert len(acknowledged) >= 10, "the writers should have completed some writes before being killed"
    ignored = (memory_file.parent / ".gitignore").read_text(encoding="utf-8")
    assert "*.tmp" in ignored.splitlines(), "leftover temporary files must never be committed"
    print(f"\nkilled 10 writers; acknowledged {len(acknowledged)} records, all present; "
          f"temporary files left per kill: {debris_per_round}")


@pytest.mark.anyio
async def test_a_lock_held_too_long_is_a_clear_error_that_changes_nothing(forked_connect, project, memory_file, records):
    """While another process holds the memory file's lock past the timeout (SENTINEL_MEMORY_LOCK_TIMEOUT, here a fraction of a second), log_memory fails plainly, saves nothing, and works once it is released."""
    async with forked_connect(project, env={"SENTINEL_MEMORY_LOCK_TIMEOUT": "0.3"}) as server:
        await server.ok("log_memory", topic="t", missing_context="before", lesson="l")
        before = memory_file.read_bytes(), memory_file.stat().st_mtime_ns
        with lock_held_elsewhere(memory_file):
            text = await server.error("log_memory", topic="t", missing_context="while locked", lesson="l")
            assert (memory_file.read_bytes(), memory_file.stat().st_mtime_ns) == before
        after = await server.ok("log_memory", topic="t", missing_context="while locked", lesson="l")
    assert "waited 0.3 s" in text and "lock" in text and "nothing was saved" in text.lower() and "Traceback" not in text
    assert after.startswith("saved")
    assert {r["id"] for r in records(memory_file)} == {rid("t", "before"), rid("t", "while locked")}


def test_refreshes_of_one_record_at_once_each_keep_the_others_change(project, memory_file, records):
    """Three people refresh one lesson at the same moment with `log`, each changing one field and
    leaving the others out. Each read the record before the others wrote; each is told its change
    was saved, so each change must be in the file: a field left out keeps what the file holds when
    the write happens, not what it held when the command started."""
    command = [sys.executable, str(ROOT / "server.py"), "--project", str(project), "log", "--topic", "t",
               "--missing-context", "shared"]
    first = subprocess.run([*command, "--lesson", "l0"], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    (project / "a.py").write_text("x\n", encoding="utf-8")
    changes = [["--lesson", "lesson one"], ["--ask-next-time", "ask two"], ["--file", "a.py"]]
    with lock_held_elsewhere(memory_file):  # all three read the record, then wait for the lock
        writers = [subprocess.Popen([*command, *change], cwd=project, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True) for change in changes]
        time.sleep(3)
    said = [w.communicate(timeout=120) for w in writers]

    assert [w.returncode for w in writers] == [0, 0, 0], said
    (record,) = [r for r in records(memory_file) if r["missing_context"] == "shared"]
    assert (record["lesson"], record["ask_next_time"], record.get("files")) == ("lesson one", "ask two", ["a.py"])
