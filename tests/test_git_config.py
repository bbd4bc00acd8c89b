"""A repository's own git config runs none of its commands through us (docs/security.md): a cloned
or downloaded project carries its .git/config, and every git process the server, the commands,
the merge driver and the pre-commit hook start pins the settings that would run one
(git/command.py). The first test plants every kind of hostile setting, each with a command that
would leave a trace (in two repositories, one per kind of signature), then drives every path
that starts git: the server's warm-up and its three tools over stdio, the commands, the merge
driver and the hook's check."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gitrepos import SERVER, T0, Repo, env, make_repo, put, rec, server  # noqa: F401
from sentinel_memory.setup import precommit

LATER = "2026-03-01T00:00:00+00:00"
PAY = rec("payment", "refunds need a key", "send the idempotency key", created=T0, files=["src/pay.py"])


def planted(tmp_path: Path, kind: str = "hostile") -> tuple[str, Path]:
    """A program that records that it ran (its kind, in the returned file) and succeeds quietly."""
    trace = tmp_path / "RAN"
    program = tmp_path / ("hostile-" + "".join(c if c.isalnum() else "-" for c in kind) + ".sh")
    program.write_text(f'#!/bin/sh\necho "{kind}: $0 $*" >> "{trace}"\ncat >/dev/null 2>&1 </dev/null\nexit 0\n')
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return str(program), trace


def dated(repo: Repo, message: str, when: str) -> None:
    stamped = dict(repo.env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    for args in (["add", "-A"], ["commit", "-q", "--no-verify", "-m", message]):
        subprocess.run(["git", "-C", str(repo.path), *args], env=stamped, check=True, capture_output=True)


def sign_head(repo: Repo, armor: str) -> None:
    """Give HEAD a (fake) signature header, so that showing it with signatures calls the program
    that verifies this kind (armor: PGP or SSH)."""
    raw = repo.git("cat-file", "commit", "HEAD").stdout
    head, _, message = raw.partition("\n\n")
    signature = f"gpgsig -----BEGIN {armor} SIGNATURE-----\n \n iQEzBAABCAAdFiEEfake\n -----END {armor} SIGNATURE-----"
    body = f"{head}\n{signature}\n\n{message}"
    sha = subprocess.run(["git", "-C", str(repo.path), "hash-object", "-t", "commit", "-w", "--stdin"], input=body,
                         env=repo.env, capture_output=True, text=True, check=True).stdout.strip()
    repo.git("update-ref", "refs/heads/main", sha)


def project(tmp_path: Path, env: dict, armor: str = "PGP") -> Repo:
    """A wired repository whose memory cites src/pay.py, which a later (signed) commit changed, and
    whose memory file holds conflict markers (the loader asks git for the merge's stages)."""
    repo = make_repo(tmp_path, env)
    (repo.path / "src").mkdir()
    (repo.path / "src" / "pay.py").write_text("def refund(): ...\n")
    dated(repo, "the code", "2025-12-01T00:00:00+00:00")
    put(repo.memory, PAY)
    dated(repo, "the memory", T0)
    (repo.path / "src" / "pay.py").write_text("def refund(key): ...\n")
    dated(repo, "a key", LATER)
    sign_head(repo, armor)
    line = repo.memory.read_text(encoding="utf-8")
    other = json.dumps(rec("payment", "partial refunds", "refund line by line", created=T0))
    repo.memory.write_text(f"<<<<<<< ours\n{line}=======\n{line}{other}\n>>>>>>> theirs\n", encoding="utf-8")
    return repo


def configure(repo: Repo, settings: dict[str, str], attributes: str = "") -> None:
    for key, value in settings.items():
        repo.git("config", key, value)
    if attributes:
        (repo.path / ".git" / "info").mkdir(exist_ok=True)
        (repo.path / ".git" / "info" / "attributes").write_text(attributes)


async def drive_everything(repo: Repo, connect, tmp_path: Path) -> list[str]:
    """Every path that starts git, against this repository; returns what each answered (to check
    that the marks still work)."""
    answers = []
    async with connect(repo.path, env=repo.env) as mcp:  # the warm-up reads the conflicted file
        answers.append(await mcp.ok("search_memory", query="refund"))
        answers.append(await mcp.ok("compact_memory"))
        answers.append(await mcp.ok("log_memory", topic="payment", missing_context="refund keys",
                                    lesson="keys live in src/pay.py", files=["src/pay.py"]))
    stray = tmp_path / "stray"
    (stray / ".context").mkdir(parents=True)
    (stray / ".context" / "memory_log.jsonl").write_text(json.dumps(rec("misc", "a", "b", created=T0)) + "\n")
    for args in (["doctor"], ["scan", "--staged"], ["stale"], ["show", PAY["id"]], ["search", "refund"],
                 ["log", "--topic", "t", "--missing-context", "m", "--lesson", "l", "--file", "src/pay.py"],
                 ["review"], ["review", "HEAD~1", "--format", "markdown"],
                 ["fold", str(stray)], ["forget", PAY["id"]], ["export"], ["init"]):
        answers.append(server(repo.env, "--project", str(repo.path), *args).stdout)
    # The merge driver, where a side it cannot parse makes it fall back to git's text merge.
    sides = []
    for name, text in (("base", "x\n"), ("ours", "<<<<<<< a\nours\n"), ("theirs", "theirs\n")):
        sides.append(repo.path / f"side-{name}")
        sides[-1].write_text(text)
    subprocess.run([sys.executable, str(SERVER), "merge-driver", *map(str, sides), MEMORY_NAME], cwd=repo.path,
                   env=repo.env, capture_output=True, timeout=60)
    # The pre-commit hook's check, as init writes it.
    hook = tmp_path / "pre-commit"
    hook.write_text("#!/bin/sh\n" + precommit.section(sys.executable, str(SERVER)))
    subprocess.run(["sh", str(hook)], cwd=repo.path, env=repo.env, capture_output=True, timeout=60)
    return answers


MEMORY_NAME = ".context/memory_log.jsonl"

HOSTILE = {
    "core.fsmonitor": lambda run: ({"core.fsmonitor": run}, ""),
    "log.showSignature and gpg": lambda run: ({"log.showSignature": "true", "gpg.program": run,
                                               "gpg.format": "openpgp"}, ""),
    "ssh signatures": lambda run: ({"log.showSignature": "true", "gpg.format": "ssh", "gpg.ssh.program": run,
                                    "gpg.ssh.allowedSignersFile": run}, ""),
    "external diff": lambda run: ({"diff.external": run, "diff.hostile.command": run}, "* diff=hostile\n"),
    "textconv": lambda run: ({"diff.hostile.textconv": run, "diff.hostile.cachetextconv": "false"},
                             "* diff=hostile\n"),
    "pager": lambda run: ({"core.pager": run, "pager.log": run, "pager.show": run, "pager.diff": run}, ""),
    "filters": lambda run: ({"filter.hostile.clean": run, "filter.hostile.smudge": run,
                             "filter.hostile.process": run}, "* filter=hostile\n"),
    "merge driver": lambda run: ({"merge.hostile.driver": run}, "* merge=hostile\n"),
    "editor and askpass": lambda run: ({"core.editor": run, "sequence.editor": run, "core.askPass": run}, ""),
    "credential helper": lambda run: ({"credential.helper": run, "credential.https://example.com.helper": run}, ""),
    "ssh and proxies": lambda run: ({"core.sshCommand": run, "core.gitProxy": run, "remote.origin.url": "ssh://h/r",
                                     "remote.origin.uploadpack": run}, ""),
    "alternate refs": lambda run: ({"core.alternateRefsCommand": run}, ""),
    "hooks": lambda run: ({"core.hooksPath": str(Path(run).parent / "hooks")}, ""),  # a folder of links to run
}
HOOKS = ("pre-commit", "post-checkout", "post-merge", "post-index-change", "reference-transaction", "pre-auto-gc",
         "post-rewrite", "fsmonitor-watchman", "prepare-commit-msg", "commit-msg", "post-commit")


# The kinds are planted together, a repository for each kind of signature that HEAD carries: none
# sets a key that another of its group sets, and each runs a program of its own, so the trace names
# every kind that ran. With every setting pinned, git behaves as if none were there, so one kind
# cannot keep another's command from being reached; a setting that is not pinned runs its program.
GROUPS = {
    "PGP": sorted(set(HOSTILE) - {"ssh signatures", "textconv"}),
    "SSH": ["ssh signatures", "textconv"],  # textconv: its own repository, its driver not the external diff's
}


@pytest.mark.anyio
@pytest.mark.parametrize("armor", sorted(GROUPS))
async def test_no_command_from_the_repositorys_config_runs(tmp_path, env, connect, armor):
    trace = tmp_path / "RAN"
    settings: dict[str, str] = {}
    attributes = ""
    (tmp_path / "hooks").mkdir()
    for kind in GROUPS[armor]:
        run, _ = planted(tmp_path, kind)
        if kind == "hooks":
            for name in HOOKS:
                (tmp_path / "hooks" / name).symlink_to(run)
        planted_settings, planted_attributes = HOSTILE[kind](run)
        assert not set(planted_settings) & set(settings), f"{kind} sets a key another kind of {armor} sets"
        settings.update(planted_settings)
        attributes += planted_attributes
    repo = project(tmp_path, env, armor)
    configure(repo, settings, attributes)
    answers = await drive_everything(repo, connect, tmp_path)
    assert not trace.exists(), f"ran: {trace.read_text()}"
    assert "stale: the code it cites changed" in answers[0]  # the marks still come from git


def test_a_partial_clones_missing_objects_are_not_fetched_through_its_remotes_command(tmp_path, env):
    """A partial clone fetches a missing object from its promisor remote on demand (the stale
    marks' rename detection needs the files' contents), and the fetch runs what the remote's URL
    names: an ext:: command, core.sshCommand, an upload-pack program."""
    run, trace = planted(tmp_path)
    origin = make_repo(tmp_path, env, "origin", wired=False)
    origin.git("config", "uploadpack.allowFilter", "true")
    (origin.path / "src").mkdir()
    (origin.path / "src" / "pay.py").write_text("".join(f"line {i}\n" for i in range(200)))
    dated(origin, "the code", "2025-12-01T00:00:00+00:00")
    put(origin.memory, PAY)
    dated(origin, "the memory", T0)
    origin.git("mv", "src/pay.py", "src/refund.py")
    (origin.path / "src" / "refund.py").write_text("".join(f"line {i}\n" for i in range(201)))
    dated(origin, "renamed and changed", LATER)
    path = tmp_path / "partial"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", f"file://{origin.path}", str(path)], env=env,
                   check=True, capture_output=True)
    clone = Repo(path, env)
    missing = clone.git("rev-list", "--objects", "--missing=print", "HEAD").stdout
    assert "\n?" in "\n" + missing  # the old blobs were left out
    for key, value in {"remote.origin.url": f"ext::{run} %S", "protocol.ext.allow": "always",
                       "core.sshCommand": run, "remote.origin.uploadpack": run,
                       "protocol.file.allow": "always", "protocol.ssh.allow": "always"}.items():
        clone.git("config", key, value)
    result = server(env, "--project", str(path), "stale")
    search = server(env, "--project", str(path), "search", "idempotency")
    assert not trace.exists(), f"ran {trace.read_text()}"
    assert search.returncode == 0, search.stderr
    # git cannot read the history without the objects it may not fetch: `stale` says so (exit 3)
    # instead of listing no stale record.
    assert result.returncode == 3 and "the stale marks could not be read" in result.stderr, result.stderr


def test_a_repository_planted_in_context_is_not_taken_for_the_project(tmp_path, env):
    """A .context/ that holds a git directory of its own (HEAD, config, objects, refs; its config
    giving it a work tree and a monitor hook): asking git for the merge's stages from .context/
    does not pick it up, so its config runs nothing."""
    run, trace = planted(tmp_path)
    repo = project(tmp_path, env)
    context = repo.path / ".context"
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "planted")], env=env, check=True)
    for item in (tmp_path / "planted").iterdir():
        item.rename(context / item.name)
    (context / "index").write_bytes((repo.path / ".git" / "index").read_bytes())
    for key, value in (("core.bare", "false"), ("core.worktree", str(repo.path)), ("core.fsmonitor", run)):
        subprocess.run(["git", "config", "--file", str(context / "config"), key, value], env=env, check=True)
    out = server(env, "--project", str(repo.path), "search", "idempotency")
    assert out.returncode == 0, out.stderr
    assert not trace.exists(), f"ran {trace.read_text()}"


def test_init_writes_no_hook_through_a_link_nor_where_the_repositorys_config_points_outside(tmp_path, env):
    """A cloned repository's core.hooksPath, or a pre-commit hook that is a link, could aim init's
    write at any file of the user's: init leaves it alone and says what to add by hand."""
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "pre-commit").write_text("#!/bin/sh\necho mine\n")
    linked = make_repo(tmp_path, env, "linked", wired=False)
    (linked.path / ".git" / "hooks" / "pre-commit").symlink_to(precious / "pre-commit")
    aimed = make_repo(tmp_path, env, "aimed", wired=False)
    aimed.git("config", "core.hooksPath", str(precious))
    for repo in (linked, aimed):
        out = server(env, "--project", str(repo.path), "init")
        assert out.returncode == 0, out.stderr
        assert "left alone" in out.stdout and "scan --staged" in out.stdout, out.stdout
    assert (precious / "pre-commit").read_text() == "#!/bin/sh\necho mine\n"
    # A hooks folder in the work tree is the team's (husky's .husky/): it gets the portable line
    # to commit, never this machine's paths.
    inside = make_repo(tmp_path, env, "husky", wired=False)
    inside.git("config", "core.hooksPath", ".husky")
    out = server(env, "--project", str(inside.path), "init")
    assert out.returncode == 0 and "sentinel-memory scan --staged" in out.stdout, out.stdout
    assert not (inside.path / ".husky" / "pre-commit").exists()
