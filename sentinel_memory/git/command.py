"""Every git process this package starts goes through here: one place that pins the settings which
keep a repository's own configuration from running commands (docs/security.md, "git runs none of
the repository's commands").

A cloned or downloaded repository carries its .git/config, and git obeys it. The keys below are
the ones that make the git subcommands we call (rev-parse, log, ls-files, ls-tree, cat-file,
merge-base, symbolic-ref, check-attr, config, merge-file; diff in the pre-commit check, status in
the client hooks, init in doctor's probe) start a program; each is pinned on the command line,
which outranks every configuration file:

- core.fsmonitor (and Git for Windows' core.useBuiltinFSMonitor): a hook git runs whenever it
  reads the index with the monitor on (ls-files -u, ls-files --others, ls-files --stage, status,
  diff --cached).
- log.showSignature: makes log verify each signed commit with gpg.program,
  gpg.ssh.program or gpg.x509.program.
- protocol.allow and protocol.<name>.allow for every transport git has: in a partial clone a
  missing object is fetched from the promisor remote on demand (log -M's rename detection,
  cat-file), and a fetch runs what the repository names: an ext:: URL's command, core.sshCommand,
  core.gitProxy, remote.<name>.uploadpack, credential helpers. A per-name setting in the
  repository would outrank protocol.allow alone, so each name is pinned; the environment's empty
  GIT_ALLOW_PROTOCOL denies every transport whatever any config says (and GIT_NO_LAZY_FETCH, on
  git 2.45 and later, turns the fetch off altogether).
- safe.bareRepository=explicit: git honours it from the command line only; a bare repository
  planted inside the project (its own HEAD, config and objects in .context/) is not picked up as
  the repository, with its own config.

Settings that name a file git reads, which a FIFO there would make git wait on for ever (our calls
would wait out their timeouts): mailmap.file and mailmap.blob empty and log.mailmap off (no
mailmap read at all, not even the work tree's .mailmap), core.excludesFile and core.attributesFile
empty (the repository's own .gitignore and .gitattributes still count). A configuration file
cannot be kept from including another (include.path, includeIf.<condition>.path), so before git
runs, `hazard` reads the configuration files git would read and the files they include, and the
files git opens to recognise the repository (its HEAD and commondir); when one of them is not a
regular file (a FIFO, a device) git is not started and run() raises GitWouldWait (an OSError, as a
missing git) with a sentence naming it.

The environment: the variables that tie git to a repository (GIT_DIR, GIT_WORK_TREE,
GIT_INDEX_FILE, GIT_COMMON_DIR, GIT_OBJECT_DIRECTORY and the rest of `git rev-parse
--local-env-vars`) are removed, so a process started from another repository's hook (a client
launched by it) runs git for the project's own repository, found from the folder it runs in. A
caller that means an index (the pre-commit check, the index of the commit being made) passes it.

Options instead of settings, added by the subcommands that take them: --no-pager everywhere
(core.pager, pager.<command>: only at a terminal, and ours are never one), --no-ext-diff
(diff.external, diff.<driver>.command) and --no-textconv (diff.<driver>.textconv) on log and on
the pre-commit check's diff.
Content filters (filter.<name>.clean, .smudge, .process): `git status` hashes a tracked file whose
stat data no longer matches the index (every file of an unpacked archive) through its clean
filter, a program the repository's configuration names. A caller of status first reads the
filters' names with `git config` and pins each empty (filter_pins), and counts a submodule by
its commit only (git runs nothing in it; its own configuration names its filters). What our
subcommands never reach is left alone: hooks and core.hooksPath (commit, merge and the like),
core.editor, core.askPass and pagers at a terminal.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import time

TRANSPORTS = ("ext", "fd", "file", "git", "ssh", "http", "https", "ftp", "ftps", "rsync")
SAFE_SETTINGS = (
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("log.showSignature", "false"),
    ("safe.bareRepository", "explicit"),
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in TRANSPORTS),
    ("log.mailmap", "false"),
    ("mailmap.file", ""),
    ("mailmap.blob", ""),
    ("core.excludesFile", ""),
    ("core.attributesFile", ""),
)
# What ties git to one repository: what git itself clears when it runs for another one
# (`git rev-parse --local-env-vars`), and the configuration from the environment that goes with it.
REPOSITORY_ENV = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)
# Subcommands that print diffs or commits: what they would otherwise run through the repository's
# diff drivers.
DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv")
ENV = {
    "GIT_OPTIONAL_LOCKS": "0",  # a read never rewrites the index (nor waits for its lock)
    "GIT_NO_LAZY_FETCH": "1",  # git 2.45+: a missing object is never fetched
    # Empty: no transport at all, whatever protocol.<name>.allow any config says (also a remote
    # helper's name, which the pins above cannot list).
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_TERMINAL_PROMPT": "0",  # nor asked for
}
TIMEOUT = 30  # seconds, unless the caller says otherwise
# A time (time.monotonic()) by which every git call of this process must end, or None: the hook's
# time bound (hooks/run.py), so that it can still answer without what git was too slow to say.
_deadline: float | None = None
_running: set[subprocess.Popen] = set()  # the git processes this one is waiting for


def end_by(deadline: float | None) -> None:
    """Cap every later git call of this process at `deadline` (time.monotonic()), or lift the cap."""
    global _deadline
    _deadline = deadline


def ends_by() -> float | None:
    """The cap end_by set, or None."""
    return _deadline


def stop_running() -> None:
    """Kill the git processes being waited for (the hook's time bound, which ends the process at
    once, calls this first): a git that hangs is not left behind, one more for every hook."""
    for process in list(_running):
        _kill(process)


def _kill(process: subprocess.Popen) -> None:
    """Kill a git we started and, on POSIX, what it started in turn (its process group: a wrapper
    that runs the real git, a shim on PATH), which would otherwise outlive us."""
    if os.name == "posix":
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:  # gone already, or not its own group
            pass
    try:
        process.kill()
    except OSError:
        pass


def argv(*args: str, cwd: os.PathLike | str | None = None) -> list[str]:
    """The full command line: git, the pinned settings, -C cwd, then args."""
    out = ["git", "--no-pager"]
    for key, value in SAFE_SETTINGS:
        out += ["-c", f"{key}={value}"]
    if cwd is not None:
        out += ["-C", os.fspath(cwd)]
    return out + list(args)


def environment(index: str | None = None) -> dict[str, str]:
    """The inherited environment without what ties git to another repository, with ENV; and the
    index the caller means, if any."""
    out = {
        name: value
        for name, value in os.environ.items()
        if name not in REPOSITORY_ENV and not name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }
    out.update(ENV)
    if index is not None:
        out["GIT_INDEX_FILE"] = index
    return out


class GitWouldWait(OSError):
    """A configuration file git would read, or one it includes, is not a regular file: git was not run."""


def run(
    *args: str,
    cwd: os.PathLike | str | None = None,
    timeout: float = TIMEOUT,
    text: bool = False,
    check: bool = False,
    index: str | None = None,
) -> subprocess.CompletedProcess:
    """Run git with the pinned settings, standard input closed, output captured, for the
    repository at cwd (with `index`, that index file). Raises what subprocess.run raises (OSError
    when git is missing, TimeoutExpired, CalledProcessError with check), and GitWouldWait."""
    why = hazard(os.fspath(cwd) if cwd is not None else os.getcwd())
    if why:
        raise GitWouldWait(why)
    if _deadline is not None:
        timeout = min(timeout, _deadline - time.monotonic())
        if timeout <= 0:
            raise subprocess.TimeoutExpired(["git", *args], 0)
    # subprocess.run's steps, with the process known to stop_running while it runs.
    with subprocess.Popen(
        argv(*args, cwd=cwd),
        env=environment(index),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=text,
        encoding="utf-8" if text else None,
        errors="replace" if text else None,
        start_new_session=os.name == "posix",  # its own process group, which _kill ends whole
    ) as process:
        _running.add(process)
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            _kill(process)  # and the with statement waits for it
            raise
        finally:
            _running.discard(process)
    done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
    if check:
        done.check_returncode()
    return done


def filter_pins(cwd: os.PathLike | str, timeout: float = TIMEOUT) -> list[str]:
    """`-c` settings, before a subcommand, that turn off every content filter the configuration
    names (filter.<name>.clean, .smudge and .process set empty, and .required false, or git stops
    at a required filter it cannot run, as Git LFS sets it): reading the configuration runs
    nothing. A name holding `=` cannot be pinned (`-c` splits at the first one): ValueError, and the
    caller runs no status. Raises what run() raises."""
    listed = run(
        "config", "-z", "--get-regexp", r"^filter\..*\.(clean|smudge|process|required)$", cwd=cwd, timeout=timeout
    )
    pins: list[str] = []
    for item in listed.stdout.split(b"\0"):
        key = item.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if "=" in key:
            raise ValueError(f"a filter named {key!r} cannot be turned off on git's command line")
        if key:
            pins += ["-c", f"{key}=false" if key.endswith(".required") else f"{key}="]
    return pins


def shell_prefix() -> str:
    """`git` with the pinned settings, as a shell script's words (the pre-commit hook), folded
    into lines of a few settings each."""
    words = argv()
    pairs = [" ".join(words[i : i + 2]) for i in range(2, len(words), 2)]
    lines = [" ".join(words[:2])] + [" ".join(pairs[i : i + 4]) for i in range(0, len(pairs), 4)]
    return " \\\n  ".join(lines)


# ----------------------------------------------------------------- configuration files that would block


_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$')
_PATH_KEY = re.compile(r"path\s*=\s*(.*)$", re.IGNORECASE)
_MAX_DEPTH = 10  # git's own limit on nested includes
_checked: dict[str, tuple[tuple[str, ...], tuple, str | None]] = {}


def _git_files(cwd: str) -> tuple[list[str], list[str]]:
    """(the configuration files git reads for a command run at cwd: system, global, the
    repository's; the files it opens to recognise the repository: its HEAD and commondir)."""
    files = []
    if os.environ.get("GIT_CONFIG_NOSYSTEM", "").lower() not in ("1", "true", "yes", "on"):
        files.append(os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")
    if "GIT_CONFIG_GLOBAL" in os.environ:
        files.append(os.environ["GIT_CONFIG_GLOBAL"])
    else:
        home = os.path.expanduser("~")
        xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        files += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    here = os.path.abspath(cwd)
    while True:
        dotgit = os.path.join(here, ".git")
        if os.path.isdir(dotgit):
            gitdir = dotgit
            break
        if os.path.isfile(dotgit):
            text = _small(dotgit) or ""
            gitdir = os.path.join(here, text[len("gitdir:") :].strip()) if text.startswith("gitdir:") else ""
            break
        parent = os.path.dirname(here)
        if parent == here:
            return [f for f in files if f], []
        here = parent
    if not gitdir:
        return [f for f in files if f], []
    common = (_small(os.path.join(gitdir, "commondir")) or "").strip()
    common = os.path.join(gitdir, common) if common else gitdir
    files += [os.path.join(common, "config"), os.path.join(gitdir, "config.worktree")]
    return [f for f in files if f], [os.path.join(gitdir, "HEAD"), os.path.join(gitdir, "commondir")]


def _small(path: str, limit: int = 1 << 20) -> str | None:
    """A regular file's first `limit` bytes as text, never waiting on a FIFO; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _includes(path: str, text: str) -> list[str]:
    """The files a configuration file includes (include.path, includeIf.*.path: every condition,
    met or not), resolved as git resolves them."""
    found, section = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header:
            section = header.group(1).lower()
            line = header.group(3).strip()
        if section not in ("include", "includeif"):
            continue
        key = _PATH_KEY.match(line)
        if not key:
            continue
        value = key.group(1).strip()
        if value.startswith('"'):
            value = value[1:].split('"', 1)[0]
        else:
            value = re.split(r"\s[#;]", value, maxsplit=1)[0].strip()
        if not value:
            continue
        value = os.path.expanduser(value)
        found.append(value if os.path.isabs(value) else os.path.join(os.path.dirname(path), value))
    return found


def hazard(cwd: str) -> str | None:
    """A sentence naming a configuration file git would read at cwd, or one such a file includes,
    that is not a regular file (git would wait on a FIFO for ever); None when there is none. Kept
    per folder while none of the files it looked at changes."""
    kept = _checked.get(cwd)
    if kept is not None and _signature(kept[0]) == kept[1]:
        return kept[2]
    seen: list[str] = []
    why = None
    configs, repository = _git_files(cwd)
    for path in repository:
        seen.append(path)
        if why is None and _special(path):
            why = (
                f"the repository's {os.path.basename(path)} file {path} is not a regular file (a FIFO or a device), "
                "so git was not started (it would wait on it); replace it with the file git made "
                "(`git init` in a scratch folder shows one)"
            )
    queue = [(f, "", 0) for f in configs]
    while queue and why is None:
        path, parent, depth = queue.pop(0)
        seen.append(path)
        try:
            info = os.stat(path)
        except OSError:
            continue  # git skips a missing file
        if not stat.S_ISREG(info.st_mode):
            named = f"{path}, which {parent} includes," if parent else f"the git configuration file {path}"
            why = (
                f"{named} is not a regular file (a FIFO or a device), so git was not started (it would wait on it); "
                "remove it or point the setting at a file"
            )
        elif depth < _MAX_DEPTH:
            queue += [(f, path, depth + 1) for f in _includes(path, _small(path) or "")]
    _checked[cwd] = (tuple(seen), _signature(tuple(seen)), why)
    return why


def _special(path: str) -> bool:
    """Whether path is there and is neither a regular file nor a folder (git opens it and would
    wait on a FIFO); a folder or a missing file git reports itself."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _signature(paths: tuple[str, ...]) -> tuple:
    """What each path is now (kind, inode, size, modification time), to see when one changed."""
    out: list[tuple[int, int, int, int] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
            out.append((info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)
