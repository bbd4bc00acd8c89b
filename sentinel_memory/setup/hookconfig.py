"""The client hooks, per client: the events init writes beside the MCP entry (the file is
setup/clients.py's `hooks`), the words of each client's events and write tools that the hook
reads, the shapes of the answers it prints (checked by doctor and the tests), and doctor's probe
of a configured hook. The hook itself is sentinel_memory/hooks/; docs/clients.md says what each
client does with each answer.

Standard library only at import (the hook imports the names below before it knows whether it has
work); the probe loads what it runs when doctor runs it.
"""

from __future__ import annotations

import json
import re
import shlex

# Our moments of a session, whatever each client calls them.
PROMPT, BEFORE_WRITE, AFTER_WRITE, STOP, START = "prompt", "before-write", "after-write", "stop", "start"
COMPACTED = "compacted"  # the client summarised the conversation: what the model was shown may be gone
HOOK_CLIENTS = ("claude", "gemini", "codex", "cursor")

# The event names each client sends, by our moment. Claude Code's SessionStart is ours only with
# the source "compact" (the matcher init writes; hooks/events.py checks it); Codex's PostCompact
# follows a compaction asked for and an automatic one alike. Gemini CLI has no event after one
# (its PreCompress "auto" fires on every turn, whether or not anything is compressed).
EVENT_NAMES: dict[str, dict[str, str]] = {
    "claude": {
        "UserPromptSubmit": PROMPT,
        "PreToolUse": BEFORE_WRITE,
        "PostToolUse": AFTER_WRITE,
        "Stop": STOP,
        "SessionStart": COMPACTED,
    },
    "codex": {
        "UserPromptSubmit": PROMPT,
        "PreToolUse": BEFORE_WRITE,
        "PostToolUse": AFTER_WRITE,
        "Stop": STOP,
        "PostCompact": COMPACTED,
    },
    "gemini": {"BeforeAgent": PROMPT, "BeforeTool": BEFORE_WRITE, "AfterTool": AFTER_WRITE, "AfterAgent": STOP},
    "cursor": {"sessionStart": START, "preToolUse": BEFORE_WRITE, "postToolUse": AFTER_WRITE, "stop": STOP},
}
COMPACT_SOURCE = "compact"  # Claude Code's SessionStart source (and init's matcher) after a compaction
# The tools that write a file, per client: what the write hooks' matchers name.
WRITE_TOOLS: dict[str, tuple[str, ...]] = {
    "claude": ("Write", "Edit", "MultiEdit"),
    "gemini": ("write_file", "replace"),
    "codex": ("apply_patch",),
    "cursor": ("Write",),
}
# The event name an answer carries in hookSpecificOutput, per client and moment.
SPECIFIC = {
    ("claude", PROMPT): "UserPromptSubmit",
    ("codex", PROMPT): "UserPromptSubmit",
    ("gemini", PROMPT): "BeforeAgent",
    ("claude", AFTER_WRITE): "PostToolUse",
    ("codex", AFTER_WRITE): "PostToolUse",
    ("gemini", AFTER_WRITE): "AfterTool",
}
# The switch for the write hooks (docs/clients.md): "deny" (the default) refuses the first write
# of a file the memory has lessons about, with the lessons as the reason; "context" lets it through
# and gives them after the write; "off" does neither.
WRITES_ENV = "SENTINEL_MEMORY_HOOK_WRITES"
WRITES_MODES = ("deny", "context", "off")
HOOK_WORD = "hook"
# How long a client waits for the hook before giving up on it (the hook keeps to about 1 s itself).
WAIT_SECONDS = 5


def command(executable: str, client: str) -> str:
    """The hook's command line in a committed config: the executable by name, no machine's path."""
    return f"{executable} {HOOK_WORD} --client {client}"


def definitions(executable: str, client: str) -> dict[str, list[dict]]:
    """Our group per event of the client's hooks config, in its own layout."""
    cmd = command(executable, client)
    matcher = "|".join(WRITE_TOOLS[client])
    if client == "cursor":
        return {
            "sessionStart": [{"command": cmd}],
            "preToolUse": [{"command": cmd, "matcher": matcher}],
            "postToolUse": [{"command": cmd, "matcher": matcher}],
            "stop": [{"command": cmd, "loop_limit": 1}],
        }
    if client == "gemini":  # timeouts in milliseconds
        hook = {"name": "sentinel-memory", "type": "command", "command": cmd, "timeout": WAIT_SECONDS * 1000}
    else:
        hook = {"type": "command", "command": cmd, "timeout": WAIT_SECONDS}
    names = {moment: name for name, moment in EVENT_NAMES[client].items()}
    groups: dict[str, list[dict]] = {
        names[PROMPT]: [{"hooks": [hook]}],
        names[BEFORE_WRITE]: [{"matcher": matcher, "hooks": [hook]}],
        names[AFTER_WRITE]: [{"matcher": matcher, "hooks": [hook]}],
        names[STOP]: [{"hooks": [hook]}],
    }
    if client == "claude":
        groups[names[COMPACTED]] = [{"matcher": COMPACT_SOURCE, "hooks": [hook]}]
    elif COMPACTED in names:
        groups[names[COMPACTED]] = [{"hooks": [hook]}]
    return groups


def is_ours(group: object) -> bool:
    """True for a hooks group (or Cursor's hook entry) that runs only our hook command: the one
    init refreshes (a group where a user put our command beside theirs is theirs)."""
    if not isinstance(group, dict):
        return False
    entries = group["hooks"] if isinstance(group.get("hooks"), list) else [group]
    return bool(entries) and all(runs_ours(e) for e in entries)


def runs_ours(entry: object) -> bool:
    """True for one hook entry whose command is our hook, in any form that starts an install."""
    return isinstance(entry, dict) and hook_words(entry.get("command")) is not None


def command_words(command: str) -> list[str]:
    """The words of a hook command, as shlex splits them (a Windows path keeps its backslashes)."""
    return [w.strip('"') for w in shlex.split(command, posix="\\" not in command)]


def hook_words(command: object) -> list[str] | None:
    """The words from `hook` on in one of our hook commands (`hook --client X ...`), or None when
    the command is not ours. What starts it may be the executable (by name or by path), server.py,
    or a python running server.py or `-m sentinel_memory`: the forms an install is started by, and
    that people and earlier versions wrote."""
    if not isinstance(command, str):
        return None
    try:
        words = command_words(command)
    except ValueError:
        return None
    at = len(words) - 3  # nothing after the client's name: a command that goes on is someone's own
    if at < 1 or words[at:-1] != [HOOK_WORD, "--client"] or words[-1] not in HOOK_CLIENTS:
        return None
    return words[at:] if starts_us(words[:at]) else None


def starts_us(words: list[str]) -> bool:
    """True when `words` are what starts this install: its executable, server.py, or a python
    running either (the forms hook_words and the MCP entries' twins check accept)."""

    def name(word: str) -> str:
        return word.replace("\\", "/").rsplit("/", 1)[-1].lower()

    if len(words) == 1:
        return name(words[0]) in ("sentinel-memory", "sentinel-memory.exe", "server.py")
    if len(words) < 2 or not re.fullmatch(r"(python[0-9.]*|py)(\.exe)?", name(words[0])):
        return False
    if words[-2:] == ["-m", "sentinel_memory"]:
        flags = words[1:-2]
    elif name(words[-1]) == "server.py":
        flags = words[1:-1]
    else:
        return False
    return _harmless(flags)


def _harmless(flags: list[str]) -> bool:
    """Whether these interpreter flags run nothing, a -W or -X option's argument fused to it
    (`-Wignore`) or the next word (`-W ignore`)."""
    at = 0
    while at < len(flags):
        flag = flags[at]
        if flag in ("-W", "-X") and at + 1 < len(flags):
            flag += flags[at + 1]
            at += 1
        if not _HARMLESS_FLAG.fullmatch(flag):
            return False
        at += 1
    return True


# The interpreter's flags that run nothing (isolated, unbuffered, no site, optimised, quiet, a
# warnings filter, UTF-8 mode and the like). Not -c or -m, alone or with their argument fused
# (`-cimport os; ...`): a cloned repository's hook config would have `doctor` run its code. A
# warnings filter's category is a built-in class (-Wignore::DeprecationWarning), never a dotted
# one (-Wignore::pkg.Warning), which Python imports from the module it names at start-up.
_HARMLESS_FLAG = re.compile(
    r"-[BEIOPRSbdqsuv]+|-W[a-z]+(?::[\w .-]*(?::\w*(?::[\w.]*(?::\d*)?)?)?)?"
    r"|-X(?:utf8|dev|importtime|faulthandler|warn_default_encoding)(?:=\w+)?"
)


def answer_moment(client: str, code: int, out: str, err: str) -> str | None:
    """Which of the hook's answers a run that exited `code` with stdout `out` and stderr `err` gave:
    reply_moment of its stdout when it exited 0; STOP for Claude Code's stop request (exit code 2,
    nothing on stdout, the request on stderr: hooks/replies.py keep_going); None for anything else."""
    if code == 2 and client == "claude" and not out and err.strip():
        return STOP
    return reply_moment(client, out) if code == 0 else None


def reply_moment(client: str, text: str) -> str | None:
    """Which of the hook's answers `text` (its whole stdout) is, when it is exactly one JSON
    object of a shape the client reads; None for anything else (empty output included)."""
    try:
        reply = json.loads(text)
    except ValueError:
        return None
    if not isinstance(reply, dict) or text.count("\n") > 1 or not text.endswith("\n"):
        return None

    def said(value: object) -> bool:
        return isinstance(value, str) and value.strip() != ""

    if client == "cursor":
        if set(reply) == {"additional_context"} and said(reply["additional_context"]):
            return AFTER_WRITE
        if set(reply) == {"followup_message"} and said(reply["followup_message"]):
            return STOP
        if set(reply) == {"permission", "user_message", "agent_message"} and reply["permission"] == "deny":
            return BEFORE_WRITE if said(reply["agent_message"]) else None
        return None
    if set(reply) == {"decision", "reason"} and said(reply["reason"]):
        if client == "gemini":  # a refused write and a stop read the same: the caller knows which
            return STOP if reply["decision"] == "deny" else None
        return STOP if reply["decision"] == "block" else None
    specific = reply.get("hookSpecificOutput")
    if set(reply) != {"hookSpecificOutput"} or not isinstance(specific, dict):
        return None
    name = specific.get("hookEventName")
    if set(specific) == {"hookEventName", "additionalContext"} and said(specific["additionalContext"]):
        return next((m for (c, m), wanted in SPECIFIC.items() if c == client and wanted == name), None)
    if (
        client in ("claude", "codex")
        and set(specific) == {"hookEventName", "permissionDecision", "permissionDecisionReason"}
        and name == "PreToolUse"
        and specific["permissionDecision"] == "deny"
        and said(specific["permissionDecisionReason"])
    ):
        return BEFORE_WRITE
    return None


# ------------------------------------------------------------------------------ doctor's probe

SAMPLE_FILE = "sample.py"
SAMPLE_PROMPT = f"Change {SAMPLE_FILE} so that it prints a greeting"
SAMPLE_LESSON = f"The doctor's probe: {SAMPLE_FILE} must keep printing through the logger"


def sample_event(client: str, moment: str, root: str, session: str) -> dict:
    """The event the client sends at our moment, as the clients were seen to send it."""
    names = {m: name for name, m in EVENT_NAMES[client].items()}
    event: dict = {"hook_event_name": names[moment]}
    if client == "cursor":
        event.update(conversation_id=session, workspace_roots=[root])
    else:
        event.update(session_id=session, cwd=root, transcript_path="")
    if moment == PROMPT:
        event["prompt"] = SAMPLE_PROMPT
    elif moment in (BEFORE_WRITE, AFTER_WRITE):
        tool = WRITE_TOOLS[client][0]
        if client == "codex":
            patch = (
                f"*** Begin Patch\n*** Update File: {SAMPLE_FILE}\n@@\n-print('hi')\n+print('hello')\n*** End Patch\n"
            )
            event.update(tool_name=tool, tool_input={"command": patch})
        else:
            event.update(
                tool_name=tool, tool_input={"file_path": f"{root}/{SAMPLE_FILE}", "content": "print('hello')\n"}
            )
    elif moment == STOP and client != "cursor":
        event["stop_hook_active"] = False
    return event


def probe(argv: list[str], client: str, timeout: float = 10) -> list[str]:
    """Run the hook `argv` (+ its own arguments) on the client's sample events in a scratch project
    with one lesson: a prompt naming the lesson's file, the file's first write, a stop after a
    change. Returns what was wrong, one phrase per event ([] when every answer had the shape the
    client reads). `timeout` is the hook's own bound here; a run still going 2 s past it is
    stopped, with everything it started, and the rest skipped. The scratch project and the hook's
    state are removed afterwards."""
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from ..git import command as gitcmd
    from ..tools import memory

    wrong: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sentinel-memory-probe-", ignore_cleanup_errors=True) as scratch:
        root = Path(scratch) / "project"
        root.mkdir()
        (root / SAMPLE_FILE).write_text("print('hi')\n", encoding="utf-8")
        memory.upsert(
            root / ".context" / "memory_log.jsonl",
            "probe",
            "the sample's output rule",
            SAMPLE_LESSON,
            files=[SAMPLE_FILE],
        )
        # git init after the lesson: a write waits for git's folder to settle (record/gitlock.py),
        # a quarter of a second after `git init` has made it, for each client probed.
        gitcmd.run("init", "-q", cwd=root, timeout=timeout)
        env = {k: v for k, v in os.environ.items() if k not in (WRITES_ENV, "SENTINEL_MEMORY_PROJECT")}
        env.update(
            SENTINEL_MEMORY_HOOK_STATE=str(Path(scratch) / "state"),
            SENTINEL_MEMORY_HOOK_TIME=str(timeout),
            SENTINEL_MEMORY_HOOK_DEBUG="1",  # why a hook printed nothing, on stderr
        )
        # The prompt in a session of its own: the lesson it shows would not be shown again at the write.
        steps = [("start" if client == "cursor" else PROMPT, "probe-1"), (BEFORE_WRITE, "probe-2"), (STOP, "probe-2")]
        for moment, session in steps:
            if moment == STOP:
                (root / SAMPLE_FILE).write_text("print('hello')\n", encoding="utf-8")
            data = json.dumps(sample_event(client, moment, str(root), session))
            try:
                result = _bounded(argv, data.encode(), root, env, timeout + 2)
            except (OSError, subprocess.SubprocessError) as exc:
                return [*wrong, f"it could not run ({exc})"]
            if result is None:
                return [
                    *wrong,
                    f"{moment}: no answer after {timeout + 2:g} s (stopped; the client gives up after "
                    f"{WAIT_SECONDS} s and goes on without it)",
                ]
            out, err = (result.stdout.decode("utf-8", "replace"), result.stderr.decode("utf-8", "replace"))
            wanted = {"start": None, PROMPT: PROMPT, BEFORE_WRITE: BEFORE_WRITE, STOP: STOP}[moment]
            if client == "gemini" and moment == BEFORE_WRITE:
                wanted = STOP  # Gemini's refusal reads as its stop request: {"decision": "deny", ...}
            got = answer_moment(client, result.returncode, out, err) if out or result.returncode else None
            said = err.strip().splitlines()
            why = f" ({said[-1][:160]})" if said else ""
            if result.returncode not in (0, 2) or (result.returncode == 2 and got != wanted):
                wrong.append(f"{moment}: exit {result.returncode}{why}")
            elif got != wanted or (wanted is None and out):
                wrong.append(f"{moment}: {out.strip()[:120] or 'nothing'}{why}")
    return wrong


def _bounded(argv: list[str], data: bytes, cwd, env: dict, wait: float):
    """subprocess.run of `argv` for at most `wait` seconds; None when it ran longer: then it and
    whatever it started (its process group) are killed, and its pipes are not waited on (a child
    left holding them would block the read for good)."""
    import os
    import signal
    import subprocess

    posix = os.name == "posix"
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=posix,
    )
    try:
        out, err = process.communicate(data, timeout=wait)
    except subprocess.TimeoutExpired:
        if posix:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
        process.kill()
        for stream in (process.stdin, process.stdout, process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        process.wait()
        return None
    except BaseException:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(argv, process.returncode, out, err)
