"""A repository is someone else's files, and git obeys them: a FIFO where git or we would read a
file must not make anything wait (docs/security.md), and a process started from another
repository (its hook launched the client) runs git for the project's own repository. Real
repositories, real FIFOs, real `git commit`, real processes; each process has a timeout far beyond
what it needs, so a wait fails the test instead of hanging it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import forkrun
from gitrepos import SERVER, T0, Repo, env, make_repo, put, rec, server  # noqa: F401  (env is a fixture)

LATER = "2026-03-01T00:00:00+00:00"
PAY = rec("payment", "refunds need a key", "send the idempotency key", created=T0, files=["src/pay.py"])
TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"  # the right shape, not a real token


def dated(repo: Repo, message: str, when: str) -> None:
    stamped = dict(repo.env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    for args in (["add", "-A"], ["commit", "-q", "--no-verify", "-m", message]):
        subprocess.run(["git", "-C", str(repo.path), *args], env=stamped, check=True, capture_output=True)


def cited_and_changed(tmp_path: Path, env: dict) -> Repo:
    """A wired repository whose one record cites src/pay.py, which a later commit changed: stale."""
    repo = make_repo(tmp_path, env)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "pay.py").write_text("def refund(): ...\n")
    dated(repo, "the code", "2025-12-01T00:00:00+00:00")
    put(repo.memory, PAY)
    dated(repo, "the memory", T0)
    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    dated(repo, "a key", LATER)
    return repo


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def edit_config(repo: Repo, text: str) -> None:
    """Append to .git/config by hand (git config itself would read the FIFO an include names)."""
    with open(repo.path / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(text)


def run(repo: Repo, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    done = forkrun.run(["--project", str(repo.path), *args], env=env or repo.env, text=True, encoding="utf-8",
                       timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def paste_token(repo: Repo) -> None:
    record = json.loads(repo.memory.read_text(encoding="utf-8").splitlines()[0])
    record["lesson"] = f"use {TOKEN}"
    repo.memory.write_text(json.dumps(record) + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------- FIFOs

def test_a_fifo_as_the_pre_commit_hook_blocks_neither_init_nor_doctor(tmp_path, env):
    """init and doctor look at the file's type before opening it: a FIFO is left alone and named."""
    repo = make_repo(tmp_path, env, wired=False)
    hook = fifo(repo.path / ".git" / "hooks" / "pre-commit")
    init = run(repo, "init")
    assert init.returncode == 0 and "not a regular file" in init.stdout, init.stdout + init.stderr
    doctor = run(repo, "doctor")
    assert "not a regular file" in doctor.stdout, doctor.stdout
    assert stat.S_ISFIFO(hook.lstat().st_mode)


def test_a_fifo_named_by_mailmap_file_lets_no_credential_through(tmp_path, env):
    """The repository's mailmap.file is a FIFO: the pre-commit check still reads what is staged
    (no mailmap is read by our git) and refuses the commit for the credential it holds."""
    repo = make_repo(tmp_path, env)
    run(repo, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    repo.git("config", "mailmap.file", str(fifo(tmp_path / "mailmap")))
    repo.git("add", "-A")
    assert repo.git("commit", "-q", "-m", "clean", check=False).returncode == 0
    paste_token(repo)
    repo.git("add", "-A")
    refused = repo.git("commit", "-q", "-m", "leaky", check=False)
    assert refused.returncode != 0 and "looks like github_token" in refused.stderr, refused.stderr
    assert repo.git("rev-list", "--count", "HEAD").stdout.strip() == "1"  # "clean" only


def test_fifos_named_by_the_excludes_and_attributes_files_cost_the_marks_nothing(tmp_path, env):
    """core.excludesFile and core.attributesFile naming FIFOs: our git reads neither, so `stale`
    and `doctor` answer with the marks git gives."""
    repo = cited_and_changed(tmp_path, env)
    plain = run(repo, "doctor")
    edit_config(repo, f"[core]\n\texcludesFile = {fifo(tmp_path / 'excludes')}\n"
                      f"\tattributesFile = {fifo(tmp_path / 'attributes')}\n")
    stale = run(repo, "stale")
    assert stale.returncode == 0 and "src/pay.py changed" in stale.stdout, stale.stdout + stale.stderr
    doctor = run(repo, "doctor")
    assert doctor.stdout == plain.stdout and doctor.returncode == plain.returncode, doctor.stdout


@pytest.mark.parametrize("section", ["[include]", '[includeIf "gitdir:/"]'])
def test_a_config_that_includes_a_fifo_is_said_not_waited_on(tmp_path, env, section):
    """A configuration file git reads includes a FIFO: our git is not started. `stale` says why the
    marks are unknown (exit 3) instead of listing none; the staged check refuses the commit with
    that sentence; `search` still answers from the file."""
    repo = cited_and_changed(tmp_path, env)
    edit_config(repo, f'{section}\n\tpath = "{fifo(tmp_path / "included")}"\n')
    stale = run(repo, "stale")
    assert stale.returncode == 3 and "is not a regular file" in stale.stderr, stale.stdout + stale.stderr
    assert "No stale records" not in stale.stdout
    staged = run(repo, "scan", "--staged")
    assert staged.returncode == 3 and "is not a regular file" in staged.stderr and "commit was stopped" in staged.stderr
    search = run(repo, "search", "refund")
    assert search.returncode == 0 and PAY["id"] in search.stdout



def test_a_fifo_as_the_repositorys_head_is_said_not_waited_on(tmp_path, env):
    """git opens .git/HEAD to recognise the repository, and would wait on a FIFO there (a project
    unpacked from someone's archive): our git is not started, `stale` names the file (exit 3)
    instead of listing none, and `search` answers from the memory file."""
    repo = cited_and_changed(tmp_path, env)
    head = repo.path / ".git" / "HEAD"
    head.unlink()
    fifo(head)
    stale = run(repo, "stale")
    assert stale.returncode == 3 and "HEAD file" in stale.stderr and "not a regular file" in stale.stderr, (
        stale.stdout + stale.stderr
    )
    assert "No stale records" not in stale.stdout
    search = run(repo, "search", "refund")
    assert search.returncode == 0 and PAY["id"] in search.stdout

# ------------------------------------------------------------------- the project's own repository

def test_an_inherited_git_dir_sends_nothing_into_another_repository(tmp_path, env):
    """A command started with GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE of another repository (as
    a hook of that repository would pass them on) wires the project's repository, reads the
    project's history, and leaves the other one untouched."""
    other = make_repo(tmp_path, env, name="other", wired=False)
    repo = cited_and_changed(tmp_path / "p", env)
    subprocess.run(["git", "-C", str(repo.path), "config", "--unset-all", "merge.sentinel-memory.driver"],
                   env=env, check=False)
    os.unlink(repo.path / ".git" / "hooks" / "pre-commit")
    inherited = dict(env, GIT_DIR=str(other.path / ".git"), GIT_WORK_TREE=str(other.path),
                     GIT_INDEX_FILE=str(other.path / ".git" / "index"), GIT_COMMON_DIR=str(other.path / ".git"),
                     GIT_OBJECT_DIRECTORY=str(other.path / ".git" / "objects"))
    other_config = (other.path / ".git" / "config").read_bytes()
    assert run(repo, "init", env=inherited).returncode == 0
    assert not (other.path / ".git" / "hooks" / "pre-commit").exists()
    assert (other.path / ".git" / "config").read_bytes() == other_config
    assert (repo.path / ".git" / "hooks" / "pre-commit").is_file()
    assert "sentinel-memory" in repo.git("config", "merge.sentinel-memory.driver").stdout
    stale = run(repo, "stale", env=inherited)
    assert stale.returncode == 0 and "src/pay.py changed" in stale.stdout, stale.stdout + stale.stderr


@pytest.mark.parametrize("mode", ["add then commit", "commit -a", "commit PATH", "commit --include PATH"])
def test_the_staged_check_reads_the_index_of_the_commit_being_made(tmp_path, env, mode):
    """git gives the hook the index of the commit it makes (commit -a and commit PATH use one of
    their own, GIT_INDEX_FILE); the check reads that index, not the repository's usual one."""
    repo = make_repo(tmp_path, env)
    run(repo, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    repo.git("add", "-A")
    assert repo.git("commit", "-q", "-m", "clean", check=False).returncode == 0
    paste_token(repo)
    commands = {
        "add then commit": [["add", "-A"], ["commit", "-q", "-m", "leaky"]],
        "commit -a": [["commit", "-q", "-a", "-m", "leaky"]],
        "commit PATH": [["commit", "-q", "-m", "leaky", "--", ".context/memory_log.jsonl"]],
        "commit --include PATH": [["commit", "-q", "--include", "-m", "leaky", "--", ".context/memory_log.jsonl"]],
    }[mode]
    for args in commands:
        last = repo.git(*args, check=False)
    assert last.returncode != 0 and "looks like github_token" in last.stderr, last.stderr
