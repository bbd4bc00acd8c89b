#!/usr/bin/env python3
"""Start Sentinel-Memory from a checkout: `python server.py [--project DIR]` serves MCP on stdio,
`python server.py <command>` runs a command (docs/commands.md). The same as `python -m
sentinel_memory` and the installed `sentinel-memory` executable; kept so client configs that name
this file go on working. Everything is in the sentinel_memory package beside it."""

import os
import sys

# This file's folder first, so the package beside it is the one that runs (not one installed elsewhere).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sentinel_memory.__main__ import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
