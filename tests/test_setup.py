"""`init` and `doctor` (docs/contract.md §8.1 wiring), with REAL git repositories in tmp_path (tests/gitrepos.py):
the commands run as separate processes (`python server.py --project REPO init|doctor`), and git
itself reports what it applies (`git check-attr`, `git config`, real merges).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gitrepos import (  # noqa: F401  (env is a fixture)
    MEMORY, SERVER, by_id, env, last_id, logged, make_repo, mc_after, put, rec, server,
)
from sentinel_memory.git import drivers as gitdriver
from sentinel_memory.setup.initialise import init


# ---------------------------------------------------------------------------------------------
# doctor


def test_doctor_passes_on_a_freshly_initialised_repository(tmp_path, env):
    """After init, doctor reports every check ok and exits 0."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "t", "m", "l")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "git merge driver calls" in result.stdout and "git diff textconv calls" in result.stdout


@pytest.mark.parametrize("kib", [4, 200])
def test_doctor_says_what_the_next_write_does_with_lines_that_are_not_records(tmp_path, env, kib):
    """A few KiB of lines that are not records all go to the quarantine file on the next write;
    past the 128 KiB one write redacts, doctor says the rest stays in a git-ignored copy."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "t", "m", "l")
    with open(repo.memory, "a", encoding="utf-8") as memory:
        memory.write("".join(f"build log line {n:05d} that is no record of ours\n" for n in range(kib * 1024 // 48)))

    said = [line for line in server(env, "--project", str(repo.path), "doctor").stdout.splitlines() if "unreadable" in line]

    assert len(said) == 1 and "the next write moves them to the quarantine file" in said[0]
    assert ("the first 128 KiB of them; the rest it keeps in a git-ignored copy" in said[0]) == (kib > 128)


@pytest.mark.parametrize("broken", ["script", "interpreter"])
def test_doctor_fails_and_names_a_missing_driver_path(tmp_path, env, broken):
    """The merge driver config pointing at a missing path: doctor exits 1 and names that path."""
    repo = make_repo(tmp_path, env)
    missing = str(tmp_path / "moved-away" / ("server.py" if broken == "script" else "python3"))
    python, script = (sys.executable, missing) if broken == "script" else (missing, str(SERVER))
    repo.git("config", "merge.sentinel-memory.driver", f"'{python}' '{script}' merge-driver %O %A %B %P")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 1, result.stdout + result.stderr
    assert missing in result.stdout and "FAIL" in result.stdout


def test_doctor_names_another_installs_driver_by_its_program_not_its_shell_line(tmp_path, env):
    """A merge driver that another install wrote (a teammate moved from server.py to the command on
    PATH): doctor warns, naming the program that install starts, not the escaped shell line around
    it, and says what to run."""
    repo = make_repo(tmp_path, env)
    other = tmp_path / "old-tool" / "server.py"
    other.parent.mkdir()
    other.write_text("", encoding="utf-8")
    repo.git("config", "merge.sentinel-memory.driver",
             f"'{sys.executable}' '{other}' merge-driver -- %O %A %B %P; s=$?; [ $s -le 1 ] || git merge-file %A %O %B")

    result = server(env, "--project", str(repo.path), "doctor")

    line = next(x for x in result.stdout.splitlines() if "git merge driver" in x)
    assert f"runs another install ({sys.executable} {other}), not this one's command: run " in line
    assert "%O" not in line and "merge-file" not in line


def test_one_venv_started_as_python3_or_python_is_one_install(tmp_path, env):
    """An installed script starts the venv's `python3`, `python -m` its `python`: the same file.
    init through one and doctor through the other agree that the git drivers run this install,
    and a second init changes nothing."""
    python3 = Path(sys.executable).with_name("python3")
    if Path(sys.executable).name != "python" or not python3.exists():
        pytest.skip("this interpreter has no python3 beside a python (a venv on Windows)")
    repo = make_repo(tmp_path, env, wired=False)
    run = [str(python3), str(SERVER), "--project", str(repo.path), "init"]
    subprocess.run(run, env=env, capture_output=True, text=True, timeout=60, check=True)
    config = repo.git("config", "--get", "merge.sentinel-memory.driver").stdout

    doctor = server(env, "--project", str(repo.path), "doctor").stdout
    again = subprocess.run(run, env=env, capture_output=True, text=True, timeout=60, check=True)

    assert "another install" not in doctor and "git merge driver calls" in doctor
    assert repo.git("config", "--get", "merge.sentinel-memory.driver").stdout == config
    assert "configured git merge" not in again.stdout

def test_doctor_fails_and_names_a_missing_textconv_path(tmp_path, env):
    """The diff textconv pointing at a missing server.py (merge driver fine): doctor exits 1 and names it."""
    repo = make_repo(tmp_path, env)
    missing = str(tmp_path / "moved-away" / "server.py")
    repo.git("config", "diff.sentinel-memory.textconv", f"'{sys.executable}' '{missing}' textconv")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 1, result.stdout + result.stderr
    assert missing in result.stdout


def test_doctor_finds_a_merge_that_kept_one_side_and_its_advice_restores_both(tmp_path, env):
    """A clone wired by an older init (no fallback) whose interpreter moved: git keeps only our side without markers; doctor exits 1 saying records are missing and how to redo the merge, and following it keeps both sides."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("db", "pool", "10 connections"))
    floor = last_id(repo.memory)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    theirs = logged(repo.memory, "db", mc_after("db", "theirs", floor), "added on feature")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    ours = logged(repo.memory, "db", mc_after("db", "ours", floor), "added on main")
    repo.commit("main")
    moved = str(tmp_path / "moved-away" / "python3")
    repo.git("config", "merge.sentinel-memory.driver", f"'{moved}' '{SERVER}' merge-driver %O %A %B %P")
    assert repo.git("merge", "--no-edit", "feature", check=False).returncode != 0
    assert set(by_id(repo.data())) == {rec("db", "pool", "")["id"], ours}  # git kept our side only

    before = server(env, "--project", str(repo.path), "doctor")

    assert before.returncode == 1, before.stdout
    assert "lacks 1 record that merging both sides keeps" in before.stdout and moved in before.stdout
    assert "git checkout -m -- memory_log.jsonl" in before.stdout

    repo.init_driver()
    repo.git("-C", str(repo.memory.parent), "checkout", "-m", "--", "memory_log.jsonl")
    during = server(env, "--project", str(repo.path), "doctor")

    assert during.returncode == 0, during.stdout
    assert "git is merging memory_log.jsonl" in during.stdout and "git add it" in during.stdout
    assert {ours, theirs} <= set(by_id(repo.data()))


def test_doctor_says_when_git_does_not_route_the_memory_file_to_the_drivers(tmp_path, env):
    """Without .context/.gitattributes git applies no driver to the memory file: doctor warns (exit 0) and says to run init and commit the file; init puts it back."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "t", "m", "l")
    (repo.path / ".context" / ".gitattributes").unlink()

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 0, result.stdout
    assert "git does not route memory_log.jsonl to the drivers (merge=unspecified, diff=unspecified)" in result.stdout
    repo.init_driver()
    assert "does not route" not in server(env, "--project", str(repo.path), "doctor").stdout


def test_doctor_checks_each_clients_config_and_names_a_stale_path(tmp_path, env):
    """A project configured only for VS Code and Codex gets no complaint about Cursor; a config naming a missing server.py, or TOML that does not parse, fails with the file named."""
    repo = make_repo(tmp_path, env, wired=False)
    init(repo.path, clients=("vscode", "codex"))

    good = server(env, "--project", str(repo.path), "doctor")

    assert good.returncode == 0, good.stdout
    assert ".vscode/mcp.json starts" in good.stdout and ".codex/config.toml starts" in good.stdout
    assert ".cursor" not in good.stdout
    vscode = repo.path / ".vscode" / "mcp.json"
    config = json.loads(vscode.read_text(encoding="utf-8"))
    config["servers"]["sentinel-memory"]["command"] = str(tmp_path / "old-install" / "python")
    vscode.write_text(json.dumps(config), encoding="utf-8")
    (repo.path / ".codex" / "config.toml").write_text("[mcp_servers.sentinel-memory\n", encoding="utf-8")

    bad = server(env, "--project", str(repo.path), "doctor")

    assert bad.returncode == 1
    assert str(tmp_path / "old-install" / "python") in bad.stdout and "config.toml is not valid TOML" in bad.stdout


def test_doctor_fails_on_a_credential_in_the_memory_file(tmp_path, env):
    """A credential written into the file by hand: doctor exits 1 and points at scan --redact, without printing the value."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "ci", "deploy token", "ask the lead")
    fake = "ghp_" + "Q7w2" * 9
    repo.memory.write_text(repo.memory.read_text(encoding="utf-8").replace("ask the lead", f"use {fake}"),
                           encoding="utf-8")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 1
    assert "1 value with the shape of a credential: run python server.py scan --redact" in result.stdout
    assert fake not in result.stdout + result.stderr


# ---------------------------------------------------------------------------------------------
# init


def test_init_merges_existing_config_and_is_idempotent(tmp_path, env):
    """init keeps other MCP servers and the user's rules, adds our sections once, and a second run changes nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".cursor").mkdir()
    other = {"command": "node", "args": ["other-server.js"], "env": {"X": "1"}}
    (repo.path / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"other": other}, "extra": True}),
                                                    encoding="utf-8")
    (repo.path / ".cursorrules").write_text("Always answer in Korean.\n", encoding="utf-8")
    (repo.path / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n", encoding="utf-8")

    first = server(env, "--project", str(repo.path), "init", "--agents-md")

    assert first.returncode == 0, first.stderr
    config = json.loads((repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))
    assert config["extra"] is True and config["mcpServers"]["other"] == other
    ours = config["mcpServers"]["sentinel-memory"]
    assert ours == {"command": "sentinel-memory", "args": ["--project", "${workspaceFolder}"]}
    rules = (repo.path / ".cursorrules").read_text(encoding="utf-8")
    assert rules.startswith("Always answer in Korean.\n")
    assert rules.count("<!-- sentinel-memory:begin -->") == 1 and rules.count("<!-- sentinel-memory:end -->") == 1
    agents = (repo.path / "AGENTS.md").read_text(encoding="utf-8")
    assert agents.startswith("# Agents\n\nRun the tests.\n") and agents.count("<!-- sentinel-memory:begin -->") == 1
    attributes = (repo.path / ".context" / ".gitattributes").read_text(encoding="utf-8")
    assert "memory_log.jsonl" in attributes and "merge=sentinel-memory" in attributes and "diff=sentinel-memory" in attributes
    assert repo.git("check-attr", "merge", "diff", "--", MEMORY).stdout.count("sentinel-memory") == 2
    driver = repo.git("config", "--local", "merge.sentinel-memory.driver").stdout
    textconv = repo.git("config", "--local", "diff.sentinel-memory.textconv").stdout
    assert str(SERVER) in driver and "merge-driver -- %O %A %B %P" in driver and str(SERVER) in textconv
    assert "configured git merge and diff drivers" in first.stdout
    snapshot = {p: p.read_bytes() for p in (repo.path / ".cursor" / "mcp.json", repo.path / ".cursorrules",
                                            repo.path / "AGENTS.md", repo.path / ".git" / "config")}

    second = server(env, "--project", str(repo.path), "init", "--agents-md")

    assert second.returncode == 0, second.stderr
    reported = [line for line in second.stdout.splitlines() if line.strip()]
    assert reported and all(line.startswith("unchanged") for line in reported), second.stdout
    assert {p: p.read_bytes() for p in snapshot} == snapshot


def test_init_puts_the_workflow_where_each_client_reads_its_instructions(tmp_path, env):
    """Claude Code reads CLAUDE.md and Gemini CLI GEMINI.md, not .cursorrules: init --client claude
    --client gemini adds the workflow section to both (the user's text kept), and a rerun changes
    nothing. A CLAUDE.md that imports AGENTS.md, which holds the workflow, is left as it is; one that
    holds the workflow too is left alone with a sentence, as the client would read it twice."""
    repo = make_repo(tmp_path, env, wired=False)
    claude = repo.path / "CLAUDE.md"
    claude.write_text("# House rules\n\nUse tabs.\n", encoding="utf-8")

    first = server(env, "--project", str(repo.path), "init", "--client", "claude", "--client", "gemini", "--no-hooks")

    assert first.returncode == 0, first.stderr
    text = claude.read_text(encoding="utf-8")
    assert text.startswith("# House rules\n\nUse tabs.\n") and text.count("<!-- sentinel-memory:begin -->") == 1
    assert "call `search_memory`" in text and "call `log_memory`" in text
    assert "call `log_memory`" in (repo.path / "GEMINI.md").read_text(encoding="utf-8")
    again = server(env, "--project", str(repo.path), "init", "--client", "claude", "--client", "gemini", "--no-hooks")
    assert f"unchanged {claude}" in again.stdout and claude.read_text(encoding="utf-8") == text

    other = make_repo(tmp_path / "other", env, wired=False)
    importing = other.path / "CLAUDE.md"
    importing.write_text("# House rules\n\n@AGENTS.md\n", encoding="utf-8")
    done = server(env, "--project", str(other.path), "init", "--client", "claude", "--agents-md", "--no-hooks")
    assert importing.read_text(encoding="utf-8") == "# House rules\n\n@AGENTS.md\n"
    assert f"unchanged {importing}: it imports AGENTS.md, which holds the workflow" in done.stdout
    assert "call `log_memory`" in (other.path / "AGENTS.md").read_text(encoding="utf-8")
    # the import added after an earlier init had put the workflow into CLAUDE.md: read twice, so said
    twice_read = "# House rules\n\n@AGENTS.md\n\n" + text[text.index("<!-- sentinel-memory:begin -->") :]
    importing.write_text(twice_read, encoding="utf-8")
    done = server(env, "--project", str(other.path), "init", "--client", "claude", "--no-hooks")
    assert importing.read_text(encoding="utf-8") == twice_read
    assert f"left alone {importing}: it imports AGENTS.md, which holds the workflow, and holds it too" in done.stdout


def test_init_writes_cursor_rules_only_for_cursor_and_agents_md_for_vs_code_and_windsurf(tmp_path, env):
    """A project set up for Claude Code gets no .cursorrules, which only Cursor reads; VS Code and
    Windsurf read AGENTS.md at the project's root, so init --client vscode or windsurf puts the
    workflow there. Cursor rules already holding the workflow (a teammate on Cursor) are kept
    current by an init for another client, not left to go stale."""
    repo = make_repo(tmp_path, env, wired=False)
    done = server(env, "--project", str(repo.path), "init", "--client", "claude", "--no-hooks")
    assert done.returncode == 0, done.stderr
    assert not (repo.path / ".cursorrules").exists() and ".cursorrules" not in done.stdout
    assert "call `log_memory`" in (repo.path / "CLAUDE.md").read_text(encoding="utf-8")
    assert not (repo.path / "AGENTS.md").exists()

    for client in ("vscode", "windsurf"):
        other = make_repo(tmp_path / client, env, wired=False)
        done = server(env, "--project", str(other.path), "init", "--client", client)
        assert done.returncode == 0, done.stderr
        assert not (other.path / ".cursorrules").exists()
        assert "call `search_memory`" in (other.path / "AGENTS.md").read_text(encoding="utf-8")

    team = make_repo(tmp_path / "team", env, wired=False)
    rules = team.path / ".cursorrules"
    rules.write_text("Use tabs.\n\n<!-- sentinel-memory:begin -->\nan older workflow\n<!-- sentinel-memory:end -->\n",
                     encoding="utf-8")
    done = server(env, "--project", str(team.path), "init", "--client", "claude", "--no-hooks")
    text = rules.read_text(encoding="utf-8")
    assert text.startswith("Use tabs.\n") and "an older workflow" not in text and "Call search_memory" in text


def test_init_no_rules_writes_the_workflow_nowhere_and_keeps_what_is_there(tmp_path, env):
    """A team that keeps its CLAUDE.md by hand, and relies on the hooks: init --no-rules writes no
    Cursor rules and no section into CLAUDE.md, even after the section was deleted (a rerun without
    it would put it back), and does the rest. With --agents-md, which asks for the workflow in
    AGENTS.md, it refuses in one sentence and changes nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    claude = repo.path / "CLAUDE.md"
    claude.write_text("# House rules\n\nUse tabs.\n", encoding="utf-8")
    args = ["--project", str(repo.path), "init", "--client", "claude"]

    both = server(env, *args, "--no-rules", "--agents-md")
    assert both.returncode == 2 and "give one" in both.stderr
    assert not (repo.path / ".mcp.json").exists() and not (repo.path / "AGENTS.md").exists()

    done = server(env, *args, "--no-rules")
    assert done.returncode == 0, done.stderr
    assert "wrote no workflow rules (--no-rules)" in done.stdout
    assert claude.read_text(encoding="utf-8") == "# House rules\n\nUse tabs.\n"
    assert not (repo.path / ".cursorrules").exists() and (repo.path / ".mcp.json").is_file()
    assert (repo.path / ".claude" / "settings.json").is_file()  # the hooks, which run the workflow


def test_a_claude_md_that_links_out_of_the_project_is_left_alone(tmp_path, env):
    """A cloned project whose CLAUDE.md is a link to a file outside it (a shell's startup file, say):
    init --client claude writes nothing there and says where the workflow goes; the rest is done."""
    repo = make_repo(tmp_path, env, wired=False)
    outside = tmp_path / "outside.md"
    outside.write_text("export PATH=/usr/bin\n", encoding="utf-8")
    (repo.path / "CLAUDE.md").symlink_to(outside)

    result = server(env, "--project", str(repo.path), "init", "--client", "claude", "--no-hooks")

    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert outside.read_text(encoding="utf-8") == "export PATH=/usr/bin\n"
    line = next(x for x in result.stdout.splitlines() if "CLAUDE.md" in x)
    assert line.startswith(f"left alone {repo.path / 'CLAUDE.md'}: it leads to") and "sentinel-memory:begin" in line
    assert (repo.path / ".mcp.json").is_file()


def test_a_link_of_the_clone_into_its_git_folder_or_its_memory_is_never_written_through(tmp_path, env):
    """A cloned project may hold links inside it that lead into .git/ or .context/: .gitignore of
    .context/ to .git/config, CLAUDE.md to the pre-commit hook init installs, AGENTS.md to the memory
    file. init (run twice: the hook exists the second time) writes through none of them; git's
    config still parses, the hook stays ours, the memory stays as it was."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".context").mkdir(exist_ok=True)
    (repo.path / ".context" / ".gitignore").unlink(missing_ok=True)
    (repo.path / ".context" / ".gitignore").symlink_to("../.git/config")
    (repo.path / "CLAUDE.md").symlink_to(".git/hooks/pre-commit")
    (repo.path / "AGENTS.md").symlink_to(".context/memory_log.jsonl")
    logged(repo.memory, "auth", "the token check was not described", "Hash the token first")
    memory = repo.memory.read_bytes()

    for _ in range(2):
        result = server(env, "--project", str(repo.path), "init", "--client", "claude", "--client", "codex")
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    config = subprocess.run(["git", "config", "--list"], cwd=repo.path, env=env, capture_output=True, text=True)

    assert config.returncode == 0, config.stderr
    assert "*.lock" not in (repo.path / ".git" / "config").read_text(encoding="utf-8")
    assert "<!--" not in (repo.path / ".git" / "hooks" / "pre-commit").read_text(encoding="utf-8")
    assert repo.memory.read_bytes() == memory
    refused = [x for x in result.stdout.splitlines() if x.startswith("left alone")]
    assert len(refused) == 3 and all("replace the link with a file of its own" in x for x in refused), refused


def test_a_client_name_in_capitals_is_taken_and_a_typo_is_refused_with_the_nearest_name(tmp_path, env):
    """init --client Claude configures Claude Code; --client claud exits 2 with one sentence naming
    claude and the clients, and writes nothing (before, argparse listed the choices and no hint)."""
    repo = make_repo(tmp_path, env, wired=False)

    typo = server(env, "--project", str(repo.path), "init", "--client", "claud")

    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    assert typo.stderr.splitlines()[-1].endswith(
        "argument --client: unknown client 'claud'; did you mean 'claude'? "
        "(the clients: cursor, vscode, claude, codex, gemini, windsurf)")
    assert not (repo.path / ".mcp.json").exists() and not (repo.path / ".cursorrules").exists()
    assert server(env, "--project", str(repo.path), "init", "--client", "Claude").returncode == 0
    assert json.loads((repo.path / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]


@pytest.mark.parametrize("odd", ["<!-- sentinel-memory:begin -->\nwhat I pasted once\n",
                                 "<!-- sentinel-memory:end -->\n"])
def test_a_stray_marker_never_makes_the_users_text_part_of_our_section(tmp_path, env, odd):
    """AGENTS.md with a begin (or end) marker whose partner a hand edit removed, then the user's own
    section: init appends ours, and a rerun refreshes only ours (before, the rerun replaced
    everything from the stray marker to our end marker: the user's section was deleted)."""
    repo = make_repo(tmp_path, env, wired=False)
    agents = repo.path / "AGENTS.md"
    mine = "# Agents\n" + odd + "\n## Our release rules\nTag every release.\n"
    agents.write_text(mine, encoding="utf-8")

    server(env, "--project", str(repo.path), "init", "--agents-md", "--no-hooks")
    first = agents.read_text(encoding="utf-8")
    again = server(env, "--project", str(repo.path), "init", "--agents-md", "--no-hooks").stdout

    assert first.startswith(mine) and agents.read_text(encoding="utf-8") == first
    assert f"unchanged {agents}" in again


def test_init_refreshes_an_edited_section_and_keeps_the_users_text(tmp_path, env):
    """A hand-edited copy of our .cursorrules section is refreshed between the markers; the user's text around it stays."""
    repo = make_repo(tmp_path, env)
    rules = repo.path / ".cursorrules"
    fresh = rules.read_text(encoding="utf-8")
    begin, end = "<!-- sentinel-memory:begin -->", "<!-- sentinel-memory:end -->"
    edited = "Mine, before.\n" + begin + "\nstale text\n" + end + "\nMine, after.\n"
    rules.write_text(edited, encoding="utf-8")

    result = server(env, "--project", str(repo.path), "init")

    assert "updated our section" in result.stdout
    text = rules.read_text(encoding="utf-8")
    assert text.startswith("Mine, before.\n") and text.endswith("Mine, after.\n") and "stale text" not in text
    assert fresh.strip() in text and text.count(begin) == 1


def test_init_repoints_a_stale_driver_and_leaves_invalid_json_alone(tmp_path, env):
    """init rewrites driver config that points at another install, and leaves an unparseable mcp.json untouched, saying so."""
    repo = make_repo(tmp_path, env, wired=False)
    repo.git("config", "merge.sentinel-memory.driver", "'/old/python' '/old/server.py' merge-driver %O %A %B %P")
    (repo.path / ".cursor").mkdir()
    broken = '{"mcpServers": {"other": '
    (repo.path / ".cursor" / "mcp.json").write_text(broken, encoding="utf-8")

    result = server(env, "--project", str(repo.path), "init")

    assert result.returncode == 0, result.stderr
    assert "left alone" in result.stdout
    assert (repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8") == broken
    assert str(SERVER) in repo.git("config", "merge.sentinel-memory.driver").stdout


@pytest.mark.anyio
async def test_the_server_wires_the_drivers_when_it_runs_in_a_work_tree(forked_connect, tmp_path, env):
    """A teammate who never ran init gets the driver config the first time the MCP server uses the memory."""
    repo = make_repo(tmp_path, env, wired=False)
    async with forked_connect(repo.path, env={k: env[k] for k in ("GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")}) as mcp:
        await mcp.ok("search_memory", query="anything")

    driver = repo.git("config", "--local", "merge.sentinel-memory.driver").stdout
    assert str(SERVER) in driver and "merge-driver" in driver
    assert str(SERVER) in repo.git("config", "--local", "diff.sentinel-memory.textconv").stdout


def test_init_writes_the_workflow_as_a_cursor_project_rule_when_asked_or_when_the_project_uses_them(tmp_path, env):
    """With .cursor/rules/ in the project, init writes .cursor/rules/sentinel-memory.mdc with front matter (alwaysApply) instead of .cursorrules; a rerun changes nothing; asked for .mdc while .cursorrules holds the workflow, it says so."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".cursor" / "rules").mkdir(parents=True)

    first = server(env, "--project", str(repo.path), "init")

    mdc = repo.path / ".cursor" / "rules" / "sentinel-memory.mdc"
    text = mdc.read_text(encoding="utf-8")
    assert f"created {mdc}" in first.stdout and not (repo.path / ".cursorrules").exists()
    front, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    assert "alwaysApply: true" in front.splitlines() and front.startswith("description: ")
    assert body.startswith("<!-- sentinel-memory:begin -->") and "search_memory" in body
    second = server(env, "--project", str(repo.path), "init")
    assert f"unchanged {mdc}" in second.stdout and mdc.read_text(encoding="utf-8") == text

    other = make_repo(tmp_path, env, name="other")  # wired: .cursorrules holds the workflow
    report = init(other.path, rules="mdc")

    assert (other.path / ".cursor" / "rules" / "sentinel-memory.mdc").exists()
    assert any(line.startswith(f"left alone {other.path / '.cursorrules'}: it also holds the workflow")
               for line in report)


def test_init_refreshes_a_stale_codex_table_and_keeps_the_rest(tmp_path, env):
    """A Codex config whose sentinel-memory table points at an old install: init updates its command and args, keeps other servers and keys, and a rerun changes nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "o3"\n\n[mcp_servers.other]\ncommand = "node"\n\n[mcp_servers.sentinel-memory]\n'
                    'command = "/old/python"  # old install\nstartup_timeout_sec = 20\n\n'
                    '[mcp_servers.sentinel-memory.env]\nX = "1"\n', encoding="utf-8")

    first = server(env, "--project", str(repo.path), "init", "--client", "codex")

    config = tomllib.loads(path.read_text(encoding="utf-8"))
    ours = config["mcp_servers"]["sentinel-memory"]
    assert ours["command"] == "sentinel-memory" and ours["args"] == []
    assert "# old install" in path.read_text(encoding="utf-8")  # the comment on the line stays
    assert (ours["startup_timeout_sec"], ours["env"], config["mcp_servers"]["other"], config["model"]) == \
        (20, {"X": "1"}, {"command": "node"}, "o3")
    assert f"updated {path}" in first.stdout
    before = path.read_bytes()
    assert f"unchanged {path}" in server(env, "--project", str(repo.path), "init", "--client", "codex").stdout
    assert path.read_bytes() == before


def test_init_adds_our_lines_to_the_users_own_context_gitattributes(tmp_path, env):
    """A .context/.gitattributes written by the user without our line: init appends it (the user's lines stay) and git then applies both drivers to the memory file."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".context" / ".gitattributes").write_text("*.md text\n", encoding="utf-8")

    result = server(env, "--project", str(repo.path), "init")

    attributes = (repo.path / ".context" / ".gitattributes").read_text(encoding="utf-8")
    assert attributes.startswith("*.md text\n") and "added 2 lines" in result.stdout
    assert repo.git("check-attr", "merge", "diff", "--", MEMORY).stdout.count(": sentinel-memory") == 2


def test_init_brings_an_earlier_line_of_ours_up_to_date_where_it_is(tmp_path, env):
    """A project committed before the quarantine file merged by union: init rewrites that line of
    ours in place (the user's lines and the file's CRLF stay), says so, and a second init changes
    nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    attributes = repo.path / ".context" / ".gitattributes"
    attributes.write_bytes(
        b"# Sentinel-Memory: LF endings.\r\n"
        b"memory_log.jsonl text eol=lf merge=sentinel-memory diff=sentinel-memory\r\n"
        b"memory_log.quarantine.jsonl text eol=lf\r\n*.md text\r\n"
    )

    result = server(env, "--project", str(repo.path), "init")

    assert attributes.read_bytes() == (
        b"# Sentinel-Memory: LF endings.\r\n"
        b"memory_log.jsonl text eol=lf merge=sentinel-memory diff=sentinel-memory\r\n"
        b"memory_log.quarantine.jsonl text eol=lf merge=union\r\n*.md text\r\n"
    )
    assert "brought 1 line of ours" in result.stdout
    check = repo.git("check-attr", "merge", "--", ".context/memory_log.quarantine.jsonl").stdout
    assert check.strip().endswith("merge: union")
    again = server(env, "--project", str(repo.path), "init")
    assert f"unchanged {attributes}" in again.stdout


def test_doctor_says_when_the_quarantine_file_would_conflict_in_a_merge(tmp_path, env):
    """A project whose .gitattributes predates the quarantine's merge rule: doctor says that two
    branches setting lines aside would conflict and that init brings the file up to date; after
    init it says nothing of it."""
    repo = make_repo(tmp_path, env)
    attributes = repo.path / ".context" / ".gitattributes"
    attributes.write_text(attributes.read_text().replace(" merge=union", ""))

    before = server(env, "--project", str(repo.path), "doctor")
    server(env, "--project", str(repo.path), "init")
    after = server(env, "--project", str(repo.path), "doctor")

    assert before.returncode == 0 and "git merges memory_log.quarantine.jsonl as text" in before.stdout
    assert "quarantine" not in after.stdout


@pytest.mark.parametrize("odd", ["not UTF-8", "a folder", "CRLF and a BOM"])
def test_init_leaves_an_odd_context_gitignore_alone_with_one_sentence(tmp_path, env, odd):
    """A .context/.gitignore init cannot edit (not UTF-8, a folder) is left alone with the reason
    and the lines it should hold; one it can edit keeps its BOM and line endings. Never a traceback."""
    repo = make_repo(tmp_path, env, wired=False)
    ignore = repo.path / ".context" / ".gitignore"
    ignore.unlink()
    before = None
    if odd == "not UTF-8":
        ignore.write_bytes(before := b"caf\xe9.lock\n")
    elif odd == "a folder":
        ignore.mkdir()
    else:
        ignore.write_bytes(b"\xef\xbb\xbfmine.log\r\n")

    result = server(env, "--project", str(repo.path), "init")

    assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr, result.stderr
    if odd == "CRLF and a BOM":
        data = ignore.read_bytes()
        assert data.startswith(b"\xef\xbb\xbfmine.log\r\n") and b"*.lock\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
        return
    line = next(line for line in result.stdout.splitlines() if ".gitignore" in line)
    assert line.startswith("left alone") and "*.lock" in line, result.stdout
    assert ignore.is_dir() if odd == "a folder" else ignore.read_bytes() == before


def test_a_linked_worktree_shares_the_driver_config_and_merges_by_id(tmp_path, env):
    """In a `git worktree add` checkout the drivers configured in the main clone apply, and the server's refresh finds them there instead of rewriting the config."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "w", "base", "base lesson")
    repo.commit("base")
    floor = last_id(repo.memory)
    repo.git("branch", "feature")
    worktree = tmp_path / "feature-tree"
    repo.git("worktree", "add", "-q", str(worktree), "feature")
    theirs = logged(worktree / MEMORY, "w", mc_after("w", "theirs", floor), "from the worktree")
    subprocess.run(["git", "-C", str(worktree), "commit", "-qam", "feature"], env=env, check=True)
    ours = logged(repo.memory, "w", mc_after("w", "ours", floor), "from main")
    repo.commit("main")
    config = (repo.path / ".git" / "config").read_bytes()

    assert gitdriver.git_dir(worktree) == repo.path / ".git"
    gitdriver.ensure_configured(worktree, sys.executable, str(SERVER))
    merge = subprocess.run(["git", "-C", str(worktree), "merge", "--no-edit", "main"], env=env,
                           capture_output=True, text=True)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert {ours, theirs} <= set(by_id((worktree / MEMORY).read_bytes()))
    assert (repo.path / ".git" / "config").read_bytes() == config



def test_the_server_started_by_a_person_at_a_terminal_changes_no_git_config(tmp_path, env):
    """The README's serve command, run by hand in a clone, prints where the memory is and how a
    client connects (the portable `init`, no machine path), and wires nothing into that clone's
    git config until a client uses it: the warm-up is for clients."""
    import os
    import pty
    import time

    repo = make_repo(tmp_path, env, wired=False)
    before = (repo.path / ".git" / "config").read_bytes()
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, str(SERVER), "--project", str(repo.path)], stdin=follower,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    try:
        banner = proc.stderr.readline().decode("utf-8")
        deadline = time.monotonic() + 3  # a warm-up wires git within about a second of the banner
        while time.monotonic() < deadline and (repo.path / ".git" / "config").read_bytes() == before:
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        os.close(leader)

    assert "memory file" in banner and "init" in banner and "mcp.json {" not in banner, banner
    assert (repo.path / ".git" / "config").read_bytes() == before


def test_doctor_in_the_home_directory_suggests_no_fold_of_the_projects_below(tmp_path, env):
    """Run in $HOME, doctor says it is no project and stops there: the projects below it each have
    their own memory, which it must not suggest folding into the home directory."""
    for name in ("shop", "blog"):
        (tmp_path / name / ".context").mkdir(parents=True)
        (tmp_path / name / ".context" / "memory_log.jsonl").write_text(
            json.dumps(rec(name, "m", "l")) + "\n", encoding="utf-8")
    home = {**env, "HOME": str(tmp_path), "USERPROFILE": str(tmp_path)}

    import forkrun

    result = forkrun.run(["doctor"], text=True, env=home, cwd=tmp_path, timeout=120)

    assert result.returncode == 1 and "home directory or a filesystem root" in result.stdout
    assert "fold" not in result.stdout and "Traceback" not in result.stderr


def test_init_as_a_module_writes_the_git_config_init_as_a_script_wrote(tmp_path, env):
    """How a run was started (`python -m sentinel_memory`, `python server.py`) only changes the
    words of its messages, not git's config: a teammate's server started either way leaves it be."""
    repo = make_repo(tmp_path, env)
    config = (repo.path / ".git" / "config").read_bytes()
    module = subprocess.run([sys.executable, "-m", "sentinel_memory", "--project", str(repo.path), "init"],
                            cwd=SERVER.parent, env=env, capture_output=True, text=True, timeout=60)

    assert module.returncode == 0, module.stderr
    assert (repo.path / ".git" / "config").read_bytes() == config
