"""The file on disk (docs/contract.md §5): tolerant reads, atomic locked writes, nothing ever lost."""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from sentinel_memory.record.store import memory_path
from sentinel_memory.errors import LockTimeout, StorageError
from sentinel_memory.tools.answers import log, search
from sentinel_memory.record.records import Entry
from sentinel_memory.record.disk import atomic_write
from sentinel_memory.record.snapshot import parse
from sentinel_memory.record.store import read, update
from sentinel_memory.redaction import rules_hit
from conftest import lock_held_elsewhere

ROOT = Path(__file__).resolve().parents[1]


def line(rid: str, lesson: str = "l", updated: str = "", topic: str = "t") -> str:
    meta = {"created": "2026-01-01T00:00:00+00:00", **({"updated": updated} if updated else {})}
    return Entry.of({"id": rid, "type": "log", "topic": topic, "missing_context": rid, "lesson": lesson,
                     "ask_next_time": "", "meta": meta}).line


def test_reading_a_missing_file_creates_nothing(tmp_path):
    """A read of a project with no memory returns nothing and creates no .context directory."""
    path = memory_path(tmp_path)
    assert read(path).records == {}
    search(path, "anything")
    assert not (tmp_path / ".context").exists()


def test_bom_crlf_and_blank_lines_are_tolerated():
    """A file saved by a Windows editor (BOM, CRLF, blank lines) reads as the same records."""
    data = ("\ufeff" + line("a") + "\r\n\r\n" + line("b") + "\r\n").encode("utf-8")
    snap = parse(data)
    assert sorted(snap.records) == ["a", "b"] and snap.unreadable == []


def test_write_normalises_to_sorted_lf_lines_without_bom(tmp_path):
    """The next write stores UTF-8 without BOM, LF endings, a final newline and lines sorted by id."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(("\ufeff" + line("b") + "\r\n" + line("a") + "\r\n").encode())
    log(path, "t", "m", "l")
    data = path.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf") and b"\r" not in data and data.endswith(b"\n")
    ids = [json.loads(x)["id"] for x in data.decode().splitlines()]
    assert ids == sorted(ids) and {"a", "b"} <= set(ids)


@pytest.mark.parametrize("first", ["", "a note written by hand\r\n"], ids=["records", "a note first"])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf_16_file_is_read_and_the_next_write_stores_it_as_utf_8(tmp_path, codec, first):
    """A memory file that Windows PowerShell 5.1's `>` rewrote as UTF-16 with its byte order mark
    (`git show HEAD:.context/memory_log.jsonl > ...`): its records are read, and the next write
    keeps every one of them in UTF-8, with nothing set aside as unreadable but a first line that is
    no record (a note, a conflict marker), quarantined in UTF-8 (before, such a line kept the whole
    file from being read as UTF-16: every record went to the quarantine in pieces)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    text = first + line("a", lesson="결제 모듈") + "\r\n" + line("b") + "\r\n"
    path.write_bytes(("\ufeff" + text).encode(codec))

    assert sorted(read(path).records) == ["a", "b"] and len(read(path).unreadable) == bool(first)
    log(path, "t", "m", "l")

    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert {"a", "b"} <= {r["id"] for r in rows} and len(rows) == 3
    assert any(r["lesson"] == "결제 모듈" for r in rows)
    quarantine = path.parent / "memory_log.quarantine.jsonl"
    assert quarantine.read_text(encoding="utf-8") == "a note written by hand\n" if first else not quarantine.exists()

def test_a_change_made_right_after_a_write_is_seen_even_at_the_same_size(tmp_path):
    """A read right after this process wrote the file skips reading it back only while it is still
    that file: an edit in place within the same instant, keeping the size, or another file of the
    same size renamed over it is read, and the next write keeps that edit."""
    from sentinel_memory.tools import OpenMemory

    path = memory_path(tmp_path)
    memory = OpenMemory(path)  # what the server keeps between calls
    log(memory, "t", "first", "lesson A")
    with open(path, "r+b") as f:  # in place, same inode, same size, microseconds after the write
        data = f.read()
        f.seek(0)
        f.write(data.replace(b"lesson A", b"lesson B"))
    assert [e.record["lesson"] for e in memory.read().records.values()] == ["lesson B"]
    log(memory, "t", "second", "lesson C")
    replacement = path.read_bytes().replace(b"lesson C", b"lesson D")
    path.with_name("swap").write_bytes(replacement)
    os.replace(path.with_name("swap"), path)  # what git and most editors do: a new file renamed over
    assert sorted(e.record["lesson"] for e in memory.read().records.values()) == ["lesson B", "lesson D"]
    log(memory, "t", "third", "lesson E")
    assert sorted(e.record["lesson"] for e in memory.read().records.values()) == ["lesson B", "lesson D", "lesson E"]
    assert b"lesson B" in path.read_bytes() and b"lesson D" in path.read_bytes()


def test_a_long_run_of_edits_writes_exactly_what_a_full_rewrite_would(tmp_path):
    """Hundreds of writes in one process (each splits the file's text around its change instead
    of copying it) leave byte for byte the file a fresh sort of the same records gives."""
    import random

    from sentinel_memory.cli.maintenance import forget
    from sentinel_memory.record.snapshot import Snapshot

    path = memory_path(tmp_path)
    rng = random.Random(5)
    for i in range(300):
        n = rng.randrange(40)
        if rng.random() < 0.2:
            forget(path, [rid for rid in read(path).records if rng.random() < 0.1])
        else:
            log(path, f"t{n % 7}", f"context {n}", f"lesson {i}", "" if i % 3 else f"ask {i}")
    on_disk = path.read_bytes()
    assert on_disk == parse(on_disk).text() == Snapshot(records=dict(read(path).records)).text()
    assert len(read(path).records) == len(on_disk.splitlines())


def test_unreadable_lines_are_quarantined_on_the_next_write_never_lost(tmp_path):
    """Garbage and invalid UTF-8 lines are skipped on read and moved, byte for byte, to the quarantine file."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    too_deep = b"[" * 100_000  # nested past the JSON parser's recursion limit
    bad = [b"{not json", b"[1, 2]", b'{"no_id": true}', b"\xff\xfe broken", too_deep]
    path.write_bytes(line("a").encode() + b"\n" + b"\n".join(bad) + b"\n")
    assert len(read(path).unreadable) == 5
    out = log(path, "t", "m", "l")
    assert "Moved 5 unreadable lines" in out
    kept = (path.parent / "memory_log.quarantine.jsonl").read_bytes().split(b"\n")
    assert all(b in kept for b in bad)
    assert all(b not in path.read_bytes() for b in bad)
    log(path, "t", "m2", "l")  # a second write does not duplicate quarantined lines
    assert (path.parent / "memory_log.quarantine.jsonl").read_bytes().count(b"{not json") == 1


def test_a_credential_in_an_unreadable_line_is_redacted_on_its_way_to_the_quarantine(tmp_path):
    """The quarantine file is tracked: a broken line's key is redacted there, the rest of it kept as it was."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    key = "ghp_" + "Q7x" * 12  # a fake with the shape of a GitHub token
    broken = f'{{"topic": "ci", "lesson": "deploy with {key}", "cut off here'.encode() + b" \xff"
    path.write_bytes(line("a").encode() + b"\n" + broken + b"\n")
    out = log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_bytes()
    assert key.encode() not in kept and key.encode() not in path.read_bytes()
    assert broken.replace(key.encode(), b"[REDACTED]") + b"\n" == kept
    assert "1 value that looked like a credential redacted there" in out


def test_past_what_one_write_redacts_the_lines_are_kept_aside_and_the_write_is_prompt(tmp_path):
    """Megabytes of lines that are not records (a corrupted or crafted file) would hold a write for
    minutes in the credential rules: the first 128 KiB of them go to the quarantine file, redacted,
    the rest stays only in a git-ignored copy of the file as it was, and the answer says so."""
    from sentinel_memory.record.contextdir import REDACTED_PER_WRITE

    path = memory_path(tmp_path)
    path.parent.mkdir()
    key = "ghp_" + "Q7x" * 12  # a fake with the shape of a GitHub token
    garbage = [f"not a record {n:06d}: the build log went here {key if n == 3 else ''}".encode() for n in range(8000)]
    original = line("a").encode() + b"\n" + b"\n".join(garbage) + b"\n"
    path.write_bytes(original)
    out = log(path, "t", "m", "l")
    quarantined = (path.parent / "memory_log.quarantine.jsonl").read_bytes().splitlines()
    taken = len(quarantined)
    assert sum(len(q) + 1 for q in quarantined) <= REDACTED_PER_WRITE < sum(len(g) + 1 for g in garbage[: taken + 1])
    assert quarantined == [g.replace(key.encode(), b"[REDACTED]") for g in garbage[:taken]]
    copies = list(path.parent.glob("memory_log.jsonl.*.conflicted"))
    assert [c.read_bytes() for c in copies] == [original]  # every line is still on this machine
    assert f"{8000 - taken:,} more lines that are not records" in out and copies[0].name in out
    after = read(path)
    assert len(after.records) == 2 and not after.unreadable and key.encode() not in path.read_bytes()


def test_one_line_past_what_a_write_redacts_is_said_without_a_line_moved_before_it(tmp_path):
    """A single line of 200 KB that is no record: none goes to the quarantine file, and the answer
    says the line was left out, not "1 more line"."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(line("a").encode() + b"\n" + b"y" * 200_000 + b"\n")
    out = log(path, "t", "m", "l")
    assert "Moved" not in out and not (path.parent / "memory_log.quarantine.jsonl").exists()
    assert "1 line that is not a record, past the 128 KiB" in out and "more line" not in out


def test_duplicate_ids_keep_the_newer_record_and_the_next_write_keeps_one():
    """After a union merge the same id may appear twice: the newer version wins."""
    old = line("a", "old lesson", updated="2026-01-02T00:00:00+00:00")
    new = line("a", "new lesson", updated="2026-03-01T00:00:00+00:00")
    snap = parse(f"{new}\n{old}\n".encode())
    assert snap.records["a"].record["lesson"] == "new lesson" and snap.duplicates == 1


def test_three_way_conflict_markers_merge_exactly():
    """diff3 markers with a base section: a deletion on one side stands, additions on both survive."""
    text = "\n".join([
        line("a"),
        "<<<<<<< ours",
        line("b", "ours changed"),
        line("c"),
        "||||||| base",
        line("b"),
        line("c"),
        "=======",
        line("b"),
        line("d", "theirs added"),
        ">>>>>>> theirs",
        line("e"),
    ]) + "\n"
    snap = parse(text.encode())
    assert sorted(snap.records) == ["a", "b", "d", "e"]  # c deleted by theirs, untouched by ours
    assert snap.records["b"].record["lesson"] == "ours changed"
    assert snap.conflict_regions == 1 and snap.conflict_base


def test_two_way_conflict_markers_keep_every_record_newer_per_id():
    """Plain markers: nothing can be known deleted, so every record of both sides is kept."""
    text = "\n".join([
        "<<<<<<< HEAD",
        line("b", "ours", updated="2026-05-01T00:00:00+00:00"),
        line("c"),
        "=======",
        line("b", "theirs", updated="2026-04-01T00:00:00+00:00"),
        line("d"),
        ">>>>>>> branch",
    ]) + "\n"
    snap = parse(text.encode())
    assert sorted(snap.records) == ["b", "c", "d"]
    assert snap.records["b"].record["lesson"] == "ours" and not snap.conflict_base


def test_conflicted_file_is_stored_merged_with_a_copy_kept_aside(tmp_path):
    """The next write removes the markers, reports it, and keeps the conflicted file as a git-ignored copy."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    conflicted = f"<<<<<<< HEAD\n{line('b')}\n=======\n{line('c')}\n>>>>>>> x\n".encode()
    path.write_bytes(conflicted)
    out = log(path, "t", "m", "l")
    assert "Resolved 1 git conflict region" in out
    assert b"<<<<<<<" not in path.read_bytes()
    copies = list(path.parent.glob("*.conflicted"))
    assert len(copies) == 1 and copies[0].read_bytes() == conflicted
    assert "*.conflicted" in (path.parent / ".gitignore").read_text()
    again = conflicted.replace(b"x\n", b"y\n")  # a second conflict, stored within the same second
    path.write_bytes(again)
    log(path, "t", "m3", "l")
    kept = sorted(p.read_bytes() for p in path.parent.glob("*.conflicted"))
    assert kept == sorted([conflicted, again]), "each conflicted original keeps its own copy"


def test_first_write_creates_gitignore_for_lock_and_temp_files(tmp_path):
    """.context/.gitignore keeps the lock and temporary files out of git; the memory file is tracked."""
    path = memory_path(tmp_path)
    log(path, "t", "m", "l")
    ignore = (path.parent / ".gitignore").read_text()
    assert "*.lock" in ignore and "*.tmp" in ignore and "memory_log.jsonl\n" not in ignore
    assert "merge=sentinel-memory" in (path.parent / ".gitattributes").read_text()


def test_lock_timeout_is_a_clear_error_and_changes_nothing(tmp_path):
    """While another holder keeps the lock, a write gives up with a plain message and no change."""
    path = memory_path(tmp_path)
    log(path, "t", "m", "l")
    before = path.read_bytes()
    with lock_held_elsewhere(path):
        with pytest.raises(LockTimeout, match="locked by another process.*Nothing was saved"):
            update(path, lambda snap: snap.edited(drop=list(snap.records)), timeout=0.2)
    assert path.read_bytes() == before


_TRY_FILELOCK = """
import sys
from filelock import FileLock, Timeout
try:
    FileLock(sys.argv[1]).acquire(timeout=0.3)
    print("acquired")
except Timeout:
    print("timeout")
"""


def test_a_write_holds_the_same_lock_as_filelock(tmp_path):
    """While a write is under way, another process's FileLock on "<file>.lock" has to wait, and
    gets it once the write is done (the other direction: lock_held_elsewhere)."""
    path = memory_path(tmp_path)
    log(path, "t", "m", "l")
    inside, leave = threading.Event(), threading.Event()

    def change(snap):
        inside.set()
        leave.wait(30)

    def try_filelock() -> str:
        probe = [sys.executable, "-c", _TRY_FILELOCK, f"{path}.lock"]
        return subprocess.run(probe, capture_output=True, text=True, timeout=60).stdout.strip()

    writer = threading.Thread(target=update, args=(path, change))
    writer.start()
    try:
        assert inside.wait(30)
        assert try_filelock() == "timeout"
    finally:
        leave.set()
        writer.join()
    assert try_filelock() == "acquired"


def test_a_failed_write_leaves_the_original_byte_for_byte_and_no_debris(tmp_path):
    """When the disk refuses the write (file size limit here), the error is clear and the file is intact."""
    path = memory_path(tmp_path)
    log(path, "t", "m", "l")
    before = path.read_bytes()
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(ROOT)!r})
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        from sentinel_memory.tools.answers import log
        from sentinel_memory.errors import StorageError
        resource.setrlimit(resource.RLIMIT_FSIZE, ({len(before) + 50}, {len(before) + 50}))
        try:
            log({str(path)!r}, "t", "another missing context", "x" * 1000)
        except StorageError as exc:
            print(exc)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "Could not write" in result.stdout and "nothing was saved" in result.stdout, result.stderr
    assert path.read_bytes() == before
    assert not list(path.parent.glob("*.tmp")) and not list(path.parent.glob(".*.tmp"))


def test_atomic_write_reports_an_unwritable_target_as_storage_error(tmp_path):
    """A target whose directory is missing raises StorageError, not a bare OSError."""
    with pytest.raises(StorageError, match="Could not write"):
        atomic_write(tmp_path / "missing" / "f", b"x")


@pytest.mark.parametrize("value, seconds", [("0.25", 0.25), ("3", 3.0), ("", 10.0), ("soon", 10.0), ("-1", 10.0),
                                            ("inf", 10.0), ("nan", 10.0)])
def test_the_lock_timeout_is_a_setting_that_falls_back_to_ten_seconds(monkeypatch, value, seconds):
    """SENTINEL_MEMORY_LOCK_TIMEOUT sets how long a write waits for the lock; a value that is not a
    finite number of seconds of at least 0 leaves the 10 s default."""
    from sentinel_memory.record.store import lock_timeout

    monkeypatch.setenv("SENTINEL_MEMORY_LOCK_TIMEOUT", value)
    assert lock_timeout() == seconds


def test_the_servers_import_leaves_the_collector_on_and_what_it_loaded_frozen():
    """The MCP server's import runs with the cyclic collector paused (a third of its CPU went to
    collections that freed nothing); after it the collector runs again, so a long session still
    frees cycles, and what the import made is frozen out of later collections."""
    code = textwrap.dedent("""\
        import gc, sys
        sys.path.insert(0, sys.argv[1])
        from sentinel_memory.gcpause import loaded
        with loaded():
            assert not gc.isenabled()
            from sentinel_memory import server
        assert gc.isenabled() and gc.get_freeze_count() > 10_000, gc.get_freeze_count()
        gc.disable()
        with loaded():
            pass
        assert not gc.isenabled()  # a collector the caller had paused stays paused
        print("ok")
        """)
    result = subprocess.run([sys.executable, "-c", code, str(ROOT)], capture_output=True, text=True, timeout=120)
    assert result.stdout == "ok\n", result.stderr


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="file modes are POSIX")
def test_a_write_keeps_the_mode_the_user_gave_the_memory_file(tmp_path):
    """A memory file made private (chmod 600) stays private after a write replaces it."""
    path = memory_path(tmp_path)
    log(path, "a", "m", "l")
    path.chmod(0o600)
    log(path, "b", "m", "l")
    assert (path.stat().st_mode & 0o777, len(read(path).records)) == (0o600, 2)


@pytest.mark.parametrize("mark", [b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\r\x00\n\x00"])
def test_a_utf_16_mark_alone_is_an_empty_file(tmp_path, mark):
    """What PowerShell 5.1's `>` writes for nothing (its byte order mark, perhaps a line break): no
    record and no unreadable line, and the next write sets nothing aside."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(mark)
    assert read(path).records == {} and read(path).unreadable == []
    log(path, "t", "m", "l")
    assert not (path.parent / "memory_log.quarantine.jsonl").exists()


@pytest.mark.parametrize("text", ["토큰은환경변수에서읽는다" * 150 + "가", "以上上上の件\r\n上記参照上"],
                         ids=["Korean without spaces", "Japanese whose 上 holds a 0x0A byte"])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf_16_note_with_no_record_is_read_as_utf_16(tmp_path, text, codec):
    """A UTF-16 file (PowerShell) holding only notes, no record: it is read as UTF-16 (read line by
    line as bytes it would be cut at every 0x0A byte and lose some), and the quarantine file gets the
    text readable."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(("\ufeff" + text + "\r\n").encode(codec))
    log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert all(part in kept for part in text.split("\r\n")), kept


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf_16_note_with_latin_words_and_no_credential_is_kept_as_written(tmp_path, codec):
    """A UTF-16 note that mixes Japanese and English words that sit near credentials ("API key",
    an environment variable's name) is read as the UTF-16 it is: the quarantine file gets it whole,
    and nothing is said to be redacted (before, its bytes were read as they are, cut and stripped,
    and the noise taken for a credential)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    note = "API key は 環境変数 OPENAI_API_KEY に入れること"
    path.write_bytes(("\ufeff" + note + "\r\n").encode(codec))
    said = log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert kept == note + "\n" and "redacted" not in said, said


@pytest.mark.parametrize("damage", ["a line feed appended", "its last byte cut"])
def test_a_utf_16_file_of_an_odd_length_keeps_its_records(tmp_path, damage):
    """UTF-16 of an odd length (Git Bash's `echo >>` adds one byte; a copy may lose the last): its
    records are read still, and the next write keeps them (before, the file was read as bytes and
    every record went to the quarantine file in pieces)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    data = ("\ufeff" + "".join(line(r, lesson=f"上海 {r}") + "\r\n" for r in "abc")).encode("utf-16-le")
    path.write_bytes(data + b"\n" if damage == "a line feed appended" else data[:-1])
    log(path, "t", "m", "l")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert {"a", "b", "c"} <= {r["id"] for r in rows} and any(r["lesson"] == "上海 c" for r in rows)
    assert not (path.parent / "memory_log.quarantine.jsonl").exists()


def test_utf_8_lines_appended_to_a_utf_16_file_are_read_as_utf_8(tmp_path):
    """PowerShell 5.1 writes UTF-16 with `>`, and a tool appends UTF-8 to it: the appended record
    is read, and an appended note that holds a credential reaches the quarantine file redacted
    (before, both were read as UTF-16 nonsense, which hid the key from every rule)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape, in two parts
    appended = (line("b") + "\n" + f"token  {token}\n").encode()
    path.write_bytes(("\ufeff" + line("a") + "\r\n").encode("utf-16-le") + appended + b"\n" * (len(appended) % 2))
    assert sorted(read(path).records) == ["a", "b"]
    said = log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_bytes()
    assert b"token  [REDACTED]" in kept and token.encode() not in kept and "1 value" in said, kept


@pytest.mark.parametrize("note", [
    "Не забывать запускать миграции перед деплоем",
    "يجب تشغيل الترحيلات قبل النشر",
    "ਡਿਪਲੌਏ ਤੋਂ ਪਹਿਲਾਂ ਮਾਈਗ੍ਰੇਸ਼ਨ ਚਲਾਉਣਾ ਜ਼ਰੂਰੀ ਹੈ",
    "ต้องรันการย้ายข้อมูลก่อนปรับใช้",
    "さしすせそ",
], ids=["Russian", "Arabic", "Punjabi", "Thai", "kana"])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_a_utf_16_note_in_a_script_whose_bytes_look_like_ascii_stays_readable(tmp_path, note, codec):
    """A UTF-16 note in Cyrillic, Arabic, Gurmukhi, Thai or kana, whose every byte is below 0x80 (a
    0x0A in each Gurmukhi character): it reaches the quarantine file as the text it is, not as its
    bytes (which read as ASCII noise, cut at each 0x0A)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(("\ufeff" + line("a") + "\r\n" + note + "\r\n").encode(codec))
    log(path, "t", "m", "l")
    assert (path.parent / "memory_log.quarantine.jsonl").read_text(encoding="utf-8") == note + "\n"


@pytest.mark.parametrize("odd", [False, True], ids=["even", "odd"])
@pytest.mark.parametrize("after", ["a UTF-16 record", "a UTF-16 note"])
def test_a_utf_8_line_between_utf_16_lines_is_read_as_utf_8_and_the_rest_as_utf_16(tmp_path, after, odd):
    """PowerShell's `>`, Git Bash's `echo >>` (UTF-8), PowerShell's `>>` (UTF-16 again): the UTF-8
    lines have no UTF-16 line feed after them, yet they are read as UTF-8 (a record is kept, a key
    is redacted) and what follows as UTF-16, whether the UTF-8 bytes are even or odd in number
    (before, they were read as one line of UTF-16 with what follows)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape, in two parts
    data = ("\ufeff" + line("a") + "\r\n").encode("utf-16-le") + (line("b") + "\n").encode()
    data += f"deploy token {token}\n".encode()
    data = data[:-1] + b" " * ((len(data) % 2) != odd) + b"\n"  # the UTF-8 bytes made even or odd
    data += ((line("c") if after == "a UTF-16 record" else "note: rotate it") + "\r\n").encode("utf-16-le")
    path.write_bytes(data)
    assert sorted(read(path).records) == (["a", "b", "c"] if after == "a UTF-16 record" else ["a", "b"])
    log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_bytes()
    assert b"deploy token [REDACTED]" in kept and token.encode() not in kept, kept
    assert after == "a UTF-16 record" or b"note: rotate it\n" in kept


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf_16_notes_whose_characters_hold_a_line_feed_byte_keep_every_record_after_them(tmp_path, codec):
    """A UTF-16 file with Japanese and Chinese notes (上 is U+4E0A: half of it is the byte 0x0A) and
    records after them: every record is read and every note kept as its text; no such byte is taken
    for where UTF-8 text ends."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    notes = ["以上上上の件", "上記参照上", "上上記参照", "上", "中文上海上线前测试", "先跑测试", "ok 上上"]
    text = line("a", lesson="上海") + "\r\n" + "\r\n".join(notes) + "\r\n" + "".join(line(r) + "\r\n" for r in "bcd")
    path.write_bytes(("\ufeff" + text).encode(codec))
    snap = read(path)
    assert sorted(snap.records) == ["a", "b", "c", "d"]
    assert [raw.decode("utf-8") for raw in snap.unreadable] == notes


@pytest.mark.parametrize("appended", ["---------", "        first = False", "## Установка", "ok", ")", "=========="])
def test_a_utf_8_line_of_repeated_bytes_between_utf_16_records_keeps_the_next_record(tmp_path, appended):
    """A UTF-8 line whose every other byte is mostly one (a rule, an indented line, Cyrillic's lead
    bytes) between two UTF-16 records is read as UTF-8, and the record after it is read (before,
    the line was taken for UTF-16 by its one high byte, and the record after it with it)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    data = ("\ufeff" + line("a") + "\r\n").encode("utf-16-le") + (appended + "\n").encode()
    path.write_bytes(data + (line("b") + "\r\n").encode("utf-16-le"))
    snap = read(path)
    assert sorted(snap.records) == ["a", "b"] and snap.unreadable == [appended.encode()]


@pytest.mark.parametrize("between", [b"\n", b"\r\n", b"deploy token {token}\n", b"deploy token {token}.\n"],
                         ids=["echo >>", "cmd's echo.>>", "a key, even", "a key, odd"])
def test_what_a_tool_adds_between_powershell_writes_is_read_and_every_record_kept(tmp_path, between):
    """PowerShell `>`, then a tool's UTF-8 line (Git Bash's `echo >>` of nothing, cmd's `echo.>>`,
    a note holding a key), then PowerShell `>>` of an empty line and records: every record is read,
    and the key reaches the quarantine file redacted (before, a lone line feed put every later
    record one byte off, and the empty UTF-16 line made the note read as UTF-16, key hidden)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape, in two parts
    data = ("\ufeff" + line("a") + "\r\n").encode("utf-16-le") + between.replace(b"{token}", token.encode())
    path.write_bytes(data + ("\r\n" + line("b") + "\r\n" + line("c") + "\r\n").encode("utf-16-le"))
    assert sorted(read(path).records) == ["a", "b", "c"]
    log(path, "t", "m", "l")
    quarantine = path.parent / "memory_log.quarantine.jsonl"
    kept = quarantine.read_bytes() if quarantine.exists() else b""
    assert token.encode() not in kept and (b"deploy token [REDACTED]" in kept or b"token" not in between)


def test_seventeen_tools_lines_between_powershell_records_keep_every_record(tmp_path):
    """Seventeen rounds of a UTF-8 note (`echo note >>`) and a PowerShell record, then a key: every
    record is read and the key is found (before, cuts stopped after the sixteenth)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    data = ("\ufeff" + line("r00") + "\r\n").encode("utf-16-le")
    for n in range(1, 18):
        data += f"note {n}\n".encode() + (line(f"r{n:02d}") + "\r\n").encode("utf-16-le")
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape, in two parts
    path.write_bytes(data + f"token {token}\n".encode())
    assert len(read(path).records) == 18
    log(path, "t", "m", "l")
    assert token.encode() not in (path.parent / "memory_log.quarantine.jsonl").read_bytes()


def test_a_utf_16_be_note_whose_character_ends_in_a_line_feed_byte_stays_whole(tmp_path):
    """UTF-16 BE: 上 (U+4E0A) ends in the byte 0x0A; followed by ASCII, it is no UTF-8 line's end."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    notes = ["上 CI 跑一下", "- 在子命令脚本中加上`#!/usr/bin/env node`"]
    path.write_bytes(("\ufeff" + line("a") + "\r\n" + "\r\n".join(notes) + "\r\n" + line("b") + "\r\n").encode("utf-16-be"))
    snap = read(path)
    assert sorted(snap.records) == ["a", "b"] and [raw.decode() for raw in snap.unreadable] == notes


@pytest.mark.parametrize(("codec", "note"), [
    ("utf-16-le", "上一一"), ("utf-16-le", "上一开始部署"), ("utf-16-le", "ਹੈ"),
    ("utf-16-be", "伺服器上"), ("utf-16-be", "向上"), ("utf-16-be", "器上"), ("utf-16-be", "ഊ"), ("utf-16-be", "ਊ ok"),
])
def test_a_utf_16_note_whose_line_feed_byte_looks_like_a_seam_stays_whole(tmp_path, codec, note):
    """UTF-16 notes whose characters hold the byte 0x0A where a tool's UTF-8 line could end: before
    two ASCII-looking bytes pairs (上一 in LE is 0A 4E 00 4E), or just before the line's CR (上 in
    BE). Each stays whole, and every record after it is read."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    text = line("a") + "\r\n" + note + "\r\n" + line("b") + "\r\n" + line("c") + "\r\n"
    path.write_bytes(("\ufeff" + text).encode(codec))
    snap = read(path)
    assert sorted(snap.records) == ["a", "b", "c"] and [raw.decode() for raw in snap.unreadable] == [note]


TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a fake of the right shape, in two parts


@pytest.mark.parametrize(("codec", "between", "first"), [
    ("utf-16-le", b"\n", f"deploy {TOKEN}"), ("utf-16-be", b"\n", f"deploy {TOKEN}"),
    ("utf-16-le", b"\n\n\n", None), ("utf-16-le", b"\n\n", None), ("utf-16-be", b"\r\n", None),
    ("utf-16-be", b"ok\n", None), ("utf-16-be", "é\n".encode(), f"deploy {TOKEN}"),
    ("utf-16-le", b"ok\n", ""), ("utf-16-le", b"a\r\n", ""),
    ("utf-16-le", b"\x1b[1mbuild ok\x1b[0m\n", None), ("utf-16-le", b"50%\r100% done\n", None),
], ids=["echo >>, a note LE", "echo >>, a note BE", "three echo >>", "two echo >>", "echo.>> BE",
        "a short line BE", "é BE", "a short line, then an empty line", "a short CRLF line, then an empty line",
        "colours", "a progress CR"])
def test_any_tools_lines_between_powershell_writes_keep_every_record_and_show_the_key(tmp_path, codec, between, first):
    """PowerShell `>` of a record, then a tool's UTF-8 bytes (blank lines of `echo >>`, a short line,
    a terminal's colours, a progress bar's CR), then PowerShell `>>` (which may start with an empty
    line or a note) of a record, a note with a key and a record: every record is read and the key
    is plain to the rules (before, each of these lost the records after the tool's bytes, and most
    hid the key)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    powershell = [*([first] if first is not None else []), line("b"), f"key {TOKEN}", line("c")]
    data = ("\ufeff" + line("a") + "\r\n").encode(codec) + between + "".join(x + "\r\n" for x in powershell).encode(codec)
    path.write_bytes(data)
    snap = read(path)
    assert sorted(snap.records) == ["a", "b", "c"]
    assert TOKEN.encode() in b"\n".join(snap.unreadable)


def test_random_mixes_of_powershell_and_utf_8_appends_keep_every_record_and_show_every_key(tmp_path):
    """Two to six appends, each PowerShell's (UTF-16 records, notes, notes with a key, an empty line
    first) or a UTF-8 tool's (blank lines, short lines in several scripts, a record, a note with a
    key), in 400 files of fixed seeds: every record is read and every key is plain to the rules."""
    import random

    notes = ["deploy note", "배포 전에 확인", "部署说明：先跑测试", "Проверить миграции", "تحقق من النشر", "ตรวจสอบ",
             "ਤੈਨਾਤੀ ਤੋਂ ਪਹਿਲਾਂ", "🚀 deploy", "ok", "上线前检查", "é ok", "x", "デプロイ前に確認", "  indented", "\ttab"]
    utf8 = [b"\n", b"\r\n", b"ok\n", b"hi\r\n", b"note from bash\n", "上线\n".encode(), "é\n".encode(), b"\n\n",
            b"\n\n\n", b"abc\n", "배포\n".encode(), b"a\n", b"ab\n"]
    failed = []
    for seed in range(400):
        rnd = random.Random(seed)
        codec = rnd.choice(["utf-16-le", "utf-16-be"])
        data, ids, keys = "\ufeff".encode(codec), [], 0
        for _ in range(rnd.randint(2, 6)):
            if rnd.random() < 0.6:
                lines = [""] if rnd.random() < 0.3 else []
                for _ in range(rnd.randint(1, 3)):
                    pick = rnd.random()
                    if pick < 0.5:
                        ids.append(f"r{len(ids)}")
                        lines.append(line(ids[-1]))
                    else:
                        keys += pick < 0.7
                        lines.append(rnd.choice(notes) + (f" {TOKEN}" if pick < 0.7 else ""))
                data += "".join(x + "\r\n" for x in lines).encode(codec)
            elif rnd.random() < 0.5:
                data += rnd.choice(utf8)
            elif rnd.random() < 0.5:
                ids.append(f"r{len(ids)}")
                data += (line(ids[-1]) + rnd.choice(["\n", "\r\n"])).encode()
            else:
                keys += 1
                data += f"{rnd.choice(notes)} {TOKEN}\n".encode()
        snap = parse(data)
        if sorted(snap.records) != sorted(ids) or (keys and TOKEN.encode() not in b"\n".join(snap.unreadable)):
            failed.append(seed)
    assert not failed


@pytest.mark.parametrize("lines", [2, 20])
def test_many_lines_of_nonsense_between_utf_16_records_lose_neither(tmp_path, lines):
    """UTF-16 lines that read as nonsense either way (noncharacters, kilobytes each) between two
    records: both records are read and each line is set aside (before, a second such line in a row
    ended the reading with a KeyError)."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    nonsense = "\uffff" * 1100
    path.write_bytes(("\ufeff" + line("a") + "\r\n" + (nonsense + "\r\n") * lines + line("b") + "\r\n").encode("utf-16-le"))
    snap = read(path)
    assert sorted(snap.records) == ["a", "b"] and len(snap.unreadable) == lines


def _deploy(n: int) -> str:
    """A record as a tester wrote them (its lengths make the shape that hid a key)."""
    return json.dumps({"id": f"{n:016x}", "type": "log", "topic": "deploy", "missing_context": "m",
                       "lesson": f"lesson {n} rollout", "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})


AWS_KEY = "AKIA" + "QX7R2M4N6P8T0V3W"  # the second tester's fakes of the right shape (the shapes hang on them)
TOKEN_B = "ghp_" + "Zq8Xw2Vb4Nm6Lk1Jh3Gf5Ds7Ap9Qw0Er2Ty4"
AD_SECRET = "abc8Q~" + "Kx7pLm2Qr9Tz4Wv6Yb3Nc5Hd8Jf1G~Z"  # a fake of an Azure AD client secret's shape


def _short(n: int) -> str:
    """A record as the second tester wrote them (its lengths make the shapes it found)."""
    return json.dumps({"id": f"{n:016x}", "type": "log", "topic": "t", "missing_context": f"m{n}", "lesson": f"l{n}",
                       "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})


def _powershell(codec: str, *lines: str) -> bytes:
    return "".join(x + "\r\n" for x in lines).encode(codec)


@pytest.mark.parametrize("shape", ["rules BE", "rules LE", "10,001 build lines", "12,000 notes", "a note that reads {vP}",
                                   "a cp1251 note between UTF-8 records", "a cp1251 note after a UTF-8 record",
                                   "20,000 build lines, then PowerShell", "a cp1251 note, then PowerShell",
                                   "ok, then a cp1253 note", "a colored ok, then a cp949 note, BE",
                                   "ok twice, then a cp1253 note", "a cp1251 note, then one with a key",
                                   "printf x, then PowerShell", "printf x, then PowerShell, BE",
                                   "cp1251 notes and a coloured ok, then PowerShell",
                                   "printf x, then a record cut short, then Git Bash",
                                   "printf ok, then PowerShell", "printf x, then PowerShell, twice",
                                   "printf x, then PowerShell, then Git Bash", "printf x, then a record type first",
                                   "printf x, then PowerShell, then a cp1251 note with a key",
                                   "printf x, then a PowerShell note", "printf x, then a PowerShell note with a key, BE",
                                   "cmd notes, one with a key, then a PowerShell note that starts 一",
                                   "printf x twice, then a note in Chinese", "a key without a line feed, then cmd and Chinese",
                                   "printf x, a note in Korean, then a Git Bash line with a key",
                                   "a key and CR without a line feed, then a note", "printf ok and a bell, then PowerShell",
                                   "a key split between printf and PowerShell", "printf a key and a DEL, then PowerShell, BE",
                                   "a key split around a bell", "printf ok and two backspaces, then PowerShell, BE"])
def test_what_windows_tools_write_keeps_every_record_and_shows_the_key(tmp_path, shape):
    """Shapes testers built from what Windows tools write: lines of box drawing (PowerShell), over
    10,000 lines of build output (Git Bash `>>`), 12,000 PowerShell notes before UTF-8 records, a
    note whose bytes read `{vP}` as UTF-8, a note in the ANSI code page (cmd's `echo >>`,
    Add-Content) beside UTF-8 records: every record is read, and the key is plain to the rules
    (before, the first crashed the reading, and the others lost records or hid the key)."""
    codec = "utf-16-be" if shape.endswith(" BE") else "utf-16-le"
    bom, key = "\ufeff".encode(codec), f"deploy token {TOKEN}"
    data, expected = {
        "rules BE": (bom + _powershell(codec, line("a"), *["─" * 80] * 30, line("b"), line("c")), 3),
        "rules LE": (bom + _powershell(codec, line("a"), *["─" * 80] * 30, line("b"), line("c")), 3),
        "10,001 build lines": (bom + _powershell(codec, line("a")) + "".join(f"build step {i} ok\n" for i in range(10_001)).encode()
                               + f"{line('b')}\n{line('c')}\n{key}\n".encode(), 3),
        "12,000 notes": (bom + _powershell(codec, *[f"note {i}" for i in range(12_000)]) + f"{line('a')}\n{line('b')}\n{key}\n".encode(), 2),
        "a note that reads {vP}": (bom + _powershell(codec, line("a"), "登結上", line("b"), line("c"), key), 3),
        "a cp1251 note between UTF-8 records": (bom + _powershell(codec, line("a")) + f"{line('b')}\n".encode()
                                                + f"Проверить миграции {TOKEN}\r\n".encode("cp1251") + f"{line('c')}\n".encode(), 3),
        "a cp1251 note after a UTF-8 record": (bom + _powershell(codec, line("a")) + f"{line('b')}\n".encode()
                                               + f"Проверить миграции {TOKEN}\r\n".encode("cp1251"), 2),
        "20,000 build lines, then PowerShell": (bom + _powershell(codec, line("a")) + "".join(f"build step {i} ok\n" for i in range(20_000)).encode()
                                                + _powershell(codec, line("b"), line("c"), key), 3),
        "a cp1251 note, then PowerShell": (bom + _powershell(codec, line("a")) + f"Проверить миграции {TOKEN} \r\n".encode("cp1251")
                                           + _powershell(codec, "merge done", line("b"), line("c")), 3),
        # a short UTF-8 line (Git Bash `echo ok >>`) whose UTF-16 reading would run on over the note
        "ok, then a cp1253 note": (bom + f"{line('a')}\n".encode() + b"ok\n" + f"Έλεγχος πριν {TOKEN}\r\n".encode("cp1253")
                                   + _powershell(codec, "note 123", line("b")), 2),
        "a colored ok, then a cp949 note, BE": (bom + f"{line('a')}\n".encode() + b"\x1b[32mok\x1b[0m\n"
                                                + f"배포 전에 확인 {TOKEN}\r\n".encode("cp949") + _powershell(codec, line("b")), 2),
        "ok twice, then a cp1253 note": (bom + _powershell(codec, line("a")) + f"{line('b')}\n".encode() + b"ok\nok\n"
                                         + f"Έλεγχος πριν {TOKEN}\r\n".encode("cp1253"), 2),
        "a cp1251 note, then one with a key": (bom + _powershell(codec, line("a")) + "Проверка\r\n".encode("cp1251")
                                               + f"Проверить миграции {TOKEN}\r\n".encode("cp1251") + f"{line('b')}\n".encode(), 2),
        # a piece without a line feed (`printf x >>`), then PowerShell's `>>` from an odd byte
        "printf x, then PowerShell": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, line("b"), line("c"), key), 3),
        "printf x, then PowerShell, BE": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, line("b"), line("c"), key), 3),
        "cp1251 notes and a coloured ok, then PowerShell": (bom + _powershell(codec, line("a")) + "Проверка\r\n".encode("cp1251")
                                                            + f"Проверка {TOKEN}\r\n".encode("cp1251") + b"\x1b[32mok\x1b[0m"
                                                            + _powershell(codec, line("b"), line("c")), 3),
        # the piece even (read in step, it glued itself to the record), twice, or with an odd line
        # after (the file read in step again), before a record whose keys come in another order,
        # and before a cp1251 note: the rule held for the one shape where nothing odd came after
        "printf ok, then PowerShell": (bom + _powershell(codec, line("a")) + b"ok" + _powershell(codec, line("b"), line("c"), key), 3),
        "printf x, then PowerShell, twice": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, line("b"), key)
                                             + b"x" + _powershell(codec, line("c")), 3),
        "printf x, then PowerShell, then Git Bash": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, line("b"), key)
                                                     + b"ok\n" + _powershell(codec, line("c")), 3),
        "printf x, then a record type first": (bom + _powershell(codec, line("a")) + b"x"
                                               + _powershell(codec, json.dumps({"type": "log", **json.loads(line("b"))}), line("c"), key), 3),
        "printf x, then PowerShell, then a cp1251 note with a key": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, line("b"))
                                                                     + f"Ключ {TOKEN}\r\n".encode("cp1251") + _powershell(codec, line("c")), 3),
        "printf x, then a PowerShell note": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, "merge done", line("b"), line("c"), key), 3),
        "printf x, then a PowerShell note with a key, BE": (bom + _powershell(codec, line("a")) + b"x" + _powershell(codec, key, line("b"), line("c")), 3),
        # what a second tester built against the glue (its records, `_short`): a reading one byte off
        # that the glue put back in step past a key (cp949 bytes that are valid UTF-8), a note that
        # starts with no ASCII, a piece that ends in a key, a key after a note in Korean
        "cmd notes, one with a key, then a PowerShell note that starts 一": (
            bom + _powershell(codec, _short(1), _short(2)) + "Привет\r\n".encode("cp1251")
            + f"키 {AWS_KEY}\r\n".encode("cp949") + _powershell(codec, "一 second", _short(3)), 3),
        "printf x twice, then a note in Chinese": (bom + _powershell(codec, _short(1)) + b"x" + _powershell(codec, _short(2))
                                                   + b"x" + _powershell(codec, "部署前检查一下", *map(_short, range(3, 8)), key), 7),
        "a key without a line feed, then cmd and Chinese": (bom + _powershell(codec, _short(1)) + f"Привет {AWS_KEY}\n".encode()
                                                            + _powershell(codec, "日本語")
                                                            + f"好 {TOKEN_B}".encode() + "Ключ\r\n".encode("cp1251") + b"\n"
                                                            + _powershell(codec, "中文 note"), 1),
        "printf x, a note in Korean, then a Git Bash line with a key": (bom + _powershell(codec, _short(1)) + b"x"
                                                                        + _powershell(codec, "배포 전에 확인")
                                                                        + f"k {TOKEN}\n".encode() + _powershell(codec, _short(2)), 2),
        # a third tester's: a key whose last character the line would take (`~`, `%` are a key's
        # too), a piece that ends in a control, a key half in the piece and half in the line
        "a key and CR without a line feed, then a note": (bom + _powershell(codec, _short(1)) + f"k {AD_SECRET}\r".encode()
                                                          + _powershell(codec, "hello world", _short(2)), 2),
        "printf ok and a bell, then PowerShell": (bom + _powershell(codec, line("a")) + b"ok\x07"
                                                  + _powershell(codec, line("b"), line("c"), key), 3),
        "printf a key and a DEL, then PowerShell, BE": (bom + _powershell(codec, _short(1)) + f"x{AWS_KEY}%W\x7f".encode()
                                                        + _powershell(codec, _short(2), _short(3)), 3),
        # a fourth tester's: the halves of a key around a control, two controls ending a piece
        "a key split around a bell": (bom + _powershell(codec, _short(1)) + f"K={TOKEN_B[:16]}\a".encode()
                                      + _powershell(codec, TOKEN_B[16:], _short(2)), 1),
        "printf ok and two backspaces, then PowerShell, BE": (bom + _powershell(codec, line("a")) + b"ok\x08\x08"
                                                              + _powershell(codec, line("b"), line("c"), key), 3),
        "a key split between printf and PowerShell": (bom + _powershell(codec, _short(1)) + f"export K={AWS_KEY[:10]}".encode()
                                                      + _powershell(codec, AWS_KEY[10:], _short(2)), 1),
        # the record after the piece has no CR, LF (a write cut short): the piece is no line of its own
        "printf x, then a record cut short, then Git Bash": (bom + _powershell(codec, _deploy(9)) + b"x" + _deploy(1).encode(codec)
                                                             + f"{_deploy(5)}\nnote {TOKEN}\n".encode(), 1),
    }[shape]
    snap = parse(data)
    assert len(snap.records) == expected
    unreadable = b"\n".join(snap.unreadable)
    shown = {"cmd notes, one with a key, then a PowerShell note that starts 一": AWS_KEY,
             "a key without a line feed, then cmd and Chinese": TOKEN_B,
             "a key and CR without a line feed, then a note": AD_SECRET,
             "a key split between printf and PowerShell": AWS_KEY,
             "a key split around a bell": TOKEN_B,
             "printf a key and a DEL, then PowerShell, BE": AWS_KEY}.get(shape, TOKEN)
    assert shape.startswith("rules") or shown.encode() in unreadable or (
        # read as one line, NULs between the key's characters (the rules read past them), as 979fecf read it
        shape in ("a key split between printf and PowerShell", "a key split around a bell")
        and rules_hit(unreadable.decode("utf-8", "replace"))
    )


def test_a_utf_8_record_after_a_utf_16_line_without_its_line_feed_is_read(tmp_path):
    """UTF-16 whose last record has no line feed (`Out-File -NoNewline`), then a record appended in
    UTF-8 starting with a line feed (`printf '\\n%s\\n' "$record" >>`): both are read."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(("\ufeff" + line("a")).encode("utf-16-le") + ("\n" + line("b") + "\n").encode())
    assert sorted(read(path).records) == ["a", "b"] and not read(path).unreadable


def test_a_byte_order_mark_inside_the_file_does_not_hide_a_record(tmp_path):
    """Two UTF-8 files with their BOMs joined by `cat`: the record after the second BOM is read."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(("\ufeff" + line("a") + "\n").encode() + ("\ufeff" + line("b") + "\n").encode())
    assert sorted(read(path).records) == ["a", "b"] and not read(path).unreadable


def test_the_markers_of_a_region_inside_a_region_are_not_set_aside(tmp_path):
    """A criss-cross merge without the driver leaves a region inside a region, whose markers git
    makes longer (<<<<<<<<<): no marker line reaches the quarantine file (git would flag it as a
    leftover marker there); the copy of the conflicted file keeps them."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_text("\n".join([line("a"), "<<<<<<< ours", "<<<<<<<<< Temporary merge branch 1", line("b"),
                                "||||||||| 1234567", "=========", line("c"), ">>>>>>>>> Temporary merge branch 2",
                                "=======", line("d"), ">>>>>>> theirs"]) + "\n", encoding="utf-8")
    log(path, "t", "m", "l")
    quarantine = path.parent / "memory_log.quarantine.jsonl"
    kept = quarantine.read_text(encoding="utf-8") if quarantine.exists() else ""
    assert not any(x.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>")) for x in kept.splitlines()), kept
    assert list(path.parent.glob("memory_log.jsonl.*.conflicted"))


def test_a_line_that_only_starts_like_a_conflict_marker_is_set_aside_not_dropped(tmp_path):
    """A Markdown heading's underline (=========) in a file with no conflict region is a line like
    any other that is not a record: the next write moves it to the quarantine file."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    path.write_text(line("a") + "\nMy notes\n==========\nkeep this text\n", encoding="utf-8")
    log(path, "t", "m", "l")
    kept = (path.parent / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert kept == "My notes\n==========\nkeep this text\n", kept


@pytest.mark.parametrize("piece", [b"", b'\x00{\x00"\x00i\n'], ids=["records", "a UTF-16 piece too"])
def test_a_damaged_utf_8_file_that_starts_like_utf_16_is_read_line_by_line(tmp_path, piece):
    """A UTF-8 memory file that a tool gave a UTF-16 byte order mark is not read as UTF-16 (its
    text would be nonsense and every record set aside), even when a line of it is a piece of UTF-16
    text (which, read as UTF-16, starts with "{"): each line is read as what it is."""
    path = memory_path(tmp_path)
    path.parent.mkdir()
    data = b"\xff\xfe" + (line("a") + "\n" + line("b") + "\n" + line("c") + "\n").encode()
    data += b"\n" * ((len(data) + len(piece)) % 2) + piece  # an even length, which UTF-16 decodes
    path.write_bytes(data)
    snap = read(path)
    assert sorted(snap.records) == ["a", "b", "c"] and len(snap.unreadable) == bool(piece), snap.unreadable
