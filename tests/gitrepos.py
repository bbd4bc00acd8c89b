"""Real git repositories for the tests of team sharing: an isolated git environment (the `env`
fixture), repositories and clones wired the way a user wires them (`python server.py --project
REPO init`), and records written with explicit timestamps where "the newer wins" matters.

git runs with GIT_CONFIG_NOSYSTEM=1 and a private HOME, so no system or global git config takes part.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server.py"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import forkrun  # noqa: E402
from sentinel_memory.record import contextdir  # noqa: E402
from sentinel_memory.record import store  # noqa: E402
from sentinel_memory.tools import answers  # noqa: E402
from sentinel_memory.record.snapshot import parse  # noqa: E402
from sentinel_memory.record.records import Entry, record_id  # noqa: E402

MARKERS = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")
T0, T1, T2, T3 = (f"2026-0{m}-01T00:00:00+00:00" for m in (1, 2, 3, 4))
MEMORY = ".context/memory_log.jsonl"


@pytest.fixture
def env(tmp_path) -> dict:
    """The environment for git and server.py: no system config, a private HOME, no inherited GIT_*."""
    home = tmp_path / "git-home"
    home.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out["PATH"] = str(launcher(tmp_path / "bin")) + os.pathsep + out.get("PATH", "")
    out.update(
        HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", GIT_PAGER="cat",
        PYTHONUTF8="1", LC_ALL="C.UTF-8", LANG="C.UTF-8",
    )
    return out


def launcher(folder: Path, script: Path = SERVER) -> Path:
    """A folder holding a `sentinel-memory` command that runs this checkout, as `pipx install
    --editable` would give a teammate: the committed client configs start it by that name."""
    folder.mkdir(parents=True, exist_ok=True)
    command = folder / "sentinel-memory"
    command.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n', encoding="utf-8")
    command.chmod(0o755)
    return folder


def server(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`python server.py ARGS` as a separate process, forked from an interpreter that has made the
    imports (tests/forkrun.py); returns the completed process (text)."""
    return forkrun.run(list(args), env=env, text=True, encoding="utf-8", timeout=120)


class Repo:
    def __init__(self, path: Path, env: dict):
        self.path, self.env = path, env

    @property
    def memory(self) -> Path:
        return self.path / ".context" / "memory_log.jsonl"

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(["git", "-C", str(self.path), *args], env=self.env, capture_output=True,
                                text=True, encoding="utf-8", errors="replace", timeout=120)
        if check and result.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def identity(self, name: str = "Tester") -> None:
        self.git("config", "user.name", name)
        self.git("config", "user.email", f"{name.lower()}@example.com")
        self.git("config", "commit.gpgsign", "false")

    def init_driver(self) -> subprocess.CompletedProcess:
        """`server.py init --no-hooks`: the drivers, the configs, no client hooks (a `doctor` in a
        repository with hooks runs each one three times; tests/test_hooks.py and the tests that
        run init themselves cover them)."""
        result = server(self.env, "--project", str(self.path), "init", "--no-hooks")
        assert result.returncode == 0, result.stderr
        return result

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--no-verify", "-m", message)

    def data(self) -> bytes:
        return self.memory.read_bytes()

    def show(self, rev: str) -> bytes:
        return subprocess.run(["git", "-C", str(self.path), "show", f"{rev}:{MEMORY}"], env=self.env,
                              capture_output=True, check=True).stdout


def build_repo(path: Path, env: dict, wired: bool = True) -> Repo:
    """A new repository at `path` on branch main with .context/ prepared; `wired` runs server.py
    init (Repo.init_driver)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True, capture_output=True)
    repo = Repo(path.resolve(), env)
    repo.identity()
    if wired:
        repo.init_driver()
    else:
        contextdir.prepare(repo.path / ".context")
    return repo


# Repositories made once per test process and copied (make_repo); removed when the process ends.
TEMPLATES = Path(tempfile.mkdtemp(prefix="sm-repo-templates-"))
atexit.register(shutil.rmtree, TEMPLATES, ignore_errors=True)


def template_key(env: dict, wired: bool) -> str | None:
    """What a new repository's bytes depend on: the environment, less the test's own folders (its
    HOME and the folders beside it, such as the launcher's on PATH) and the test's name; None when
    git would read a global config the test wrote (the repository is then built afresh)."""
    home = Path(env.get("HOME", ""))
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    if not env.get("HOME") or (home / ".gitconfig").exists() or (xdg / "git").exists():
        return None
    own = str(home.parent)
    # PYTEST_CURRENT_TEST names the test (the env fixture copies os.environ): no git or init reads it.
    kept = {k: v for k, v in env.items()
            if k not in ("HOME", "USERPROFILE", "XDG_CONFIG_HOME", "PATH", "PYTEST_CURRENT_TEST")}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(own)]
    text = json.dumps([wired, sys.executable, str(SERVER), path, sorted(kept.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_repo(tmp_path: Path, env: dict, name: str = "repo", wired: bool = True) -> Repo:
    """A new repository on branch main with .context/ prepared; `wired` runs server.py init.

    The first one of a kind in a test process is built (git init, the identity, init); the next
    ones copy it byte for byte, as nothing in it names its own folder
    (test_git.py::test_a_copied_repository_is_byte_for_byte_one_built_in_its_place)."""
    path = tmp_path / name
    key = template_key(env, wired)
    if key is None:
        return build_repo(path, env, wired)
    template = TEMPLATES / key
    if not template.exists():
        build_repo(TEMPLATES / "building", env, wired)
        (TEMPLATES / "building").rename(template)
    shutil.copytree(template, path, symlinks=True)
    return Repo(path.resolve(), env)


def clone(origin: Repo, tmp_path: Path, name: str, wired: bool) -> Repo:
    path = tmp_path / name
    subprocess.run(["git", "clone", "-q", str(origin.path), str(path)], env=origin.env, check=True, capture_output=True)
    repo = Repo(path.resolve(), origin.env)
    repo.identity(name.capitalize())
    if wired:
        repo.init_driver()
    return repo


def logged(path: Path, topic: str, missing_context: str, lesson: str, **kwargs) -> str:
    """tools.log, returning the record's id."""
    text = answers.log(path, topic, missing_context, lesson, **kwargs)
    return re.search(r"record ([0-9a-f]{16})", text).group(1)


def rec(topic: str, missing_context: str, lesson: str, created: str = T0, updated: str | None = None,
        ask: str = "", **extra) -> dict:
    """A log record with explicit timestamps (its id computed as core computes it)."""
    meta = {"created": created, **({"updated": updated} if updated else {})}
    return {"id": record_id("log", topic, missing_context, lesson), "type": "log", "topic": topic,
            "missing_context": missing_context, "lesson": lesson, "ask_next_time": ask, "meta": meta, **extra}


def put(path: Path, *records: dict) -> None:
    """Upsert whole records (explicit meta) through the store's locked atomic write."""
    store.update(path, lambda snap: snap.edited(put=[Entry.of(r) for r in records]))


def drop(path: Path, *ids: str) -> None:
    store.update(path, lambda snap: snap.edited(drop=ids))


def mc_after(topic: str, stem: str, floor: str) -> str:
    """A missing_context whose log id sorts after `floor`: such records all land at the end of the
    sorted file, the one spot where two plain-text insertions are sure to conflict."""
    for i in range(10_000):
        candidate = f"{stem} #{i}"
        if record_id("log", topic, candidate, "") > floor:
            return candidate
    raise AssertionError("no id found")


def last_id(path: Path) -> str:
    return max(parse(path.read_bytes()).records)


def lines_of(data: bytes) -> list[dict]:
    """The file's records, asserting it is clean: no markers, every line a record, sorted, unique ids."""
    text = data.decode("utf-8")
    assert not any(line.startswith(MARKERS) for line in text.splitlines()), text
    assert text == "" or text.endswith("\n")
    records = [json.loads(line) for line in text.splitlines()]
    ids = [r["id"] for r in records]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    return records


def by_id(data: bytes) -> dict[str, dict]:
    return {r["id"]: r for r in lines_of(data)}


def text_merge_conflicts(repo: Repo, base: bytes, ours: bytes, theirs: bytes) -> bool:
    """Whether git's plain line-based merge of these three versions would conflict."""
    files = []
    for name, data in (("o", ours), ("b", base), ("t", theirs)):
        p = repo.path.parent / f"textmerge-{name}"
        p.write_bytes(data)
        files.append(str(p))
    result = subprocess.run(["git", "merge-file", "-p", *files], env=repo.env, capture_output=True)
    return result.returncode != 0
