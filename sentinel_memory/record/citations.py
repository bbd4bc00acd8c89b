"""The files a record cites (docs/contract.md §3.7): the paths log_memory's `files` lists, checked
to stay inside the project, and the paths its lesson or missing_context names that exist there.

A cited path is stored relative to the project root with forward slashes, as git names it. A listed
path that is absolute, climbs out with `..`, or leaves the project through a symbolic link is
refused, and nothing is saved. A path is found in the text only when it is certainly one: a run of
path characters (letters of any script, digits, `_ . - @ +` and `/`, or `\\` read as `/`) that holds
a `/` or ends in a file extension, is relative, and is an existing file inside the project; a
leading `@`, as the clients' prompts mention a file (`@src/a.py`), is left out when the path with it
is none, and so are Hangul letters right after its extension (`docs/결제안내.md를`: a particle).
Nothing else in the text counts. Files in .git/ and .context/ (the memory's own directory, changed
by every save) are never cited.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from pathlib import Path

from ..errors import InvalidInput
from ..lazy import lazy
from .records import NOTHING_SAVED

MAX_FILES = 10  # cited files per record, listed and found together
MAX_PATH_BYTES = 512  # one cited path, in UTF-8 bytes

_PATHLIKE = re.compile(r"[\w.@+\-/\\]+")
_ASCII_PATHLIKE = re.compile(r"[A-Za-z0-9_.@+\-/\\]+")  # inside a run of Chinese or Japanese: 修改src/app.py时
_PARTICLE = lazy(r"(\.[A-Za-z0-9]{1,10})[\uac00-\ud7af]+$")  # docs/guide.md를: the particle after a name
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")
_DRIVE = re.compile(r"^[A-Za-z]:")
# Never cited: git's own files, and .context/, whose memory file every save changes (a lesson citing
# it would be stale again after each commit of the memory).
_NOT_CITABLE = (".git", ".context")


def _refuse(path: str, rule: str, outcome: str = NOTHING_SAVED) -> InvalidInput:
    shown = path if len(path) <= 120 else path[:117] + "..."
    how = "Cite files" if outcome == NOTHING_SAVED else "Name files"
    return InvalidInput(
        f"files: {shown!r} {rule}. {how} by their path relative to the project root, "
        f'e.g. "src/payment/refund.py". {outcome}'
    )


def _normal(raw: str) -> str:
    """The path with forward slashes, without `./` and doubled slashes ('' for nothing left)."""
    text = raw.strip().replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    return "/".join(parts)


def _escapes(root: Path, relative: str) -> bool:
    """Whether the path, with symbolic links followed, ends up outside the project root."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(real_root, relative))
    return real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep)


SEARCHED = "Nothing was searched."


def asked(root: Path, files: object) -> list[str]:
    """The paths search_memory's `files` names, checked as listed() checks a record's, except that
    a path need not exist yet (the agent may be about to create it); a directory is refused."""
    return listed(root, files, existing=False, outcome=SEARCHED)


def listed(root: Path, files: object, existing: bool = True, outcome: str = NOTHING_SAVED) -> list[str]:
    """The paths `files` lists, normalised, in their order without repeats; InvalidInput for a
    value that is not a list of strings, more than MAX_FILES paths, or a path that is absolute,
    uses `..`, leaves the project through a symbolic link, or (`existing`) is not a file in the
    project or holds a credential in its name (a strict rule of docs/contract.md §6). `outcome` ends each refusal: what the refused call did not do."""
    if files is None:
        return []
    if isinstance(files, str) or not isinstance(files, (list, tuple)):
        raise InvalidInput(
            f'files must be a list of paths relative to the project root, such as ["src/app.py"]. {outcome}'
        )
    out: list[str] = []
    for item in files:
        if not isinstance(item, str):
            raise InvalidInput(f"files must hold paths as strings, not {type(item).__name__}. {outcome}")
        raw = item.strip()
        if not raw:
            raise _refuse(item, "is empty; leave it out, or name a file", outcome)
        if "\0" in raw:
            raise _refuse(raw, "holds a NUL character, which no file name can hold", outcome)
        try:
            size = len(raw.encode("utf-8"))
        except UnicodeEncodeError:  # a name that is not UTF-8, as Python hands it over from the command line
            raise _refuse(
                raw,
                "is not a UTF-8 name; a record stores and shows its files as UTF-8 text, so rename "
                "the file or leave it out",
                outcome,
            ) from None
        if size > MAX_PATH_BYTES:
            raise _refuse(raw, f"is longer than {MAX_PATH_BYTES} bytes", outcome)
        slashed = raw.replace("\\", "/")
        if slashed.startswith("/") or _DRIVE.match(slashed) or slashed.startswith("~"):
            raise _refuse(raw, "is absolute; a file must be inside the project, given relative to its root", outcome)
        if ".." in slashed.split("/"):
            raise _refuse(
                raw, "uses '..'; a file must be inside the project, given relative to its root without '..'", outcome
            )
        path = _normal(raw)
        if not path:
            raise _refuse(raw, "names the project folder itself, not a file in it", outcome)
        if path.split("/", 1)[0] in _NOT_CITABLE:
            raise _refuse(
                raw, "is inside .git/ or .context/, which a lesson cannot cite (.context/ holds this memory)", outcome
            )
        if _escapes(root, path):
            raise _refuse(
                raw, "leads out of the project through a symbolic link; a file must be inside the project", outcome
            )
        full = os.path.join(root, path)
        if os.path.isdir(full):
            raise _refuse(raw, f"is a directory, not a file ({root})", outcome)
        if existing and not os.path.isfile(full):
            raise _refuse(raw, f"is not a file in the project ({root})", outcome)
        if existing:  # a record's path is stored, and the memory file is pushed
            # Loaded here: a hook that only reads the paths a prompt names starts without it.
            from ..redaction.engine import redact

            hidden, found = redact(path, strict_only=True)
            if found:
                raise _refuse(
                    hidden,
                    "holds a credential in its name, which the memory file (pushed with the project) must not; "
                    "leave it out, or rename the file",
                    outcome,
                )
        if path not in out:
            out.append(path)
    if len(out) > MAX_FILES:
        more = (
            "Keep the files the lesson is really about"
            if outcome == NOTHING_SAVED
            else "Name the ones you are about to read or change"
        )
        raise InvalidInput(f"files lists {len(out)} paths; at most {MAX_FILES} may be given. {more}. {outcome}")
    return out


def named(root: Path, *texts: str, absolute: bool = False, cwd: str | None = None) -> list[str]:
    """The existing project files that these texts name by a relative path (see the module's
    docstring for what counts), in order of appearance, without repeats. With `absolute`, also by
    an absolute path inside the project (as a prompt holds a file dragged into the terminal or
    copied from an editor). With `cwd`, a folder of the project the texts were written in, a
    relative path is first read from there (`@_async/http2.py`, as a client started in the
    project's httpcore/ inserts it, names httpcore/_async/http2.py), then from the project's root."""
    out: list[str] = []
    here = under(root, cwd) if cwd else ""
    for text in texts:
        for token in _tokens(text or ""):
            token = token.rstrip(".").replace("\\", "/")
            relative = not token.startswith("/")
            if not relative:
                token = under(root, token) if absolute else ""
            bare = token if token.isascii() else _PARTICLE.sub(r"\1", token)
            if not token or ("/" not in token and not _EXTENSION.search(bare)):
                continue
            if len(token) > MAX_PATH_BYTES:
                continue
            # `@src/a.py`: how the clients' prompts mention a file (a path may hold an `@` too).
            candidates = [token, bare]
            candidates += [c[1:] for c in candidates if c.startswith("@")]
            if here and relative:
                candidates = [posixpath.normpath(f"{here}/{_normal(c)}") for c in candidates] + candidates
            for candidate in dict.fromkeys(candidates):
                path = _normal(candidate)
                if not path or path in out or path.split("/", 1)[0] in _NOT_CITABLE or ".." in path.split("/"):
                    continue
                if os.path.isfile(os.path.join(root, path)) and not _escapes(root, path):
                    out.append(path)
                    break
    return out


def _tokens(text: str):
    """The runs of path characters a text holds, letters of any script included (docs/결제안내.md),
    each followed by the runs of ASCII path characters inside it when they differ (a path written
    into Chinese or Japanese without spaces: 修改src/app.py时)."""
    for token in _PATHLIKE.findall(text):
        yield token
        if not token.isascii():
            yield from (t for t in _ASCII_PATHLIKE.findall(token) if t != token)


def under(root: Path, absolute: str) -> str:
    """An absolute path as the project-relative path it names ('' for one outside the project),
    the project's root taken as given and with its links resolved, and the path as given and with
    the links of its folders resolved: `$PWD/src/app.py` typed in a folder reached through a link
    (macOS's /tmp is one to /private/tmp) names the project's src/app.py."""
    path = os.path.normpath(absolute)
    tops = dict.fromkeys((os.path.normpath(root), os.path.realpath(root)))
    for top in tops:
        if path.startswith(top.rstrip(os.sep) + os.sep):
            return path[len(top.rstrip(os.sep)) + 1 :].replace(os.sep, "/")
    folder, name = os.path.split(path)
    try:
        real = os.path.join(os.path.realpath(folder), name)
    except (OSError, ValueError):
        return ""
    top = os.path.realpath(root).rstrip(os.sep) + os.sep
    return real[len(top) :].replace(os.sep, "/") if real != path and real.startswith(top) else ""


def cited(root: Path, files: object, kept: list[str], *texts: str) -> list[str]:
    """The files a record saved now cites, sorted: the listed ones (or, with `files` omitted
    (None), the ones it already cites, `kept`), and the ones its texts name, at most MAX_FILES
    in all (listed ones first; a named one past the limit is left out)."""
    chosen = listed(root, files) if files is not None else [p for p in kept if isinstance(p, str)]
    for path in named(root, *texts):
        if len(chosen) >= MAX_FILES:
            break
        if path not in chosen:
            chosen.append(path)
    return sorted(chosen)


def shown(path: str) -> str:
    """A cited path as a line of text shows it: as itself, or, when it holds a line break or
    another control character (a file may be named so), quoted with escapes, so that it cannot
    break or forge a line."""
    if any(ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029" for c in path):
        return json.dumps(path, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return path


def of(record: dict) -> list[str]:
    """The files a stored record cites (only its strings; anything else in the field is ignored)."""
    files = record.get("files")
    if not isinstance(files, list):
        return []
    return [f for f in files if isinstance(f, str) and f]
