"""A cloned, possibly hostile repository's client configs against `init` and `doctor`: a crafted
JSONC file (thousands of unterminated comments or strings) or a big TOML file, each under the
1 MiB read bound, gets the commands' usual answer at once, and nothing of it changes. Real
processes (tests/forkrun.py), real git repositories and files in tmp_path."""

from __future__ import annotations

import random
import re
import subprocess

import forkrun
from gitrepos import env, make_repo  # noqa: F401  (env is a fixture)
from sentinel_memory.configfiles import jsonedit
from sentinel_memory.configfiles.tomledit import MAX_TOML_EDIT_BYTES


def run(env: dict, repo, *args: str) -> subprocess.CompletedProcess:
    """`server.py --project REPO ARGS`. The crafted files below kept the commands busy for minutes
    before; the timeout only ends such a run (the test then fails), nothing here is timed."""
    result = forkrun.run(["--project", str(repo.path), *args], env=env, text=True, encoding="utf-8", timeout=60)
    assert "Traceback" not in result.stderr, result.stderr
    return result


# ---------------------------------------------------------------------------------------------
# JSONC: comments and trailing commas read as spaces


_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/')
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\\n]|\\.)*"|,(?=\s*[}\]])')


def reference_blank(text: str) -> str:
    """What blank() gave as two regular-expression substitutions (right, but quadratic on crafted
    text: kept here on short inputs only)."""

    def spaces(match: re.Match) -> str:
        found = match.group()
        return found if found.startswith('"') else re.sub(r"[^\r\n]", " ", found)

    return _STRING_OR_TRAILING_COMMA.sub(spaces, _STRING_OR_COMMENT.sub(spaces, text))


TRICKY = [
    "",
    "{}",
    ",",
    "/",
    '"',
    "\\",
    "/**/",
    "/***/",
    "/*/",
    "/*/ a comment, with a slash after its opening */ {}",
    "//\n//",
    '{"a": "x // y /* z */", /* c */ "b": 1, // t\n}',
    '{"u": "http://example.com", "e": "\\"// no comment", "b": "\\\\"// a comment\n}',
    "// only\r\n{\"a\": [1, 2, ], }\r\n",
    '/* multi\nline\r\n comment */{"a": 1}',
    '{"a": 1} /* unterminated',
    '{"a": 1} // the last line, without a line break',
    '{"a": "unterminated // a comment after all\n, "b": 2,\n}',
    '{"a": "x\\\n// after a backslash at the line\'s end\n"}',
    '{"a": "\\\\\\"/* escaped quote */", "b": 2}',
    '{"k": "v"  ,  \t\n ]',
    ",\u2028}",
    ",\xa0]",
    ",\x85}",
    ", x }",
    '"a,]"',
    '{"a": "/* in a string */", "b": "// in a string",}',
    '{"a": "é // ü", /* ß */ "b": "\\u00e9",}',
    '"" "" "\\" "',
    "/*x" * 50,
    '"\\' * 50 + ",",
    '"\\"' * 30 + "\n/* c */,]",
    "/* a */ /* b */ /* c",
    "/*/*/ */",
]


def test_blank_reads_tricky_jsonc_as_it_always_did():
    """Strings holding // or /*, escapes, line and block comments, an unterminated comment or
    string, trailing commas before Unicode spaces: blank() gives what the two substitutions gave,
    on the inputs above and on random text of the characters that matter."""
    for text in TRICKY:
        assert jsonedit.blank(text) == reference_blank(text), repr(text)
    rng = random.Random(52)
    alphabet = ['"', "\\", "/", "*", "\n", "\r", ",", "}", "]", " ", "x", "{", "\t", "\xa0", ":"]
    for _ in range(3000):
        text = "".join(rng.choices(alphabet, k=rng.randint(1, 40)))
        assert jsonedit.blank(text) == reference_blank(text), repr(text)


def test_blank_turns_comments_and_trailing_commas_into_spaces_and_keeps_strings():
    """Every position stays where it was: comments and trailing commas become spaces, line breaks
    stay, a string's // and /* stay."""
    text = '{"a": "x // y", /* c */ "b": [1, 2,], // t\r\n"c": "/*"\n}'
    assert jsonedit.blank(text) == '{"a": "x // y",         "b": [1, 2 ],     \r\n"c": "/*"\n}'
    assert jsonedit.blank("/* a\r\nb */{}") == "    \r\n    {}"
    assert jsonedit.blank('{"a": 1} /* never closed') == '{"a": 1} /* never closed'
    assert jsonedit.loads('{"a": "x // y", /* c */ "b": [1, 2,],}') == {"a": "x // y", "b": [1, 2]}


def test_crafted_unterminated_comments_and_strings_get_doctors_and_inits_answer(tmp_path, env):
    """A clone's .claude/settings.json of 300 KB of unterminated `/*` and .mcp.json of 120 KB of
    unterminated strings (invalid JSONC, each read to its end again and again before: minutes):
    init leaves both alone saying they are not valid JSON, doctor says so, and no byte changes."""
    repo = make_repo(tmp_path, env, wired=False)
    settings, mcp = repo.path / ".claude" / "settings.json", repo.path / ".mcp.json"
    settings.parent.mkdir()
    settings.write_text("/*x" * 100_000, encoding="utf-8")
    mcp.write_text('"\\' * 60_000 + ",", encoding="utf-8")
    before = settings.read_bytes(), mcp.read_bytes()

    done = run(env, repo, "init", "--client", "claude")

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"left alone the hooks in {settings}: it is not valid JSON" in done.stdout
    assert f"left alone {mcp}: it is not valid JSON" in done.stdout
    doctor = run(env, repo, "doctor")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert f"{settings}: its hooks could not be read" in doctor.stdout
    assert f"[FAIL] {mcp} is not valid JSON" in doctor.stdout
    assert (settings.read_bytes(), mcp.read_bytes()) == before


# ---------------------------------------------------------------------------------------------
# TOML: a Codex config past what init edits


def test_a_codex_config_past_the_edit_bound_is_left_alone_in_one_sentence(tmp_path, env):
    """A clone's .codex/config.toml of 738 KB of valid dotted keys (under the 1 MiB read bound;
    tomlkit took about a minute over it): init leaves it alone, naming the file and its size and
    giving the table to add by hand; doctor says init would; the file keeps every byte."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text("".join(f"a.b{i}.c = 1\n" for i in range(50_000)), encoding="utf-8")
    before = path.read_bytes()
    assert MAX_TOML_EDIT_BYTES < len(before) < 1024 * 1024

    done = run(env, repo, "init", "--client", "codex", "--no-hooks", "--no-rules")

    assert done.returncode == 0, done.stdout + done.stderr
    said = f"left alone {path}: it is {len(before):,} bytes of TOML, more than init edits ({MAX_TOML_EDIT_BYTES:,} at most"
    assert said in done.stdout
    assert "make it smaller; add this yourself: [mcp_servers.sentinel-memory]" in done.stdout
    doctor = run(env, repo, "doctor")
    assert f"[warn] init leaves {path} alone: it is {len(before):,} bytes of TOML" in doctor.stdout
    assert "Traceback" not in doctor.stdout
    assert path.read_bytes() == before


def test_a_codex_config_of_the_bounds_size_is_still_edited(tmp_path, env):
    """A config of exactly the bound's size (comments) gets our table added after it; every byte
    of it stays."""
    repo = make_repo(tmp_path, env, wired=False)
    path = repo.path / ".codex" / "config.toml"
    path.parent.mkdir()
    line = "# a long comment a team keeps in its Codex config\n"
    text = line * (MAX_TOML_EDIT_BYTES // len(line))
    text += "#" * (MAX_TOML_EDIT_BYTES - len(text) - 1) + "\n"
    path.write_text(text, encoding="utf-8")
    assert len(path.read_bytes()) == MAX_TOML_EDIT_BYTES

    done = run(env, repo, "init", "--client", "codex", "--no-hooks", "--no-rules")

    assert f"added to {path}: server 'sentinel-memory'" in done.stdout, done.stdout
    after = path.read_text(encoding="utf-8")
    assert after.startswith(text) and "[mcp_servers.sentinel-memory]" in after[len(text) :]
