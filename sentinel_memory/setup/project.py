"""Which project the memory belongs to: --project, then SENTINEL_MEMORY_PROJECT, then the current
directory's project, found the way git finds its root."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from ..errors import ProjectRootError
from ..record import contextdir
from ..record.store import memory_path
from ..values import Value

ENV_VAR = "SENTINEL_MEMORY_PROJECT"


# The command line's "client": a person at a terminal, who gets the one thing that applies and
# where the rest is written, not every client's setting.
PERSON = "person"


def how_to_set(client: str | None = None, unexpanded: bool = False) -> str:
    """The fix for one client when known (by clientInfo name or our short name), else for each
    (the fixes are clients.py's; loaded only here: a hook resolves its project without them)."""
    if client == PERSON:
        return f"give the project's folder (docs/clients.md shows where each client sets it), or set {ENV_VAR}"
    from .clients import CLIENTS, client_key

    key = client if client in CLIENTS else client_key(client)
    if key is None:
        fix = "; ".join(f"{c.title}: {c.fix}" for c in CLIENTS.values()) + f"; or set {ENV_VAR}"
    else:
        fix = f"{CLIENTS[key].fix}, or set {ENV_VAR}"
    if unexpanded:  # the variable arrived as text: suggesting it again would not help
        fix = (
            "give the project's absolute path instead (this client does not expand variables there), "
            f"or drop --project and start the server in the project; or set {ENV_VAR}"
        )
    return fix


class ProjectRoot(Value):
    __slots__ = ("path", "source", "found", "start")

    def __init__(self, path: Path, source: str, found: str = "", start: Path | None = None) -> None:
        self.path = path
        self.source = source  # "--project", the environment variable's name, or "cwd"
        self.found = found  # for source "cwd": how the root was found from `start`
        self.start = start  # for source "cwd": the current directory

    @property
    def guarded(self) -> bool:
        """True when the root is the home directory or a filesystem root and did not come from
        --project: a client that ignored "cwd" started us there (or an environment variable was
        set too widely), and writing would scatter memory. --project is taken as meant."""
        return self.source != "--project" and is_home_or_root(self.path)

    @property
    def memory_file(self) -> Path:
        return memory_path(self.path)

    def describe(self) -> str:
        """Where the root came from, in words: "--project", or "the current directory /a/b: ..."."""
        if self.source != "cwd":
            return self.source
        if self.start is None or self.start == self.path:
            return "the current directory"
        return f"the current directory {self.start}: {self.found}"


def is_home_or_root(path: Path) -> bool:
    path = Path(path).resolve()
    return path == Path(path.anchor) or path == Path.home().resolve()


def find_root(start: Path) -> tuple[Path, str]:
    """The project a directory belongs to, as git finds its root: walking up from `start`, the
    nearest directory holding .context/memory_log.jsonl or a .context/ that `init` made (a
    monorepo's project before its first lesson), else the nearest holding .git (a folder, or the
    file of a linked work tree or submodule), else `start` itself. The walk stops at the first
    .git (a submodule is its own project) and never climbs to the home directory or a filesystem
    root, which are not projects (a home kept in git must not swallow its folders)."""
    start = Path(start).resolve()
    if is_home_or_root(start):
        return start, ""
    for directory in (start, *start.parents):
        if is_home_or_root(directory):
            break
        if memory_path(directory).is_file():
            return directory, "the nearest folder with .context/memory_log.jsonl"
        if contextdir.ours(directory / ".context"):
            return directory, "the nearest folder with a .context/ that init made"
        if (directory / ".git").exists():
            return directory, "the top of its git work tree"
    return start, ""


def enclosing_project(root: Path) -> Path | None:
    """A folder above `root`, in the same git work tree, that holds a memory file of its own: then
    `root`'s memory is a stray one (written in a subfolder), to be folded into that one."""
    root = Path(root).resolve()
    if (root / ".git").exists():
        return None  # the top of a work tree or a submodule: a project of its own
    for directory in root.parents:
        if is_home_or_root(directory):
            return None
        if memory_path(directory).is_file():
            return directory
        if (directory / ".git").exists():
            return None
    return None


def resolve(
    project: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: str | None = None,
    client: str | None = None,
) -> ProjectRoot:
    """The project root by precedence; raises ProjectRootError for a path that cannot be used.
    client: the connected client's name, when known, to name its fix in an error."""
    environ = os.environ if environ is None else environ
    if project:
        return ProjectRoot(_checked(project, "--project", client), "--project")
    if environ.get(ENV_VAR):
        return ProjectRoot(_checked(environ[ENV_VAR], ENV_VAR, client), ENV_VAR)
    start = Path(cwd or os.getcwd()).resolve()
    path, found = find_root(start)
    return ProjectRoot(path, "cwd", found, start)


def _checked(value: str, source: str, client: str | None = None) -> Path:
    if "${" in value:
        raise ProjectRootError(
            f"{source} is {value!r}: the client did not expand the variable. To fix it, "
            f"{how_to_set(client, unexpanded=True)}."
        )
    try:
        path = Path(value).expanduser().resolve()
        usable = path.is_dir()
    except (OSError, RuntimeError) as exc:  # a name too long for the filesystem, a symlink loop
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ProjectRootError(
            f"{source} is {value[:200]!r}, which cannot be used ({reason}); {how_to_set(client)}."
        ) from None
    if not usable:
        raise ProjectRootError(
            f"{source} is {value[:200]!r}, which is not an existing directory; {how_to_set(client)}."
        )
    return path


def refusal(root: ProjectRoot, client: str | None = None) -> str:
    where = f"The server was started in {root.path}" if root.source == "cwd" else f"{root.source} is {root.path}"
    return (
        f"{where} (the home directory or a filesystem root), which is not a "
        f"project, and the client offered no workspace root. Nothing was read or saved. To fix it, "
        f"{how_to_set(client)}."
    )
