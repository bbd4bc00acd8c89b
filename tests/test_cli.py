"""The commands for people (`python server.py <command>`), run as real processes."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVER = str(ROOT / "server.py")


def run(project: Path, *args: str, check_rc: int | None = 0) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, SERVER, "--project", str(project), *args],
                            capture_output=True, text=True, encoding="utf-8", timeout=60)
    if check_rc is not None:
        assert result.returncode == check_rc, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "app"
    path.mkdir()
    return path


def logged_id(project: Path, topic: str, missing: str, lesson: str) -> str:
    out = run(project, "log", "--topic", topic, "--missing-context", missing, "--lesson", lesson).stdout
    return out.split(" record ", 1)[1].split()[0]


def test_log_search_show_list_stats_and_export_round_trip(project):
    """A lesson added by hand is found, shown, counted and exported, Korean intact."""
    rid = logged_id(project, "결제", "VAT 국가별", "세율 파일 확인")
    other = logged_id(project, "auth", "token refresh", "use the refresh endpoint")
    found = json.loads(run(project, "search", "세율", "--json").stdout)
    assert [r["id"] for r in found][0] == rid and len(found) == 2
    assert json.loads(run(project, "show", rid, "--json").stdout)["lesson"] == "세율 파일 확인"
    topics = json.loads(run(project, "list", "--json").stdout)
    assert {t["topic"]: t["logs"] for t in topics} == {"auth": 1, "결제": 1}
    stats = json.loads(run(project, "stats", "--json", "--threshold", "1").stdout)
    assert stats["records"] == 2 and stats["compaction_required"] and stats["over_threshold"] == 1
    markdown = run(project, "export").stdout
    assert "## 결제" in markdown and f"`{other}`" in markdown


def test_list_aligns_korean_topics_by_display_width(project):
    """Korean topics take two columns each, so the table's columns still line up."""
    logged_id(project, "결제모듈", "m", "l")
    logged_id(project, "auth", "m", "l")
    lines = run(project, "list").stdout.splitlines()
    from core.terminal import width

    starts = {width(line[: line.index(c)]) for line in lines[2:] for c in line.split()[1:2]}
    assert len(starts) == 1, lines


def test_exit_codes_scripts_can_rely_on(project):
    """0 found, 1 nothing found, 2 invalid input (and nothing saved)."""
    assert run(project, "search", "x", check_rc=1).returncode == 1
    assert run(project, "show", "0123456789abcdef", check_rc=1).returncode == 1
    bad = run(project, "log", "--topic", " ", "--missing-context", "m", "--lesson", "l", check_rc=2)
    assert "topic is empty" in bad.stderr and "Traceback" not in bad.stderr
    assert not (project / ".context").exists()


def test_forget_deletes_atomically_and_reports_missing_ids(project):
    """forget removes exactly the given records; an unknown id is reported and exits 1."""
    keep = logged_id(project, "a", "m1", "l")
    drop = logged_id(project, "a", "m2", "l")
    result = run(project, "forget", drop, "ffffffffffffffff", check_rc=1)
    assert f"deleted {drop}" in result.stdout and "not found: ffffffffffffffff" in result.stderr
    ids = [json.loads(x)["id"] for x in (project / ".context" / "memory_log.jsonl").read_text().splitlines()]
    assert ids == [keep]


def test_scan_finds_and_redacts_a_pasted_credential(project):
    """A key pasted into the file by hand is found (never printed) and redacted in place."""
    logged_id(project, "a", "m", "l")
    fake = "ghp_" + "Z9y8" * 9
    path = project / ".context" / "memory_log.jsonl"
    record = json.loads(path.read_text())
    record["lesson"] = f"use {fake}"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n")
    found = run(project, "scan", check_rc=1)
    assert "github" in found.stdout and fake not in found.stdout
    run(project, "scan", "--redact")
    assert fake not in path.read_text() and "[REDACTED]" in path.read_text()
    run(project, "scan")


def test_init_configures_each_client_and_is_idempotent(project):
    """init writes parseable configs for Cursor, VS Code, Claude Code and Codex; a rerun changes nothing."""
    clients = ["--client", "cursor", "--client", "vscode", "--client", "claude", "--client", "codex", "--client", "windsurf"]
    first = run(project, "init", *clients).stdout
    assert "left alone ~/.codeium/windsurf" in first
    cursor = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["sentinel-memory"]
    assert cursor["args"][-2:] == ["--project", "${workspaceFolder}"] and cursor["cwd"] == str(project)
    assert json.loads((project / ".vscode" / "mcp.json").read_text())["servers"]["sentinel-memory"]["type"] == "stdio"
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["sentinel-memory"]["args"] == [SERVER]
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["sentinel-memory"]
    assert codex["args"] == [SERVER, "--project", str(project)]
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    second = run(project, "init", *clients).stdout
    assert "created" not in second and "updated" not in second
    assert before == {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}


def test_commands_do_not_import_fastmcp(project):
    """The commands start without FastMCP, so git's drivers and scripts stay fast."""
    probe = "\n".join([
        "import runpy, sys",
        f"sys.argv = [{SERVER!r}, '--project', {str(project)!r}, 'stats']",
        "try:",
        f"    runpy.run_path({SERVER!r}, run_name='__main__')",
        "except SystemExit:",
        "    pass",
        "print('fastmcp' in sys.modules)",
    ])
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stdout + result.stderr
