"""Works wherever people run it: the project root found from a subfolder (git work trees and
submodules included), `init` rerun over configs people edited, the Codex and Gemini wiring, the
refusal naming the client's own fix, stray memory files folded in. Real git repositories and
real files in tmp_path; every command runs as a separate process, the server over real stdio.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import forkrun
from gitrepos import SERVER, env, logged, make_repo  # noqa: F401  (env is a fixture)
from sentinel_memory.setup import project

MEMORY = Path(".context") / "memory_log.jsonl"


def run(env: dict, cwd: Path, *args: str, rc: int | None = 0) -> subprocess.CompletedProcess:
    """`python server.py ARGS` started in `cwd`, without --project or the environment variable."""
    environ = {k: v for k, v in env.items() if k != project.ENV_VAR}
    result = forkrun.run(list(args), cwd=cwd, env=environ, text=True, encoding="utf-8", timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    if rc is not None:
        assert result.returncode == rc, result.stdout + result.stderr
    return result


def log_here(env: dict, cwd: Path, topic: str, lesson: str) -> dict:
    out = run(env, cwd, "log", "--topic", topic, "--missing-context", f"{topic} context", "--lesson", lesson, "--json")
    return json.loads(out.stdout)


def git(env: dict, cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(cwd), *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


# ---------------------------------------------------------------------------------------------
# 1. the project root from a subfolder


def test_every_command_in_a_subfolder_uses_the_projects_memory(tmp_path, env):
    """In src/api/ of a repository, log writes to the repository's memory (no .context/ appears in
    the subfolder), search finds it, and doctor names the root and how it was found."""
    repo = make_repo(tmp_path, env)
    sub = repo.path / "src" / "api"
    sub.mkdir(parents=True)

    saved = log_here(env, sub, "api", "paginate with cursors")

    assert not (sub / ".context").exists() and not (repo.path / "src" / ".context").exists()
    assert saved["id"] in repo.memory.read_text(encoding="utf-8")
    found = json.loads(run(env, sub, "search", "cursors", "--json").stdout)
    assert [r["id"] for r in found] == [saved["id"]]
    doctor = run(env, sub, "doctor").stdout
    assert f"project root {repo.path} (from the current directory {sub}: the nearest folder with " \
           ".context/memory_log.jsonl)" in doctor


def test_a_new_repository_without_memory_resolves_to_its_top_and_outside_git_to_the_folder(tmp_path, env):
    """No memory yet: the first log from a subfolder creates it at the top of the git work tree.
    Outside git, a folder up the tree with a memory file wins, and without one the folder itself is used."""
    repo = make_repo(tmp_path, env, wired=False)
    deep = repo.path / "a" / "b"
    deep.mkdir(parents=True)
    shutil.rmtree(repo.path / ".context")
    assert f"project root {repo.path} (from the current directory {deep}: the top of its git work tree)" \
        in run(env, deep, "doctor").stdout

    log_here(env, deep, "t", "first lesson")

    assert repo.memory.is_file() and not (deep / ".context").exists()

    plain = tmp_path / "plain"
    (plain / "x" / "y").mkdir(parents=True)
    log_here(env, plain, "t", "at the top")
    log_here(env, plain / "x" / "y", "t2", "found from below")
    assert len((plain / MEMORY).read_text(encoding="utf-8").splitlines()) == 2
    lone = tmp_path / "lone" / "dir"
    lone.mkdir(parents=True)
    log_here(env, lone, "t", "here")
    assert (lone / MEMORY).is_file()


def test_a_monorepos_projects_set_up_by_init_keep_their_first_lessons_apart(tmp_path, env):
    """Two projects in one repository, each set up by `init` and without a lesson yet: a first
    lesson logged from inside B (its src/, where a client may start) lands in B's memory, not at
    the repository's top where A would read it too; A's own stays apart."""
    repo = make_repo(tmp_path, env, wired=False)
    repo.memory.unlink(missing_ok=True)
    for name in ("A", "B"):
        (repo.path / name / "src").mkdir(parents=True)
        run(env, repo.path, "--project", name, "init", "--client", "claude")

    doctor = run(env, repo.path / "B" / "src", "doctor", rc=None).stdout
    from_b = log_here(env, repo.path / "B" / "src", "beta", "B's lesson")
    from_a = log_here(env, repo.path / "A", "alpha", "A's lesson")

    assert not repo.memory.exists()
    assert from_b["id"] in (repo.path / "B" / MEMORY).read_text(encoding="utf-8")
    assert from_a["id"] in (repo.path / "A" / MEMORY).read_text(encoding="utf-8")
    assert from_b["id"] not in (repo.path / "A" / MEMORY).read_text(encoding="utf-8")
    assert f"project root {repo.path / 'B'} (from the current directory {repo.path / 'B' / 'src'}: the nearest " \
           "folder with a .context/ that init made)" in doctor

def test_a_linked_work_tree_and_a_submodule_are_projects_of_their_own(tmp_path, env):
    """From a subfolder of a `git worktree add` checkout the root is that work tree (its own
    memory file, which git merges); from inside a submodule it is the submodule, not the
    superproject whose memory sits above it."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "main", "m", "on main")
    repo.commit("memory")
    tree = tmp_path / "feature-tree"
    git(env, repo.path, "worktree", "add", "-q", "-b", "feature", str(tree))
    (tree / "pkg").mkdir()

    saved = log_here(env, tree / "pkg", "feature", "from the work tree")

    assert saved["id"] in (tree / MEMORY).read_text(encoding="utf-8")
    assert saved["id"] not in repo.memory.read_text(encoding="utf-8")

    library = make_repo(tmp_path, env, name="library", wired=False)
    (library.path / "README").write_text("lib\n", encoding="utf-8")
    library.commit("lib")
    git(env, repo.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "vendor/lib")
    inside = repo.path / "vendor" / "lib"
    assert (inside / ".git").is_file()  # a submodule's .git is a file

    in_sub = log_here(env, inside, "lib", "kept with the library")

    assert in_sub["id"] in (inside / MEMORY).read_text(encoding="utf-8")
    assert in_sub["id"] not in repo.memory.read_text(encoding="utf-8")


def test_the_walk_never_climbs_to_the_home_directory(tmp_path, env):
    """A home directory kept in git (dotfiles) with a memory file does not swallow its folders: a
    project folder below it is its own root; started in the home directory itself, writing is refused."""
    home = Path(env["HOME"])
    git(env, home, "init", "-q")
    (home / ".context").mkdir()
    (home / MEMORY).write_text("", encoding="utf-8")
    app = home / "projects" / "app" / "src"
    app.mkdir(parents=True)

    log_here(env, app, "t", "stays in the folder")

    assert (app / MEMORY).is_file() and (home / MEMORY).read_text(encoding="utf-8") == ""
    refused = run(env, home, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l", rc=2)
    assert "home directory" in refused.stderr


@pytest.mark.anyio
async def test_the_server_started_in_a_subfolder_uses_the_projects_memory(forked_connect, tmp_path, env):
    """The MCP server that a client starts in a subfolder reads and writes the repository's memory."""
    repo = make_repo(tmp_path, env)
    rid = logged(repo.memory, "db", "pool size", "use 10 connections")
    sub = repo.path / "services" / "db"
    sub.mkdir(parents=True)

    async with forked_connect(sub, env={k: env[k] for k in ("GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")}) as mcp:
        text = await mcp.ok("search_memory", query="pool")
        saved = await mcp.ok("log_memory", topic="db", missing_context="timeouts", lesson="30 s")

    assert str(repo.memory) in text and rid in text
    assert str(repo.memory) in saved and not (sub / ".context").exists()


# ---------------------------------------------------------------------------------------------
# doctor finds a stray memory file, fold brings it in


def test_doctor_warns_about_a_stray_memory_file_and_fold_brings_it_in(tmp_path, env):
    """A memory file written in a subfolder (by an older server, or copied): doctor warns, names it
    and gives the fold command; fold merges by id (new records added, a shared id keeps the newer
    version), leaves the stray file, and doctor is quiet once it is deleted."""
    repo = make_repo(tmp_path, env)
    shared = logged(repo.memory, "api", "shared", "old lesson")
    only_root = logged(repo.memory, "root", "r", "root lesson")
    stray_dir = repo.path / "web"
    stray = stray_dir / MEMORY
    (stray_dir / ".context").mkdir(parents=True)
    stray.write_bytes(repo.memory.read_bytes())
    from sentinel_memory.tools import answers

    answers.log(stray, "api", "shared", "old lesson", ask_next_time="asked in web")  # same id, newer
    only_stray = logged(stray, "web", "w", "web lesson")

    doctor = run(env, repo.path, "doctor")
    assert f"another memory file below the project, {stray}" in doctor.stdout
    assert "server.py fold web/.context/memory_log.jsonl" in doctor.stdout

    inside = run(env, stray_dir, "doctor").stdout  # the nearest memory file is the stray one
    assert f"{stray} is below {repo.path}, which has a memory file of its own: run `python server.py fold web`" in inside

    folded = run(env, repo.path, "fold", "web")

    assert "folded 3 records" in folded.stdout and "1 added, 1 updated" in folded.stdout
    records = {json.loads(line)["id"]: json.loads(line) for line in repo.memory.read_text(encoding="utf-8").splitlines()}
    assert set(records) == {shared, only_root, only_stray}
    assert records[shared]["ask_next_time"] == "asked in web"
    assert stray.is_file()
    again = run(env, repo.path, "fold", str(stray))
    assert "0 added, 0 updated" in again.stdout
    stray.unlink()
    assert "another memory file" not in run(env, repo.path, "doctor").stdout
    assert run(env, repo.path, "fold", "nowhere", rc=2).stderr.count("Nothing was changed") == 1


def test_doctor_finds_a_stray_memory_file_outside_git_too(tmp_path, env):
    """Outside git doctor walks the folders (skipping dependency folders such as node_modules)."""
    top = tmp_path / "plain"
    for folder in (top, top / "docs" / "notes", top / "node_modules" / "pkg"):
        (folder / ".context").mkdir(parents=True)
        (folder / MEMORY).write_text("", encoding="utf-8")

    out = run(env, top, "doctor").stdout

    assert f"another memory file below the project, {top / 'docs' / 'notes' / MEMORY}" in out
    assert "node_modules" not in out


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "plain"])
def test_doctor_names_a_stray_memory_file_that_links_out_of_the_project_and_goes_on(tmp_path, env, in_git):
    """A cloned repository's subfolder holding .context/memory_log.jsonl as a link to a file
    elsewhere: doctor says it is a link to delete, not a file to fold, and still runs its other
    checks (it used to stop with a traceback)."""
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("{}\n", encoding="utf-8")
    if in_git:
        repo = make_repo(tmp_path, env)
        top = repo.path
    else:
        top = tmp_path / "plain"
        (top / ".context").mkdir(parents=True)
    (top / "sub" / ".context").mkdir(parents=True)
    (top / "sub" / MEMORY).symlink_to(outside)

    doctor = run(env, top, "doctor", rc=None)

    assert "Traceback" not in doctor.stderr
    assert f"another memory file below the project, {top / 'sub' / MEMORY}, is a symbolic link" in doctor.stdout
    assert "fold sub" not in doctor.stdout
    assert ("the git merge driver" if in_git else "not a git work tree") in doctor.stdout  # the checks after it ran


@pytest.mark.parametrize("kind", ["link out", "file"])
def test_init_writes_nothing_through_a_context_that_is_a_link_or_a_file_and_goes_on(tmp_path, env, kind):
    """A cloned project whose .context links out of it (or is a file): init writes nothing there,
    says so in one line, and sets up the rest (the pre-commit check, the git drivers)."""
    repo = make_repo(tmp_path, env, wired=False)
    shutil.rmtree(repo.path / ".context")
    outside = tmp_path / "outside"
    outside.mkdir()
    if kind == "file":
        (repo.path / ".context").write_text("x\n", encoding="utf-8")
    else:
        (repo.path / ".context").symlink_to(outside)

    out = run(env, repo.path, "init").stdout

    assert f"left {repo.path / '.context'} alone" in out and list(outside.iterdir()) == []
    assert "pre-commit" in out and "git merge and diff drivers" in out


def test_doctor_names_a_memory_file_that_is_a_folder_or_a_config_that_is_no_object_and_goes_on(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    repo.memory.unlink(missing_ok=True)
    repo.memory.mkdir()
    (repo.path / ".cursor").mkdir(exist_ok=True)
    (repo.path / ".cursor" / "mcp.json").write_text("[]\n", encoding="utf-8")

    doctor = run(env, repo.path, "doctor", rc=1).stdout

    assert f"[FAIL] {repo.memory} is a directory" in doctor
    assert "holds a JSON list, not an object" in doctor and "not valid JSON" not in doctor
    assert "pre-commit" in doctor  # the checks after it ran


@pytest.mark.parametrize("how", ["env", "args"])
def test_doctor_warns_when_a_config_keeps_the_memory_in_another_folder(tmp_path, env, how):
    """A cloned project's MCP entry of ours may send the server's memory elsewhere (the project
    environment variable, or --project in its args): doctor says where, as a cloned repository
    may point it at any folder; the project itself named so is no warning."""
    repo = make_repo(tmp_path, env, wired=False)
    run(env, repo.path, "init", "--client", "claude", "--no-hooks")
    config = json.loads((repo.path / ".mcp.json").read_text(encoding="utf-8"))
    entry = config["mcpServers"]["sentinel-memory"]
    elsewhere = str(tmp_path / "elsewhere")
    for folder, warned in ((elsewhere, True), (str(repo.path), False), (".", False), ("${workspaceFolder}", False),
                           ("${userHome}", True), ("${workspaceFolder}/..", True)):
        if how == "env":
            entry["env"] = {project.ENV_VAR: folder}
        else:
            entry["args"] = ["--project", folder]
        (repo.path / ".mcp.json").write_text(json.dumps(config), encoding="utf-8")

        doctor = run(env, repo.path, "doctor", rc=None).stdout

        assert (f"has the server keep its memory in {folder}, not in this project" in doctor) is warned, doctor


def test_doctor_takes_the_clients_own_word_for_the_project_folder_as_this_project(tmp_path, env):
    """Cursor's and VS Code's entries name the project as ${workspaceFolder} (init writes it): no
    warning that the memory is kept elsewhere."""
    repo = make_repo(tmp_path, env, wired=False)
    run(env, repo.path, "init", "--client", "cursor", "--client", "vscode", "--no-hooks")

    doctor = run(env, repo.path, "doctor", rc=None).stdout

    assert "${workspaceFolder}" in (repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8")
    assert "keep its memory in" not in doctor, doctor


def test_doctor_says_one_record_not_one_records(tmp_path, env):
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "t", "m", "l")
    assert f"memory file {repo.memory}: 1 record\n" in run(env, repo.path, "doctor").stdout


# ---------------------------------------------------------------------------------------------
# 2-4. init over configs people edited; Codex and Gemini


FOREIGN = {
    Path(".cursor") / "mcp.json": ("mcpServers", {"env": {"LOG_LEVEL": "debug"}, "envFile": ".env.local", "disabled": False}),
    Path(".vscode") / "mcp.json": ("servers", {"env": {"A": "1"}, "dev": {"watch": "core/**/*.py"}}),
    Path(".mcp.json"): ("mcpServers", {"env": {"SENTINEL_X": "y"}, "type": "stdio"}),
    Path(".gemini") / "settings.json": ("mcpServers", {"timeout": 30000, "trust": False, "excludeTools": ["compact_memory"]}),
}


def test_init_twice_keeps_the_users_keys_other_servers_and_formatting(tmp_path, env):
    """Each JSON config holds our entry with keys of the user's (env, envFile, disabled, dev, type,
    timeout, trust=false, excludeTools), another server and settings of its own, indented with
    four spaces (one with tabs and CRLF). init refreshes command and args and keeps all that; a
    second run changes no byte."""
    repo = make_repo(tmp_path, env, wired=False)
    for i, (relative, (key, own)) in enumerate(FOREIGN.items()):
        path = repo.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        config = {"theme": "dark", key: {"other": {"command": "node", "args": ["other.js"]},
                                          "sentinel-memory": {"command": "/old/python", "args": ["/old/server.py"], **own}}}
        text = json.dumps(config, indent="\t" if i == 1 else 4) + "\n"
        path.write_bytes(text.replace("\n", "\r\n").encode() if i == 1 else text.encode())

    first = run(env, repo.path, "init", "--client", "cursor", "--client", "vscode", "--client", "claude",
                "--client", "gemini")

    for i, (relative, (key, own)) in enumerate(FOREIGN.items()):
        raw = (repo.path / relative).read_bytes()
        config = json.loads(raw)
        ours = config[key]["sentinel-memory"]
        assert config["theme"] == "dark" and config[key]["other"] == {"command": "node", "args": ["other.js"]}
        assert ours["command"] == "sentinel-memory" and "/old/server.py" not in ours["args"]
        assert {k: ours[k] for k in own} == own, relative
        assert list(config[key]) == ["other", "sentinel-memory"]
        if i == 1:
            assert b"\r\n\t\"servers\"" in raw and b"\n" not in raw.replace(b"\r\n", b"")
        else:
            assert b'\n    "theme": "dark"' in raw
    assert "kept your env, envFile, disabled" in first.stdout
    gemini = json.loads((repo.path / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]
    assert "cwd" not in gemini["sentinel-memory"] and gemini["sentinel-memory"]["trust"] is False
    before = {p: (repo.path / p).read_bytes() for p in FOREIGN}

    second = run(env, repo.path, "init", "--client", "cursor", "--client", "vscode", "--client", "claude",
                 "--client", "gemini")

    assert {p: (repo.path / p).read_bytes() for p in FOREIGN} == before
    assert all(line.startswith("unchanged") for line in second.stdout.splitlines() if line.strip()), second.stdout


def test_init_gemini_writes_trusted_settings_and_doctor_checks_them(tmp_path, env):
    """A new .gemini/settings.json: our entry, portable (no cwd: Gemini CLI starts the server in
    the folder it runs in), with trust; doctor finds the command on PATH, and warns once trust is
    turned off."""
    repo = make_repo(tmp_path, env, wired=False)

    run(env, repo.path, "init", "--client", "gemini")

    path = repo.path / ".gemini" / "settings.json"
    entry = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]
    assert entry == {"command": "sentinel-memory", "args": [], "trust": True}
    doctor = run(env, repo.path, "doctor").stdout
    assert f"{path} starts sentinel-memory (" in doctor and "does not trust" not in doctor
    entry["trust"] = False
    path.write_text(json.dumps({"mcpServers": {"sentinel-memory": entry}}, indent=2), encoding="utf-8")
    assert "does not trust the server" in run(env, repo.path, "doctor").stdout


def test_init_codex_approves_log_memory_once_and_keeps_the_users_choice(tmp_path, env):
    """init --client codex adds [mcp_servers.sentinel-memory.tools.log_memory] approval_mode =
    "approve" (what Codex reads per tool); the file parses as TOML; a rerun changes nothing; a
    user's "prompt" survives a rerun (doctor warns about it), as do the user's other tables."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text('model = "o4"\n\n[mcp_servers.other]\ncommand = "node"\n', encoding="utf-8")

    first = run(env, repo.path, "init", "--client", "codex")

    config = tomllib.loads(path.read_text(encoding="utf-8"))
    ours = config["mcp_servers"]["sentinel-memory"]
    assert ours["tools"]["log_memory"] == {"approval_mode": "approve"}
    assert ours["args"] == [] and config["mcp_servers"]["other"]["command"] == "node"
    assert 'approval_mode = "approve"' in first.stdout
    text = path.read_text(encoding="utf-8")
    assert run(env, repo.path, "init", "--client", "codex").stdout.startswith(f"unchanged {path}")
    assert path.read_text(encoding="utf-8") == text
    assert "does not approve" not in run(env, repo.path, "doctor").stdout

    path.write_text(text.replace('approval_mode = "approve"', 'approval_mode = "prompt"\n# mine'), encoding="utf-8")
    edited = path.read_text(encoding="utf-8")
    assert run(env, repo.path, "init", "--client", "codex").stdout.startswith(f"unchanged {path}")
    assert path.read_text(encoding="utf-8") == edited
    doctor = run(env, repo.path, "doctor").stdout
    assert "does not approve log_memory (approval_mode is prompt)" in doctor
    assert 'set it to "approve" if saves need not ask' in doctor and "run init" not in doctor.split("prompt)")[1].split("\n")[0]

    path.write_text('[mcp_servers.sentinel-memory]\ncommand = "x"\nargs = []\ntools = { other = { approval_mode = "auto" } }\n',
                    encoding="utf-8")
    odd = run(env, repo.path, "init", "--client", "codex").stdout
    assert "add [mcp_servers.sentinel-memory.tools.log_memory]" in odd
    tomllib.loads(path.read_text(encoding="utf-8"))  # still valid

    # tools not a table: init goes on without the approval (before, a traceback) and says what to add
    path.write_text('[mcp_servers.sentinel-memory]\ncommand = "x"\ntools = 5\n', encoding="utf-8")
    result = subprocess.run([sys.executable, str(SERVER), "init", "--client", "codex", "--no-hooks"], cwd=repo.path,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "add [mcp_servers.sentinel-memory.tools.log_memory]" in result.stdout
    assert tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]["sentinel-memory"]["tools"] == 5


# ---------------------------------------------------------------------------------------------
# 5. the refusal names the fix for the client at hand


def test_the_fix_named_is_the_clients_own():
    """Claude Code is told about `claude mcp add`, Gemini about .gemini/settings.json, an unknown
    client about each; an unexpanded ${workspaceFolder} is never answered with ${workspaceFolder}."""
    root = project.ProjectRoot(Path.home(), "cwd")
    claude = project.refusal(root, "claude-code")
    assert "claude mcp add --scope project" in claude and ".cursor/mcp.json" not in claude
    assert ".gemini/settings.json" in project.refusal(root, "gemini-cli-mcp-client")
    assert ".vscode/mcp.json" in project.refusal(root, "Visual Studio Code") and ".cursor" not in project.refusal(root, "Visual Studio Code")
    every = project.refusal(root, None)
    assert all(hint in every for hint in (".cursor/mcp.json", ".vscode/mcp.json", "claude mcp add", ".codex/config.toml",
                                          ".gemini/settings.json", "windsurf/mcp_config.json"))
    with pytest.raises(project.ProjectRootError) as raised:
        project.resolve("${workspaceFolder}", environ={}, client="windsurf")
    assert "absolute path" in str(raised.value) and str(raised.value).count("${workspaceFolder}") == 1


@pytest.mark.anyio
async def test_a_server_started_in_home_tells_claude_code_its_fix(forked_connect, home):
    """Started in the home directory by a client that calls itself claude-code and offers no
    roots, the server refuses and names Claude Code's fix, not Cursor's."""
    from mcp_types import Implementation

    async with forked_connect(home, client_info=Implementation(name="claude-code", version="2.0")) as mcp:
        text = await mcp.error("log_memory", topic="t", missing_context="m", lesson="l")

    assert "Nothing was read or saved" in text and "claude mcp add --scope project" in text
    assert ".cursor/mcp.json" not in text
    assert not (home / ".context").exists()


def test_the_doctor_hint_names_every_client(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    out = run(env, repo.path, "doctor").stdout
    assert "--client cursor|vscode|claude|codex|gemini|windsurf" in out
