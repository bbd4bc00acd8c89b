"""Which project the memory belongs to: --project, then SENTINEL_MEMORY_PROJECT, then the cwd."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ProjectRootError
from .store import memory_path

ENV_VAR = "SENTINEL_MEMORY_PROJECT"

HOW_TO_SET = (
    'set "cwd" to the project folder in .cursor/mcp.json, or add "--project", "${workspaceFolder}" '
    f"to the server's args (Cursor expands it), or set {ENV_VAR}"
)


@dataclass(frozen=True)
class ProjectRoot:
    path: Path
    source: str  # "--project", the environment variable's name, or "cwd"

    @property
    def guarded(self) -> bool:
        """True when the root is the home directory or a filesystem root and did not come from
        --project: a client that ignored "cwd" started us there (or an environment variable was
        set too widely), and writing would scatter memory. --project is taken as meant."""
        return self.source != "--project" and is_home_or_root(self.path)

    @property
    def memory_file(self) -> Path:
        return memory_path(self.path)


def is_home_or_root(path: Path) -> bool:
    path = Path(path).resolve()
    return path == Path(path.anchor) or path == Path.home().resolve()


def resolve(project: str | None = None, environ: dict | None = None, cwd: str | None = None) -> ProjectRoot:
    """The project root by precedence; raises ProjectRootError for a path that cannot be used."""
    environ = os.environ if environ is None else environ
    if project:
        return ProjectRoot(_checked(project, "--project"), "--project")
    if environ.get(ENV_VAR):
        return ProjectRoot(_checked(environ[ENV_VAR], ENV_VAR), ENV_VAR)
    return ProjectRoot(Path(cwd or os.getcwd()).resolve(), "cwd")


def _checked(value: str, source: str) -> Path:
    if "${" in value:
        raise ProjectRootError(
            f"{source} is {value!r}: the client did not expand the variable. Give the project's "
            f"absolute path instead, or {HOW_TO_SET}."
        )
    try:
        path = Path(value).expanduser().resolve()
        usable = path.is_dir()
    except (OSError, RuntimeError) as exc:  # a name too long for the filesystem, a symlink loop
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ProjectRootError(f"{source} is {value[:200]!r}, which cannot be used ({reason}); {HOW_TO_SET}.") from None
    if not usable:
        raise ProjectRootError(f"{source} is {value[:200]!r}, which is not an existing directory; {HOW_TO_SET}.")
    return path


def refusal(root: ProjectRoot) -> str:
    return (
        f"The server was started in {root.path} (the home directory or a filesystem root), which is not a "
        f"project, and the client offered no workspace root. Nothing was read or saved. To fix it, {HOW_TO_SET}."
    )
