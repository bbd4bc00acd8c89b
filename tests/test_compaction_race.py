"""A principle deletes only what its author read (docs/contract.md §4.3, §4.4): compact_memory names
each source as `<id>@<version>`; when a source changes between compact_memory and the principle's
save (the agent itself, a second session, a teammate's change that arrives by `git pull`), the save
keeps the new version, names it and says how to fold it in."""

from __future__ import annotations

import json
import re

import pytest

from gitrepos import T0, T1, by_id, clone, env, make_repo, put, rec, server  # noqa: F401
from sentinel_memory.record.store import memory_path
from sentinel_memory.errors import InvalidInput
from sentinel_memory.record.records import revision
from sentinel_memory.tools.answers import compact, log


def next_call(answer: str, topic: str) -> list[str]:
    """The source_ids of the call compact_memory shows for a topic."""
    block = answer[answer.index(f'Topic "{topic}"'):]
    return json.loads(re.search(r"source_ids=(\[[^\]]*\])", block).group(1))


def lessons(path) -> dict[str, str]:
    return {r["id"]: r["lesson"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def commit_memory(repo, message: str) -> None:
    """Commit the memory file only (init rewrites each clone's client config for its own path)."""
    repo.git("add", ".context/memory_log.jsonl")
    repo.git("commit", "-q", "--no-verify", "-m", message)


def test_compact_memory_names_each_source_with_the_version_it_shows(tmp_path):
    path = memory_path(tmp_path)
    log(path, "auth", "tokens expire", "refresh before the call")
    log(path, "auth", "cookies", "set SameSite=Lax")
    shown = next_call(compact(path), "auth")
    stored = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    assert sorted(shown) == sorted(f"{rid}@{revision(r)}" for rid, r in stored.items())


def test_a_source_updated_between_compact_and_save_is_kept_and_named(tmp_path):
    """The same process updates a source (same topic and missing_context, a new lesson) after
    compact_memory: the principle deletes the unchanged source only."""
    path = memory_path(tmp_path)
    log(path, "auth", "tokens expire", "refresh before the call")
    log(path, "auth", "cookies", "set SameSite=Lax")
    sources = next_call(compact(path), "auth")
    updated = log(path, "auth", "cookies", "set SameSite=Strict on the admin domain")
    changed = re.search(r"record ([0-9a-f]{16})", updated).group(1)

    answer = log(path, "auth", "", "refresh tokens before the call; set SameSite=Lax", type="principle",
                 source_ids=sources)

    kept = lessons(path)
    assert kept[changed] == "set SameSite=Strict on the admin domain"
    assert "refresh before the call" not in kept.values()
    assert "Deleted the 1 source record" in answer
    assert "KEPT, NOT DELETED: 1 source record changed after compact_memory showed it" in answer
    now = next(r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r["id"] == changed)
    assert f"{changed}@{revision(now)}" in answer
    assert "SameSite=Strict on the admin domain" in answer and "Fold it in with another save" in answer


def test_many_changed_sources_are_shown_ten_at_a_time_and_folded_only_once_read(tmp_path):
    """Twenty-five sources changed after compact_memory (a teammate's pull): the save's answer
    shows ten of them whole with the call that folds those ten in, and sends the model to
    compact_memory for the rest, whose ids that call does not name (nothing unread is folded)."""
    path = memory_path(tmp_path)
    for i in range(25):
        log(path, "core", f"gap {i}", f"lesson {i}")
    sources = next_call(compact(path), "core")
    for i in range(25):
        log(path, "core", f"gap {i}", f"lesson {i}, revised")

    answer = log(path, "core", "", "one rule for the core", type="principle", source_ids=sources)

    assert "KEPT, NOT DELETED: 25 source records" in answer
    assert answer.count(", revised") == 10 and "... and 15 more, not shown here" in answer
    assert 'compact_memory(target_topic="core")' in answer
    fold = json.loads(re.search(r"source_ids=(\[[^\]]*\])", answer.split("Fold them in", 1)[1]).group(1))
    assert len(fold) == 11

def test_the_fold_in_call_the_answer_shows_finishes_the_compaction(tmp_path):
    path = memory_path(tmp_path)
    log(path, "db", "migrations", "never edit an applied migration")
    sources = next_call(compact(path), "db")
    log(path, "db", "migrations", "never edit an applied migration; add a new one")
    answer = log(path, "db", "", "migrations are append-only", type="principle", source_ids=sources)
    again = json.loads(re.search(r"source_ids=(\[[^\]]*\])\)\.", answer).group(1))
    final = log(path, "db", "", "migrations are append-only: add a new one, never edit an applied one",
                type="principle", source_ids=again)
    assert "Deleted the 2 source records" in final and "KEPT" not in final
    assert list(lessons(path).values()) == ["migrations are append-only: add a new one, never edit an applied one"]


def test_the_fold_in_call_keeps_the_files_the_folded_records_cite(tmp_path):
    """The principle saved by the fold-in call the answer shows cites what the principle it replaces
    and the kept source cite, as compact_memory's call keeps its sources' citations (§4.4); a cited
    file since deleted is left out."""
    path = memory_path(tmp_path)
    for name in ("migrate.py", "seeds.py", "schema.py", "old.py"):
        put_file = tmp_path / "db" / name
        put_file.parent.mkdir(exist_ok=True)
        put_file.write_text("pass\n", encoding="utf-8")
    log(path, "db", "migrations", "never edit an applied migration", files=["db/migrate.py", "db/old.py"])
    log(path, "db", "seeds", "seed data is loaded in tests only", files=["db/seeds.py"])
    shown = compact(path)
    files = json.loads(re.search(r"source_ids=\[[^\]]*\], files=(\[[^\]]*\])", shown).group(1))
    assert files == ["db/migrate.py", "db/old.py", "db/seeds.py"]
    log(path, "db", "seeds", "seed data is loaded in tests and in the demo", files=["db/schema.py"])
    (tmp_path / "db" / "old.py").unlink()
    answer = log(path, "db", "", "migrations are append-only; seeds are for tests", type="principle",
                 source_ids=next_call(shown, "db"), files=files[:1] + files[2:])
    fold = re.search(r"Fold it in with another save: .*source_ids=(\[[^\]]*\]), files=(\[[^\]]*\])\)\.", answer)
    assert fold, answer
    assert json.loads(fold.group(2)) == ["db/migrate.py", "db/schema.py", "db/seeds.py"]

    log(path, "db", "", "migrations are append-only; seeds are for tests and the demo", type="principle",
        source_ids=json.loads(fold.group(1)), files=json.loads(fold.group(2)))
    (final,) = map(json.loads, path.read_text(encoding="utf-8").splitlines())
    assert final["files"] == ["db/migrate.py", "db/schema.py", "db/seeds.py"]
    assert final["meta"]["source_count"] == 2  # the first principle stood for 1 (the source it deleted)


def test_a_source_saved_again_with_the_same_text_is_still_the_version_shown(tmp_path):
    """Logging a record again unchanged, or again to clear a stale mark, changes its dates, not
    what the principle's author read: it is deleted."""
    path = memory_path(tmp_path)
    put(path, rec("api", "timeouts", "retry twice", created=T0))
    sources = next_call(compact(path), "api")
    put(path, rec("api", "timeouts", "retry twice", created=T0, updated=T1))
    answer = log(path, "api", "", "retry timeouts twice", type="principle", source_ids=sources)
    assert "Deleted the 1 source record" in answer and "KEPT" not in answer


def test_bare_ids_keep_deleting_whatever_version_the_file_holds(tmp_path):
    """Calls that predate versions (bare ids) keep their behaviour, as the contract says."""
    path = memory_path(tmp_path)
    rid = re.search(r"record ([0-9a-f]{16})", log(path, "ui", "dark mode", "use tokens")).group(1)
    log(path, "ui", "dark mode", "use the theme tokens")
    answer = log(path, "ui", "", "use the theme tokens", type="principle", source_ids=[rid])
    assert "Deleted the 1 source record" in answer and rid not in lessons(path)


def test_a_version_that_is_not_the_right_shape_is_a_bare_id_and_repeats_count_once(tmp_path):
    path = memory_path(tmp_path)
    rid = re.search(r"record ([0-9a-f]{16})", log(path, "ui", "fonts", "one family")).group(1)
    answer = log(path, "ui", "", "one font family", type="principle",
                 source_ids=[f"{rid}@00000000", f"{rid}", f"{rid}@zz"])
    assert "KEPT, NOT DELETED: 1 source record" in answer and rid in lessons(path)
    assert "Not in the file" in answer and f"{rid}@zz" in answer  # not an id the file holds


def test_a_missing_source_is_named_as_the_caller_gave_it(tmp_path):
    """A source the file does not hold is repeated with the version the caller gave (contract
    §4.3), so that the caller can tell which of its ids it was."""
    path = memory_path(tmp_path)
    answer = log(path, "ui", "", "one font family", type="principle",
                 source_ids=["nonexistent", "", "0123456789abcdef@0a1b2c3d"])
    assert "nothing to delete: nonexistent, 0123456789abcdef@0a1b2c3d." in answer


@pytest.mark.anyio
async def test_two_sessions_a_correction_from_the_other_survives_the_principle(tmp_path, forked_connect, memory_file):
    """Two real servers over stdio on one project: session B corrects a record after session A's
    compact_memory; A's principle keeps B's correction and says so."""
    project = memory_file.parent.parent
    async with forked_connect(project) as a, forked_connect(project) as b:
        await a.ok("log_memory", topic="payment", missing_context="VAT by country", lesson="use the rate table")
        await a.ok("log_memory", topic="payment", missing_context="refunds", lesson="send the idempotency key")
        sources = next_call(await a.ok("compact_memory"), "payment")
        await b.ok("log_memory", topic="payment", missing_context="VAT by country",
                   lesson="use the rate table, refreshed monthly from the tax office feed")
        answer = await a.ok("log_memory", type="principle", topic="payment", missing_context="",
                            lesson="use the rate table; send the idempotency key", source_ids=sources)
    assert "use the rate table, refreshed monthly from the tax office feed" in lessons(memory_file).values()
    assert "send the idempotency key" not in lessons(memory_file).values()
    assert "KEPT, NOT DELETED: 1 source record" in answer and "refreshed monthly" in answer


def test_a_teammates_correction_that_arrives_by_git_pull_survives_the_principle(tmp_path, env):
    """A real `git pull` between compact_memory and the save brings a teammate's new lesson for a
    source (merged by the driver, newer wins): the principle keeps it, and the push carries it."""
    origin = make_repo(tmp_path, env, "origin")
    put(origin.memory, rec("cache", "TTL", "five minutes", created=T0), rec("cache", "keys", "prefix by tenant", created=T0))
    origin.commit("two lessons")
    origin.git("config", "receive.denyCurrentBranch", "updateInstead")
    mine = clone(origin, tmp_path, "mine", wired=True)
    theirs = clone(origin, tmp_path, "theirs", wired=True)

    sources = next_call(compact(mine.memory), "cache")
    log(theirs.memory, "cache", "TTL", "five minutes, one minute for prices")
    commit_memory(theirs, "prices expire sooner")
    theirs.git("push", "-q", "origin", "HEAD:main")
    mine.git("pull", "-q", "--no-rebase", "origin", "main")

    answer = log(mine.memory, "cache", "", "cache for five minutes; prefix keys by tenant", type="principle",
                 source_ids=sources)
    commit_memory(mine, "principle")
    mine.git("push", "-q", "origin", "HEAD:main")

    pushed = {r["lesson"] for r in by_id(origin.show("main")).values()}
    assert "five minutes, one minute for prices" in pushed and "prefix by tenant" not in pushed
    assert "KEPT, NOT DELETED: 1 source record" in answer and "one minute for prices" in answer


def test_source_ids_that_are_not_a_list_of_strings_are_refused_with_the_shape_to_use(tmp_path):
    path = memory_path(tmp_path)
    with pytest.raises(InvalidInput, match=r'such as \["1a2b3c4d5e6f7a8b@9c8d7e6f"\]'):
        log(path, "x", "", "y", type="principle", source_ids="1a2b3c4d5e6f7a8b")
    assert not path.exists() or path.read_text() == ""
