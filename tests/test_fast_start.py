"""The fast start (fast_start.py): the handshake answered from startup_payload.py while fastmcp
loads must be exactly what fastmcp answers, and everything after it fastmcp's own."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import ROOT, SERVER

from sentinel_memory import fast_start
from sentinel_memory import startup_payload

PYTHON = sys.executable
TIMEOUT = 60


def _env(fast: bool) -> dict[str, str]:
    env = dict(os.environ, FASTMCP_CHECK_FOR_UPDATES="off")
    env[fast_start.ENV] = "1" if fast else "0"
    env.pop("SENTINEL_MEMORY_PROJECT", None)
    return env


def _messages(version: str, ident=1) -> list[dict]:
    init = {"protocolVersion": version, "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "test-client", "version": "1.0"}}
    return [
        {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 5, "method": "resources/templates/list"},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "search_memory", "arguments": {"query": "x"}}},
        {"jsonrpc": "2.0", "id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"cursor": "nope"}},
        {"jsonrpc": "2.0", "id": 9, "method": "logging/setLevel", "params": {"level": "warning"}},
        {"jsonrpc": "2.0", "id": 10, "method": "logging/setLevel", "params": {"level": "loud"}},
        {"jsonrpc": "2.0", "id": 11, "method": "tools/list", "params": {"_meta": {"progressToken": 0}}},  # as Codex
    ]


def _exchange(argv: list[str], env: dict, messages: list[dict], cwd) -> dict:
    """Send every message at once (as a client that does not wait), read one line per request,
    keep stdin open until then; the raw lines by id."""
    want = sum(1 for m in messages if "id" in m)
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=cwd)
    try:
        child.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        child.stdin.flush()
        lines, buffered = {}, b""
        deadline = time.monotonic() + TIMEOUT
        out = child.stdout.fileno()
        while len(lines) - ("notifications" in lines) < want:
            ready, _, _ = select.select([out], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                child.kill()
                raise AssertionError(f"no answer in {TIMEOUT} s; got {list(lines)}: {child.stderr.read().decode()[-3000:]}")
            chunk = os.read(out, 1 << 20)
            assert chunk, f"server closed stdout; got {list(lines)}: {child.stderr.read().decode()[-3000:]}"
            *complete, buffered = (buffered + chunk).split(b"\n")
            for line in complete:
                message = json.loads(line)
                if "id" in message:
                    lines[message["id"]] = line + b"\n"
                else:  # a notification (a log message): kept, in order, beside the answers
                    lines.setdefault("notifications", []).append(line)
        child.stdin.close()
        assert child.wait(timeout=TIMEOUT) == 0
        assert buffered + child.stdout.read() == b""
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    return lines


def test_the_payload_is_what_fastmcp_answers_for_this_server_now():
    """Regenerate with `python fast_start.py --write` when this fails (server.py or a package changed)."""
    assert startup_payload.SERVER_CRC32 == fast_start.server_crc(), "server.py changed: python fast_start.py --write"
    if startup_payload.VERSIONS != fast_start.installed_versions():
        # Another release of fastmcp, the SDK or pydantic installed (the requirements allow ranges):
        # the fast start must then stay off, never answer from a recording of other versions.
        assert fast_start.load_payload() is None
        return
    checkout = _checkout_state()
    assert fast_start.record() == startup_payload.RESULTS
    assert fast_start.load_payload() is startup_payload.RESULTS
    assert _checkout_state() == checkout, "recording served this checkout: it must serve a scratch folder"


def _checkout_state():
    """What a server started on this checkout would change: its local git config (the drivers'
    wiring) and a .context/ folder. (Not the whole listing: the other worker's caches may appear.)"""
    where = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-path", "config"],
                           capture_output=True, text=True)
    config = Path(where.stdout.strip()) if where.returncode == 0 else None
    return (config.read_bytes() if config and config.is_file() else None), (ROOT / ".context").exists()


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", "2099-01-01"])
def test_fast_and_ordinary_starts_answer_byte_for_byte(project, version):
    """Every answer (handshake, lists, a call, a ping, a list with a cursor, an unknown protocol
    version) is the same bytes with the fast start as without it."""
    argv = [PYTHON, str(SERVER), "--project", str(project)]
    fast = _exchange(argv, _env(True), _messages(version), project)
    ordinary = _exchange(argv, _env(False), _messages(version), project)
    assert fast == ordinary
    assert b'"isError":false' in fast[6]


def _modern(method: str, ident: int, level: str | None = None, capabilities: dict | None = None, **params) -> dict:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities or {}}
    if level:
        meta["io.modelcontextprotocol/logLevel"] = level
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": {"_meta": meta, **params}}


def test_the_stateless_era_fast_and_ordinary_answer_byte_for_byte(project):
    """2026-07-28 (fastmcp's own client, mode auto): server/discover and the lists answered from the
    payload; a call, a log level, client capabilities and a cursor go to fastmcp; same bytes."""
    messages = [
        _modern("server/discover", 1), _modern("tools/list", 2, "debug"), _modern("prompts/list", 3),
        _modern("resources/list", 4), _modern("tools/call", 5, name="search_memory", arguments={"query": "x"}),
        _modern("tools/list", 6, capabilities={"extensions": {"io.modelcontextprotocol/ui": {}}}),
        _modern("tools/list", 7, cursor="nope"),
        _modern("server/discover", 8, capabilities={"roots": {"listChanged": True},  # as Claude Code
                                                     "elicitation": {"form": {}, "url": {}}}),
        _modern("tools/list", 9, capabilities={"roots": {"listChanged": True}, "elicitation": {"form": {}}}),
    ]
    argv = [PYTHON, str(SERVER), "--project", str(project)]
    fast = _exchange(argv, _env(True), messages, project)
    assert fast == _exchange(argv, _env(False), messages, project)
    assert b'"isError":false' in fast[5]


def test_string_ids_and_a_call_right_after_initialized(project):
    messages = [m for m in _messages("2025-06-18", ident="init-1") if m.get("method") not in ("tools/list",)]
    argv = [PYTHON, str(SERVER), "--project", str(project)]
    fast = _exchange(argv, _env(True), messages, project)
    assert fast == _exchange(argv, _env(False), messages, project)
    assert fast["init-1"].startswith(b'{"jsonrpc":"2.0","id":"init-1","result":{"protocolVersion":"2025-06-18"')


STALLED = textwrap.dedent("""\
    import sys, time, types
    sys.path.insert(0, {root!r})
    stalled = types.ModuleType("server")
    stalled.main = lambda argv: time.sleep(60)   # fastmcp that never finishes loading
    sys.modules["server"] = stalled
    from sentinel_memory import fast_start
    sys.exit(fast_start.run(sys.argv[1:]))
""")


def test_the_handshake_is_answered_without_fastmcp_and_a_probe_exits_at_once(project):
    """With the server module stalled, initialize and tools/list are still answered, from the
    payload; the client leaving after them ends the process at once."""
    if fast_start.load_payload() is None:
        pytest.skip("other package versions than recorded: the fast start is off (the payload test checks that)")
    code = STALLED.format(root=str(ROOT))
    messages = _messages("2025-11-25")[:3]
    start = time.monotonic()
    lines = _exchange([PYTHON, "-c", code], _env(True), messages, project)
    assert time.monotonic() - start < 30
    results = startup_payload.RESULTS["2025-11-25"]
    assert lines[1] == b'{"jsonrpc":"2.0","id":1,"result":' + results["initialize"].encode() + b"}\n"
    assert lines[2] == b'{"jsonrpc":"2.0","id":2,"result":' + results["tools/list"].encode() + b"}\n"


def test_what_codex_and_claude_code_send_first_is_answered_without_fastmcp(project):
    """With the server module stalled: Codex's tools/list (a progress token in _meta) and Claude
    Code's server/discover (roots and elicitation declared) are answered from the payload too, so
    neither client's first turn waits for fastmcp to load."""
    if fast_start.load_payload() is None:
        pytest.skip("other package versions than recorded: the fast start is off (the payload test checks that)")
    code = STALLED.format(root=str(ROOT))
    classic = _messages("2025-06-18")[:2] + [_messages("2025-06-18")[-1]]
    lines = _exchange([PYTHON, "-c", code], _env(True), classic, project)
    assert lines[11] == b'{"jsonrpc":"2.0","id":11,"result":' + \
        startup_payload.RESULTS["2025-06-18"]["tools/list"].encode() + b"}\n"
    discover = _modern("server/discover", 1, capabilities={"roots": {"listChanged": True},
                                                            "elicitation": {"form": {}, "url": {}}})
    lines = _exchange([PYTHON, "-c", code], _env(True), [discover], project)
    assert lines[1] == b'{"jsonrpc":"2.0","id":1,"result":' + \
        startup_payload.RESULTS["2026-07-28"]["server/discover"].encode() + b"}\n"


def test_a_stale_payload_or_the_switch_turns_the_fast_start_off(monkeypatch):
    monkeypatch.setattr(startup_payload, "SERVER_CRC32", startup_payload.SERVER_CRC32 ^ 1)
    assert fast_start.load_payload() is None
    monkeypatch.undo()
    monkeypatch.setattr(startup_payload, "VERSIONS", {**startup_payload.VERSIONS, "fastmcp": "9.9.9"})
    assert fast_start.load_payload() is None
    monkeypatch.undo()
    assert fast_start.wanted()
    monkeypatch.setenv(fast_start.ENV, "0")
    assert not fast_start.wanted()


@pytest.mark.anyio
async def test_a_real_stdio_client_sees_what_fastmcp_produces_in_process(project):
    """What the official client sees over stdio (fast start on) equals what fastmcp answers for
    the same server object in process: initialize (instructions, capabilities, server info) and
    every tool's schema."""
    from fastmcp import Client
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from sentinel_memory import server

    params = StdioServerParameters(command=PYTHON, args=[str(SERVER), "--project", str(project)],
                                   env=_env(True), cwd=str(project))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            wire_init = await session.initialize()
            wire_tools = await session.list_tools()
    async with Client(server.mcp, mode="legacy") as client:
        local_init = client.initialize_result
        local_tools = await client.list_tools()
    dump = lambda model: model.model_dump(mode="json", by_alias=True)  # noqa: E731
    assert dump(wire_init) == dump(local_init)
    assert [dump(tool) for tool in wire_tools.tools] == [dump(tool) for tool in local_tools]
    assert wire_init.instructions == server.INSTRUCTIONS


def test_init_asks_claude_code_to_wait_for_the_server_once(tmp_path):
    """.mcp.json gets "alwaysLoad": true (Claude Code then builds the first turn with our tools);
    a value the user set is kept; the other clients' entries get no key they do not document."""
    from sentinel_memory.core import init as setup

    root = tmp_path / "project"
    root.mkdir()
    setup.claude_config(root)
    entry = json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]
    assert entry["alwaysLoad"] is True and entry["command"] == "sentinel-memory"
    assert setup.claude_config(root).startswith("unchanged")
    entry["alwaysLoad"] = False
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"sentinel-memory": entry}}), encoding="utf-8")
    assert setup.claude_config(root).startswith("unchanged")
    assert json.loads((root / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]["alwaysLoad"] is False
    setup.gemini_config(root), setup.cursor_config(root), setup.codex_config(root)
    gemini = json.loads((root / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]
    assert "alwaysLoad" not in gemini and "timeout" not in gemini  # its default request timeout is 10 minutes
    assert "startup_timeout_sec" not in (root / ".codex" / "config.toml").read_text(encoding="utf-8")
