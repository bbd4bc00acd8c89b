"""After the real client compacts its conversation, does the hook show a lesson it showed before once more?

    .venv/bin/python bench/client_compaction_hooks.py [--clients DIR] [--only claude,codex] [--keep]
    SM_PRODUCT=<another checkout> .venv/bin/python bench/client_compaction_hooks.py   # its hooks instead

DIR (default /work/clients) holds the clients installed from npm (`npm install
@anthropic-ai/claude-code @openai/codex` in DIR). For each client: a scratch project (a git
repository, src/auth.py in it) set up with the product's own `server.py --project P init --client
X` (SM_PRODUCT: the checkout whose server.py init and the hooks run, as bench/client_hooks.py has
it) and one lesson citing src/auth.py whose text holds MARKER; a scratch HOME; and a stand-in for
the model's API on 127.0.0.1 (bench/standin.py, subclassed here) that answers a request asking for
a summary of the conversation with SUMMARY, reports the input tokens it is told to, may call a
harmless shell tool once, and logs every request body whole. Headless:
  claude  `claude -p "Fix the bug in src/auth.py"`; `claude --resume SID -p "/compact"`;
          `claude --resume SID -p "Fix the bug in src/auth.py once more"`
  codex   the project's hooks trusted as /hooks records them (bench/client_hooks.py), config
          `model_auto_compact_token_limit = 20000`; `codex exec "Fix the bug in src/auth.py"` with
          the stand-in reporting 100,000 input tokens and calling `cat README.md` once, so the turn
          makes a second request, before which Codex compacts on its own; then, the stand-in
          reporting 100 tokens, `codex exec resume SID "Fix the bug in src/auth.py once more"`
Prints, per client and run, the model requests with the number of times MARKER is in each (S: the
request asked for a summary; T: it offers tools), then a table: the marker in the session's first
request, whether the conversation was compacted (a summary asked for, and SUMMARY in the last
request), and the marker in the last request. With the hook forgetting what it showed at a
compaction (Claude Code's SessionStart "compact", Codex's PostCompact), the last is 1; with a hook
that shows a lesson once per session whatever happens, 0. Asserts nothing; nothing is fetched (the
clients' own network calls other than the stand-in fail). SM_HOOK_TIME: the hook's time bound in
seconds (default here 10, so that a loaded machine does not decide the figure); SM_KEEP or --keep
keeps the scratch folders.
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
import uuid
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import client_hooks as ch  # noqa: E402
import standin  # noqa: E402

MARKER = "LESSON-MARK-7Q"
LESSON = f"{MARKER}: hash the session token with hmac before comparing it"
FILE = "src/auth.py"
FIRST_PROMPT = f"Fix the bug in {FILE}"
AGAIN_PROMPT = f"Fix the bug in {FILE} once more"
SUMMARY = "SUMMARY-FROM-STANDIN: the user asked for a fix in the token check; the assistant answered Done."
AUTO_COMPACT_LIMIT = 20000
HIGH_TOKENS, LOW_TOKENS = 100000, 100
TIMEOUT = int(os.environ.get("SM_CLIENT_TIMEOUT", "180"))
# What the clients say when they ask for a summary of the conversation (Claude Code's /compact,
# Codex's compaction "context checkpoint").
SUMMARY_ASK = re.compile(
    r"detailed summary|summary of the conversation|summari[sz]e (?:the|this) conversation|context checkpoint"
    r"|handoff summary|create a summary|your summary",
    re.I,
)


def last_user_text(body: dict) -> str:
    """The whole last user message of a Messages or Responses request."""
    if "messages" in body:
        said = [m for m in body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        return standin.text_of(said[-1].get("content")) if said else ""
    said = [
        m
        for m in body.get("input", [])
        if isinstance(m, dict) and m.get("type") == "message" and m.get("role") == "user"
    ]
    return standin.text_of(said[-1].get("content")) if said else ""


def asks_summary(body: dict) -> bool:
    return bool(SUMMARY_ASK.search(last_user_text(body)))


def is_model_request(path: str) -> bool:
    return path.startswith("/v1/responses") or (
        path.startswith("/v1/messages") and not path.startswith("/v1/messages/count_tokens")
    )


class CompactingStandIn(standin.StandIn):
    """The model: a summary when asked for one, else "Done." (Codex: a `cat README.md` call first,
    once, while `tool_first`); every answer reports `tokens` input tokens, 100 once a summary was
    given (as after a real compaction). set() starts a new phase: the tool call and the summary
    are counted again from it."""

    _swap = threading.Lock()  # standin.TEXT is swapped for the summary while an answer is written

    def __init__(self, log: Path) -> None:
        self.tokens, self.tool_first, self.tools, self.summarized = LOW_TOKENS, False, 0, False
        super().__init__(log)

    def set(self, tokens: int, tool_first: bool = False) -> None:
        with self.lock:
            self.tokens, self.tool_first, self.tools, self.summarized = tokens, tool_first, 0, False

    def entry(self, path: str, body: dict) -> dict:
        return {"path": path, "summary": asks_summary(body), "body": body}

    def answer(self, path: str, body: dict) -> tuple[bytes, str]:
        if not is_model_request(path):
            return super().answer(path, body)
        summary = asks_summary(body)
        with self.lock:
            tokens = LOW_TOKENS if self.summarized else self.tokens
            self.summarized = self.summarized or summary
            call = self.tool_first and not self.tools and not summary
        if path.startswith("/v1/messages"):
            with self._swap:
                saved = standin.TEXT
                if summary:
                    standin.TEXT = f"<analysis>a</analysis>\n<summary>{SUMMARY}</summary>"
                try:
                    data, kind = standin.anthropic_reply(body, None)
                finally:
                    standin.TEXT = saved
            for usage in (b'"input_tokens": 10,', b'"input_tokens": 1,'):
                data = data.replace(usage, b'"input_tokens": %d,' % tokens)
            return data, kind
        if summary:
            item = {
                "type": "message",
                "role": "assistant",
                "id": "msg_" + uuid.uuid4().hex[:8],
                "content": [{"type": "output_text", "text": SUMMARY, "annotations": []}],
            }
        else:
            inputs = [i for i in body.get("input", []) if isinstance(i, dict)]
            offered, _, _ = standin.openai_tools(body)
            shell = next((t for t in ("exec_command", "shell") if t in offered), None)
            tool: standin.Call = None
            if call and shell and inputs and inputs[-1].get("type") == "message":
                cat = {"cmd": "cat README.md"} if shell == "exec_command" else {"command": ["cat", "README.md"]}
                tool = (shell, cat)
                with self.lock:
                    self.tools += 1
            item = standin.openai_turn(tool, {}, set())
        data, kind = standin.openai_reply(item)
        data = data.replace(b'"input_tokens": 10,', b'"input_tokens": %d,' % tokens)
        return data.replace(b'"total_tokens": 15', b'"total_tokens": %d' % (tokens + 5)), kind


# ------------------------------------------------------------------------------ a client's runs


def product() -> Path:
    return Path(os.environ.get("SM_PRODUCT", str(ROOT)))


def new_project(scratch: Path, client: str) -> tuple[Path, str]:
    """The project, set up with the product's init for the client, one lesson citing FILE, committed."""
    project = ch.new_project(scratch)
    (project / "src").mkdir()
    (project / FILE).write_text("def verify_token(token):\n    return token\n", encoding="utf-8")
    how = ch.wire(client, project)
    logged = subprocess.run(
        [sys.executable, str(product() / "server.py"), "--project", str(project), "log", "--topic", "auth"]
        + ["--missing-context", "the token check was not described", "--lesson", LESSON, "--file", FILE],
        capture_output=True,
        text=True,
    )
    if logged.returncode:
        raise RuntimeError(f"log failed: {(logged.stdout + logged.stderr).strip()[-300:]}")
    ch.git(project, "add", "-A")
    ch.git(project, "commit", "-qm", "start")
    return project, how


def run(argv: list[str], project: Path, env: dict) -> tuple[int | None, str]:
    try:
        done = subprocess.run(
            argv, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
        )
        return done.returncode, done.stdout + "\n" + done.stderr
    except subprocess.TimeoutExpired as gone:
        said = gone.stdout.decode(errors="replace") if isinstance(gone.stdout, bytes) else gone.stdout or ""
        return None, f"(timed out after {TIMEOUT} s) {said}"


def claude_session(out: str) -> str:
    for line in out.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("session_id"):
            return str(data["session_id"])
    return ""


def codex_thread(out: str) -> str:
    for line in out.splitlines():
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("type") == "thread.started":
            return str(data.get("thread_id") or "")
    return ""


def session(client: str, clients: Path) -> dict:
    """The client's runs; per run its label, rc, seconds and model requests (path, summary, body)."""
    scratch = Path(tempfile.mkdtemp(prefix=f"sm-compaction-hooks-{client}-"))
    stand = CompactingStandIn(scratch / "requests.jsonl")
    out: dict = {"client": client, "runs": [], "scratch": scratch}
    try:
        project, out["wired"] = new_project(scratch, client)
        env, home = ch.client_env(client, scratch, clients, stand.port, project)
        env["SENTINEL_MEMORY_HOOK_TIME"] = os.environ.get("SM_HOOK_TIME", "10")
        env["TMPDIR"] = str(scratch / "tmp")  # the clients' own temporary files go with the scratch folder
        (scratch / "tmp").mkdir()
        settings = project / (".claude/settings.json" if client == "claude" else ".codex/hooks.json")
        events = json.loads(settings.read_text(encoding="utf-8")).get("hooks", {})
        out["compaction_hook"] = "SessionStart" in events if client == "claude" else "PostCompact" in events
        if client == "claude":
            head, resume = ["claude", "--output-format", "json"], ["--resume", "{sid}", "-p"]
            steps = [
                (f'-p "{FIRST_PROMPT}"', LOW_TOKENS, False, [*head, "-p", FIRST_PROMPT]),
                ('--resume SID -p "/compact"', LOW_TOKENS, False, [*head, *resume, "/compact"]),
                (f'--resume SID -p "{AGAIN_PROMPT}"', LOW_TOKENS, False, [*head, *resume, AGAIN_PROMPT]),
            ]
        else:
            config = home / ".codex" / "config.toml"  # a top-level key: before the file's first table
            config.write_text(
                f"model_auto_compact_token_limit = {AUTO_COMPACT_LIMIT}\n" + config.read_text(encoding="utf-8"),
                encoding="utf-8",
            )
            out["trusted"] = ch.trust_codex_hooks(env, project, home)
            head = ["codex", "exec", "--skip-git-repo-check", "--json"]
            steps = [
                (f'exec "{FIRST_PROMPT}" (100k tokens, a tool call)', HIGH_TOKENS, True, [*head, FIRST_PROMPT]),
                (f'exec resume SID "{AGAIN_PROMPT}"', LOW_TOKENS, False, [*head, "resume", "{sid}", AGAIN_PROMPT]),
            ]
        sid = ""
        for label, tokens, tool_first, argv in steps:
            stand.set(tokens, tool_first)
            seen = len(stand.requests)
            started = time.monotonic()
            rc, said = run([a.replace("{sid}", sid) for a in argv], project, env)
            sid = sid or (claude_session(said) if client == "claude" else codex_thread(said))
            reqs = [r for r in stand.requests[seen:] if is_model_request(r["path"])]
            out["runs"].append(
                {"label": label, "rc": rc, "seconds": time.monotonic() - started, "requests": reqs, "said": said}
            )
            if not sid:
                out["error"] = f"no session id after {label!r}: {said.strip()[-300:]!r}"
                break
        return out
    except Exception as exc:  # a harness failure is reported, not raised: the other client still runs
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    finally:
        stand.close()


# ------------------------------------------------------------------------------------ the report


def marks(req: dict) -> int:
    return standin.text_of(req["body"]).count(MARKER)


def offers_tools(req: dict) -> bool:
    return bool(req["body"].get("tools"))


def figures(result: dict) -> dict:
    """The marker in the session's first request and in its last, whether it was compacted."""
    runs = result["runs"]
    conversation = [[r for r in run["requests"] if offers_tools(r) and not r["summary"]] for run in runs]
    first = conversation[0][0] if runs and conversation[0] else None
    last = conversation[-1][-1] if len(runs) > 1 and conversation[-1] else None
    asked = any(r["summary"] for run in runs for r in run["requests"])
    return {
        "first": marks(first) if first else None,
        "last": marks(last) if last else None,
        "compacted": asked and last is not None and SUMMARY in standin.text_of(last["body"]),
    }


def version(name: str, clients: Path) -> str:
    try:
        done = subprocess.run(
            [str(clients / "node_modules" / ".bin" / name), "--version"], capture_output=True, text=True, timeout=60
        )
        return done.stdout.strip().splitlines()[0] if done.stdout.strip() else "?"
    except (OSError, subprocess.TimeoutExpired):
        return "?"


def revision(checkout: Path) -> str:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=Path, default=Path("/work/clients"))
    parser.add_argument("--only", default="claude,codex")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args()
    clients = args.clients.resolve()
    names = [n for n in args.only.split(",") if n in ("claude", "codex")]
    print(
        f"# product {product()} at {revision(product())}; "
        + ", ".join(f"{n} {version(n, clients)}" for n in names)
        + f"; marker {MARKER!r}"
    )
    results = []
    for name in names:
        result = session(name, clients)
        results.append(result)
        hook = "SessionStart" if name == "claude" else "PostCompact"
        print(
            f"== {name} (wired by {result.get('wired', '?')}; {hook} hook in the config: "
            f"{result.get('compaction_hook', '?')}"
            + (f"; {result['trusted']} hooks trusted" if "trusted" in result else "")
            + ")"
        )
        for n, step in enumerate(result["runs"], 1):
            each = " ".join(
                f"{marks(r)}{'S' if r['summary'] else ''}{'T' if offers_tools(r) else ''}" for r in step["requests"]
            )
            print(
                f"   run {n} {name} {step['label']}: rc {step['rc']} in {step['seconds']:.1f} s; "
                f"{len(step['requests'])} requests, marker per request: {each or '-'}"
            )
        if result.get("error"):
            print(f"   error: {result['error']}")
        if args.keep or os.environ.get("SM_KEEP"):
            print(f"   kept: {result['scratch']}")
        else:
            shutil.rmtree(result["scratch"], ignore_errors=True)
    print()
    print(f"{'client':<8}{'lesson in first request':>25}{'compacted':>11}{'lesson in last request':>24}")
    for result in results:
        got = figures(result)
        show = ["-" if got[k] is None else str(got[k]) for k in ("first", "compacted", "last")]
        print(f"{result['client']:<8}{show[0]:>25}{show[1]:>11}{show[2]:>24}")
    print(
        "\nfirst request: the first run's first request offering tools; last request: the last run's last "
        "one (a summary request aside); compacted: a summary was asked for and the last request holds it"
    )


if __name__ == "__main__":
    main()
