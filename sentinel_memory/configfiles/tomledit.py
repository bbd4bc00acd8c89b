"""Editing a client's TOML config (Codex's .codex/config.toml) without breaking it: through tomlkit,
a style-keeping parser (comments, quoting, dotted keys), or, for a new table, appended as text; the
result is checked with the standard parser to mean exactly the old file plus our change, else
Refused (configfiles/configedit.py: the files on disk, JSON, and the refusal's sentence). tomlkit is
imported only when a TOML file is edited."""

from __future__ import annotations

import copy

from .configedit import Refused, newline_of

# A project's Codex config is a few KB. tomlkit takes about half a second for 32 KB of dotted
# keys and grows faster than the text (128 KB: 3.5 s, 738 KB: 48 s), so a bigger file is neither
# parsed nor edited: init leaves it alone and says what to add by hand, and doctor, saying what
# init would do, says so too (its own read of the file is tomllib's, fast at 1 MiB).
MAX_TOML_EDIT_BYTES = 32 * 1024


def merge_toml_table(
    text: str, path: tuple[str, ...], wanted: dict, defaults: dict, drop=lambda _k, _v: False
) -> tuple[str, dict | None]:
    """(the new text, the table as it was or None) with the table at `path` holding `wanted`
    (set) and `defaults` (nested dicts: each leaf added only when absent), its keys for which
    drop(key, value) is true removed (as merge_json_entry does). Edited with tomlkit so
    comments, quoting and layout stay; the result must parse to exactly the old document plus
    these values, else Refused (tomlkit cannot always extend a table written with dotted keys), as
    is a text of more than MAX_TOML_EDIT_BYTES, before anything parses it."""
    size = len(text.encode("utf-8"))
    if size > MAX_TOML_EDIT_BYTES:
        raise Refused(
            f"it is {size:,} bytes of TOML, more than init edits ({MAX_TOML_EDIT_BYTES:,} at most; a Codex "
            "config is a few KB); make it smaller"
        )
    import tomllib

    import tomlkit

    try:
        before = tomllib.loads(text)
        doc = tomlkit.parse(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, tomlkit's ParseError
        raise Refused(f"it is not valid TOML ({exc}); fix it first") from None
    node, plain = doc, before
    for part in path:
        if part in plain and not isinstance(plain[part], dict):
            raise Refused(f"its {'.'.join(path)} is not a table")
        plain = plain.get(part, {})
    current = copy.deepcopy(plain) if _has(before, path) else None
    expected = copy.deepcopy(before)
    target_plain = expected
    for part in path:
        target_plain = target_plain.setdefault(part, {})
    target_plain.update(wanted)
    _add_defaults(target_plain, defaults)
    dropped = [k for k, v in target_plain.items() if k not in wanted and drop(k, v)]
    for k in dropped:
        del target_plain[k]
    if expected == before:
        return text, current
    if current is None:  # our table is new: appended as text, so every byte of the file stays
        appended = _appended(text, path, target_plain)
        try:
            if tomllib.loads(appended) == expected:
                return appended, current
        except ValueError:
            pass  # the path is written inline or with dotted keys: tomlkit below, or refused
    if tomlkit.dumps(doc) != text:
        raise Refused(
            f"init could not edit its {'.'.join(path)} table without reordering the file's tables (a "
            "table split around an array of tables)"
        )
    try:
        for i, part in enumerate(path):
            if part not in node:
                node[part] = tomlkit.table(is_super_table=i < len(path) - 1)
            node = node[part]
        for k, v in wanted.items():
            if node.get(k) != v:
                node[k] = v
        _add_defaults_toml(node, defaults)
        for k in dropped:
            del node[k]
        out = tomlkit.dumps(doc)
        after = tomllib.loads(out)
    except Exception:
        raise Refused(
            f"init could not extend its {'.'.join(path)} table without changing its meaning "
            "(written with dotted keys or inline)"
        ) from None
    if after != expected:
        raise Refused(
            f"init could not extend its {'.'.join(path)} table without changing its meaning "
            "(written with dotted keys or inline)"
        )
    if "\r\n" in text:
        out = out.replace("\r\n", "\n").replace("\n", "\r\n")
    return out, current


def _appended(text: str, path: tuple[str, ...], table: dict) -> str:
    """`text` with the table at `path` holding `table` added at its end, in the file's line ends."""
    import tomlkit

    doc = fresh = tomlkit.document()
    for part in path[:-1]:
        fresh[part] = tomlkit.table(is_super_table=True)
        fresh = fresh[part]
    fresh[path[-1]] = _toml_table(table)
    newline = newline_of(text)
    added = tomlkit.dumps(doc).replace("\n", newline)
    if not text.strip():
        return added
    # Every byte of the file kept (its blank lines at the end too), then one blank line before ours.
    ends = text.endswith(("\n", "\r"))
    blank = text.endswith((newline + newline, "\n\n", "\r\n\r\n"))
    return text + ("" if ends else newline) + ("" if blank else newline) + added


def _toml_table(values: dict):
    import tomlkit

    table = tomlkit.table(is_super_table=all(isinstance(v, dict) for v in values.values()))
    for k, v in values.items():
        table[k] = _toml_table(v) if isinstance(v, dict) else v
    return table


def _has(doc: dict, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(doc, dict) or part not in doc:
            return False
        doc = doc[part]
    return True


def _add_defaults(table: dict, defaults: dict) -> None:
    for k, v in defaults.items():
        if isinstance(v, dict):
            inner = table.setdefault(k, {})
            if not isinstance(inner, dict):
                raise Refused(f"its {k} is {type(inner).__name__}, not a table")
            _add_defaults(inner, v)
        else:
            table.setdefault(k, v)


def _add_defaults_toml(node, defaults: dict) -> None:
    import tomlkit

    for k, v in defaults.items():
        if isinstance(v, dict):
            if k not in node:
                node[k] = tomlkit.table(is_super_table=all(isinstance(x, dict) for x in v.values()))
            _add_defaults_toml(node[k], v)
        elif k not in node:
            node[k] = v
