"""Team sharing through git (docs/contract.md §5.5 conflict markers, §8 git), with REAL repositories.

Every test builds git repositories in tmp_path and drives them with the real `git` binary
(tests/gitrepos.py). The merge driver and the diff textconv are wired the way a user wires them:
`python server.py --project REPO init`. Records are written in-process with tools.log, or
line by line with explicit timestamps where "the newer wins" matters.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gitrepos import (  # noqa: F401  (env is a fixture)
    MARKERS, MEMORY, SERVER, T0, T1, T2, T3, Repo, build_repo, by_id, clone, drop, env, last_id, logged,
    make_repo, mc_after, put, rec, server, text_merge_conflicts,
)
from sentinel_memory.git import drivers as gitdriver  # noqa: E402
from sentinel_memory.tools import answers
from sentinel_memory.record.records import Entry, record_id  # noqa: E402


def _tree(root) -> dict[str, tuple[int, bytes]]:
    return {str(p.relative_to(root)): (p.lstat().st_mode, b"" if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("wired", [True, False], ids=["wired", "plain"])
def test_a_copied_repository_is_byte_for_byte_one_built_in_its_place(tmp_path, env, wired):
    """make_repo copies the first repository it built in this test process (git init, the
    identity, init): every file and mode of a copy is what git and init write there afresh, and
    the copy merges through the driver as a built one does."""
    make_repo(tmp_path / "first", env, wired=wired)  # builds the template when none is made yet
    copied = make_repo(tmp_path, env, name="copied", wired=wired)
    built = build_repo(tmp_path / "built", env, wired=wired)
    assert _tree(copied.path) == _tree(built.path)
    if wired:
        assert "merge-driver" in copied.git("config", "merge.sentinel-memory.driver").stdout
        assert copied.git("check-attr", "merge", "--", MEMORY).stdout.strip().endswith("sentinel-memory")


# ---------------------------------------------------------------------------------------------
# 1-5: merges through the driver


def test_both_branches_add_records_merge_cleanly_sorted_and_complete(tmp_path, env):
    """Both branches add records: the merge is clean, keeps every record, sorted, with no markers."""
    repo = make_repo(tmp_path, env)
    base = {logged(repo.memory, "auth", f"base {i}", f"base lesson {i}") for i in range(3)}
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    floor = last_id(repo.memory)
    theirs = {logged(repo.memory, "auth", mc_after("auth", f"feature {i}", floor), f"feature {i}") for i in range(3)}
    repo.commit("feature adds")
    repo.git("checkout", "-q", "main")
    ours = {logged(repo.memory, "auth", mc_after("auth", f"main {i}", floor), f"main {i}") for i in range(3)}
    repo.commit("main adds")
    assert text_merge_conflicts(repo, repo.show("main~1"), repo.show("main"), repo.show("feature"))

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert set(by_id(repo.data())) == base | ours | theirs
    assert repo.git("status", "--porcelain").stdout == ""


def test_both_branches_create_the_file_in_a_path_with_spaces_quotes_and_korean(tmp_path, env):
    """Both branches create the memory file (add/add, empty base) in a repository whose path has spaces, a quote and Korean: merged by id."""
    repo = make_repo(tmp_path, env, name="my repo 'quoted' 한글")
    repo.commit("no memory yet")
    repo.git("checkout", "-q", "-b", "feature")
    theirs = logged(repo.memory, "x", "feature", "from feature")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    ours = logged(repo.memory, "x", "main", "from main")
    repo.commit("main")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert set(by_id(repo.data())) == {ours, theirs}


def test_compaction_on_one_branch_keeps_a_correction_made_on_the_other(tmp_path, env):
    """One branch compacts logs into a principle while the other corrects one of them: the correction survives next to the principle."""
    repo = make_repo(tmp_path, env)
    ids = [logged(repo.memory, "auth", f"context {i}", f"lesson {i}", ask_next_time=f"q{i}?") for i in range(3)]
    logged(repo.memory, "billing", "vat", "check the VAT table")
    repo.commit("three auth logs")
    repo.git("checkout", "-q", "-b", "fix")
    assert logged(repo.memory, "auth", "context 1", "lesson 1, corrected: tokens expire after 15 min") == ids[1]
    repo.commit("correct one log")
    repo.git("checkout", "-q", "main")
    principle = logged(repo.memory, "auth", "", "Always check token lifetime and scopes first.",
                       type="principle", source_ids=ids)
    repo.commit("compact auth")

    merge = repo.git("merge", "--no-edit", "fix", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    records = by_id(repo.data())
    assert principle in records and records[principle]["type"] == "principle"
    assert records[ids[1]]["lesson"] == "lesson 1, corrected: tokens expire after 15 min"
    assert ids[0] not in records and ids[2] not in records
    assert sorted(r["topic"] for r in records.values()) == ["auth", "auth", "billing"]


@pytest.mark.parametrize("newer_on", ["ours", "theirs"])
def test_both_branches_change_the_same_lesson_the_newer_wins(tmp_path, env, newer_on):
    """Both branches change one record's lesson: the version with the newer meta.updated wins, whichever side it is on."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("deploy", "staging url", "use staging-1"), rec("deploy", "other", "untouched"))
    repo.commit("base")
    stamps = {"ours": T1, "theirs": T1, newer_on: T2}
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory, rec("deploy", "staging url", "use staging-THEIRS", updated=stamps["theirs"]))
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    put(repo.memory, rec("deploy", "staging url", "use staging-OURS", updated=stamps["ours"]))
    repo.commit("ours")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    record = by_id(repo.data())[record_id("log", "deploy", "staging url", "")]
    assert record["lesson"] == f"use staging-{newer_on.upper()}"
    assert record["meta"] == {"created": T0, "updated": T2}


def test_both_branches_add_one_record_with_different_lessons_and_the_merge_says_so(tmp_path, env):
    """Two teammates log the same topic and missing context (one id) with different lessons: the
    merge keeps the newer one's text (contract §8.2) and says on git's output which record lost a
    lesson, so nobody reads the merge as if both were kept; a record added alike is not named."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("deploy", "other", "untouched"))
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory, rec("auth", "token expiry", "bob: cache the token for 55 minutes", created=T2),
        rec("same", "twin", "added alike"))
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    put(repo.memory, rec("auth", "token expiry", "alice: refresh tokens before batch jobs", created=T1),
        rec("same", "twin", "added alike"))
    repo.commit("ours")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    rid = record_id("log", "auth", "token expiry", "")
    assert by_id(repo.data())[rid]["lesson"] == "bob: cache the token for 55 minutes"
    said = merge.stdout + merge.stderr
    assert f"both sides added record {rid} (topic 'auth'" in said and "the newer one's text was kept" in said
    assert record_id("log", "same", "twin", "") not in said

def _diverge_for_symmetry(repo: Repo) -> None:
    """main and feature change the same records in overlapping ways (feature in two commits)."""
    r1 = rec("api", "rate limit", "100 per minute")
    r2 = rec("api", "pagination", "cursor based")
    r3 = rec("api", "auth header", "Bearer token")
    r4 = rec("api", "retries", "3 retries")
    put(repo.memory, r1, r2, r3, r4)
    repo.commit("base")
    floor = last_id(repo.memory)
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory,
        rec("api", "rate limit", "feature: 60 per minute", updated=T1, ask="which plan?"),
        rec("api", "auth header", "feature: X-Api-Key", updated=T2))  # same stamp as main: a tie
    repo.commit("feature 1")
    drop(repo.memory, r2["id"])
    put(repo.memory, rec("api", mc_after("api", "feature new", floor), "added on feature", created=T1))
    repo.commit("feature 2")
    repo.git("checkout", "-q", "main")
    put(repo.memory,
        rec("api", "rate limit", "main: 120 per minute", updated=T2),
        rec("api", "auth header", "main: Authorization", updated=T2),
        rec("api", "retries", "5 retries with backoff", updated=T3))
    put(repo.memory, rec("api", mc_after("api", "main new", floor), "added on main", created=T2))
    repo.commit("main 1")


def _four_ways(repo: Repo) -> dict[str, bytes]:
    """The memory file after merging either way round and rebasing either way round."""
    results = {}
    for name, start, other, how in (("main<-feature", "main", "feature", "merge"),
                                    ("feature<-main", "feature", "main", "merge"),
                                    ("feature rebased on main", "feature", "main", "rebase"),
                                    ("main rebased on feature", "main", "feature", "rebase")):
        repo.git("checkout", "-q", "-B", f"try-{len(results)}", start)
        args = ["merge", "--no-edit", other] if how == "merge" else ["rebase", other]
        result = repo.git(*args, check=False)
        assert result.returncode == 0, f"{name}: {result.stdout}{result.stderr}"
        results[name] = repo.data()
    return results


def test_merging_either_way_and_rebasing_give_identical_bytes(tmp_path, env):
    """Merging A into B, B into A, and rebasing either onto the other all give the same memory-file bytes."""
    repo = make_repo(tmp_path, env)
    _diverge_for_symmetry(repo)

    results = _four_ways(repo)

    assert len(set(results.values())) == 1, {k: v.decode() for k, v in results.items()}
    records = by_id(next(iter(results.values())))
    rate = records[record_id("log", "api", "rate limit", "")]
    assert (rate["lesson"], rate["ask_next_time"], rate["meta"]["updated"]) == ("main: 120 per minute", "which plan?", T2)
    assert record_id("log", "api", "pagination", "") not in records
    assert records[record_id("log", "api", "retries", "")]["lesson"] == "5 retries with backoff"
    assert {r["lesson"] for r in records.values()} >= {"added on main", "added on feature"}


def test_unknown_fields_added_on_both_sides_merge_to_identical_bytes_either_way(tmp_path, env):
    """Both sides change one record and each adds its own unknown field: both fields are kept, and the bytes do not depend on the merge direction."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("ci", "cache", "cache pip"))
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory, rec("ci", "cache", "cache pip and npm", updated=T1, x_reviewed_by="kim"))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    put(repo.memory, rec("ci", "cache", "cache pip", ask="which runner?", updated=T2, x_source="retro"))
    repo.commit("main")

    results = _four_ways(repo)

    record = by_id(results["main<-feature"])[record_id("log", "ci", "cache", "")]
    assert (record["x_reviewed_by"], record["x_source"]) == ("kim", "retro")
    assert (record["lesson"], record["ask_next_time"]) == ("cache pip and npm", "which runner?")
    orders = {name: [k for k in json.loads(data)] for name, data in results.items()}
    assert len(set(results.values())) == 1, f"key order depends on the direction: {orders}"


def test_cherry_pick_and_stash_pop_use_the_driver(tmp_path, env):
    """cherry-pick and `git stash pop` merge the memory file by id: insertions at the same spot do not conflict."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "db", "migrations", "run migrations before tests")
    repo.commit("base")
    floor = last_id(repo.memory)
    repo.git("checkout", "-q", "-b", "feature")
    picked = logged(repo.memory, "db", mc_after("db", "feature pick", floor), "from feature")
    repo.commit("feature record")
    repo.git("checkout", "-q", "main")
    mine = logged(repo.memory, "db", mc_after("db", "main", floor), "from main")
    repo.commit("main record")
    assert text_merge_conflicts(repo, repo.show("main~1"), repo.show("main"), repo.show("feature"))

    pick = repo.git("cherry-pick", "feature", check=False)

    assert pick.returncode == 0, pick.stdout + pick.stderr
    assert {picked, mine} <= set(by_id(repo.data()))

    # stash: an uncommitted record, while a commit adds another at the same spot
    floor = last_id(repo.memory)
    stashed = logged(repo.memory, "db", mc_after("db", "stashed", floor), "from the stash")
    repo.git("stash", "push", "-q")
    committed = logged(repo.memory, "db", mc_after("db", "committed", floor), "committed meanwhile")
    repo.commit("meanwhile")
    assert text_merge_conflicts(repo, repo.show("stash@{0}^1"), repo.show("HEAD"), repo.show("stash@{0}"))

    pop = repo.git("stash", "pop", check=False)

    assert pop.returncode == 0, pop.stdout + pop.stderr
    assert {picked, mine, stashed, committed} <= set(by_id(repo.data()))
    assert repo.git("stash", "list").stdout == ""


# ---------------------------------------------------------------------------------------------
# 6: a teammate without the driver


def diverge(repo: Repo, gone: str) -> tuple[str, str]:
    """Branch "feature" deletes `gone`, adds a record and sets the font lesson (newer); "main" adds a
    record and sets the font lesson (older). Returns the ids (ours, theirs) added on main and feature."""
    floor = last_id(repo.memory)
    repo.git("checkout", "-q", "-b", "feature")
    drop(repo.memory, gone)
    theirs = logged(repo.memory, "ui", mc_after("ui", "theirs", floor), "added on feature")
    put(repo.memory, rec("ui", "font", "use Inter 16px", updated=T2))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    ours = logged(repo.memory, "ui", mc_after("ui", "ours", floor), "added on main")
    put(repo.memory, rec("ui", "font", "use Inter 14px", updated=T1))
    repo.commit("main")
    return ours, theirs


@pytest.mark.parametrize("style", [None, "diff3", "zdiff3"])
def test_teammate_without_the_driver_gets_markers_that_the_loader_merges(tmp_path, env, style):
    """Without the driver git writes conflict markers; search reads the merged view and the next log stores a marker-free file."""
    origin = make_repo(tmp_path, env, "origin")
    keep = logged(origin.memory, "ui", "dark mode", "use the theme tokens")
    changed = rec("ui", "font", "use Inter")
    put(origin.memory, changed)
    floor = last_id(origin.memory)
    gone = logged(origin.memory, "ui", mc_after("ui", "last", floor), "the last record")
    origin.commit("base")
    repo = clone(origin, tmp_path, "teammate", wired=False)
    assert repo.git("config", "--get", "merge.sentinel-memory.driver", check=False).stdout == ""
    if style:
        repo.git("config", "merge.conflictStyle", style)
    ours, theirs = diverge(repo, gone)

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode != 0 and "CONFLICT" in merge.stdout
    conflicted = repo.data().decode("utf-8")
    assert any(line.startswith("<<<<<<<") for line in conflicted.splitlines())
    assert any(line.startswith("|||||||") for line in conflicted.splitlines()) == bool(style)

    found = answers.search(repo.memory)
    assert "conflict" in found
    for lesson in ("use the theme tokens", "added on main", "added on feature", "use Inter 16px"):
        assert lesson in found
    assert "use Inter 14px" not in found
    # The deletion on feature is known: from the base section, or (two-way markers) from the
    # stages git keeps in its index while the merge is in progress.
    assert "the last record" not in found

    out = answers.log(repo.memory, "ui", "after the merge", "one more")

    assert "conflict" in out and ".conflicted" in out
    records = by_id(repo.data())
    expected = {keep, changed["id"], ours, theirs, record_id("log", "ui", "after the merge", "")}
    assert set(records) == expected
    assert records[changed["id"]]["lesson"] == "use Inter 16px"
    copies = list(repo.memory.parent.glob("*.conflicted"))
    assert len(copies) == 1 and copies[0].read_text(encoding="utf-8") == conflicted
    assert repo.git("check-ignore", "-q", str(copies[0]), check=False).returncode == 0
    repo.git("add", MEMORY)
    repo.git("commit", "-q", "--no-edit")
    assert repo.git("status", "--porcelain").stdout == ""


def test_two_way_markers_committed_without_the_driver_keep_every_record_the_newer_per_id(tmp_path, env):
    """Plain two-way markers committed by a teammate without the driver: every record of both sides is read, the newer version per id; the next write stores a clean file and keeps a git-ignored copy."""
    origin = make_repo(tmp_path, env, "origin")
    keep = logged(origin.memory, "ui", "dark mode", "use the theme tokens")
    put(origin.memory, rec("ui", "font", "use Inter"))
    floor = last_id(origin.memory)
    gone = logged(origin.memory, "ui", mc_after("ui", "last", floor), "deleted on feature")
    origin.commit("base")
    repo = clone(origin, tmp_path, "teammate", wired=False)
    ours, theirs = diverge(repo, gone)
    assert repo.git("merge", "--no-edit", "feature", check=False).returncode != 0
    repo.git("add", MEMORY)
    repo.git("commit", "-q", "--no-edit")  # the markers are now history: git's index holds no stages
    conflicted = repo.data().decode("utf-8")
    assert "<<<<<<<" in conflicted and "|||||||" not in conflicted
    assert repo.git("ls-files", "-u").stdout == ""
    gitdriver.configure(repo.path, sys.executable, str(SERVER))  # the teammate wires the drivers later
    review = repo.git("diff", "HEAD~1", "HEAD", "--", MEMORY).stdout
    assert "+GIT CONFLICT MARKERS IN THE FILE: 1 region, shown merged by id" in review

    found = answers.search(repo.memory)

    for lesson in ("use the theme tokens", "added on main", "added on feature", "use Inter 16px"):
        assert lesson in found
    assert "use Inter 14px" not in found
    # Two-way markers cannot tell a deletion from an addition: the record deleted on feature is
    # read again (documented; the next compaction folds it in) rather than risk losing one.
    assert "deleted on feature" in found

    out = answers.log(repo.memory, "ui", "after the merge", "one more")

    assert ".conflicted" in out
    records = by_id(repo.data())
    assert set(records) == {keep, gone, ours, theirs, rec("ui", "font", "")["id"],
                            record_id("log", "ui", "after the merge", "")}
    assert records[rec("ui", "font", "")["id"]]["lesson"] == "use Inter 16px"
    copies = list(repo.memory.parent.glob("*.conflicted"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [conflicted]
    assert repo.git("check-ignore", "-q", str(copies[0]), check=False).returncode == 0
    assert repo.git("status", "--porcelain").stdout.strip() == f"M {MEMORY}"


def test_a_moved_install_still_merges_with_both_sides_kept_and_git_diff_still_works(tmp_path, env):
    """The driver's interpreter no longer exists (the install moved): git still writes both sides with diff3 markers, which the loader merges exactly; `git diff` shows the raw lines instead of failing; init plus `git checkout -m` redoes the merge by id."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("api", "timeout", "30 s"))
    floor = last_id(repo.memory)
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    theirs = logged(repo.memory, "api", mc_after("api", "theirs", floor), "added on feature")
    put(repo.memory, rec("api", "timeout", "60 s", updated=T2))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    ours = logged(repo.memory, "api", mc_after("api", "ours", floor), "added on main")
    repo.commit("main")
    moved = str(tmp_path / "moved-away" / "python3")
    for key, value in gitdriver.driver_commands(moved, str(SERVER)).items():
        repo.git("config", key, value)

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode != 0 and "the merge driver did not run" in merge.stderr
    assert "Run sentinel-memory doctor" in merge.stderr  # the command a teammate has on PATH
    text = repo.data().decode("utf-8")
    assert all(any(line.startswith(m) for line in text.splitlines()) for m in MARKERS), text
    assert ours in text and theirs in text
    found = answers.search(repo.memory)
    assert "added on main" in found and "added on feature" in found and "60 s" in found

    diff = repo.git("diff", "HEAD~1", "HEAD", "--", MEMORY)
    assert f'"id": "{ours}"' in diff.stdout and "not found" in diff.stderr

    repo.init_driver()
    repo.git("checkout", "-m", "--", MEMORY)

    records = by_id(repo.data())
    assert {ours, theirs} <= set(records) and records[rec("api", "timeout", "")["id"]]["lesson"] == "60 s"
    repo.git("add", MEMORY)
    repo.git("commit", "-q", "--no-edit")
    diff = repo.git("diff", "HEAD^2", "HEAD", "--", MEMORY)
    assert "+  lesson: added on main" in diff.stdout and diff.stderr == ""


# ---------------------------------------------------------------------------------------------
# 8: 10,000 records


def test_ten_thousand_record_merge_through_the_driver_is_correct(tmp_path, env):
    """A merge of two branches of a 10,000-record file through the driver completes and follows every rule."""
    repo = make_repo(tmp_path, env)
    base = {}
    for i in range(10_000):
        r = rec(f"topic-{i % 50}", f"context number {i}", f"lesson number {i} — 한국어 교훈 {i}")
        base[r["id"]] = r
    ids = sorted(base)

    def write(changes: dict, deleted: set, added: dict) -> None:
        records = {rid: r for rid, r in {**base, **changes, **added}.items() if rid not in deleted}
        repo.memory.write_bytes(b"".join(Entry.of(records[rid]).data for rid in sorted(records)))

    def changed(rid: str, lesson: str, stamp: str) -> dict:
        return {**base[rid], "lesson": lesson, "meta": {"created": T0, "updated": stamp}}

    write({}, set(), {})
    repo.commit("10k base")
    ours_changed = {rid: changed(rid, "ours " + rid, T1) for rid in ids[0:300]}
    theirs_changed = {rid: changed(rid, "theirs " + rid, T2) for rid in ids[200:500]}  # 200..299 on both: theirs newer
    ours_deleted = set(ids[1000:1100]) | set(ids[400:410])    # 400..409 changed on theirs: kept
    theirs_deleted = set(ids[1100:1200]) | set(ids[0:10])     # 0..9 changed on ours: kept
    ours_added = {r["id"]: r for r in (rec("new", f"ours added {i}", "o") for i in range(200))}
    theirs_added = {r["id"]: r for r in (rec("new", f"theirs added {i}", "t") for i in range(200))}
    repo.git("checkout", "-q", "-b", "feature")
    write(theirs_changed, theirs_deleted, theirs_added)
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    write(ours_changed, ours_deleted, ours_added)
    repo.commit("ours")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    expected = {rid: r for rid, r in base.items() if rid not in ours_deleted | theirs_deleted}
    expected.update({**ours_changed, **theirs_changed, **ours_added, **theirs_added})
    assert len(expected) == 10_000 - 200 + 400
    assert repo.data() == b"".join(Entry.of(expected[rid]).data for rid in sorted(expected))


def test_git_diff_of_one_upsert_in_a_ten_thousand_record_file_shows_only_that_change(tmp_path, env):
    """In a 10,000-record file, `git diff` of one upsert through textconv shows the old and new lesson and the new date, nothing else."""
    repo = make_repo(tmp_path, env)
    records = [rec(f"topic-{i % 50}", f"context number {i}", f"lesson number {i} — 교훈 {i}") for i in range(10_000)]
    repo.memory.write_bytes(b"".join(Entry.of(r).data for r in sorted(records, key=lambda r: r["id"])))
    repo.commit("10k")
    assert logged(repo.memory, "topic-7", "context number 7", "lesson seven, corrected — 고침") == records[7]["id"]

    diff = subprocess.run(["git", "-C", str(repo.path), "diff", "--", MEMORY], env=env, capture_output=True,
                          check=True).stdout.decode("utf-8")

    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed[:2] == ["-  lesson: lesson number 7 — 교훈 7", "+  lesson: lesson seven, corrected — 고침"]
    assert len(changed) == 3 and changed[2].startswith("+  updated: ")


# ---------------------------------------------------------------------------------------------
# 9: readable diff


def test_git_diff_of_an_upsert_shows_the_changed_lesson_readably(tmp_path, env):
    """`git diff` of an upsert shows `-  lesson: old` / `+  lesson: new` lines through textconv, Korean as itself."""
    repo = make_repo(tmp_path, env)
    rid = logged(repo.memory, "결제", "부가세가 국가마다 다름", "세율 표를 먼저 확인할 것")
    logged(repo.memory, "auth", "token", "refresh early")
    repo.commit("base")
    assert logged(repo.memory, "결제", "부가세가 국가마다 다름", "세율 표는 config/vat.json 에 있음") == rid

    diff = subprocess.run(["git", "-C", str(repo.path), "diff", "--", MEMORY], env=env, capture_output=True,
                          check=True).stdout.decode("utf-8")

    assert "\n-  lesson: 세율 표를 먼저 확인할 것\n" in diff
    assert "\n+  lesson: 세율 표는 config/vat.json 에 있음\n" in diff
    assert f"[결제] log {rid}" in diff
    assert "\\u" not in diff and '{"id"' not in diff
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert all("lesson" in line or "updated" in line for line in changed), changed


# ---------------------------------------------------------------------------------------------
# 11: unparseable input


def test_an_unparseable_side_falls_back_to_git_markers_with_both_sides(tmp_path, env):
    """A garbage line on one branch: the driver falls back to git's diff3 markers with both sides present, and the merge stops."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "x", "base", "base lesson")
    repo.commit("base")
    floor = last_id(repo.memory)
    repo.git("checkout", "-q", "-b", "feature")
    theirs = logged(repo.memory, "x", mc_after("x", "theirs", floor), "their lesson")
    repo.commit("theirs")
    repo.git("checkout", "-q", "main")
    ours = logged(repo.memory, "x", mc_after("x", "ours", floor), "our lesson")
    with repo.memory.open("ab") as handle:
        handle.write(b"this line is not json\n")
    repo.commit("ours with garbage")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode != 0 and "CONFLICT" in merge.stdout
    text = repo.data().decode("utf-8")
    for marker in MARKERS:
        assert any(line.startswith(marker) for line in text.splitlines()), text
    assert ours in text and theirs in text and "this line is not json" in text and "base lesson" in text


def test_merge_driver_command_exits_non_zero_and_keeps_both_sides_on_garbage(tmp_path, env):
    """`server.py merge-driver` on an unparseable input writes git's conflict markers with both sides into %A and exits non-zero."""
    base = Entry.of(rec("x", "base", "base lesson")).data
    ours = base + Entry.of(rec("x", "ours", "ours lesson")).data
    theirs = base + b"{broken json\n"
    paths = []
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))

    result = server(env, "merge-driver", *paths, MEMORY)

    assert result.returncode != 0
    text = (tmp_path / "ours").read_text(encoding="utf-8")
    assert "ours lesson" in text and "{broken json" in text and "base lesson" in text
    assert all(any(line.startswith(m) for line in text.splitlines()) for m in MARKERS), text
    assert MEMORY in result.stderr


def test_merge_driver_falls_back_to_markers_when_a_side_breaks_the_parser(tmp_path, env):
    """A side holding a line nested too deeply for the JSON parser: the driver does not crash with only our side in the file; it writes git's markers with both sides and exits non-zero."""
    base = Entry.of(rec("x", "base", "base lesson")).data
    ours = base + Entry.of(rec("x", "ours", "ours lesson")).data
    theirs = base + b"[" * 100_000 + b"\n"
    paths = []
    for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_bytes(data)
        paths.append(str(tmp_path / name))

    result = server(env, "merge-driver", *paths, MEMORY)

    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "has lines that are not records; using git's text merge" in result.stderr
    text = (tmp_path / "ours").read_text(encoding="utf-8")
    assert "ours lesson" in text and "[" * 100_000 in text and "base lesson" in text
    assert all(any(line.startswith(m) for line in text.splitlines()) for m in MARKERS)



def test_a_project_in_a_folder_whose_name_starts_with_a_dash_merges_by_id(tmp_path, env):
    """git hands the drivers the path of the file (%P; the work tree's file to the textconv), and a
    project in a folder named `-app` makes it start with a dash: still a path, never an option. The
    branches' records merge by id without markers, and `git diff` shows readable blocks."""
    repo = make_repo(tmp_path, env, wired=False)
    project = repo.path / "-app"
    project.mkdir()
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    memory = project / MEMORY
    logged(memory, "x", "base", "from base")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    theirs = logged(memory, "x", "feature", "from feature")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    ours = logged(memory, "x", "main", "from main")
    repo.commit("main")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert {ours, theirs} < set(by_id(memory.read_bytes()))
    logged(memory, "x", "work tree", "readable")
    diff = repo.git("diff", "--", f"-app/{MEMORY}").stdout
    assert "+[x] log " in diff and '"id"' not in diff


@pytest.mark.parametrize("nul", [b"", b"\0"], ids=["text", "a NUL byte"])
def test_lines_set_aside_on_two_branches_merge_without_a_conflict(tmp_path, env, nul):
    """Each branch's next write moves its unreadable line to the quarantine file: merging them keeps
    both lines (the file only gains lines: merge=union) and the memory, with no conflict to resolve.
    A NUL byte in a line is written as \\u0000 (before, git took the file for binary, and the
    merge stopped with a conflict that kept one side's lines only)."""
    repo = make_repo(tmp_path, env)
    quarantine = repo.memory.parent / "memory_log.quarantine.jsonl"
    logged(repo.memory, "x", "base", "from base")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.memory.write_bytes(repo.data() + b"broken" + nul + b" on feature\n")
    theirs = logged(repo.memory, "x", "feature", "from feature")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.memory.write_bytes(repo.data() + b"broken on main\n")
    ours = logged(repo.memory, "x", "main", "from main")
    repo.commit("main")

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert quarantine.read_bytes().count(b"\n") == 2
    feature = b"broken" + (b"\\u0000" if nul else b"") + b" on feature"
    assert {feature, b"broken on main"} <= set(quarantine.read_bytes().splitlines())
    assert {ours, theirs} < set(by_id(repo.data()))
    assert repo.git("status", "--porcelain").stdout == ""


def test_git_log_and_a_merge_of_lines_that_are_not_records_say_only_what_happens_there(tmp_path, env):
    """The readers' warning about lines that are not records speaks of the next write moving them
    to the quarantine file. git's copies of a revision are never written: `git log -p` shows such
    lines in the diff and says nothing on stderr, and the merge driver says once that it uses git's
    text merge."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "x", "base", "from base")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.memory.write_bytes(repo.data() + b"broken on feature\n")
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.memory.write_bytes(repo.data() + b"broken on main\n")
    repo.commit("main")

    shown = repo.git("log", "-p", "feature")
    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert "UNREADABLE LINE: broken on feature" in shown.stdout and shown.stderr == ""
    assert merge.stderr.count("sentinel-memory") == 1 and "using git's text merge" in merge.stderr
    assert "next write" not in merge.stdout + merge.stderr
