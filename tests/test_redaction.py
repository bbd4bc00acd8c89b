"""The redaction policy end to end (docs/contract.md §6), through the MCP tools (fastmcp's in-memory client on
`server.mcp`, see conftest.inprocess): every rule on missing_context and lesson, only the provider
formats on topic and ask_next_time, and a tool output that counts what went without ever showing
it. Fakes are built in code."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.anyio

GITHUB = "gh" + "p_" + "A1b2" * 9
AWS_KEY_ID = "AK" + "IA" + "Q7RT2WXZ4N6P8L3M"
PEM = "-----BEGIN " + "OPENSSH PRIVATE KEY-----\n" + "b3Bl" * 16 + "\n-----END OPENSSH PRIVATE KEY-----"


async def test_each_field_gets_its_rules_and_the_output_counts_without_showing(inprocess, project, memory_file):
    """A keyword password stays in topic and ask_next_time but goes from missing_context and
    lesson; provider keys and private keys go from every field; the output says how many."""
    async with inprocess(project) as server:
        first = await server.ok(
            "log_memory", topic="db password=hunter2",
            missing_context="the .env had password=hunter2 for the staging database",
            lesson=f"the deploy script also used {GITHUB}; take both from the vault",
            ask_next_time="is --password hunter2 still used by the cron job?")
        second = await server.ok(
            "log_memory", topic=f"ci {AWS_KEY_ID}", missing_context="the runner used a static key",
            lesson="use OIDC instead of static keys", ask_next_time=f"was this key pasted too?\n{PEM}")
        found = await server.ok("search_memory", query="password key")
    records = {r["topic"]: r for r in map(json.loads, memory_file.read_text(encoding="utf-8").splitlines())}

    kept = records["db password=hunter2"]
    assert kept["missing_context"] == "the .env had password=[REDACTED] for the staging database"
    assert kept["lesson"] == "the deploy script also used [REDACTED]; take both from the vault"
    assert kept["ask_next_time"] == "is --password hunter2 still used by the cron job?"
    strict = records["ci [REDACTED]"]
    assert strict["ask_next_time"] == "was this key pasted too?\n[REDACTED]"

    assert "Redacted 2 values that looked like a credential" in first
    assert "Redacted 2 values that looked like a credential" in second
    for out in (first, second, found):
        assert GITHUB not in out and AWS_KEY_ID not in out and "PRIVATE KEY" not in out
    for value in (GITHUB, AWS_KEY_ID, "b3Bl" * 16):
        assert value not in memory_file.read_text(encoding="utf-8")
