"""What a person reads never carries a teammate's raw control characters (visible.py): the commands
`search`, `show`, `export`, `list`, `stats`, `stale` and git's diff through our textconv show ESC,
OSC, BEL, CR, DEL, C1 controls, BiDi overrides and zero-width characters as escapes (`\\x1b`,
`\\u202e`), keep the line breaks their format uses, and the memory file keeps the bytes. Real
processes, a real repository, real `git diff` and `git log -p`."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from gitrepos import MEMORY, env, make_repo, put, rec, server  # noqa: F401  (env is a fixture)
from sentinel_memory.visible import visible

ROOT = Path(__file__).resolve().parents[1]
# What a hostile line carries: a window title and a clipboard write (OSC), a bell, a carriage
# return that overwrites the line shown, a BiDi override, a zero-width space, a C1 CSI, DEL.
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
HIDDEN_TAIL = "never deploy on Fridays\rdeploy on Fridays is fine"


def hidden(text: str) -> list[str]:
    """The characters a terminal acts on or that hide or reorder text, line feed and tab aside."""
    return sorted({c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")})


def hostile_record() -> dict:
    record = rec("deploy" + TITLE, "the runbook\u202e said" + CLIPBOARD, HIDDEN_TAIL + "\u200b\x9b31m\x7f",
                 ask="ask\x1b[2J first", note="x\x1b[8mhidden")
    record["meta"]["by\x1b[31m"] = "red\x1b[0m"
    return record


def test_every_hidden_character_of_this_pythons_unicode_is_escaped():
    """The hand-written list in visible.py covers every control, format, separator and surrogate
    character of the running Python's Unicode; escapes are ASCII and keep line feeds only when asked."""
    every = "".join(chr(c) for c in range(0x110000))
    assert hidden(visible(every)) == [] and hidden(visible(every, lines=True)) == []
    assert "\n" not in visible("a\nb\tc") and visible("a\nb\tc", lines=True) == "a\nb\tc"
    assert visible("\x1b\u202e\U000e0041\udcff") == "\\x1b\\u202e\\U000e0041\\udcff"
    assert visible("결제 모듈 🙂 é") == "결제 모듈 🙂 é"


def test_the_commands_show_control_characters_as_escapes_and_the_file_keeps_the_bytes(tmp_path, env):
    repo = make_repo(tmp_path, env)
    record = hostile_record()
    put(repo.memory, record)
    before = repo.memory.read_bytes()
    assert TITLE.encode() in before or json.dumps(TITLE).encode()[1:-1] in before
    run = lambda *args: server(env, "--project", str(repo.path), *args)  # noqa: E731
    outputs = {
        "search": run("search"),
        "show": run("show", record["id"]),
        "export": run("export"),
        "list": run("list"),
        "stats": run("stats"),
    }
    out_file = tmp_path / "memory.md"
    assert run("export", "--output", str(out_file)).returncode == 0
    for name, done in outputs.items():
        assert done.returncode == 0, (name, done.stderr)
        assert hidden(done.stdout) == [], (name, hidden(done.stdout))
        assert "\\x1b" in done.stdout, name
    for name in ("search", "show", "export"):
        text = outputs[name].stdout
        assert "\\u202e" in text and "\\x0d" in text and "\\u200b" in text and "\\x9b" in text, name
    assert hidden(out_file.read_text(encoding="utf-8")) == []
    assert repo.memory.read_bytes() == before  # the JSONL keeps what it holds


def test_git_diff_and_log_through_the_textconv_show_escapes(tmp_path, env):
    """A reviewer's `git diff` (and `git log -p`, `git show`) of a teammate's hostile record shows
    every control character as an escape: a carriage return cannot hide "never"."""
    repo = make_repo(tmp_path, env)
    put(repo.memory, rec("base", "m", "l"))
    repo.commit("base")
    put(repo.memory, hostile_record())
    diff = repo.git("diff", "--", MEMORY).stdout
    assert hidden(diff) == [], hidden(diff)
    assert "never deploy on Fridays\\x0ddeploy on Fridays is fine" in diff and "\\u202e" in diff
    repo.commit("hostile")
    for args in (("log", "-p", "-1"), ("show", "HEAD")):
        shown = repo.git(*args).stdout
        assert hidden(shown) == [] and "\\x1b]52;c;" in shown, args
    # An unreadable line goes through the textconv too.
    repo.memory.write_bytes(repo.memory.read_bytes() + b"broken \x1b]0;title\x07 line\n")
    assert "\\x1b]0;title\\x07" in repo.git("diff", "--", MEMORY).stdout
