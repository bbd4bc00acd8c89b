"""Configs a team commits once, and an init that never breaks what it touches: two teammates with
two installs in different folders and two clones of one repository; client configs in the shapes
people really write (links, read-only files, odd numbers, a BOM, TOML spelt another way). Real git
repositories, real files, every command a separate process.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import forkrun
from gitrepos import ROOT, SERVER, clone, env, launcher, make_repo  # noqa: F401  (env is a fixture)

CLIENT_ARGS = ["--client", "cursor", "--client", "vscode", "--client", "claude", "--client", "codex",
               "--client", "gemini", "--agents-md"]
CONFIGS = [".cursor/mcp.json", ".vscode/mcp.json", ".mcp.json", ".codex/config.toml", ".gemini/settings.json"]


def install_copy(folder: Path) -> Path:
    """A clone of this repository's code in `folder` (what a teammate gets with git clone): its server.py."""
    folder.mkdir(parents=True)
    shutil.copy2(ROOT / "server.py", folder / "server.py")
    shutil.copytree(ROOT / "sentinel_memory", folder / "sentinel_memory", ignore=shutil.ignore_patterns("__pycache__"))
    return folder / "server.py"


def teammate(env: dict, tmp_path: Path, name: str, script: Path) -> dict:
    """A teammate's environment: their own HOME and their own install's `sentinel-memory` on PATH."""
    home = tmp_path / f"home-{name}"
    home.mkdir()
    path = os.pathsep.join([str(launcher(tmp_path / f"bin-{name}", script)),
                            *[p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(tmp_path))]])
    return {**env, "HOME": str(home), "USERPROFILE": str(home), "PATH": path}


def sm(script: Path, environ: dict, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """`python SCRIPT ARGS`: a teammate's copy of server.py starts afresh; this checkout's runs
    forked from an interpreter that has made the imports (tests/forkrun.py)."""
    if script == ROOT / "server.py":
        result = forkrun.run(list(args), env=environ, cwd=cwd, text=True, encoding="utf-8", timeout=120)
    else:
        result = subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=environ, capture_output=True,
                                text=True, encoding="utf-8", timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def committed_text(repo) -> str:
    return "".join((repo.path / name).read_text(encoding="utf-8") for name in
                   repo.git("ls-files").stdout.split() if (repo.path / name).is_file())


# ---------------------------------------------------------------------------------------------
# 1. commit once


def test_the_second_teammates_init_leaves_git_status_clean(tmp_path, env):
    """Ann (install in one folder) runs init for every client and commits; Ben (install in
    another folder) clones and runs the same init: every committed file is byte for byte what he
    would write, so git status is clean, and no install's or checkout's path is in git."""
    ann_script, ben_script = install_copy(tmp_path / "ann-tools" / "sm"), install_copy(tmp_path / "ben-tools" / "sm")
    ann_env, ben_env = teammate(env, tmp_path, "ann", ann_script), teammate(env, tmp_path, "ben", ben_script)
    origin = make_repo(tmp_path, env, name="ann-app", wired=False)

    first = sm(ann_script, ann_env, origin.path, "init", *CLIENT_ARGS)
    assert first.returncode == 0, first.stdout + first.stderr
    origin.commit("Add Sentinel-Memory")
    assert set(CONFIGS) <= set(origin.git("ls-files").stdout.split())
    ben = clone(origin, tmp_path, "ben-app", wired=False)
    second = sm(ben_script, ben_env, ben.path, "init", *CLIENT_ARGS)

    assert second.returncode == 0, second.stdout + second.stderr
    assert ben.git("status", "--porcelain").stdout == "", second.stdout
    assert all(line.startswith("unchanged") for line in second.stdout.splitlines()
               if any(c in line for c in CONFIGS)), second.stdout
    assert str(tmp_path) not in committed_text(ben)
    assert str(ben_script) in ben.git("config", "merge.sentinel-memory.driver").stdout  # local, this machine's
    doctor = sm(ben_script, ben_env, ben.path, "doctor")
    assert doctor.returncode == 0 and "FAIL" not in doctor.stdout, doctor.stdout
    assert f".mcp.json starts sentinel-memory ({tmp_path / 'bin-ben' / 'sentinel-memory'})" in doctor.stdout


def test_a_teammates_plain_init_configures_the_clients_the_team_committed(tmp_path, env):
    """The README's step for a teammate is a plain `init`. In a clone of a project the team set up
    for Claude Code and Codex, it configures those two (and says so in one line) and adds no
    Cursor file: git status stays clean, untracked files included. A second run changes nothing."""
    origin = make_repo(tmp_path, env, name="team-app", wired=False)
    assert sm(ROOT / "server.py", env, origin.path, "init", "--client", "claude", "--client", "codex").returncode == 0
    origin.commit("Add Sentinel-Memory")
    ben = clone(origin, tmp_path, "ben-app", wired=False)

    for _run in range(2):
        out = sm(ROOT / "server.py", env, ben.path, "init")

        assert out.returncode == 0, out.stdout + out.stderr
        assert ben.git("status", "--porcelain", "--untracked-files=all").stdout == "", out.stdout
        assert not (ben.path / ".cursor").exists() and not (ben.path / ".cursorrules").exists()
        said = [line for line in out.stdout.splitlines() if line.startswith("configuring the clients")]
        assert said == [
            "configuring the clients whose project config already starts sentinel-memory: Claude Code "
            "(.mcp.json), Codex CLI (.codex/config.toml); --client chooses the clients instead"
        ], out.stdout
        assert f"unchanged {ben.path / '.mcp.json'}" in out.stdout
        assert f"unchanged {ben.path / '.codex' / 'config.toml'}" in out.stdout
    assert str(SERVER) in ben.git("config", "merge.sentinel-memory.driver").stdout  # the clone's own wiring done


def test_a_plain_init_with_the_teams_config_broken_by_a_merge_says_so_and_adds_no_cursor(tmp_path, env):
    """The team's .mcp.json holds conflict markers: a plain init does not take the project for one
    with no client and set up Cursor; it names Claude Code's config and says why it leaves it alone."""
    repo = make_repo(tmp_path, env, wired=False)
    assert sm(ROOT / "server.py", env, repo.path, "init", "--client", "claude").returncode == 0
    config = repo.path / ".mcp.json"
    config.write_text("<<<<<<< HEAD\n" + config.read_text(encoding="utf-8") + "=======\n{}\n>>>>>>> theirs\n")

    out = sm(ROOT / "server.py", env, repo.path, "init")

    assert not (repo.path / ".cursor").exists() and not (repo.path / ".cursorrules").exists(), out.stdout
    assert "Claude Code (.mcp.json)" in out.stdout and f"left alone {config}" in out.stdout, out.stdout


def test_an_explicit_client_wins_and_a_project_with_no_client_gets_cursor(tmp_path, env):
    """`--client` configures exactly the clients named, whatever the project has; a plain init
    then keeps every client configured so far current; in a project no client is configured
    for yet, a plain init configures Cursor, the default, without the line about found clients."""
    repo = make_repo(tmp_path, env, wired=False)
    sm(ROOT / "server.py", env, repo.path, "init", "--client", "gemini")

    added = sm(ROOT / "server.py", env, repo.path, "init", "--client", "cursor").stdout

    assert "configuring the clients" not in added and f"created {repo.path / '.cursor' / 'mcp.json'}" in added
    assert f"{repo.path / '.gemini'}" not in added and f"{repo.path / 'GEMINI.md'}" not in added
    both = sm(ROOT / "server.py", env, repo.path, "init").stdout
    assert both.startswith("configuring the clients whose project config already starts sentinel-memory: "
                           "Cursor (.cursor/mcp.json), Gemini CLI (.gemini/settings.json);"), both
    assert f"unchanged {repo.path / '.cursor' / 'mcp.json'}" in both
    assert f"unchanged {repo.path / '.gemini' / 'settings.json'}" in both
    fresh = make_repo(tmp_path, env, name="fresh", wired=False)
    first = sm(ROOT / "server.py", env, fresh.path, "init").stdout
    assert "configuring the clients" not in first and f"created {fresh.path / '.cursor' / 'mcp.json'}" in first
    assert not (fresh.path / ".mcp.json").exists()


def test_doctor_says_in_one_line_when_the_committed_command_cannot_start_here(tmp_path, env):
    """A teammate without `sentinel-memory` on PATH: doctor fails with one line that names the
    files and the fix; a config holding an absolute path (as earlier versions wrote) is named too."""
    repo = make_repo(tmp_path, env, wired=False)
    sm(ROOT / "server.py", env, repo.path, "init", *CLIENT_ARGS)
    bare = {**env, "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(tmp_path)))}
    if shutil.which("sentinel-memory", path=bare["PATH"]):
        pytest.skip("a sentinel-memory command is installed on this machine's PATH")

    doctor = sm(ROOT / "server.py", bare, repo.path, "doctor")

    assert doctor.returncode == 1
    lines = [line for line in doctor.stdout.splitlines() if "not on this machine's PATH" in line]
    assert len(lines) == 1 and all(c in lines[0] for c in CONFIGS) and "pipx install --editable" in lines[0], doctor.stdout
    path = repo.path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"sentinel-memory": {"command": sys.executable, "args": [],
                                                                    "cwd": str(repo.path)}}}), encoding="utf-8")
    doctor = sm(ROOT / "server.py", env, repo.path, "doctor").stdout
    assert f"{path} starts {sys.executable}, an absolute path of this machine" in doctor
    assert f"{path} holds this machine's path in 'cwd'" in doctor


def test_doctor_says_to_put_the_installed_command_on_path_rather_than_install_it_again(tmp_path, env):
    """The README's step 0 before a new shell: pipx installed `sentinel-memory` into ~/.local/bin,
    which PATH does not hold yet. Installing again does nothing; the fix is PATH."""
    repo = make_repo(tmp_path, env, wired=False)
    sm(ROOT / "server.py", env, repo.path, "init", "--no-hooks")
    bare = {**env, "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(tmp_path)))}
    if shutil.which("sentinel-memory", path=bare["PATH"]):
        pytest.skip("a sentinel-memory command is installed on this machine's PATH")
    installed = Path(env["HOME"]) / ".local" / "bin" / ("sentinel-memory.exe" if os.name == "nt" else "sentinel-memory")
    installed.parent.mkdir(parents=True, exist_ok=True)
    installed.write_text("#!/bin/sh\n", encoding="utf-8")
    installed.chmod(0o755)

    doctor = sm(ROOT / "server.py", bare, repo.path, "doctor")

    line = next(line for line in doctor.stdout.splitlines() if "not on this machine's PATH" in line)
    assert f"{installed} is installed, but {installed.parent} is not on PATH: run pipx ensurepath" in line, line
    assert "pipx install --editable" not in line


def test_doctor_names_one_config_that_cannot_start_in_the_singular(tmp_path, env):
    """The README's default, Cursor alone, without `sentinel-memory` on PATH: the line reads
    ".cursor/mcp.json starts `sentinel-memory`, which is not on this machine's PATH"."""
    repo = make_repo(tmp_path, env, wired=False)
    sm(ROOT / "server.py", env, repo.path, "init", "--no-hooks")
    bare = {**env, "PATH": os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not p.startswith(str(tmp_path)))}
    if shutil.which("sentinel-memory", path=bare["PATH"]):
        pytest.skip("a sentinel-memory command is installed on this machine's PATH")

    doctor = sm(ROOT / "server.py", bare, repo.path, "doctor")

    assert doctor.returncode == 1
    assert ".cursor/mcp.json starts `sentinel-memory`, which is not on this machine's PATH" in doctor.stdout, doctor.stdout


def test_init_moves_an_old_machine_specific_entry_to_the_portable_one(tmp_path, env):
    """A config an earlier version wrote (absolute command, server.py, cwd): init rewrites our
    entry to the portable one, removes the absolute cwd, and keeps the user's own keys."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"mcpServers": {"sentinel-memory": {
        "command": "/home/ann/tools/sm/.venv/bin/python", "args": ["/home/ann/tools/sm/server.py"],
        "cwd": "/home/ann/projects/app", "trust": True, "timeout": 30000}}}, indent=2) + "\n", encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "gemini").stdout

    assert json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"] == \
        {"command": "sentinel-memory", "args": [], "trust": True, "timeout": 30000}
    assert "removed this machine's cwd" in out and "kept your timeout" in out


# ---------------------------------------------------------------------------------------------
# 2. JSON edits that keep what they do not own


def init_cursor(env: dict, repo) -> str:
    return sm(ROOT / "server.py", env, repo.path, "init", "--client", "cursor").stdout


def test_a_linked_config_is_edited_through_its_link(tmp_path, env):
    """.cursor/mcp.json linked to a shared file in the project: the shared file gets our entry and
    the link stays a link. A link out of the project is refused, and nothing is written."""
    repo = make_repo(tmp_path, env, wired=False)
    shared = repo.path / "config" / "mcp.json"
    shared.parent.mkdir()
    shared.write_text('{"mcpServers": {"other": {"command": "node"}}}\n', encoding="utf-8")
    (repo.path / ".cursor").mkdir()
    link = repo.path / ".cursor" / "mcp.json"
    link.symlink_to(Path("..") / "config" / "mcp.json")

    out = init_cursor(env, repo)

    assert link.is_symlink() and "through the link" in out
    assert set(json.loads(shared.read_text(encoding="utf-8"))["mcpServers"]) == {"other", "sentinel-memory"}
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}\n", encoding="utf-8")
    link.unlink()
    link.symlink_to(outside)
    out = init_cursor(env, repo)
    assert f"left alone {link}: it leads to {outside}, outside the project" in out
    assert outside.read_text(encoding="utf-8") == "{}\n" and link.is_symlink()
    assert f"init leaves {link} alone: it leads to {outside}" in sm(ROOT / "server.py", env, repo.path, "doctor").stdout


def test_permissions_are_kept_and_a_read_only_config_is_refused(tmp_path, env):
    """A config with mode 600 keeps 600 after init; a read-only one is left as it was, with the
    reason and the entry to add."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    path.chmod(0o600)
    init_cursor(env, repo)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and "sentinel-memory" in path.read_text(encoding="utf-8")

    path.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    path.chmod(0o444)
    out = init_cursor(env, repo)
    assert f"left alone {path}: it is read-only" in out and '"command": "sentinel-memory"' in out
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {}}\n' and stat.S_IMODE(path.stat().st_mode) == 0o444


def test_numbers_bom_line_endings_and_order_stay_byte_for_byte(tmp_path, env):
    """A file with a BOM, CRLF, 1.10, 1e400 and a server of the user's: every byte of it stays,
    our entry is added among the servers, and the result is valid JSON a client reads."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    head = b'\xef\xbb\xbf{\r\n  "version": 1.10,\r\n  "limit": 1e400,\r\n  "mcpServers": {\r\n'
    other = b'    "other": {"command": "node", "args": ["a.js"]}'
    path.write_bytes(head + other + b"\r\n  }\r\n}\r\n")

    init_cursor(env, repo)

    raw = path.read_bytes()
    assert raw.startswith(head + other + b",\r\n    \"sentinel-memory\": {")
    assert b"\n" not in raw.replace(b"\r\n", b"") and raw.endswith(b"\r\n  }\r\n}\r\n")
    parsed = json.loads(raw.decode("utf-8-sig"), parse_constant=lambda c: pytest.fail(f"{c} in the output"))
    assert parsed["mcpServers"]["sentinel-memory"]["command"] == "sentinel-memory"


VSCODE_JSONC = """\
{
\t// the team's servers (VS Code reads comments and trailing commas here)
\t"servers": {
\t\t"db": {"command": "db-mcp", "args": ["--ro",],}, // read-only
\t},
\t/* inputs come later */
}
"""


def test_a_config_with_comments_and_trailing_commas_gets_our_entry_and_keeps_them(tmp_path, env):
    """JSONC, as VS Code, Cursor and Gemini CLI read it (before, init refused any file with a
    comment): our entry is spliced in, every comment, trailing comma and tab stays, a rerun
    changes nothing, and doctor reads the entry."""
    repo = make_repo(tmp_path, env, wired=False)
    vscode, gemini = repo.path / ".vscode" / "mcp.json", repo.path / ".gemini" / "settings.json"
    vscode.parent.mkdir()
    gemini.parent.mkdir()
    vscode.write_text(VSCODE_JSONC, encoding="utf-8")
    gemini.write_text('{ // trusted by the team\n}\n', encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "vscode", "--client", "gemini").stdout

    text = vscode.read_text(encoding="utf-8")
    assert text.startswith(VSCODE_JSONC.split('},', 1)[0] + '}, // read-only\n\t\t"sentinel-memory": {'), out
    assert text.endswith('\t},\n\t/* inputs come later */\n}\n')
    assert "// trusted by the team" in gemini.read_text(encoding="utf-8")
    from sentinel_memory.configfiles.jsonedit import loads
    assert loads(text)["servers"]["sentinel-memory"]["command"] == "sentinel-memory"
    assert loads(text)["servers"]["db"] == {"command": "db-mcp", "args": ["--ro"]}
    assert "hooks" in loads(gemini.read_text(encoding="utf-8"))
    settled = (vscode.read_bytes(), gemini.read_bytes())
    again = sm(ROOT / "server.py", env, repo.path, "init", "--client", "vscode", "--client", "gemini").stdout
    assert (vscode.read_bytes(), gemini.read_bytes()) == settled and f"unchanged {vscode}" in again
    doctor = sm(ROOT / "server.py", env, repo.path, "doctor").stdout
    assert f"{vscode} starts sentinel-memory" in doctor and "not valid JSON" not in doctor, doctor


@pytest.mark.parametrize("text", ['{"servers": {"db": {"command": "x"}}\n', '{"servers": /* open\n}\n',
                                  "\x00\x01binary\n", "[]\n", "null\n", '{"servers": []}\n', ""])
def test_a_config_init_cannot_edit_is_left_as_it_was_with_one_sentence(tmp_path, env, text):
    """Broken JSON, an unclosed comment, a top-level array or null, servers of the wrong type: the
    file stays byte for byte and init says why and what to add in its one line (an empty file gets
    our entry)."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "vscode").stdout

    line = next(x for x in out.splitlines() if str(path) in x)
    if not text:
        assert line.startswith(f"added to {path}") or line.startswith(f"updated {path}"), line
        return
    assert path.read_text(encoding="utf-8") == text
    assert line.startswith(f"left alone {path}: ") and line.endswith('"args": ["--project", "${workspaceFolder}"]}}}')


def test_our_server_under_another_name_is_named_so_it_does_not_run_twice(tmp_path, env):
    """The user's own entry for this server as "memory" (by name, and an older python + server.py
    one): init adds ours, keeps theirs (their file), and init and doctor say the client would run
    it twice and what to remove (before, nothing was said). An entry for another project's memory
    (--project elsewhere) is not named."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    servers = {"memory": {"command": "sentinel-memory", "args": ["--project", "${workspaceFolder}"]},
               "old": {"command": "/usr/bin/python3", "args": ["/opt/sm/server.py"]},
               "docs-memory": {"command": "sentinel-memory", "args": ["--project", str(tmp_path)]},
               "node": {"command": "node", "args": ["x.js"]}}
    path.write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n", encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--no-hooks").stdout

    line = next(x for x in out.splitlines() if str(path) in x)
    assert line.endswith("; note: 'memory', 'old' start sentinel-memory too, so the client runs it twice: remove them")
    assert {k: v for k, v in json.loads(path.read_text(encoding="utf-8"))["mcpServers"].items()
            if k != "sentinel-memory"} == servers
    doctor = sm(ROOT / "server.py", env, repo.path, "doctor").stdout
    assert f"{path} starts sentinel-memory under 'memory', 'old' too, so the client runs it twice: remove them " \
           "and keep 'sentinel-memory'" in doctor, doctor


def test_duplicate_server_keys_are_refused_not_merged_away(tmp_path, env):
    """Two "mcpServers" objects (a client reads the last): init does not drop the first one's
    servers; it leaves the file and says which key to keep."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".cursor" / "mcp.json"
    path.parent.mkdir()
    text = '{"mcpServers": {"a": {"command": "x"}},\n "mcpServers": {"b": {"command": "y"}}}\n'
    path.write_text(text, encoding="utf-8")

    out = init_cursor(env, repo)

    assert f"left alone {path}: it has 2 'mcpServers' keys" in out
    assert path.read_text(encoding="utf-8") == text
    assert f"{path} has the 'mcpServers' key more than once" in sm(ROOT / "server.py", env, repo.path, "doctor").stdout


# ---------------------------------------------------------------------------------------------
# 3. TOML through a parser


@pytest.mark.parametrize("spelling", [
    '[mcp_servers."sentinel-memory"]\ncommand = "/old/python"  # our old install\nargs = ["/old/server.py"]\n',
    '[mcp_servers.sentinel-memory] # the memory server\ncommand = "/old/python"\n',
    'mcp_servers.sentinel-memory.command = "/old/python"\nmcp_servers.sentinel-memory.startup_timeout_sec = 20\n',
    '[mcp_servers]\nsentinel-memory.command = "/old/python"\nother.command = "node"\n',
], ids=["quoted", "header-comment", "dotted-top", "dotted-in-table"])
def test_a_codex_table_spelt_another_way_is_updated_in_place(tmp_path, env, spelling):
    """Valid TOML naming our table in another spelling: init updates that table (no second one),
    the file still parses, comments stay; or, where the edit would change the file's meaning, init
    leaves it alone and says what to add. A rerun changes nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    text = 'model = "o4"\n' + spelling
    path.write_text(text, encoding="utf-8")
    before = tomllib.loads(text)

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex").stdout

    after = tomllib.loads(path.read_text(encoding="utf-8"))
    ours = after["mcp_servers"]["sentinel-memory"]
    assert ours["command"] == "sentinel-memory" and ours["args"] == [], out
    assert after["model"] == "o4" and {k: v for k, v in after["mcp_servers"].items() if k != "sentinel-memory"} == \
        {k: v for k, v in before["mcp_servers"].items() if k != "sentinel-memory"}
    assert {k: v for k, v in ours.items() if k not in ("command", "args", "tools")} == \
        {k: v for k, v in before["mcp_servers"]["sentinel-memory"].items() if k not in ("command", "args")}
    assert ours.get("tools", {}).get("log_memory") == {"approval_mode": "approve"} or "approval_mode" in out
    for comment in ("# our old install", "# the memory server"):
        assert (comment in text) == (comment in path.read_text(encoding="utf-8"))
    settled = path.read_bytes()
    assert sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex").stdout.startswith(f"unchanged {path}")
    assert path.read_bytes() == settled


USER_CODEX = """\
# the team's Codex settings
model = "o3"  # fast enough
profile = { name = "review", effort = "high" }

[mcp_servers.other]
command = "other"   # keep me
env = { A = "1" }

[[profiles]]
name = "p1"

[[profiles]]
name = "p2"
"""


def test_an_old_codex_entry_loses_its_machine_path_and_doctor_agrees(tmp_path, env):
    """An earlier version's Codex table (absolute command, server.py, cwd): init removes the cwd
    it says it removed (before, the cwd stayed, and doctor kept asking for an init that kept it)."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('[mcp_servers.sentinel-memory]\ncommand = "/home/ann/sm/.venv/bin/python"\n'
                    'args = ["/home/ann/sm/server.py"]\ncwd = "/home/ann/projects/app"  # hers\n'
                    'startup_timeout_sec = 20\n', encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex", "--no-hooks").stdout

    ours = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["sentinel-memory"]
    assert "cwd" not in ours and ours["startup_timeout_sec"] == 20 and ours["command"] == "sentinel-memory"
    assert "removed this machine's cwd" in out
    assert "holds this machine's path" not in sm(ROOT / "server.py", env, repo.path, "doctor").stdout


def test_a_new_codex_table_is_appended_and_every_byte_of_the_users_file_stays(tmp_path, env):
    """Comments, an inline table, arrays of tables after a server table, CRLF: our table goes at the
    end and the user's text stays byte for byte (tomlkit moved [mcp_servers.*] tables that an array
    of tables split); reruns change nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    user = (USER_CODEX + "\n\n\n").replace("\n", "\r\n").encode()  # blank lines at its end too
    path.write_bytes(user)

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex", "--no-hooks").stdout

    data = path.read_bytes()
    assert data.startswith(user) and b"\n" not in data.replace(b"\r\n", b""), out
    parsed = tomllib.loads(data.decode())
    assert parsed["mcp_servers"]["sentinel-memory"] == {
        "command": "sentinel-memory", "args": [], "tools": {"log_memory": {"approval_mode": "approve"}}}
    assert {k: v for k, v in parsed.items() if k != "mcp_servers"} == \
        {k: v for k, v in tomllib.loads(USER_CODEX).items() if k != "mcp_servers"}
    assert sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex").stdout.startswith(f"unchanged {path}")
    assert path.read_bytes() == data


def test_a_codex_table_that_cannot_be_edited_in_place_is_left_alone_with_what_to_add(tmp_path, env):
    """Our stale table after the user's arrays of tables, in a file tomlkit would reorder: init leaves
    the file as it is and says in one line why and what to write."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    text = USER_CODEX + '\n[mcp_servers.sentinel-memory]\ncommand = "/old/python"\n'
    path.write_text(text, encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex", "--no-hooks").stdout

    assert path.read_text(encoding="utf-8") == text
    line = next(x for x in out.splitlines() if str(path) in x)
    assert line.startswith(f"left alone {path}: init could not edit") and 'command = "sentinel-memory"' in line


def test_an_invalid_codex_config_is_refused_and_left_as_it_is(tmp_path, env):
    """TOML that does not parse: init appends nothing, says why in one line, and doctor fails on it."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "o4"\n[mcp_servers.other\ncommand = "node"\n', encoding="utf-8")
    before = path.read_bytes()

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "codex").stdout

    assert f"left alone {path}: it is not valid TOML" in out
    assert path.read_bytes() == before
    assert f"{path} is not valid TOML" in sm(ROOT / "server.py", env, repo.path, "doctor").stdout


def test_the_rules_files_keep_their_bytes_links_and_modes(tmp_path, env):
    """AGENTS.md linked to docs/AGENTS.md, with CRLF and mode 640: our section goes into the linked
    file with CRLF, the link and the mode stay; a read-only .cursorrules is left as it was."""
    repo = make_repo(tmp_path, env, wired=False)
    shared = repo.path / "docs" / "AGENTS.md"
    shared.parent.mkdir()
    shared.write_bytes(b"# Agents\r\n\r\nRun the tests.\r\n")
    shared.chmod(0o640)
    (repo.path / "AGENTS.md").symlink_to(Path("docs") / "AGENTS.md")
    rules = repo.path / ".cursorrules"
    rules.write_text("Answer in Korean.\n", encoding="utf-8")
    rules.chmod(0o444)

    out = sm(ROOT / "server.py", env, repo.path, "init", "--agents-md").stdout

    data = shared.read_bytes()
    assert (repo.path / "AGENTS.md").is_symlink() and data.startswith(b"# Agents\r\n\r\nRun the tests.\r\n\r\n<!--")
    assert b"\n" not in data.replace(b"\r\n", b"") and stat.S_IMODE(shared.stat().st_mode) == 0o640
    assert f"left alone {rules}: it is read-only" in out and rules.read_text(encoding="utf-8") == "Answer in Korean.\n"


@pytest.mark.parametrize("name, text", [(".cursor/mcp.json", '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}\n"),
                                        (".codex/config.toml", "a = " + "[" * 50_000 + "]" * 50_000 + "\n")])
def test_a_config_nested_past_reason_is_refused_without_a_traceback(tmp_path, env, name, text):
    """A cloned repository's config nested 50,000 deep: init and doctor answer in a sentence, the
    file stays as it was."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / name
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "cursor", "--client", "codex").stdout

    assert f"left alone {path}" in out and path.read_text(encoding="utf-8") == text
    assert str(path) in sm(ROOT / "server.py", env, repo.path, "doctor").stdout


@pytest.mark.parametrize("case", ["folder is a file", "file is a folder", "huge"])
def test_a_config_path_init_cannot_write_is_named_with_what_to_do(tmp_path, env, case):
    """.claude is a file, .claude/settings.json is a folder, or the file is megabytes: init leaves
    it, says in its line what is in the way and what to move (before: "Could not read ...: Not a
    directory. Check its permissions."), and doctor says it once, without asking for an init."""
    repo = make_repo(tmp_path, env, wired=False)
    if case == "folder is a file":
        (repo.path / ".claude").write_text("notes\n", encoding="utf-8")
        expected = f"{repo.path / '.claude'} is a file, not a folder; move it aside"
    elif case == "file is a folder":
        (repo.path / ".claude" / "settings.json").mkdir(parents=True)
        expected = "it is a folder, not a file; move it aside"
    else:
        (repo.path / ".claude").mkdir()
        (repo.path / ".claude" / "settings.json").write_text("{}" + " " * 2_000_000, encoding="utf-8")
        expected = "it is 2,000,002 bytes, more than a client config holds"
    path = repo.path / ".claude" / "settings.json"

    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "claude").stdout

    line = next(x for x in out.splitlines() if str(path) in x)
    assert line.startswith(f"left alone the hooks in {path}: {expected}"), line
    assert case != "huge" or path.stat().st_size == 2_000_002
    assert (repo.path / ".mcp.json").is_file()  # the other file is written
    doctor = sm(ROOT / "server.py", env, repo.path, "doctor").stdout
    said = [x for x in doctor.splitlines() if str(path) in x]
    assert case == "folder is a file" and not said or len(said) == 1 and expected in said[0], doctor


def test_a_folder_init_cannot_write_in_is_one_line_and_the_rest_is_done(tmp_path, env):
    """.cursor/ that cannot be written in (immutable for root, mode 555 for anyone else): init says
    so in Cursor's lines and goes on with the other clients, the rules and .context/ (before, the
    first failed write ended init with exit 3 and nothing after it was done)."""
    repo = make_repo(tmp_path, env, wired=False)
    folder = repo.path / ".cursor"
    folder.mkdir()
    locked = ["chattr", "+i", str(folder)] if os.geteuid() == 0 and shutil.which("chattr") else None
    if locked:
        if subprocess.run(locked, capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not supported here")
    else:
        folder.chmod(0o555)
    try:
        try:
            (folder / "probe").write_text("", encoding="utf-8")
            pytest.skip("the folder stays writable here")
        except OSError:
            pass

        result = sm(ROOT / "server.py", env, repo.path, "init", "--client", "cursor", "--client", "claude")

        assert result.returncode == 0, result.stdout + result.stderr
        line = next(x for x in result.stdout.splitlines() if str(folder / "mcp.json") in x)
        assert line.startswith(f"left alone {folder / 'mcp.json'}: it could not be written (") and \
            f"make {folder} writable" in line, line
        assert (repo.path / ".mcp.json").is_file() and (repo.path / ".cursorrules").is_file()
        assert not any(folder.iterdir())
    finally:
        if locked:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def test_doctor_says_what_init_would_leave_alone_and_never_sends_the_user_in_a_circle(tmp_path, env):
    """Our entry with two "command" keys, and a config saved as UTF-16: doctor says what init would
    refuse and what to do first (before, it asked to install sentinel-memory for a command `b`, or
    to run an init that leaves the file alone, and named a codec for the UTF-16 file)."""
    repo = make_repo(tmp_path, env, wired=False)
    gemini, claude = repo.path / ".gemini" / "settings.json", repo.path / ".mcp.json"
    gemini.parent.mkdir()
    gemini.write_text('{"mcpServers": {"sentinel-memory": {"command": "a", "command": "b"}}}\n', encoding="utf-8")
    claude.write_text('{"mcpServers": {}}\n', encoding="utf-16")

    doctor = sm(ROOT / "server.py", env, repo.path, "doctor").stdout

    lines = [x for x in doctor.splitlines() if str(gemini) in x]
    assert lines[0] == f"[warn] init leaves {gemini} alone: it has 2 'command' keys in the 'sentinel-memory' entry " \
                       "(a client reads only the last); keep one", doctor
    assert lines[1].startswith(f"[FAIL] {gemini} starts `b`, which is not on this machine's PATH: fix what is said "
                               "above, then run"), doctor
    assert "pipx install" not in lines[1]
    assert f"[FAIL] {claude} is not UTF-8 text: save it as UTF-8" in doctor
    out = sm(ROOT / "server.py", env, repo.path, "init", "--client", "claude", "--no-hooks").stdout
    assert f"left alone {claude}: it is not UTF-8 text; save it as UTF-8; add this yourself" in out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_doctor_reads_no_config_that_is_not_a_regular_file(tmp_path, env):
    """A cloned repository's .mcp.json that is a FIFO: doctor says init leaves it alone and goes on
    (before, it blocked for good reading the pipe)."""
    repo = make_repo(tmp_path, env, wired=False)
    os.mkfifo(repo.path / ".mcp.json")
    doctor = subprocess.run([sys.executable, str(ROOT / "server.py"), "doctor"], capture_output=True, text=True,
                            env=env, cwd=repo.path, timeout=60)
    assert f"init leaves {repo.path / '.mcp.json'} alone" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "Traceback" not in doctor.stderr
