"""Record fastmcp's own answers for the fast start (docs/design.md, "Start-up"): a start that found
none forks, once the server module is imported, a detached, low-priority recorder; it forks the
imported server onto pipes for each protocol version, as an ordinary start runs it, keeps the
`result` text of each answer and stores them with faststart/cache.py's store."""

from __future__ import annotations

import json
import os

from .cache import (
    FORMAT,
    HANDSHAKE_METHODS,
    LISTS,
    META,
    RESPONSE_PREFIX,
    SET_LEVEL,
    STATELESS_METHODS,
    key,
    load,
    private_folders,
    store,
)


def record_in_background(path: str, digest: str, env: dict[str, str]) -> None:
    """Called once the server module is imported, before it serves: fork a detached, low-priority
    recorder that writes `path` from fastmcp's own answers. Nothing when it cannot fork safely."""
    import threading

    if not hasattr(os, "fork") or threading.active_count() != 1:
        return
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        try:
            os.waitpid(pid, 0)  # the middle process exits at once; the recorder is nobody's child
        except OSError:
            pass
        return
    try:  # the middle process: a new session, then the recorder, orphaned on purpose
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)  # hold none of the client's pipes: it must see EOF when the server exits
        os.closerange(3, 1 << 16)
        os.nice(10)
        record(path, digest, env)
    finally:
        os._exit(0)


def record(path: str, digest: str, env: dict[str, str]) -> bool:
    """Record and store fastmcp's answers for every protocol version (the server module is
    imported); one recorder per key at a time. True when the file was written."""
    import fcntl
    import shutil
    import tempfile

    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    private_folders(os.path.dirname(path))
    lock = os.open(path[: -len(".json")] + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return False  # another start records these answers now
    scratch = tempfile.mkdtemp(prefix="sentinel-memory-record-")
    try:
        if load(path, digest) is not None:
            return True
        client = {"name": "sentinel-memory-record", "version": "0"}
        handshake: dict[str, dict[str, str]] = {}
        stateless: dict[str, dict[str, str]] = {}
        lines: list[dict]
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            init: dict = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
            lines = [
                {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
            ]
            lines += [{"jsonrpc": "2.0", "id": n, "method": m} for n, m in enumerate(LISTS, start=2)]
            lines.append(
                {"jsonrpc": "2.0", "id": len(HANDSHAKE_METHODS), "method": SET_LEVEL, "params": {"level": "debug"}}
            )
            handshake[version] = _exchange(scratch, lines, HANDSHAKE_METHODS)
        for version in MODERN_PROTOCOL_VERSIONS:
            meta: dict = {
                META + "protocolVersion": version,
                META + "clientInfo": client,
                META + "clientCapabilities": {},
            }
            lines = [
                {"jsonrpc": "2.0", "id": n, "method": m, "params": {"_meta": meta}}
                for n, m in enumerate(STATELESS_METHODS, start=1)
            ]
            stateless[version] = _exchange(scratch, lines, STATELESS_METHODS)
        if key(env) != digest:
            return False  # the code or the packages changed while recording
        store(path, {"format": FORMAT, "key": digest, "handshake": handshake, "stateless": stateless})
        return True
    except (OSError, ValueError, AssertionError):
        return False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        os.close(lock)


def _exchange(project: str, lines: list[dict], methods: tuple[str, ...]) -> dict[str, str]:
    """Fork a server (this process, the server module imported, as an ordinary start has it) on
    pipes, serving `project`; send lines, keep its stdin open until one answer per method is in
    (ids 1, 2, ... in methods' order); the `result` text of each, by method."""
    import select
    import signal
    import time

    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(in_read, 0)
            os.dup2(out_write, 1)
            for fd in (in_read, in_write, out_read, out_write):
                os.close(fd)
            from sentinel_memory.gcpause import loaded

            with loaded():
                from sentinel_memory import server

            server.main(["--project", project])
        finally:
            os._exit(0)
    os.close(in_read)
    os.close(out_write)
    answers: dict[str, str] = {}
    try:
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(in_write, view) :]
        buffered, deadline = b"", time.monotonic() + 60
        while len(answers) < len(methods):
            ready, _, _ = select.select([out_read], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(out_read, 1 << 20) if ready else b""
            assert chunk, "the server ended or stalled before answering"
            *complete, buffered = (buffered + chunk).split(b"\n")
            for line in complete:
                assert line.startswith(RESPONSE_PREFIX), line[:200]
                ident, _, rest = line[len(RESPONSE_PREFIX) :].partition(b",")
                assert rest.startswith(b'"result":') and rest.endswith(b"}"), line[:200]
                text = rest[len(b'"result":') : -1].decode("utf-8")
                assert isinstance(json.loads(text), dict)
                answers[methods[int(ident) - 1]] = text
    finally:
        os.close(in_write)  # EOF: the server ends
        os.close(out_read)
        for _ in range(100):
            if os.waitpid(pid, os.WNOHANG)[0]:
                break
            time.sleep(0.05)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return answers
