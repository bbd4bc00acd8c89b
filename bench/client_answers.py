"""Does search_memory's answer reach the model whole in the real clients at their default settings?

    .venv/bin/python bench/client_answers.py GITDIR --clients DIR [--size 1000] [--only claude,gemini,codex]

DIR holds the clients installed from npm (`npm install @anthropic-ai/claude-code @google/gemini-cli
@openai/codex` in DIR; their executables in DIR/node_modules/.bin). For each client: a scratch
project (a git repository) whose memory holds --size records built from GITDIR's history as
bench/search_quality.py builds them, wired with `server.py init --client ...`; a scratch HOME; and
a stand-in for the client's model API on 127.0.0.1 that answers the first request with one
search_memory call (the newest commit's subject as query, its files as files, and a second call
with the query alone) and every later request with a short text, logging every tool result it is
sent. The client runs headless (`claude -p`, `gemini -p`, `codex exec`). Then the tool results that
reached the stand-in are compared with the answers core.tools.search gives for the same arguments:
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
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import search_quality as sq  # noqa: E402  (puts the repository root on sys.path)

from sentinel_memory.tools import answers as tools  # noqa: E402

TOOL = "search_memory"


class StandIn:
    """The scripted model API: Anthropic Messages, Gemini generateContent, OpenAI Responses."""

    def __init__(self, calls: list[dict]) -> None:
        self.calls, self.results, self.requests = calls, [], 0
        stand = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._send(b'{"data": [], "models": []}', "application/json")

            def do_POST(self):
                size = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                stand.requests += 1
                if os.environ.get("SM_STANDIN_LOG"):
                    with open(os.environ["SM_STANDIN_LOG"], "a", encoding="utf-8") as out:
                        out.write(json.dumps({"path": self.path, "body": body}, ensure_ascii=False) + "\n")
                if self.path.startswith("/v1/messages/count_tokens") or ":countTokens" in self.path:
                    return self._send(b'{"input_tokens": 10, "totalTokens": 10}', "application/json")
                if self.path.startswith("/v1/messages"):
                    return stand.anthropic(self, body)
                if self.path.startswith("/v1/responses"):
                    return stand.openai(self, body)
                if "generatecontent" in self.path.lower():
                    return stand.gemini(self, body, "stream" in self.path.lower())
                self._send(b"{}", "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()

    def _next(self, tools_offered: list[str], results: list[str]) -> dict | None:
        """The call to make now: the next scripted one while results are fewer than calls."""
        for result in results:
            if result not in self.results:
                self.results.append(result)
        name = next((t for t in tools_offered if t.endswith(TOOL)), None)
        if name is None or len(results) >= len(self.calls):
            return None
        return {"name": name, "args": self.calls[len(results)]}

    def anthropic(self, handler, body: dict) -> None:
        results = []
        for message in body.get("messages", []):
            for part in message.get("content", []) if isinstance(message.get("content"), list) else []:
                if part.get("type") == "tool_result":
                    results.append(_text_of(part.get("content")))
        call = self._next([t.get("name", "") for t in body.get("tools", [])], results)
        events = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        "id": "msg_" + uuid.uuid4().hex[:12],
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model"),
                        "content": [],
                        "stop_reason": None,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 10, "output_tokens": 1},
                    },
                },
            )
        ]
        if call:
            block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:12], "name": call["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(call["args"])}
            stop = "tool_use"
        else:
            block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": "Done."}, "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        if not body.get("stream"):
            content = [{"type": "text", "text": "Done."}]
            return handler._send(
                json.dumps(
                    {
                        "id": "msg_x",
                        "type": "message",
                        "role": "assistant",
                        "model": "m",
                        "content": content,
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    }
                ).encode(),
                "application/json",
            )
        handler._send(
            "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode(), "text/event-stream"
        )

    def openai(self, handler, body: dict) -> None:
        offered = []
        for tool in body.get("tools", []):
            if isinstance(tool, dict):
                offered.append(tool.get("name", ""))
                offered += [t.get("name", "") for t in tool.get("tools", []) if isinstance(t, dict)]
        namespace = next(
            (
                t.get("name")
                for t in body.get("tools", [])
                if isinstance(t, dict) and any(x.get("name") == TOOL for x in t.get("tools", []) if isinstance(x, dict))
            ),
            None,
        )
        results = [
            _text_of(item.get("output"))
            for item in body.get("input", [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if not namespace and any(isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools", [])):
            # MCP tools deferred behind tool_search: call the server's tool by its namespace directly
            namespace = "mcp__sentinel_memory"
            offered.append(TOOL)
        call = self._next(offered, results)
        rid = "resp_" + uuid.uuid4().hex[:12]
        if call:
            item = {
                "type": "function_call",
                "id": "fc_" + uuid.uuid4().hex[:8],
                "call_id": "call_" + uuid.uuid4().hex[:8],
                "name": call["name"],
                "arguments": json.dumps(call["args"]),
            }
            if namespace and call["name"] == TOOL:
                item["namespace"] = namespace
        else:
            item = {
                "type": "message",
                "role": "assistant",
                "id": "msg_" + uuid.uuid4().hex[:8],
                "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
            }
        done = {
            "type": "response.completed",
            "response": {
                "id": rid,
                "usage": {
                    "input_tokens": 10,
                    "input_tokens_details": None,
                    "output_tokens": 5,
                    "output_tokens_details": None,
                    "total_tokens": 15,
                },
            },
        }
        events = [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", done),
        ]
        handler._send(
            "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode(), "text/event-stream"
        )

    def gemini(self, handler, body: dict, stream: bool) -> None:
        offered = [d.get("name", "") for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
        results = [
            _text_of(part["functionResponse"].get("response"))
            for c in body.get("contents", [])
            for part in c.get("parts", [])
            if "functionResponse" in part
        ]
        if not offered and body.get("generationConfig", {}).get("responseMimeType") == "application/json":
            parts = [{"text": json.dumps({"reasoning": "done", "next_speaker": "user"})}]
        else:
            call = self._next(offered, results)
            parts = [{"functionCall": {"name": call["name"], "args": call["args"]}}] if call else [{"text": "Done."}]
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        }
        if stream:
            return handler._send(f"data: {json.dumps(chunk)}\n\n".encode(), "text/event-stream")
        handler._send(json.dumps(chunk).encode(), "application/json")


def _text_of(value) -> str:
    """Every string inside a tool result as the client sent it, joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(_text_of(v) for v in value.values())
    return ""


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
        home = scratch / "home"
        home.mkdir()
        project, task = project_for(gitdir, size, scratch, largest)
        calls = [task, {"query": task["query"]}]
        stand = StandIn(calls)
        # The configs init writes start `sentinel-memory` from PATH (as an installed package would
        # provide it): here a script that starts this checkout's server.py.
        bin_dir = scratch / "bin"
        bin_dir.mkdir()
        (bin_dir / "sentinel-memory").write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "server.py"}" "$@"\n')
        (bin_dir / "sentinel-memory").chmod(0o755)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "ANTHROPIC", "OPENAI", "GEMINI", "GOOGLE"))
        }
        env.update(
            HOME=str(home),
            PATH=f"{bin_dir}:{clients / 'node_modules' / '.bin'}:{env.get('PATH', '')}",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
        )
        fake_key = "-".join(["sk", "standin", uuid.uuid4().hex])  # a stand-in key, assembled at run time
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
            env.update(
                ANTHROPIC_BASE_URL=base,
                ANTHROPIC_API_KEY=fake_key,
                DISABLE_TELEMETRY="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
            argv = ["claude", "-p", prompt, "--allowedTools", "mcp__sentinel-memory"]
        elif name == "gemini":
            env.update(GEMINI_API_KEY=fake_key, GOOGLE_GEMINI_BASE_URL=base, GEMINI_CLI_TRUST_WORKSPACE="true")
            (home / ".gemini").mkdir()  # the API key as the way in (what `gemini` asks the first time)
            (home / ".gemini" / "settings.json").write_text(
                json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8"
            )
            argv = ["gemini", "-p", prompt]
        else:
            (home / ".codex").mkdir()
            (home / ".codex" / "config.toml").write_text(
                # gpt-5.5: a bundled model with plain function tools and the bundled models' truncation
                # policy (10,000 tokens); the default one calls tools from code, which this stand-in
                # does not script.
                'model = "'
                + os.environ.get("SM_CODEX_MODEL", "gpt-5.5")
                + '"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "standin"\n'
                f'base_url = "{base}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_KEY"\n\n'
                f'[projects."{project}"]\ntrust_level = "trusted"\n\n'
                # MCP tools offered as functions rather than found through tool_search first, which
                # this stand-in does not script; the results are truncated alike either way.
                "[features]\ntool_search = false\ntool_search_always_defer_mcp_tools = false\n",
                encoding="utf-8",
            )
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
                    f"{name:<7} {what:<12} answer {len(expected):>6,} chars: NOT CALLED ({stand.requests} "
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
