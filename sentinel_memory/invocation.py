"""How this install is started: the words a client config and git's drivers run.

A checkout (server.py beside the sentinel_memory package, started with a venv's python) is run as
`python server.py`. An installed package (pip, pipx, uv tool: sentinel_memory in site-packages) is
run through its `sentinel-memory` executable, which stays put across upgrades, or, without one,
`python -I -m sentinel_memory` (-I: nothing in the working directory can shadow the package).
Constants only: the entry point that decides between a command and the server is __main__.py.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

INSTALL_DIR = Path(__file__).resolve().parents[1]  # the folder that holds the sentinel_memory package
SERVER_SCRIPT = INSTALL_DIR / "server.py"


def _python(executable: str = sys.executable) -> str:
    """This interpreter's path as the configs name it: abspath, not resolve (a venv's python is a
    symlink that must not be followed out of the venv); `python` when that, beside it, is the same
    file, so that one venv started as `python3` (an installed script's first line) and as
    `python -m` names itself alike (else doctor reads the other as another install)."""
    path = os.path.abspath(executable)
    folder, name = os.path.split(path)
    plain = os.path.join(folder, "python.exe" if os.name == "nt" else "python")
    if name != os.path.basename(plain):
        try:
            if os.path.samefile(path, plain):
                return plain
        except OSError:
            pass
    return path


PYTHON = _python()
EXECUTABLE = "sentinel-memory"


def is_checkout(install_dir: Path = INSTALL_DIR) -> bool:
    """server.py beside the package, outside site-packages: a clone of the repository."""
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
    return [executable] if executable else [PYTHON, "-I", "-m", "sentinel_memory"]


def on_path() -> bool:
    """Whether the `sentinel-memory` that PATH finds is this install's executable (pipx or uv tool
    install --editable of a clone links it there): then that is the name people type, even when
    git starts the clone's server.py (the pre-commit check, the drivers)."""
    mine = _executable()
    if mine is None:  # a clone's own venv: no executable to find
        return False
    import shutil

    found = shutil.which(EXECUTABLE)
    if found is None:
        return False
    try:
        return os.path.samefile(found, mine)
    except OSError:
        return False


def invoked_as(argv0: str | None = None) -> str:
    """The words the person typed to run this, for usage lines and hints: `sentinel-memory` for
    the executable (a pipx or uv install of a clone too), `python server.py` for a checkout's
    script (`sentinel-memory` when that on PATH is this install), `python -m sentinel_memory` for
    the module; else what this install is started with."""
    given = argv0 if argv0 is not None else (sys.argv[0] if sys.argv else "")
    name = os.path.basename(given)
    if name.lower() in (EXECUTABLE, EXECUTABLE + ".exe", EXECUTABLE + "-script.py"):
        return EXECUTABLE
    if name == "server.py":
        return EXECUTABLE if on_path() else "python server.py"
    if name == "__main__.py" and Path(given).resolve().parent == INSTALL_DIR / "sentinel_memory":  # not pytest's
        return "python -m sentinel_memory"
    return "python server.py" if is_checkout() else EXECUTABLE


ENTRY = entry()
# What people type, for messages: `sentinel-memory init`, or `python server.py init` from a checkout.
SELF = invoked_as()


def _tool_bin_dirs() -> list[Path]:
    """Where pipx and uv tool put the commands they install: their settings, else ~/.local/bin."""
    chosen = (os.environ.get(name) for name in ("PIPX_BIN_DIR", "UV_TOOL_BIN_DIR", "XDG_BIN_HOME"))
    return [Path(folder) for folder in chosen if folder] + [Path.home() / ".local" / "bin"]


def path_fix() -> str:
    """How to put the `sentinel-memory` executable on PATH for this install: the committed client
    configs start it by that name on every teammate's machine. Installed already, in a folder PATH
    lacks (pipx's step before a new shell): say so, not to install it again."""
    name = EXECUTABLE + (".exe" if os.name == "nt" else "")
    on_path = {os.path.normcase(os.path.abspath(p)) for p in os.environ.get("PATH", "").split(os.pathsep) if p}
    for folder in _tool_bin_dirs():
        if (folder / name).is_file() and os.path.normcase(os.path.abspath(folder)) not in on_path:
            return (
                f"{folder / name} is installed, but {folder} is not on PATH: run pipx ensurepath "
                "(or uv tool update-shell) and open a new shell"
            )
    if is_checkout():
        return (
            f"install this clone as a command once: pipx install --editable {INSTALL_DIR} "
            f"(or uv tool install --editable {INSTALL_DIR})"
        )
    executable = _executable()
    if executable:
        return f"add {os.path.dirname(executable)} to PATH (or pipx install / uv tool install the package)"
    return "install the package as a command once: pipx install git+<repository> (or uv tool install)"
