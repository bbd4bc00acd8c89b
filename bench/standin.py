"""A scripted stand-in for the model APIs the clients speak, on 127.0.0.1, for the client benches.

Anthropic Messages (Claude Code), Gemini generateContent and streamGenerateContent (Gemini CLI),
OpenAI Responses (Codex). A bench subclasses StandIn and says what the model does next: `call`
gets the client, the tools offered and the conversation read out of the request (items_anthropic,
items_gemini, items_openai) and gives back a tool call (name, arguments) or None for a short text
("Done."); `openai_item` gives Codex's next output item (openai_tools reads its tools, openai_turn
writes the call or text). Every request is kept (`requests`, or the list given) and, given a log
file, appended to it whole as a JSON line. count_tokens is answered with a small count, GETs with
empty model lists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

Call = tuple[str, object] | None  # (tool name, arguments), or None: answer with a short text
TEXT = "Done."


# ------------------------------------------------------------------------ reading a conversation


@dataclass
class Item:
    role: str  # user | assistant
    kind: str  # text | call | result
    text: str = ""
    name: str = ""


def text_of(value) -> str:
    """Every string inside a value as the client sent it, joined."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        return "\n".join(text_of(v) for v in value.values())
    return ""


def items_anthropic(body: dict) -> list[Item]:
    out = []
    for message in body.get("messages", []):
        role = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        if isinstance(content, str):
            out.append(Item(role, "text", content))
            continue
        for part in content or []:
            kind = part.get("type")
            if kind == "text":
                out.append(Item(role, "text", part.get("text", "")))
            elif kind == "tool_use":
                out.append(Item(role, "call", json.dumps(part.get("input")), part.get("name", "")))
            elif kind == "tool_result":
                out.append(Item(role, "result", text_of(part.get("content"))))
    return out


def items_gemini(body: dict) -> list[Item]:
    out = []
    for content in body.get("contents", []):
        role = "assistant" if content.get("role") == "model" else "user"
        for part in content.get("parts", []):
            if "text" in part:
                out.append(Item(role, "text", part["text"]))
            elif "functionCall" in part:
                out.append(
                    Item(
                        role, "call", json.dumps(part["functionCall"].get("args")), part["functionCall"].get("name", "")
                    )
                )
            elif "functionResponse" in part:
                out.append(Item(role, "result", text_of(part["functionResponse"].get("response"))))
    return out


def items_openai(body: dict) -> list[Item]:
    out = []
    for item in body.get("input", []):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "message":
            role = "assistant" if item.get("role") == "assistant" else "user"
            out.append(
                Item(role, "text", text_of([c.get("text", "") for c in item.get("content", []) if isinstance(c, dict)]))
            )
        elif kind in ("function_call", "custom_tool_call"):
            out.append(
                Item("assistant", "call", item.get("arguments") or item.get("input") or "", item.get("name", ""))
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out.append(Item("user", "result", text_of(item.get("output"))))
    return out


def openai_tools(body: dict) -> tuple[list[str], dict[str, str | None], set[str]]:
    """The tools a Responses request offers: their names, the namespace of each tool offered in one
    (also those a tool_search call brought), and the custom (free-form input) ones."""
    offered: list[str] = []
    namespaces: dict[str, str | None] = {}
    custom: set[str] = set()
    for tool in body.get("tools", []):
        if not isinstance(tool, dict):
            continue
        if tool.get("name"):
            offered.append(tool["name"])
            if tool.get("type") == "custom":
                custom.add(tool["name"])
        for inner in tool.get("tools", []) or []:
            if isinstance(inner, dict) and inner.get("name"):
                offered.append(inner["name"])
                namespaces[inner["name"]] = tool.get("name")
    for found in body.get("input", []):  # tools a tool_search call brought
        if isinstance(found, dict) and found.get("type") == "tool_search_output":
            for tool in found.get("tools", []) or []:
                for inner in tool.get("tools", []) or [] if isinstance(tool, dict) else []:
                    if isinstance(inner, dict) and inner.get("name"):
                        offered.append(inner["name"])
                        namespaces[inner["name"]] = tool.get("name")
    return offered, namespaces, custom


# ------------------------------------------------------------------------ writing the model's turn


def _sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(f"event: {e}\ndata: {json.dumps(d)}\n\n" for e, d in events).encode()


def anthropic_reply(body: dict, call: Call) -> tuple[bytes, str]:
    """The Messages answer: the call or the text as an event stream, or (a request that does not
    stream) the text as one message."""
    if not body.get("stream"):
        message = {
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": TEXT}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return json.dumps(message).encode(), "application/json"
    start = {
        "id": "msg_" + uuid.uuid4().hex[:12],
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    if call:
        block = {"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:12], "name": call[0], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(call[1])}
        stop = "tool_use"
    else:
        block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": TEXT}, "end_turn"
    events = [
        ("message_start", {"type": "message_start", "message": start}),
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
    return _sse(events), "text/event-stream"


def gemini_reply(parts: list[dict], stream: bool) -> tuple[bytes, str]:
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    }
    if stream:
        return f"data: {json.dumps(chunk)}\n\n".encode(), "text/event-stream"
    return json.dumps(chunk).encode(), "application/json"


def openai_turn(call: Call, namespaces: dict[str, str | None], custom: set[str]) -> dict:
    """The Responses output item for the call or the text: a custom tool gets its input as a string,
    a function its arguments as JSON (a string as {"input": ...}) and its namespace where it has one."""
    if not call:
        return {
            "type": "message",
            "role": "assistant",
            "id": "msg_" + uuid.uuid4().hex[:8],
            "content": [{"type": "output_text", "text": TEXT, "annotations": []}],
        }
    name, args = call
    call_id = "call_" + uuid.uuid4().hex[:8]
    if name in custom:
        return {
            "type": "custom_tool_call",
            "id": "ctc_" + uuid.uuid4().hex[:8],
            "call_id": call_id,
            "name": name,
            "input": args if isinstance(args, str) else json.dumps(args),
        }
    if isinstance(args, str):
        args = {"input": args}
    item = {
        "type": "function_call",
        "id": "fc_" + uuid.uuid4().hex[:8],
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
    }
    if namespaces.get(name):
        item["namespace"] = namespaces[name]
    return item


def openai_reply(item: dict) -> tuple[bytes, str]:
    rid = "resp_" + uuid.uuid4().hex[:12]
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
    return _sse(events), "text/event-stream"


# ------------------------------------------------------------------------------------ the server


class StandIn:
    """The scripted model API on 127.0.0.1 (its port in `port`) until close()."""

    def __init__(self, log: Path | str | None = None, requests: list[dict] | None = None) -> None:
        self.log = log
        self.requests: list[dict] = [] if requests is None else requests
        self.lock = threading.Lock()
        stand = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, answer: tuple[bytes, str]) -> None:
                body, kind = answer
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self.send((b'{"data": [], "models": []}', "application/json"))

            def do_POST(self):
                size = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(size) or b"{}"
                if self.headers.get("content-encoding") == "zstd":
                    raw = subprocess.run(["zstd", "-dc"], input=raw, capture_output=True).stdout or b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                stand.record(self.path, body)
                self.send(stand.answer(self.path, body))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def entry(self, path: str, body: dict) -> dict:
        """What is kept of a request."""
        return {"path": path, "body": body}

    def record(self, path: str, body: dict) -> None:
        entry = self.entry(path, body)
        with self.lock:
            self.requests.append(entry)
        if self.log:
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def answer(self, path: str, body: dict) -> tuple[bytes, str]:
        if path.startswith("/v1/messages/count_tokens") or ":countTokens" in path:
            return b'{"input_tokens": 10, "totalTokens": 10}', "application/json"
        if path.startswith("/v1/messages"):
            offered = [t.get("name", "") for t in body.get("tools", [])]
            return anthropic_reply(body, self.call("claude", offered, items_anthropic(body)))
        if path.startswith("/v1/responses"):
            return openai_reply(self.openai_item(body))
        if "generatecontent" in path.lower():
            offered = [d.get("name", "") for t in body.get("tools", []) for d in t.get("functionDeclarations", [])]
            if not offered and body.get("generationConfig", {}).get("responseMimeType") == "application/json":
                # the client asks whom the turn goes to next: the user
                parts = [{"text": json.dumps({"reasoning": "done", "next_speaker": "user"})}]
            else:
                call = self.call("gemini", offered, items_gemini(body))
                parts = [{"functionCall": {"name": call[0], "args": call[1]}}] if call else [{"text": TEXT}]
            return gemini_reply(parts, "stream" in path.lower())
        return b"{}", "application/json"

    # what the model does: the benches say

    deferred = ""  # the end of the name of the MCP tool the model calls (see openai_item)

    def call(self, client: str, offered: list[str], items: list[Item]) -> Call:
        """The tool call to make now (name, arguments), or None: answer with a short text."""
        return None

    def openai_item(self, body: dict) -> dict:
        """Codex's next output item. Where Codex defers the MCP tools behind tool_search and the
        model would call `deferred` (a tool name's end), it searches for them first, as a model
        would (again, a moment later, while the MCP server is still starting)."""
        offered, namespaces, custom = openai_tools(body)
        searched = sum(1 for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "tool_search_call")
        hidden = (
            bool(self.deferred)
            and searched < 8
            and not any(n.endswith(self.deferred) for n in offered)
            and any(isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools", []))
        )
        if hidden:
            offered.append(self.deferred)
        call = self.call("codex", offered, items_openai(body))
        if hidden and call and call[0] == self.deferred:
            if searched:
                time.sleep(1)  # the MCP server is still starting: its tools come a moment later
            return {
                "type": "tool_search_call",
                "id": "ts_" + uuid.uuid4().hex[:8],
                "call_id": "call_" + uuid.uuid4().hex[:8],
                "execution": "client",
                "status": "completed",
                "arguments": {"query": f"sentinel memory {self.deferred}", "limit": 8},
            }
        return openai_turn(call, namespaces, custom)


# ------------------------------------------------------------------------------ running a client

DROP = ("GIT_", "ANTHROPIC", "OPENAI", "GEMINI", "GOOGLE")  # the caller's settings the clients would read


def scratch_env(
    scratch: Path, clients: Path, server: Path, launcher: str = "", drop: tuple[str, ...] = DROP
) -> tuple[dict[str, str], Path]:
    """The environment that runs the clients installed in `clients` (their node_modules/.bin) with
    HOME in `scratch`: this process's without the variables whose names start with one of `drop`;
    and that HOME. The configs init writes start `sentinel-memory` from PATH (as an installed
    package would provide it): here `launcher`, by default a script that starts `server`."""
    home = scratch / "home"
    home.mkdir(exist_ok=True)
    bin_dir = scratch / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sentinel-memory").write_text(launcher or f'#!/bin/sh\nexec "{sys.executable}" "{server}" "$@"\n')
    (bin_dir / "sentinel-memory").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(
        HOME=str(home),
        PATH=f"{bin_dir}:{clients / 'node_modules' / '.bin'}:{env.get('PATH', '')}",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env, home


def scratch_key() -> str:
    """A stand-in API key, assembled at run time."""
    return "-".join(["sk", "standin", uuid.uuid4().hex])


def claude_env(base: str, key: str) -> dict[str, str]:
    """Claude Code's settings for the stand-in at `base`."""
    return {
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": key,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def codex_config(home: Path, base: str, project: Path, settings: str = "", features: str = "") -> None:
    """Codex's config.toml in the scratch HOME: the stand-in at `base` as its model provider (key in
    STANDIN_KEY), `project` trusted, `settings` and `features` added."""
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text(
        # gpt-5.5: a bundled model with plain function tools and the bundled models' truncation
        # policy (10,000 tokens); the default one calls tools from code, which this stand-in
        # does not script.
        'model = "' + os.environ.get("SM_CODEX_MODEL", "gpt-5.5") + '"\nmodel_provider = "standin"\n'
        f"{settings}\n"
        '[model_providers.standin]\nname = "standin"\n'
        f'base_url = "{base}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_KEY"\n\n'
        f'[projects."{project}"]\ntrust_level = "trusted"\n\n'
        # MCP tools offered as functions rather than found through tool_search first (Codex
        # versions that defer them anyway get a tool_search call first: StandIn.openai_item).
        f"[features]\n{features}tool_search = false\ntool_search_always_defer_mcp_tools = false\n",
        encoding="utf-8",
    )
