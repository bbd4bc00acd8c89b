"""What a client's hook event says, read from the JSON it sends on stdin: which of our moments it
is (a prompt, a file about to be written or just written, the agent stopping, a session starting),
the session, the folder it runs in, the prompt's text and the files a write touches.

Each client spells these its own way (docs/clients.md): Claude Code and Codex `UserPromptSubmit`,
`PreToolUse`, `PostToolUse`, `Stop` (and after a compaction Claude Code's `SessionStart` with the
source `compact`, Codex's `PostCompact`); Gemini CLI `BeforeAgent`, `BeforeTool`, `AfterTool`,
`AfterAgent`; Cursor `sessionStart`, `preToolUse`, `postToolUse`, `stop`. Codex names the files
of an `apply_patch` only inside the patch text. The names are setup/hookconfig.py's, where init's
matchers come from too.
"""

from __future__ import annotations

import os
import re

from ..setup.hookconfig import (
    AFTER_WRITE,
    BEFORE_WRITE,
    COMPACT_SOURCE,
    COMPACTED,
    EVENT_NAMES,
    PROMPT,
    STOP,
    WRITE_TOOLS,
)
from ..values import Value

__all__ = ["AFTER_WRITE", "BEFORE_WRITE", "COMPACTED", "PROMPT", "STOP", "Event", "parse", "patch_files"]

# Where a write tool's arguments name its file.
PATH_KEYS = ("file_path", "path", "absolute_path", "target_file", "filePath")
MAX_FILES = 1_000  # files of one write looked at, at most (a patch is at most MAX_INPUT bytes)
MAX_PROMPT = 20_000  # characters of a prompt looked at, at most: its start and its end, half each

# An apply_patch names its files on these lines (Codex's patch format).
# The rest of the line, stripped after the match (a lazy `(.+?)\s*$` was quadratic on a run of
# spaces inside a name: seconds for 30,000 spaces, past the hook's time bound).
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: ([^\n]+)|^\*\*\* Move to: ([^\n]+)", re.M)


class Event(Value):
    __slots__ = ("client", "moment", "session", "cwd", "prompt", "files")

    def __init__(
        self, client: str, moment: str, session: str, cwd: str, prompt: str = "", files: tuple[str, ...] = ()
    ) -> None:
        self.client = client
        self.moment = moment  # PROMPT, BEFORE_WRITE, AFTER_WRITE, STOP, START, COMPACTED
        self.session = session
        self.cwd = cwd
        self.prompt = prompt
        self.files = files  # as the client gave them


def _text(value: object, limit: int = 4096) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _ends(value: object) -> str:
    """A prompt's text as looked at: whole up to MAX_PROMPT characters, else its start and its end
    (a pasted log or traceback names the failing file at one end or the other: Python's innermost
    frame comes last, Java's and Node's first)."""
    if not isinstance(value, str):
        return ""
    if len(value) <= MAX_PROMPT:
        return value
    half = MAX_PROMPT // 2
    return f"{value[:half]}\n…\n{value[-half:]}"


def patch_files(patch: str) -> list[str]:
    """The files an apply_patch adds, updates, deletes or moves to, in order, once each."""
    found: list[str] = []
    for match in _PATCH_FILE.finditer(patch):
        name = (match.group(1) or match.group(2) or "").strip()
        if name and name not in found:
            found.append(name)
        if len(found) >= MAX_FILES:
            break
    return found


def _write_files(client: str, tool_input: object) -> list[str]:
    if client == "codex":
        if isinstance(tool_input, dict):
            patch = tool_input.get("command") or tool_input.get("input") or tool_input.get("patch")
        else:
            patch = tool_input
        if isinstance(patch, list):  # ["apply_patch", "<patch>"]
            patch = "\n".join(p for p in patch if isinstance(p, str))
        return patch_files(patch) if isinstance(patch, str) else []
    if not isinstance(tool_input, dict):
        return []
    found = [tool_input[k] for k in PATH_KEYS if isinstance(tool_input.get(k), str) and tool_input[k]]
    return list(dict.fromkeys(found))[:MAX_FILES]


def _cwd(client: str, data: dict) -> str:
    """The folder the client runs in: its `cwd`, Cursor's first workspace root, else the project
    folder the client names in our environment, else our own current directory."""
    cwd = _text(data.get("cwd"))
    if not cwd and client == "cursor":
        roots = data.get("workspace_roots")
        if isinstance(roots, list) and roots and isinstance(roots[0], str):
            cwd = roots[0][:4096]
    if not cwd:
        for name in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR"):
            if os.environ.get(name):
                return os.environ[name]
    return cwd or os.getcwd()


def parse(client: str, data: object) -> Event | None:
    """Our event in what the client sent, or None when it is none of ours (another event, another
    tool, no session)."""
    if not isinstance(data, dict):
        return None
    name = data.get("hook_event_name") or data.get("hookEventName")
    moment = EVENT_NAMES[client].get(name) if isinstance(name, str) else None
    session = _text(data.get("conversation_id") if client == "cursor" else data.get("session_id"), 256)
    if moment is None or not session:
        return None
    files: list[str] = []
    if moment in (BEFORE_WRITE, AFTER_WRITE):
        tool = data.get("tool_name")
        if tool not in WRITE_TOOLS[client]:
            return None
        files = _write_files(client, data.get("tool_input"))
        if not files:
            return None
    if moment == STOP and client == "cursor" and data.get("status", "completed") != "completed":
        return None  # the agent was stopped or failed: nothing to ask of it
    if moment == COMPACTED and client == "claude" and data.get("source") != COMPACT_SOURCE:
        return None  # a session started, resumed or cleared: not a compaction
    prompt = _ends(data.get("prompt")) if moment == PROMPT else ""
    # A client's own "a stop hook already ran" flag (stop_hook_active, loop_count) is not read: it is
    # not reliable (Gemini CLI sends false on the re-fire), and the session's state says it better.
    return Event(client, moment, session, _cwd(client, data), prompt, tuple(files))
