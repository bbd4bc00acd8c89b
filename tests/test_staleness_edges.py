"""The stale marks at the edges (docs/contract.md §3.7): a shallow clone marks only what its history
knows and says so once; a citation through a symlinked folder follows what git tracks; file names
that are not UTF-8 or hold a line break neither crash nor break a line. And the small commands'
edges: fold of a file outside .context/ or through a link, forget with no id, log --file -name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gitrepos import SERVER, T0, T1, T2, T3, Repo, env, make_repo, put, rec, server  # noqa: F401
from sentinel_memory.tools import answers
from sentinel_memory.record.store import memory_path

BEFORE = "2025-12-01T00:00:00+00:00"
PAY = rec("payment", "refunds need a key", "send the idempotency key", created=T0, files=["src/pay.py"])


def commit_at(repo: Repo, message: str, when: str) -> None:
    dated = dict(repo.env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    for args in (["add", "-A"], ["commit", "-q", "--no-verify", "-m", message]):
        subprocess.run(["git", "-C", str(repo.path), *args], env=dated, check=True, capture_output=True)


def origin_with_history(tmp_path: Path, env: dict) -> Repo:
    """src/pay.py before T0, the record citing it at T0, then two commits that touch only docs."""
    repo = make_repo(tmp_path, env, "origin", wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "pay.py").write_text("def refund(): ...\n")
    commit_at(repo, "the code", BEFORE)
    put(repo.memory, PAY)
    commit_at(repo, "the memory", T0)
    for when in (T1, T2):
        (repo.path / "notes.md").write_text(f"notes {when}\n")
        commit_at(repo, "notes", when)
    return repo


def shallow_clone(origin: Repo, tmp_path: Path, name: str, depth: int) -> Repo:
    path = tmp_path / name
    subprocess.run(["git", "clone", "-q", f"--depth={depth}", f"file://{origin.path}", str(path)], env=origin.env,
                   check=True, capture_output=True)
    assert (path / ".git" / "shallow").is_file()
    return Repo(path, origin.env)


def test_a_shallow_clone_marks_nothing_its_history_cannot_know_and_says_so_once(tmp_path, env):
    """In a --depth 1 clone (the CI default) the one commit lists every file as added: that is not
    a change, and the record citing src/pay.py is not stale."""
    clone = shallow_clone(origin_with_history(tmp_path, env), tmp_path, "ci", depth=1)
    stale = server(env, "--project", str(clone.path), "stale")
    search = answers.search(clone.memory, "refund")
    compact = answers.compact(clone.memory)
    assert stale.returncode == 1 and "No stale records" in stale.stdout, stale.stdout
    assert stale.stdout.count("shallow clone") == 1
    assert "stale:" not in search and "[stale" not in compact and compact.count("shallow clone") == 1
    assert search.count("shallow clone") == 1, search  # the agent reads why nothing is marked


def test_a_shallow_clone_still_marks_a_change_it_holds_as_at_least(tmp_path, env):
    origin = origin_with_history(tmp_path, env)
    (origin.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(origin, "a key", T3)
    clone = shallow_clone(origin, tmp_path, "ci", depth=2)
    search = answers.search(clone.memory, "refund")
    assert "stale: the code it cites changed after this was written: src/pay.py changed (1+ commits since" in search


def test_a_citation_through_a_symlinked_folder_goes_stale_when_the_tracked_file_changes(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "pay.py").write_text("def refund(): ...\n")
    os.symlink("src", repo.path / "lib")
    commit_at(repo, "the code and a link to it", BEFORE)
    put(repo.memory, rec("payment", "m", "l", created=T0, files=["lib/pay.py"]))
    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(repo, "a key", T1)
    search = answers.search(repo.memory, "")
    assert "stale: the code it cites changed after this was written: lib/pay.py changed (1 commit since" in search


def test_a_file_name_with_a_line_break_stays_on_its_line(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    odd = "src/two\nlines.py"
    (repo.path / odd).write_text("x = 1\n")
    commit_at(repo, "an odd name", BEFORE)
    saved = answers.log(repo.memory, "odd", "names", "quote them", files=[odd])
    record = json.loads(repo.memory.read_text(encoding="utf-8"))
    put(repo.memory, {**record, "meta": {"created": T0}})
    (repo.path / odd).write_text("x = 2\n")
    commit_at(repo, "changed", T1)
    search = answers.search(repo.memory, "")
    stale = server(env, "--project", str(repo.path), "stale").stdout
    export = server(env, "--project", str(repo.path), "export").stdout
    for text in (saved, search, stale, export):
        assert '"src/two\\nlines.py"' in text, text
        assert not any(line.startswith("lines.py") for line in text.splitlines()), text
    assert "\nfiles: \"src/two\\nlines.py\"\n" in search
    assert "stale: the code it cites changed after this was written: \"src/two\\nlines.py\" changed" in search


def test_a_file_name_holding_the_history_separator_hides_no_other_change(tmp_path, env):
    """A path may hold any byte but NUL. One holding \\x01 (and a made-up commit header after it)
    changed in the same commit as the cited file: the cited file's change still counts, at the
    commit's own date, and the odd name is a change of its own."""
    repo = origin_with_history(tmp_path, env)
    odd = "a\x01fffffff 4102444800 " + "f" * 40
    (repo.path / odd).write_text("x\n")
    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(repo, "odd name and pay", T3)

    stale = server(env, "--project", str(repo.path), "stale")

    assert stale.returncode == 0, stale.stdout + stale.stderr
    assert "src/pay.py changed (1 commit since" in stale.stdout and T3[:10] in stale.stdout


def test_log_file_with_a_name_that_is_not_utf8_is_refused_in_one_sentence(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    name = os.fsencode(str(repo.path)) + b"/caf\xe9.py"
    with open(name, "wb") as f:
        f.write(b"x = 1\n")
    result = subprocess.run([sys.executable, str(SERVER), "--project", str(repo.path), "log", "--topic", "t", "--missing-context",
                             "m", "--lesson", "l", "--file", b"caf\xe9.py"], env=env, capture_output=True,
                            cwd=repo.path)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2 and "Traceback" not in err, err
    assert "is not a UTF-8 name" in err and "Nothing was saved." in err
    assert not repo.memory.exists() or repo.memory.read_bytes() == b""


def test_log_file_takes_a_name_that_starts_with_a_dash(tmp_path, env):
    project = tmp_path / "p"
    project.mkdir()
    (project / "-dash.py").write_text("x = 1\n")
    result = server(env, "--project", str(project), "log", "--topic", "t", "--missing-context", "m", "--lesson", "l",
                    "--file", "-dash.py")
    assert result.returncode == 0, result.stderr
    assert json.loads(memory_path(project).read_text(encoding="utf-8"))["files"] == ["-dash.py"]


def test_forget_with_no_id_is_refused_and_deletes_nothing(tmp_path, env):
    project = tmp_path / "p"
    project.mkdir()
    answers.log(memory_path(project), "t", "m", "l")
    before = memory_path(project).read_bytes()
    for ids in ([""], ["  ", ""]):
        result = server(env, "--project", str(project), "forget", *ids)
        assert result.returncode == 2 and "no id given" in result.stderr, result.stderr
    assert memory_path(project).read_bytes() == before


def test_fold_of_a_file_outside_context_advises_deleting_that_file_not_its_folder(tmp_path, env):
    project = tmp_path / "p"
    project.mkdir()
    other = tmp_path / "exports" / "old-memory.jsonl"
    other.parent.mkdir()
    other.write_text(json.dumps(rec("misc", "a", "b", created=T0)) + "\n")
    result = server(env, "--project", str(project), "fold", str(other))
    assert result.returncode == 0, result.stderr
    assert f"then delete {other} " in result.stdout and f"delete {other.parent} " not in result.stdout


def test_fold_through_a_symbolic_link_is_refused_and_changes_nothing(tmp_path, env):
    project = tmp_path / "p"
    project.mkdir()
    secret = tmp_path / "outside" / "passwd"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0:root:/root:/bin/sh\n")
    link = tmp_path / "stray.jsonl"
    link.symlink_to(secret)
    folder = tmp_path / "stray-project" / ".context"
    folder.parent.mkdir()
    folder.symlink_to(secret.parent)
    for given in (link, folder.parent):
        result = server(env, "--project", str(project), "fold", str(given))
        assert result.returncode == 2 and "symbolic link" in result.stderr, result.stdout + result.stderr
        assert "the memory file" not in result.stderr and "delete" not in result.stdout
    assert not memory_path(project).exists()


def test_fold_of_a_file_that_holds_no_records_is_refused(tmp_path, env):
    project = tmp_path / "p"
    project.mkdir()
    other = tmp_path / "notes.txt"
    other.write_text("not a record\nnor this\n")
    result = server(env, "--project", str(project), "fold", str(other))
    assert result.returncode == 2 and "holds no memory records (2 lines that are not records)" in result.stderr
    assert "the memory file" not in result.stderr


def test_after_fetch_unshallow_the_same_process_marks_what_the_whole_history_shows(tmp_path, env):
    """`git fetch --unshallow` leaves HEAD where it was but brings the history before it: the next
    search reads it again and marks the change it now knows."""
    origin = origin_with_history(tmp_path, env)
    (origin.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(origin, "a key", T1.replace("02-01", "02-15"))
    (origin.path / "notes.md").write_text("more notes\n")
    commit_at(origin, "notes", T3)
    clone = shallow_clone(origin, tmp_path, "ci", depth=1)
    assert "stale:" not in answers.search(clone.memory, "refund")
    clone.git("fetch", "-q", "--unshallow")
    assert "src/pay.py changed (1 commit since" in answers.search(clone.memory, "refund")


def test_the_git_folders_small_files_are_read_within_a_bound(tmp_path, env):
    """HEAD, a ref, a `.git` file are a line each; a downloaded repository could put a huge file
    (or a link to one) in their place, read on every search: past the bound nothing is read and
    the file counts as unreadable, so nothing is marked and nothing fails."""
    from sentinel_memory.git import history

    repo = origin_with_history(tmp_path, env)
    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(repo, "a key", T3)
    assert "src/pay.py changed" in server(env, "--project", str(repo.path), "stale").stdout
    head = repo.path / ".git" / "HEAD"
    big = tmp_path / "big"
    big.write_bytes(head.read_bytes() + b" " * history.SMALL)
    assert history.read_small(str(big)) is None and history.read_small(str(big), 2 * history.SMALL) is not None
    head.unlink()
    head.symlink_to(big)
    stale = server(env, "--project", str(repo.path), "stale")
    assert stale.returncode == 1 and "No stale records" in stale.stdout and "Traceback" not in stale.stderr
