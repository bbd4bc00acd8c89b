#!/usr/bin/env python3
"""Start Sentinel-Memory from a checkout: `python server.py [--project DIR]` serves MCP on stdio,
`python server.py <command>` runs a command (docs/commands.md). The same as `python -m
sentinel_memory` and the installed `sentinel-memory` executable; kept so client configs that name
this file go on working. Everything is in the sentinel_memory package beside it."""

import os
import sys

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
