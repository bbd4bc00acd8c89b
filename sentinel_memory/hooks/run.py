"""`sentinel-memory hook --client <name>`: one run per event a client sends (docs/clients.md).

It reads the event (JSON on stdin, at most MAX_INPUT bytes), answers in that client's shape and
exits 0 (Claude Code's stop request alone exits 2: hooks/replies.py). Before the prompt: the
records that match it strongly, never one already shown in the session since the client last
compacted its conversation (hooks/lessons.py says which). Before a file is written: the lessons
that cite it, as the reason of a refused first write of that file in the session; the write after
it goes through. When the agent stops: once per session, if the work tree changed since the
session's first hook and the memory file did not, a request to call log_memory or say there was
nothing to log.

It fails open: on any error, an input it cannot read, a memory file it cannot use, or past its own
time bound (TIME_ENV, about 1 s) it prints nothing and exits 0, so the client goes on as without
it. It never writes the memory file and never stores the prompt (hooks/state.py keeps the rest).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time

from ..setup.hookconfig import (
    AFTER_WRITE,
    BEFORE_WRITE,
    COMPACTED,
    HOOK_CLIENTS,
    PROMPT,
    STOP,
    WRITES_ENV,
    WRITES_MODES,
)

TYPE_CHECKING = False  # (typing costs an import a hook need not pay: mypy reads this as True)
if TYPE_CHECKING:
    from .replies import Reply

MAX_INPUT = 1 << 20  # bytes of an event read, at most: a bigger one is not ours to read
TIME_ENV = "SENTINEL_MEMORY_HOOK_TIME"  # seconds the hook may take (default DEFAULT_TIME)
DEFAULT_TIME = 1.0
MAX_TIME = 60.0  # seconds: a larger TIME_ENV (inf, 1e308) is this, as far as a timer can wait
DEBUG_ENV = "SENTINEL_MEMORY_HOOK_DEBUG"  # set: why the hook printed nothing, in one line on stderr
GIT_SHARE = 0.4  # of the time bound, the most one git status may take
GIT_MARGIN = 0.1  # seconds before the bound by which every git call has ended (killed if need be)
# Prompts that carry no task: nothing is looked up for them.
ACKS = frozenset(
    (
        *"ok okay k kk yes y yep yeah sure no n nope continue proceed next done thanks ty lgtm great good".split(),
        *"fine perfect nice cool retry again".split(),
        *("go on", "go ahead", "thank you", "sounds good", "keep going", "carry on", "do it", "try again"),
        *("yes please", "ok continue", "please continue", "continue please"),
    )
)
# The stop request's first words: the same text coming back as a prompt (Gemini CLI sends a
# stop hook's reason as the next prompt) is recognised and gets nothing.
STOP_HEAD = "Sentinel-Memory: files of this project changed during this session"
# The head earlier versions wrote ("this session changed files": not so when another session or a
# person changed them), still recognised when it comes back as a prompt.
EARLIER_STOP_HEAD = "Sentinel-Memory: this session changed files"
STOP_REASON = (
    f"{STOP_HEAD} and nothing was logged to the project memory. If your instructions lacked something "
    "you had to find out, or you learned something the next session should know, call log_memory "
    "now (topic, missing_context, lesson, ask_next_time, and the files it is about). If there was "
    "nothing worth keeping, say so in one line and stop. This is asked once per session."
)


def main(argv: list[str], started: float | None = None) -> int:
    """Run the hook; `started`: when the process began its work (time.monotonic()), from which the
    time bound counts."""
    started = time.monotonic() if started is None else started
    if argv[:1] in (["--warm"], ["--renames"]) and len(argv) == 2:  # the detached builder (hooks/background.py)
        return _warm(argv[1], argv[0] == "--renames")
    try:
        client, project = _arguments(argv)
    except ValueError as exc:
        _say(str(exc))
        return 0
    guard = Guard(started + _bound())
    reply = None
    if not os.environ.get(DEBUG_ENV):
        _quiet_logs()
    try:
        reply = answer(client, project, sys.stdin.buffer, guard)
    except Exception as exc:  # fail open: the client goes on as without the hook
        _silent(f"{type(exc).__name__}: {exc}")
    return guard.emit(reply)


def _silent(why: str) -> Reply | None:
    """No answer (None); with DEBUG_ENV set, `why` in one line on stderr (never otherwise: a client
    may show the hook's stderr)."""
    if os.environ.get(DEBUG_ENV):
        _say(f"nothing printed: {why}")
    return None


def _say(text: str) -> None:
    """One line on stderr, never elsewhere: with stderr closed (None), print would write to stdout,
    which the client reads as the hook's answer."""
    if sys.stderr is None:
        return
    try:
        print(f"sentinel-memory hook: {text}", file=sys.stderr)
    except (OSError, ValueError):  # the reader left: nothing to say
        pass


def _quiet_logs() -> None:
    """Keep the package's warnings (a memory line skipped, a git that failed) off stderr: a client
    may show it, and Claude Code gives the stop request's stderr to the model whole. Said with
    DEBUG_ENV only."""
    from .. import errors

    errors.QUIET = True


def _warm(memory: str, renames_only: bool = False) -> int:
    from pathlib import Path

    from . import matches, renames

    if hasattr(os, "nice"):
        try:
            os.nice(10)  # in the background: the client's own work comes first
        except OSError:
            pass
    path = Path(memory)  # the index copy, then the renames at HEAD (hooks/background.py)
    steps = [lambda: matches.build(path), lambda: renames.keep(path.parent.parent, matches.oldest_citing(path))]
    for step in steps[renames_only:]:
        try:
            step()
        except Exception as exc:  # nothing waits for it: the next hook starts another
            if os.environ.get(DEBUG_ENV):
                _say(f"--warm: {type(exc).__name__}: {exc}")
    return 0


def _arguments(argv: list[str]) -> tuple[str, str | None]:
    client = project = None
    words = list(argv)
    while words:
        word = words.pop(0)
        if word in ("--client", "--project") and words:
            value = words.pop(0)
        elif word.startswith(("--client=", "--project=")):
            word, value = word.split("=", 1)
        elif word == "hook":
            continue
        else:
            raise ValueError(f"unknown argument {word!r}; usage: hook --client {{{','.join(HOOK_CLIENTS)}}}")
        if word == "--client":
            client = value
        else:
            project = value
    if client not in HOOK_CLIENTS:
        raise ValueError(f"--client must be one of {', '.join(HOOK_CLIENTS)}")
    return client, project


def _bound() -> float:
    try:
        value = float(os.environ.get(TIME_ENV, DEFAULT_TIME))
    except ValueError:
        return DEFAULT_TIME
    return DEFAULT_TIME if value != value else min(max(0.0, value), MAX_TIME)  # NaN: the default


def writes_mode() -> str:
    mode = os.environ.get(WRITES_ENV, "").strip().lower()
    return mode if mode in WRITES_MODES else "deny"


class Guard:
    """The time bound: past the deadline the process ends at once with nothing printed (a timer
    thread), killing the git it waits for, and an answer finished late is not printed either."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._lock = threading.Lock()
        self._done = False  # the process no longer ends at the deadline (an answer is on its way, or none)
        self._claimed = False
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._expire)
        timer.daemon = True
        timer.start()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def _expire(self) -> None:
        with self._lock:
            if self._done:
                return
            try:
                # Loaded if git was run. The main thread may be importing it still (a loaded
                # machine): then it is in sys.modules without stop_running, and has started no git.
                command = sys.modules.get("sentinel_memory.git.command")
                stop = getattr(command, "stop_running", None)
                if stop is not None:
                    stop()
                if os.environ.get(DEBUG_ENV):
                    os.write(2, f"sentinel-memory hook: nothing printed: past its time bound ({TIME_ENV})\n".encode())
            finally:  # whatever failed above: the process ends, with no traceback from this thread
                os._exit(0)

    def claim(self) -> bool:
        """Whether the answer is in time; if it is, the bound no longer ends the process, so that
        what the session is told and what its state records cannot part: the state is saved, then
        the answer printed (a lesson recorded as shown is one the model got)."""
        with self._lock:
            if self._done or time.monotonic() > self.deadline:
                return False
            self._done = self._claimed = True
            return True

    def emit(self, reply: Reply | None) -> int:
        """Print the reply (a JSON object, or a Blocking on stderr) if it was claimed in time; the
        exit code."""
        with self._lock:
            claimed, self._claimed, self._done = self._claimed, False, True
        if reply is None:
            return 0
        if not claimed:
            _silent(f"the answer was ready past its time bound ({TIME_ENV})")
            return 0
        from .replies import Blocking, line

        if isinstance(reply, Blocking):
            stream, data, code = sys.stderr, reply.reason.encode("utf-8") + b"\n", 2
        else:
            stream, data, code = sys.stdout, line(reply), 0
        if stream is None:  # closed before we started: nothing to say
            return 0
        try:
            stream.buffer.write(data)
            stream.buffer.flush()
        except OSError:  # the client closed its end: nothing to say
            return 0
        return code


# A slash command: `/` and a name with no `/` in it (`/compact`, `/project:fix-issue`, `/mcp__x__y`),
# then nothing or a space; not `/ src/pay.py`, nor a path such as /home/me/pay.py.
_SLASH_COMMAND = re.compile(r"/[^\s/]+(?:\s|$)")


def quiet(prompt: str) -> bool:
    """A prompt with no task to look lessons up for: empty, a slash command (`/compact`, `/model
    opus`; not an absolute path, as a file dragged into the terminal starts one), a bare
    acknowledgement, or our own stop request coming back."""
    text = prompt.strip()
    if not text or text.startswith((STOP_HEAD, EARLIER_STOP_HEAD)) or STOP_REASON in text or _SLASH_COMMAND.match(text):
        return True
    return " ".join(text.lower().strip(" .!?,;:").split()) in ACKS


def answer(client: str, project: str | None, stream, guard: Guard) -> Reply | None:
    """The reply to the event on `stream`, or None; records what the session has seen."""
    from . import events

    data = stream.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        return _silent(f"the event on stdin is over {MAX_INPUT} bytes")
    try:
        event = events.parse(client, json.loads(data))
    except (ValueError, RecursionError):
        return _silent("the event on stdin is not JSON")
    if event is None:
        return _silent(f"not an event this hook answers for --client {client}, or a field it needs is missing")
    mode = writes_mode()
    if (event.moment == BEFORE_WRITE and mode != "deny") or (event.moment == AFTER_WRITE and mode != "context"):
        return _silent(f"{WRITES_ENV}={mode} turns this event off")
    from ..git import command
    from ..setup.project import resolve
    from . import state

    # Every git call ends a little before the bound, so that the hook can answer without it.
    command.end_by(guard.deadline - GIT_MARGIN)
    root = resolve(project, cwd=event.cwd)
    if root.guarded:
        return _silent(f"{root.path} is the home folder or the root, not a project")
    where = state.path_for(client, event.session, str(root.path))
    with state.locked(where):
        session = state.load(where)
        before = (list(session.shown), list(session.warned), session.asked)
        if session.new:
            from . import worktree

            session.tree = worktree.tree(str(root.path), min(guard.left(), DEFAULT_TIME) * GIT_SHARE)
            session.memory = worktree.memory(str(root.memory_file))
            if session.memory is not None:
                from . import matches

                if not matches.fresh(root.memory_file):  # ready before the session's real prompt
                    matches.warm_later(root.memory_file)
            # Kept before the lookup: a first hook that runs past its bound still leaves the work
            # tree's state for the stop to compare with (a session that then changes files only
            # through a shell has no write hook to keep it).
            state.save(where, session)
        reply = _reply(event, session, root, guard)
        if reply is not None and not guard.claim():
            return _silent(f"past its time bound ({TIME_ENV}) before the answer was ready")
        if before != (session.shown, session.warned, session.asked):
            if reply is None and guard.left() <= 0:
                return _silent(f"past its time bound ({TIME_ENV}) before the session was saved")
            state.save(where, session)
    return reply


def _reply(event, session, root, guard: Guard) -> Reply | None:
    from . import lessons, replies

    if event.moment in (PROMPT, BEFORE_WRITE, AFTER_WRITE) and not root.memory_file.is_file():
        return _silent(f"no memory file at {root.memory_file}")
    if event.moment == PROMPT:
        if quiet(event.prompt):
            return _silent("the prompt holds no task (empty, a slash command, an acknowledgement, or our stop request)")
        from .matches import HOOK_MAX, too_big

        if too_big(root.memory_file):
            return _silent(f"the memory file is over {HOOK_MAX >> 20} MiB: too big to look up in time; compact it")
        text = lessons.for_prompt(root.memory_file, event.prompt, session, event.cwd)
        if not text:
            return _silent("no lesson matches the prompt strongly that this session was not shown already")
        return replies.context(event.client, PROMPT, text)
    if event.moment in (BEFORE_WRITE, AFTER_WRITE):
        inside = _project_paths(event.files, event.cwd, root.path)
        paths = [p for p in inside if not session.was_warned(p)]
        if not paths:
            return _silent(
                "this session was shown the lessons about these files"
                if inside
                else "the files are outside the project"
            )
        text = lessons.for_write(root, paths, session, event.moment)
        if not text:
            return _silent(f"no lesson this session was not shown already cites {', '.join(paths)}")
        if event.moment == AFTER_WRITE:
            return replies.context(event.client, AFTER_WRITE, text)
        shown = lessons.as_shown(lessons.some(paths))
        return replies.deny(event.client, text, f"Sentinel-Memory showed the agent lessons about {shown}")
    if event.moment == STOP:
        return _stop(event, session, root, guard)
    if event.moment == COMPACTED:  # the summary may have dropped them: each may be shown once more
        session.shown, session.warned = [], []
        return _silent("the conversation was compacted: the lessons shown so far may be shown again")
    return _silent("a session's start: the work tree is noted for the stop, nothing is said")


def _project_paths(files, cwd: str, root) -> list[str]:
    """The files as paths relative to the project root ("/"-separated); those outside it left out."""
    out: list[str] = []
    top = os.path.realpath(root)
    for name in files:
        if "\0" in name:
            continue
        full = os.path.normpath(os.path.join(cwd, os.path.expanduser(name)))
        real = os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
        # A link to a file of the project is a write of that file (what lessons cite).
        target = os.path.realpath(full) if os.path.islink(full) else real
        for candidate in (target, real, full):
            rel = os.path.relpath(candidate, top) if candidate.startswith(top + os.sep) else None
            if rel:
                rel = rel.replace(os.sep, "/")
                if rel not in out:
                    out.append(rel)
                break
    return out


def _stop(event, session, root, guard: Guard) -> Reply | None:
    from . import replies, worktree

    if session.new:
        return _silent("the session's first hook is its stop: there is no earlier work tree to compare")
    if session.asked:
        return _silent("this session was asked to log already")
    if session.tree is None:
        return _silent("git could not say the work tree's state at the session's first hook")
    # A project set up (init made .context/) whose memory file does not exist yet is asked: its
    # first lesson makes the file. Without .context/, or with a memory that is no file, nothing.
    if not root.memory_file.parent.is_dir():
        return _silent(f"no folder {root.memory_file.parent}: the project is not set up for Sentinel-Memory")
    if os.path.lexists(root.memory_file) and not root.memory_file.is_file():
        return _silent(f"the memory file {root.memory_file} is not a file")
    if worktree.memory(str(root.memory_file)) != session.memory:
        return _silent("the memory file changed in this session: something was logged")
    now = worktree.tree(str(root.path), min(guard.left(), DEFAULT_TIME) * GIT_SHARE)
    if now is None:
        return _silent("git could not say the work tree's state")
    if now == session.tree:
        return _silent("the work tree is as it was at the session's first hook (.context/ aside)")
    session.asked = True
    return replies.keep_going(event.client, STOP_REASON)
