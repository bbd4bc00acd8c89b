"""Answer an MCP client's handshake before fastmcp is imported.

Importing fastmcp and the `mcp` SDK takes most of a second; clients that do not wait (headless
`claude -p`, `codex exec`) would start the agent's first turn without our tools. So `python
server.py` (no command) on a POSIX system starts like this, with the standard library only:

* fd 0 and fd 1 become pipes, and two threads stand between them and the real stdin/stdout;
* the main thread imports `server` (fastmcp, the tools) and runs `mcp.run()` unchanged on those
  pipes, exactly as it would on the real ones; every byte the client sends reaches it, in order;
* until fastmcp has answered the client's `initialize`, the stdin thread answers `initialize`
  and the list requests (`tools/list`, `prompts/list`, ...) itself, from `startup_payload.py`:
  the bytes fastmcp itself sends for this server.py at each protocol version, recorded by
  `python -m sentinel_memory.fast_start --write`; the stdout thread then drops fastmcp's own answers to those
  requests (same bytes, tested). Anything else (`tools/call`, a ping, an unknown protocol
  version) waits for fastmcp, as it would without this module.

The payload is used only when it was recorded from this very server.py (CRC-32 of its bytes)
and the installed fastmcp, mcp, mcp-types, pydantic and pydantic-core versions; otherwise, or
with SENTINEL_MEMORY_FAST_START=0, or on Windows, the server starts the ordinary way.
tests/test_fast_start.py compares both ways byte for byte. docs/design.md says what this
relies on.
"""

from __future__ import annotations

import os
import sys

ENV = "SENTINEL_MEMORY_FAST_START"
HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_FILE = os.path.join(HERE, "server.py")
# What the recorded bytes depend on besides server.py (distribution names as in *.dist-info).
DISTRIBUTIONS = ("fastmcp", "mcp", "mcp_types", "pydantic", "pydantic_core")
# Requests answered from the payload once initialize was: methods without parameters whose
# answer depends only on the server's code and the negotiated protocol version.
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
# logging/setLevel (the Inspector sends it before tools/list and waits): fastmcp still receives
# and applies it; its answer is the same empty result at every valid level.
SET_LEVEL = "logging/setLevel"
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# The stateless era (2026-07-28): no initialize; every request carries its version in `_meta`.
# server/discover and the lists are answered from the payload when `_meta` holds nothing else
# than these keys and the client declares no capabilities (which could shape an answer).
DISCOVER = "server/discover"
META = "io.modelcontextprotocol/"
META_KEYS = {META + "protocolVersion", META + "clientInfo", META + "clientCapabilities", META + "logLevel"}
EOF_MARK = b"\x00\n"  # never in JSON text: the main thread's "fastmcp wrote its last byte"
RESPONSE_PREFIX = b'{"jsonrpc":"2.0","id":'


def wanted() -> bool:
    """True on a POSIX system with the fast start not turned off (the caller has decided to serve)."""
    return os.name == "posix" and os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def installed_versions() -> dict[str, str] | None:
    """The versions of DISTRIBUTIONS from the *.dist-info folder names beside fastmcp (one
    listdir, no importlib.metadata: that alone costs ~30 ms)."""
    for entry in sys.path:
        folder = entry or "."
        if os.path.isfile(os.path.join(folder, "fastmcp", "__init__.py")):
            break
    else:
        return None
    found: dict[str, str] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return None
    for name in names:
        if name.endswith(".dist-info"):
            dist, _, version = name[: -len(".dist-info")].partition("-")
            if dist in DISTRIBUTIONS:
                found[dist] = version
    return found if len(found) == len(DISTRIBUTIONS) else None


def server_crc() -> int:
    import zlib

    with open(SERVER_FILE, "rb") as handle:
        return zlib.crc32(handle.read())


def load_payload():
    """The recorded answers, when they were recorded from this server.py and these versions."""
    try:
        from sentinel_memory import startup_payload as payload
    except ImportError:
        return None
    try:
        if payload.SERVER_CRC32 != server_crc() or payload.VERSIONS != installed_versions():
            return None
    except OSError:
        return None
    return payload.RESULTS


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class Proxy:
    """The two threads between the client and fastmcp, and what they share."""

    def __init__(self, results: dict[str, dict[str, str]]) -> None:
        import threading

        self.results = results
        self.lock = threading.Lock()      # one writer at a time on the real stdout
        self.dropped: dict[bytes, int] = {}  # ids (JSON text) answered here, awaiting fastmcp's answer
        self.ready = False                 # fastmcp answered initialize: it answers everything now
        self.version: str | None = None    # the protocol version negotiated here
        self.init_id: bytes | None = None
        self.answered = 0                  # requests answered here
        self.waiting = 0                   # requests left for fastmcp to answer before it is ready
        self.real_in = os.dup(0)
        self.real_out = os.dup(1)
        read_0, self.to_server = os.pipe()
        self.from_server, write_1 = os.pipe()
        os.dup2(read_0, 0)
        os.dup2(write_1, 1)
        os.close(read_0)
        os.close(write_1)
        self.mark = os.dup(1)  # to write EOF_MARK after fastmcp's last byte
        self.switch = sys.getswitchinterval()
        # While fastmcp imports on the main thread, let the handshake thread have the GIL soon
        # after it asks for it (the default 5 ms would be paid on every handoff).
        sys.setswitchinterval(0.0002)
        self.reader = threading.Thread(target=self._read, name="fast-start-stdin", daemon=True)
        self.writer = threading.Thread(target=self._write, name="fast-start-stdout", daemon=True)
        self.reader.start()
        self.writer.start()

    # ---------------------------------------------------------------- client -> fastmcp
    def _read(self) -> None:
        import json

        pending = b""
        try:
            while True:
                chunk = os.read(self.real_in, 65536)
                if not chunk:
                    break
                if not self.ready:
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()
                    for line in lines:
                        try:
                            self._answer(json, line)
                        except Exception:  # never lose a byte over the fast answer: fastmcp answers
                            self.waiting += 1
                elif pending:
                    pending = b""
                _write_all(self.to_server, chunk)
        except OSError:
            pass
        finally:
            if not self.ready and self.waiting == 0 and self.answered:
                # The client left after what was answered here (e.g. a tools/list probe): nothing
                # is owed to it, so do not make it wait for fastmcp to load only to exit.
                os._exit(0)
            try:
                os.close(self.to_server)
            except OSError:
                pass

    def _answer(self, json, line: bytes) -> None:
        """Answer one client line from the payload when it is a request answered there."""
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
            return  # a notification, a response, a batch: fastmcp's
        method, ident, params = message["method"], message["id"], message.get("params")
        if type(ident) is int:
            key = str(ident).encode()
        elif isinstance(ident, str) and ident.isascii() and all(c.isalnum() or c in "-_.:" for c in ident):
            key = b'"' + ident.encode() + b'"'
        else:
            key = None  # an id whose JSON spelling might differ from fastmcp's: fastmcp answers
        result = None
        modern = _modern_version(params) if key is not None and method in (DISCOVER, *LISTS) else None
        if modern is not None:
            result = self.results.get(modern, {}).get(method)
        elif key is not None and method == "initialize" and self.version is None and _plain_initialize(params):
            version = params["protocolVersion"]
            if version in self.results:
                self.version, self.init_id = version, key
                result = self.results[version]["initialize"]
        elif key is not None and self.version is not None and method in LISTS and _no_cursor(params):
            result = self.results[self.version].get(method)
        elif key is not None and self.version is not None and method == SET_LEVEL and isinstance(params, dict) \
                and params.keys() == {"level"} and params["level"] in LEVELS:
            result = self.results[self.version].get(method)
        if result is None:
            self.waiting += 1
            return
        self.answered += 1
        with self.lock:
            self.dropped[key] = self.dropped.get(key, 0) + 1
            _write_all(self.real_out, RESPONSE_PREFIX + key + b',"result":' + result.encode() + b"}\n")

    # ---------------------------------------------------------------- fastmcp -> client
    def _write(self) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(self.from_server, 65536)
                if not chunk:
                    break
                if not self.dropped and not pending:
                    done = chunk.endswith(EOF_MARK)
                    if done:
                        chunk = chunk[: -len(EOF_MARK)]
                    if chunk:
                        with self.lock:
                            _write_all(self.real_out, chunk)
                    if done:
                        break
                    continue
                lines = (pending + chunk).split(b"\n")
                pending = lines.pop()
                out, done = [], False
                for line in lines:
                    if line == EOF_MARK[:-1]:
                        done = True
                        break
                    try:
                        dropped = self._drop(line)
                    except Exception:  # pass it on rather than lose it
                        dropped = False
                    if not dropped:
                        out.append(line + b"\n")
                if out:
                    with self.lock:
                        _write_all(self.real_out, b"".join(out))
                if done:
                    break
        except OSError:
            pass

    def _drop(self, line: bytes) -> bool:
        """True for fastmcp's answer to a request already answered here (and then, for
        initialize, fastmcp is ready: from now on it answers everything itself)."""
        if not self.dropped or not line.startswith(RESPONSE_PREFIX):
            return False
        rest = line[len(RESPONSE_PREFIX):]
        with self.lock:  # the stdin thread adds ids meanwhile
            for key in self.dropped:
                if rest.startswith(key + b',"result":') or rest.startswith(key + b',"error":'):
                    break
            else:
                return False
            count = self.dropped.pop(key) - 1
            if count:
                self.dropped[key] = count
        if rest.startswith(key + b',"error":'):
            sys.stderr.write(f"sentinel-memory: fast start answered request {key.decode()} but fastmcp "
                             f"answered it with an error: {line[:500].decode(errors='replace')}\n")
        if not self.ready:  # fastmcp answered: it is serving (initialize is answered first)
            self.ready = True
            sys.setswitchinterval(self.switch)
        return True

    def close(self) -> None:
        """After fastmcp returned: pass on everything it wrote, then stop."""
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        try:
            _write_all(self.mark, EOF_MARK)
        except OSError:
            return
        self.writer.join(timeout=10)


def _no_cursor(params) -> bool:
    """A list request for the first (here: only) page: no params, or only a progress token in
    _meta (Codex sends one; a list answer sends no progress)."""
    if params in (None, {}):
        return True
    return (isinstance(params, dict) and params.keys() == {"_meta"} and isinstance(params["_meta"], dict)
            and params["_meta"].keys() <= {"progressToken"})


# Client capabilities that change nothing this server answers to discover or a list: it sends no
# roots, elicitation or sampling requests of its own in that era (Claude Code declares the first two).
PLAIN_CAPABILITIES = frozenset({"roots", "elicitation", "sampling"})


def _modern_version(params) -> str | None:
    """The protocol version of a stateless-era request whose answer the payload holds."""
    if not isinstance(params, dict) or params.keys() != {"_meta"} or not isinstance(params["_meta"], dict):
        return None
    meta = params["_meta"]
    version = meta.get(META + "protocolVersion")
    capabilities = meta.get(META + "clientCapabilities", {})
    if not isinstance(version, str) or not meta.keys() <= META_KEYS or not isinstance(capabilities, dict) \
            or not capabilities.keys() <= PLAIN_CAPABILITIES:
        return None
    level = meta.get(META + "logLevel")
    return version if level is None or level in LEVELS else None


def _plain_initialize(params) -> bool:
    """The initialize params fastmcp accepts as surely as this module answers them."""
    if not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
            and isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str))


def run(argv: list[str]) -> int | None:
    """Serve with the fast start; None when it does not apply (the caller starts the ordinary way)."""
    try:
        if os.isatty(0):
            return None  # someone in a terminal: nothing to gain
    except OSError:
        return None
    results = load_payload()
    if results is None:
        return None
    proxy = Proxy(results)
    try:
        from sentinel_memory import server

        server.main(argv)
    finally:
        proxy.close()
    return 0


# ------------------------------------------------------------------------------ recording

def record(python: str = sys.executable) -> dict[str, dict[str, str]]:
    """What `python server.py` (fastmcp, fast start off) answers to initialize, the list requests
    and logging/setLevel at each handshake protocol version, and to server/discover and the lists
    at each stateless one: the `result` text of each response line."""
    import tempfile

    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    # PYTHONPATH: `-m sentinel_memory` runs in the scratch project and must find this package.
    env = dict(os.environ, **{ENV: "0", "FASTMCP_CHECK_FOR_UPDATES": "off", "PYTHONPATH": os.path.dirname(HERE)})
    methods = ("initialize", *LISTS, SET_LEVEL)
    results: dict[str, dict[str, str]] = {}
    # An empty scratch project: served on this checkout, the server would wire git's drivers into
    # its .git/config at start (the answers recorded do not depend on the project).
    with tempfile.TemporaryDirectory(prefix="sentinel-memory-record-") as project:
        for version in HANDSHAKE_PROTOCOL_VERSIONS:
            init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "record", "version": "0"}}
            lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init},
                     {"jsonrpc": "2.0", "method": "notifications/initialized"}]
            lines += [{"jsonrpc": "2.0", "id": n, "method": m} for n, m in enumerate(LISTS, start=2)]
            lines.append({"jsonrpc": "2.0", "id": len(methods), "method": SET_LEVEL, "params": {"level": "debug"}})
            # stdin is kept open until every answer is in: EOF cancels what is in flight
            results[version] = _exchange(python, env, project, lines, methods)
        for version in MODERN_PROTOCOL_VERSIONS:
            meta = {META + "protocolVersion": version, META + "clientInfo": {"name": "record", "version": "0"},
                    META + "clientCapabilities": {}}
            modern = (DISCOVER, *LISTS)
            lines = [{"jsonrpc": "2.0", "id": n, "method": m, "params": {"_meta": meta}} for n, m in enumerate(modern, 1)]
            results[version] = _exchange(python, env, project, lines, modern)
    return results


def _exchange(python: str, env: dict, project: str, lines: list[dict], methods: tuple[str, ...]) -> dict[str, str]:
    """Send lines to `python server.py --project PROJECT`, keep stdin open until one answer per
    method is in; the `result` text of each, by method (request ids are 1, 2, ... in methods' order)."""
    import json
    import subprocess

    child = subprocess.Popen([python, "-m", "sentinel_memory", "--project", project], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=project)
    child.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
    child.stdin.flush()
    out = [child.stdout.readline() for _ in methods]
    child.stdin.close()
    child.wait(timeout=60)
    answers = {}
    prefix = RESPONSE_PREFIX.decode()
    for line in (raw.decode("utf-8").rstrip("\n") for raw in out):
        ident, _, rest = line[len(prefix):].partition(",")
        assert line.startswith(prefix) and rest.startswith('"result":') and line.endswith("}"), line[:300]
        answers[methods[int(ident) - 1]] = rest[len('"result":'):-1]
    assert set(answers) == set(methods), sorted(answers)
    return answers


def write_payload() -> str:
    versions = installed_versions()
    assert versions is not None, "fastmcp's distributions were not found beside it"
    path = os.path.join(HERE, "startup_payload.py")
    results = record()
    body = ["\n".join([
        '"""What fastmcp answers for server.py to initialize and the list requests, per protocol version.',
        "",
        "Generated by `python -m sentinel_memory.fast_start --write`; do not edit. fast_start.py serves it only while",
        "SERVER_CRC32 and VERSIONS match server.py and the installed packages; tests/test_fast_start.py",
        'checks that it is what fastmcp answers now."""',
        "",
        f"SERVER_CRC32 = {server_crc():#010x}",
        f"VERSIONS = {dict(sorted(versions.items()))!r}",
        "RESULTS = {",
    ])]
    for version, answers in results.items():
        body.append(f"    {version!r}: {{")
        for method, text in answers.items():
            body.append(f"        {method!r}: {text!r},")
        body.append("    },")
    body.append("}\n")
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write("\n".join(body))
    return path


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python -m sentinel_memory.fast_start --write   (records startup_payload.py from python server.py)")
    print(f"wrote {write_payload()}")
