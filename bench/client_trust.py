"""Does `doctor` read the clients' trust as the clients themselves do? Prints a table; asserts
nothing; fetches nothing.

    .venv/bin/python bench/client_trust.py --clients DIR

DIR holds the clients installed from npm (bench/client_hooks.py's). A scratch project gets the MCP
entries and hooks of `init --client claude --client codex --client gemini`; then, case by case, a
fresh scratch HOME gets the records a person's choices leave (the folder trusted or not, the
project's server approved or rejected, the hooks reviewed), and each client is asked for its own
verdict beside doctor's line for it:
  claude  `claude mcp list`: the server connected (or failing to start: approved all the same)
          against pending, rejected (not listed) or disabled for the project
  codex   `codex app-server`, `hooks/list`: the project's hooks listed (the project trusted) and
          each one's trustStatus; good when all of ours are `trusted`
  gemini  `gemini mcp list`: the server connected (or disconnected, failing to start: enabled all
          the same) against disabled (an untrusted folder)
A row agrees when the client's verdict is good exactly where doctor's line says ok.

With --hooks GITDIR, also the clients' own switches that keep every hook (or ours by name) from
running, which doctor warns of: bench/client_hooks.py's scenario a (a prompt naming a lesson's
file; a memory of 300 records from GITDIR) as init leaves the project, then with the switch set.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import client_hooks  # noqa: E402

SERVER = "sentinel-memory"


def run(argv: list[str], env: dict, cwd: Path, stdin: str | None = None, timeout: int = 90) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
    )
    return done.stdout + done.stderr


def claude_verdict(env: dict, project: Path) -> tuple[bool, str]:
    out = run(["claude", "mcp", "list"], env, project)
    line = next((x for x in out.splitlines() if x.startswith(f"{SERVER}:")), "")
    if not line:
        return False, "not listed (rejected)"
    said = line.split(" - ", 1)[-1].strip()
    return ("Pending" not in said and "Disabled" not in said), said


def codex_verdict(env: dict, project: Path) -> tuple[bool, str]:
    listed = client_hooks.codex_hooks(env, project)
    ours = [h for h in listed if h.get("source") == "project"]
    if not ours:
        return False, "no project hooks listed (the project not trusted)"
    states = sorted({h.get("trustStatus") for h in ours})
    return states == ["trusted"], "hooks " + "/".join(str(s) for s in states)


def gemini_verdict(env: dict, project: Path) -> tuple[bool, str]:
    out = run(["gemini", "mcp", "list"], env, project)
    line = next((x for x in out.splitlines() if f"{SERVER}:" in x), "")
    said = line.split(" - ", 1)[-1].strip() if line else "not listed"
    return ("Disabled" not in said and line != ""), said


VERDICTS = {"claude": claude_verdict, "codex": codex_verdict, "gemini": gemini_verdict}
DOCTOR_LINE = {
    "claude": ("'Use this MCP server'", f"'{SERVER}' server", "disabledMcpjsonServers"),
    "codex": ("~/.codex/config.toml", "Codex reads a project"),
    "gemini": ("trustedFolders.json", "folder trust is off", "Gemini CLI trusts every folder"),
}


def doctor_says(env: dict, project: Path, client: str) -> tuple[bool, str]:
    out = run([sys.executable, str(ROOT / "server.py"), "--project", str(project), "doctor"], env, project)
    line = next((x for x in out.splitlines() if any(k in x for k in DOCTOR_LINE[client])), "")
    return line.startswith("[  ok]"), line[:7] + " " + line[7:90].strip()


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def cases(project: Path) -> list[tuple[str, str, object]]:
    """(client, what the person did, a function writing it into (home, env))."""
    root, parent = str(project), str(project.parent)
    claude_state = lambda home, trusted: write_json(  # noqa: E731
        home / ".claude.json", {"projects": {p: {"hasTrustDialogAccepted": True} for p in trusted}}
    )
    local = project / ".claude" / "settings.local.json"

    def claude(trusted, local_settings=None, user=None, disabled=False):
        def write(home, env):
            claude_state(home, trusted)
            if disabled:
                state = json.loads((home / ".claude.json").read_text())
                state["projects"][root]["disabledMcpServers"] = [SERVER]
                write_json(home / ".claude.json", state)
            write_json(local, local_settings or {})
            if user is not None:
                write_json(home / ".claude" / "settings.json", user)

        return write

    def codex(trusted, review=False):
        def write(home, env):
            lines = "".join(f'[projects.{json.dumps(p)}]\ntrust_level = "trusted"\n' for p in trusted)
            (home / ".codex").mkdir(parents=True, exist_ok=True)
            (home / ".codex" / "config.toml").write_text(lines, encoding="utf-8")
            if review:
                client_hooks.trust_codex_hooks(env, project, home)

        return write

    def gemini(rules, settings=None):
        def write(home, env):
            write_json(home / ".gemini" / "trustedFolders.json", rules)
            write_json(home / ".gemini" / "settings.json", settings or {})

        return write

    enabled = {"enabledMcpjsonServers": [SERVER]}
    return [
        ("claude", "nothing yet", claude([])),
        ("claude", "folder trusted", claude([root])),
        ("claude", "trusted, server approved", claude([root], enabled)),
        ("claude", "trusted, all project servers (user)", claude([root], None, {"enableAllProjectMcpServers": True})),
        ("claude", "trusted, approved, rejected (user)", claude([root], enabled, {"disabledMcpjsonServers": [SERVER]})),
        ("claude", "trusted, approved, off in /mcp", claude([root], enabled, None, True)),
        ("claude", "parent trusted, approved", claude([parent], enabled)),
        ("codex", "nothing yet", codex([])),
        ("codex", "project trusted", codex([root])),
        ("codex", "parent trusted", codex([parent])),
        ("codex", "trusted, hooks reviewed", codex([root], True)),
        ("gemini", "nothing yet", gemini({})),
        ("gemini", "folder trusted", gemini({root: "TRUST_FOLDER"})),
        ("gemini", "parent trusted", gemini({parent: "TRUST_FOLDER"})),
        ("gemini", "a child's TRUST_PARENT", gemini({root + "/sub": "TRUST_PARENT"})),
        ("gemini", "parent trusted, folder DO_NOT_TRUST", gemini({parent: "TRUST_FOLDER", root: "DO_NOT_TRUST"})),
        ("gemini", "folder trust off", gemini({}, {"security": {"folderTrust": {"enabled": False}}})),
    ]


def hooks_off(clients: Path, gitdir: str) -> None:
    """Scenario a with each client's own switch for hooks set, beside the same without it."""

    def settings(path: Path, **members) -> None:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        write_json(path, {**data, **members})

    switches = [
        (
            "claude",
            "disableAllHooks in .claude/settings.local.json",
            lambda project, home: settings(project / ".claude" / "settings.local.json", disableAllHooks=True),
        ),
        (
            "gemini",
            "hooksConfig.enabled false in .gemini/settings.json",
            lambda project, home: settings(project / ".gemini" / "settings.json", hooksConfig={"enabled": False}),
        ),
        (
            "gemini",
            "hooksConfig.disabled names ours",
            lambda project, home: settings(project / ".gemini" / "settings.json", hooksConfig={"disabled": [SERVER]}),
        ),
        (
            "codex",
            "hooks = false under [features] in ~/.codex/config.toml",
            lambda project, home: (home / ".codex" / "config.toml").write_text(
                (home / ".codex" / "config.toml").read_text().replace("hooks = true", "hooks = false")
            ),
        ),
    ]
    wire, trust = client_hooks.wire, client_hooks.trust_codex_hooks
    print(f"\n{'client':<7} {'switch':<56} {'without':<8} with")
    try:
        for client, what, switch in switches:
            results = []
            for on in (False, True):

                def wired(name, project, on=on, switch=switch):
                    how = wire(name, project)
                    if on and name != "codex":
                        switch(project, None)
                    return how

                def trusted(env, project, home, on=on, switch=switch):
                    count = trust(env, project, home)
                    if on:
                        switch(project, home)
                    return count

                client_hooks.wire, client_hooks.trust_codex_hooks = wired, trusted
                result = client_hooks.scenario(client, "a", clients, gitdir, 300)
                results.append("PASS" if result.get("ok") else "FAIL")
            print(
                f"{client:<7} {what:<56} {results[0]:<8} {results[1]} (the lesson {'never arrives' if results == ['PASS', 'FAIL'] else '?'})"
            )
    finally:
        client_hooks.wire, client_hooks.trust_codex_hooks = wire, trust


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", required=True, type=Path)
    parser.add_argument("--hooks", metavar="GITDIR", help="also the clients' own switches for hooks (scenario a)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="sm-trust-"))
    try:
        project = scratch / "parent" / "app"
        project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        env0 = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "CODEX_", "GEMINI_"))}
        env0["HOME"] = str(scratch / "init-home")
        run(
            [
                sys.executable,
                str(ROOT / "server.py"),
                "--project",
                str(project),
                "init",
                "--no-rules",
                "--client",
                "claude",
                "--client",
                "codex",
                "--client",
                "gemini",
            ],
            env0,
            project,
        )
        bins = str(args.clients.resolve() / "node_modules" / ".bin")
        print(f"{'client':<7} {'the person did':<38} {'client says':<44} {'doctor':<6} agree")
        agreed = total = 0
        for client, did, write in cases(project):
            home = Path(tempfile.mkdtemp(prefix="home-", dir=scratch))
            env = {**env0, "HOME": str(home), "PATH": bins + os.pathsep + env0.get("PATH", "")}
            write(home, env)
            good, said = VERDICTS[client](env, project)
            ok, line = doctor_says(env, project, client)
            total += 1
            agreed += good == ok
            print(
                f"{client:<7} {did:<38} {said[:44]:<44} {'ok' if ok else 'warn':<6} {'yes' if good == ok else 'NO: ' + line}"
            )
        print(f"\n{agreed} of {total} cases agree")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if args.hooks:
        hooks_off(args.clients.resolve(), args.hooks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
