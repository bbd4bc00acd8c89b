"""Team sharing through git (SPEC §5 conflict markers, §8 git), with REAL repositories.

Every test builds git repositories in tmp_path and drives them with the real `git` binary. The
merge driver and the diff textconv are wired the way a user wires them: `python server.py
--project REPO init`. Records are written in-process with core.memory.log, or line by line with
explicit timestamps where "the newer wins" matters. git runs with GIT_CONFIG_NOSYSTEM=1 and a
private HOME, so no system or global git config takes part.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server.py"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core import memory, store  # noqa: E402
from core.records import Entry, record_id  # noqa: E402

MARKERS = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")
T0, T1, T2, T3 = (f"2026-0{m}-01T00:00:00+00:00" for m in (1, 2, 3, 4))
MEMORY = ".context/memory_log.jsonl"


# ---------------------------------------------------------------------------------------------
# Helpers: an isolated git environment, repositories, records


@pytest.fixture
def env(tmp_path) -> dict:
    """The environment for git and server.py: no system config, a private HOME, no inherited GIT_*."""
    home = tmp_path / "git-home"
    home.mkdir()
    out = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    out.update(
        HOME=str(home), USERPROFILE=str(home), XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0", GIT_EDITOR="true", GIT_PAGER="cat",
        PYTHONUTF8="1", LC_ALL="C.UTF-8", LANG="C.UTF-8",
    )
    return out


def server(env: dict, *args: str) -> subprocess.CompletedProcess:
    """`python server.py ARGS` as a separate process; returns the completed process (text)."""
    return subprocess.run([sys.executable, str(SERVER), *args], env=env, capture_output=True, text=True,
                          encoding="utf-8", timeout=120)


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
        result = server(self.env, "--project", str(self.path), "init")
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


def make_repo(tmp_path: Path, env: dict, name: str = "repo", wired: bool = True) -> Repo:
    """A new repository on branch main with .context/ committed; `wired` runs server.py init."""
    path = tmp_path / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], env=env, check=True, capture_output=True)
    repo = Repo(path.resolve(), env)
    repo.identity()
    if wired:
        repo.init_driver()
    else:
        store.prepare_context_dir(repo.path / ".context")
    return repo


def clone(origin: Repo, tmp_path: Path, name: str, wired: bool) -> Repo:
    path = tmp_path / name
    subprocess.run(["git", "clone", "-q", str(origin.path), str(path)], env=origin.env, check=True, capture_output=True)
    repo = Repo(path.resolve(), origin.env)
    repo.identity(name.capitalize())
    if wired:
        repo.init_driver()
    return repo


def logged(path: Path, topic: str, missing_context: str, lesson: str, **kwargs) -> str:
    """core.memory.log, returning the record's id."""
    text = memory.log(path, topic, missing_context, lesson, **kwargs)
    return re.search(r"record ([0-9a-f]{16})", text).group(1)


def rec(topic: str, missing_context: str, lesson: str, created: str = T0, updated: str | None = None,
        ask: str = "", **extra) -> dict:
    """A log record with explicit timestamps (its id computed as core computes it)."""
    meta = {"created": created, **({"updated": updated} if updated else {})}
    return {"id": record_id("log", topic, missing_context, lesson), "type": "log", "topic": topic,
            "missing_context": missing_context, "lesson": lesson, "ask_next_time": ask, "meta": meta, **extra}


def put(path: Path, *records: dict) -> None:
    """Upsert whole records (explicit meta) through the store's locked atomic write."""
    store.update(path, lambda snap: {**snap.records, **{r["id"]: Entry.of(r) for r in records}})


def drop(path: Path, *ids: str) -> None:
    store.update(path, lambda snap: {k: v for k, v in snap.records.items() if k not in ids})


def mc_after(topic: str, stem: str, floor: str) -> str:
    """A missing_context whose log id sorts after `floor`: such records all land at the end of the
    sorted file, the one spot where two plain-text insertions are sure to conflict."""
    for i in range(10_000):
        candidate = f"{stem} #{i}"
        if record_id("log", topic, candidate, "") > floor:
            return candidate
    raise AssertionError("no id found")


def last_id(path: Path) -> str:
    return max(store.parse(path.read_bytes()).records)


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

    merge = repo.git("merge", "--no-edit", "feature", check=False)

    assert merge.returncode != 0 and "CONFLICT" in merge.stdout
    conflicted = repo.data().decode("utf-8")
    assert any(line.startswith("<<<<<<<") for line in conflicted.splitlines())
    assert any(line.startswith("|||||||") for line in conflicted.splitlines()) == bool(style)

    found = memory.search(repo.memory)
    assert "conflict" in found
    for lesson in ("use the theme tokens", "added on main", "added on feature", "use Inter 16px"):
        assert lesson in found
    assert "use Inter 14px" not in found
    # The deletion on feature is known: from the base section, or (two-way markers) from the
    # stages git keeps in its index while the merge is in progress.
    assert "the last record" not in found

    out = memory.log(repo.memory, "ui", "after the merge", "one more")

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


# ---------------------------------------------------------------------------------------------
# 7: doctor


def test_doctor_passes_on_a_freshly_initialised_repository(tmp_path, env):
    """After init, doctor reports every check ok and exits 0."""
    repo = make_repo(tmp_path, env)
    logged(repo.memory, "t", "m", "l")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert "git merge driver calls" in result.stdout and "git diff textconv calls" in result.stdout


@pytest.mark.parametrize("broken", ["script", "interpreter"])
def test_doctor_fails_and_names_a_missing_driver_path(tmp_path, env, broken):
    """The merge driver config pointing at a missing path: doctor exits 1 and names that path."""
    repo = make_repo(tmp_path, env)
    missing = str(tmp_path / "moved-away" / ("server.py" if broken == "script" else "python3"))
    python, script = (sys.executable, missing) if broken == "script" else (missing, str(SERVER))
    repo.git("config", "merge.sentinel-memory.driver", f"'{python}' '{script}' merge-driver %O %A %B %P")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 1, result.stdout + result.stderr
    assert missing in result.stdout and "FAIL" in result.stdout


def test_doctor_fails_and_names_a_missing_textconv_path(tmp_path, env):
    """The diff textconv pointing at a missing server.py (merge driver fine): doctor exits 1 and names it."""
    repo = make_repo(tmp_path, env)
    missing = str(tmp_path / "moved-away" / "server.py")
    repo.git("config", "diff.sentinel-memory.textconv", f"'{sys.executable}' '{missing}' textconv")

    result = server(env, "--project", str(repo.path), "doctor")

    assert result.returncode == 1, result.stdout + result.stderr
    assert missing in result.stdout


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
# 10: init


def test_init_merges_existing_config_and_is_idempotent(tmp_path, env):
    """init keeps other MCP servers and the user's rules, adds our sections once, and a second run changes nothing."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".cursor").mkdir()
    other = {"command": "node", "args": ["other-server.js"], "env": {"X": "1"}}
    (repo.path / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"other": other}, "extra": True}),
                                                    encoding="utf-8")
    (repo.path / ".cursorrules").write_text("Always answer in Korean.\n", encoding="utf-8")
    (repo.path / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n", encoding="utf-8")

    first = server(env, "--project", str(repo.path), "init", "--agents-md")

    assert first.returncode == 0, first.stderr
    config = json.loads((repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8"))
    assert config["extra"] is True and config["mcpServers"]["other"] == other
    ours = config["mcpServers"]["sentinel-memory"]
    assert ours["command"] == sys.executable
    assert ours["args"] == [str(SERVER), "--project", "${workspaceFolder}"]
    assert Path(ours["cwd"]) == repo.path
    assert "kept other" in first.stdout
    rules = (repo.path / ".cursorrules").read_text(encoding="utf-8")
    assert rules.startswith("Always answer in Korean.\n")
    assert rules.count("<!-- sentinel-memory:begin -->") == 1 and rules.count("<!-- sentinel-memory:end -->") == 1
    agents = (repo.path / "AGENTS.md").read_text(encoding="utf-8")
    assert agents.startswith("# Agents\n\nRun the tests.\n") and agents.count("<!-- sentinel-memory:begin -->") == 1
    attributes = (repo.path / ".context" / ".gitattributes").read_text(encoding="utf-8")
    assert "memory_log.jsonl" in attributes and "merge=sentinel-memory" in attributes and "diff=sentinel-memory" in attributes
    assert repo.git("check-attr", "merge", "diff", "--", MEMORY).stdout.count("sentinel-memory") == 2
    driver = repo.git("config", "--local", "merge.sentinel-memory.driver").stdout
    textconv = repo.git("config", "--local", "diff.sentinel-memory.textconv").stdout
    assert str(SERVER) in driver and "merge-driver %O %A %B %P" in driver and str(SERVER) in textconv
    assert "configured git merge and diff drivers" in first.stdout
    snapshot = {p: p.read_bytes() for p in (repo.path / ".cursor" / "mcp.json", repo.path / ".cursorrules",
                                            repo.path / "AGENTS.md", repo.path / ".git" / "config")}

    second = server(env, "--project", str(repo.path), "init", "--agents-md")

    assert second.returncode == 0, second.stderr
    reported = [line for line in second.stdout.splitlines() if line.strip()]
    assert reported and all(line.startswith("unchanged") for line in reported), second.stdout
    assert {p: p.read_bytes() for p in snapshot} == snapshot


def test_init_refreshes_an_edited_section_and_keeps_the_users_text(tmp_path, env):
    """A hand-edited copy of our .cursorrules section is refreshed between the markers; the user's text around it stays."""
    repo = make_repo(tmp_path, env)
    rules = repo.path / ".cursorrules"
    fresh = rules.read_text(encoding="utf-8")
    begin, end = "<!-- sentinel-memory:begin -->", "<!-- sentinel-memory:end -->"
    edited = "Mine, before.\n" + begin + "\nstale text\n" + end + "\nMine, after.\n"
    rules.write_text(edited, encoding="utf-8")

    result = server(env, "--project", str(repo.path), "init")

    assert "updated our section" in result.stdout
    text = rules.read_text(encoding="utf-8")
    assert text.startswith("Mine, before.\n") and text.endswith("Mine, after.\n") and "stale text" not in text
    assert fresh.strip() in text and text.count(begin) == 1


def test_init_repoints_a_stale_driver_and_leaves_invalid_json_alone(tmp_path, env):
    """init rewrites driver config that points at another install, and leaves an unparseable mcp.json untouched, saying so."""
    repo = make_repo(tmp_path, env, wired=False)
    repo.git("config", "merge.sentinel-memory.driver", "'/old/python' '/old/server.py' merge-driver %O %A %B %P")
    (repo.path / ".cursor").mkdir()
    broken = '{"mcpServers": {"other": '
    (repo.path / ".cursor" / "mcp.json").write_text(broken, encoding="utf-8")

    result = server(env, "--project", str(repo.path), "init")

    assert result.returncode == 0, result.stderr
    assert "left alone" in result.stdout
    assert (repo.path / ".cursor" / "mcp.json").read_text(encoding="utf-8") == broken
    assert str(SERVER) in repo.git("config", "merge.sentinel-memory.driver").stdout


@pytest.mark.anyio
async def test_the_server_wires_the_drivers_when_it_runs_in_a_work_tree(connect, tmp_path, env):
    """A teammate who never ran init gets the driver config the first time the MCP server uses the memory."""
    repo = make_repo(tmp_path, env, wired=False)
    async with connect(repo.path, env={k: env[k] for k in ("GIT_CONFIG_NOSYSTEM", "XDG_CONFIG_HOME")}) as mcp:
        await mcp.ok("search_memory", query="anything")

    driver = repo.git("config", "--local", "merge.sentinel-memory.driver").stdout
    assert str(SERVER) in driver and "merge-driver" in driver
    assert str(SERVER) in repo.git("config", "--local", "diff.sentinel-memory.textconv").stdout


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
