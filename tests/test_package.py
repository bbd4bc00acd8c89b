"""The package: a wheel built from this checkout and installed into a fresh venv gives a working
`sentinel-memory` executable — the commands, `init` writing configs and git drivers that start
that executable, git's diff through it, and the MCP server over real stdio.

How it stays offline and fast: the wheel is built from a copy of the sources in tmp_path (so no
build/ or egg-info lands in the checkout), without build isolation when this interpreter's
setuptools can build wheels by itself (requirements-dev.in brings one that can), else with pip's
usual isolated build (which needs setuptools from the package index pip is configured with; the
test is skipped, saying so, when none is reachable). The venv is made with `python -m venv --without-pip`, and a .pth file in its
site-packages appends the test interpreter's own site-packages, so the dependencies (fastmcp,
filelock) come from there instead of the network, after the venv's own packages: `core` and
`server` are imported from the installed wheel, never from this checkout (the test checks). The
wheel goes in with this interpreter's pip (`pip --python VENV install --no-deps --no-index`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
from filelock import FileLock

from gitrepos import env, make_repo  # noqa: F401  (env is a fixture)

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["pyproject.toml", "MANIFEST.in", "README.md", "server.py", "requirements.txt", "sentinel_memory"]
BIN = "Scripts" if os.name == "nt" else "bin"


def _can_build_without_isolation() -> bool:
    import setuptools

    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    return importlib.util.find_spec("wheel") is not None or (major, minor) >= (70, 1)


@pytest.fixture(scope="session")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; returns its `sentinel-memory` executable. Built once
    per run: pytest-xdist's workers share the base temporary folder's parent, and the first one to
    take the lock builds while the others wait and reuse it."""
    return _once_per_run(tmp_path_factory, "package", _build_and_install)


@pytest.fixture(scope="session")
def editable(tmp_path_factory) -> Path:
    """A copy of the checkout installed editable into a fresh venv (`_editable_install`); returns
    its `sentinel-memory` executable. Made once per run as `installed` is: the tests run it and
    link it, and none changes the venv or the clone."""
    return _once_per_run(tmp_path_factory, "editable", _editable_install)


def _once_per_run(tmp_path_factory, name: str, build) -> Path:
    """build(folder) once per run, in this process or, under pytest-xdist, by the first worker to
    take the lock; the others wait and reuse what it returned."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent
    done = shared / f"{name}.done"
    with FileLock(str(shared / f"{name}.lock")):
        if not done.is_file():
            tmp = shared / name
            shutil.rmtree(tmp, ignore_errors=True)  # what a worker that failed left
            tmp.mkdir()
            done.write_text(str(build(tmp)), encoding="utf-8")
        return Path(done.read_text(encoding="utf-8"))


def _build_and_install(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    isolation = ["--no-build-isolation"] if _can_build_without_isolation() else []
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-w", str(tmp / "dist"),
                            str(src)], capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and not isolation and "setuptools" in build.stdout + build.stderr \
            and any(s in build.stdout + build.stderr for s in ("No matching distribution", "Could not find a version")):
        pytest.skip("building the wheel needs setuptools from a package index, and none is reachable")
    assert build.returncode == 0, build.stdout + build.stderr
    wheel = next((tmp / "dist").glob("sentinel_memory-*.whl"))

    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-runner-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                              "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stdout + install.stderr
    where = subprocess.run([str(python), "-c", "import sentinel_memory; print(sentinel_memory.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp).stdout.split()
    assert all(Path(p).is_relative_to(Path(site)) for p in where), where
    # One top-level name in site-packages: nothing called core or server to collide with.
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist() if ".dist-info/" not in name}
        shipped = set(archive.namelist())
    assert tops == {"sentinel_memory"}, tops
    # Every module of the checkout is installed: a room left out of pyproject.toml's packages
    # installs fine and fails when a command first imports it.
    modules = {p.relative_to(src).as_posix() for p in (src / "sentinel_memory").rglob("*.py")}
    assert modules <= shipped, f"not in the wheel (pyproject.toml's packages): {sorted(modules - shipped)}"
    executable = venv / BIN / ("sentinel-memory.exe" if os.name == "nt" else "sentinel-memory")
    assert executable.is_file()
    return executable


def sm(executable: Path, env: dict, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run([str(executable), *args], capture_output=True, text=True, encoding="utf-8", env=env,
                            timeout=120, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_the_installed_executable_answers_help_and_the_commands(installed, tmp_path, env):
    """`sentinel-memory --help` lists the commands under its own name; log then search work on a project."""
    project = tmp_path / "app"
    project.mkdir()

    help_text = sm(installed, env, "--help")
    assert help_text.returncode == 0 and help_text.stdout.startswith("usage: sentinel-memory")
    assert "search" in help_text.stdout and "fold" in help_text.stdout

    saved = sm(installed, env, "log", "--project", str(project), "--topic", "payment", "--missing-context",
               "VAT differs by country", "--lesson", "read the rate table first", "--json")
    assert saved.returncode == 0, saved.stderr
    found = sm(installed, env, "search", "VAT", "--json", cwd=project)
    assert found.returncode == 0 and [r["id"] for r in json.loads(found.stdout)] == [json.loads(saved.stdout)["id"]]


def test_init_from_the_installed_package_points_configs_and_git_at_the_executable(installed, tmp_path, env):
    """init writes client configs that start `sentinel-memory` by name (the same bytes on every
    machine; this venv's bin on PATH finds it), wires git's drivers to the executable's absolute
    path (local config), git diff shows readable blocks through it, and doctor passes."""
    repo = make_repo(tmp_path, env, wired=False)
    env = {**env, "PATH": str(installed.parent) + os.pathsep + env["PATH"]}

    result = sm(installed, env, "init", "--client", "cursor", "--client", "codex", "--client", "gemini", cwd=repo.path)

    assert result.returncode == 0, result.stdout + result.stderr
    cursor = json.loads((repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))["mcpServers"]["sentinel-memory"]
    assert cursor == {"command": "sentinel-memory", "args": ["--project", "${workspaceFolder}"]}
    gemini = json.loads((repo.path / ".gemini" / "settings.json").read_text(encoding="utf-8"))["mcpServers"]
    assert gemini["sentinel-memory"]["command"] == "sentinel-memory" and gemini["sentinel-memory"]["args"] == []
    assert 'command = "sentinel-memory"' in (repo.path / ".codex" / "config.toml").read_text(encoding="utf-8")
    assert (repo.path / ".cursorrules").read_text(encoding="utf-8").count("search_memory") >= 1
    driver = repo.git("config", "merge.sentinel-memory.driver").stdout
    assert driver.startswith(f"'{installed}' merge-driver -- %O %A %B %P")
    assert "server.py" not in driver.split(";")[0]

    sm(installed, env, "log", "--topic", "db", "--missing-context", "pool", "--lesson", "10 connections", cwd=repo.path)
    repo.git("add", "-A")
    staged = repo.git("diff", "--staged", "--", ".context/memory_log.jsonl").stdout
    assert "+[db] log " in staged and "+  lesson: 10 connections" in staged, staged  # the textconv ran
    doctor = sm(installed, env, "doctor", cwd=repo.path)
    assert doctor.returncode == 0 and "FAIL" not in doctor.stdout and "warn" not in doctor.stdout, doctor.stdout
    assert f"the git merge driver calls {installed}\n" in doctor.stdout
    assert f".cursor/mcp.json starts sentinel-memory --project ${{workspaceFolder}} ({installed})" in doctor.stdout


@pytest.mark.anyio
async def test_the_installed_executable_serves_mcp_over_stdio(installed, tmp_path, env):
    """With no arguments the executable is the MCP server: the official client lists the three
    tools and a log_memory then search_memory round trip uses the project it was started in."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    repo = make_repo(tmp_path, env, wired=False)
    sub = repo.path / "src"
    sub.mkdir()
    params = StdioServerParameters(command=str(installed), args=[], cwd=str(sub),
                                   env={k: env[k] for k in ("HOME", "GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME", "PATH")})
    with open(tmp_path / "server.stderr", "w", encoding="utf-8") as errlog, anyio.fail_after(120):
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                saved = await session.call_tool("log_memory", {"topic": "api", "missing_context": "rate limit",
                                                               "lesson": "back off after 429"})
                found = await session.call_tool("search_memory", {"query": "429"})

    assert tools == {"search_memory", "log_memory", "compact_memory"}
    assert not saved.is_error and not found.is_error
    assert str(repo.path / ".context" / "memory_log.jsonl") in found.content[0].text
    assert "back off after 429" in found.content[0].text
    assert f"'{installed}' merge-driver" in repo.git("config", "merge.sentinel-memory.driver").stdout


def _second_install(installed: Path, folder: Path) -> Path:
    """The same wheel installed into another venv in another folder: a teammate's pipx install."""
    wheel = next((installed.parents[2] / "dist").glob("sentinel_memory-*.whl"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / BIN / ("python.exe" if os.name == "nt" else "python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-runner-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return folder / BIN / ("sentinel-memory.exe" if os.name == "nt" else "sentinel-memory")


def test_two_package_installs_in_two_clones_leave_the_second_clean(installed, tmp_path, env):
    """Ann's pipx-style install and Ben's, in different folders, each on its owner's PATH: Ann's
    init is committed, Ben's init in his clone changes nothing git tracks, and his doctor passes
    with his own executable."""
    from gitrepos import clone

    ben_exe = _second_install(installed, tmp_path / "ben-pipx" / "venv")
    args = ["init", "--client", "cursor", "--client", "vscode", "--client", "claude", "--client", "codex",
            "--client", "gemini"]
    origin = make_repo(tmp_path, env, name="ann-app", wired=False)
    ann = {**env, "PATH": str(installed.parent) + os.pathsep + env["PATH"]}
    assert sm(installed, ann, *args, cwd=origin.path).returncode == 0
    origin.commit("Add Sentinel-Memory")
    ben_repo = clone(origin, tmp_path, "ben-app", wired=False)
    ben = {**env, "PATH": str(ben_exe.parent) + os.pathsep + env["PATH"]}

    second = sm(ben_exe, ben, *args, cwd=ben_repo.path)

    assert second.returncode == 0, second.stdout + second.stderr
    assert ben_repo.git("status", "--porcelain").stdout == "", second.stdout
    assert str(ben_exe) in ben_repo.git("config", "merge.sentinel-memory.driver").stdout
    doctor = sm(ben_exe, ben, "doctor", cwd=ben_repo.path)
    assert doctor.returncode == 0 and f".mcp.json starts sentinel-memory ({ben_exe})" in doctor.stdout, doctor.stdout


def _editable_install(tmp_path: Path) -> Path:
    """A copy of the checkout installed editable into a fresh venv, as `pipx install --editable
    CLONE` (the README's step 0) does; returns the venv's `sentinel-memory` executable."""
    src = tmp_path / "clone"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-runner-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    isolation = _can_build_without_isolation()
    offline = ["--no-build-isolation", "--no-index"] if isolation else []  # else pip fetches setuptools to build
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", *offline,
                           "--editable", str(src)], capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and not isolation and "setuptools" in done.stdout + done.stderr:
        pytest.skip("an editable install needs setuptools from a package index, and none is reachable")
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / BIN / ("sentinel-memory.exe" if os.name == "nt" else "sentinel-memory")


def test_an_editable_install_of_a_clone_names_itself_sentinel_memory(editable, tmp_path, env):
    """`pipx install --editable CLONE` (the README's step 0): the executable's usage lines and hints
    name `sentinel-memory`, the command the person ran, not the clone's server.py; --version works."""
    executable = editable
    repo = make_repo(tmp_path, env)

    version = sm(executable, env, "--version")
    typo = subprocess.run([str(executable), "--project", str(repo.path), "serch", "x"], capture_output=True, text=True,
                          env=env, timeout=120)
    nothing = sm(executable, env, "--project", str(repo.path), "show", "ffff")

    assert version.returncode == 0 and version.stdout.startswith("sentinel-memory ")
    assert typo.returncode == 2 and "usage: sentinel-memory" in typo.stderr and "`sentinel-memory --help`" in typo.stderr
    assert "server.py" not in typo.stderr + nothing.stdout + nothing.stderr, nothing.stdout + nothing.stderr


def test_the_pre_commit_check_of_an_editable_install_names_the_command_people_type(editable, tmp_path, env):
    """With an editable install (pipx links its executable onto PATH), git's pre-commit check runs
    the clone's server.py; the refusal it prints names `sentinel-memory scan --redact`, what the
    person types, not `python server.py`, which is no command in the project."""
    executable = editable
    linked = tmp_path / "local-bin"  # ~/.local/bin, where pipx links the executable
    linked.mkdir()
    (linked / executable.name).symlink_to(executable)
    env = {**env, "PATH": f"{linked}{os.pathsep}{env['PATH']}"}
    repo = make_repo(tmp_path, env, wired=False)
    assert sm(linked / executable.name, env, "init", cwd=repo.path).returncode == 0
    assert "server.py" in (repo.path / ".git" / "hooks" / "pre-commit").read_text(encoding="utf-8")
    sm(linked / executable.name, env, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l", cwd=repo.path)
    lines = repo.memory.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["lesson"] = "use ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"  # the shape of a token, not one
    repo.memory.write_text(json.dumps(record) + "\n", encoding="utf-8")
    repo.git("add", "-A")

    refused = repo.git("commit", "-q", "-m", "leaky", check=False)

    assert refused.returncode != 0 and "Run `sentinel-memory scan --redact`" in refused.stderr, refused.stderr
    assert "python server.py" not in refused.stderr
