"""Where the fast start keeps fastmcp's own answers (docs/design.md, "Start-up"); faststart/recorder.py
records them. Standard library only: read before fastmcp is imported, and by `doctor`.

The answers live in the user's cache folder ($XDG_CACHE_HOME or ~/.cache, ~/Library/Caches,
%LOCALAPPDATA%), in `sentinel-memory/fast-start-<key>.json`, where the key hashes this package's
code, the installed distributions beside fastmcp, the interpreter and the FASTMCP_ settings:
anything that could change what fastmcp answers gives another key. A start that finds no file for
its key is an ordinary one; once fastmcp is imported it forks a detached, low-priority recorder
that serves a scratch folder the ordinary way for each protocol version, keeps fastmcp's answers
and writes the file atomically. Read with a size bound, never through a link, only when it is a
regular file of this user, parses, and names this key.
"""

from __future__ import annotations

import json
import os
import stat
import sys

ENV = "SENTINEL_MEMORY_FAST_START"
# The package whose code the answers depend on: every .py file under it is part of the key.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "sentinel-memory fast start 1"
LIMIT = 4 << 20  # bytes: the file is ~80 KB
# Environment variables that may shape fastmcp's answers (its settings' prefix). Not MCP_*: the SDK
# reads none, and clients set some (MCP_TIMEOUT) or pass a reduced environment to the server, so
# `doctor` in the user's shell would look for another key than the server used.
SETTINGS = ("FASTMCP_",)
# What the cache holds per protocol version (see faststart/proxy.py for when each is served).
LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
SET_LEVEL = "logging/setLevel"
DISCOVER = "server/discover"
HANDSHAKE_METHODS = ("initialize", *LISTS, SET_LEVEL)
STATELESS_METHODS = (DISCOVER, *LISTS)
META = "io.modelcontextprotocol/"
RESPONSE_PREFIX = b'{"jsonrpc":"2.0","id":'


def wanted() -> bool:
    """True on a POSIX system with the fast start not turned off (the caller has decided to serve)."""
    return os.name == "posix" and os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def folder() -> str | None:
    """The per-user cache folder for this program, or None when there is no usable one."""
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA", "")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not os.path.isabs(base):  # unset, empty or relative: the XDG default
            base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sentinel-memory") if os.path.isabs(base) else None


def _site() -> str | None:
    """The folder fastmcp is installed in (its *.dist-info folders are beside it)."""
    for entry in sys.path:
        where = entry or "."
        if os.path.isfile(os.path.join(where, "fastmcp", "__init__.py")):
            return where
    return None


def settings() -> dict[str, str]:
    """The FASTMCP_ environment variables (taken before the server module sets its defaults)."""
    return {name: value for name, value in os.environ.items() if name.startswith(SETTINGS)}


def key(env: dict[str, str]) -> str | None:
    """The hash of everything the recorded answers depend on; None without fastmcp."""
    import hashlib

    site = _site()
    if site is None:
        return None
    digest = hashlib.sha256()
    digest.update(f"{FORMAT}\0{sys.version}\0{sys.implementation.cache_tag}\0".encode())
    try:
        names = sorted(n for n in os.listdir(site) if n.endswith((".dist-info", ".egg-info", ".egg-link", ".pth")))
        for where, folders, files in os.walk(HERE):
            folders[:] = sorted(f for f in folders if f != "__pycache__")
            sub = os.path.relpath(where, HERE).replace(os.sep, "/")
            for name in sorted(files):
                if name.endswith(".py"):
                    with open(os.path.join(where, name), "rb") as handle:
                        code = handle.read()
                    digest.update(f"{sub}/{name}\0{len(code)}\0".encode() + code)
    except OSError:
        return None
    digest.update("\0".join(names).encode())
    for name in sorted(env):
        digest.update(f"\0{name}={env[name]}".encode(errors="surrogateescape"))
    return digest.hexdigest()[:40]


def project_of(argv: list[str]) -> str:
    """The project folder the server was asked to serve (as __main__.serves parses argv)."""
    if argv[:1] == ["--project"] and len(argv) == 2:
        return argv[1]
    if argv and argv[0].startswith("--project="):
        return argv[0][len("--project=") :]
    return os.environ.get("SENTINEL_MEMORY_PROJECT") or "."


def top_of(start: str) -> str:
    """The folder whose files a repository decides, for a server started at `start` (a project's
    subfolder, say): the top of the git work tree it is in (the nearest .git), else the nearest
    folder holding .context/memory_log.jsonl, else `start`; the walk never reaches the home
    folder or a filesystem root."""
    try:
        here = first = os.path.realpath(start)
        home = os.path.realpath(os.path.expanduser("~"))
    except (OSError, ValueError):
        return start
    memory = None
    while here != home and os.path.dirname(here) != here:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        if memory is None and os.path.isfile(os.path.join(here, ".context", "memory_log.jsonl")):
            memory = here
        here = os.path.dirname(here)
    return memory or first


def inside(path: str, project: str) -> bool:
    """True when path is in the project folder (the home folder and / are not projects)."""
    try:
        path, project = os.path.realpath(path), os.path.realpath(project)
    except (OSError, ValueError):
        return True
    if project in (os.path.realpath(os.path.expanduser("~")), os.path.dirname(project)):
        return False
    return path == project or path.startswith(project.rstrip(os.sep) + os.sep)


def where(argv: list[str]) -> tuple[str, str] | tuple[None, str]:
    """(file, key) for this server, or (None, why not)."""
    base = folder()
    if base is None:
        return None, "no cache folder (set XDG_CACHE_HOME or HOME to an absolute path)"
    if inside(base, top_of(project_of(argv))):
        return None, f"the cache folder {base} is inside the project (it is never kept there)"
    digest = key(settings())
    if digest is None:
        return None, "fastmcp is not installed for this python"
    return os.path.join(base, f"fast-start-{digest}.json"), digest


def load(path: str, digest: str) -> dict | None:
    """The recorded answers, {"handshake": {version: {method: text}}, "stateless": {...}}, or None
    when the file is missing, too big, a link, not a regular file of this user, or not ours."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_size > LIMIT
            or (hasattr(os, "getuid") and info.st_uid != os.getuid())
        ):
            return None
        chunks, size = [], 0
        while size <= LIMIT:
            chunk = os.read(fd, LIMIT + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > LIMIT:
            return None
        data = json.loads(b"".join(chunks).decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
        return None
    finally:
        os.close(fd)
    return data if _valid(data, digest) else None


def _valid(data, digest: str) -> bool:
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != digest:
        return False
    for era, methods in (("handshake", HANDSHAKE_METHODS), ("stateless", STATELESS_METHODS)):
        versions = data.get(era)
        if not isinstance(versions, dict):
            return False
        for version, answers in versions.items():
            if not isinstance(version, str) or not isinstance(answers, dict) or set(answers) != set(methods):
                return False
            for text in answers.values():
                try:
                    if not isinstance(text, str) or not isinstance(json.loads(text), dict):
                        return False
                except (ValueError, RecursionError):
                    return False
    return True


def forget(path: str) -> None:
    """Remove a file whose answers fastmcp contradicted (the next start records them again)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def private_folders(path: str) -> None:
    """Make the folder `path` and each missing folder above it, mode 700 (os.makedirs gives the
    mode to the last one only: a hook run before the server's first start left
    ~/.cache/sentinel-memory readable by all)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass


def store(path: str, data: dict) -> None:
    """Write the file atomically (a temporary file in the same folder, then a rename)."""
    import tempfile

    base = os.path.dirname(path)
    private_folders(base)
    fd, temp = tempfile.mkstemp(prefix=".fast-start-", suffix=".tmp", dir=base)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        forget(temp)
        raise
    _prune(base, os.path.basename(path))


def _prune(base: str, keep: str, days: int = 30) -> None:
    """Remove other keys' files (other versions, other checkouts) untouched for `days`."""
    import time

    old = time.time() - days * 86400
    try:
        names = os.listdir(base)
    except OSError:
        return
    for name in names:
        if name.startswith("fast-start-") and name.endswith((".json", ".lock")) and not name.startswith(keep[:-5]):
            try:
                if os.lstat(os.path.join(base, name)).st_mtime < old:
                    os.unlink(os.path.join(base, name))
            except OSError:
                pass


ROOM = 1 << 20  # bytes free that recording needs, with room to spare (the file is ~80 KB)


def unwritable(base: str) -> str | None:
    """Why the recorder could not write its file into the folder `base` (made when missing), or
    None: the nearest folder that exists is not one, is not writable, or its file system is full."""
    here = base
    while not os.path.lexists(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    if not os.path.isdir(here):
        return f"the cache folder {base} cannot be made ({here} is not a folder)"
    if not os.access(here, os.W_OK | os.X_OK):
        return f"the cache folder {here} is read-only"
    try:
        info = os.statvfs(here)
    except (OSError, AttributeError):
        return None
    if info.f_bavail * info.f_frsize < ROOM:
        return f"the file system of the cache folder {here} is full"
    return None


def status(argv: list[str]) -> tuple[bool, str]:
    """For `doctor`: (something to fix, a sentence saying whether the next start is fast, and why not)."""
    if os.name != "posix":
        return False, "fast start: not on this system (POSIX only); the server starts the ordinary way"
    if not wanted():
        return False, f"fast start: off ({ENV}={os.environ.get(ENV)})"
    path, digest = where(argv)
    if path is None:
        return True, f"fast start: off: {digest}"
    if load(path, digest) is None:
        blocked = unwritable(os.path.dirname(path))
        if blocked:
            return True, f"fast start: off: {blocked}, so no start can record fastmcp's answers there"
        return False, (
            f"fast start: the next start records fastmcp's answers for this server code and these packages "
            f"in {os.path.dirname(path)}; every start after it is fast"
        )
    return False, f"fast start: ready (fastmcp's answers in {path})"
