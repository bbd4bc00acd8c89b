"""The one entry point: `python -m sentinel_memory`, the `sentinel-memory` executable and the
checkout's `python server.py` all come here, and this is the one place that decides whether the
words name a command (for people and git), a client's hook, or start the MCP server on stdio.

Standard library only until that decision: serving answers the client's handshake before fastmcp
is imported (proxy.py), and a command never imports FastMCP (git's drivers start fast).

Any Python parses this module, 2.7 included (no f-strings, type comments, print as a function), so
that `python -m sentinel_memory` under one older than 3.11 says so in one sentence (interpreter.py)
instead of stopping on the package's syntax.
"""

from __future__ import print_function

import sys

from .interpreter import too_old


def serves(argv):  # type: (list[str]) -> bool
    """True for the server's own words: none, or `--project DIR` (`--project=DIR`). Anything else
    (a command, --help, a typo) goes to the command line, which explains itself."""
    if not argv:
        return True
    if len(argv) == 2 and argv[0] == "--project":
        return True
    return len(argv) == 1 and argv[0].startswith("--project=")


def not_installed(exc):  # type: (ModuleNotFoundError) -> str
    """What to do when this interpreter lacks the requirements (e.g. the system python, not the venv's)."""
    return (
        "sentinel-memory: %s is not installed for %s. Start it with the python "
        "of the environment you installed it into (e.g. .venv/bin/python), or install it there "
        "(pip install -r requirements.txt in the checkout)." % (exc.name, sys.executable)
    )


def _signals():  # no type comment: typeshed has no _signal, so what it returns is Any
    """The interpreter's own signal module, loaded already (`signal` would first import enum)."""
    try:
        import _signal as signal  # type: ignore[import-not-found]
    except ImportError:  # an interpreter without it (Python 2): the public module
        import signal
    return signal


def hold_interrupts():  # type: () -> None
    """Until main() knows what runs: Ctrl+C (SIGINT) ends the process at once and quietly, by the
    signal's default action, as before Python started, instead of a KeyboardInterrupt traceback
    from whatever import it falls in (server.py does so before its own imports). A signal set to be
    ignored stays ignored."""
    signal = _signals()
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, signal.SIG_DFL)


def release_interrupts():  # type: () -> None
    """Python's own Ctrl+C again (KeyboardInterrupt), for a command or a hook, after hold_interrupts."""
    signal = _signals()
    if signal.getsignal(signal.SIGINT) == signal.SIG_DFL:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def stop_on_signals():  # type: () -> None
    """Ctrl+C in a terminal, or SIGINT/SIGTERM from a client, ends the server at once and quietly,
    at any point of start-up: fastmcp would wait for its stdin thread (a read that may never end).
    Every write of the memory file is atomic, so stopping between two calls or in one loses nothing
    that was saved. A signal the parent set to be ignored stays ignored. A client that closes its
    end of stdout ends the server at its next write (SIGPIPE's default), as any Unix filter: fastmcp
    would raise in its writer and then wait on stdin, maybe for good."""
    import os
    import signal

    def stop(signum, frame):
        os._exit(128 + signum)

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    for name in ("SIGINT", "SIGTERM"):
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, stop)


def main(argv=None):  # type: (list[str] | None) -> int
    hold_interrupts()  # server.py did so before its imports; `python -m` and the executable come here
    argv = sys.argv[1:] if argv is None else list(argv)
    hooked = argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv)
    old = too_old()
    if old:  # a person is told; a client's hook gets nothing and goes on
        if not hooked:
            print(old, file=sys.stderr)
        return 0 if hooked else 2
    if hooked:
        # A client's hook: straight to it, before the command line's imports. It exits 0 (a client
        # may act on another code: Claude Code and Gemini CLI block on 2), but for the one answer
        # that is a block on purpose: Claude Code's stop request (hooks/replies.py keep_going).
        import gc
        import time

        started = time.monotonic()  # its time bound counts its own imports too
        # A hook lives under a second and builds nothing that is garbage in a cycle: its imports and
        # the index it reads back would only be scanned again and again (gcpause.py).
        gc.disable()
        release_interrupts()
        try:
            from .hooks.run import main as hook

            return hook(argv[1:], started)
        except Exception as exc:  # an install that lacks a module: the client goes on without the hook
            import os

            if os.environ.get("SENTINEL_MEMORY_HOOK_DEBUG"):
                print("sentinel-memory hook: %s: %s" % (type(exc).__name__, exc), file=sys.stderr)
            return 0
    if serves(argv):
        stop_on_signals()
        from .faststart import proxy

        try:
            if proxy.wanted():
                return proxy.run(argv)
            from .gcpause import loaded

            with loaded():
                from . import server
        except ModuleNotFoundError as exc:
            print(not_installed(exc), file=sys.stderr)
            return 2
        server.main(argv)
        return 0
    try:
        release_interrupts()  # inside the try: a Ctrl+C from here on is the one handled below
        from .cli.commands import main as cli_main

        return cli_main(argv)
    except ModuleNotFoundError as exc:  # at import, or when a command loads what it needs (tomlkit)
        print(not_installed(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl+C while the command line loads (the command handles its own)
        print("sentinel-memory: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
