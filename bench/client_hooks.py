"""Do the product's hooks put the right lesson in front of the real clients' model, and ask once to log?

    .venv/bin/python bench/client_hooks.py GITDIR --clients DIR [--size 300] [--only claude,gemini,codex]
        [--scenarios a,b,c,d] [--show] [--probe]

DIR holds the clients installed from npm (`npm install @anthropic-ai/claude-code @google/gemini-cli
@openai/codex` in DIR). For each client and scenario: a scratch project (a git repository) whose
memory holds --size records built from GITDIR's history as bench/search_quality.py builds them,
wired with the product's own `server.py --project P init --client X` (the MCP entry and the
hooks); a scratch HOME; and a scripted stand-in for the client's model API on 127.0.0.1
(bench/standin.py) that never calls search_memory or log_memory on its own and logs every request
body whole. The client runs headless (`claude -p`, `gemini -p`, `codex exec`). The scenarios:
  a  a prompt naming a lesson's file: a lesson citing that file is in the model's first request
  b  an unrelated prompt (the first of UNRELATED_PROMPTS that no record's text is about, or
     --unrelated): no record of the memory in any request
  c  the model writes a file a lesson cites, unasked: the lesson reaches the model while the file
     is not yet written, and it appears once in the conversation
  d  the model writes a file no lesson cites and stops: it is asked once to log, its log_memory
     call lands in the memory file, and the next stop ends the session (--first-lesson: in a
     project `init` set up whose memory file does not exist yet; the call makes it)
--probe wires, instead of the product's hooks, a marker script by hand (each event's stdin saved,
the client's own output shapes answered) and prints what each hook received and what reached the
model: the harness's own check, usable before the product's hook exists.
Nothing is fetched; the clients' own network calls other than the stand-in fail.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import search_quality as sq  # noqa: E402  (puts the repository root on sys.path)
import standin  # noqa: E402
from standin import Item, items_anthropic, items_gemini, items_openai  # noqa: E402

WRITE_TOOLS = {"claude": "Write", "gemini": "write_file", "codex": "apply_patch"}
LOG_WORDS = "log_memory"
# How Codex comes to run the project's hooks: "review" (default) records their trust as the user's
# /hooks review does (each hook's current hash from `codex app-server` hooks/list, written to
# [hooks.state] in the scratch HOME's config.toml); "bypass" passes --dangerously-bypass-hook-trust;
# "none" does neither (Codex then skips them without a word).
CODEX_TRUST = os.environ.get("SM_CODEX_TRUST", "review")
TIMEOUT = int(os.environ.get("SM_CLIENT_TIMEOUT", "180"))


# ------------------------------------------------------------------------------------ the model


@dataclass
class Script:
    """What the stand-in model does: write `write` (path, text) once on its first turn (retrying
    while the file is not written, at most twice), call log_memory with `log` when a user turn
    asks for log_memory, otherwise answer a short text. It never searches on its own."""

    project: Path
    write: tuple[str, str] | None = None
    log: dict | None = None
    requests: list[dict] = field(default_factory=list)  # every request: path, body, written, tooled
    write_calls: int = 0
    log_calls: int = 0
    existed: bool = False  # the file to write was there at the start (Claude reads it first)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def written(self) -> bool:
        if not self.write:
            return False
        target = self.project / self.write[0]
        try:
            return target.read_text(encoding="utf-8").strip() == self.write[1].strip()
        except OSError:
            return False

    def decide(self, client: str, offered: list[str], items: list[Item]) -> tuple[str, dict | str | None]:
        """("text", None) or (tool name, arguments)."""
        with self.lock:
            if not offered or not any(i.role == "user" for i in items):
                return "text", None
            write_tool = next((t for t in offered if t == WRITE_TOOLS[client]), None)
            log_tool = next((t for t in offered if t.endswith(LOG_WORDS)), None)
            said = [i for i in items if i.role == "assistant"]
            if client == "claude" and self.write and self.existed and not said and "Read" in offered:
                return "Read", {"file_path": str(self.project / self.write[0])}
            if (
                said
                and said[-1].kind == "call"
                and said[-1].name == "Read"
                and items[-1].kind == "result"
                and (self.write_calls == 0)
            ):
                said = []  # the read was the preparation: now the first write
            # What came back since the model's last item: its write's result, and perhaps a note the
            # client added after it (Codex announces MCP tools that became ready: "<tools> Added ...").
            since = items[max((n for n, i in enumerate(items) if i.role == "assistant"), default=-1) + 1 :]
            if (
                self.write
                and write_tool
                and not self.written()
                and self.write_calls < 3
                and (
                    not said
                    or (
                        any(i.kind == "result" for i in since)
                        and said[-1].kind == "call"
                        and said[-1].name == write_tool
                    )
                )
            ):
                self.write_calls += 1
                return write_tool, self.write_args(client)
            # the user's words since the model's last call or text
            last = max((n for n, i in enumerate(items) if i.role == "assistant"), default=-1)
            fresh = " ".join(i.text for i in items[last + 1 :] if i.kind in ("text", "result"))
            if (
                self.log
                and log_tool
                and LOG_WORDS in fresh
                and self.log_calls < 2
                and not (said and said[-1].kind == "call" and said[-1].name == log_tool)
            ):
                self.log_calls += 1
                return log_tool, dict(self.log)
            return "text", None

    def write_args(self, client: str):
        path, text = self.write
        if client == "claude":
            return {"file_path": str(self.project / path), "content": text}
        if client == "gemini":
            return {"file_path": str(self.project / path), "content": text}
        body = "".join("+" + line + "\n" for line in text.splitlines())
        if self.existed:
            old = "".join("-" + line + "\n" for line in PLACEHOLDER.splitlines())
            return f"*** Begin Patch\n*** Update File: {path}\n@@\n{old}{body}*** End Patch\n"
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"


class StandIn(standin.StandIn):
    """The stand-in model API run by a Script; each request kept with whether the file was written."""

    deferred = LOG_WORDS

    def __init__(self, script: Script, log: Path) -> None:
        self.script = script
        super().__init__(log, script.requests)

    def entry(self, path: str, body: dict) -> dict:
        return {"path": path, "written": self.script.written(), "body": body}

    def call(self, client: str, offered: list[str], items: list[Item]) -> standin.Call:
        name, args = self.script.decide(client, offered, items)
        return None if name == "text" else (name, args)

    def openai_item(self, body: dict) -> dict:
        item = super().openai_item(body)
        if item["type"] == "tool_search_call":  # the model looks for log_memory first: not a call yet
            with self.script.lock:
                self.script.log_calls -= 1
        return item


# ------------------------------------------------------------------------------ running a client

PROBE_HOOK = r'''#!/usr/bin/env python3
"""The harness's marker hook: saves its stdin, answers in the client's own shape."""
import json, os, sys, time
client, event = sys.argv[1], sys.argv[2]
raw = sys.stdin.read()
state = os.environ.get("SM_PROBE_STATE") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe-state")
os.makedirs(state, exist_ok=True)
with open(os.path.join(state, "inputs.jsonl"), "a") as out:
    out.write(json.dumps({"client": client, "event": event, "at": time.time(), "stdin": raw}) + "\n")
once = os.path.join(state, event + ".done")
first = not os.path.exists(once)
open(once, "a").close()
if event in ("UserPromptSubmit", "BeforeAgent"):
    text = "MARKER-PROMPT: a lesson the hook added before the prompt."
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}))
elif event in ("PreToolUse", "BeforeTool"):
    if first:
        reason = "MARKER-WRITE: a lesson about this file; retry the write if it still holds."
        if client == "gemini":
            print(json.dumps({"decision": "deny", "reason": reason}))
        else:
            print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                                     "permissionDecisionReason": reason}}))
elif event in ("Stop", "AfterAgent"):
    if first:
        reason = "MARKER-STOP: call log_memory with what you learned, or say there was nothing."
        print(json.dumps({"decision": "deny" if client == "gemini" else "block", "reason": reason}))
'''


def probe_hooks(client: str, project: Path, script: Path) -> None:
    """Wire the marker hook by hand into the client's project config, beside init's MCP entry."""
    run = f"{sys.executable} {script} {client}"
    if client == "claude":
        path = project / ".claude" / "settings.json"
        hooks = {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{run} UserPromptSubmit"}]}],
            "PreToolUse": [
                {"matcher": "Write|Edit|MultiEdit", "hooks": [{"type": "command", "command": f"{run} PreToolUse"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": f"{run} Stop"}]}],
        }
    elif client == "gemini":
        path = project / ".gemini" / "settings.json"
        hooks = {
            "BeforeAgent": [{"hooks": [{"type": "command", "command": f"{run} BeforeAgent", "timeout": 5000}]}],
            "BeforeTool": [
                {
                    "matcher": "write_file|replace",
                    "hooks": [{"type": "command", "command": f"{run} BeforeTool", "timeout": 5000}],
                }
            ],
            "AfterAgent": [{"hooks": [{"type": "command", "command": f"{run} AfterAgent", "timeout": 5000}]}],
        }
    else:
        path = project / ".codex" / "hooks.json"
        hooks = {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"{run} UserPromptSubmit"}]}],
            "PreToolUse": [{"matcher": "apply_patch", "hooks": [{"type": "command", "command": f"{run} PreToolUse"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": f"{run} Stop"}]}],
        }
    path.parent.mkdir(exist_ok=True)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    data["hooks"] = hooks
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def client_env(name: str, scratch: Path, clients: Path, port: int, project: Path) -> tuple[dict, Path]:
    source = Path(os.environ.get("SM_PRODUCT", str(ROOT)))
    launcher = ""
    if os.environ.get("SM_HOOK_LOG"):  # keep each hook event's stdin and answer (diagnostics)
        log = scratch / "hook-io.log"
        launcher = (
            f'#!/bin/sh\nif [ "$1" = hook ]; then in=$(cat); t0=$(date +%s%N); out=$(printf %s "$in" | '
            f'"{sys.executable}" "{source / "server.py"}" "$@"); rc=$?; t1=$(date +%s%N); '
            f'printf "IN %s\\nOUT %s\\nMS %s\\n" "$in" "$out" $(( (t1 - t0) / 1000000 )) >> "{log}"; '
            f'printf "%s\\n" "$out" | sed "/^$/d"; exit $rc; fi\n'
            f'exec "{sys.executable}" "{source / "server.py"}" "$@"\n'
        )
    env, home = standin.scratch_env(
        scratch, clients, source / "server.py", launcher, drop=(*standin.DROP, "CLAUDE", "CODEX")
    )
    env.update(
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
    )
    if os.environ.get("SM_HOOK_TIME"):  # the hook's own time bound, passed through the client
        env["SENTINEL_MEMORY_HOOK_TIME"] = os.environ["SM_HOOK_TIME"]
    fake_key = standin.scratch_key()
    base = f"http://127.0.0.1:{port}"
    if name == "claude":
        env.update(
            standin.claude_env(base, fake_key),
            DISABLE_AUTOUPDATER="1",
            # wait for the MCP server however loaded the machine is (it took 6.8 s to answer
            # initialize at load 16 on 2 cores; Claude Code then went on without its tools)
            MCP_CONNECTION_NONBLOCKING="false",
            MCP_TIMEOUT="60000",
            MCP_CONNECT_TIMEOUT_MS="60000",
        )
    elif name == "gemini":
        env.update(GEMINI_API_KEY=fake_key, GOOGLE_GEMINI_BASE_URL=base)
        (home / ".gemini").mkdir(exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(
            json.dumps(
                {
                    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
                    "telemetry": {"enabled": False},
                    "privacy": {"usageStatisticsEnabled": False},
                }
            ),
            encoding="utf-8",
        )
        # the user's step for a trusted folder, as `gemini` asks it the first time
        if not os.environ.get("SM_GEMINI_UNTRUSTED"):
            (home / ".gemini" / "trustedFolders.json").write_text(
                json.dumps({str(project): "TRUST_FOLDER"}), encoding="utf-8"
            )
    else:
        standin.codex_config(
            home,
            base,
            project,
            settings='approval_policy = "never"\nsandbox_mode = "danger-full-access"\n',
            features="hooks = true\n",
        )
        env.update(STANDIN_KEY=fake_key)
    return env, home


def argv_for(name: str, prompt: str) -> list[str]:
    if name == "claude":
        return [
            "claude",
            "-p",
            prompt,
            "--permission-mode",
            "acceptEdits",
            "--allowedTools",
            "Write,Edit,mcp__sentinel-memory",
        ]
    if name == "gemini":
        return ["gemini", "-p", prompt, "--approval-mode", "yolo"]
    bypass = ["--dangerously-bypass-hook-trust"] if CODEX_TRUST == "bypass" else []
    return ["codex", "exec", "--skip-git-repo-check", *bypass, prompt]


def trust_codex_hooks(env: dict, project: Path, home: Path) -> int:
    """Trust the project's hooks as /hooks does; the number trusted."""
    hooks = [h for h in codex_hooks(env, project) if h.get("source") == "project"]
    with open(home / ".codex" / "config.toml", "a", encoding="utf-8") as config:
        for h in hooks:
            config.write(f"\n[hooks.state.{json.dumps(h['key'])}]\ntrusted_hash = {json.dumps(h['currentHash'])}\n")
    return len(hooks)


def codex_hooks(env: dict, project: Path) -> list[dict]:
    """The hooks Codex sees for the project, as `codex app-server`'s hooks/list gives them (key,
    source, currentHash, trustStatus, ...)."""
    app = subprocess.Popen(
        ["codex", "app-server"],
        cwd=project,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:

        def ask(number: int, method: str, params: dict) -> dict:
            app.stdin.write((json.dumps({"id": number, "method": method, "params": params}) + "\n").encode())
            app.stdin.flush()
            while True:
                line = app.stdout.readline()
                if not line:
                    raise RuntimeError(f"codex app-server ended before answering {method}")
                message = json.loads(line)
                if message.get("id") == number:
                    return message.get("result") or {}

        ask(1, "initialize", {"clientInfo": {"name": "bench", "version": "1"}})
        app.stdin.write(b'{"method": "initialized"}\n')
        listed = ask(2, "hooks/list", {"cwds": [str(project)]})
    finally:
        app.kill()
        app.wait()
    return [h for entry in listed.get("data", []) for h in entry.get("hooks", [])]


def run_once(
    name: str, clients: Path, project: Path, scratch: Path, script: Script, prompt: str, probe: bool = False
) -> dict:
    log = scratch / "requests.jsonl"
    stand = StandIn(script, log)
    try:
        env, home = client_env(name, scratch, clients, stand.port, project)
        if probe:
            hook = scratch / "probe_hook.py"
            hook.write_text(PROBE_HOOK, encoding="utf-8")
            env["SM_PROBE_STATE"] = str(scratch / "probe-state")
            probe_hooks(name, project, hook)
        if name == "codex" and CODEX_TRUST == "review":
            trust_codex_hooks(env, project, home)
        start = time.monotonic()
        try:
            done = subprocess.run(
                argv_for(name, prompt),
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                stdin=subprocess.DEVNULL,
            )
            rc, out = done.returncode, (done.stdout + "\n" + done.stderr).strip()
        except subprocess.TimeoutExpired as gone:
            rc, out = None, f"(timed out after {TIMEOUT} s) " + str(gone.stdout or "")[-300:]
        return {"rc": rc, "out": out, "seconds": time.monotonic() - start, "home": home}
    finally:
        stand.close()


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)


def new_project(scratch: Path) -> Path:
    project = scratch / "app"
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    git(project, "config", "user.email", "bench@example.invalid")
    git(project, "config", "user.name", "bench")
    (project / "README.md").write_text("# app\n", encoding="utf-8")
    return project


def probe(name: str, clients: Path, keep: bool) -> None:
    scratch = Path(tempfile.mkdtemp(prefix=f"sm-probe-{name}-"))
    try:
        project = new_project(scratch)
        init = subprocess.run(
            [sys.executable, str(ROOT / "server.py"), "--project", str(project), "init", "--client", name],
            capture_output=True,
            text=True,
        )
        git(project, "add", "-A")
        git(project, "commit", "-qm", "start")
        script = Script(
            project,
            write=("src/probe.txt", "probe line"),
            log={"topic": "probe", "missing_context": "The probe needed nothing.", "lesson": "The probe ran once."},
        )
        result = run_once(name, clients, project, scratch, script, "Write src/probe.txt, then stop.", probe=True)
        print(f"=== {name}: rc {result['rc']} in {result['seconds']:.1f} s; init rc {init.returncode}")
        print("client said:", result["out"][-int(os.environ.get("SM_TAIL", "600")) :])
        inputs = scratch / "probe-state" / "inputs.jsonl"
        for line in inputs.read_text().splitlines() if inputs.exists() else ["(no hook ran)"]:
            print("HOOK STDIN:", line[:1500])
        for n, req in enumerate(script.requests):
            text = json.dumps(req["body"], ensure_ascii=False)
            marks = sorted(set(re.findall(r"MARKER-[A-Z]+", text)))
            print(f"request {n} {req['path']} written={req['written']} markers={marks} bytes={len(text)}")
        print("file written:", script.written(), " write calls:", script.write_calls, " log calls:", script.log_calls)
        if keep:
            print("kept:", scratch)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


# ------------------------------------------------------------------------------------ scenarios

STOP_HEAD = "Sentinel-Memory: files of this project changed during this session"
# Scenario b's prompt: the first of these that is unrelated to the memory (unrelated_prompt), unless
# --unrelated names one. The first names words (setting, local, storage) that some projects' file
# paths hold: that is where a false match once came from, so the paths are not looked at.
UNRELATED_PROMPTS = (
    "Add a dark-mode toggle to the settings page and remember the choice in local storage.",
    "Add a CSV export of the monthly invoices to the billing dashboard.",
    "Translate the onboarding emails into Portuguese and send them once a week.",
    "Draw a bar chart of quarterly sales per region on the admin page.",
)
UNRELATED: str | None = None  # --unrelated
_FUNCTION_WORDS = frozenset("with from into that this them they their then once".split())
NEW_FILE = "notes/e2e_change.txt"
MENTION = False  # --mention
FIRST = False  # --first-lesson
LOGGED = {
    "topic": "e2e-bench",
    "missing_context": "The task did not say where the change notes live.",
    "lesson": "Change notes for the end-to-end bench go in notes/e2e_change.txt.",
    "ask_next_time": "",
    "files": [NEW_FILE],
}


# Gemini CLI's own Build File Protection (0.61, packages/core/src/utils/buildFileUtils.ts): headless,
# it refuses every write of these, whatever the hooks said; interactive, it asks the user. Scenario c
# is about our hooks, so its file is none of them (typer's scripts/docker/Dockerfile, zipgo's
# frontend/Dockerfile.dev had failed in Gemini CLI alone for this reason).
GEMINI_BUILD_FILES = frozenset(
    """BUILD BUILD.bazel WORKSPACE WORKSPACE.bazel MODULE.bazel .bazelrc .blazerc Makefile makefile
    GNUmakefile CMakeLists.txt package.json package-lock.json pnpm-lock.yaml yarn.lock bun.lockb setup.py
    setup.cfg pyproject.toml go.mod go.sum Cargo.toml Cargo.lock pom.xml build.gradle build.gradle.kts
    settings.gradle settings.gradle.kts Dockerfile Containerfile""".split()
)


def guarded_by_gemini(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name in GEMINI_BUILD_FILES
        or name.startswith(("Dockerfile.", "Containerfile."))
        or name.lower().endswith((".bzl", ".bazel", ".bzlmod", ".mk", ".cmake"))
    )


def memory_for(gitdir: str, size: int) -> tuple[list, dict]:
    """The memory's entries (size commits before the newest) and the task: a later commit whose
    file a record of the memory cites (that file, the records citing it, the task's subject). Not
    a file more than a fifth of the records cite, nor a project file (go.mod, README.md): those are
    weak evidence by design (contract §4.2), which scenario a is not about (viper's
    .github/workflows/ci.yaml, cited by 63 of 300; its remote/go.mod); nor a file of installed
    dependencies (DEPENDENCY_PATH: hang-log's .pnp.cjs, which Claude Code refuses to write headless
    as "a sensitive file"); nor a file Gemini CLI refuses to write by its own policy
    (GEMINI_BUILD_FILES)."""
    from sentinel_memory.search.match import PROJECT_FILE
    from sentinel_memory.search.terms import DEPENDENCY_PATH

    gitdir, _, revision = gitdir.partition("@")  # GITDIR@--all: every branch, as search_quality.py reads it
    commits = sq.history(gitdir, revision or "HEAD")
    common = sq.common_files(commits)
    end = len(commits) - 50
    window = commits[max(0, end - size) : end]  # a short history: all it has before the last 50
    entries = [sq.record_of(c, common) for c in window]
    by_file: dict[str, list[str]] = {}
    for e in entries:  # the files each record cites (a commit of many files cites its first ten)
        for f in e.record["files"]:
            if f not in common and not sq._TEST.search(f):
                by_file.setdefault(f, []).append(e.id)
    by_file = {
        f: ids
        for f, ids in by_file.items()
        if len(ids) <= size / 5
        and not PROJECT_FILE.search(f)
        and not DEPENDENCY_PATH.search(f)
        and not guarded_by_gemini(f)
    } or by_file
    for c in commits[end:]:
        for f in c["files"]:
            if f in by_file and "/" in f:
                return entries, {"file": f, "ids": by_file[f], "subject": c["subject"]}
    f = max(by_file, key=lambda k: len(by_file[k]))
    return entries, {"file": f, "ids": by_file[f], "subject": commits[-1]["subject"]}


PLACEHOLDER = "placeholder line\n"


def materialize(project: Path, entries: list) -> int:
    """The files the memory cites, as small placeholders, as a checkout of the project would have
    them (the hook counts a path the prompt names only when the file exists); the number made."""
    made = 0
    for entry in entries:
        for name in entry.record.get("files", []):
            parts = name.split("/")
            if name.startswith("/") or ".." in parts or parts[0] in (".git", ".context") or len(name) > 300:
                continue
            target = project / name
            if target.exists() or made >= 3000:
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(PLACEHOLDER, encoding="utf-8")
                made += 1
            except OSError:  # a path that is a folder elsewhere in the history
                continue
    return made


def wire(name: str, project: Path) -> str:
    """The product's own init for the client; 'init' when it wrote our hooks, else the product's
    hook definitions merged by hand ('by hand': init at this commit writes no hooks)."""
    from sentinel_memory.setup import hookconfig

    init = subprocess.run(
        [
            sys.executable,
            str(Path(os.environ.get("SM_PRODUCT", str(ROOT))) / "server.py"),
            "--project",
            str(project),
            "init",
            "--client",
            name,
        ],
        capture_output=True,
        text=True,
    )
    if init.returncode:
        raise RuntimeError(f"init failed: {(init.stdout + init.stderr).strip()[-300:]}")
    path = (
        project
        / {"claude": ".claude/settings.json", "gemini": ".gemini/settings.json", "codex": ".codex/hooks.json"}[name]
    )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    groups = [g for v in (data.get("hooks") or {}).values() if isinstance(v, list) for g in v]
    if any(hookconfig.is_ours(g) for g in groups):
        return "init"
    data.setdefault("hooks", {}).update(hookconfig.definitions("sentinel-memory", name))
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return "by hand"


def ids_in(text: str, ids: set[str]) -> list[str]:
    return sorted(set(re.findall(r"\b[0-9a-f]{16}\b", text)) & ids)


def received(name: str, req: dict, head: str) -> str:
    """The text the model got that holds `head` (a message part or a tool result), from `head` on."""
    items = {"claude": items_anthropic, "gemini": items_gemini, "codex": items_openai}[name](req["body"])
    for item in items:
        if head in item.text:
            at = item.text.find(head)
            before = item.text[max(0, at - 90) : at]  # the client's own wrapping, where it adds one
            return (before[before.rfind("\n") + 1 :] if "\n" in before else before) + item.text[at:].strip()
    return ""


def request_text(req: dict) -> str:
    """Every string of a request body, JSON escapes undone."""
    return standin.text_of(req["body"])


def scenario(name: str, which: str, clients: Path, gitdir: str, size: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix=f"sm-hooks-{name}-{which}-"))
    try:
        project = new_project(scratch)
        entries, task = memory_for(gitdir, size)
        sq.write_memory(project, entries)
        materialize(project, entries)
        if FIRST and which == "d":  # a project set up whose first lesson is yet to come
            sq.memory_path(project).unlink()
        how = wire(name, project)
        git(project, "add", "-A")
        git(project, "commit", "-qm", "start")
        all_ids = {e.id for e in entries}
        target = set(task["ids"])
        if which == "a":
            mention = "@" if MENTION else ""  # --mention: the file as the clients insert it
            prompt = f"{task['subject']}: the change is in {mention}{task['file']}."
            script = Script(project)
        elif which == "b":
            prompt, script = UNRELATED or unrelated_prompt(entries), Script(project)
        elif which == "c":
            prompt = "Tidy up the project a little."
            script = Script(project, write=(task["file"], "# changed by the end-to-end bench\n"))
        else:
            prompt = "Start the change notes for this release."
            script = Script(project, write=(NEW_FILE, "Change notes: started.\n"), log=dict(LOGGED))
        script.existed = bool(script.write) and (project / script.write[0]).is_file()
        result = run_once(name, clients, project, scratch, script, prompt)
        reqs = [r for r in script.requests if _offers_tools(r["body"])]
        texts = [request_text(r) for r in reqs]
        out = {
            "client": name,
            "scenario": which,
            "wired": how,
            "rc": result["rc"],
            "seconds": result["seconds"],
            "requests": len(reqs),
            "prompt": prompt,
            "file": task["file"],
        }
        if not reqs:
            out.update(ok=False, why=f"no request reached the model; client said {result['out'][-300:]!r}")
            return out
        if which == "a":
            got = ids_in(texts[0], all_ids)
            hit = sorted(set(got) & target)
            out.update(
                ok=bool(hit),
                why=f"first request: {len(got)} records, {len(hit)} citing {task['file']}",
                example=received(name, reqs[0], "Sentinel-Memory: lessons"),
            )
        elif which == "b":
            got = sorted({i for t in texts for i in ids_in(t, all_ids)})
            out.update(
                ok=not got,
                why=f"records in any request: {len(got)} (prompt: {prompt[:48]!r})",
                example=received(name, reqs[0], "Sentinel-Memory: lessons") or "(nothing injected)",
            )
        elif which == "c":
            before = [i for r, t in zip(reqs, texts, strict=True) if not r["written"] for i in ids_in(t, target)]
            last = texts[-1]
            times = last.count("Sentinel-Memory: this project's memory has lessons about")
            out.update(
                ok=bool(before) and times == 1 and script.written(),
                why=f"citing records seen before the write: {len(set(before))}; lesson block in the last "
                f"request {times}x; file written in the end: {script.written()}; write calls "
                f"{script.write_calls}",
                example=received(name, reqs[-1], "Sentinel-Memory: this project's memory"),
            )
        else:
            asked = texts[-1].count(STOP_HEAD)
            memory = sq.memory_path(project).read_text(encoding="utf-8")
            landed = LOGGED["lesson"] in memory
            ended = result["rc"] == 0
            out.update(
                ok=asked == 1 and landed and ended and script.log_calls == 1,
                why=f"asked {asked}x; log_memory calls {script.log_calls}; landed in the memory: {landed}; "
                f"session ended rc {result['rc']} after {len(reqs)} model requests",
                example=received(name, reqs[-1], STOP_HEAD),
            )
        return out
    except Exception as exc:  # a harness failure is reported, not raised: the other cells still run
        return {"client": name, "scenario": which, "ok": False, "why": f"{type(exc).__name__}: {exc}"}
    finally:
        if not os.environ.get("SM_KEEP"):
            shutil.rmtree(scratch, ignore_errors=True)


def unrelated_prompt(entries: list) -> str:
    """The first of UNRELATED_PROMPTS that no record is about: no record's text (its topic and
    text fields, not its paths) holds two of its words of four letters or more. The bench's own
    plain test, not the product's measure: a prompt on the subject of a lesson (httpx's memory holds
    "Add dark mode toggle for documentation") is no unrelated prompt for that memory."""

    def words(text: str) -> set[str]:
        found = {w.rstrip("s") for w in re.findall(r"[a-z]{4,}", text.casefold())}
        return found - _FUNCTION_WORDS

    texts = [
        words(" ".join(str(e.record.get(k) or "") for k in ("topic", "missing_context", "lesson", "ask_next_time")))
        for e in entries
    ]
    for prompt in UNRELATED_PROMPTS:
        mine = words(prompt)
        if not any(len(mine & held) >= 2 for held in texts):
            return prompt
    return UNRELATED_PROMPTS[-1]


def _offers_tools(body: dict) -> bool:
    tools = body.get("tools")
    if not tools:
        return False
    if isinstance(tools, list) and tools and isinstance(tools[0], dict) and "functionDeclarations" in tools[0]:
        return any(t.get("functionDeclarations") for t in tools)
    return True


def main() -> None:
    global MENTION, UNRELATED, FIRST
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdir", nargs="?")
    parser.add_argument("--clients", required=True, type=Path)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--only", default="claude,gemini,codex")
    parser.add_argument("--scenarios", default="a,b,c,d")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    parser.add_argument("--show", action="store_true", help="print what the model received in each event")
    parser.add_argument(
        "--mention", action="store_true", help="scenario a names the file as @path, as clients insert it"
    )
    parser.add_argument(
        "--unrelated",
        help="scenario b's prompt (default: the first of UNRELATED_PROMPTS that no record is about)",
    )
    parser.add_argument(
        "--first-lesson", action="store_true", help="scenario d in a project whose memory file does not exist yet"
    )
    args = parser.parse_args()
    if args.probe:
        for name in args.only.split(","):
            probe(name, args.clients.resolve(), args.keep)
        return
    if not args.gitdir:
        parser.error("GITDIR is needed (a git directory whose history makes the memory)")
    MENTION, UNRELATED, FIRST = args.mention, args.unrelated, args.first_lesson
    started = time.monotonic()
    names = args.only.split(",")
    cells = {}
    for which in args.scenarios.split(","):
        for name in names:
            cell = scenario(name, which, args.clients.resolve(), args.gitdir, args.size)
            cells[(which, name)] = cell
            print(
                f"{which} {name:<7} {'PASS' if cell.get('ok') else 'FAIL'} ({cell.get('wired', '?')}, "
                f"{cell.get('seconds', 0):.1f} s): {cell.get('why')}",
                flush=True,
            )
            if args.show and cell.get("example"):
                print("    model received:\n    " + cell["example"].replace("\n", "\n    "), flush=True)
    titles = {
        "a": "prompt names a lesson's file",
        "b": "unrelated prompt: nothing",
        "c": "unasked write: lesson first, once",
        "d": "stop: asked once, logged, ends",
    }
    print()
    print(f"{'scenario':<40}" + "".join(f"{n:>10}" for n in names))
    for which in args.scenarios.split(","):
        print(
            f"{which + ' ' + titles[which]:<40}"
            + "".join(f"{('PASS' if cells[(which, n)].get('ok') else 'FAIL'):>10}" for n in names)
        )
    print(
        f"\n{len(cells)} runs in {time.monotonic() - started:.0f} s; memory of {args.size} records from {args.gitdir}"
    )


if __name__ == "__main__":
    main()
