"""`doctor`: check the install, the project root, the memory file, the git wiring and the client
config, and say what to fix. Read-only."""

from __future__ import annotations

import importlib.util
import json
import shlex
import sys
from pathlib import Path

from . import gitdriver
from .project import ProjectRoot
from .records import LIMITS
from .sanitizer import redact
from .setup import SERVER_NAME
from .store import read

OK, WARN, FAIL = "ok", "warn", "FAIL"


def check(root: ProjectRoot) -> list[tuple[str, str]]:
    """(status, sentence) pairs, in the order a person would fix them."""
    out: list[tuple[str, str]] = []
    missing = [m for m in ("fastmcp", "filelock") if importlib.util.find_spec(m) is None]
    out.append((FAIL, f"{', '.join(missing)} not installed for {sys.executable}: pip install -r requirements.txt")
               if missing else (OK, f"install: {sys.executable} has fastmcp and filelock"))
    if root.guarded:
        out.append((FAIL, f"project root {root.path} is the home directory or a filesystem root: run in the project "
                          "or pass --project DIR"))
    else:
        out.append((OK, f"project root {root.path} (from {root.source})"))
    out += _memory_file(root.memory_file)
    out += _git(root.path)
    out += _client(root.path)
    return out


def _memory_file(path: Path) -> list[tuple[str, str]]:
    if not path.exists():
        return [(OK, f"memory file {path} does not exist yet (created on the first log)")]
    snap = read(path)
    out = [(OK, f"memory file {path}: {len(snap.records)} records")]
    if snap.unreadable:
        out.append((WARN, f"{len(snap.unreadable)} unreadable lines: the next write moves them to the quarantine file"))
    if snap.conflict_regions:
        out.append((WARN, f"{snap.conflict_regions} git conflict regions: readable as merged; the next write stores "
                          "the merge (or run the merge driver setup: server.py init)"))
    if snap.duplicates:
        out.append((WARN, f"{snap.duplicates} duplicate ids: the next write keeps the newer of each"))
    if not snap.unreadable and not snap.conflict_regions and snap.text() != snap.raw:
        out.append((WARN, "the file is not in canonical form (order, BOM, CRLF or spacing): the next write normalises it"))
    over, secrets = 0, 0
    for entry in snap.records.values():
        rec = entry.record
        over += any(isinstance(rec.get(k), str) and len(rec[k].encode()) > n for k, n in LIMITS.items())
        secrets += sum(redact(rec[k])[1] for k in ("missing_context", "lesson", "topic", "ask_next_time")
                       if isinstance(rec.get(k), str))
    if over:
        out.append((WARN, f"{over} records exceed a byte limit (edited by hand?): shorten them"))
    if secrets:
        out.append((FAIL, f"{secrets} values look like credentials: remove them and rotate the keys"))
    return out


def _git(root: Path) -> list[tuple[str, str]]:
    if gitdriver.git_dir(root) is None:
        return [(WARN, "not a git work tree: the memory is not shared until the project is in git")]
    out = []
    attributes = root / ".context" / ".gitattributes"
    text = attributes.read_text(encoding="utf-8", errors="replace") if attributes.exists() else ""
    if f"merge={gitdriver.DRIVER}" not in text or f"diff={gitdriver.DRIVER}" not in text:
        out.append((WARN, f"{attributes} does not route the memory file to the drivers: run server.py init"))
    config = gitdriver.current_config(root)
    for key, what in ((f"merge.{gitdriver.DRIVER}.driver", "merge driver"), (f"diff.{gitdriver.DRIVER}.textconv", "diff textconv")):
        command = config.get(key)
        if not command:
            out.append((WARN, f"the git {what} is not configured here: run server.py init (or let the server run once)"))
            continue
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        missing = [w for w in words[:2] if not Path(w).exists()]
        if len(words) < 2 or missing:
            out.append((FAIL, f"the git {what} points at {' '.join(missing) or command!r}, which does not exist: "
                              "run server.py init from the current install"))
        else:
            out.append((OK, f"the git {what} calls {words[1]}"))
    return out


def _client(root: Path) -> list[tuple[str, str]]:
    path = root / ".cursor" / "mcp.json"
    if not path.exists():
        return [(WARN, f"no {path}: run server.py init, or configure your client (docs/clients.md)")]
    try:
        entry = json.loads(path.read_text(encoding="utf-8-sig")).get("mcpServers", {}).get(SERVER_NAME)
    except (ValueError, AttributeError):
        return [(FAIL, f"{path} is not valid JSON: fix it")]
    if not entry:
        return [(WARN, f"{path} has no {SERVER_NAME!r} server: run server.py init")]
    paths = [entry.get("command", "")] + [a for a in entry.get("args", []) if a.endswith(".py")]
    missing = [p for p in paths if not Path(p).exists()]
    if missing:
        return [(FAIL, f"{path} points at {', '.join(missing)}, which does not exist: run server.py init")]
    return [(OK, f"{path} starts {entry.get('command')} {' '.join(entry.get('args', []))}")]
