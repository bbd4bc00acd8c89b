"""The commands for people (`python server.py <command>`), run as real processes."""

import itertools
import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import unicodedata
from pathlib import Path

import pytest
from filelock import FileLock

import forkrun
from gitrepos import env  # noqa: F401 (a fixture)

from sentinel_memory.__main__ import too_old
from sentinel_memory.cli.commands import COMMANDS
from sentinel_memory.record.records import prepare

ROOT = Path(__file__).resolve().parents[1]
SERVER = str(ROOT / "server.py")


def run(project: Path | None, *args: str, check_rc: int | None = 0, env: dict | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python server.py [--project DIR] ARGS`, forked from an interpreter that has made the
    imports (tests/forkrun.py; test_every_command_answers_a_forked_start_as_a_fresh_one)."""
    before = ["--project", str(project)] if project is not None else []
    result = forkrun.run([*before, *args], text=True, encoding="utf-8", timeout=60, env=env, cwd=cwd)
    if check_rc is not None:
        assert result.returncode == check_rc, result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "app"
    path.mkdir()
    return path


def logged_id(project: Path, topic: str, missing: str, lesson: str, *more: str) -> str:
    out = run(project, "log", "--topic", topic, "--missing-context", missing, "--lesson", lesson, *more, "--json")
    return json.loads(out.stdout)["id"]


def memory(project: Path) -> Path:
    return project / ".context" / "memory_log.jsonl"


def ids_in_file(project: Path) -> list[str]:
    return [json.loads(line)["id"] for line in memory(project).read_text(encoding="utf-8").splitlines()]


def test_log_search_show_list_stats_and_export_round_trip(project):
    """A lesson added by hand is found, shown, counted and exported, Korean intact."""
    rid = logged_id(project, "결제", "VAT 국가별", "세율 파일 확인")
    other = logged_id(project, "auth", "token refresh", "use the refresh endpoint")
    assert sorted(r["id"] for r in json.loads(run(project, "search", "--json").stdout)) == sorted([rid, other])
    assert json.loads(run(project, "show", rid, "--json").stdout)["lesson"] == "세율 파일 확인"
    topics = json.loads(run(project, "list", "--json").stdout)
    assert {t["topic"]: t["logs"] for t in topics} == {"auth": 1, "결제": 1}
    stats = json.loads(run(project, "stats", "--json", "--threshold", "1").stdout)
    assert stats["records"] == 2 and stats["compaction_required"] and stats["over_threshold"] == 1
    markdown = run(project, "export").stdout
    assert "## 결제" in markdown and f"`{other}`" in markdown


def test_search_shows_the_records_that_mention_the_words_and_counts_the_rest(project):
    """search 세율 표 finds the Korean lesson (even inside a longer word), says how many other
    records it left out, and exits 1 when nothing mentions the words."""
    rid = logged_id(project, "결제", "부가세가 국가마다 다름", "세율표를 먼저 확인")
    logged_id(project, "auth", "token refresh", "use the refresh endpoint")
    found = run(project, "search", "세율", "확인")  # two words without quotes
    assert rid in found.stdout and "refresh" not in found.stdout
    assert "1 other record shares no word of '세율 확인' that counts" in found.stdout
    assert [r["id"] for r in json.loads(run(project, "search", "세율", "--json").stdout)] == [rid]
    assert len(json.loads(run(project, "search", "--json").stdout)) == 2
    none = run(project, "search", "kubernetes", check_rc=1)
    assert "No records match 'kubernetes'" in none.stdout
    assert "with topic 'billing'" in run(project, "search", "--topic", "billing", check_rc=1).stdout


def test_search_takes_files_and_says_how_strongly_each_record_matches(project):
    """search --file (repeatable) puts the records citing those files first, and --json gives each
    record's match strength, whether it is strong and why; stop words match nothing."""
    for name in ("shop/pay/refund.py", "shop/pay/vat.py", "shop/auth/login.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("x\n")
    refund = logged_id(project, "payment", "refunds rounded down", "round half even", "--file", "shop/pay/refund.py")
    login = logged_id(project, "auth", "sessions expired", "refresh the token", "--file", "shop/auth/login.py")
    vat = logged_id(project, "tax", "vat by country", "read the rate table", "--file", "shop/pay/vat.py")
    args = ("search", "--file", "shop/auth/login.py", "--file", "shop/pay/refund.py", "--json")
    found = json.loads(run(project, *args).stdout)
    assert [r["id"] for r in found][:2] in ([refund, login], [login, refund]) and found[2]["id"] == vat
    by_id = {r["id"]: r["match"] for r in found}
    assert by_id[refund]["strong"] and by_id[refund]["reasons"] == ["file shop/pay/refund.py"]
    assert not by_id[vat]["strong"] and by_id[vat]["reasons"] == ["directory shop/pay/"]
    assert by_id[login]["strength"] >= 1.0
    assert "No records match 'the'" in run(project, "search", "the", check_rc=1).stdout
    weak = run(project, "search", "rate", "table", "sessions").stdout
    assert "match: strong" in weak and vat in weak
    # a record that shares only a word any task uses is listed as a weak match, and says why
    fixed = logged_id(project, "release", "the tag was missing", "fix the tag before the upload")
    generic = run(project, "search", "fix").stdout
    assert generic.startswith("Nothing matches strongly") and fixed in generic
    assert "match: weak 0.00: only words most records hold or any task uses, numbers, or parts of words or paths" in generic


def _spans(line: str) -> list[tuple[int, int]]:
    """(first, last + 1) display columns of each run of non-spaces in a table line."""
    spans, column, start = [], 0, None
    for ch in line + " ":
        if ch == " " and start is not None:
            spans.append((start, column))
            start = None
        elif ch != " " and start is None:
            start = column
        column += 2 if unicodedata.east_asian_width(ch) in "WF" else 1  # as a terminal draws it
    return spans


@pytest.mark.parametrize("command", ["list", "stats"])
def test_tables_line_up_with_korean_topics(project, command):
    """Korean topics take two columns each, so every column of list and stats lines up: text
    starts under the dashes, numbers end under them."""
    logged_id(project, "결제모듈", "m", "l")
    logged_id(project, "인증", "m", "l")
    logged_id(project, "api-gateway", "m2", "l")
    lines = run(project, command).stdout.splitlines()
    dashes = next(i for i, line in enumerate(lines) if line.startswith("---"))
    columns = _spans(lines[dashes])
    rows = lines[dashes + 1:]
    assert len(rows) == 3
    for row in rows:
        cells = _spans(row)
        assert len(cells) == 4, row
        assert cells[0][0] == columns[0][0] and cells[3] == columns[3], row  # topic and date start in place
        assert cells[1][1] == columns[1][1] and cells[2][1] == columns[2][1], row  # counts end in place


def _on_a_terminal(args: list[str], env: dict) -> str:
    """Run a command with its stdout on a real pseudo-terminal; returns what it wrote there."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, SERVER, *args], stdout=follower, stderr=subprocess.PIPE, env=env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    return b"".join(chunks).decode("utf-8")


def test_colour_only_on_a_terminal_and_never_with_no_color(project):
    """On a terminal the ids are coloured; in a pipe, or with NO_COLOR set, there is no escape code."""
    rid = logged_id(project, "결제", "m", "l")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    args = ["--project", str(project), "search"]
    assert f"\x1b[1;36m{rid}" in _on_a_terminal(args, env)
    assert "\x1b[" not in _on_a_terminal(args, {**env, "NO_COLOR": "1"})
    piped = run(project, "search", env=env).stdout
    assert rid in piped and "\x1b[" not in piped


def test_project_may_come_after_the_command_name(project, tmp_path):
    """--project works before or after the command; after it wins, as the nearer word."""
    rid = logged_id(project, "a", "m", "l")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert rid in run(None, "show", rid, "--project", str(project)).stdout
    assert rid in run(None, "--project", str(project), "show", rid).stdout
    run(None, "--project", str(project), "show", rid, "--project", str(elsewhere), check_rc=1)


def test_a_typo_gets_a_suggestion_and_exit_2(project):
    """A misspelt command or option names the likely one, exits 2 and shows no traceback."""
    command = run(project, "serach", "VAT", check_rc=2)
    assert "unknown command 'serach'; did you mean 'search'?" in command.stderr
    option = run(project, "search", "--topics", "x", check_rc=2)
    assert "did you mean '--topic'?" in option.stderr and "usage: python server.py search" in option.stderr
    assert "at least 1" in run(project, "stats", "--threshold", "0", check_rc=2).stderr


def test_an_interpreter_without_the_requirements_says_which_python_to_use(project):
    """Started with a python that lacks the requirements (here: without its site-packages), both the
    commands and the server say what is missing and how to fix it, exit 2, and show no traceback."""
    for args in (["--project", str(project), "init", "--client", "codex"], ["--project", str(project)]):
        result = subprocess.run([sys.executable, "-S", SERVER, *args], capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=60)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert "is not installed for" in result.stderr and "pip install -r" in result.stderr
    # A command that reads needs no requirement (the lock is the standard library's flock on POSIX).
    if os.name == "posix":
        listed = subprocess.run([sys.executable, "-S", SERVER, "--project", str(project), "list"],
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr


def test_help_anywhere_on_the_line_lists_the_commands(project):
    """`server.py --project DIR --help` is the command list, not the bare server's usage."""
    text = run(project, "--help").stdout
    assert all(command in text for command in ("search", "forget", "doctor"))


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in ("merge-driver", "textconv")])
def test_every_command_explains_itself_and_the_exit_codes(command):
    """`<command> --help` describes the command, every option, --project and the exit codes."""
    text = run(None, command, "--help").stdout
    assert "--project DIR" in text and "exit codes: 0 success" in text
    assert text.split("\n\n")[1].strip()  # the description
    options = re.split(r"\n  (?=-)", text.split("options:", 1)[1])[1:]
    assert len(options) >= 2
    for option in options:  # "--json  what it does", or the text wrapped onto the next line
        assert re.search(r"\S {2,}\S", option.strip()) or "\n" in option.strip(), option


def test_exit_codes_scripts_can_rely_on(project):
    """0 found, 1 nothing found, 2 invalid input (and nothing saved), 3 the file cannot be read."""
    assert run(project, "search", "x", check_rc=1).returncode == 1
    assert run(project, "show", "0123456789abcdef", check_rc=1).returncode == 1
    bad = run(project, "log", "--topic", " ", "--missing-context", "m", "--lesson", "l", check_rc=2)
    assert "topic is empty" in bad.stderr
    assert not (project / ".context").exists()
    memory(project).mkdir(parents=True)  # a directory where the file should be
    assert "is a directory" in run(project, "list", check_rc=3).stderr


def test_show_and_forget_take_a_unique_prefix_and_refuse_an_ambiguous_one(project):
    """An id may be shortened as in git; a prefix that fits two records is refused (exit 2) and
    nothing is deleted."""
    first, second = _two_ids_with_a_common_prefix()
    logged_id(project, "t", first, "l")
    logged_id(project, "t", second, "l")
    a, b = ids_in_file(project)
    assert json.loads(run(project, "show", a[:8], "--json").stdout)["id"] == a
    common = os.path.commonprefix([a, b])
    before = memory(project).read_bytes()
    assert "give more of it" in run(project, "show", common, check_rc=2).stderr
    assert "Nothing was changed" in run(project, "forget", common, check_rc=2).stderr
    assert memory(project).read_bytes() == before
    assert "a prefix of at least 4 characters" in run(project, "show", a[:3], check_rc=2).stderr


def _two_ids_with_a_common_prefix() -> tuple[str, str]:
    """Two missing_context values whose records' ids share their first four characters."""
    seen: dict[str, str] = {}
    for i in range(100_000):
        text = f"m{i}"
        prefix = prepare("t", text, "l").id[:4]
        if prefix in seen:
            return seen[prefix], text
        seen[prefix] = text
    raise AssertionError("no two ids share a prefix")


def _git(project: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, encoding="utf-8",
                            timeout=60, check=True)
    return result.stdout


def test_forget_is_all_or_nothing_and_says_what_git_shows(project):
    """An unknown id deletes nothing (exit 1); otherwise the records go in one write, git diff shows
    them removed as readable blocks, and the git restore the message suggests brings them back."""
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "T")
    run(project, "init")
    keep = logged_id(project, "a", "m1", "l")
    drop = logged_id(project, "결제", "m2", "l")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "memory")
    before = memory(project).read_bytes()
    refused = run(project, "forget", drop[:6], "ffffffffffffffff", check_rc=1)
    assert "no record with id 'ffffffffffffffff'" in refused.stderr and "nothing was deleted" in refused.stderr
    assert memory(project).read_bytes() == before
    done = run(project, "forget", drop[:6])
    assert f"deleted {drop} (log, topic '결제')" in done.stdout and "1 removed record" in done.stdout
    assert ids_in_file(project) == [keep]
    assert f"-[결제] log {drop}" in _git(project, "diff", "--", ".context/memory_log.jsonl")
    restore = done.stdout.split("`git restore -- ", 1)[1].split("`", 1)[0]
    _git(project, "restore", "--", restore)
    assert sorted(ids_in_file(project)) == sorted([keep, drop])


def test_the_git_commands_forget_prints_can_be_pasted_in_a_folder_of_any_name(tmp_path):
    """A project folder named with a space, quotes and `$(...)`: the `git restore` that forget prints,
    pasted into a shell, brings the record back and runs nothing else."""
    project = tmp_path / "my app $(touch PWNED) 'q'"
    project.mkdir()
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "T")
    rid = logged_id(project, "a", "m", "l")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "memory")
    done = run(project, "forget", rid)
    restore = "git restore -- " + done.stdout.split("`git restore -- ", 1)[1].split("`", 1)[0]
    subprocess.run(["sh", "-c", restore], cwd=project, check=True, capture_output=True, timeout=60)
    assert ids_in_file(project) == [rid] and not (project / "PWNED").exists() and not (tmp_path / "PWNED").exists()


def test_forget_says_which_records_git_can_bring_back(project):
    """A record deleted before it was committed is not in `git diff` and git cannot restore it: forget
    says so instead of "git diff now shows 1 removed record"; for a committed one beside other
    uncommitted lessons, it warns that `git restore` drops those too."""
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "T")
    run(project, "init")
    committed = logged_id(project, "a", "m1", "l")
    _git(project, "add", ".")
    _git(project, "commit", "-qm", "memory")
    fresh = logged_id(project, "b", "m2", "l")

    new_one = run(project, "forget", fresh).stdout
    old_one = run(project, "forget", committed).stdout

    assert "never committed" in new_one and "removed record" not in new_one and "git restore" not in new_one
    assert "now shows 1 removed record" in old_one and "git restore" in old_one
    _git(project, "restore", "--", ".context/memory_log.jsonl")  # the committed record is back
    logged_id(project, "c", "m3", "an uncommitted lesson")
    with_other = run(project, "forget", committed).stdout
    assert "also undoes" in with_other and "also undoes" not in old_one


@pytest.mark.parametrize("conflict", [False, True], ids=["plain", "beside-a-conflict"])
def test_a_line_that_is_not_a_record_is_named_once_as_ours(project, conflict):
    """A hand edit left a line that is not a record: every command that reads the file says so in one
    sentence of its own, once however often it reads the file, and that the line is kept; beside a
    git conflict region too (each side is read with the line: it was counted once per side)."""
    logged_id(project, "a", "m", "l")
    with memory(project).open("a", encoding="utf-8") as f:
        f.write("not a record\n")
    if conflict:
        lines = memory(project).read_text(encoding="utf-8").splitlines()
        ours, theirs = json.loads(lines[0]), {**json.loads(lines[0]), "lesson": "theirs"}
        memory(project).write_text("\n".join(["not a record", "<<<<<<< HEAD", json.dumps(ours), "=======",
                                              json.dumps(theirs), ">>>>>>> b"]) + "\n", encoding="utf-8")

    said = {c: run(project, *c.split(), check_rc=None).stderr for c in ("list", "search l", "stats", "doctor")}

    for command, stderr in said.items():
        notes = [line for line in stderr.splitlines() if "not a record" in line]
        assert len(notes) == 1 and notes[0].startswith("sentinel-memory: 1 line of "), (command, stderr)
        assert "quarantine" in notes[0] and "skipped" not in stderr, (command, stderr)


def test_log_json_gives_the_outcome_and_the_stored_record(project):
    """log --json tells a script saved/updated/unchanged and the record as stored (redacted)."""
    fake = "ghp_" + "Z9y8" * 9
    first = json.loads(run(project, "log", "--topic", "a", "--missing-context", "m", "--lesson", f"use {fake}",
                           "--json").stdout)
    assert first["status"] == "saved" and first["record"]["id"] == first["id"]
    assert fake not in json.dumps(first) and "[REDACTED]" in first["record"]["lesson"]
    again = json.loads(run(project, "log", "--topic", "a", "--missing-context", "m", "--lesson", f"use {fake}",
                           "--json").stdout)
    assert again["status"] == "unchanged" and again["id"] == first["id"]


def test_export_keeps_every_record_and_writes_utf8_to_a_file(project, tmp_path):
    """The Markdown export has every record (even a hand-written one without a topic), keeps a
    multi-line value inside its list item, and --output writes exactly the printed document."""
    logged_id(project, "결제", "첫 줄\n둘째 줄", "l")
    with memory(project).open("a", encoding="utf-8") as handle:
        handle.write('{"id": "ffff000000000000", "lesson": "hand-written"}\n')
    printed = run(project, "export").stdout
    assert "2 records from" in printed and "## (no topic)" in printed and "hand-written" in printed
    assert "- **missing_context**: 첫 줄\n  둘째 줄" in printed
    out = tmp_path / "memory.md"
    assert "wrote 2 records" in run(project, "export", "--output", str(out)).stdout
    assert out.read_bytes() == printed.encode("utf-8")


def test_export_output_writes_into_the_file_as_a_shell_redirection_does(project, tmp_path):
    """`export --output FILE` writes into FILE, never replaces it: a symbolic link stays a link (its
    target gets the document), a hard link keeps sharing the file, a mode-600 file stays 600, a
    FIFO stays a FIFO and its reader gets the document, a device stays a device."""
    import stat
    import threading

    logged_id(project, "t", "m", "l")
    printed = run(project, "export").stdout.encode("utf-8")
    target = tmp_path / "target.md"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    run(project, "export", "--output", str(link))
    assert link.is_symlink() and target.read_bytes() == printed
    private = tmp_path / "private.md"
    private.write_text("old", encoding="utf-8")
    private.chmod(0o600)
    other = tmp_path / "other-name.md"
    os.link(private, other)
    run(project, "export", "--output", str(private))
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.stat().st_nlink == 2
    assert other.read_bytes() == printed and private.stat().st_ino == other.stat().st_ino
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    run(project, "export", "--output", str(fifo))
    reader.join(timeout=60)
    assert got == [printed] and stat.S_ISFIFO(fifo.lstat().st_mode)
    if os.geteuid() == 0:  # only root makes a device node: a copy of /dev/null in tmp_path
        null = tmp_path / "null"
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        run(project, "export", "--output", str(null))
        assert stat.S_ISCHR(null.lstat().st_mode)


def test_export_output_that_fails_midway_says_so_in_one_sentence(project, tmp_path):
    """A write that fails (a full disk: /dev/full) exits 3 with one sentence saying the file may hold
    the start of the export; a folder that does not exist says nothing was written."""
    logged_id(project, "t", "m", "l")
    if Path("/dev/full").exists():
        full = run(project, "export", "--output", "/dev/full", check_rc=3)
        assert "may hold only the start" in full.stderr and full.stderr.count("\n") == 1
        assert Path("/dev/full").is_char_device()
    missing = run(project, "export", "--output", str(tmp_path / "no" / "such.md"), check_rc=3)
    assert "nothing was written" in missing.stderr and missing.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["forget", "log", "fold"])
def test_interrupting_a_command_exits_130_without_a_traceback(project, tmp_path, command):
    """Ctrl+C while forget, log or fold waits for the lock exits 130 quietly and leaves the file as
    it was."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to see the process wait")
    rid = logged_id(project, "a", "m", "l")
    stray = tmp_path / "stray"
    stray.mkdir()
    logged_id(stray, "b", "other", "l")
    args = {"forget": [rid], "log": ["--topic", "a", "--missing-context", "m", "--lesson", "new"],
            "fold": [str(stray)]}[command]
    before = memory(project).read_bytes()
    with FileLock(str(memory(project)) + ".lock"):
        # A long lock timeout: on a busy machine the wait below may take longer than the default 10 s.
        proc = subprocess.Popen([sys.executable, SERVER, "--project", str(project), command, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "SENTINEL_MEMORY_LOCK_TIMEOUT": "300"})
        _wait_until_idle(proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    assert memory(project).read_bytes() == before


def test_interrupting_the_command_lines_start_exits_130_without_a_traceback(project):
    """Ctrl+C while the command line is still loading (here injected exactly there: the import of
    its commands raises KeyboardInterrupt, as a SIGINT in that moment does) exits 130 with one line."""
    script = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'sentinel_memory.cli.commands':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from sentinel_memory.__main__ import main\n"
        f"sys.exit(main(['--project', {str(project)!r}, 'stats']))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (130, "sentinel-memory: interrupted\n"), result.stderr


def _wait_until_idle(proc: subprocess.Popen) -> None:
    """Return once the process sleeps without using CPU for 0.3 s: started, now polling the lock."""
    last, calm = None, 0
    while calm < 3:
        assert proc.poll() is None, "the command ended before it waited for the lock"
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        state, cpu = fields[0], int(fields[11]) + int(fields[12])  # state, utime + stime
        calm = calm + 1 if state == "S" and cpu == last else 0
        last = cpu
        time.sleep(0.1)


def test_a_hand_written_date_does_not_pass_as_a_topics_newest(project):
    """`list` names a topic's newest date by the moment, not the text: a record whose date a hand
    edit wrote as `2026/01/05` does not outrank one written today."""
    logged_id(project, "pay", "old", "old lesson")
    logged_id(project, "pay", "new", "new lesson")
    rows = [json.loads(x) for x in memory(project).read_text(encoding="utf-8").splitlines()]
    for r in rows:
        if r["missing_context"] == "old":
            r["meta"]["created"] = "2026/01/05"
    memory(project).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    today = next(r for r in rows if r["missing_context"] == "new")["meta"]["created"]

    (topic,) = json.loads(run(project, "list", "--json").stdout)

    assert topic["newest"] == today

def test_scan_finds_and_redacts_a_pasted_credential(project):
    """A key pasted into the file by hand is found (never printed) and redacted in place; with
    --json, standard output is the findings' JSON alone (the report goes to standard error)."""
    logged_id(project, "a", "m", "l")
    fake = "ghp_" + "Z9y8" * 9
    path = memory(project)
    record = json.loads(path.read_text())
    record["lesson"] = f"use {fake}"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n")
    found = run(project, "scan", check_rc=1)
    assert "github" in found.stdout and fake not in found.stdout
    redacted = run(project, "scan", "--redact", "--json")
    assert len(json.loads(redacted.stdout)) == 1 and "Redacted 1 value" in redacted.stderr
    assert fake not in path.read_text() and "[REDACTED]" in path.read_text()
    run(project, "scan")


def test_init_configures_each_client_and_is_idempotent(project):
    """init writes parseable configs for Cursor, VS Code, Claude Code and Codex; a rerun changes nothing."""
    clients = ["--client", "cursor", "--client", "vscode", "--client", "claude", "--client", "codex", "--client", "windsurf"]
    first = run(project, "init", *clients).stdout
    assert "left alone ~/.codeium/windsurf" in first
    cursor = json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["sentinel-memory"]
    assert cursor == {"command": "sentinel-memory", "args": ["--project", "${workspaceFolder}"]}
    assert json.loads((project / ".vscode" / "mcp.json").read_text())["servers"]["sentinel-memory"]["type"] == "stdio"
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["sentinel-memory"]["args"] == []
    codex = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["sentinel-memory"]
    assert codex["command"] == "sentinel-memory" and codex["args"] == []
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    second = run(project, "init", *clients).stdout
    assert "created" not in second and "updated" not in second
    assert before == {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}


def test_init_rules_mdc_puts_the_workflow_in_cursor_project_rules(project):
    """init --rules mdc writes .cursor/rules/sentinel-memory.mdc (always applied), not .cursorrules."""
    assert "created" in run(project, "init", "--rules", "mdc").stdout
    mdc = (project / ".cursor" / "rules" / "sentinel-memory.mdc").read_text(encoding="utf-8")
    assert mdc.startswith("---\n") and "alwaysApply: true" in mdc and "search_memory" in mdc
    assert not (project / ".cursorrules").exists()


def test_commands_do_not_import_fastmcp(project):
    """The commands start without FastMCP, so git's drivers and scripts stay fast."""
    probe = "\n".join([
        "import runpy, sys",
        f"sys.argv = [{SERVER!r}, '--project', {str(project)!r}, 'stats']",
        "try:",
        f"    runpy.run_path({SERVER!r}, run_name='__main__')",
        "except SystemExit:",
        "    pass",
        "print('fastmcp' in sys.modules)",
    ])
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip().splitlines()[-1] == "False", result.stdout + result.stderr


def test_python_dash_m_is_the_same_entry_as_server_py(project, tmp_path):
    """`python -m sentinel_memory` runs the commands as `python server.py` does, and with no command
    serves MCP: its handshake reports the product's version, not fastmcp's."""
    from sentinel_memory import __version__

    env = dict(os.environ, PYTHONPATH=str(ROOT), SENTINEL_MEMORY_FAST_START="0")
    base = [sys.executable, "-m", "sentinel_memory", "--project", str(project)]
    logged = subprocess.run([*base, "log", "--topic", "entry", "--missing-context", "m", "--lesson", "one entry"],
                            capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert logged.returncode == 0, logged.stderr
    assert "one entry" in run(project, "search", "entry").stdout
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    served = subprocess.run(base, input=json.dumps(hello) + "\n", capture_output=True, text=True, timeout=60,
                            env=env, cwd=tmp_path)
    info = json.loads(served.stdout.splitlines()[0])["result"]["serverInfo"]
    assert info == {"name": "sentinel-memory", "version": __version__}


def _stored(project: Path, rid: str) -> dict:
    return next(json.loads(line) for line in memory(project).read_text(encoding="utf-8").splitlines()
                if json.loads(line)["id"] == rid)


def test_a_refresh_keeps_the_fields_left_out_and_says_what_changed(project):
    """Logging a lesson again without --ask-next-time (or --lesson, or --file) keeps the stored value;
    an explicit empty value clears it; the output names the fields that changed."""
    (project / "tax.yaml").write_text("vat: {}\n", encoding="utf-8")
    rid = logged_id(project, "payment", "VAT differs by country", "read tax.yaml", "--ask-next-time",
                    "Which countries?", "--file", "tax.yaml")

    again = run(project, "log", "--topic", "payment", "--missing-context", "VAT differs by country", "--lesson",
                "read tax.yaml first")
    kept = _stored(project, rid)
    bare = run(project, "log", "--topic", "payment", "--missing-context", "VAT differs by country")
    cleared = run(project, "log", "--topic", "payment", "--missing-context", "VAT differs by country",
                  "--ask-next-time", "", "--json")

    assert "changed: lesson " in again.stdout
    assert kept["ask_next_time"] == "Which countries?" and kept["files"] == ["tax.yaml"]
    assert kept["lesson"] == "read tax.yaml first"
    assert "changed: nothing" in bare.stdout and _stored(project, rid)["lesson"] == "read tax.yaml first"
    assert json.loads(cleared.stdout)["changed"] == ["ask_next_time"] and _stored(project, rid)["ask_next_time"] == ""
    assert ids_in_file(project) == [rid]


def test_a_refresh_of_a_hand_edited_record_says_which_stored_text_to_replace(project):
    """A stored field holding a lone surrogate (a hand edit; the file keeps it as a JSON escape)
    cannot be carried over by a refresh that leaves it out: the refusal names the record and the
    flag, not a value the person never typed, and giving that flag saves the refresh."""
    rid = logged_id(project, "auth", "token refresh", "refresh before expiry", "--ask-next-time", "which clock?")
    text = memory(project).read_text(encoding="utf-8")
    memory(project).write_text(text.replace("which clock?", "which \\ud800 clock?"), encoding="utf-8")
    edited = memory(project).read_bytes()

    refused = run(project, "log", "--topic", "auth", "--missing-context", "token refresh", "--lesson", "renew early",
                  check_rc=2)
    unchanged = memory(project).read_bytes()
    fixed = run(project, "log", "--topic", "auth", "--missing-context", "token refresh", "--lesson", "renew early",
                "--ask-next-time", "which clock source?")

    assert f"the record {rid} holds a lone surrogate in its ask_next_time" in refused.stderr
    assert "give --ask-next-time to replace" in refused.stderr and "Nothing was saved." in refused.stderr
    assert unchanged == edited
    assert "updated:" in fixed.stdout and _stored(project, rid)["ask_next_time"] == "which clock source?"
    assert _stored(project, rid)["lesson"] == "renew early"


def test_a_new_record_that_nearly_repeats_one_names_it_and_how_to_refresh_it(project):
    """`Payment` for `payment` or a trailing full stop makes a new record (the id is exact), and the
    output names the near-identical one; a new lesson needs --lesson."""
    rid = logged_id(project, "payment", "VAT differs by country", "read tax.yaml")

    near = run(project, "log", "--topic", "Payment", "--missing-context", "VAT  differs by country.", "--lesson", "x")
    new = json.loads(run(project, "log", "--topic", "refunds", "--missing-context", "partial refunds", "--lesson", "y",
                         "--json").stdout)
    missing = run(project, "log", "--topic", "other", "--missing-context", "nothing like it", check_rc=2)

    assert f"note: record {rid} has nearly the same topic and missing context" in near.stdout
    assert "forget" in near.stdout and new["near_identical"] == [] and new["changed"] == ["lesson"]
    assert "--lesson is required for a new record" in missing.stderr and len(ids_in_file(project)) == 3


def test_a_file_is_found_from_the_folder_the_person_is_in(project):
    """In a subfolder, --file takes the path as tab completion gives it; from the root, a path that
    names no file is refused with the project's files of that name as a suggestion."""
    (project / "myapp" / "payment").mkdir(parents=True)
    (project / "myapp" / "payment" / "rounding.py").write_text("x = 1\n", encoding="utf-8")
    (project / ".git").mkdir()  # the project's root, as a clone's

    here = run(None, "log", "--topic", "payment", "--missing-context", "rounding", "--lesson", "half even",
               "--file", "rounding.py", "--json", cwd=project / "myapp" / "payment")
    refused = run(None, "log", "--topic", "payment", "--missing-context", "rounding 2", "--lesson", "x",
                  "--file", "rounding.py", check_rc=2, cwd=project)
    outside = run(None, "log", "--topic", "payment", "--missing-context", "rounding 3", "--lesson", "x",
                  "--file", "../../../elsewhere.py", check_rc=2, cwd=project / "myapp" / "payment")

    assert json.loads(here.stdout)["record"]["files"] == ["myapp/payment/rounding.py"]
    assert "Did you mean myapp/payment/rounding.py?" in refused.stderr
    assert "uses '..'" in outside.stderr and ids_in_file(project) == [json.loads(here.stdout)["id"]]


def test_a_file_that_names_nothing_from_a_subfolder_is_explained_from_there(project):
    """In src/, `--file src/checkout.py` (a path from the root) names src/src/checkout.py: the
    refusal says the path is read from the current folder and suggests what to type from there,
    not the very path that was typed."""
    (project / "src").mkdir()
    (project / "src" / "checkout.py").write_text("x = 1\n", encoding="utf-8")
    (project / "config").mkdir()
    (project / ".git").mkdir()  # the project's root, as a clone's

    from_src = run(None, "log", "--topic", "payment", "--missing-context", "totals", "--lesson", "x",
                   "--file", "src/checkout.py", check_rc=2, cwd=project / "src")
    from_config = run(None, "log", "--topic", "payment", "--missing-context", "totals", "--lesson", "x",
                      "--file", "checkout.py", check_rc=2, cwd=project / "config")

    assert "read from the current folder (src/)" in from_src.stderr and "src/src/checkout.py" in from_src.stderr
    assert from_src.stderr.rstrip().endswith("Did you mean checkout.py?")
    assert from_config.stderr.rstrip().endswith("Did you mean ../src/checkout.py?")
    assert "Nothing was saved" in from_src.stderr and not memory(project).exists()


def test_a_path_typed_through_a_link_or_with_backslashes_names_the_projects_file(project, tmp_path):
    """`--file "$PWD/src/app.py"` in a project reached through a folder link (macOS's /tmp is one)
    names the project's src/app.py, for log and search alike; in src/, `..\\README.md` (as
    Windows writes it) is ../README.md; a path through the link that leaves the project is still
    refused."""
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    (project / "README.md").write_text("hi\n", encoding="utf-8")
    (project / ".git").mkdir()  # the project's root, as a clone's
    (tmp_path / "link").symlink_to(project, target_is_directory=True)
    linked = tmp_path / "link"

    saved = run(None, "log", "--topic", "pay", "--missing-context", "m", "--lesson", "l", "--json",
                "--file", str(linked / "src" / "app.py"), cwd=linked)
    found = run(None, "search", "--file", str(linked / "src" / "app.py"), "--json", cwd=linked)
    readme = run(None, "log", "--topic", "docs", "--missing-context", "m", "--lesson", "l", "--json",
                 "--file", "..\\README.md", cwd=project / "src")
    outside = run(None, "search", "--file", str(linked / ".." / "elsewhere.py"), check_rc=2, cwd=linked)

    assert json.loads(saved.stdout)["record"]["files"] == ["src/app.py"]
    assert [r["id"] for r in json.loads(found.stdout)] == [json.loads(saved.stdout)["id"]]
    assert json.loads(readme.stdout)["record"]["files"] == ["README.md"]
    assert "is absolute" in outside.stderr

def test_search_takes_a_file_from_the_folder_the_person_is_in_as_log_does(project):
    """`cd src/payment && search --file refund.py` finds the lesson that `log --file refund.py`
    saved from the same folder; from the root the same path is the project's."""
    (project / "src" / "payment").mkdir(parents=True)
    (project / "src" / "payment" / "refund.py").write_text("x = 1\n", encoding="utf-8")
    (project / "refund.py").write_text("y = 2\n", encoding="utf-8")
    (project / ".git").mkdir()  # the project's root, as a clone's
    sub = project / "src" / "payment"
    rid = json.loads(run(None, "log", "--topic", "payment", "--missing-context", "refunds retry", "--lesson",
                         "send an idempotency key", "--file", "refund.py", "--json", cwd=sub).stdout)["id"]
    other = logged_id(project, "payment", "root refunds", "another lesson", "--file", "refund.py")

    here = json.loads(run(None, "search", "--file", "refund.py", "--json", cwd=sub).stdout)
    top = json.loads(run(None, "search", "--file", "refund.py", "--json", cwd=project).stdout)

    assert here[0]["id"] == rid and here[0]["match"]["strong"]
    assert top[0]["id"] == other and top[0]["match"]["strong"]


def test_a_path_in_the_query_is_read_from_the_folder_the_person_is_in_first(project):
    """`cd src && search "check payment/refund.py"` asks about src/payment/refund.py, as a client
    started in src/ inserts the path; a path from the project's root still names its file."""
    (project / "src" / "payment").mkdir(parents=True)
    (project / "src" / "payment" / "refund.py").write_text("x = 1\n", encoding="utf-8")
    (project / ".git").mkdir()  # the project's root, as a clone's
    rid = logged_id(project, "retries", "duplicate charges", "send an idempotency key", "--file", "src/payment/refund.py")

    here = json.loads(run(None, "search", "check payment/refund.py", "--json", cwd=project / "src").stdout)
    top = json.loads(run(None, "search", "check src/payment/refund.py", "--json", cwd=project).stdout)

    for found in (here, top):
        assert found[0]["id"] == rid and "file src/payment/refund.py" in found[0]["match"]["reasons"]


def test_a_python_below_the_floor_is_told_how_to_make_the_venv_again():
    """The sentence for an interpreter older than 3.11 names it and a venv command that replaces it:
    `venv` over an existing venv keeps the old interpreter unless it is given --clear."""
    old = too_old((3, 10, 13), "/p/.venv/bin/python")

    assert old.startswith("sentinel-memory: needs Python 3.11 or newer, and /p/.venv/bin/python is Python 3.10.13.")
    assert "-m venv --clear .venv" in old and "\n" not in old
    assert too_old(tuple(sys.version_info)) is None and too_old((3, 11, 0)) is None


def _older_pythons() -> list[str]:
    """The interpreters older than 3.11 on this machine (pyenv's, and pythonX.Y on PATH), one per
    version: a person's python3 may be any of them."""
    found = {}
    roots = dict.fromkeys(filter(None, (os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv"))))
    candidates = [str(p) for root in roots for p in Path(root).glob("versions/*/bin/python")]
    candidates += [shutil.which(f"python{v}") or "" for v in ("2.7", "3.6", "3.7", "3.8", "3.9", "3.10")]
    for path in filter(None, candidates):
        probe = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True, timeout=30)
        version = probe.stdout.strip()
        if probe.returncode == 0 and tuple(map(int, version.split("."))) < (3, 11):
            found.setdefault(version, path)
    return sorted(found.values())


def test_every_older_python_is_told_in_one_sentence_and_a_hook_goes_on():
    """server.py and `python -m sentinel_memory` under any Python older than 3.11, 2.7 included: one sentence and exit 2 for a
    person (before, 3.6 and 2.7 stopped with a traceback on the package's syntax); nothing and exit
    0 for a client's hook, which must not block the client."""
    pythons = _older_pythons()
    if not pythons:
        pytest.skip("no Python older than 3.11 on this machine (pyenv's or pythonX.Y on PATH)")
    checkout = {**os.environ, "PYTHONPATH": str(ROOT)}  # `python -m` from a checkout
    for python, entry in itertools.product(pythons, ([SERVER], ["-m", "sentinel_memory"])):
        told = subprocess.run([python, *entry, "--version"], capture_output=True, text=True, timeout=60, env=checkout)
        assert told.returncode == 2 and told.stdout == "", (python, entry, told.stdout, told.stderr)
        assert told.stderr.startswith("sentinel-memory: needs Python 3.11 or newer, and ") and told.stderr.count("\n") == 1
        hook = subprocess.run([python, *entry, "hook", "--client", "claude"], input="{}", capture_output=True,
                              text=True, timeout=60, env=checkout)
        assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", ""), (python, entry)


def test_small_slips_get_the_sentence_that_applies(project):
    """A three-character prefix is too short (not "no record"): bad usage, exit 2, for show and
    forget alike; merge-driver's help shows git's placeholders as git writes them."""
    logged_id(project, "payment", "VAT", "read tax.yaml")

    short = run(project, "show", "abc", check_rc=2)
    forget = run(project, "forget", "abc", check_rc=2)
    driver = run(None, "merge-driver", "--help")

    assert "'abc' is too short to name a record" in short.stderr and "no record" not in short.stderr
    assert "'abc' is too short to name a record" in forget.stderr and "nothing was deleted" in forget.stderr
    assert "%O %A %B %P" in driver.stdout and "%%" not in driver.stdout


def test_on_an_80_column_terminal_every_line_fits_and_a_pipe_gets_the_text_as_it_is(project):
    """A person's terminal gets lines broken at spaces to its width (Korean counting two columns);
    a pipe gets each line whole, for scripts and grep."""
    long_lesson = "read config/tax_rates.yaml before touching checkout totals " * 4 + "결제 모듈의 반올림 규칙 " * 6
    logged_id(project, "payment", "VAT differs by country and the rules change every quarter", long_lesson)
    env = {**os.environ, "COLUMNS": "80"}

    shown = _on_a_terminal(["--project", str(project), "search", "VAT"], env)
    piped = run(project, "search", "VAT", env=env).stdout

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in shown.replace("\r\n", "\n").splitlines()]
    widths = [sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line) for line in lines]
    assert max(widths) <= 80 and len(lines) > len(piped.splitlines()), shown
    assert long_lesson.strip() in piped


def test_a_wrong_project_folder_gets_one_short_sentence_and_a_pointer(tmp_path):
    """--project naming no folder: the one thing that applies and where the rest is written, not a
    paragraph about every client."""
    nope = str(tmp_path / "nope")
    result = run(None, "--project", nope, "list", check_rc=2)

    assert "not an existing directory" in result.stderr and "docs/clients.md" in result.stderr
    assert len(result.stderr) - len(nope) < 200 and "Windsurf" not in result.stderr


def test_a_topic_in_other_letters_gets_the_stored_spelling_suggested(project):
    """--topic matches exactly (as search_memory does); one that differs only by case is named."""
    logged_id(project, "payment", "VAT", "read tax.yaml")

    result = run(project, "search", "--topic", "PAYMENT", check_rc=1)

    assert "Did you mean --topic 'payment'?" in result.stdout


def test_fold_of_a_file_that_is_no_memory_says_one_thing(project, tmp_path):
    """fold of a README: one sentence that it holds no records, not a warning about its lines first."""
    logged_id(project, "payment", "VAT", "read tax.yaml")
    (project / "README.md").write_text("# App\n\nHow to run it.\n", encoding="utf-8")

    result = run(project, "fold", "README.md", check_rc=2)

    assert "holds no memory records" in result.stderr and "skipped" not in result.stderr


def test_fold_brings_the_strays_set_aside_lines_and_names_its_conflicted_copies(project):
    """fold ends with "then delete" the stray's .context/: what that folder set aside is not lost
    with it. Its quarantine file's lines (a note that was not a record) join the project's, and a
    copy of a conflicted file kept there is named, to be looked at first."""
    logged_id(project, "a", "m", "l")
    sub = project / "sub"
    sub.mkdir()
    logged_id(sub, "stray", "x", "stray lesson")
    note = "teammate note: never deploy on friday (not a record)"
    (sub / ".context" / "memory_log.quarantine.jsonl").write_text(note + "\n", encoding="utf-8")
    copy = "memory_log.jsonl.20260101T000000.conflicted"
    (sub / ".context" / copy).write_text("<<<<<<< ours\n", encoding="utf-8")

    result = run(project, "fold", "sub", cwd=project)

    assert note in (project / ".context" / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert "1 line of its quarantine file (not records) is now in" in result.stdout, result.stdout
    assert copy in result.stdout and "look at it before deleting the folder" in result.stdout, result.stdout


def test_fold_keeps_the_stray_folder_when_its_set_aside_lines_do_not_all_fit(project):
    """A stray quarantine file larger than one write sets aside: fold copies what it can and says
    to keep the stray folder, never to delete it."""
    logged_id(project, "a", "m", "l")
    sub = project / "sub"
    sub.mkdir()
    logged_id(sub, "stray", "x", "stray lesson")
    notes = [f"UNIQUE-NOTE-{i:03d} " + "a note that is not a record. " * 13 for i in range(400)]
    (sub / ".context" / "memory_log.quarantine.jsonl").write_text("\n".join(notes) + "\n", encoding="utf-8")

    result = run(project, "fold", "sub", cwd=project)

    assert "keep" in result.stdout and "run fold again" in result.stdout and "then delete" not in result.stdout
    assert (sub / ".context" / "memory_log.quarantine.jsonl").read_text(encoding="utf-8").count("UNIQUE-NOTE") == 400
    for _ in range(3):  # each run moves what the last left out
        result = run(project, "fold", "sub", cwd=project)
    ours = (project / ".context" / "memory_log.quarantine.jsonl").read_text(encoding="utf-8")
    assert all(ours.count(f"UNIQUE-NOTE-{i:03d} ") == 1 for i in range(400)) and "then delete" in result.stdout


def test_fold_run_twice_adds_a_strays_crlf_lines_once_without_their_cr(project):
    logged_id(project, "a", "m", "l")
    sub = project / "sub"
    sub.mkdir()
    logged_id(sub, "stray", "x", "stray lesson")
    (sub / ".context" / "memory_log.quarantine.jsonl").write_bytes(b"\xef\xbb\xbfnote one\r\nnote two\r\n")

    for _ in range(2):
        run(project, "fold", "sub", cwd=project)

    assert (project / ".context" / "memory_log.quarantine.jsonl").read_bytes() == b"note one\nnote two\n"


def test_a_principle_refreshed_with_another_missing_context_says_that_it_changed(project):
    """A principle is found by its topic and lesson, so its missing context is a field a refresh
    changes, and the refresh says so."""
    run(project, "log", "--type", "principle", "--topic", "ci", "--lesson", "pin the runner image",
        "--missing-context", "old reason")

    refreshed = run(project, "log", "--type", "principle", "--topic", "ci", "--lesson", "pin the runner image",
                    "--missing-context", "new reason", "--json")

    assert json.loads(refreshed.stdout)["changed"] == ["missing_context"]


def test_export_into_a_folder_that_does_not_exist_says_so(project, tmp_path):
    """The reason is the missing folder, not the disk: no advice to free space."""
    logged_id(project, "payment", "VAT", "read tax.yaml")

    result = run(project, "export", "-o", str(tmp_path / "missing" / "memory.md"), check_rc=3)

    assert "No such file or directory" in result.stderr and "disk space" not in result.stderr
    assert not (tmp_path / "missing").exists()


# ------------------------------------------------------------------ a fresh start and a forked one

def _play(world: Path, env: dict, start) -> list:
    """Every command once, with real work, in a git repository built the same way each time (fixed
    dates, so the same commits): what each answered, then every file of the world."""
    if world.exists():
        shutil.rmtree(world)
    project, cache = world / "project", world / "cache"
    env = {**env, "XDG_CACHE_HOME": str(cache), "GIT_AUTHOR_DATE": "2026-01-02T00:00:00+00:00",
           "GIT_COMMITTER_DATE": "2026-01-02T00:00:00+00:00"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], env=env, check=True, capture_output=True)

    (project / "src").mkdir(parents=True)
    (project / "src" / "pay.py").write_text("def refund(): ...\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], env=env, check=True, capture_output=True)
    git("config", "user.name", "T")
    git("config", "user.email", "t@example.com")
    git("add", "-A")
    git("commit", "-q", "-m", "code")
    stray = world / "stray" / ".context" / "memory_log.jsonl"
    stray.parent.mkdir(parents=True)
    stray.write_text(json.dumps({"id": "0123456789abcdef", "type": "log", "topic": "s", "missing_context": "m",
                                 "lesson": "l", "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})
                     + "\n", encoding="utf-8")
    at = ["--project", str(project)]
    key = "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"  # the right shape, not a real token
    script = [
        ([*at, "init"], None),
        ([*at, "log", "--topic", "payment", "--missing-context", "refunds", "--lesson", "send the key",
          "--file", "src/pay.py", "--json"], None),
        ([*at, "log", "--topic", "결제", "--missing-context", f"a key {key}", "--lesson", "세율"], None),
        ([*at, "search", "refunds"], None), ([*at, "search", "--json"], None), ([*at, "list"], None),
        ([*at, "stats", "--json"], None), ([*at, "export"], None), ([*at, "scan"], None),
        ([*at, "fold", str(stray)], None), ([*at, "show", "0123", "--json"], None),
        ([*at, "stale", "--json"], None), ([*at, "review", "HEAD"], None),
        ([*at, "doctor"], None),
        (["hook", "--client", "claude"], json.dumps({"hook_event_name": "PreToolUse", "session_id": "s",
                                                     "cwd": str(project), "tool_name": "Edit",
                                                     "tool_input": {"file_path": str(project / "src" / "pay.py")}})),
        (["textconv", str(project / ".context" / "memory_log.jsonl")], None),
        (["merge-driver", str(stray), str(project / ".context" / "memory_log.jsonl"), str(stray)], None),
        ([*at, "forget", "0123456789abcdef"], None), ([*at, "serach"], None), (["--version"], None),
        ([*at, "export", "--output", str(world / "missing" / "x.md")], None),
    ]
    answers = []
    for args, stdin in script:
        done = start(args, env=env, cwd=project, input=stdin, text=True, encoding="utf-8", timeout=60)
        answers.append((args[2:3] or args[:1], done.returncode, done.stdout, done.stderr))
    # The hook's state (its index and the session's fingerprint) holds times and inode numbers:
    # its files are compared by name; the renames kept per HEAD by the kind of name (each play
    # commits anew: another HEAD).
    files = {re.sub(r"renames-[0-9a-f]{40}", "renames-HEAD", str(p.relative_to(world))):
             b"" if p.is_relative_to(cache / "sentinel-memory" / "hooks") else p.read_bytes()
             for p in sorted(world.rglob("*")) if p.is_file() and ".git" not in p.relative_to(world).parts[:2]}
    return [*answers, files]


def _fresh(args, **options):
    return subprocess.run([sys.executable, SERVER, *args], capture_output=True, **options)


def test_every_command_answers_a_forked_start_as_a_fresh_one(tmp_path, env):
    """The other tests here run the commands forked from an interpreter that has made the imports
    (tests/forkrun.py): every command, a hook and git's two drivers, started afresh as a person or
    git starts them, answer the same bytes and exit codes and leave the same files, the dates of
    the records aside."""
    covered = {"search", "list", "show", "stats", "log", "stale", "forget", "export", "scan", "review", "init",
               "hook", "doctor", "fold", "merge-driver", "textconv"}
    assert covered == set(COMMANDS)
    world = tmp_path / "world"
    fresh = _play(world, env, _fresh)
    forked = _play(world, env, forkrun.run)
    dated = re.compile(rb"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")

    def undated(value):
        if isinstance(value, bytes):
            return dated.sub(b"DATE", value)
        if isinstance(value, str):
            return dated.sub(b"DATE", value.encode()).decode()
        if isinstance(value, dict):
            return {k: undated(v) for k, v in value.items()}
        return tuple(undated(v) for v in value) if isinstance(value, (tuple, list)) else value

    for one, other in zip(fresh, forked, strict=True):
        assert undated(one) == undated(other)
    assert [code for _, code, _, _ in fresh[:-1]] != [0] * (len(fresh) - 1)  # errors were among them


def test_log_past_the_threshold_tells_the_person_to_ask_the_agent(project):
    """The log command's notice past 50 logs speaks to the person at the terminal: ask the agent to
    compact (a person cannot call compact_memory), not the agent's "call compact_memory now"."""
    from gitrepos import put, rec

    # 51 logs written as the store writes them (the command's own writes are tested above), then the command.
    put(memory(project), *(rec(f"t{i % 3}", f"m {i}", f"lesson {i}") for i in range(51)))
    out = run(project, "log", "--topic", "t0", "--missing-context", "m last", "--lesson", "last").stdout
    assert "Compaction required: 52 logs, past the threshold of 50. Ask your agent to compact" in out
    assert "Call compact_memory now" not in out
