"""End to end over real stdio, as Cursor runs it: `python server.py` spawned with cwd = the project,
driven by the official `mcp` SDK client. These are what only a real process shows: the tool list
and instructions a client gets at start, non-ASCII text both ways over stdin/stdout, and which
project a server serves (its cwd, the home-directory guard, MCP roots, --project and
SENTINEL_MEMORY_PROJECT). The tools' behaviour in detail is in test_tools.py, in-process. Every
assertion is about what a user or the agent sees: the tool output, and the bytes of the files in
.context/."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import unicodedata
from datetime import datetime, timedelta

import pytest

pytestmark = pytest.mark.anyio

TOOLS = {"search_memory", "log_memory", "compact_memory"}
KEYS = ["id", "type", "topic", "missing_context", "lesson", "ask_next_time", "meta"]


def rid(topic: str, text: str) -> str:
    """The contract's id: the first 16 hex chars of SHA-256 over topic + missing_context (or lesson)."""
    return hashlib.sha256((topic + text).encode("utf-8")).hexdigest()[:16]


def listing(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


# ---------------------------------------------------------------------------------------------
# The tools


async def test_lists_exactly_three_tools_with_read_only_hints_and_instructions(connect, project):
    """A client sees exactly search_memory, log_memory and compact_memory, the two readers marked read-only, plus server instructions."""
    async with connect(project) as server:
        tools = {t.name: t for t in (await server.session.list_tools()).tools}
        instructions = server.init.instructions
    assert set(tools) == TOOLS
    assert tools["search_memory"].annotations.read_only_hint is True
    assert tools["compact_memory"].annotations.read_only_hint is True
    assert not tools["log_memory"].annotations.read_only_hint
    assert instructions and all(name in instructions for name in TOOLS)


async def test_a_forked_server_answers_as_a_new_one(connect, forked_connect, tmp_path):
    """The server the tests about a server process fork (conftest's forked_connect) answers as one
    started afresh: the same handshake, instructions, tools and schemas, and the same answers to a
    log and a search, each in a project of its own."""
    seen = []
    for start, name in ((connect, "new"), (forked_connect, "forked")):
        project = tmp_path / name / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "auth.py").write_text("def verify(token): ...\n", encoding="utf-8")
        async with start(project) as server:
            tools = [t.model_dump() for t in (await server.session.list_tools()).tools]
            saved = await server.ok("log_memory", topic="auth", missing_context="tokens expire after 5 minutes",
                                    lesson="refresh before each batch", files=["src/auth.py"])
            found = await server.ok("search_memory", query="token refresh")
        seen.append((server.init.model_dump(), tools, saved.replace(str(project), "PROJECT"),
                     found.replace(str(project), "PROJECT")))
    assert seen[0] == seen[1]
    assert "refresh before each batch" in seen[0][3]


# ---------------------------------------------------------------------------------------------
# log_memory: the record on disk


async def test_log_writes_the_exact_record_format(connect, project, memory_file, records):
    """A logged record is one sorted JSON line with the contract's keys, id and readable Korean, the lock is
    git-ignored, and a search over the same pipe gives the Korean back as written."""
    nfd_topic = unicodedata.normalize("NFD", "결제")  # how macOS may hand the text over
    calls = [
        dict(topic=f"  {nfd_topic} ", missing_context="환불 API는 멱등키가 필요하다는 사실", lesson="환불 호출마다 멱등키를 보낸다.",
             ask_next_time="PG사 샌드박스 키가 있나요?"),
        dict(topic="auth", missing_context="tokens expire after 5 minutes", lesson="refresh\u2028before each batch"),
        dict(topic="db", missing_context="migrations run on deploy", lesson="never edit an applied migration"),
    ]
    async with connect(project) as server:
        outputs = [await server.ok("log_memory", **c) for c in calls]
        found = await server.ok("search_memory", query="환불 멱등키")

    first_id = rid("결제", "환불 API는 멱등키가 필요하다는 사실")
    assert outputs[0].startswith("saved") and first_id in outputs[0] and str(memory_file) in outputs[0]
    assert "1 record" in outputs[0] and "3 records" in outputs[2]
    assert all(record_id in found for record_id in (first_id, rid("auth", calls[1]["missing_context"]),
                                                    rid("db", calls[2]["missing_context"])))
    assert "환불 호출마다 멱등키를 보낸다." in found and "PG사 샌드박스 키가 있나요?" in found

    data = memory_file.read_bytes()
    assert data.endswith(b"\n") and not data.endswith(b"\n\n") and b"\r" not in data
    assert not data.startswith(b"\xef\xbb\xbf")
    assert "환불 호출마다 멱등키를 보낸다.".encode() in data
    assert re.findall(rb"\\u[0-9a-fA-F]{4}", data) == [b"\\u2028"], "only line breakers are escaped"
    lines = data.decode("utf-8").split("\n")[:-1]
    assert len(lines) == 3
    parsed = records(memory_file)
    assert [r["id"] for r in parsed] == sorted(r["id"] for r in parsed)
    for raw, record in zip(lines, parsed, strict=True):
        assert list(json.loads(raw)) == KEYS
        assert record["id"] == rid(record["topic"], record["missing_context"])
        assert record["type"] == "log"
        created = datetime.fromisoformat(record["meta"]["created"])
        assert created.utcoffset() == timedelta(0)
    korean = next(r for r in parsed if r["id"] == first_id)
    assert korean["topic"] == unicodedata.normalize("NFC", "결제")
    assert korean["ask_next_time"] == "PG사 샌드박스 키가 있나요?"

    ignore = (project / ".context" / ".gitignore").read_text(encoding="utf-8").splitlines()
    patterns = [p.strip() for p in ignore if p.strip() and not p.startswith("#")]
    assert any(fnmatch.fnmatch(memory_file.name + ".lock", p) for p in patterns)
    assert not any(fnmatch.fnmatch(memory_file.name, p) for p in patterns), "the memory itself must be tracked"


# ---------------------------------------------------------------------------------------------
# compact_memory: the budget


@pytest.mark.parametrize("budget", [750, 1250, 2750])
async def test_compact_memory_stays_within_the_budget_notices_included(forked_connect, project, memory_file, budget):
    """The whole compact_memory answer, its header, the not-shown notice and the closing advice
    included (docs/contract.md §4.6), stays within the budget the server runs with: the topics that
    do not fit are named, and the first is shown in part when it alone is over, its call with the
    files its principle keeps. (What a running server answers: a server forked with the budget in
    its environment, conftest's forked_connect, which reads it at each call as a new one does.)"""
    from sentinel_memory.tools.blocks import estimate_tokens

    (project / "src").mkdir()
    lines = []
    for t in range(12):
        topic = f"module-{t:02d}-payments-and-refund-reconciliation"
        cited = f"src/reconciliation_module_{t:02d}.py"
        (project / cited).write_text("pass\n", encoding="utf-8")
        for i in range(6):
            missing = f"The reconciliation job {t}-{i} runs after the settlement window closes."
            record = {"id": rid(topic, missing), "type": "log", "topic": topic, "missing_context": missing,
                      "lesson": f"Reconcile refunds of batch {t}-{i} only after the settlement report arrives.",
                      "ask_next_time": f"Which settlement window applies to batch {t}-{i}?",
                      "meta": {"created": "2026-01-01T00:00:00+00:00"}, "files": [cited]}
            lines.append(json.dumps(record, ensure_ascii=False))
    memory_file.parent.mkdir()
    memory_file.write_text("".join(line + "\n" for line in sorted(lines)), encoding="utf-8")

    async with forked_connect(project, env={"SENTINEL_MEMORY_SEARCH_TOKENS": str(budget)}) as server:
        answer = await server.ok("compact_memory")

    assert f"NOT SHOWN, to stay within about {budget:,} tokens" in answer
    assert answer.endswith("Records logged after this call are untouched unless you pass their ids.")
    assert 'files=["src/reconciliation_module_00.py"]' in answer
    assert estimate_tokens(answer) <= budget


# ---------------------------------------------------------------------------------------------
# Which project


async def test_started_in_home_without_a_project_refuses_and_says_how_to_fix(connect, tmp_path, project):
    """A server a client started in the home directory refuses to write there and explains cwd / --project ${workspaceFolder}."""
    async with connect(tmp_path, env={"HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}) as server:
        text = await server.error("log_memory", topic="t", missing_context="m", lesson="l")
    assert "cwd" in text and "--project" in text and "${workspaceFolder}" in text
    assert "nothing" in text.lower() and "Traceback" not in text
    assert not (tmp_path / ".context").exists()
    assert listing(project) == []


@pytest.mark.parametrize("how", ["--project", "SENTINEL_MEMORY_PROJECT"])
async def test_project_option_and_environment_variable_select_the_project(connect, tmp_path, project, memory_file,
                                                                          records, how):
    """--project DIR and SENTINEL_MEMORY_PROJECT each point a server started in the home directory at the project."""
    env = {"HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}
    args = ("--project", str(project)) if how == "--project" else ()
    if how != "--project":
        env[how] = str(project)
    async with connect(tmp_path, *args, env=env) as server:
        out = await server.ok("log_memory", topic="t", missing_context="m", lesson="l")
        found = await server.ok("search_memory", query="anything")
    assert str(memory_file) in out and str(memory_file) in found
    assert [r["id"] for r in records(memory_file)] == [rid("t", "m")]
    assert not (tmp_path / ".context").exists()


async def test_started_in_home_uses_the_clients_workspace_root(connect, tmp_path, project, memory_file, records):
    """A server started in the home directory writes into the workspace root the client offers (MCP roots)."""
    from mcp import types

    async def roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=project.as_uri(), name="project")])

    env = {"HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}
    async with connect(tmp_path, env=env, list_roots_callback=roots) as server:
        out = await server.ok("log_memory", topic="t", missing_context="m", lesson="l")
    assert str(memory_file) in out
    assert [r["id"] for r in records(memory_file)] == [rid("t", "m")]
    assert not (tmp_path / ".context").exists()
