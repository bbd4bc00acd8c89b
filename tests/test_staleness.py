"""Lessons that know when the code they cite has changed (docs/contract.md §3.7, §4.2), with REAL
git repositories in tmp_path (tests/gitrepos.py).

Records are written with explicit timestamps (T0 = 2026-01-01) and commits with explicit committer
dates, so "changed after the record was written" never depends on the clock: the files are added
before T0, changed at T1..T3, and a record logged again now is dated after every one of them.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import forkrun
from gitrepos import T0, T1, T2, T3, Repo, by_id, clone, env, make_repo, put, rec, server  # noqa: F401
from sentinel_memory.git import drivers
from sentinel_memory.record import store
from sentinel_memory.tools import answers, memory
from sentinel_memory.tools.blocks import estimate_tokens
from sentinel_memory.tools.memory import OpenMemory
from sentinel_memory.errors import InvalidInput
from sentinel_memory.record.records import Entry, prepare
from sentinel_memory.record.snapshot import Snapshot

BEFORE = "2025-12-01T00:00:00+00:00"
FUTURE = "2030-01-01T00:00:00+00:00"


def commit_at(repo: Repo, message: str, when: str) -> str:
    """Commit everything with this author and committer date; returns the short hash."""
    dated = dict(repo.env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    for args in (["add", "-A"], ["commit", "-q", "--no-verify", "-m", message]):
        subprocess.run(["git", "-C", str(repo.path), *args], env=dated, check=True, capture_output=True)
    return repo.git("rev-parse", "--short", "HEAD").stdout.strip()


def project(tmp_path: Path, env: dict, name: str = "repo") -> Repo:
    """A repository with src/pay.py, src/auth.py and docs/notes.md committed before T0."""
    repo = make_repo(tmp_path, env, name=name, wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "docs").mkdir()
    (repo.path / "src" / "pay.py").write_text("def refund(): ...\n")
    (repo.path / "src" / "auth.py").write_text("def login(): ...\n")
    (repo.path / "docs" / "notes.md").write_text("notes\n")
    commit_at(repo, "the code", BEFORE)
    return repo


def blocks(answer: str) -> dict[str, str]:
    """search_memory's numbered blocks by record id."""
    parts = re.split(r"^(?=#\d+ [0-9a-f]{16} \|)", answer, flags=re.M)[1:]
    return {re.match(r"#\d+ ([0-9a-f]{16})", part).group(1): part for part in parts}


def order(answer: str) -> list[str]:
    return re.findall(r"^#\d+ ([0-9a-f]{16}) \|", answer, re.M)


PAY = rec("payment", "refunds need a key", "send the idempotency key", created=T0, files=["src/pay.py"])
AUTH = rec("auth", "login redirects", "keep the next parameter", created=T0, files=["src/auth.py"])
PLAIN = rec("payment", "no files cited", "a lesson about nothing in particular", created=T0)


# ------------------------------------------------------------------------------------ the marks

def test_a_cited_file_named_like_a_key_is_marked_stale_redacted(tmp_path, env):
    """A cited file whose name holds a key (a hand edit may cite one): the stale mark names it
    redacted, as the record's files line does (before, the mark named it as it was)."""
    repo = project(tmp_path, env)
    key = "AKIA" + "Q7X2" * 4  # the shape of an AWS access key id, built here so no real one is in the repo
    (repo.path / "keys").mkdir()
    (repo.path / "keys" / f"{key}.txt").write_text("old\n")
    commit_at(repo, "a key file", BEFORE)
    record = rec("keys", "the key file was not named", "rotate the key file", files=["src/pay.py", f"keys/{key}.txt"])
    repo.memory.parent.mkdir(exist_ok=True)
    with repo.memory.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    (repo.path / "keys" / f"{key}.txt").write_text("new\n")
    commit_at(repo, "change", T1)
    answer = answers.search(repo.memory, "rotate the key file")
    assert "stale: " in answer and "keys/[REDACTED].txt changed" in answer and key not in answer


def test_a_commit_that_changes_a_cited_file_marks_only_the_records_that_cite_it(tmp_path, env):
    """A commit after the record's date that changes src/pay.py marks the record citing it, with the
    file, the number of commits since, the latest one's short hash and date; the record citing
    src/auth.py and the one citing nothing carry no mark, and the order does not change."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY, AUTH, PLAIN)
    before = answers.search(repo.memory, "refund login")
    assert "stale:" not in before

    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    commit_at(repo, "first change", T1)
    (repo.path / "src" / "pay.py").write_text("def refund(key, retries=3): ...\n")
    latest = commit_at(repo, "second change", T2)
    after = answers.search(repo.memory, "refund login")

    by = blocks(after)
    assert order(after) == order(before)
    assert "stale: " in by[PAY["id"]]
    line = next(x for x in by[PAY["id"]].splitlines() if x.startswith("stale: "))
    assert "src/pay.py changed (2 commits since; latest " + latest + " on 2026-03-01)" in line
    assert "Verify before applying; if it still holds, log it again to refresh it." in line
    assert "\nstale: " not in by[AUTH["id"]] and "\nstale: " not in by[PLAIN["id"]]
    assert "lesson: send the idempotency key" in by[PAY["id"]]  # the lesson is still shown
    assert "1 record listed above cites files that commits changed after it was written" in after


def test_a_commit_dated_before_the_record_and_uncommitted_edits_do_not_mark_it(tmp_path, env):
    """Only commits after the record's recency count: a change committed before it, and an edit
    in the working tree that is not committed, leave the record unmarked."""
    repo = project(tmp_path, env)
    (repo.path / "src" / "pay.py").write_text("changed before the lesson\n")
    commit_at(repo, "before", BEFORE)
    put(repo.memory, PAY)
    (repo.path / "src" / "pay.py").write_text("edited, not committed\n")

    assert "stale:" not in answers.search(repo.memory, "refund")


def test_a_path_the_lesson_names_is_cited_without_being_listed(tmp_path, env):
    """log_memory without `files`: the paths that the lesson and missing_context name and that exist
    in the project are cited (src/pay.py, docs/notes.md); words with a dot or slash that are not
    files of the project (e.g., v1.2, src/none.py, https://example.com/a.py) are not, nor are files
    in .context/ (the memory's own directory). A commit
    that changes a named file marks the record."""
    repo = project(tmp_path, env)
    answers.log(repo.memory, "payment", "the retry rule in `src/pay.py` was unknown (e.g., since v1.2)",
              "See docs/notes.md and https://example.com/a.py; src/none.py does not exist; "
              "nor is .context/.gitignore cited.")
    stored = next(iter(by_id(repo.data()).values()))
    assert stored["files"] == ["docs/notes.md", "src/pay.py"]
    assert list(stored)[-1] == "files"  # after the contract's keys

    (repo.path / "docs" / "notes.md").write_text("new notes\n")
    commit_at(repo, "notes", FUTURE)
    assert "stale: the code it cites changed after this was written: docs/notes.md changed (1 commit since" \
        in answers.search(repo.memory, "retry")


def test_a_deleted_file_and_a_renamed_file_say_so(tmp_path, env):
    """A cited file deleted by a later commit is reported deleted; one renamed is reported with
    its new path (followed through a second rename, which counts as a commit since and is the
    latest: the mark said "1 commit since" and named the first rename)."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY, AUTH)
    repo.git("rm", "-q", "src/auth.py")
    deleted = commit_at(repo, "drop auth", T1)
    repo.git("mv", "src/pay.py", "src/payments.py")
    commit_at(repo, "rename", T2)
    repo.git("mv", "src/payments.py", "src/billing.py")
    again = commit_at(repo, "rename again", T3)

    found = answers.search(repo.memory, "refund login")
    by = blocks(found)
    assert "2 records listed above cite files that commits changed after they were written" in found
    assert f"src/auth.py was deleted (1 commit since; latest {deleted} on 2026-02-01)" in by[AUTH["id"]]
    assert f"src/pay.py was renamed to src/billing.py (2 commits since; latest {again} on {T3[:10]})" \
        in by[PAY["id"]]


def test_refreshing_a_record_whose_file_git_renamed_cites_the_file_by_its_new_name(tmp_path, env):
    """The stale mark says src/pay.py was renamed to src/billing.py; logging the record again with
    `files` omitted, as the mark advises, makes it cite src/billing.py and says so (before, it kept
    citing the missing src/pay.py: no search for src/billing.py found it, and no later commit
    marked it stale again). Now both work; an explicit `files` is validated as ever."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    repo.git("mv", "src/pay.py", "src/billing.py")
    commit_at(repo, "rename", T1)
    with pytest.raises(InvalidInput, match="'src/pay.py' is not a file in the project"):
        answers.log(repo.memory, PAY["topic"], PAY["missing_context"], PAY["lesson"], files=["src/pay.py"])

    answer = answers.log(repo.memory, PAY["topic"], PAY["missing_context"], PAY["lesson"])

    assert answer.startswith("updated:") and "It was marked stale: src/pay.py was renamed to src/billing.py" in answer
    assert "Cites 1 file: src/billing.py " in answer
    assert "Following git's rename, it now cites src/billing.py in place of src/pay.py." in answer
    assert by_id(repo.data())[PAY["id"]]["files"] == ["src/billing.py"]
    assert "stale:" not in answers.search(repo.memory, "refund")
    assert [m.record["id"] for m in memory.strong_matches(repo.memory, "", ["src/billing.py"])] == [PAY["id"]]
    (repo.path / "src" / "billing.py").write_text("def refund(key): ...\n")
    change = commit_at(repo, "change", FUTURE)
    assert f"src/billing.py changed (1 commit since; latest {change} on 2030-01-01)" \
        in blocks(answers.search(repo.memory, "refund"))[PAY["id"]]


def test_the_log_command_refreshing_a_renamed_files_lesson_keeps_it_found_for_that_file(tmp_path, env):
    """`log --topic T --missing-context M` (the stale mark's advice, by hand) after `git mv
    src/pay.py src/billing.py`: the record cites src/billing.py, so `search --file src/billing.py`
    finds it strongly, the write hook on src/billing.py shows its lesson, and a later commit to
    src/billing.py makes `stale` list it again (before, none of the three did)."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    repo.git("mv", "src/pay.py", "src/billing.py")
    commit_at(repo, "rename", T1)
    at = ("--project", str(repo.path))

    refreshed = server(env, *at, "log", "--topic", PAY["topic"], "--missing-context", PAY["missing_context"])

    assert refreshed.returncode == 0, refreshed.stderr
    assert "it now cites src/billing.py in place of src/pay.py" in refreshed.stdout
    assert "changed: files (to follow git's rename; the other fields left out kept their values)." in refreshed.stdout
    assert 'files: ["src/billing.py"]' in server(env, *at, "show", PAY["id"][:8]).stdout
    found = server(env, *at, "search", "--file", "src/billing.py")
    assert found.returncode == 0 and "Nothing matches strongly" not in found.stdout and PAY["id"] in found.stdout
    event = {"session_id": "s2", "cwd": str(repo.path), "hook_event_name": "PreToolUse", "tool_name": "Edit",
             "tool_input": {"file_path": str(repo.path / "src" / "billing.py")}}
    hooked = forkrun.run(["hook", "--client", "claude"], input=json.dumps(event).encode(), cwd=repo.path,
                         env={**env, "SENTINEL_MEMORY_HOOK_TIME": "60"}, timeout=120)
    assert hooked.returncode == 0 and PAY["lesson"] in hooked.stdout.decode("utf-8")
    assert server(env, *at, "stale").returncode == 1
    (repo.path / "src" / "billing.py").write_text("def refund(key): ...\n")
    commit_at(repo, "change", FUTURE)
    stale = server(env, *at, "stale")
    assert stale.returncode == 0 and "src/billing.py changed (1 commit since" in stale.stdout


def test_a_refresh_follows_only_a_rename_to_a_file_of_the_project(tmp_path, env):
    """A refresh keeps a cited path whose file git renamed and then deleted, and one renamed out
    of the project (even to a path that, read from the project's root, names another file of it):
    only a file the record could cite under its new name replaces the old one."""
    repo = make_repo(tmp_path, env, wired=False)
    app = repo.path / "apps" / "shop"
    for folder in (app / "src", app / "lib", repo.path / "lib"):
        folder.mkdir(parents=True)
    (app / "src" / "pay.py").write_text("def refund(): ...\n# enough for git to see a rename\n")
    (app / "src" / "auth.py").write_text("def login(): ...\n# enough for git to see a rename\n")
    (app / "lib" / "pay.py").write_text("another file of the project\n")
    commit_at(repo, "app", BEFORE)
    memory_file = store.memory_path(app)
    put(memory_file, PAY, AUTH)
    repo.git("mv", "apps/shop/src/pay.py", "lib/pay.py")  # out of the project: apps/shop/lib/pay.py is not it
    repo.git("mv", "apps/shop/src/auth.py", "apps/shop/src/login.py")
    commit_at(repo, "move", T1)
    repo.git("rm", "-q", "apps/shop/src/login.py")
    commit_at(repo, "drop", T2)
    marks = blocks(answers.search(memory_file, "refund login"))
    assert "src/auth.py was renamed to src/login.py, since deleted" in marks[AUTH["id"]]
    assert "src/pay.py was renamed to lib/pay.py" in marks[PAY["id"]]

    for record in (PAY, AUTH):
        answer = answers.log(memory_file, record["topic"], record["missing_context"], record["lesson"])
        assert answer.startswith("updated:") and "Following git's rename" not in answer

    stored = by_id(memory_file.read_bytes())
    assert (stored[PAY["id"]]["files"], stored[AUTH["id"]]["files"]) == (["src/pay.py"], ["src/auth.py"])


def test_a_change_pulled_from_a_teammate_counts_like_ones_own(tmp_path, env):
    """A teammate commits a change to a cited file in another clone (dated after the record) and
    pushes; after `git pull` the record is marked, naming the teammate's commit. Before the pull
    it is not."""
    origin = project(tmp_path, env, name="origin")
    mine = clone(origin, tmp_path, "mine", wired=False)
    put(mine.memory, PAY)
    (origin.path / "src" / "pay.py").write_text("teammate's change\n")
    theirs = commit_at(origin, "teammate", T1)
    assert "stale:" not in answers.search(mine.memory, "refund")

    mine.git("pull", "-q", "--ff-only")

    assert f"src/pay.py changed (1 commit since; latest {theirs} on 2026-02-01)" in answers.search(mine.memory, "refund")


def test_a_project_in_a_subdirectory_of_the_repository_cites_paths_from_its_own_root(tmp_path, env):
    """When the project root is a subdirectory of the repository, cited paths are relative to the
    project root and the history's repository paths are matched to them."""
    repo = make_repo(tmp_path, env, wired=False)
    app = repo.path / "apps" / "shop"
    (app / "src").mkdir(parents=True)
    (app / "src" / "pay.py").write_text("v1\n")
    commit_at(repo, "app", BEFORE)
    memory = store.memory_path(app)
    put(memory, PAY)
    (app / "src" / "pay.py").write_text("v2\n")
    commit_at(repo, "change", T1)

    assert "src/pay.py changed (1 commit since" in answers.search(memory, "refund")


def test_logging_a_stale_record_again_clears_its_mark(tmp_path, env):
    """The same topic and missing_context logged again, word for word, after the change: the record
    is saved again (updated, not unchanged) with a date after the change, the answer says the mark is
    cleared, and search no longer marks it."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)
    assert "stale:" in answers.search(repo.memory, "refund")

    answer = answers.log(repo.memory, PAY["topic"], PAY["missing_context"], PAY["lesson"])

    assert answer.startswith("updated:")
    assert "It was marked stale: src/pay.py changed" in answer and "clears the mark" in answer
    stored = by_id(repo.data())[PAY["id"]]
    assert stored["files"] == ["src/pay.py"] and stored["meta"]["updated"] > T1
    assert "stale:" not in answers.search(repo.memory, "refund")
    assert answers.log(repo.memory, PAY["topic"], PAY["missing_context"], PAY["lesson"]).startswith("unchanged:")


def test_a_stale_principle_is_refreshed_by_hand_as_the_stale_command_says(tmp_path, env):
    """A principle is found by its topic and lesson: `log --type principle` with them refreshes a
    stale one (its mark cleared, its other fields kept), as `stale` tells a person to; a log record
    still needs its missing context."""
    repo = project(tmp_path, env)
    principle = {**rec("payment", "", "refunds are idempotent by key", files=["src/pay.py"]), "type": "principle"}
    principle["id"] = prepare("payment", "", principle["lesson"], "", "principle").id
    principle["missing_context"] = "what refunds need"
    put(repo.memory, principle)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)
    at = ("--project", str(repo.path))
    stale = server(env, *at, "stale")
    assert principle["id"] in stale.stdout and "`log --type principle` with the same topic and lesson" in stale.stdout

    refreshed = server(env, *at, "log", "--type", "principle", "--topic", "payment", "--lesson", principle["lesson"])

    assert refreshed.returncode == 0, refreshed.stderr
    assert server(env, *at, "stale").returncode == 1
    stored = by_id(repo.data())[principle["id"]]
    assert (stored["type"], stored["missing_context"], stored["files"]) == ("principle", "what refunds need", ["src/pay.py"])
    assert len(by_id(repo.data())) == 1
    needs = server(env, *at, "log", "--topic", "payment", "--lesson", "x")
    assert needs.returncode == 2 and "--missing-context is required" in needs.stderr


def test_the_history_is_read_once_per_head(tmp_path, env):
    """Searches of one open memory at one HEAD reuse one reading of the history (and one checker);
    a new commit (a new HEAD) reads it again, and the mark follows."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    memory = OpenMemory(repo.memory)
    answers.search(memory, "refund")
    first = memory.marks.checker(T0)
    answers.search(memory, "refund")
    assert memory.marks.checker(T0) is first
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)
    assert "stale:" in answers.search(memory, "refund")
    assert memory.marks.checker(T0).history is not first.history


# ------------------------------------------------------------------------------------- no git

def test_outside_a_git_repository_nothing_is_marked_and_nothing_fails(tmp_path):
    """A project that is not in a git repository: `files` is still checked and kept, search and
    compact_memory answer without a mark."""
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "pay.py").write_text("x\n")
    memory = store.memory_path(root)
    answers.log(memory, "payment", "refunds", "send the key", files=["src/pay.py"])
    put(memory, PAY)

    assert by_id(memory.read_bytes())[PAY["id"]]["files"] == ["src/pay.py"]
    assert "stale:" not in answers.search(memory, "refund")
    assert "VERIFY FIRST" not in answers.compact(memory)


def test_without_git_on_the_path_nothing_is_marked_and_nothing_fails(tmp_path, env, monkeypatch):
    """In a repository whose cited file changed, but with no `git` on PATH: no mark, no error."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    answer = answers.search(repo.memory, "refund")

    assert "send the idempotency key" in answer and "stale:" not in answer


def test_a_repository_without_commits_marks_nothing(tmp_path, env):
    """`git init` but no commit yet: nothing to compare with, no mark."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "pay.py").write_text("x\n")
    put(repo.memory, PAY)
    assert "stale:" not in answers.search(repo.memory, "refund")


# ------------------------------------------------------------------------------ the files argument

@pytest.mark.parametrize("bad, rule", [
    ("/etc/passwd", "is absolute"),
    ("../outside.py", "uses '..'"),
    ("src/../../outside.py", "uses '..'"),
    ("C:\\Windows\\win.ini", "is absolute"),
    ("link/secret.txt", "leads out of the project through a symbolic link"),
    ("src/none.py", "is not a file in the project"),
    ("src", "is a directory"),
    (".context/memory_log.jsonl", "is inside .git/ or .context/"),
    (".git/config", "is inside .git/ or .context/"),
])
def test_a_cited_path_that_is_not_a_file_inside_the_project_is_refused(tmp_path, env, bad, rule):
    """A path that leaves the project (absolute, `..`, a symbolic link out of it), or that is not
    a file in it, is refused with a message naming the path and the rule; nothing is saved."""
    repo = project(tmp_path, env)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    (repo.path / "link").symlink_to(outside)
    put(repo.memory, AUTH)
    data = repo.data()

    with pytest.raises(InvalidInput) as caught:
        answers.log(repo.memory, "payment", "refunds", "send the key", files=["src/pay.py", bad])

    message = str(caught.value)
    assert repr(bad) in message and rule in message and "Nothing was saved." in message
    assert repo.data() == data


def test_files_are_normalised_sorted_deduplicated_and_limited_to_ten(tmp_path, env):
    """Backslashes and `./` are normalised, repeats dropped and the list sorted; an empty entry and
    more than ten distinct files are refused."""
    repo = project(tmp_path, env)
    answers.log(repo.memory, "payment", "refunds", "send the key",
              files=["src\\pay.py", "./docs//notes.md", "src/pay.py"])
    assert next(iter(by_id(repo.data()).values()))["files"] == ["docs/notes.md", "src/pay.py"]
    with pytest.raises(InvalidInput, match="is empty"):
        answers.log(repo.memory, "payment", "refunds", "send the key", files=["src/pay.py", " "])

    for i in range(11):
        (repo.path / f"f{i}.txt").write_text("x\n")
    with pytest.raises(InvalidInput, match="at most 10"):
        answers.log(repo.memory, "payment", "many", "too many files", files=[f"f{i}.txt" for i in range(11)])


def test_an_upsert_with_other_files_is_an_update_and_with_the_same_is_unchanged(tmp_path, env):
    """The same record with a different files list is updated; with the same list, or with files
    omitted (which keeps the cited files), unchanged; an empty list removes them."""
    repo = project(tmp_path, env)
    args = ("payment", "refunds", "send the key")
    assert answers.log(repo.memory, *args, files=["src/pay.py"]).startswith("saved:")
    assert answers.log(repo.memory, *args, files=["src/pay.py"]).startswith("unchanged:")
    assert answers.log(repo.memory, *args).startswith("unchanged:")
    assert answers.log(repo.memory, *args, files=["src/pay.py", "src/auth.py"]).startswith("updated:")
    assert next(iter(by_id(repo.data()).values()))["files"] == ["src/auth.py", "src/pay.py"]
    assert answers.log(repo.memory, *args, files=[]).startswith("updated:")
    assert "files" not in next(iter(by_id(repo.data()).values()))


# ------------------------------------------------------------------------------------ review

def test_compact_memory_lists_stale_records_first(tmp_path, env):
    """compact_memory opens with the stale records, to verify or rewrite, before the topics; the
    stale record is also tagged in its topic's listing."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY, AUTH)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)

    answer = answers.compact(repo.memory)

    verify = answer.index("VERIFY FIRST: 1 record")
    assert verify < answer.index('Topic "auth"') < answer.index('Topic "payment"')
    assert f"log {PAY['id']} [stale: verify first]" in answer
    assert AUTH["id"] not in answer[verify:answer.index('Topic "auth"')]


def test_compact_memorys_suggested_files_follow_a_rename_as_a_refresh_does(tmp_path, env):
    """Two records of a topic cite src/pay.py, which a commit renamed to src/billing.py: the
    principle's suggested call cites src/billing.py (before, it passed only the files that still
    existed, and a principle folded from them cited neither path: no write hook or search for
    src/billing.py found it, and no later commit marked it stale)."""
    repo = project(tmp_path, env)
    second = rec("payment", "refund retries", "retry with the same key", created=T0, files=["src/pay.py", "src/auth.py"])
    put(repo.memory, PAY, second)
    repo.git("mv", "src/pay.py", "src/billing.py")
    commit_at(repo, "rename", T1)

    answer = answers.compact(repo.memory)

    topic = answer[answer.index('Topic "payment"'):]
    assert 'files=["src/auth.py", "src/billing.py"]' in topic and "src/pay.py\"" not in topic


def test_compact_memory_with_many_long_stale_records_stays_within_its_budget(tmp_path, env):
    """Forty stale logs, each with a lesson at its limit: compact_memory lists as many as half its
    budget holds, counts the rest with the command that lists them, and the whole answer stays
    within the budget, its topics' calls and how to finish included."""
    repo = project(tmp_path, env)
    cited = [f"src/connection_pool/retry_budget_and_timeouts_{n}.py" for n in range(10)]
    (repo.path / "src" / "connection_pool").mkdir()
    for name in cited:
        (repo.path / name).write_text("x = 1\n")
    commit_at(repo, "the pool", BEFORE)
    lesson = "the retry budget and the pool size interact; " * 22
    put(repo.memory, *[rec(f"topic{i % 4}", f"gap {i}", lesson[:1000], files=cited) for i in range(40)])
    for name in cited:
        (repo.path / name).write_text("x = 2\n")
    commit_at(repo, "change", T1)

    answer = answers.compact(repo.memory)

    assert estimate_tokens(answer) <= 9_000 and "How to finish" in answer
    listed = answer[answer.index("VERIFY FIRST: 40 records"):answer.index('Topic "topic0"')]
    shown = listed.count("stale: the code it cites changed")
    assert 1 <= shown < 40 and f"... and {40 - shown} more stale records" in listed and " stale` lists them all" in listed
    assert 'a principle: type="principle" with the same topic and lesson' in listed

def test_the_commands_stale_show_export_and_log_file(tmp_path, env):
    """`stale` exits 1 when no record is stale, else lists the stale ones with why; `show` and
    `export` carry the mark; `log --file` cites a file and refuses one outside the project."""
    repo = project(tmp_path, env)
    put(repo.memory, AUTH)
    none = server(env, "--project", str(repo.path), "stale")
    assert none.returncode == 1 and "No stale records" in none.stdout

    logged = server(env, "--project", str(repo.path), "log", "--topic", "payment", "--missing-context", "refunds",
                    "--lesson", "send the key", "--file", "src/pay.py", "--json")
    assert logged.returncode == 0, logged.stderr
    record = json.loads(logged.stdout)["record"]
    assert record["files"] == ["src/pay.py"]
    refused = server(env, "--project", str(repo.path), "log", "--topic", "x", "--missing-context", "y",
                     "--lesson", "z", "--file", "../elsewhere.py")
    assert refused.returncode == 2 and "'../elsewhere.py'" in refused.stderr
    (repo.path / "src" / "pay.py").write_text("changed\n")
    change = commit_at(repo, "change", FUTURE)

    stale = server(env, "--project", str(repo.path), "stale")
    assert stale.returncode == 0
    assert record["id"] in stale.stdout and AUTH["id"] not in stale.stdout
    assert f"stale: the code it cites changed after this was written: src/pay.py changed (1 commit since; " \
           f"latest {change} on 2030-01-01)" in stale.stdout
    as_json = json.loads(server(env, "--project", str(repo.path), "stale", "--json").stdout)
    assert [(r["id"], r["changes"][0]["path"], r["changes"][0]["latest"]) for r in as_json] == \
        [(record["id"], "src/pay.py", change)]
    assert "stale: " in server(env, "--project", str(repo.path), "show", record["id"][:8]).stdout
    assert "stale: " not in server(env, "--project", str(repo.path), "show", AUTH["id"][:8]).stdout
    export = server(env, "--project", str(repo.path), "export").stdout
    assert export.count("stale: ") == 1 and "- **files**: `src/pay.py`" in export


# ----------------------------------------------------------------------------------- merging

def test_the_merge_driver_keeps_the_files_field(tmp_path):
    """A record whose files one side changed and whose lesson the other changed merges field by
    field: both changes are kept, files included, and a record added with files keeps them."""
    base = rec("payment", "refunds", "send the key", created=T0, files=["src/pay.py"])
    ours = {**base, "files": ["src/pay.py", "src/refund.py"], "meta": {"created": T0, "updated": T1}}
    theirs = {**base, "lesson": "send the key, once", "meta": {"created": T0, "updated": T2}}
    added = rec("auth", "login", "keep next", created=T1, files=["src/auth.py"])
    paths = {}
    for name, records in (("base", [base]), ("ours", [ours, added]), ("theirs", [theirs])):
        paths[name] = tmp_path / name
        paths[name].write_bytes(Snapshot(records={r["id"]: Entry.of(r) for r in records}).text())

    assert drivers.merge_driver(str(paths["base"]), str(paths["ours"]), str(paths["theirs"])) == 0

    merged = by_id(paths["ours"].read_bytes())
    assert merged[base["id"]]["files"] == ["src/pay.py", "src/refund.py"]
    assert merged[base["id"]]["lesson"] == "send the key, once"
    assert merged[added["id"]]["files"] == ["src/auth.py"]


def test_a_record_citing_a_file_logged_after_a_search_in_the_same_process_is_marked(tmp_path, env):
    """A search of a memory where nothing cites a file, then log_memory of a record that does (this
    process's write hands its change to the next search), then a commit changing that file: the
    next search marks it."""
    repo = project(tmp_path, env)
    put(repo.memory, PLAIN)
    memory = OpenMemory(repo.memory)
    assert "stale:" not in answers.search(memory, "refund")
    answers.log(memory, "payment", "refunds need a key", "send the key", files=["src/pay.py"])
    assert "stale:" not in answers.search(memory, "refund")
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", FUTURE)

    assert "src/pay.py changed (1 commit since" in answers.search(memory, "refund")


def test_compact_memory_passes_the_topics_cited_files_on_to_its_principle(tmp_path, env):
    """A topic's call to save its principle carries files=[...]: the files its records cite that
    still exist, so the principle keeps the citations; a deleted one is left out."""
    repo = project(tmp_path, env)
    gone = rec("payment", "old refund path", "see src/legacy.py", created=T0, files=["src/legacy.py", "src/pay.py"])
    put(repo.memory, PAY, gone, AUTH)

    answer = answers.compact(repo.memory)

    payment = answer[answer.index('Topic "payment"'):]
    assert 'source_ids=["' in payment and payment.split("\n\n")[0].rstrip().endswith('files=["src/pay.py"])')


@pytest.mark.anyio
async def test_over_stdio_log_memory_takes_files_and_search_memory_shows_the_mark(tmp_path, env, forked_connect):
    """Through a real `python server.py` over stdio: log_memory's schema takes `files`; a path out
    of the project comes back as a tool error naming it; search_memory shows the stale line of a
    record whose cited file a later commit changed, and logging it again clears it."""
    repo = project(tmp_path, env)
    put(repo.memory, PAY)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    commit_at(repo, "change", T1)

    async with forked_connect(repo.path) as mcp:
        listed = {t.name: t for t in (await mcp.session.list_tools()).tools}
        refused = await mcp.error("log_memory", topic="x", missing_context="y", lesson="z", files=["../out.py"])
        marked = await mcp.ok("search_memory", query="refund")
        again = await mcp.ok("log_memory", topic=PAY["topic"], missing_context=PAY["missing_context"],
                             lesson=PAY["lesson"], files=["src/pay.py"])
        cleared = await mcp.ok("search_memory", query="refund")

    assert listed["log_memory"].input_schema["properties"]["files"]["anyOf"][0]["type"] == "array"
    assert "'../out.py'" in refused and "Nothing was saved." in refused
    assert "\nstale: the code it cites changed after this was written: src/pay.py changed (1 commit since" in marked
    assert again.startswith("updated:") and "clears the mark" in again
    assert "stale:" not in cleared


def test_head_is_found_through_packed_refs_and_in_a_linked_work_tree(tmp_path, env):
    """HEAD is read from the repository's files: a branch whose ref git has packed
    (`git pack-refs`), and a linked work tree (`git worktree add`, its own HEAD, the shared refs),
    both see the commit that changed the cited file."""
    repo = project(tmp_path, env)
    (repo.path / "src" / "pay.py").write_text("changed\n")
    change = commit_at(repo, "change", T1)
    repo.git("pack-refs", "--all")
    assert not (repo.path / ".git" / "refs" / "heads" / "main").exists()
    put(repo.memory, PAY)
    assert f"latest {change} on 2026-02-01" in answers.search(repo.memory, "refund")

    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    memory = store.memory_path(linked)
    put(memory, PAY)
    assert f"latest {change} on 2026-02-01" in answers.search(memory, "refund")
    (linked / "src" / "pay.py").write_text("changed on the side\n")
    side = commit_at(Repo(linked, env), "side change", T2)
    assert f"2 commits since; latest {side} on 2026-03-01" in answers.search(memory, "refund")
    assert f"1 commit since; latest {change} on 2026-02-01" in answers.search(repo.memory, "refund")
