"""The commands for people against a memory file written by hand or by another tool, as a cloned,
possibly hostile repository holds it: what a record says reaches a terminal, a pipe or an
exported Markdown file as text, never as escapes, Markdown or HTML of its own. Real processes,
real files."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

import forkrun

SERVER = str(Path(__file__).resolve().parents[1] / "server.py")

# What a record may hold that a terminal or a Markdown renderer would act on.
HOSTILE = {
    "id": "ab12cd34",
    "type": "log",
    "topic": "<script>alert(1)</script>",
    "missing_context": "# Heading\n```\nfenced\n~~~\n---",
    "lesson": "<img src=x onerror=alert(1)> [click](javascript:alert(1)) | a | b |\n<!-- hide the rest\n1. one\n- two"
    " $\\Huge{\\color{red}{fake}}$ see http://evil.example/x or www.evil.example",
    "ask_next_time": "\x1b]8;;http://evil\x07link\x1b]8;;\x07 \x1b[31mred\r\u202eabc\b @octocat",
    "files": ["a`b.py", "x\ny.py"],
    "meta": {"created": "2026-01-01T00:00:00+00:00"},
}


def cli(project: Path, *args: str, check_rc: int | None = 0) -> forkrun.subprocess.CompletedProcess:
    result = forkrun.run(["--project", str(project), *args], text=True, encoding="utf-8", timeout=60)
    assert "Traceback" not in result.stderr, result.stderr
    if check_rc is not None:
        assert result.returncode == check_rc, result.stdout + result.stderr
    return result


@pytest.fixture
def project(tmp_path) -> Path:
    path = tmp_path / "app"
    (path / ".context").mkdir(parents=True)
    return path


def put(project: Path, *records: dict) -> None:
    lines = "".join(json.dumps(r) + "\n" for r in records)
    (project / ".context" / "memory_log.jsonl").write_text(lines, encoding="utf-8")


def test_export_shows_a_records_markdown_and_html_as_text(project):
    """A record's HTML, links, headings, fences, table pipes, list markers, an HTML comment and a
    mention render as the text they are: the rendered export holds no tag, link, heading, code
    block or list of the record's own, and every word of it is still there."""
    put(project, HOSTILE, {**HOSTILE, "id": "ef56`` <b>x", "topic": "t\n# injected"})
    text = cli(project, "export").stdout
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(text)
    tags = set(re.findall(r"<(/?[a-z0-9]+)", html))
    assert tags <= {
        "h1",
        "/h1",
        "h2",
        "/h2",
        "h3",
        "/h3",
        "p",
        "/p",
        "ul",
        "/ul",
        "li",
        "/li",
        "strong",
        "/strong",
        "code",
        "/code",
    }, tags
    assert html.count("<h2>") == 2 and html.count("<h3>") == 2 and html.count("<ul>") == 2
    assert html.count("<li>") == 2 * 4 and "<a " not in html and "<pre>" not in html
    assert "@octocat" not in html and "\x1b" not in text and "\u202e" not in text
    assert "\\$\\\\Huge" in text  # GitHub would render $...$ as math
    # GitHub links a bare address by itself (its autolink extension): escaped, it shows as text
    assert "http\\://evil.example/x" in text and "www\\.evil.example" in text and "http://evil.example" not in text
    for word in (
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&lt;img src=x onerror=alert(1)&gt;",
        "[click](javascript:alert(1))",
        "# Heading",
        "```",
        "~~~",
        "| a | b |",
        "&lt;!-- hide the rest",
        "1. one",
        "- two",
        "\\x1b]8;;http://evil",
        "\\u202e",
        "a`b.py",
        "x\\ny.py",
        "ef56`` &lt;b&gt;x",
        "t\\x0a# injected",
    ):
        assert word in html, word


def test_a_cited_name_with_a_control_character_is_shown_quoted_with_json_escapes(project):
    """Contract §3.7: a cited name holding a line break or a control character is shown quoted,
    with JSON's escapes, wherever a line names it: `search` showed it unquoted with our escapes,
    `show` with its backslashes doubled (another file's name)."""
    put(project, {**HOSTILE, "files": ["src/new\nline.py", "src/esc\x1b]0;pwn\x07.py", "ok.py"]})
    searched, shown = cli(project, "search", "click").stdout, cli(project, "show", "ab12cd34").stdout
    assert 'files: "src/new\\nline.py", "src/esc\\u001b]0;pwn\\u0007.py", ok.py' in searched, searched
    assert 'files: ["src/new\\nline.py", "src/esc\\u001b]0;pwn\\u0007.py", "ok.py"]' in shown, shown
    assert "\x1b" not in searched + shown


@pytest.mark.parametrize("command", ["show", "forget"])
def test_a_prefix_of_several_crafted_ids_names_them_without_their_escapes(project, command):
    """`show` and `forget` of a prefix several ids start with list those ids; ids written by hand
    with a window title or a screen clear in them are listed with the escapes visible, exit 2,
    and nothing is deleted."""
    put(project, {**HOSTILE, "id": "beef\x1b]0;pwned\x07"}, {**HOSTILE, "id": "beef\x1b[2J", "missing_context": "m"})
    before = (project / ".context" / "memory_log.jsonl").read_bytes()
    result = cli(project, command, "beef", check_rc=2)
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "beef\\x1b]0;pwned\\x07" in result.stderr and "beef\\x1b[2J" in result.stderr
    assert (project / ".context" / "memory_log.jsonl").read_bytes() == before


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo"])
def test_the_git_drivers_refuse_what_is_not_a_file_in_one_sentence(project, tmp_path, kind):
    """merge-driver and textconv given a missing path, a folder or a FIFO (which would block for
    ever): one sentence, exit 1, `ours` left as it was; no traceback."""
    odd = tmp_path / "odd"
    if kind == "folder":
        odd.mkdir()
    elif kind == "fifo":
        os.mkfifo(odd)
    ours = tmp_path / "ours"
    ours.write_bytes(b"")
    for args in (["merge-driver", str(odd), str(ours), str(ours), "p"], ["textconv", str(odd)]):
        result = cli(project, *args, check_rc=1)
        assert str(odd) in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert ours.read_bytes() == b""


def stray(tmp_path: Path) -> Path:
    """A stray memory file with one record, in a folder of its own."""
    folder = tmp_path / "stray"
    (folder / ".context").mkdir(parents=True)
    put(folder, {**HOSTILE, "id": "5a5a5a5a", "missing_context": "stray"})
    return folder


@pytest.mark.parametrize("which", ["memory file", "context dir"])
def test_fold_never_writes_through_a_symbolic_link_of_the_project(project, tmp_path, which):
    """A project whose memory file or .context/ is a symbolic link out of it: fold refuses as every
    writing command does (exit 3) and the link's target is left as it was."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "memory_log.jsonl").write_text(json.dumps(HOSTILE) + "\n", encoding="utf-8")
    before = (outside / "memory_log.jsonl").read_bytes()
    if which == "memory file":
        (project / ".context" / "memory_log.jsonl").symlink_to(outside / "memory_log.jsonl")
    else:
        (project / ".context").rmdir()
        (project / ".context").symlink_to(outside, target_is_directory=True)
    result = cli(project, "fold", str(stray(tmp_path)), check_rc=3)
    assert "symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert (outside / "memory_log.jsonl").read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == ["memory_log.jsonl"]


def shell(project: Path, command: str, redirect: str) -> subprocess.CompletedProcess:
    """`python server.py --project P COMMAND REDIRECT` started by a shell, which sets the output up."""
    line = f"exec {shlex.quote(sys.executable)} {shlex.quote(SERVER)} --project {shlex.quote(str(project))} {command} {redirect}"
    return subprocess.run(["sh", "-c", line], stderr=subprocess.PIPE, text=True, encoding="utf-8", timeout=60)


@pytest.mark.parametrize(
    "command", ["search", "list", "export", "stats --json", "log --topic t --missing-context new --lesson l"]
)
@pytest.mark.parametrize("redirect", [">/dev/full", "1</dev/null"])
def test_output_that_cannot_be_written_is_one_sentence_and_exit_3(project, command, redirect):
    """Output into a full disk or a descriptor opened for reading: one sentence, exit 3 (as a file
    that could not be written), never a traceback; a record logged meanwhile stays saved."""
    if not os.path.exists("/dev/full") and "full" in redirect:
        pytest.skip("no /dev/full here")
    put(project, HOSTILE)
    result = shell(project, command, redirect)
    assert result.returncode == 3, result.stderr
    assert (
        result.stderr.startswith("sentinel-memory: the output could not be written (")
        and "Traceback" not in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    if command.startswith("log"):
        assert "new" in (project / ".context" / "memory_log.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["search", "export", "log --topic t --missing-context new --lesson l"])
def test_a_command_started_with_its_output_closed_does_nothing_and_says_so(project, command):
    """`>&-`: the command could show nothing, so it does nothing (exit 3), in one sentence."""
    put(project, HOSTILE)
    before = (project / ".context" / "memory_log.jsonl").read_bytes()
    result = shell(project, command, ">&-")
    assert result.returncode == 3 and "standard output is closed" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert (project / ".context" / "memory_log.jsonl").read_bytes() == before


def test_fold_names_a_stray_and_its_link_with_their_escapes_visible(project, tmp_path):
    """A cloned repository's stray memory folder named with a window title in it, and a stray
    .context/memory_log.jsonl linking to a name with a screen clear: fold's report and its
    refusal show the escapes, never send them; a line that is not a record is counted in words."""
    folder = tmp_path / "sub\x1b]0;pwned\x07"
    (folder / ".context").mkdir(parents=True)
    put(folder, {**HOSTILE, "missing_context": "stray"})
    with open(folder / ".context" / "memory_log.jsonl", "a", encoding="utf-8") as handle:
        handle.write("not a record\n")
    folded = cli(project, "fold", str(folder))
    assert "\x1b" not in folded.stdout + folded.stderr and "sub\\x1b]0;pwned\\x07" in folded.stdout
    assert "1 line of" in folded.stdout
    linked = tmp_path / "linked"
    (linked / ".context").mkdir(parents=True)
    (linked / ".context" / "memory_log.jsonl").symlink_to("x\x1b[2J")
    refused = cli(project, "fold", str(linked), check_rc=2)
    assert "\x1b" not in refused.stderr and "x\\x1b[2J" in refused.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text("not a record\n", encoding="utf-8")
    assert "(1 line that is not a record)" in cli(project, "fold", str(empty), check_rc=2).stderr


@pytest.mark.parametrize(
    "command", [["search", "--json"], ["show", "ab12", "--json"], ["list", "--json"], ["stats", "--json"]]
)
def test_json_output_escapes_what_a_terminal_acts_on_and_a_lone_surrogate(project, command):
    """A record holding a C1 CSI, DEL, a BiDi override, a tag character and a lone surrogate (the
    JSON escape `\\ud800` in the memory file): --json gives them as JSON escapes, so the output
    is always UTF-8 and sends a terminal nothing it acts on, and a parser reads the same values."""
    odd = "m\x9b31m \x7f \u202e \U000e0041 \ud800 한국"
    put(project, {**HOSTILE, "topic": odd, "missing_context": odd, "ask_next_time": ""})
    result = forkrun.run(["--project", str(project), *command], timeout=60)
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    text = result.stdout.decode("utf-8")
    assert not re.search("[\x7f-\x9f\u202e\U000e0041\ud800]", text) and "한국" in text
    assert odd in json.dumps(json.loads(text), ensure_ascii=False)


def test_a_project_folder_named_with_escapes_is_shown_with_them_visible(tmp_path):
    """A project in a folder whose name holds a window title (a clone's subfolder with its own
    .context/): what the commands print and their error sentences name the path with the escapes
    visible, on stdout and stderr alike."""
    project = tmp_path / "e\x1b]0;pwned\x07"
    (project / ".context").mkdir(parents=True)
    shown = "e\\x1b]0;pwned\\x07"
    saved = cli(project, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    rid = json.loads(cli(project, "search", "--json").stdout)[0]["id"]
    results = [
        saved,
        cli(project, "search", "nothing", check_rc=1),
        cli(project, "show", "ffffffff", check_rc=1),
        cli(project, "scan"),
        cli(project, "forget", rid),
    ]
    for result in results:
        assert "\x1b" not in result.stdout + result.stderr and shown in result.stdout + result.stderr, result
    (project / ".context" / "memory_log.quarantine.jsonl").mkdir()
    (project / ".context" / "memory_log.jsonl").write_text("not a record\n", encoding="utf-8")
    refused = cli(project, "log", "--topic", "t", "--missing-context", "m", "--lesson", "l", check_rc=3)
    assert "\x1b" not in refused.stderr and shown in refused.stderr and "is a directory" in refused.stderr


@pytest.mark.parametrize("how", ["itself", "symbolic link", "hard link"])
def test_export_never_writes_over_the_memory_file(project, tmp_path, how):
    """`export --output` naming the memory file (as itself, through a link, a hard link) would empty
    it and leave Markdown where the records were: refused with exit 2, the file as it was."""
    put(project, HOSTILE)
    memory = project / ".context" / "memory_log.jsonl"
    before = memory.read_bytes()
    output = {"itself": memory, "symbolic link": tmp_path / "link.md", "hard link": tmp_path / "hard.md"}[how]
    if how == "symbolic link":
        output.symlink_to(memory)
    elif how == "hard link":
        os.link(memory, output)
    result = cli(project, "export", "--output", str(output), check_rc=2)
    assert "a file of the memory's own" in result.stderr and "Nothing was written" in result.stderr
    assert memory.read_bytes() == before


@pytest.mark.parametrize("link", ["the file", "its folder"])
def test_export_never_writes_out_of_the_project_through_a_link_in_it(project, tmp_path, link):
    """A cloned repository's `memory.md` (or `docs/`) that links to a file outside the project, such
    as a shell's startup file: `export --output` there is refused with exit 2 and the file outside
    is as it was; a path given outside the project is written as before."""
    put(project, HOSTILE)
    outside = tmp_path / "home"
    outside.mkdir()
    startup = outside / "memory.md"
    startup.write_text("export PATH=~/bin:$PATH\n", encoding="utf-8")
    if link == "the file":
        output = project / "memory.md"
        output.symlink_to(startup)
    else:
        (project / "docs").symlink_to(outside, target_is_directory=True)
        output = project / "docs" / "memory.md"
    refused = cli(project, "export", "--output", str(output), check_rc=2)
    assert "leads out of the project" in refused.stderr and "Nothing was written" in refused.stderr
    assert startup.read_text(encoding="utf-8") == "export PATH=~/bin:$PATH\n"
    cli(project, "export", "--output", str(startup))  # named outside the project: the person's own
    assert startup.read_text(encoding="utf-8").startswith("# Project memory")


@pytest.mark.parametrize("where", ["before", "after"])
def test_an_empty_project_is_a_usage_error_not_the_current_folder(tmp_path, where):
    """`--project "$DIR"` with DIR unset gives an empty --project: exit 2 and nothing written, rather
    than the lesson saved into whatever project the current folder belongs to."""
    log = ["log", "--topic", "t", "--missing-context", "m", "--lesson", "l"]
    args = ["--project", "", *log] if where == "before" else [*log, "--project", ""]
    result = forkrun.run(args, text=True, encoding="utf-8", timeout=60, cwd=tmp_path)
    assert result.returncode == 2 and "--project is empty" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / ".context").exists()


@pytest.mark.parametrize("name", ["memory_log.jsonl.orig", "backup.jsonl"])
def test_fold_of_a_copy_beside_the_memory_file_never_says_to_delete_the_projects_context(project, name):
    """A copy of the memory file in the project's own .context/ (a merge's .orig, a backup) folded
    in: the report says to delete that file, never the project's .context/ folder."""
    put(project, HOSTILE)
    copy = project / ".context" / name
    copy.write_text(json.dumps({**HOSTILE, "id": "c0c0c0c0", "missing_context": "copy"}) + "\n", encoding="utf-8")
    report = cli(project, "fold", str(copy)).stdout
    assert f"then delete {copy} (git rm it" in report, report
    assert f"delete {project / '.context'} " not in report


@pytest.mark.parametrize("asked", [["pay\u202ement"], ["--file", "src/a\u202eb.py"]])
def test_the_match_line_shows_a_records_topic_and_file_with_escapes_visible(project, asked):
    """The match line says why a record matched by its topic or a file it cites; a BiDi override
    in either shows as an escape there too, as in the record's block."""
    (project / "src").mkdir()
    (project / "src" / "a\u202eb.py").write_text("x\n", encoding="utf-8")
    put(project, {**HOSTILE, "topic": "pay\u202ement", "files": ["src/a\u202eb.py"]})
    result = cli(project, "search", *asked)
    assert "match: strong" in result.stdout and "\u202e" not in result.stdout, result.stdout


def test_doctor_stops_counting_credentials_past_a_hundred(project):
    """A cloned memory of many lines that are not records and look like credentials: doctor says
    there are more than 100 and stops there (counting every one of 9 MB of them took minutes)."""
    fake = "passw" + "ord=Hunter2xyz!QQ "  # a credential's shape, in two parts so no scanner flags this file
    (project / ".context" / "memory_log.jsonl").write_text((fake * 40 + "\n") * 300, encoding="utf-8")

    doctor = cli(project, "doctor", check_rc=1).stdout

    assert "[FAIL] more than 100 values with the shape of a credential" in doctor, doctor


def test_init_and_doctor_show_a_clones_escapes_in_configs_and_links_visibly(project):
    """A cloned project's server command holding escapes (a window title, a screen clear, a BiDi
    override) and a config that links to a name holding them: init and doctor name them with their
    escapes visible, never raw to the terminal."""
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"sentinel-memory": {
        "command": "sentinel-memory\x1b]0;PWNED\x07\u202e", "args": []}}}), encoding="utf-8")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").symlink_to("/nonexistent/\x1b[2J\u202eexe")

    said = cli(project, "doctor", check_rc=None).stdout + cli(project, "init", "--client", "claude").stdout

    assert not re.search("[\x1b\x07\u202e]", said), said
    assert "\\x1b" in said and "\\u202e" in said


def test_a_quarantine_file_that_is_a_link_is_one_failure_among_doctors_checks(project, tmp_path):
    """A cloned .context/memory_log.quarantine.jsonl that links out of the project is named in one
    [FAIL] line, as the memory file would be; doctor's other checks still run (before, it stopped
    at it with exit 3)."""
    put(project, {"id": "ab12cd34ef567890", "type": "log", "topic": "t", "missing_context": "m", "lesson": "l",
                  "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}})
    (tmp_path / "elsewhere.jsonl").write_text("{}\n", encoding="utf-8")
    (project / ".context" / "memory_log.quarantine.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")

    doctor = cli(project, "doctor", check_rc=1).stdout

    assert "[FAIL]" in doctor and "quarantine.jsonl is a symbolic link" in doctor, doctor
    assert "not a git work tree" in doctor and "client config" in doctor, doctor  # the checks after it ran
