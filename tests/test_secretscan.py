"""Behaviour of setup.scan: find credentials already in a memory file, and redact them in place.

The files are real files in tmp_path, written line by line so that they hold credentials the
sanitizer would have refused (as a hand edit or an older install would leave them). Fakes are
built in code.
"""

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_memory.errors import LockTimeout
from sentinel_memory.record.records import record_id, to_line
from sentinel_memory.setup.scan import Finding, redact_file, scan
from sentinel_memory.record.store import read
from conftest import lock_held_elsewhere

ROOT = Path(__file__).resolve().parents[1]

GITHUB = "gh" + "p_" + "A1b2" * 9
CREATED = "2026-01-05T09:00:00+00:00"


def record(topic, missing_context, lesson, ask="", type_="log", **meta):
    rec = {"id": record_id(type_, topic, missing_context, lesson), "type": type_, "topic": topic,
           "missing_context": missing_context, "lesson": lesson, "ask_next_time": ask,
           "meta": {"created": CREATED, **meta}}
    return rec


def write(path, *records):
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = sorted(to_line(r) for r in records)
    path.write_text("".join(line + "\n" for line in sorted(lines, key=lambda text: json.loads(text)["id"])),
                    encoding="utf-8")


def test_scan_reports_where_and_which_rule_but_never_the_value(tmp_path):
    """scan names the record id, field and rule of each credential; the value appears nowhere."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    leaky = record("deploy", f"the release script had {GITHUB}", "use secrets.GITHUB_TOKEN",
                   ask="which token?")
    clean = record("auth", "the token: expires soon", "refresh before the batch starts")
    write(path, leaky, clean)
    findings = scan(path)
    assert findings == [Finding(leaky["id"], "missing_context", "github_token")]
    assert GITHUB not in repr(findings)


def test_scan_finds_the_rest_of_a_key_an_earlier_version_left_after_a_hidden_character(tmp_path):
    """Before the fix, a key with a zero-width space or a soft hyphen where it breaks was stored as
    [REDACTED] and that character, then the key's secret part: scan reports it in every field,
    --redact replaces it; a [REDACTED] followed by such a character and a short word is kept."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    rest = "Zq8Wv3" + "Rt6Yu9Io2Pa5Sd7Fg1"
    left = record("alerts", f"the bot posts with [REDACTED]\u200b{rest}", "ask ops",
                  ask=f"still [REDACTED]\u00ad{rest}?")
    kept = record("notes", "a [REDACTED]\u200bkey was here", "fine")
    write(path, left, kept)

    findings = scan(path)
    redact_file(path)

    assert findings == [Finding(left["id"], "missing_context", "rest_of_a_key"),
                        Finding(left["id"], "ask_next_time", "rest_of_a_key")]
    text = path.read_text(encoding="utf-8")
    assert rest not in text and "the bot posts with [REDACTED]" in text and to_line(kept) in text
    assert scan(path) == []


def test_scan_uses_the_strict_rules_on_topic_and_ask_next_time(tmp_path):
    """topic and ask_next_time get only provider formats: a keyword assignment there is not reported."""
    path = tmp_path / "memory_log.jsonl"
    rec = record("password=hunter2", "x", "y", ask=f"is {GITHUB} still valid?")
    write(path, rec)
    assert scan(path) == [Finding(rec["id"], "ask_next_time", "github_token")]


def test_scan_of_a_missing_file_finds_nothing_and_creates_nothing(tmp_path):
    """Scanning is read-only: no file, no .context directory, no lock appears."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    assert scan(path) == []
    assert not (tmp_path / ".context").exists()


def test_redact_file_rewrites_only_the_records_that_held_credentials(tmp_path):
    """Credentials become [REDACTED]; other lines are copied byte for byte; counts are returned."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    leaky = record("db", "connect with postgres://app:s3cr3t-Pw!@db:5432/x", f"and {GITHUB} too")
    clean = record("auth", "the token: expires soon", "refresh it")
    write(path, leaky, clean)
    clean_line = to_line(clean)

    assert redact_file(path) == (1, 2)

    text = path.read_text(encoding="utf-8")
    assert "s3cr3t-Pw!" not in text and GITHUB not in text
    assert clean_line + "\n" in text
    assert scan(path) == []


def test_a_redacted_log_gets_the_id_of_its_stored_values_and_keeps_its_meta(tmp_path):
    """Ids are computed on stored values (docs/contract.md §3.4): the redacted record is re-identified, keeps
    meta.created and gains meta.updated; the old id is gone."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    leaky = record("db", "password=hunter2 was in .env", "use the vault", custom="kept")
    write(path, leaky)

    redact_file(path)

    records = {rid: e.record for rid, e in read(path).records.items()}
    (new_id, new), = records.items()
    assert new["missing_context"] == "password=[REDACTED] was in .env"
    assert new_id == hashlib.sha256(("db" + new["missing_context"]).encode()).hexdigest()[:16]
    assert new_id != leaky["id"]
    assert new["meta"]["created"] == CREATED and new["meta"]["updated"] and new["meta"]["custom"] == "kept"


def test_a_principle_is_re_identified_on_its_lesson(tmp_path):
    """A principle's id hangs on topic + lesson, so a redacted lesson changes it; a redacted
    ask_next_time alone does not."""
    path = tmp_path / "memory_log.jsonl"
    lesson_leak = record("ci", "", f"never inline {GITHUB}", type_="principle", source_count=3)
    ask_leak = record("ops", "", "rotate quarterly", ask=f"is {GITHUB} revoked?", type_="principle")
    write(path, lesson_leak, ask_leak)

    assert redact_file(path) == (2, 2)

    records = read(path).records
    assert ask_leak["id"] in records and lesson_leak["id"] not in records
    assert record_id("principle", "ci", "", "never inline [REDACTED]") in records
    assert all(e.record["meta"].get("source_count") in (3, None) for e in records.values())


def test_redact_file_with_nothing_to_redact_does_not_rewrite_the_file(tmp_path):
    """A clean file keeps its bytes and its mtime: no diff noise."""
    path = tmp_path / "memory_log.jsonl"
    write(path, record("auth", "the token: expires soon", "refresh it"))
    before = path.read_bytes(), path.stat().st_mtime_ns
    assert redact_file(path) == (0, 0)
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_unreadable_lines_survive_a_redaction(tmp_path):
    """A line that is not a record is moved to the quarantine file, never lost."""
    path = tmp_path / "memory_log.jsonl"
    write(path, record("db", "password=hunter2", "use the vault"))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("not json\n")
    redact_file(path)
    assert "not json" in (tmp_path / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert "hunter2" not in path.read_text(encoding="utf-8")


def test_redacting_twice_changes_nothing_more(tmp_path):
    """After one redaction the file is a fixed point."""
    path = tmp_path / "memory_log.jsonl"
    write(path, record("db", f"{GITHUB} and password=hunter2", "x"))
    redact_file(path)
    once = path.read_bytes()
    assert redact_file(path) == (0, 0)
    assert path.read_bytes() == once


def test_a_redacted_record_that_lands_on_an_existing_id_yields_to_a_later_update(tmp_path):
    """When redaction gives a record the id of another one, the one logged or updated last stays
    (the redaction's own stamp does not count); the other's text is not duplicated."""
    path = tmp_path / "memory_log.jsonl"
    leaky = record("db", "password=hunter2 was in .env", "old lesson")
    clean = record("db", "password=[REDACTED] was in .env", "newer lesson")
    clean["meta"]["created"] = "2026-02-01T09:00:00+00:00"  # logged after the leaky one
    write(path, leaky, clean)

    assert redact_file(path) == (1, 1)

    (kept,) = [e.record for e in read(path).records.values()]
    assert kept["lesson"] == "newer lesson" and kept["id"] == clean["id"]
    assert "hunter2" not in path.read_text(encoding="utf-8")


def test_a_redacted_record_that_lands_on_an_older_id_replaces_it(tmp_path):
    """When the leaky record is the later one, its redacted version replaces the older record."""
    path = tmp_path / "memory_log.jsonl"
    leaky = record("db", "password=hunter2 was in .env", "newer lesson")
    leaky["meta"]["created"] = "2026-02-01T09:00:00+00:00"
    clean = record("db", "password=[REDACTED] was in .env", "old lesson")
    write(path, leaky, clean)

    assert redact_file(path) == (1, 1)

    (kept,) = [e.record for e in read(path).records.values()]
    assert kept["lesson"] == "newer lesson" and kept["id"] == clean["id"] and kept["meta"]["updated"]


def test_redact_file_waits_for_the_lock_and_gives_up_changing_nothing(tmp_path):
    """While another process holds the memory file's lock, redaction fails with a clear message
    and the file keeps its bytes."""
    path = tmp_path / "memory_log.jsonl"
    write(path, record("db", f"{GITHUB} in the script", "use the vault"))
    before = path.read_bytes()
    with lock_held_elsewhere(path):
        with pytest.raises(LockTimeout, match="locked by another process.*Nothing was saved"):
            redact_file(path, timeout=0.2)
    assert path.read_bytes() == before


WRITER = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from sentinel_memory.record.records import record_id
from sentinel_memory.record.store import update
from sentinel_memory.record.records import Entry

path, who = Path({path!r}), sys.argv[1]
for i in range({n}):
    # an older install that did not redact: the key goes into the file as written
    topic, missing = f"w{{who}}", f"note {{i}} with {key}"
    rec = {{"id": record_id("log", topic, missing, "l"), "type": "log", "topic": topic,
           "missing_context": missing, "lesson": "l", "ask_next_time": "",
           "meta": {{"created": "2026-01-05T09:00:00+00:00"}}}}
    update(path, lambda snap: snap.edited(put=[Entry.of(rec)]))
"""

REDACTOR = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from sentinel_memory.setup.scan import redact_file
for _ in range({n}):
    redact_file(Path({path!r}))
"""


def test_redacting_while_others_write_loses_no_record(tmp_path):
    """Redaction is one locked read-modify-write: records written by other processes while it
    runs are all kept, and once everyone is done a last pass leaves no credential behind."""
    path = tmp_path / "memory_log.jsonl"
    root = str(ROOT)
    writers, per_writer = 3, 15
    procs = [subprocess.Popen([sys.executable, "-c", WRITER.format(root=root, path=str(path), n=per_writer,
                                                                   key=GITHUB), str(w)])
             for w in range(writers)]
    procs.append(subprocess.Popen([sys.executable, "-c", REDACTOR.format(root=root, path=str(path), n=30)]))
    for proc in procs:
        assert proc.wait(timeout=120) == 0

    redact_file(path)
    records = [e.record for e in read(path).records.values()]
    assert len(records) == writers * per_writer
    assert {(r["topic"], r["missing_context"]) for r in records} == {
        (f"w{w}", f"note {i} with [REDACTED]") for w in range(writers) for i in range(per_writer)}
    assert GITHUB not in path.read_text(encoding="utf-8")


def test_a_credential_in_a_line_that_is_not_a_record_is_found_and_redacted_in_quarantine(tmp_path):
    """A hand edit that broke the JSON is not a record, but its key is still found (by line
    number, never by value); redaction moves the line to the tracked quarantine file, as every
    write does, with the key replaced and the rest of the line kept."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    good = record("auth", "the token: expires soon", "refresh it")
    write(path, good)
    broken = '{"topic": "ci", "lesson": "use ' + GITHUB + '"'  # no closing brace
    with path.open("a", encoding="utf-8") as handle:
        handle.write(broken + "\n")

    findings = scan(path)
    assert findings == [Finding("memory_log.jsonl:2", "line", "github_token")]
    assert GITHUB not in repr(findings)

    assert redact_file(path) == (0, 1)

    quarantine = tmp_path / ".context" / "memory_log.quarantine.jsonl"
    assert quarantine.read_text(encoding="utf-8") == broken.replace(GITHUB, "[REDACTED]") + "\n"
    assert path.read_text(encoding="utf-8") == to_line(good) + "\n"
    assert scan(path) == []


def test_a_credential_in_a_line_of_a_utf_16_file_is_found_by_scan_and_the_staged_check(tmp_path):
    """A UTF-16 memory file (PowerShell) with a record and a note that holds a key: scan and the
    pre-commit check read it as its reader does, so the key is found on the note's line (before,
    they compared the file's UTF-16 lines with its lines read as text, and looked at none)."""
    from sentinel_memory.setup.scan import scan_bytes

    path = tmp_path / ".context" / "memory_log.jsonl"
    write(path, record("auth", "the token: expires soon", "refresh it"))
    text = path.read_text(encoding="utf-8") + f"note: temp token {GITHUB}\r\n"
    path.write_bytes(text.encode("utf-16"))

    assert scan(path) == [Finding("memory_log.jsonl:2", "line", "github_token")]
    assert scan_bytes(path.read_bytes(), b"") == [Finding("memory_log.jsonl:2", "line", "github_token")]


def test_a_credential_already_in_the_quarantine_file_is_found_and_redacted(tmp_path):
    """The quarantine file is tracked too: a key in it is reported by line and redacted in place;
    a quarantine file with nothing to redact keeps its bytes."""
    path = tmp_path / "memory_log.jsonl"
    write(path, record("auth", "the token: expires soon", "refresh it"))
    quarantine = tmp_path / "memory_log.quarantine.jsonl"
    quarantine.write_text("not json\npassword=hunter2 and more\n", encoding="utf-8")

    assert scan(path) == [Finding("memory_log.quarantine.jsonl:2", "line", "keyword_assignment")]
    assert redact_file(path) == (0, 1)
    assert quarantine.read_text(encoding="utf-8") == "not json\npassword=[REDACTED] and more\n"

    before = quarantine.read_bytes(), quarantine.stat().st_mtime_ns
    assert redact_file(path) == (0, 0)
    assert (quarantine.read_bytes(), quarantine.stat().st_mtime_ns) == before


def test_scan_reads_every_string_of_a_record_and_redact_removes_each(tmp_path):
    """A line written by another tool or a hand edit may hold a credential anywhere: in a field the
    contract does not define, nested inside one, as a meta key, in `files`, in a lesson that is a
    list. `scan` reports each (exit 1 from the command) and `scan --redact` removes every one, the
    record's other strings kept."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    places = {
        "an unknown field": {"note": f"deploy with {GITHUB}"},
        "a nested field": {"extra": {"deep": [{"token": f"x {GITHUB}"}]}},
        "a meta key": {"meta": {"created": CREATED, GITHUB: "seen"}},
        "a files entry": {"files": ["src/app.py", f"notes/{GITHUB}.txt"]},
        "a lesson that is a list": {"lesson": ["rotate keys", f"old one was {GITHUB}"]},
        "an unknown top-level key": {GITHUB: 1},
    }
    records = []
    for n, (name, fields) in enumerate(places.items()):
        rec = record(f"topic-{n}", name, "lesson")
        rec.update(fields)
        rec["id"] = record_id("log", rec["topic"], name, "x")
        records.append(rec)
    write(path, *records)
    found = scan(path)
    assert {f.record_id for f in found} == {r["id"] for r in records}, found
    assert all(f.rule == "github_token" for f in found) and GITHUB not in repr(found)
    done = subprocess.run([sys.executable, str(ROOT / "server.py"), "--project", str(tmp_path), "scan"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    redact_file(path)
    text = path.read_text(encoding="utf-8")
    assert GITHUB not in text and scan(path) == []
    assert "src/app.py" in text and "rotate keys" in text and CREATED in text


def test_scan_never_prints_a_credential_that_is_a_records_id(tmp_path):
    """A record whose id is a key (a hand edit): scan names it redacted, in its report and in the
    pre-commit check's refusal, which a terminal or a CI log keeps."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    rec = record("deploy", "m", f"rotate {GITHUB}")
    rec["id"] = GITHUB
    write(path, rec)
    found = scan(path)
    assert found and GITHUB not in repr(found)
    done = subprocess.run([sys.executable, str(ROOT / "server.py"), "--project", str(tmp_path), "scan"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and GITHUB not in done.stdout + done.stderr and "[REDACTED]" in done.stdout


def test_scan_walks_a_record_nested_as_deep_as_the_reader_allows(tmp_path):
    """Nesting is walked without recursion: a deep unknown field is read to its end, no crash."""
    path = tmp_path / "memory_log.jsonl"
    rec = record("t", "m", "l")
    line = to_line(rec)[:-1] + ', "deep": ' + "[" * 900 + json.dumps(GITHUB) + "]" * 900 + "}"
    path.write_text(line + "\n", encoding="utf-8")
    assert [f.rule for f in scan(path)] == ["github_token"]
    redact_file(path)
    assert GITHUB not in path.read_text(encoding="utf-8")


def test_scan_redact_keeps_a_hand_written_record_whose_text_holds_a_lone_surrogate(tmp_path):
    """A record written by hand (or in a cloned repository) may hold "\\ud800", a lone surrogate no
    write accepts. `doctor` reads it; `scan --redact` redacts the key beside it and writes the
    record back, the surrogate escaped as it was: no traceback, nothing lost, the file read whole."""
    path = tmp_path / ".context" / "memory_log.jsonl"
    path.parent.mkdir()
    key = "AKIA" + "Q7RZ3M9XK2P4W8N6"  # the shape of an AWS access key id, built here
    hand = {"id": "zz02", "type": "log", "topic": "long\ud800", "missing_context": "m\udfff", "lesson": key,
            "ask_next_time": "", "meta": {"created": CREATED}}
    path.write_bytes(json.dumps(hand).encode("ascii") + b"\n")  # the file holds the escapes, as written
    doctor = subprocess.run([sys.executable, str(ROOT / "server.py"), "--project", str(tmp_path), "doctor"],
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in doctor.stderr and "1 record" in doctor.stdout, doctor.stdout + doctor.stderr
    done = subprocess.run([sys.executable, str(ROOT / "server.py"), "--project", str(tmp_path), "scan", "--redact"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    data = path.read_bytes()
    assert key.encode() not in data and b"\\ud800" in data and b"\\udfff" in data
    snap = read(path)
    assert not snap.unreadable and len(snap.records) == 1
    (stored,) = [e.record for e in snap.records.values()]
    assert stored["topic"] == "long\ud800" and stored["lesson"] == "[REDACTED]" and stored["missing_context"] == "m\udfff"


def test_two_lessons_that_redact_to_one_record_keep_the_older_in_the_quarantine_file(tmp_path):
    """Two hand-written lessons whose missing context differed only by a key become one record once
    it is redacted; the newer stays and the older is kept, redacted, in the quarantine file, with a
    warning that says so: scan --redact deletes no lesson."""
    path = tmp_path / "memory_log.jsonl"
    other = "gh" + "p_" + "Z9y8" * 9
    older = record("gh", f"the token {GITHUB} expired", "LESSON ONE: rotate it via the vault",
                   created="2026-01-01T00:00:00+00:00", updated="2026-01-02T00:00:00+00:00")
    newer = record("gh", f"the token {other} expired", "LESSON TWO: a different rule",
                   created="2026-01-01T00:00:00+00:00", updated="2026-01-03T00:00:00+00:00")
    write(path, older, newer)

    result = subprocess.run([sys.executable, "-c", "import sys; from sentinel_memory.setup.scan import redact_file; "
                             "redact_file(sys.argv[1])", str(path)], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[1])

    assert result.returncode == 0, result.stderr
    lessons = [e.record["lesson"] for e in read(path).records.values()]
    assert lessons == ["LESSON TWO: a different rule"]
    quarantined = [json.loads(line) for line in (tmp_path / "memory_log.quarantine.jsonl").read_text().splitlines()]
    assert [(q["lesson"], q["missing_context"]) for q in quarantined] == [
        ("LESSON ONE: rotate it via the vault", "the token [REDACTED] expired")]
    assert GITHUB not in (tmp_path / "memory_log.quarantine.jsonl").read_text()
    assert "1 redacted record became the same record as a newer one" in result.stderr, result.stderr


def test_twins_past_what_one_write_sets_aside_are_kept_in_the_copy_the_warning_names(tmp_path):
    """150 older twins of about 1 KB each are more than the quarantine file takes in one write:
    those past it stay in the copy of the file as it was (git-ignored), which the warning names,
    and every one of them is in one file or the other."""
    path = tmp_path / "memory_log.jsonl"
    rows = []
    for i in range(150):
        key = "gh" + "p_" + f"{i:04d}" + "Q7r8" * 8
        rows.append(record("deploy", f"step {i} token {key}", f"LOSER-{i:03d} " + "why it matters. " * 55,
                           updated="2026-01-02T00:00:00+00:00"))
        rows.append(record("deploy", f"step {i} token [REDACTED]", f"winner {i}", updated="2026-02-01T00:00:00+00:00"))
    write(path, *rows)

    result = subprocess.run([sys.executable, "-c", "import sys; from sentinel_memory.setup.scan import redact_file; "
                             "redact_file(sys.argv[1])", str(path)], capture_output=True, text=True, timeout=120,
                            cwd=Path(__file__).resolve().parents[1])

    assert result.returncode == 0, result.stderr
    copies = list(tmp_path.glob("memory_log.jsonl.*.conflicted"))
    assert len(copies) == 1 and f"kept as the file was in {copies[0].name}" in result.stderr, result.stderr
    kept = (tmp_path / "memory_log.quarantine.jsonl").read_text() + copies[0].read_text()
    assert all(f"LOSER-{i:03d}" in kept for i in range(150))


def test_a_principles_older_twin_keeps_its_missing_context(tmp_path):
    """A principle's id is its topic and lesson: an older twin that differs only in its missing
    context still says something the kept one does not, so it is set aside too."""
    path = tmp_path / "memory_log.jsonl"
    older = record("deploy", "UNIQUE-CONTEXT: which org owns the token", f"authenticate with {GITHUB}",
                   type_="principle", updated="2026-01-02T00:00:00+00:00")
    newer = record("deploy", "", "authenticate with [REDACTED]", type_="principle", updated="2026-02-01T00:00:00+00:00")
    write(path, older, newer)

    redact_file(path)

    assert "UNIQUE-CONTEXT" in (tmp_path / "memory_log.quarantine.jsonl").read_text()
