"""Every git process this package starts goes through here: one place that pins the settings which
keep a repository's own configuration from running commands (docs/security.md, "git runs none of
the repository's commands").

A cloned or downloaded repository carries its .git/config, and git obeys it. The keys below are
the ones that make the git subcommands we call (rev-parse, log, ls-files, ls-tree, cat-file, show,
merge-base, symbolic-ref, check-attr, config, merge-file) start a program; each is pinned on the command line, which
outranks every configuration file:

- core.fsmonitor (and Git for Windows' core.useBuiltinFSMonitor): a hook git runs whenever it
  reads the index with the monitor on (ls-files -u, ls-files --others, show :path).
- log.showSignature: makes log and show verify each signed commit with gpg.program,
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

Options instead of settings, added by the subcommands that take them: --no-pager everywhere
(core.pager, pager.<command>: only at a terminal, and ours are never one), --no-ext-diff
(diff.external, diff.<driver>.command) and --no-textconv (diff.<driver>.textconv) on log and show.
What our subcommands never reach is left alone: filters (clean/smudge run on add, checkout and
diffs against the work tree), hooks and core.hooksPath (commit, merge and the like), core.editor,
core.askPass and pagers at a terminal.
"""

from __future__ import annotations

import os
import subprocess

TRANSPORTS = ("ext", "fd", "file", "git", "ssh", "http", "https", "ftp", "ftps", "rsync")
SAFE_SETTINGS = (
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("log.showSignature", "false"),
    ("safe.bareRepository", "explicit"),
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in TRANSPORTS),
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


def argv(*args: str, cwd: os.PathLike | str | None = None) -> list[str]:
    """The full command line: git, the pinned settings, -C cwd, then args."""
    out = ["git", "--no-pager"]
    for key, value in SAFE_SETTINGS:
        out += ["-c", f"{key}={value}"]
    if cwd is not None:
        out += ["-C", os.fspath(cwd)]
    return out + list(args)


def environment() -> dict[str, str]:
    return {**os.environ, **ENV}


def run(
    *args: str, cwd: os.PathLike | str | None = None, timeout: float = TIMEOUT, text: bool = False, check: bool = False
) -> subprocess.CompletedProcess:
    """Run git with the pinned settings, standard input closed, output captured. Raises what
    subprocess.run raises (OSError when git is missing, TimeoutExpired, CalledProcessError with
    check)."""
    return subprocess.run(
        argv(*args, cwd=cwd),
        env=environment(),
        capture_output=True,
        text=text,
        encoding="utf-8" if text else None,
        errors="replace" if text else None,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=check,
    )


def shell_prefix() -> str:
    """`git` with the pinned settings, as a shell script's words (the pre-commit hook), folded
    into lines of a few settings each."""
    words = argv()
    pairs = [" ".join(words[i : i + 2]) for i in range(2, len(words), 2)]
    lines = [" ".join(words[:2])] + [" ".join(pairs[i : i + 4]) for i in range(0, len(pairs), 4)]
    return " \\\n  ".join(lines)
