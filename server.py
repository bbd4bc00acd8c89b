#!/usr/bin/env python3
"""Start Sentinel-Memory from a checkout: `python server.py [--project DIR]` serves MCP on stdio,
`python server.py <command>` runs a command (docs/commands.md). The same as `python -m
sentinel_memory` and the installed `sentinel-memory` executable; kept so client configs that name
this file go on working. Everything is in the sentinel_memory package beside it."""

import os
import sys

# First: Ctrl+C until the entry point has set up its own handling ends the process quietly (the
# signal's default action), not with a KeyboardInterrupt traceback from inside an import; as
# __main__.py's hold_interrupts, which is not importable yet. A signal set to be ignored stays so.
try:  # the interpreter's own module, loaded already (`signal` would first import enum)
    import _signal as signal  # type: ignore[import-not-found]
except ImportError:  # an interpreter without it (Python 2): the public module
    import signal
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, signal.SIG_DFL)

# This file's folder first, so the package beside it is the one that runs (not one installed elsewhere).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# Said before the package's own modules are imported, which an interpreter older than 3.11 cannot
# read (3.6 and 2.7 would stop on their syntax with a traceback). A client's hook gets nothing and
# goes on; a person reads why.
from sentinel_memory.interpreter import too_old  # noqa: E402

old = too_old()
if old:
    if sys.argv[1:2] != ["hook"]:
        sys.stderr.write(old + "\n")
    sys.exit(0 if sys.argv[1:2] == ["hook"] else 2)

from sentinel_memory.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
