"""`review`: the memory's change between two revisions of a real git repository, by record id, as a
reviewer reads it in a terminal or a pull-request comment, and the exit status CI gates on.

Every repository is real (tmp_path, git with no system or global config) and every review a real
`python server.py review` process.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

from gitrepos import MEMORY, ROOT, T0, T1, Repo, drop, env, make_repo, put, rec, server  # noqa: F401 (env: a fixture)
from sentinel_memory.cli.review_report import COMMENT_LIMIT, MARKER
from sentinel_memory.record.records import record_id


def principle(topic: str, lesson: str, sources: int, when: str = T1) -> dict:
    return {
        "id": record_id("principle", topic, "", lesson),
        "type": "principle",
        "topic": topic,
        "missing_context": "",
        "lesson": lesson,
        "ask_next_time": "",
        "meta": {"created": when, "compacted_at": when, "source_count": sources},
    }


def fake_token() -> str:
    return "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"  # the right shape, not a real token


def commit_at(repo: Repo, message: str, date: str) -> None:
    """Commit everything with this committer (and author) date."""
    repo.git("add", "-A")
    subprocess.run(
        ["git", "-C", str(repo.path), "commit", "-q", "--no-verify", "-m", message],
        env={**repo.env, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date},
        check=True,
        capture_output=True,
    )


def review(repo: Repo, *args: str) -> subprocess.CompletedProcess:
    return server(repo.env, "--project", str(repo.path), "review", *args)


def branch(repo: Repo) -> None:
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")


def base_repo(tmp_path, env) -> Repo:
    """main with three payment lessons and one auth lesson committed; now on branch feature."""
    repo = make_repo(tmp_path, env, wired=False)
    put(
        repo.memory, *(rec("payment", f"refund rule {i}", f"refund case {i} needs a second approval") for i in range(3))
    )
    put(repo.memory, rec("auth", "token expiry", "tokens expire after an hour"))
    branch(repo)
    return repo


def test_a_branch_reads_as_lessons_added_changed_and_folded(tmp_path, env):
    """The summary comes first; a compaction lists the lessons it folded under its principle; a
    change shows the old and the new value; no flag means exit 0."""
    repo = base_repo(tmp_path, env)
    put(repo.memory, rec("db", "migrations order", "run migrations before seeding the database", created=T1))
    put(repo.memory, rec("auth", "token expiry", "tokens expire after thirty minutes", updated=T1))
    drop(repo.memory, *(rec("payment", f"refund rule {i}", "")["id"] for i in range(3)))
    put(repo.memory, principle("payment", "every refund case needs a second approval", 3))
    result = review(repo)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "1 lesson added, 1 changed, 3 folded into 1 principle, no flags"
    assert "feature" not in lines[1] and "main (merge base" in lines[1] and "the work tree" in lines[1]
    out = result.stdout
    assert "run migrations before seeding the database" in out
    assert "tokens expire after an hour -> tokens expire after thirty minutes" in out
    folded = out[out.index("Compacted") :]
    assert "every refund case needs a second approval" in folded
    for i in range(3):
        assert f"refund case {i} needs a second approval" in folded
    assert "Removed" not in out


def test_a_removal_no_principle_explains_is_listed_apart(tmp_path, env):
    repo = base_repo(tmp_path, env)
    drop(repo.memory, rec("auth", "token expiry", "")["id"])
    result = review(repo)
    assert result.stdout.splitlines()[0] == "1 removed, no flags"
    assert "Removed, no principle of their topic folded them (1)" in result.stdout
    assert "tokens expire after an hour" in result.stdout


def test_the_default_base_is_the_merge_base_not_mains_tip(tmp_path, env):
    """A lesson main gained after the branch left it is not this branch's removal."""
    repo = base_repo(tmp_path, env)
    put(repo.memory, rec("db", "pool size", "keep the pool at ten", created=T1))
    repo.commit("branch work")
    repo.git("checkout", "-q", "main")
    put(repo.memory, rec("ci", "cache key", "the cache key includes the lock file", created=T1))
    repo.commit("main moves on")
    repo.git("checkout", "-q", "feature")
    result = review(repo)
    assert result.stdout.splitlines()[0] == "1 lesson added, no flags"
    assert "cache key" not in result.stdout
    explicit = review(repo, "main")  # against main's tip, as asked
    assert explicit.stdout.splitlines()[0] == "1 lesson added, 1 removed, no flags"


def test_two_revisions_compare_commits_not_the_work_tree(tmp_path, env):
    repo = base_repo(tmp_path, env)
    put(repo.memory, rec("db", "pool size", "keep the pool at ten", created=T1))
    repo.commit("one")
    put(repo.memory, rec("db", "index", "index the foreign keys", created=T1))  # uncommitted
    result = review(repo, "main", "HEAD")
    assert result.stdout.splitlines()[0] == "1 lesson added, no flags"
    assert "index the foreign keys" not in result.stdout


def test_bad_usage_exits_2_with_one_sentence(tmp_path, env):
    repo = base_repo(tmp_path, env)
    result = review(repo, "no-such-branch")
    assert result.returncode == 2
    assert "'no-such-branch' names no commit" in result.stderr and "Traceback" not in result.stderr
    assert review(repo, "--", "-x").returncode == 2
    outside = tmp_path / "plain"
    outside.mkdir()
    result = server(env, "--project", str(outside), "review")
    assert result.returncode == 2 and "is not in a git repository" in result.stderr
    assert server(env, "review", "--format", "html").returncode == 2


def test_a_base_without_a_memory_file(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "README").write_text("x\n")
    repo.git("add", "README")
    repo.git("commit", "-q", "-m", "first")
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory, rec("db", "pool size", "keep the pool at ten"))
    result = review(repo)
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == "1 lesson added, no flags"
    assert "has no memory file: every record is new" in result.stdout


def test_a_credential_like_value_is_flagged_and_never_shown(tmp_path, env):
    """Written past the redaction (a hand edit, an older install): the flag names the record, the
    field and the rule; neither output holds the value, on either side."""
    repo = base_repo(tmp_path, env)
    token = fake_token()
    put(repo.memory, rec("deploy", "ci token", f"the deploy job uses {token} for the registry", created=T1))
    put(repo.memory, rec(f"auth {token}", "pasted", "a token pasted as a topic", created=T1))  # beside 'auth'

    with repo.memory.open("ab") as f:
        f.write(f"broken line with {token}\n".encode())
    result = review(repo)
    assert result.returncode == 1
    flagged = rec("deploy", "ci token", "")["id"]
    assert f"credential-like value: {flagged} lesson looks like" in result.stdout
    assert "a line new in memory_log.jsonl that is not a record looks like" in result.stdout
    assert "new topic beside a similar one: 'auth [REDACTED]'" in result.stdout
    assert token not in result.stdout
    markdown = review(repo, "--format", "markdown")
    assert markdown.returncode == 1 and token not in markdown.stdout and "REDACTED" in markdown.stdout
    repo.commit("leak")  # removing it later: shown redacted, and removal is no flag
    drop(repo.memory, flagged)
    repo.memory.write_bytes(
        b"".join(line + b"\n" for line in repo.memory.read_bytes().splitlines() if b"broken" not in line)
    )
    later = review(repo, "HEAD")
    assert later.returncode == 0 and token not in later.stdout and "1 removed" in later.stdout


def test_a_credential_in_an_id_a_cited_path_or_meta_is_flagged_and_never_shown(tmp_path, env):
    """A hand-written record may hold a key outside its text fields: in its id, a cited path, a meta
    value. Each is flagged where it is, as `scan` finds it, and neither output holds it."""
    repo = base_repo(tmp_path, env)
    token = fake_token()
    in_files = rec("files", "a key in a path", "l", created=T1, files=[f"src/{token}.py"])
    in_meta = rec("meta", "a key in meta", "l", created=T1)
    in_meta["meta"]["by"] = token
    in_id = {**rec("idtok", "a key as the id", "l", created=T1), "id": token}
    with repo.memory.open("a", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in (in_files, in_meta, in_id)))
    result = review(repo)
    assert result.returncode == 1
    for where in (f"{in_files['id']} files[0]", f"{in_meta['id']} meta.by", "[REDACTED] id"):
        assert f"credential-like value: {where} looks like github_token" in result.stdout, result.stdout
    assert token not in result.stdout and token not in review(repo, "--format", "markdown").stdout


def test_the_markdown_report_stays_within_max_chars_whatever_the_records_hold(tmp_path, env):
    """Records whose field names and types this version does not know, each a long name: the note
    that lists them went past --max-chars (102,800 characters for 5,000). Every limit holds now."""
    repo = base_repo(tmp_path, env)
    odd = []
    for i in range(60):
        record = rec("odd", f"unknown shapes {i}", "l", created=T1)
        record[f"field_{i}_" + "x" * 900] = "v"
        record["type"] = f"kind_{i}_" + "y" * 900
        odd.append(json.dumps(record) + "\n")
    with repo.memory.open("a", encoding="utf-8") as f:
        f.write("".join(odd))
    for limit in (65_536, 5_000, 400):
        out = review(repo, "--format", "markdown", "--max-chars", str(limit)).stdout
        assert len(out) <= limit, (limit, len(out))
    assert "review` in a clone shows everything" in review(repo, "--format", "markdown", "--max-chars", "5000").stdout


def test_a_cited_file_missing_at_head_and_a_lesson_this_change_made_stale(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    for name in ("pay.py", "old.py", "auth.py"):
        (repo.path / "src" / name).write_text("x = 1\n")
    put(repo.memory, rec("payment", "refunds", "refunds go through src/pay.py", files=["src/pay.py"]))
    put(repo.memory, rec("auth", "login", "login lives in src/auth.py", files=["src/auth.py"]))
    commit_at(repo, "base", "2025-12-01T00:00:00+00:00")  # before the records (T0)
    (repo.path / "src" / "auth.py").write_text("x = 2\n")
    commit_at(repo, "auth changed before the branch", "2026-01-15T00:00:00+00:00")  # stale at the base already
    repo.git("checkout", "-q", "-b", "feature")
    put(repo.memory, rec("legacy", "old module", "src/old.py is kept for the v1 API", files=["src/old.py"], created=T1))
    repo.git("rm", "-q", "src/old.py")
    (repo.path / "src" / "pay.py").write_text("x = 2\n")
    commit_at(repo, "branch", "2026-02-15T00:00:00+00:00")  # after T1
    result = review(repo)
    assert result.returncode == 1
    legacy, pay, auth = (
        rec(t, m, "")["id"] for t, m in (("legacy", "old module"), ("payment", "refunds"), ("auth", "login"))
    )
    assert f"cited file missing at HEAD: {legacy} cites src/old.py, which is not at HEAD" in result.stdout
    assert f"stale at HEAD: {pay} src/pay.py changed (1 commit since" in result.stdout
    assert f"stale at HEAD: {auth}" not in result.stdout
    assert f"stale at HEAD: {legacy}" not in result.stdout  # said once, as missing


def test_a_lesson_stale_already_is_flagged_when_this_change_deletes_its_file(tmp_path, env):
    """A lesson marked stale at the base for an edit of its file: a branch that edits the file again
    adds no flag, one that deletes it does (its reason got worse, and the reviewer is told)."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "auth.py").write_text("x = 1\n")
    put(repo.memory, rec("auth", "login", "login lives in src/auth.py", files=["src/auth.py"]))
    commit_at(repo, "base", "2025-12-01T00:00:00+00:00")
    (repo.path / "src" / "auth.py").write_text("x = 2\n")
    commit_at(repo, "auth changed before the branch", "2026-01-15T00:00:00+00:00")
    auth = rec("auth", "login", "")["id"]
    repo.git("checkout", "-q", "-b", "edit")
    (repo.path / "src" / "auth.py").write_text("x = 3\n")
    commit_at(repo, "edited again", "2026-02-15T00:00:00+00:00")
    assert f"stale at HEAD: {auth}" not in review(repo, "main").stdout
    repo.git("checkout", "-q", "-b", "delete", "main")
    repo.git("rm", "-q", "src/auth.py")
    commit_at(repo, "deleted", "2026-02-16T00:00:00+00:00")
    result = review(repo, "main")
    assert result.returncode == 1 and f"stale at HEAD: {auth} src/auth.py was deleted" in result.stdout


def test_a_near_duplicate_and_a_topic_beside_a_similar_one(tmp_path, env):
    repo = base_repo(tmp_path, env)
    put(
        repo.memory,
        rec("payments", "refund rule nine", "refund case 1 needs a second approval always", created=T1),
    )
    result = review(repo)
    assert result.returncode == 1
    added = rec("payments", "refund rule nine", "")["id"]
    assert f"near-duplicate: {added} shares" in result.stdout
    assert (
        "new topic beside a similar one: 'payments' (1 record) is new; the memory already has 'payment'"
        in result.stdout
    )
    assert result.stdout.splitlines()[0] == "1 lesson added, 2 flags"


def test_conflict_markers_and_unreadable_lines_on_either_side(tmp_path, env):
    """Both sides are read by the product's reader: markers merged by id, lines that are not records
    left out and counted; new ones at HEAD are flagged, the base's only noted."""
    repo = make_repo(tmp_path, env, wired=False)
    a, b, c = (rec("t", f"m{i}", f"lesson {i}") for i in range(3))
    line = {r["id"]: json.dumps(r) for r in (a, b, c)}
    repo.memory.write_text(f"{line[a['id']]}\nnot json at the base\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.memory.write_text(
        f"{line[a['id']]}\n<<<<<<< ours\n{line[b['id']]}\n=======\n{line[c['id']]}\n>>>>>>> theirs\n{{half a line\n"
    )
    result = review(repo)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0] == "2 lessons added, 2 flags"
    assert "holds git conflict markers in the memory file" in result.stdout
    assert "1 new line(s) in the memory file are not records" in result.stdout
    assert "1 line(s) that are not records, left out of the comparison" in result.stdout  # the base's, noted


def test_a_renamed_context_folder_is_said(tmp_path, env):
    repo = base_repo(tmp_path, env)
    repo.git("mv", ".context", ".ctx")
    put(repo.path / ".ctx" / "memory_log.jsonl", rec("db", "pool", "keep the pool at ten", created=T1))
    repo.commit("rename")
    result = review(repo)
    assert result.returncode == 1
    assert "1 lesson added" in result.stdout.splitlines()[0]  # compared with the moved file, not all removed
    assert f"the memory file is at .ctx/memory_log.jsonl in the work tree, not at {MEMORY}" in result.stdout
    back = review(repo, "HEAD", "main")  # the other way: the base holds it elsewhere
    assert "holds the memory at .ctx/memory_log.jsonl, not at .context/memory_log.jsonl" in back.stdout


def test_a_shallow_clone_says_what_it_could_not_see(tmp_path, env):
    origin = base_repo(tmp_path, env)
    origin.git("checkout", "-q", "main")
    put(origin.memory, rec("ci", "cache", "cache the wheels", created=T1))
    origin.commit("main moves on")
    origin.git("checkout", "-q", "feature")
    put(origin.memory, rec("db", "pool", "keep the pool at ten", created=T1))
    origin.commit("branch")
    origin.git("checkout", "-q", "main")  # the clone's origin/HEAD
    path = tmp_path / "shallow"
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            "-b",
            "feature",
            f"file://{origin.path}",
            str(path),
        ],
        env=env,
        check=True,
    )
    result = server(env, "--project", str(path), "review")
    assert result.returncode == 0, result.stderr
    assert "this clone is shallow and does not hold the merge base of HEAD and origin/main" in result.stdout
    assert "records origin/main gained after the branch left it show as removed" in result.stdout
    assert result.stdout.splitlines()[0] == "1 lesson added, 1 removed, no flags"


def test_a_thousand_changed_records_stay_within_a_comment(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)

    def lesson(i: int) -> str:  # words of its own, so that no two records are near-duplicates
        return " ".join(hashlib.sha256(f"{i}-{j}".encode()).hexdigest()[:7] for j in range(60))

    put(repo.memory, *(rec(f"topic{i % 40}", f"context {i}", lesson(i)) for i in range(1000)))
    branch(repo)
    put(repo.memory, *(rec(f"topic{i % 40}", f"context {i}", lesson(i) + " revised", updated=T1) for i in range(1000)))
    result = review(repo, "--format", "markdown")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert len(text) <= COMMENT_LIMIT
    assert text.splitlines()[1] == "### Memory review: 1,000 changed, no flags"
    assert "<details>" in text and text.count("<details>") == text.count("</details>")
    assert "_Left out to stay within a comment's 65,536 characters: " in text
    shown = text.count("- **lesson**")
    assert 20 < shown < 1000
    assert f"{1000 - shown:,} of 1,000 changed" in text
    smaller = review(repo, "--format", "markdown", "--max-chars", "20000")
    assert len(smaller.stdout) <= 20000 and "Left out" in smaller.stdout


def test_korean_text_is_measured_by_its_display_width(tmp_path, env):
    """A change that fits a terminal line stays on one line; Korean of the same length in characters
    takes twice the columns and goes on two."""
    repo = make_repo(tmp_path, env, wired=False)
    old_ko, new_ko = "환불은 승인이 두 번 필요하다. 부분 환불도 같다", "환불은 승인이 세 번 필요하다. 부분 환불도 같다"
    old_en, new_en = "refunds need two approvals.", "refunds need three approval"
    assert len(old_en) == len(old_ko) and len(new_en) == len(new_ko)  # the same length in characters
    put(repo.memory, rec("결제", "환불", old_ko), rec("pay", "refund", old_en))
    branch(repo)
    put(repo.memory, rec("결제", "환불", new_ko), rec("pay", "refund", new_en))
    result = review(repo)
    assert f"  lesson: {old_en} -> {new_en}\n" in result.stdout
    assert f"  lesson:\n    - {old_ko}\n    + {new_ko}\n" in result.stdout
    assert "[결제] log" in result.stdout


def test_records_of_a_newer_format_are_compared_as_they_are(tmp_path, env):
    repo = base_repo(tmp_path, env)
    newer = {**rec("ci", "runner", "pin the runner image"), "type": "rule", "format_version": 2}
    newer["id"] = "00ff00ff00ff00ff"
    put(repo.memory, newer)
    repo.commit("newer")
    put(repo.memory, {**newer, "format_version": 3, "meta": {**newer["meta"], "confidence": 0.9}})
    odd = {"id": "0abc0abc0abc0abc", "type": "log", "topic": 7, "lesson": ["a", "list"], "meta": "x", "files": "a.py"}
    result = review(repo, "HEAD")
    assert result.returncode == 0, result.stderr
    put(repo.memory, odd)  # values of shapes no version writes: shown as they are, nothing fails
    odd_result = review(repo, "HEAD")
    assert odd_result.returncode == 0, odd_result.stderr
    assert "1 lesson added, 1 changed" in odd_result.stdout.splitlines()[0]
    assert review(repo, "HEAD", "--format", "markdown").returncode == 0
    drop(repo.memory, odd["id"])
    result = review(repo, "HEAD")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "1 changed, no flags"
    assert "format_version: 2 -> 3" in result.stdout and "meta.confidence: (none) -> 0.9" in result.stdout
    assert (
        "1 record(s) carry what this version of sentinel-memory does not know (type rule; fields format_version, meta.confidence)"
        in result.stdout
    )
    markdown = review(repo, "HEAD", "--format", "markdown")
    assert "**rule** `00ff00ff00ff00ff`" in markdown.stdout


def test_markdown_shows_text_as_text(tmp_path, env):
    """A lesson cannot close the report's sections, inject HTML or mention someone."""
    repo = base_repo(tmp_path, env)
    put(repo.memory, rec("web", "escaping", "ask @octocat; </details><script>x()</script> **bold**", created=T1))
    text = review(repo, "--format", "markdown").stdout
    assert "</details><script>" not in text and "@octocat" not in text
    assert "&lt;/details&gt;&lt;script&gt;" in text and "\\*\\*bold\\*\\*" in text


def test_a_cited_path_holding_backticks_cannot_end_its_code_span(tmp_path, env):
    """A path is shown as inline code, fenced by more backticks than it holds in a row: a path with
    a double backtick cannot close the span and have what follows read as Markdown (a mention)."""
    repo = base_repo(tmp_path, env)
    odd = "a``b @octocat </details>.py"
    put(repo.memory, rec("web", "odd path", "quote it", created=T1, files=[odd]))
    text = review(repo, "--format", "markdown").stdout
    assert f"``` {odd} ```" in text
    assert all(line.count("@octocat") == line.count(f"``` {odd} ```") for line in text.splitlines())


def test_control_characters_in_a_record_reach_no_terminal_and_no_comment(tmp_path, env):
    """A record written by hand holds terminal escapes (a screen clear, a title, a bell) in a cited
    path, a changed lesson and a folded lesson: the terminal report and the Markdown one show
    them as escapes, as every command shows a record, in the flags, the changes and the folds."""
    repo = base_repo(tmp_path, env)
    old = json.loads(repo.memory.read_text(encoding="utf-8").splitlines()[0])
    esc = "\x1b[2J\x1b]0;owned\x07"
    changed = {**old, "lesson": f"changed {esc}", "meta": {**old["meta"], "updated": T1}}
    cited = rec("web", "odd path", "quote it", created=T1, files=[f"evil{esc}.py"])
    put(repo.memory, changed, cited)
    for result in (review(repo), review(repo, "--format", "markdown")):
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout, result.stdout
        assert "x1b" in result.stdout and "changed" in result.stdout and "cited file missing" in result.stdout
    sources = [json.loads(line)["id"] for line in repo.memory.read_text(encoding="utf-8").splitlines()]
    repo.commit("escapes")
    folded = principle("payment", "fold them", len(sources))
    drop(repo.memory, *sources)
    put(repo.memory, folded)
    for result in (review(repo, "HEAD"), review(repo, "HEAD", "--format", "markdown")):
        assert "folded" in result.stdout and "x1b" in result.stdout, result.stdout
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout, result.stdout


def test_the_repositorys_config_runs_nothing(tmp_path, env):
    """A cloned repository's config names commands for fsmonitor, textconv, pagers and the like:
    review runs none of them, and a memory file that is a symbolic link at the base is not read."""
    repo = base_repo(tmp_path, env)
    put(repo.memory, rec("db", "pool", "keep the pool at ten", created=T1))
    witness = tmp_path / "ran"
    for key in ("core.fsmonitor", "diff.sentinel-memory.textconv", "core.pager", "gpg.program"):
        repo.git("config", key, f"touch {witness}")
    repo.git("config", "log.showSignature", "true")
    (repo.path / ".gitattributes").write_text("*.jsonl diff=sentinel-memory filter=evil\n")
    repo.git("config", "filter.evil.smudge", f"touch {witness}")
    result = review(repo)
    assert result.returncode == 0, result.stderr
    assert not witness.exists()
    link = make_repo(tmp_path, env, name="linked", wired=False)
    (link.path / "secret.txt").write_text("not a memory\n")
    link.memory.parent.mkdir(exist_ok=True)
    link.memory.unlink(missing_ok=True)
    link.memory.symlink_to("../secret.txt")
    link.commit("a link")
    link.memory.unlink()
    put(link.memory, rec("db", "pool", "keep the pool at ten"))
    out = review(link, "HEAD")
    assert "is a symbolic link; it was not read" in out.stdout and "not a memory" not in out.stdout


# ------------------------------------------------------------------------------- the CI step

ACTION = ROOT / ".github" / "actions" / "memory-review"


def ci_step(repo: Repo, tmp_path, **env: str) -> tuple[subprocess.CompletedProcess, Path, dict[str, str]]:
    """Run the CI step's script as GitHub's runner would, in the repository: the job summary and
    the outputs are files, as there. (The action's runner itself cannot run here.)"""
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    summary.write_text("earlier step\n")
    outputs.write_text("")
    result = subprocess.run(
        [str(ACTION / "review.sh")],
        cwd=repo.path,
        env={
            **repo.env,
            "RUNNER_TEMP": str(tmp_path),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(outputs),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    pairs = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return result, summary, pairs


def test_the_ci_step_writes_the_job_summary_and_says_whether_there_are_flags(tmp_path, env):
    repo = base_repo(tmp_path, env)
    base = repo.git("rev-parse", "main").stdout.strip()
    put(repo.memory, rec("db", "pool size", "keep the pool at ten", created=T1))
    repo.commit("branch")
    result, summary, outputs = ci_step(repo, tmp_path, BASE=base)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "### Memory review: 1 lesson added, no flags"
    report = Path(outputs["report"]).read_text()
    assert outputs["flags"] == "false"
    assert summary.read_text() == "earlier step\n" + report
    assert report == review(repo, base, "--format", "markdown").stdout
    put(repo.memory, rec("payments", "refunds", "refunds over 100 need a second approval", created=T1))
    result, summary, outputs = ci_step(repo, tmp_path, BASE=base)
    assert result.returncode == 0 and outputs["flags"] == "true"  # the action's last step gates on it


def test_the_ci_step_fetches_a_base_a_shallow_checkout_lacks(tmp_path, env):
    """actions/checkout fetches one commit unless told otherwise: the base is fetched, shallowly."""
    origin = base_repo(tmp_path, env)
    base = origin.git("rev-parse", "main").stdout.strip()
    put(origin.memory, rec("db", "pool size", "keep the pool at ten", created=T1))
    origin.commit("branch")
    path = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "-b", "feature", f"file://{origin.path}", str(path)], env=env, check=True)
    repo = Repo(path, env)
    assert repo.git("cat-file", "-e", f"{base}^{{commit}}", check=False).returncode != 0
    result, _summary, outputs = ci_step(repo, tmp_path, BASE=base)
    assert result.returncode == 0, result.stderr
    report = Path(outputs["report"]).read_text()
    assert "### Memory review: 1 lesson added, no flags" in report


def test_the_action_and_its_scripts_agree_with_the_report():
    """The action runs the two scripts; the comment script finds the report by the marker it starts
    with, and knows the summary of a change that leaves the memory alone."""
    action = (ACTION / "action.yml").read_text()
    for script in ("review.sh", "comment.sh"):
        assert f'"$GITHUB_ACTION_PATH/{script}"' in action
        assert os.access(ACTION / script, os.X_OK)
    comment = (ACTION / "comment.sh").read_text()
    assert f"marker='{MARKER}'" in comment
    assert "### Memory review: no change to the memory, no flags" in comment
    assert "--format markdown" in (ACTION / "review.sh").read_text()


def test_another_projects_memory_in_the_same_repository_is_not_taken_for_a_renamed_one(tmp_path, env):
    repo = make_repo(tmp_path, env, wired=False)
    put(repo.path / "other" / ".context" / "memory_log.jsonl", rec("db", "pool", "keep the pool at ten"))
    (repo.path / "app").mkdir()
    (repo.path / "app" / "main.py").write_text("x = 1\n")
    branch(repo)
    put(repo.path / "app" / ".context" / "memory_log.jsonl", rec("api", "routes", "routes live in app/main.py"))
    result = server(env, "--project", str(repo.path / "app"), "review")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "1 lesson added, no flags"
    assert "has no memory file: every record is new" in result.stdout
    assert "keep the pool" not in result.stdout


def test_a_context_folder_that_links_out_of_the_project_is_not_read_through(tmp_path, env):
    """The work tree's .context/ (or the folder it was renamed to) replaced by a link to a folder
    elsewhere that holds a memory file: review reads nothing through it (the memory itself refuses
    such a link) and says so in one sentence, exit 3."""
    repo = base_repo(tmp_path, env)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    put(outside / "memory_log.jsonl", rec("leak", "outside", "read from outside the project", created=T1))
    moved = repo.path / ".context"
    moved.rename(tmp_path / "kept")
    moved.symlink_to(outside, target_is_directory=True)
    result = review(repo)
    assert result.returncode == 3 and "is a symbolic link" in result.stderr, result.stdout + result.stderr
    assert "outside" not in result.stdout

    moved.unlink()
    (tmp_path / "kept").rename(repo.path / ".ctx")
    repo.commit("renamed")
    (repo.path / ".ctx").rename(tmp_path / "kept")
    (repo.path / ".ctx").symlink_to(outside, target_is_directory=True)
    result = review(repo)
    assert result.returncode == 3 and "is a symbolic link" in result.stderr, result.stdout + result.stderr
    assert "outside" not in result.stdout
