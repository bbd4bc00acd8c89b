"""The pre-commit check `init` installs (docs/security.md): it refuses a commit whose staged
.context/ holds a credential and says how to fix it, keeps a hook's own checks, follows
core.hooksPath, leaves the pre-commit framework's hook to the framework, and `doctor` says whether
it is active. Real repositories, real `git commit`."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from gitrepos import MEMORY, env, make_repo, server  # noqa: F401  (env is a fixture)

ROOT = Path(__file__).resolve().parents[1]


def fake_github_token() -> str:
    return "ghp_" + "aB3dE5gH7jK9mN1pQ3rS5tU7vW9xY1zA2bC4"  # the right shape, not a real token


def paste_into_lesson(repo, text: str) -> None:
    """A hand edit of the memory file: the tools would have redacted it, a text editor does not."""
    lines = repo.memory.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["lesson"] = f"use {text}"
    repo.memory.write_text(json.dumps(record, ensure_ascii=False) + "\n" + "\n".join(lines[1:]), encoding="utf-8")


def commit(repo, message: str) -> subprocess.CompletedProcess:
    repo.git("add", "-A")
    return repo.git("commit", "-q", "-m", message, check=False)


def test_a_commit_with_a_credential_in_context_is_refused_until_it_is_redacted(tmp_path, env):
    """init installs the check; a pasted token stops the commit with the fix in the message; after
    `scan --redact` and `git add` the same commit goes through, and the token is not in git."""
    repo = make_repo(tmp_path, env)
    assert "pre-commit" in repo.init_driver().stdout
    server(env, "--project", str(repo.path), "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    assert commit(repo, "clean").returncode == 0
    paste_into_lesson(repo, fake_github_token())
    refused = commit(repo, "leaky")
    assert refused.returncode != 0
    assert "looks like github_token" in refused.stderr and "scan --redact" in refused.stderr
    assert fake_github_token() not in refused.stderr
    assert server(env, "--project", str(repo.path), "scan", "--redact").returncode == 0
    assert commit(repo, "redacted").returncode == 0
    assert fake_github_token().encode() not in repo.show("HEAD")


def test_a_conflicted_copy_is_git_ignored_even_under_an_older_gitignore_and_never_committed(tmp_path, env):
    """A memory file with conflict markers and a pasted token, in a project whose .context/.gitignore
    predates our patterns (only `*.lock`): the write that resolves it keeps the original aside as
    a .conflicted copy that git ignores (the .gitignore gains the missing lines), and a copy staged
    by force, alone or with the memory, stops the commit with the command that unstages it."""
    repo = make_repo(tmp_path, env)
    repo.init_driver()
    (repo.path / ".context" / ".gitignore").write_text("*.lock\n", encoding="utf-8")
    record = {"id": "000000000000000f", "type": "log", "topic": "h", "missing_context": "m", "lesson": "ours",
              "ask_next_time": "", "meta": {"created": "2026-01-01T00:00:00+00:00"}}
    theirs = {**record, "lesson": "theirs"}
    repo.memory.write_text("\n".join([f'{{"id": "0000000000000009", "lesson": "token {fake_github_token()}',
                                       "<<<<<<< HEAD", json.dumps(record), "=======", json.dumps(theirs),
                                       ">>>>>>> b"]) + "\n", encoding="utf-8")
    server(env, "--project", str(repo.path), "log", "--topic", "a", "--missing-context", "b", "--lesson", "c")
    copies = list((repo.path / ".context").glob("*.conflicted"))
    assert len(copies) == 1 and fake_github_token() in copies[0].read_text(encoding="utf-8")
    assert ".conflicted" not in repo.git("status", "--porcelain", "--untracked-files=all").stdout
    assert "*.conflicted" in (repo.path / ".context" / ".gitignore").read_text(encoding="utf-8")
    assert commit(repo, "resolved").returncode == 0
    assert fake_github_token().encode() not in repo.show("HEAD")
    repo.git("add", "-f", str(copies[0]))  # forced past the ignore rule, alone
    alone = repo.git("commit", "-q", "-m", "the copy alone", check=False)
    assert alone.returncode != 0 and f"git rm --cached .context/{copies[0].name}" in alone.stderr
    server(env, "--project", str(repo.path), "log", "--topic", "d", "--missing-context", "e", "--lesson", "f")
    repo.git("add", "-A")
    repo.git("add", "-f", str(copies[0]))  # forced past the ignore rule, with a change to the memory
    refused = repo.git("commit", "-q", "-m", "with the copy", check=False)
    assert refused.returncode != 0 and f"git rm --cached .context/{copies[0].name}" in refused.stderr


def test_an_existing_hook_keeps_running_and_a_second_init_changes_nothing(tmp_path, env):
    """A project's own shell hook stays and still runs; the check goes right after its first line
    (before an `exec` at its end could skip it), and init run again leaves the hook as it is."""
    repo = make_repo(tmp_path, env, wired=False)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho ran >> '{tmp_path / 'own-check'}'\nexec true\n", encoding="utf-8")
    hook.chmod(0o755)
    out = repo.init_driver().stdout
    assert "added the credential check to" in out and "own checks kept" in out
    text = hook.read_text(encoding="utf-8")
    assert text.startswith("#!/bin/sh\n# sentinel-memory:begin") and "echo ran" in text
    repo.init_driver()
    assert hook.read_text(encoding="utf-8") == text
    server(env, "--project", str(repo.path), "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    paste_into_lesson(repo, fake_github_token())
    assert commit(repo, "leaky").returncode != 0
    server(env, "--project", str(repo.path), "scan", "--redact")
    assert commit(repo, "clean").returncode == 0
    assert (tmp_path / "own-check").read_text() == "ran\n"


def test_the_check_goes_where_core_hookspath_points_inside_the_git_folder_only(tmp_path, env):
    """core.hooksPath in the git folder: the hook is written there (git would not look in
    .git/hooks). core.hooksPath in the work tree (a hooks folder the team commits): nothing is
    written there, since the check carries this machine's paths; init prints the portable line."""
    repo = make_repo(tmp_path, env, wired=False)
    repo.git("config", "core.hooksPath", ".git/team-hooks")
    repo.init_driver()
    assert "# sentinel-memory:begin" in (repo.path / ".git" / "team-hooks" / "pre-commit").read_text(encoding="utf-8")
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()
    assert "pre-commit credential check active" in server(env, "--project", str(repo.path), "doctor").stdout

    repo.git("config", "core.hooksPath", "githooks")
    out = repo.init_driver().stdout
    assert not (repo.path / "githooks" / "pre-commit").exists()
    assert "shared with the team" in out and "|| sentinel-memory scan --staged || exit 1" in out
    assert "no pre-commit credential check" in server(env, "--project", str(repo.path), "doctor").stdout


def test_the_pre_commit_framework_keeps_its_hook_and_gets_told_what_to_add(tmp_path, env):
    """A project on the pre-commit framework: init leaves the hook file alone and names our hook;
    once the config lists it, doctor reports the check as active."""
    repo = make_repo(tmp_path, env, wired=False)
    config = repo.path / ".pre-commit-config.yaml"
    config.write_text("repos: []\n", encoding="utf-8")
    out = repo.init_driver().stdout
    assert "add the sentinel-memory-scan hook" in out
    assert not (repo.path / ".git" / "hooks" / "pre-commit").exists()
    assert "no pre-commit credential check" in server(env, "--project", str(repo.path), "doctor").stdout
    config.write_text("repos:\n- repo: local\n  hooks:\n  - id: sentinel-memory-scan\n", encoding="utf-8")
    assert "the pre-commit framework runs sentinel-memory-scan" in server(env, "--project", str(repo.path), "doctor").stdout


def test_a_hook_that_is_not_a_shell_script_is_left_alone(tmp_path, env):
    """A Python hook is not edited (a shell line would break it); init says what to add."""
    repo = make_repo(tmp_path, env, wired=False)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/usr/bin/env python3\nprint('own')\n", encoding="utf-8")
    out = repo.init_driver().stdout
    assert "left alone" in out and "scan --staged" in out
    assert hook.read_text(encoding="utf-8") == "#!/usr/bin/env python3\nprint('own')\n"


def test_doctor_warns_when_the_check_is_missing_or_not_executable(tmp_path, env):
    """Without the hook doctor warns and says to run init; a hook that lost its execute bit is
    named, because git silently skips it."""
    repo = make_repo(tmp_path, env, wired=False)
    assert "no pre-commit credential check" in server(env, "--project", str(repo.path), "doctor").stdout
    repo.init_driver()
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.chmod(0o644)
    assert "is not executable" in server(env, "--project", str(repo.path), "doctor").stdout


def test_the_shipped_framework_hook_runs_the_staged_scan_on_the_memory_files():
    """.pre-commit-hooks.yaml offers sentinel-memory-scan: the staged scan, on .context/'s two files."""
    text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "id: sentinel-memory-scan" in text and "entry: sentinel-memory scan --staged" in text
    files = re.search(r"files: (\S+)", text).group(1)
    assert re.search(files, ".context/memory_log.jsonl") and re.search(files, ".context/memory_log.quarantine.jsonl")
    assert not re.search(files, "src/memory_log.jsonl.bak")


# ---------------------------------------------------------------------------------------------
# hooks init cannot safely extend are left byte for byte


def doctor(env, repo) -> str:
    return server(env, "--project", str(repo.path), "doctor").stdout


def test_a_compiled_hook_is_left_byte_for_byte_and_commits_still_work(tmp_path, env):
    """A compiled pre-commit hook (a program, no #!): init does not touch it and says how to add
    the check; git commit still runs it; doctor does not call the check active."""
    repo = make_repo(tmp_path, env, wired=False)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    shutil.copy2("/bin/true", hook)
    before = hook.read_bytes()

    out = repo.init_driver().stdout

    assert hook.read_bytes() == before
    assert f"left alone {hook}: it is a compiled program" in out and "scan --staged" in out
    assert commit(repo, "first").returncode == 0
    assert "no pre-commit credential check" in doctor(env, repo) and "check active" not in doctor(env, repo)


def test_a_shell_hook_keeps_every_byte_latin_1_and_crlf_included(tmp_path, env):
    """A shell hook with Latin-1 bytes and a CRLF line: init inserts its section after the first
    line and every other byte stays as it was; the hook still runs."""
    repo = make_repo(tmp_path, env, wired=False)
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    rest = b"# caf\xe9 \xa9 team\r\necho ran >> '" + str(tmp_path / "own-check").encode() + b"'\n"
    hook.write_bytes(b"#!/bin/sh\n" + rest)
    hook.chmod(0o750)

    repo.init_driver()

    data = hook.read_bytes()
    assert data.startswith(b"#!/bin/sh\n# sentinel-memory:begin") and data.endswith(b"# sentinel-memory:end\n" + rest)
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert commit(repo, "first").returncode == 0 and (tmp_path / "own-check").read_text() == "ran\n"


def test_a_hook_linked_to_a_tracked_script_gets_no_machine_path(tmp_path, env):
    """.git/hooks/pre-commit linked to the team's tracked scripts/pre-commit: the tracked file is
    not changed (git status stays clean), the link stays, and init prints the portable line."""
    repo = make_repo(tmp_path, env, wired=False)
    script = repo.path / "scripts" / "pre-commit"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho team checks\n", encoding="utf-8")
    script.chmod(0o755)
    repo.commit("team hook")
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.symlink_to(script)

    out = repo.init_driver().stdout

    assert script.read_text(encoding="utf-8") == "#!/bin/sh\necho team checks\n" and hook.is_symlink()
    assert "shared with the team" in out and "|| sentinel-memory scan --staged || exit 1" in out
    assert str(tmp_path) not in out.split("add this line to it:")[-1]
    assert "scripts/" not in repo.git("status", "--porcelain").stdout


def test_husky_gets_the_line_for_its_own_hook_file(tmp_path, env):
    """husky (core.hooksPath .husky/_): nothing is written into husky's generated folder nor into
    the team's .husky/pre-commit; init names the line to add there, and doctor finds it once added."""
    repo = make_repo(tmp_path, env, wired=False)
    generated = repo.path / ".husky" / "_" / "pre-commit"
    generated.parent.mkdir(parents=True)
    generated.write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', encoding="utf-8")
    team = repo.path / ".husky" / "pre-commit"
    team.write_text("npm test\n", encoding="utf-8")
    repo.git("config", "core.hooksPath", ".husky/_")

    out = repo.init_driver().stdout

    assert generated.read_text(encoding="utf-8") == '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n'
    assert team.read_text(encoding="utf-8") == "npm test\n"
    assert f"add this line to {team} and commit it: git diff --cached" in out
    assert "no pre-commit credential check in husky's hook" in doctor(env, repo)
    line = out.split("and commit it: ")[1].splitlines()[0]
    team.write_text(f"npm test\n{line}\n", encoding="utf-8")
    assert "husky runs sentinel-memory scan --staged" in doctor(env, repo)


def test_lefthook_keeps_its_hook_and_gets_told_what_to_add(tmp_path, env):
    """lefthook (lefthook.yml, its generated .git/hooks/pre-commit): the hook stays as lefthook
    wrote it; init names the command to add to lefthook.yml; doctor finds it once added."""
    repo = make_repo(tmp_path, env, wired=False)
    config = repo.path / "lefthook.yml"
    config.write_text("pre-commit:\n  commands:\n    lint:\n      run: npm run lint\n", encoding="utf-8")
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text('#!/bin/sh\ncall_lefthook()\n{\n  lefthook "$@"\n}\ncall_lefthook run "pre-commit" "$@"\n',
                    encoding="utf-8")
    before = hook.read_bytes()

    out = repo.init_driver().stdout

    assert hook.read_bytes() == before and f"add to {config}" in out and "sentinel-memory scan --staged" in out
    assert "no pre-commit credential check in lefthook's hook" in doctor(env, repo)
    config.write_text(config.read_text(encoding="utf-8") + "    sentinel-memory:\n      run: sentinel-memory scan --staged\n",
                      encoding="utf-8")
    assert "lefthook runs sentinel-memory scan --staged" in doctor(env, repo)


def test_what_is_staged_that_cannot_be_read_stops_the_commit_with_one_sentence(tmp_path, env):
    """The check fails closed: when git cannot give the staged memory file (here its object is
    gone from the object store), the commit is refused with one sentence saying so and how to
    commit anyway, never taken as "nothing staged". `scan --staged` alone exits 3 the same way."""
    repo = make_repo(tmp_path, env)
    server(env, "--project", str(repo.path), "log", "--topic", "t", "--missing-context", "m", "--lesson", "l")
    assert commit(repo, "clean").returncode == 0
    paste_into_lesson(repo, fake_github_token())
    repo.git("add", "-A")
    blob = repo.git("rev-parse", f":{MEMORY}").stdout.strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    refused = repo.git("commit", "-q", "-m", "leaky", check=False)
    assert refused.returncode != 0
    assert "could not be read for the credential check" in refused.stderr and "--no-verify" in refused.stderr
    assert "Traceback" not in refused.stderr and fake_github_token() not in refused.stderr
    assert repo.git("rev-list", "--count", "HEAD").stdout.strip() == "1"
    alone = server(env, "--project", str(repo.path), "scan", "--staged")
    assert alone.returncode == 3 and alone.stderr.count("\n") == 1 and "commit was stopped" in alone.stderr


def test_a_project_in_a_subfolder_of_the_repository_has_its_own_check(tmp_path, env):
    """A monorepo: the projects live in subfolders, and git runs the hook at the repository's top.
    Each project's init adds its own section, naming its folder, so a credential pasted into
    either project's memory stops the commit; a second init changes nothing; doctor sees each."""
    repo = make_repo(tmp_path, env, wired=False)
    for name in ("app", "lib"):
        (repo.path / name).mkdir()
        assert "hooks/pre-commit" in server(env, "--project", str(repo.path / name), "init", "--no-hooks").stdout
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    text = hook.read_text(encoding="utf-8")
    assert server(env, "--project", str(repo.path / "app"), "init", "--no-hooks").returncode == 0
    assert hook.read_text(encoding="utf-8") == text
    for name in ("app", "lib"):
        doctor = server(env, "--project", str(repo.path / name), "doctor").stdout
        assert "pre-commit credential check active" in doctor
        server(
            env, "--project", str(repo.path / name), "log", "--topic", "t", "--missing-context", "m", "--lesson", "l"
        )
        assert commit(repo, f"clean {name}").returncode == 0
        lines = (repo.path / name / MEMORY).read_text(encoding="utf-8").splitlines()
        record = json.loads(lines[0])
        record["lesson"] = f"use {fake_github_token()}"
        (repo.path / name / MEMORY).write_text(json.dumps(record) + "\n", encoding="utf-8")
        refused = commit(repo, f"leaky {name}")
        assert refused.returncode != 0 and "looks like github_token" in refused.stderr
        assert f"--project {name}/ scan --redact`, then `git add {name}/.context`" in refused.stderr
        assert server(env, "--project", str(repo.path / name), "scan", "--redact").returncode == 0
        assert commit(repo, f"redacted {name}").returncode == 0


def test_a_project_folder_whose_name_holds_a_line_break_runs_nothing_from_it(tmp_path, env):
    """A cloned monorepo's project folder may be named "app<LF>touch ran<LF>": the section's
    marker comments name the folder with the line break as an escape, so the commit runs nothing
    of the name; a second init finds the same section."""
    repo = make_repo(tmp_path, env, wired=False)
    ran = repo.path / "ran"  # git runs the hook at the repository's top
    project = repo.path / "app\ntouch ran\n"
    project.mkdir()
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    text = hook.read_text(encoding="utf-8")
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    (repo.path / "a.txt").write_text("x\n", encoding="utf-8")
    subprocess.run(["git", "add", "a.txt"], cwd=repo.path, env=env, check=True)

    assert commit(repo, "a change").returncode == 0
    assert not ran.exists()
    assert hook.read_text(encoding="utf-8") == text and text.count("# sentinel-memory:begin") == 1


def test_a_project_folder_named_with_a_joiner_keeps_the_markers_earlier_versions_wrote(tmp_path, env):
    """Only control characters are escaped in the markers: a folder named with a zero-width joiner
    (Persian names, emoji such as 👩‍💻) is written as it is, as earlier versions wrote it, so their
    section is found again and not added twice."""
    repo = make_repo(tmp_path, env, wired=False)
    project = repo.path / "می‌خواهم"
    project.mkdir()
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    text = (repo.path / ".git" / "hooks" / "pre-commit").read_text(encoding="utf-8")

    assert f"# sentinel-memory:begin '{project.name}/'" in text


@pytest.mark.parametrize("odd", ["\t", "\x7f", "\u2028"], ids=["TAB", "DEL", "U+2028"])
def test_an_upgrade_rewrites_the_section_an_earlier_version_marked_with_a_control_character(tmp_path, env, odd):
    """Earlier versions wrote a folder's name into the markers as it is; this one writes a control
    character of it as an escape. Run on a hook an earlier version made, init finds that section
    and rewrites it: one section, not two checks."""
    repo = make_repo(tmp_path, env, wired=False)
    project = repo.path / f"app{odd}one"
    project.mkdir()
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    now = hook.read_text(encoding="utf-8")
    escaped = now.split("\n", 2)[1].removeprefix("# sentinel-memory:begin ")
    assert odd not in escaped
    hook.write_text(now.replace(escaped, f"'{project.name}/'"), encoding="utf-8")  # as an earlier version wrote it

    said = server(env, "--project", str(project), "init", "--no-hooks").stdout

    assert hook.read_text(encoding="utf-8") == now, said
    assert "updated" in said and "added the credential check" not in said


def test_an_upgrade_keeps_one_section_where_an_earlier_version_left_two(tmp_path, env):
    """A version between the raw markers and these added a second, escaped section beside the raw
    one for a folder named with a TAB: the next init keeps one section (the other would run an
    install that may be gone, and stop every commit) and the user's own lines."""
    repo = make_repo(tmp_path, env, wired=False)
    project = repo.path / "app\tone"
    project.mkdir()
    assert server(env, "--project", str(project), "init", "--no-hooks").returncode == 0
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    now = hook.read_text(encoding="utf-8")
    first, section = now.split("\n", 1)
    escaped = section.split("\n", 1)[0].removeprefix("# sentinel-memory:begin ")
    raw = section.replace(escaped, f"'{project.name}/'").replace("scan --staged", "scan --staged --old")
    hook.write_text(f"{first}\necho mine\n{raw}{section}", encoding="utf-8")

    said = server(env, "--project", str(project), "init", "--no-hooks").stdout

    text = hook.read_text(encoding="utf-8")
    assert text.count("# sentinel-memory:begin") == 1 and "--old" not in text, said
    assert "echo mine\n" in text and section in text


def test_a_hooks_path_that_is_not_a_folder_is_said_by_init_and_doctor_alike(tmp_path, env):
    """core.hooksPath naming a file: init cannot write the hook there and says so; doctor does not
    send the reader back to init, but says what to change."""
    repo = make_repo(tmp_path, env, wired=False)
    (repo.path / ".git" / "not-a-folder").write_text("")
    repo.git("config", "core.hooksPath", ".git/not-a-folder")
    assert "cannot be read (Not a directory)" in repo.init_driver().stdout
    said = [line for line in server(env, "--project", str(repo.path), "doctor").stdout.splitlines() if "pre-commit" in line]
    assert len(said) == 1 and "point core.hooksPath at a folder" in said[0] and "run init to add it" not in said[0]


def test_a_staged_memory_file_past_the_size_bound_is_not_read_and_stops_the_commit(tmp_path, env):
    """Every reader of the memory stops at the same bound (a file past it is refused by the tools);
    the staged check does too, without reading the blob, and fails closed in one sentence."""
    repo = make_repo(tmp_path, env)
    line = b'{"not": "a record"}\n'
    repo.memory.write_bytes(line * (64 * 1024 * 1024 // len(line) + 1))
    refused = commit(repo, "huge")
    assert refused.returncode != 0 and "bytes, over the 67,108,864 a memory file may hold" in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
