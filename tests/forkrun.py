"""`python server.py <command>` without paying for the interpreter's start and the imports each time.

A fork server per test process (and per setting that changes how an interpreter starts: PYTHON*,
LC_*, LANG, TZ) starts the way `python server.py` starts (its path as argv[0], its folder first on
sys.path), imports the entry point and what the commands import (never fastmcp), and forks a copy
of itself for each command: the copy takes the test's pipes as its stdin, stdout and stderr, the
test's environment exactly and its working folder, and runs what server.py runs after its imports
(`sys.exit(main(argv))`). So a command here is a real, separate process with its own exit code,
files and children (git); what a fresh start adds is the interpreter's start and the imports,
which each command keeps a test of (test_cli.py::test_every_command_answers_a_forked_start_as_a_fresh_one
compares the two for every command, and the tests about starting, signals and terminals start
processes afresh). The product's own fast start forks an imported server the same way
(faststart/recorder.py); test_fast_start.py's reference does too.

`run(args, env=..., cwd=..., input=..., text=...)` returns what `subprocess.run([sys.executable,
SERVER, *args], capture_output=True, ...)` returns. Commands run one at a time per test process.
`serve_command(env)` gives the same for the MCP server, several at once, to a client that starts
a process (conftest's forked_connect).
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "server.py"
FORKS = hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")

# What the commands import on their way (cli, hooks, setup, git's drivers); never fastmcp.
PRELOAD = (
    "sentinel_memory.cli.commands", "sentinel_memory.hooks.run", "sentinel_memory.setup.doctor",
    "sentinel_memory.setup.initialise", "sentinel_memory.configfiles.configedit", "sentinel_memory.configfiles.jsonedit",
    "sentinel_memory.setup.hookconfig",
    "sentinel_memory.git.drivers", "sentinel_memory.redaction", "sentinel_memory.tools.answers",
)
COMMAND_IMPORTS = f"""\
for name in {PRELOAD!r}:
    __import__(name)
assert "fastmcp" not in sys.modules, "a command's import brought in fastmcp"
"""

# A fork server: an interpreter that starts the way `python server.py` starts (its path as argv[0],
# its folder first on sys.path), makes `imports`, and forks a copy of itself for each request on
# its socket (several at once): the copy takes the request's pipes as its stdin, stdout and stderr
# and its folder, and runs `child` (the request's `argv` and `env` in hand); the server answers
# the copy's pid, then its exit code when it ends.
FORK_LOOP = textwrap.dedent("""\
    import gc, json, os, select, socket, sys, threading
    sys.argv[0] = {server!r}
    sys.path[0] = {root!r}
    sys.path.insert(0, {root!r})
    {imports}
    from sentinel_memory.__main__ import main
    assert threading.active_count() == 1, "the imports started a thread: forking would lose it"
    gc.freeze()  # what the imports made stays out of the copies' collections (each would otherwise walk it)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(sys.argv[1])
    listener.listen()
    os.write(1, b"ready\\n")
    children = {{}}  # pid -> the connection its exit code goes back on
    while True:
        ready, _, _ = select.select([listener], [], [], 0.02 if children else None)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if not pid:
                break
            conn = children.pop(pid)
            conn.sendall(b"%d\\n" % os.waitstatus_to_exitcode(status))
            conn.close()
        if not ready:
            continue
        conn, _ = listener.accept()
        request, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        if not request:
            break
        cwd, argv, env = json.loads(request)
        pid = os.fork()
        if pid == 0:  # the request's process: its pipes, folder and arguments
            listener.close()
            conn.close()
            for other in children.values():
                other.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(cwd)
            sys.argv = [{server!r}, *argv]
    {child}
        for fd in fds:
            os.close(fd)
        conn.sendall(b"%d\\n" % pid)
        children[pid] = conn
""")

# The request's environment exactly, then what server.py runs after its imports.
AS_SERVER_PY = """\
os.environ.clear()
os.environ.update(env)
sys.exit(main(argv))  # as server.py, then the interpreter's own exit
"""


def fork_server_code(imports: str, child: str = AS_SERVER_PY) -> str:
    """FORK_LOOP with these imports (module level) and this child (run in each copy)."""
    return FORK_LOOP.format(root=str(ROOT), server=str(SERVER), imports=textwrap.dedent(imports).strip(),
                            child=textwrap.indent(textwrap.dedent(child), " " * 8).rstrip("\n"))


STARTUP = ("PYTHON", "LC_", "LANG", "TZ")  # read when an interpreter starts, not when a command runs


class ForkServer:
    def __init__(self, startup: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="sm-fork-", dir="/tmp" if os.path.isdir("/tmp") else None)
        self.socket = os.path.join(self.folder, "s")  # a socket's path has room for about 100 bytes
        env = {k: v for k, v in os.environ.items() if not k.startswith(STARTUP)}
        code = fork_server_code(COMMAND_IMPORTS)
        # Pipes as its stdin, stdout and stderr, as the tests give a command: Python sets up sys.stdin,
        # sys.stdout and sys.stderr by what they are at start-up (a pipe cannot seek, a file can).
        self.process = subprocess.Popen([sys.executable, "-c", code, self.socket], env={**env, **startup},
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        cwd=self.folder)
        assert self.process.stdout.readline() == b"ready\n", "the command fork server did not start"

    def close(self) -> None:
        self.process.kill()
        self.process.communicate()
        shutil.rmtree(self.folder, ignore_errors=True)


_servers: dict[tuple, ForkServer] = {}
_lock = threading.Lock()


@atexit.register
def _close_all() -> None:
    for server in _servers.values():
        server.close()
    _servers.clear()


def _server(env: dict[str, str]) -> ForkServer:
    startup = {k: v for k, v in env.items() if k.startswith(STARTUP)}
    key = tuple(sorted(startup.items()))
    if key not in _servers:
        _servers[key] = ForkServer(startup)
    return _servers[key]


def _decode(data: bytes, encoding: str | None, errors: str | None) -> str:
    text = data.decode(encoding or _locale_encoding(), errors or "strict")
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as subprocess's text mode (universal newlines)


def _locale_encoding() -> str:
    import locale

    return locale.getpreferredencoding(False)


def run(args: list[str], *, env: dict | None = None, cwd=None, input: bytes | str | None = None,
        timeout: float = 120, text: bool = False, encoding: str | None = None,
        errors: str | None = None) -> subprocess.CompletedProcess:
    """`python server.py ARGS` as a forked process; what subprocess.run(..., capture_output=True) returns.
    Where a process cannot fork or pass file descriptors (Windows), a fresh one."""
    args = [str(a) for a in args]
    environment = dict(os.environ if env is None else env)
    textual = text or encoding is not None or errors is not None
    if isinstance(input, str):
        input = input.encode(encoding or _locale_encoding(), errors or "strict")
    if not FORKS:
        done = subprocess.run([sys.executable, str(SERVER), *args], env=environment, cwd=cwd, input=input,
                              capture_output=True, timeout=timeout)
        if textual:
            done.stdout, done.stderr = _decode(done.stdout, encoding, errors), _decode(done.stderr, encoding, errors)
        return done
    with _lock:
        server = _server(environment)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if input is not None else (None, None)
        conn = socket.socket(socket.AF_UNIX)
        conn.settimeout(timeout)
        try:
            conn.connect(server.socket)
            request = json.dumps([str(cwd or os.getcwd()), args, environment]).encode()
            socket.send_fds(conn, [request], [in_r if in_r is not None else 0, out_w, err_w])
        finally:
            for fd in (in_r, out_w, err_w):
                if fd is not None:
                    os.close(fd)
        reply = conn.makefile("rb")
        pid = int(reply.readline())
        writer = None
        if in_w is not None:
            def feed(fd=in_w, data=input):
                try:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(fd, view):]
                except BrokenPipeError:
                    pass
                finally:
                    os.close(fd)
            writer = threading.Thread(target=feed, daemon=True)
            writer.start()
        chunks = {out_r: [], err_r: []}
        try:
            with selectors.DefaultSelector() as selector:
                for fd in chunks:
                    selector.register(fd, selectors.EVENT_READ)
                deadline = time.monotonic() + timeout
                while selector.get_map():
                    ready = selector.select(max(0.0, deadline - time.monotonic()))
                    if not ready:
                        os.kill(pid, signal.SIGKILL)
                        raise subprocess.TimeoutExpired([sys.executable, str(SERVER), *args], timeout)
                    for key, _ in ready:
                        data = os.read(key.fd, 1 << 16)
                        if data:
                            chunks[key.fd].append(data)
                        else:
                            selector.unregister(key.fd)
            code = int(reply.readline())
        finally:
            os.close(out_r)
            os.close(err_r)
            reply.close()
            conn.close()
            if writer is not None:
                writer.join(timeout)
    stdout, stderr = b"".join(chunks[out_r]), b"".join(chunks[err_r])
    if textual:
        stdout, stderr = _decode(stdout, encoding, errors), _decode(stderr, encoding, errors)
    return subprocess.CompletedProcess([sys.executable, str(SERVER), *args], code, stdout, stderr)


# ------------------------------------------------------------------------------ the MCP server, forked
# `python server.py [--project DIR]` served over stdio by a copy forked from an interpreter that has
# imported the server module (fastmcp): for the tests that talk to a real server process over real
# stdio about what it does (concurrent servers, locks, git, the project a client's folder names),
# not about how a new process starts (test_stdio.py, test_fast_start.py start it afresh; conftest's
# `connect` keeps doing so). A client starts SHIM (an interpreter without site-packages that
# imports a few standard modules) as it would start server.py; the shim hands its stdin, stdout
# and stderr, its folder, arguments and whole environment to the fork server, whose copy takes
# them, chdirs, and runs what server.py runs after its imports, fast start included; the shim
# relays SIGTERM and SIGINT to the copy and exits with its exit code. The copy's environment is
# the client's exactly: the defaults the server module's import put in os.environ (FASTMCP_*) are
# not in it, and fastmcp read its settings at that import, as a new process's does, from the same
# FASTMCP_ variables (the fork server is one per set of them).

SERVE_IMPORTS = """\
from sentinel_memory.gcpause import loaded
with loaded():
    from sentinel_memory import server  # noqa: F401 (fastmcp, imported once)
"""

SHIM = textwrap.dedent("""\
    import json, os, signal, socket, sys
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(sys.argv[1])
    socket.send_fds(conn, [json.dumps([os.getcwd(), sys.argv[2:], dict(os.environ)]).encode()], [0, 1, 2])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the copy holds the pipes now: the client sees their ends as the copy's
        os.dup2(null, fd)
    reply = conn.makefile("rb")
    pid = int(reply.readline())
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: os.kill(pid, signum))
    code = int(reply.readline())
    os._exit(code if code >= 0 else 128 - code)
""")

SETTINGS = ("FASTMCP_",)  # read by fastmcp when it is imported


class ServeServer(ForkServer):
    """The fork server of SERVE_IMPORTS, started with the interpreter settings and FASTMCP_ variables
    the clients' environment holds, and the test process's other variables."""

    def __init__(self, startup: dict[str, str]) -> None:
        self.folder = tempfile.mkdtemp(prefix="sm-serve-", dir="/tmp" if os.path.isdir("/tmp") else None)
        self.socket = os.path.join(self.folder, "s")
        env = {k: v for k, v in os.environ.items() if not k.startswith(STARTUP + SETTINGS)}
        code = fork_server_code(SERVE_IMPORTS)
        self.process = subprocess.Popen([sys.executable, "-c", code, self.socket], env={**env, **startup},
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        cwd=self.folder)
        assert self.process.stdout.readline() == b"ready\n", f"the server fork server did not start: {self.process.stderr.read()[-3000:]}"


def serve_command(env: dict[str, str]) -> list[str]:
    """The command and arguments (before the server's own) a client starts to get a forked server
    with this environment: [sys.executable, "-I", "-S", "-c", SHIM, socket]. Where a process cannot
    fork or pass file descriptors (Windows), [sys.executable, SERVER], a new one."""
    if not FORKS:
        return [sys.executable, str(SERVER)]
    startup = {k: v for k, v in env.items() if k.startswith(STARTUP + SETTINGS)}
    key = ("serve", *sorted(startup.items()))
    with _lock:
        if key not in _servers:
            _servers[key] = ServeServer(startup)
        return [sys.executable, "-I", "-S", "-c", SHIM, _servers[key].socket]
