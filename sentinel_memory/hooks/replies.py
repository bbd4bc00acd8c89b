"""What the hook prints, in exactly the shape each client reads (docs/clients.md): text for the
model before the prompt, a deny whose reason reaches the model before a write, context after a
write, and the request that keeps the agent going when it stops. Each is one JSON object on one
line; nothing else ever goes to stdout (Gemini CLI and Codex drop a hook whose stdout is not
exactly their JSON). The one exception is Claude Code's stop request: a Blocking, said on stderr
with exit code 2. setup/hookconfig.py checks these shapes for doctor and the tests."""

from __future__ import annotations

import json

from ..lazy import lazy
from ..setup.hookconfig import AFTER_WRITE, SPECIFIC
from ..values import Value


def context(client: str, moment: str, text: str) -> dict | None:
    """Text the model reads with the prompt (PROMPT) or with a write's result (AFTER_WRITE); None
    where the client has no way to add it."""
    if client == "cursor":
        return {"additional_context": text} if moment == AFTER_WRITE else None
    name = SPECIFIC.get((client, moment))
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}} if name else None


def deny(client: str, reason: str, short: str) -> dict:
    """Refuse a write; `reason` reaches the model before it tries again (`short`: what Cursor shows
    the person)."""
    if client == "gemini":
        return {"decision": "deny", "reason": reason}
    if client == "cursor":
        return {"permission": "deny", "user_message": short, "agent_message": reason}
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


class Blocking(Value):
    """A refusal said on stderr with exit code 2 instead of JSON on stdout."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


Reply = dict | Blocking  # what the hook answers: JSON on stdout, or a Blocking on stderr


def keep_going(client: str, reason: str) -> Reply:
    """Ask the agent, as it stops, to do one more thing: `reason` is what it reads. Claude Code
    gets it as exit code 2 with the reason on stderr, which reaches the model once; its JSON
    `{"decision": "block"}` reached the model twice from 2.1.332 on (as a reminder and again as a
    system message; bench/client_hooks_results.txt)."""
    if client == "gemini":
        return {"decision": "deny", "reason": reason}
    if client == "cursor":
        return {"followup_message": reason}
    if client == "claude":
        return Blocking(reason)
    return {"decision": "block", "reason": reason}


# A lone surrogate: what a record's "\\ud800" escape reads as. It has no UTF-8, and a strict JSON
# reader refuses it even as an escape.
_SURROGATE = lazy("[\ud800-\udfff]")


def line(reply: dict) -> bytes:
    """The reply as one line of UTF-8 JSON; a lone surrogate in its text is shown as its escape
    (`\\ud800`, as visible.py shows it), so a record holding one cannot stop the whole reply."""
    text = json.dumps(reply, ensure_ascii=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate
        text = _SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8") + b"\n"
