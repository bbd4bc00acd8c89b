"""Does search_memory's answer reach the model whole in the real clients at their default settings?

    .venv/bin/python bench/client_answers.py GITDIR --clients DIR [--size 1000] [--only claude,gemini,codex]

DIR holds the clients installed from npm (`npm install @anthropic-ai/claude-code @google/gemini-cli
@openai/codex` in DIR; their executables in DIR/node_modules/.bin). For each client: a scratch
project (a git repository) whose memory holds --size records built from GITDIR's history as
bench/search_quality.py builds them, wired with `server.py init --client ...`; a scratch HOME; and
a stand-in for the client's model API on 127.0.0.1 (bench/standin.py) that answers the first
request with one search_memory call (the newest commit's subject as query, its files as files, and
a second call with the query alone; where Codex hides its MCP tools behind tool_search, it searches
for them first) and every later request with a short text, logging every tool result it is sent. The client runs headless (`claude -p`, `gemini -p`, `codex exec`). Then the tool results that
reached the stand-in are compared with the answers tools.answers.search gives for the same arguments:
WHOLE when the answer is in the result unchanged; otherwise what arrived instead (its length, its
first characters). Nothing is fetched; the clients' own network calls other than the stand-in fail.
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

import search_quality as sq  # noqa: E402  (puts the repository root on sys.path)
import standin  # noqa: E402

from sentinel_memory.tools import answers as tools  # noqa: E402

TOOL = "search_memory"


class Searcher(standin.StandIn):
    """The model: calls search_memory with each of `calls` in turn while fewer results came back
    than calls were made, otherwise answers a short text; keeps every tool result it is sent."""

    deferred = TOOL

    def __init__(self, calls: list[dict]) -> None:
        self.calls: list[dict] = calls
        self.results: list[str] = []
        super().__init__(os.environ.get("SM_STANDIN_LOG"))

    def call(self, client: str, offered: list[str], items: list[standin.Item]) -> standin.Call:
        results = [i.text for i in items if i.kind == "result"]
        for result in results:
            if result not in self.results:
                self.results.append(result)
        name = next((t for t in offered if t.endswith(TOOL)), None)
        if name is None or len(results) >= len(self.calls):
            return None
        return name, self.calls[len(results)]


def principle_of(entry):
    """The record as a principle: every principle is listed, so the answer fills the budget."""
    from sentinel_memory.record.records import Entry, record_id

    record = dict(entry.record, type="principle")
    record["id"] = record_id("principle", record["topic"], record["missing_context"], record["lesson"])
    record["meta"] = {
        "created": record["meta"]["created"],
        "compacted_at": record["meta"]["created"],
        "source_count": 3,
    }
    return Entry.of(record)


def project_for(gitdir: str, size: int, scratch: Path, largest: bool = False) -> tuple[Path, dict]:
    commits = sq.history(gitdir)
    common = sq.common_files(commits)
    window, task = commits[-size - 1 : -1], commits[-1]
    project = scratch / "app"
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    entries = [sq.record_of(c, common) for c in window]
    sq.write_memory(project, [principle_of(e) for e in entries] if largest else entries)
    files = [f for f in dict.fromkeys(task["files"]) if f not in common][:10]
    return project, {"query": task["subject"], "files": files}


def run_client(name: str, clients: Path, gitdir: str, size: int, largest: bool = False) -> list[str]:
    scratch = Path(tempfile.mkdtemp(prefix=f"sm-client-{name}-"))
    try:
        project, task = project_for(gitdir, size, scratch, largest)
        calls = [task, {"query": task["query"]}]
        stand = Searcher(calls)
        env, home = standin.scratch_env(scratch, clients, ROOT / "server.py")
        fake_key = standin.scratch_key()
        init = subprocess.run(
            [
                sys.executable,
                str(ROOT / "server.py"),
                "--project",
                str(project),
                "init",
                "--client",
                {"claude": "claude", "gemini": "gemini", "codex": "codex"}[name],
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        if init.returncode:
            return [f"{name}: init failed: {init.stderr.strip()[:300]}"]
        base = f"http://127.0.0.1:{stand.port}"
        prompt = "Search the project memory for this task, then answer Done."
        if name == "claude":
            env.update(standin.claude_env(base, fake_key))
            argv = ["claude", "-p", prompt, "--allowedTools", "mcp__sentinel-memory"]
        elif name == "gemini":
            env.update(GEMINI_API_KEY=fake_key, GOOGLE_GEMINI_BASE_URL=base, GEMINI_CLI_TRUST_WORKSPACE="true")
            (home / ".gemini").mkdir()  # the API key as the way in (what `gemini` asks the first time)
            (home / ".gemini" / "settings.json").write_text(
                json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8"
            )
            argv = ["gemini", "-p", prompt]
        else:
            standin.codex_config(home, base, project)
            env.update(STANDIN_KEY=fake_key)
            argv = ["codex", "exec", "--skip-git-repo-check", prompt]
        try:
            done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=240)
            tail = (done.stdout + done.stderr).strip()[-int(os.environ.get("SM_TAIL", "400")) :]
        except subprocess.TimeoutExpired:
            tail = "(timed out after 240 s)"
        stand.close()
        memory = sq.memory_path(project)
        lines = []
        for i, call in enumerate(calls):
            expected = tools.search(memory, call["query"], files=call.get("files"))
            got = stand.results[i] if i < len(stand.results) else None
            what = "files+query" if call.get("files") else "query"
            if got is None:
                lines.append(
                    f"{name:<7} {what:<12} answer {len(expected):>6,} chars: NOT CALLED ({len(stand.requests)} "
                    f"requests); client said: {tail!r}"
                )
            elif expected in got:
                lines.append(
                    f"{name:<7} {what:<12} answer {len(expected):>6,} chars: WHOLE "
                    f"(the tool result held {len(got):,} chars)"
                )
            else:
                lines.append(
                    f"{name:<7} {what:<12} answer {len(expected):>6,} chars: CHANGED: {len(got):,} chars "
                    f"arrived, beginning {got[:160]!r}"
                )
        return lines
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitdir")
    parser.add_argument("--clients", required=True, type=Path)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--only", default="claude,gemini,codex")
    parser.add_argument(
        "--largest",
        action="store_true",
        help="every record a principle: the answer is as long as the budget lets it be",
    )
    args = parser.parse_args()
    for name in args.only.split(","):
        for line in run_client(name, args.clients.resolve(), args.gitdir, args.size, args.largest):
            print(line, flush=True)


if __name__ == "__main__":
    main()
