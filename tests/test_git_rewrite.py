"""Writes while git rewrites the memory file (docs/contract.md §5.8): an acknowledged write is never
lost, and a write never shrinks the memory it did not mean to change, whatever git does beside it.

git replaces a tracked file by unlinking it, creating it again and writing into it, all while it
holds `.git/index.lock`. Here real git does the rewrite: paused in that gap by a smudge filter
(the file is gone, the lock held), or racing real writer processes in loops of checkout, pull and
stash. The half-written state, which git passes through too fast to stop in, is made by hand under
an index lock the test holds, as git would leave it.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from gitrepos import MEMORY, SERVER, Repo, clone, env, make_repo, put, rec  # noqa: F401  (env is a fixture)

from sentinel_memory.record import gitlock
from sentinel_memory.record.snapshot import parse

ROOT = Path(__file__).resolve().parents[1]
ID = re.compile(r"record ([0-9a-f]{16})")

# A writer process: logs records through tools.log (what log_memory calls) until the stop file
# appears, printing each id once log returned (with the time, time.monotonic(), which every process
# of the machine shares), then exits.
WRITER = textwrap.dedent(
    """
    import os, re, sys, time
    sys.path.insert(0, sys.argv[1])
    from sentinel_memory.errors import LockTimeout
    from sentinel_memory.record.store import memory_path
    from sentinel_memory.tools import log

    path, name, stop = memory_path(sys.argv[2]), sys.argv[3], sys.argv[4]
    i = 0
    while not os.path.exists(stop):
        try:
            out = log(path, name, f"{name} gap {i}", f"{name} lesson {i}")
        except LockTimeout:
            continue  # not acknowledged: nothing to check
        print(re.search(r"record ([0-9a-f]{16})", out).group(1), time.monotonic(), flush=True)
        i += 1
    """
)


def seeded(repo: Repo, topic: str, count: int) -> set[str]:
    """Add `count` records to the repository's memory and commit them; their ids."""
    records = [rec(topic, f"{topic} seed {i}", "l" * 200) for i in range(count)]
    put(repo.memory, *records)
    repo.commit(f"{count} records of {topic}")
    return {r["id"] for r in records}


def ids_in(data: bytes) -> set[str]:
    snap = parse(data)
    assert not snap.unreadable and not snap.conflict_regions, data[-300:]
    return set(snap.records)


def log_cli(repo: Repo, topic: str, timeout: float | None = None) -> subprocess.Popen:
    """`python server.py --project REPO log ...`, started (not waited for)."""
    environ = dict(repo.env)
    if timeout is not None:
        environ["SENTINEL_MEMORY_LOCK_TIMEOUT"] = str(timeout)
    return subprocess.Popen(
        [sys.executable, str(SERVER), "--project", str(repo.path), "log", "--topic", topic,
         "--missing-context", f"{topic} written in the gap", "--lesson", "must not vanish"],
        env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_until_inside_the_write(proc: subprocess.Popen, memory: Path) -> None:
    """Until the writer holds the memory file's lock (it is inside its write) or has exited."""
    deadline = time.monotonic() + 60
    lock = str(memory) + ".lock"
    while proc.poll() is None and time.monotonic() < deadline:
        if os.path.exists(lock):
            fd = os.open(lock, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return
            finally:
                os.close(fd)
        time.sleep(0.01)
    assert proc.poll() is not None, "the writer neither took the lock nor finished"


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


# ------------------------------------------------------------------------- the deterministic gap


@pytest.fixture
def branches(tmp_path, env):
    """A repository on `main` with 300 records committed, and a branch `other` with 100 more."""
    repo = make_repo(tmp_path, env, wired=False)
    main = seeded(repo, "main", 300)
    repo.git("checkout", "-q", "-b", "other")
    other = main | seeded(repo, "other", 100)
    repo.git("checkout", "-q", "main")
    return repo, main, other


def test_a_write_started_while_git_checkout_has_removed_the_file_waits_for_git_and_keeps_both(branches):
    """git checkout, stopped by a smudge filter after it unlinked the memory file and before it
    wrote the new one (its index lock held): a `log` started then waits for git instead of taking
    the missing file for an empty memory; git finishes its checkout, and the record is added to
    the memory git checked out."""
    repo, _main, other = branches
    gap, go = repo.path.parent / "in-the-gap", repo.path.parent / "go-on"
    (repo.path / ".git" / "info" / "attributes").write_text(f"{MEMORY} filter=pause\n", encoding="utf-8")
    repo.git("config", "filter.pause.smudge",
             f"sh -c 'touch \"{gap}\"; while [ ! -e \"{go}\" ]; do sleep 0.01; done; exec cat'")
    checkout = subprocess.Popen(["git", "-C", str(repo.path), "checkout", "-q", "other"], env=repo.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not gap.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gap.exists() and not repo.memory.exists() and (repo.path / ".git" / "index.lock").exists()

    writer = log_cli(repo, "gap")
    wait_until_inside_the_write(writer, repo.memory)
    go.touch()
    _, git_err = checkout.communicate(timeout=60)
    code, out, err = finish(writer)

    assert checkout.returncode == 0, git_err
    assert code == 0, err
    written = ID.search(out).group(1)
    assert ids_in(repo.data()) == other | {written}
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "other"


def test_a_write_started_while_the_file_is_half_written_under_gits_lock_waits_for_the_whole(branches):
    """The memory file half written (its last line cut) while git's index lock is held, as git
    leaves it between its create and its last write: a `log` started then neither keeps the half
    as the memory nor moves the cut line to the quarantine file; once the file is whole and the
    lock released, the record is added to all of it."""
    repo, main, _other = branches
    whole = repo.data()
    lock = repo.path / ".git" / "index.lock"
    lock.touch()
    repo.memory.unlink()
    repo.memory.write_bytes(whole[: len(whole) // 2])
    assert not repo.memory.read_bytes().endswith(b"\n")

    writer = log_cli(repo, "gap")
    wait_until_inside_the_write(writer, repo.memory)
    with open(repo.memory, "ab") as rest:
        rest.write(whole[len(whole) // 2 :])
    lock.unlink()
    code, out, err = finish(writer)

    assert code == 0, err
    assert ids_in(repo.data()) == main | {ID.search(out).group(1)}
    assert not (repo.memory.parent / "memory_log.quarantine.jsonl").exists()


@pytest.mark.parametrize("state", ["missing", "half written"])
def test_a_write_gives_up_with_one_clear_sentence_when_git_never_releases_its_lock(branches, state):
    """git's index lock never released (a git still at work, or one that crashed): the write waits
    SENTINEL_MEMORY_LOCK_TIMEOUT seconds, then exits 3 naming the lock, and leaves every file as
    it found it."""
    repo, _main, _other = branches
    whole = repo.data()
    lock = repo.path / ".git" / "index.lock"
    lock.touch()
    repo.memory.unlink()
    if state == "half written":
        repo.memory.write_bytes(whole[: len(whole) // 2])
    before = sorted(os.listdir(repo.memory.parent))

    code, out, err = finish(log_cli(repo, "gap", timeout=0.5))

    assert code == 3, (out, err)
    assert str(lock) in err and "Nothing was saved" in err and "Traceback" not in err
    assert sorted(os.listdir(repo.memory.parent)) == before
    if state == "half written":
        assert repo.data() == whole[: len(whole) // 2]
    else:
        assert not repo.memory.exists()


# ------------------------------------------------------------------------- writers racing git


def slow_checkouts(repo: Repo) -> None:
    """Make git take 50 ms to write the memory file in each checkout, as on a slow disk: a smudge
    filter that waits, run after git unlinked the file and before it creates it again."""
    (repo.path / ".git" / "info" / "attributes").write_text(f"{MEMORY} filter=slow\n", encoding="utf-8")
    repo.git("config", "filter.slow.smudge", "sh -c 'sleep 0.05; exec cat'")


def start_writers(repo: Repo, stop: Path, count: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", WRITER, str(ROOT), str(repo.path), f"writer{k}", str(stop)],
                         env=repo.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k in range(count)
    ]


def acknowledged(writers: list[subprocess.Popen], stop: Path) -> dict[str, float]:
    """Stop the writers; the ids they acknowledged, with when."""
    stop.touch()
    acked: dict[str, float] = {}
    for proc in writers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        acked.update((rid, float(when)) for rid, when in (line.split() for line in out.splitlines()))
    assert acked, "the writers acknowledged nothing"
    return acked


def until_written(repo: Repo, count: int) -> None:
    """Until the writers have added `count` records to the file, so that git always races writes."""
    deadline = time.monotonic() + 60
    start = len(parse(repo.data()).records)
    while len(parse(repo.data()).records) < start + count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_writers_racing_git_checkout_loops_lose_nothing(branches, tmp_path):
    """Three writer processes log while this clone switches between two branches whose memories
    differ with `git checkout -m`, which carries the file's changes along (merged by the merge
    driver) and so rewrites it every time, 4 times each way, each checkout taking 50 ms to write
    the file: at the end the memory holds every record of `main` and every acknowledged one."""
    repo, main, _other = branches
    repo.init_driver()
    repo.commit("wired")
    slow_checkouts(repo)
    stop = tmp_path / "stop"
    writers = start_writers(repo, stop, 3)
    switched = 0
    for _ in range(4):
        for branch in ("other", "main"):
            until_written(repo, 2)
            switched += repo.git("checkout", "-q", "-m", branch, check=False).returncode == 0
    assert repo.git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "main"
    acked = acknowledged(writers, stop)
    assert switched, "git never switched"
    assert main | set(acked) <= ids_in(repo.data())


def test_writers_racing_git_pull_loops_lose_nothing(tmp_path, env):
    """Three writer processes log in this clone while a teammate's clone pushes a record at a time
    and this clone commits and pulls through the merge driver, 4 times (each checkout of the file
    taking 50 ms): at the end this clone's
    memory holds every record anyone acknowledged."""
    origin = make_repo(tmp_path, env, name="origin")
    seed = seeded(origin, "seed", 200)
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin.path), str(bare)], env=env, check=True)
    ours, theirs = (clone(Repo(bare, env), tmp_path, name, wired=True) for name in ("ours", "theirs"))
    for repo in (ours, theirs):
        repo.git("config", "pull.rebase", "false")
    slow_checkouts(ours)
    stop = tmp_path / "stop"
    writers = start_writers(ours, stop, 3)
    until_written(ours, 3)
    pushed = set()
    for i in range(4):
        record = rec("teammate", f"teammate {i}", "pushed from the other clone")
        put(theirs.memory, record)
        theirs.commit(f"teammate {i}")
        theirs.git("push", "-q")
        pushed.add(record["id"])
        until_written(ours, 2)
        ours.git("add", "-A")
        ours.git("commit", "-q", "--no-verify", "-m", f"ours {i}", check=False)
        ours.git("pull", "-q", "--no-edit", check=False)  # refused while the file has changes: fine
    acked = acknowledged(writers, stop)
    ours.git("add", "-A")
    ours.git("commit", "-q", "--no-verify", "-m", "last", check=False)
    ours.git("pull", "-q", "--no-edit")
    held = ids_in(ours.data())
    assert seed | pushed | set(acked) <= held


def test_writers_racing_git_stash_loops_lose_nothing_and_never_shrink_the_memory(branches, tmp_path):
    """Three writer processes log while this clone stashes and pops, 6 times. `git stash` runs in
    steps (it records the work tree, then a second git resets it) and `git stash pop` is refused
    while the file has changes: the memory file always keeps every record of the commit, and at
    the end every acknowledged record is in the file or in a stash entry."""
    repo, main, _other = branches
    slow_checkouts(repo)
    stop = tmp_path / "stop"
    writers = start_writers(repo, stop, 3)
    until_written(repo, 3)
    for _ in range(6):
        until_written(repo, 2)
        repo.git("stash", "-q", check=False)
        repo.git("stash", "pop", "-q", check=False)  # refused while the file has changes: fine
        assert main <= ids_in(repo.data())
    acked = acknowledged(writers, stop)
    kept = ids_in(repo.data())
    for ref in repo.git("stash", "list", "--format=%H").stdout.split():
        kept |= ids_in(repo.show(ref))
    assert main <= ids_in(repo.data())
    assert set(acked) <= kept


# ------------------------------------------------------------------------------ finding git's lock


def test_the_index_lock_is_found_for_a_worktree_a_submodule_style_gitfile_and_not_through_a_fifo(tmp_path, env):
    """The git directory is found from the memory file's folder as git finds it: a `.git` folder up
    the tree, a `.git` file naming a linked worktree's git directory; a `.git` FIFO is not opened
    (no wait) and means no repository."""
    repo = make_repo(tmp_path, env, wired=False)
    seeded(repo, "main", 1)
    assert gitlock.git_dir(str(repo.memory.parent)) == str(repo.path / ".git")
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked))
    found = gitlock.git_dir(str(linked / ".context"))
    assert found is not None and Path(found).resolve() == (repo.path / ".git" / "worktrees" / "linked").resolve()
    assert not gitlock.held(found)
    (Path(found) / "index.lock").touch()
    assert gitlock.held(found) and not gitlock.held(str(repo.path / ".git"))
    (Path(found) / "index.lock").unlink()
    fifo_project = tmp_path / "fifo"
    (fifo_project / ".context").mkdir(parents=True)
    os.mkfifo(fifo_project / ".git")
    assert gitlock.git_dir(str(fifo_project / ".context")) is None
