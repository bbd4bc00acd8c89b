"""How this install is started: the words a client config and git's drivers run.

A checkout (server.py beside core/, started with a venv's python) is run as `python server.py`.
An installed package (pip, pipx, uv tool: server.py and core/ in site-packages) is run through its
`sentinel-memory` executable, which stays put across upgrades, or, without one, `python -I -m
server` (-I: the project's own core/ or server.py in the working directory cannot shadow ours).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

INSTALL_DIR = Path(__file__).resolve().parents[1]
SERVER_SCRIPT = INSTALL_DIR / "server.py"
# abspath, not resolve: a venv's python is a symlink that must not be followed out of the venv.
PYTHON = os.path.abspath(sys.executable)
EXECUTABLE = "sentinel-memory"


def is_checkout(install_dir: Path = INSTALL_DIR) -> bool:
    """server.py beside core/ outside site-packages: a clone (or an editable install) of the repository."""
    return (install_dir / "server.py").is_file() and install_dir.name not in ("site-packages", "dist-packages")


def _executable() -> str | None:
    """The installed `sentinel-memory` script: in this interpreter's scripts folder (a venv, pipx,
    uv tool), else the one running now (pip install --user puts it elsewhere)."""
    name = EXECUTABLE + (".exe" if os.name == "nt" else "")
    candidates = [Path(sysconfig.get_path("scripts")) / name, Path(sys.executable).parent / name]
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name in (EXECUTABLE, name):
        candidates.append(argv0)
    for candidate in candidates:
        if candidate.is_file():
            return os.path.abspath(candidate)
    return None


def entry() -> list[str]:
    """The command words that start this install (no arguments: the MCP server on stdio)."""
    if is_checkout():
        return [PYTHON, str(SERVER_SCRIPT)]
    executable = _executable()
    return [executable] if executable else [PYTHON, "-I", "-m", "server"]


ENTRY = entry()
# What people type, for messages: `server.py init` from a checkout, `sentinel-memory init` installed.
SELF = "server.py" if is_checkout() else EXECUTABLE


def console() -> int:
    """The `sentinel-memory` console script: the same entry as `python server.py`. A command (or
    --help) is answered without importing FastMCP, so git's drivers start fast; no command starts
    the MCP server on stdio."""
    argv = sys.argv[1:]
    from .cli import main as cli_main, names_a_command

    if names_a_command(argv) or "-h" in argv or "--help" in argv:
        return cli_main(argv)
    import server

    server.main(argv)
    return 0
