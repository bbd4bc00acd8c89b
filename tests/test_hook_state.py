"""The hook's state folder (hooks/state.py): its sweep removes only files the hook itself made, in a
folder only this user can write, and looks at a bounded part of the folder each time, so that a
new session's first hook does not wait on a large folder; successive sweeps still reach every old
file, whatever order the folder lists them in (tmpfs lists the newest first).

Real files in real folders; the hook runs as a real process with its event on stdin
(tests/test_hooks.py). Nothing is mocked and no assertion depends on the wall clock: the sweep's
bound is checked as a count of the files one sweep removes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import forkrun
from gitrepos import env, logged, make_repo  # noqa: F401 (env: a fixture)
from sentinel_memory.hooks import state
from sentinel_memory.record import disk

LESSON = "Hash the session token with hmac before comparing it in verify_token"
DAY = 24 * 3600
UNBOUNDED = {"SENTINEL_MEMORY_HOOK_TIME": "60"}  # as in test_hooks.py: no test depends on the wall clock


@pytest.fixture
def repo(tmp_path, env):  # noqa: F811
    """A committed project with src/auth.py and a memory holding one lesson that cites it."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "auth.py").write_text("def verify_token(t):\n    return t\n", encoding="utf-8")
    logged(repo.memory, "auth", "the token check was not described", LESSON, files=["src/auth.py"])
    repo.commit("start")
    return repo


def prompt_hook(repo, session: str, folder: Path) -> str:
    """The Claude Code prompt hook of a new session, its state in `folder`: what it printed."""
    data = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": session, "cwd": str(repo.path),
                       "transcript_path": "/nonexistent", "prompt": "Fix src/auth.py please"}).encode()
    environment = {**repo.env, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"], **UNBOUNDED,
                   state.ENV: str(folder)}
    result = forkrun.run(["hook", "--client", "claude"], input=data, cwd=repo.path, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode("utf-8")


def digest(n: int) -> str:
    return hashlib.sha256(str(n).encode()).hexdigest()[:40]


def aged(path: Path, age: float, data: bytes = b"{}") -> Path:
    if not path.exists():
        path.write_bytes(data)
    then = path.stat().st_mtime - age
    os.utime(path, (then, then))
    return path


def due_again(folder: Path) -> None:
    """As if the last whole pass over the folder ended over an hour ago (SWEEP_EVERY), so that the
    next new session sweeps even where a pass ended early (past SWEEP_TIME on a busy machine)."""
    marker = folder / state.SWEPT
    if marker.exists() and not marker.read_bytes():
        aged(marker, 2 * state.SWEEP_EVERY)


def leftover_temporary(target: Path) -> Path:
    """The temporary file of an atomic write (record/disk.py) that was never committed, as a write
    killed part way leaves it."""
    before = set(target.parent.iterdir())
    disk.Staged(str(target), b"{}", durable=False)  # neither committed nor discarded
    (made,) = set(target.parent.iterdir()) - before
    return made


def test_a_folder_named_for_the_state_keeps_another_programs_files_and_loses_only_the_hooks_old_ones(repo, tmp_path):
    """SENTINEL_MEMORY_HOOK_STATE may name a folder of another program (a cloned project's
    .claude/settings.json "env" reaches the hook): its files stay, however old and whatever their
    extension; the hook's own old state files, locks, temporaries and index copies go."""
    folder = tmp_path / "dot-docker"
    folder.mkdir(mode=0o700)
    theirs = [aged(folder / name, age) for name, age in {
        "config.json": 3 * DAY, "config.json.lock": 3 * DAY, "settings.tmp": 3 * DAY, "cache.pickle": 30 * DAY,
        "index-cache.pickle": 30 * DAY, "old.json": 3 * DAY, f"{digest(1).upper()}.json": 3 * DAY,
        f"{digest(2)}0.json": 3 * DAY, f"x{digest(3)}.json": 3 * DAY, f"{digest(4)}.json.bak": 3 * DAY,
        f".config.json.{'ab' * 4}.tmp": 3 * DAY, "notes.txt": 30 * DAY,
    }.items()]
    ours_old = [aged(folder / f"{digest(5)}.json", 2 * DAY), aged(folder / f"{digest(5)}.json.lock", 2 * DAY),
                aged(leftover_temporary(folder / f"{digest(6)}.json"), 2 * DAY),
                aged(folder / f"index-{digest(7)}.pickle", 8 * DAY),
                aged(folder / f"index-{digest(7)}.pickle.lock", 8 * DAY),
                aged(leftover_temporary(folder / f"index-{digest(8)}.pickle"), 2 * DAY)]
    ours_recent = [aged(folder / f"{digest(9)}.json", 3600), aged(folder / f"index-{digest(10)}.pickle", 2 * DAY)]
    before = {path: path.read_bytes() for path in theirs}

    assert LESSON in prompt_hook(repo, "new", folder)
    assert {path: path.read_bytes() for path in theirs if path.exists()} == before
    assert [path.name for path in ours_old if path.exists()] == []
    assert all(path.exists() for path in ours_recent)


def test_a_state_folder_others_can_write_is_not_swept(tmp_path):
    """A folder another user can write in is not the hook's private folder: nothing is removed there."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    old = aged(folder / f"{digest(1)}.json", 2 * DAY)
    state.save(str(folder / f"{digest(2)}.json"), state.Session(new=True))
    assert old.exists()


def test_one_sweep_looks_at_a_bounded_part_of_a_large_folder(repo, tmp_path):
    """With far more old state files than one sweep looks at, a new session's first hook removes
    SWEEP_LOOK of them at most, and answers; the next new sessions' hooks go on from there (a sweep
    that stopped part way is due again at once) until every old file has gone."""
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    many = 3 * state.SWEEP_LOOK
    old = {aged(folder / f"{digest(n)}.json", 2 * DAY) for n in range(many)}

    assert LESSON in prompt_hook(repo, "first", folder)
    gone = {path for path in old if not path.exists()}
    assert 0 < len(gone) <= state.SWEEP_LOOK
    sessions = 0
    while any(path.exists() for path in old):
        sessions += 1
        assert sessions <= 30, "the sweeps never reached every old file"
        due_again(folder)
        assert LESSON in prompt_hook(repo, f"next-{sessions}", folder)


def tmpfs_folder():
    """A folder on tmpfs (which lists the newest file first), or None where there is none."""
    if not os.path.isdir("/dev/shm") or not os.access("/dev/shm", os.W_OK):
        return None
    return tempfile.mkdtemp(prefix="sentinel-sweep-", dir="/dev/shm")


@pytest.mark.parametrize("where", ["tmp_path", "tmpfs"])
def test_successive_sweeps_reach_every_old_file_whatever_order_the_folder_lists_them_in(tmp_path, where):
    """Old state files among many recent ones (made after them: listed last on tmpfs, anywhere on
    other filesystems) all go after a few sweeps, each of them bounded, and every recent file stays."""
    base = str(tmp_path) if where == "tmp_path" else tmpfs_folder()
    if base is None:
        pytest.skip("no tmpfs at /dev/shm")
    folder = Path(base) / "state"
    try:
        folder.mkdir(mode=0o700)
        old = [aged(folder / f"{digest(n)}.json", 2 * DAY) for n in range(20)]
        recent = [aged(folder / f"{digest(n)}.json", 3600) for n in range(20, 20 + 3 * state.SWEEP_LOOK)]
        if where == "tmpfs":
            listed = [entry.name for entry in os.scandir(folder)]
            assert listed.index(old[0].name) > state.SWEEP_LOOK, "tmpfs lists the newest first"
        sessions = 0
        while any(path.exists() for path in old):
            sessions += 1
            assert sessions <= 100, "the sweeps never reached every old file"
            due_again(folder)
            state.save(str(folder / f"{digest(10_000 + sessions)}.json"), state.Session(new=True))
        assert sessions > 1, "one sweep looked at the whole folder"
        assert all(path.exists() for path in recent)
    finally:
        if where == "tmpfs":
            shutil.rmtree(base, ignore_errors=True)


def test_a_session_sweeps_once_not_again_when_its_state_is_saved_after_the_answer(tmp_path):
    """The hook saves a new session's state before its lookup and, once the answer is claimed
    (past the time bound's reach), again: only the first save may sweep, even with a pass over
    the folder left part way (due again at the next new session)."""
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    for n in range(2 * state.SWEEP_LOOK):
        aged(folder / f"{digest(n)}.json", 3600)
    marker = folder / state.SWEPT
    session = state.Session(new=True)
    path = str(folder / f"{digest(-1)}.json")
    state.save(path, session)
    assert marker.read_bytes().isdigit(), "the pass stopped part way: due again at once"
    swept = (marker.read_bytes(), marker.stat().st_mtime_ns)
    session.show(["an-id"])
    state.save(path, session)
    assert (marker.read_bytes(), marker.stat().st_mtime_ns) == swept
    state.save(str(folder / f"{digest(-2)}.json"), state.Session(new=True))  # another session's first save
    assert (marker.read_bytes(), marker.stat().st_mtime_ns) != swept


def test_a_hook_run_before_any_server_start_leaves_its_cache_folders_private(repo, tmp_path):
    """The first thing of ours in a fresh cache folder is a hook: the sentinel-memory folder it makes
    is the user's only (mode 700), not only the hooks/ folder inside it."""
    cache = tmp_path / "fresh-cache"
    data = json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s-private", "cwd": str(repo.path),
                       "transcript_path": "/nonexistent", "prompt": "Fix src/auth.py please"}).encode()
    environment = {**repo.env, "XDG_CACHE_HOME": str(cache), **UNBOUNDED}
    environment.pop(state.ENV, None)
    result = forkrun.run(["hook", "--client", "claude"], input=data, cwd=repo.path, env=environment, timeout=120)
    assert result.returncode == 0 and LESSON in result.stdout.decode("utf-8")
    made = [cache, cache / "sentinel-memory", cache / "sentinel-memory" / "hooks"]
    assert [oct(folder.stat().st_mode & 0o777) for folder in made] == ["0o700"] * 3
