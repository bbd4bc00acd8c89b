"""Answer an MCP client's handshake before fastmcp is imported (docs/design.md, "Start-up").

Standard library only. On a POSIX system, with stdin not a terminal and fastmcp's answers for
this server code and these packages in the user's cache (faststart/cache.py), fd 0 and fd 1 become
pipes with two threads between them and the real stdin/stdout; the main thread imports the server
and runs fastmcp unchanged on the pipes, and every byte the client sends reaches it in order.
While fastmcp loads, the stdin thread answers a prefix of the conversation from the cache (a plain
`initialize`, `notifications/initialized`, the first page of each list, `logging/setLevel`; or
stateless `server/discover` and lists): only requests whose shape fastmcp surely accepts, with
the bytes fastmcp sends for them. At the first line it does not answer, it steps aside for good,
so fastmcp answers that line and everything after it, in order; the stdout thread drops
fastmcp's own answers to what was answered here (and forgets the cache should they differ).
Without answers for this key, the start is ordinary and records them for the next one.
"""

from __future__ import annotations

import os
import sys

from ..gcpause import loaded
from .cache import DISCOVER, ENV, LISTS, META, RESPONSE_PREFIX, SET_LEVEL, wanted

__all__ = ["ENV", "run", "wanted"]

EOF_MARK = b"\x00\n"  # never in JSON text: the main thread's "fastmcp wrote its last byte"
LINE_LIMIT = 1 << 20  # a longer line is never answered here (and never parsed twice)
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
ENVELOPE = frozenset({"jsonrpc", "id", "method", "params"})
ABSENT = object()


def run(argv: list[str]) -> int:
    """Serve: with the fast start when its answers are recorded, else the ordinary way (and record them)."""
    from . import cache as fast_cache

    try:
        terminal = os.isatty(0)
    except OSError:
        terminal = True
    env = fast_cache.settings()
    path, digest = fast_cache.where(argv)
    answers = fast_cache.load(path, digest) if path else None
    if terminal or answers is None or path is None:
        with loaded():
            from sentinel_memory import server

        if path and answers is None:
            from . import recorder

            recorder.record_in_background(path, digest, env)
        server.main(argv)
        return 0
    proxy = Proxy(answers, path)
    try:
        with loaded():
            from sentinel_memory import server

        server.main(argv)
    finally:
        proxy.close()
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Proxy:
    """The two threads between the client and fastmcp, and what they share."""

    def __init__(self, answers: dict, path: str) -> None:
        import threading

        self.handshake, self.stateless, self.path = answers["handshake"], answers["stateless"], path
        self.lock = threading.Lock()  # one writer at a time on the real stdout; guards `sent`
        self.sent: dict[bytes, list[bytes]] = {}  # id (JSON text) -> answer lines sent here, not yet fastmcp's
        self.used: set[bytes] = set()  # every id answered here
        self.answering = True  # False once a line went to fastmcp, fastmcp answered, or stdout broke
        self.ready = False  # fastmcp answered: it answers everything now
        self.broken = False  # the client's end of stdout is closed
        self.phase = "start"  # start -> initialized? -> listing | stateless
        self.version: str | None = None
        self.answered = 0
        self.real_in = os.dup(0)
        self.real_out = os.dup(1)
        read_0, to_server = os.pipe()
        self.to_server: int | None = to_server  # None once closed
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

        parts: list[bytes] = []  # the current line so far (only while answering)
        size = 0
        to_server = self.to_server  # this thread alone closes it, at the end
        if to_server is None:
            return
        try:
            while True:
                chunk = os.read(self.real_in, 65536)
                if not chunk:
                    break
                start = 0
                while self.answering:
                    end = chunk.find(b"\n", start)
                    if end < 0:
                        size += len(chunk) - start
                        parts.append(chunk[start:])
                        if size > LINE_LIMIT:
                            self._step_aside()
                        break
                    parts.append(chunk[start:end])
                    line, parts, size, start = b"".join(parts), [], 0, end + 1
                    try:
                        handled = self._handle(json, line)
                    except Exception:  # never lose a byte over the fast answer: fastmcp answers
                        handled = False
                    if not handled:
                        self._step_aside()
                _write_all(to_server, chunk)
        except OSError:
            pass
        finally:
            if self.answering and self.answered and not self.ready and not b"".join(parts):
                # The client left after what was answered here (e.g. a tools/list probe): nothing
                # is owed to it, so do not make it wait for fastmcp to load only to exit.
                os._exit(0)
            with self.lock:
                os.close(to_server)
                self.to_server = None

    def _step_aside(self) -> None:
        if self.answering:
            self.answering = False
            sys.setswitchinterval(self.switch)

    def _handle(self, json, line: bytes) -> bool:
        """Answer one client line here, or consume a notification fastmcp answers nothing to;
        False for anything else (fastmcp answers it, and every line after it)."""
        if b"\r" in line:  # fastmcp's reader also ends a line at a bare \r
            return False
        message = json.loads(line.decode("utf-8"), object_pairs_hook=_unique)
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not message.keys() <= ENVELOPE
            or not isinstance(message.get("method"), str)
        ):
            return False
        method, params = message["method"], message.get("params", ABSENT)
        if "id" not in message:
            if method == "notifications/initialized" and self.phase == "initialized?" and params in (ABSENT, {}):
                self.phase = "listing"
                return True
            return False
        key = _key(message["id"])
        if key is None or key in self.used:
            return False
        answer = None
        if self.phase in ("start", "stateless") and method in (DISCOVER, *LISTS):
            version = _stateless_version(params)
            if version in self.stateless:
                answer, self.phase = self.stateless[version][method], "stateless"
        elif self.phase == "start" and method == "initialize" and _plain_initialize(params):
            version = params["protocolVersion"]
            if version in self.handshake:
                answer, self.phase, self.version = self.handshake[version]["initialize"], "initialized?", version
        elif self.phase == "listing" and method in LISTS and _first_page(params):
            answer = self.handshake[self.version][method]
        elif (
            self.phase == "listing"
            and method == SET_LEVEL
            and isinstance(params, dict)
            and params.keys() == {"level"}
            and params["level"] in LEVELS
        ):
            answer = self.handshake[self.version][method]
        if answer is None:
            return False
        data = RESPONSE_PREFIX + key + b',"result":' + answer.encode() + b"}\n"
        self.answered += 1
        self.used.add(key)
        with self.lock:
            self.sent.setdefault(key, []).append(data)
            if not self.broken:
                try:
                    _write_all(self.real_out, data)
                except OSError:
                    self.broken = True
                    self._step_aside()
        return True

    # ---------------------------------------------------------------- fastmcp -> client
    def _write(self) -> None:
        pending = b""
        try:
            while not self.broken:
                chunk = os.read(self.from_server, 65536)
                if not chunk or self.broken:
                    break
                if not self.sent and not pending:
                    done = chunk.endswith(EOF_MARK)
                    out = [chunk[: -len(EOF_MARK)] if done else chunk]
                else:
                    lines = (pending + chunk).split(b"\n")
                    pending, out, done = lines.pop(), [], False
                    for line in lines:
                        if line == EOF_MARK[:-1]:
                            done = True
                            break
                        if not self._drop(line + b"\n"):
                            out.append(line + b"\n")
                data = b"".join(out)
                if data:
                    with self.lock:
                        try:
                            _write_all(self.real_out, data)
                        except OSError:
                            self.broken = True
                if done:
                    return
        except OSError:
            pass
        # The client closed its end of stdout: the server ends, as it would without this proxy.
        # fastmcp's stdin reaches EOF (what the client sends goes nowhere now) and its next write fails.
        self.broken = True
        self._step_aside()
        with self.lock:
            if self.to_server is not None:
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self.to_server)
                os.close(null)
        try:
            os.close(self.from_server)
        except OSError:
            pass

    def _drop(self, line: bytes) -> bool:
        """True for fastmcp's answer to a request answered here (fastmcp is serving from now on)."""
        if not line.startswith(RESPONSE_PREFIX):
            return False
        rest = line[len(RESPONSE_PREFIX) :]
        with self.lock:  # the stdin thread adds answers meanwhile
            for key in self.sent:
                if rest.startswith(key + b',"'):
                    break
            else:
                return False
            sent = self.sent[key].pop(0)
            if not self.sent[key]:
                del self.sent[key]
        if not self.ready:
            self.ready = True
            self._step_aside()
        if sent != line:
            from . import cache as fast_cache

            fast_cache.forget(self.path)
            sys.stderr.write(
                f"sentinel-memory: the fast start answered request {key.decode()} otherwise than fastmcp "
                f"now does; its recorded answers are removed and recorded again at the next start\n"
            )
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


# ------------------------------------------------------------------------------ what is answered here
# Each check accepts only shapes that fastmcp's models surely accept and whose answer does not
# depend on them; anything else (however valid) is left to fastmcp.


def _unique(pairs):
    """A JSON object without repeated keys (parsers differ on which one wins)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("repeated key")
    return out


def _key(ident) -> bytes | None:
    """The id's JSON text, when fastmcp surely writes it back the same way."""
    if type(ident) is int and -(1 << 53) < ident < (1 << 53):
        return str(ident).encode()
    if (
        type(ident) is str
        and 0 < len(ident) <= 64
        and ident.isascii()
        and all(c.isalnum() or c in "-_.:" for c in ident)
    ):
        return b'"' + ident.encode() + b'"'
    return None


def _text(value) -> bool:
    return type(value) is str


def _plain_info(info) -> bool:
    """clientInfo: a name and a version, and maybe a title, all strings."""
    return (
        type(info) is dict
        and {"name", "version"} <= info.keys() <= {"name", "version", "title"}
        and all(_text(v) for v in info.values())
    )


def _empty(value) -> bool:
    return type(value) is dict and not value


def _plain_capabilities(capabilities) -> bool:
    """Roots (maybe listChanged), sampling and elicitation with their empty sub-capabilities: what
    clients declare; they change nothing this server answers here."""
    if type(capabilities) is not dict or not capabilities.keys() <= {"roots", "sampling", "elicitation"}:
        return False
    roots = capabilities.get("roots", {})
    if (
        type(roots) is not dict
        or not roots.keys() <= {"listChanged"}
        or any(type(v) is not bool for v in roots.values())
    ):
        return False
    for name, parts in (("sampling", {"context", "tools"}), ("elicitation", {"form", "url"})):
        value = capabilities.get(name, {})
        if type(value) is not dict or not value.keys() <= parts or not all(_empty(v) for v in value.values()):
            return False
    return True


def _plain_initialize(params) -> bool:
    return (
        type(params) is dict
        and params.keys() == {"protocolVersion", "capabilities", "clientInfo"}
        and _text(params["protocolVersion"])
        and _plain_capabilities(params["capabilities"])
        and _plain_info(params["clientInfo"])
    )


def _first_page(params) -> bool:
    """A list request without a cursor: no params, {} or only a progress token in _meta (Codex)."""
    if params is ABSENT or _empty(params):
        return True
    if type(params) is not dict or params.keys() != {"_meta"} or type(params["_meta"]) is not dict:
        return False
    meta = params["_meta"]
    return meta.keys() == {"progressToken"} and _key(meta["progressToken"]) is not None


def _stateless_version(params) -> str | None:
    """A stateless-era request's protocol version, when its _meta holds the version, the client's
    info and plain capabilities, and maybe a log level, and nothing else."""
    if type(params) is not dict or params.keys() != {"_meta"} or type(params["_meta"]) is not dict:
        return None
    meta = params["_meta"]
    required = {META + "protocolVersion", META + "clientInfo", META + "clientCapabilities"}
    if not required <= meta.keys() <= required | {META + "logLevel"}:
        return None
    if not _plain_info(meta[META + "clientInfo"]) or not _plain_capabilities(meta[META + "clientCapabilities"]):
        return None
    if meta.get(META + "logLevel", "debug") not in LEVELS:
        return None
    version = meta[META + "protocolVersion"]
    return version if _text(version) else None
