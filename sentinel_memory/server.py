"""The MCP adapter: FastMCP with three typed tools, each body one call into `tools`, which holds
every rule. Also the project root (with the client's MCP roots as a fallback), error mapping and stderr
logging. Started through __main__.py (`python server.py`, `python -m sentinel_memory`, the
`sentinel-memory` executable), which decides that the words ask for the server.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import warnings
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlparse

# The banner path makes a blocking version check against the package index on every start.
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
# Keep the client's log pane for what matters: our own messages and warnings.
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")
# fastmcp reads its settings from a `.env` file in the working folder too, and that folder is the
# project: a cloned repository's `.env` would choose the transport, host and port (an HTTP server
# for anyone on the machine) and every other setting, which the fast start's key cannot see. No
# env file is read: the environment the client starts the server with is the only source, and
# main() serves stdio whatever a setting says (docs/security.md).
os.environ["FASTMCP_ENV_FILE"] = os.devnull

import anyio  # noqa: E402 (installed with fastmcp)
from fastmcp import Context, FastMCP  # noqa: E402
from fastmcp.exceptions import ToolError, ValidationError  # noqa: E402
from fastmcp.server.middleware import Middleware  # noqa: E402
from mcp_types import ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402
from pydantic.fields import FieldInfo  # noqa: E402

from . import __version__, tools  # noqa: E402
from .errors import MemoryToolError, ProjectRootError  # noqa: E402
from .git.drivers import ensure_configured  # noqa: E402
from .invocation import ENTRY, EXECUTABLE, SELF  # noqa: E402
from .record.store import memory_path  # noqa: E402
from .setup.project import ENV_VAR as PROJECT_ENV, is_home_or_root, refusal, resolve  # noqa: E402
from .tools import answers as _answers  # noqa: E402, F401 (loaded before serving, as the tools are called)
from .tools.memory import DEFAULT_THRESHOLD  # noqa: E402
from .tools.parameters import (  # noqa: E402
    COMPACT_MEMORY,
    COMPACT_MEMORY_DESCRIPTION,
    INSTRUCTIONS,
    LOG_MEMORY,
    LOG_MEMORY_DESCRIPTION,
    SEARCH_MEMORY,
    SEARCH_MEMORY_DESCRIPTION,
    TOOLS,
    Parameter,
)

log = logging.getLogger("sentinel_memory")

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
# log_memory replaces fields on upsert and a principle deletes its sources: destructive in the MCP
# specification's sense ("may perform destructive updates", not "only additive updates"), even
# though git keeps every earlier version; the same call twice changes nothing more (idempotent).
# Clients that gate such tools are configured by init to let this one run (docs/clients.md, Codex).
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)


class PlainArgumentErrors(Middleware):
    """Turn argument-validation failures into one plain sentence that does not echo the input
    (a rejected value may be a secret or a kilobyte of text)."""

    async def on_call_tool(self, context, call_next):
        try:
            return await call_next(context)
        except ValidationError as exc:
            cause = exc.__cause__
            details = getattr(cause, "errors", None)
            fields = []
            if callable(details):
                for err in details(include_url=False, include_context=False, include_input=False):
                    where = ".".join(str(p) for p in err.get("loc", ()) if p != "arguments") or "arguments"
                    fields.append(f"{where}: {err.get('msg', 'invalid')}")
            summary = "; ".join(fields[:5]) or "the arguments do not match the tool's schema"
            name = context.message.name
            outcome = OUTCOMES.get(name, "Nothing was saved.")
            raise ToolError(f"Invalid arguments for {name}: {summary}. {_takes(name)} {outcome}") from None


# The JSON shape of each argument that is not a string, for the sentence above.
_SHAPES = {
    "files": "a JSON array of paths relative to the project root",
    "source_ids": 'a JSON array of record ids, as compact_memory shows them ("<id>@<version>") or bare',
    "compact_threshold": "an integer",
}


def _takes(name: str) -> str:
    """The arguments a tool accepts, each with its JSON shape: what to call it with instead."""
    table = TOOLS.get(name)
    if table is None:
        return ""
    parts = [
        f"{p.name}{'' if p.required else ' (optional)'}: {_SHAPES.get(p.name, 'a string')}" for p in table.values()
    ]
    return f"Call it with {'; '.join(parts)}."


# What a refused call did not do, as each tool's own refusals end (compact_memory writes nothing).
OUTCOMES = {
    "search_memory": "Nothing was searched.",
    "compact_memory": "Nothing was read; compact_memory changes nothing.",
}


class _SessionState:
    """fastmcp's session-state store, kept in a dict. The server keeps no state of its own, but
    fastmcp looks up per-session visibility rules in this store on every tools/list and tools/call;
    its default store (py-key-value, loaded through beartype's import hooks) is slow to load on the
    first request of every start (bench/benchmark.py, A). Same interface (async get/put/delete of StateValue by key)."""

    def __init__(self) -> None:
        self._values: dict[str, object] = {}

    async def get(self, key: str, collection: str | None = None):
        return self._values.get(key)

    async def put(self, key: str, value, collection: str | None = None, ttl: float | None = None) -> None:
        self._values[key] = value  # a stdio server serves one client for the life of the process

    async def delete(self, key: str, collection: str | None = None) -> bool:
        return self._values.pop(key, None) is not None


class SentinelMCP(FastMCP):
    _session_state = _SessionState()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # What the server keeps for the life of the process. Per memory file, what the tools keep
        # between calls: a call on an unchanged file costs no parse, no index and no git log at
        # the same HEAD (tools/memory.py, OpenMemory).
        self._memories: dict[Path, tools.OpenMemory] = {}
        self.project: str | None = None  # --project; None: $SENTINEL_MEMORY_PROJECT, else the cwd
        self._client_root: Path | None = None  # the client's workspace root, asked for once
        self._git_checked: set[Path] = set()  # the projects whose git wiring was checked
        self._git_lock = threading.Lock()

    def opened(self, path: Path) -> tools.OpenMemory:
        """The memory file at `path`, as this server keeps it between calls."""
        memory = self._memories.get(path)
        if memory is None:
            memory = self._memories.setdefault(path, tools.OpenMemory(path))  # one, even when two threads get here
        return memory

    async def memory_file(self, ctx: Context | None) -> Path:
        """The memory file for this call; falls back to the client's workspace root (MCP roots)
        when the server was started in the home directory or a filesystem root."""
        client = _client_name(ctx)
        root = resolve(self.project, client=client)
        project = root.path
        if root.guarded:
            if self._client_root is None:
                self._client_root = await _workspace_root(ctx)
            if self._client_root is None:
                raise ProjectRootError(refusal(root, client))
            project = self._client_root
        if project not in self._git_checked:
            # A teammate who only pulled gets the merge and diff drivers when the server starts (the
            # warm-up) or first uses the memory. Cheap (one git call per process and project).
            await anyio.to_thread.run_sync(self._check_git, project)
        return memory_path(project)

    def _check_git(self, project: Path) -> None:
        """ensure_configured once per project; a second caller waits for the first (the warm-up and
        the client's first call may both get here). Never fatal, never retried."""
        with self._git_lock:
            if project in self._git_checked:
                return
            try:
                ensure_configured(project, *ENTRY)
            finally:
                self._git_checked.add(project)

    @property
    def _state_store(self) -> _SessionState:  # type: ignore[override]  # fastmcp's is a store class
        return self._session_state


mcp = SentinelMCP(
    "sentinel-memory",
    version=__version__,
    instructions=INSTRUCTIONS,
    mask_error_details=True,
    middleware=[PlainArgumentErrors()],
)


def _client_name(ctx: Context | None) -> str | None:
    """The name the client gave in its initialize request (e.g. "claude-code"), to name its fix."""
    try:
        return ctx.session.client_params.client_info.name  # type: ignore[union-attr]  # any None: below
    except Exception:  # no context, no session or no client info: the fix for every client
        return None


async def _workspace_root(ctx: Context | None) -> Path | None:
    """The first file:// root the client lists, where the client and protocol offer roots."""
    try:
        session = ctx.session  # type: ignore[union-attr]  # no context: below
        caps = session.client_capabilities
        if caps is None or caps.roots is None or not session.can_send_request:
            return None
        with anyio.fail_after(5), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # roots are deprecated in the newest protocol era only
            result = await session.list_roots()
    except Exception as exc:  # roots are optional: any failure means "no root offered"
        log.info("client offered no workspace root: %s", exc)
        return None
    for root in result.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file":
            path = Path(unquote(uri.path.lstrip("/") if os.name == "nt" else uri.path))
            if path.is_dir() and not is_home_or_root(path):
                return path.resolve()
    return None


async def _run(ctx: Context | None, operation, **arguments) -> str:
    """Resolve the memory file, run one core operation on it (as the server keeps it) in a worker
    thread, and turn expected failures into tool errors. Unexpected ones are logged to stderr,
    never sent as a traceback."""
    try:
        memory = mcp.opened(await mcp.memory_file(ctx))
        return await anyio.to_thread.run_sync(partial(operation, memory, **arguments))
    except MemoryToolError as exc:
        raise ToolError(str(exc)) from None
    except Exception:
        log.exception("unexpected failure in %s", operation.__name__)
        raise ToolError(
            "Sentinel-Memory hit an unexpected internal error; nothing was saved. "
            "The details are in the server's log (stderr)."
        ) from None


def _described(tool: dict[str, Parameter], name: str, **constraints) -> FieldInfo:
    """The parameter's description (and constraints) as tools/parameters.py writes them, once.
    strict=True for the integer: pydantic would otherwise take true as 1 and "5" as 5, which the
    contract (§4.5) and the core reject."""
    return Field(description=tool[name].description, **constraints)


S, L, C = SEARCH_MEMORY, LOG_MEMORY, COMPACT_MEMORY


@mcp.tool(annotations=READ_ONLY, output_schema=None, description=SEARCH_MEMORY_DESCRIPTION)
async def search_memory(
    query: Annotated[str, _described(S, "query")],
    topic: Annotated[str | None, _described(S, "topic")] = None,
    files: Annotated[list[str] | None, _described(S, "files")] = None,
    ctx: Context | None = None,
) -> str:
    return await _run(ctx, tools.search, query=query, topic=topic, files=files)


@mcp.tool(annotations=WRITES, output_schema=None, description=LOG_MEMORY_DESCRIPTION)
async def log_memory(
    topic: Annotated[str, _described(L, "topic")],
    missing_context: Annotated[str, _described(L, "missing_context")],
    lesson: Annotated[str, _described(L, "lesson")],
    ask_next_time: Annotated[str, _described(L, "ask_next_time")] = "",
    type: Annotated[Literal["log", "principle"], _described(L, "type")] = "log",
    compact_threshold: Annotated[int, _described(L, "compact_threshold", ge=1, strict=True)] = DEFAULT_THRESHOLD,
    source_ids: Annotated[list[str] | None, _described(L, "source_ids")] = None,
    files: Annotated[list[str] | None, _described(L, "files")] = None,
    ctx: Context | None = None,
) -> str:
    return await _run(
        ctx,
        tools.log,
        topic=topic,
        missing_context=missing_context,
        lesson=lesson,
        ask_next_time=ask_next_time,
        type=type,
        compact_threshold=compact_threshold,
        source_ids=source_ids,
        files=files,
    )


@mcp.tool(annotations=READ_ONLY, output_schema=None, description=COMPACT_MEMORY_DESCRIPTION)
async def compact_memory(
    target_topic: Annotated[str | None, _described(C, "target_topic")] = None,
    compact_threshold: Annotated[int, _described(C, "compact_threshold", ge=1, strict=True)] = DEFAULT_THRESHOLD,
    ctx: Context | None = None,
) -> str:
    return await _run(ctx, tools.compact, target_topic=target_topic, compact_threshold=compact_threshold)


def _warm_up() -> None:
    """Run on a thread as the server starts: one search_memory through fastmcp's public
    `call_tool` (its own event loop), so that what a first call pays on top of every call's cost
    is paid before the agent's first call: the git wiring check, reading and indexing the memory
    file (0.45 s at 10,000 records), fastmcp's first-call imports and models. Read-only on the
    memory; never fatal."""
    try:
        if resolve(mcp.project).guarded:
            return  # the client's workspace root decides, at the first call
        anyio.run(partial(mcp.call_tool, "search_memory", {"query": "memory"}))
    except Exception as exc:  # the first call meets the same problem and reports it
        log.debug("warm-up skipped: %s", exc)


def _lone_surrogate(value: object) -> bool:
    return isinstance(value, str) and any("\ud800" <= c <= "\udfff" for c in value)


def _read_lone_surrogates() -> None:
    """Let a message whose strings hold an escaped lone surrogate (`"\\ud83d"`, half an emoji, as
    JavaScript's JSON.stringify writes one) reach the tools, which refuse it with a sentence naming
    the field (docs/contract.md §3.5). The MCP SDK's reader parses each line with pydantic's JSON
    parser, which refuses such an escape, and then drops the message without an answer: the client
    waits for its own timeout. Such a line is read with Python's json instead. Left as it is when the
    SDK's reader is not shaped as this expects."""
    import json

    import mcp.server.stdio as stdio

    sdk: Any = getattr(stdio, "types", None)
    adapter: Any = getattr(sdk, "jsonrpc_message_adapter", None)
    if adapter is None or not hasattr(adapter, "validate_python"):
        return

    class Reader:
        def validate_json(self, line, **options):
            try:
                return adapter.validate_json(line, **options)
            except Exception:
                if "\\u" not in line:
                    raise
                parsed = json.loads(line)
                # An id or a method the answer echoes must be text the writer can send back:
                # such a message is left to the SDK, which drops it, as before.
                if not isinstance(parsed, dict) or any(map(_lone_surrogate, (parsed.get("id"), parsed.get("method")))):
                    raise
                return adapter.validate_python(parsed, **options)

        def __getattr__(self, name):
            return getattr(adapter, name)

    class Types:
        jsonrpc_message_adapter = Reader()

        def __getattr__(self, name):
            return getattr(sdk, name)

    stdio.types = Types()  # type: ignore[assignment]  # the SDK reader looks it up on each line


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=SELF,
        description="Sentinel-Memory MCP server (stdio). With no arguments it serves MCP on stdin/stdout.",
    )
    parser.add_argument(
        "--project", metavar="DIR", help=f"project root (default: ${PROJECT_ENV}, else the current directory)"
    )
    return parser.parse_args(argv)


def _utf8(name: str, fd: int) -> None:
    """sys.stdout or sys.stderr in UTF-8. A stream made over a file that the fast start (faststart/
    proxy.py) then replaced with a pipe still takes its descriptor for a file, and fails on the
    first seek (a server whose stdout is redirected to a log file): it is made again over the
    descriptor as it is now."""
    stream = getattr(sys, name)
    if not hasattr(stream, "reconfigure"):
        return
    try:
        stream.reconfigure(encoding="utf-8")
    except OSError:
        setattr(sys, name, open(fd, "w", encoding="utf-8", errors=stream.errors, closefd=False))


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    mcp.project = args.project
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="sentinel-memory: %(levelname)s %(message)s")
    for name, fd in (("stdout", 1), ("stderr", 2)):
        _utf8(name, fd)
    if sys.stdin.isatty():
        try:
            where: Path | str = resolve(mcp.project).memory_file
        except MemoryToolError as exc:
            where = f"(no usable project: {exc})"
        print(
            f"Sentinel-Memory MCP server on stdio, memory file {where}. It talks MCP on stdin/stdout: "
            f"a client starts it; `{EXECUTABLE} init` in your project writes the client's config "
            "(docs/clients.md). Ctrl+C to stop.",
            file=sys.stderr,
        )
    else:  # a client: pay the first call's costs (and wire git) before its first call
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    _read_lone_surrogates()
    try:
        mcp.run(transport="stdio", show_banner=False)
    except KeyboardInterrupt:  # Ctrl+C in a terminal: stop quietly, no traceback
        sys.exit(130)
