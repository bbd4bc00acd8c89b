"""Editing a client's JSON or JSONC config without breaking it: our members spliced into the
original text at positions a scanner found, so numbers such as 1.10 or 1e400, a BOM, line endings,
key order, indentation, and JSONC's comments and trailing commas (which the scanner reads as
spaces) stay as they were; a text that is not a JSON object, or names a key of ours twice, is
Refused (configfiles/configedit.py: the file on disk and the refusal's sentence)."""

from __future__ import annotations

import functools
import json
import re

from .configedit import Refused, newline_of


class Node:
    """A JSON value's place in the text: [start, end), for an object its members as
    (key, key_start, value Node), for an array its items (Nodes)."""

    def __init__(self, start: int, end: int, members: list | None = None, items: list | None = None):
        self.start, self.end, self.members, self.items = start, end, members, items

    def get(self, key: str) -> list[Node]:
        return [value for name, _at, value in self.members or [] if name == key]


# JSONC, as VS Code, Cursor and Gemini CLI read their settings: comments and trailing commas.
# Two left-to-right passes, each what re.sub with `"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*[\s\S]*?\*/`,
# then with `"(?:[^"\\\n]|\\.)*"|,(?=\s*[}\]])`, would give, in time linear in the text: those
# patterns scan to the text's end again for every unterminated "/*" and to the line's end again for
# every quote of an unterminated string (90 KB of "/*x" took minutes). A string is kept as it is;
# where one does not close, its quote is text and the pass goes on from the next character.
_COMMENT_OR_QUOTE = re.compile(r'"|/[/*]')
_QUOTE_OR_TRAILING_COMMA = re.compile(r'"|,(?=\s*[}\]])')  # each comma's lookahead: its own spaces
_STRING_BODY = re.compile(r'"(?:[^"\\\n]+|\\.)*')  # up to the closing quote, or where none can come
_NOT_LINE_BREAK = re.compile(r"[^\r\n]")


class _Strings:
    """Where a string starting at a quote ends (None: it does not close), each character read once:
    a quote inside an unclosed string's run is an escaped one, from which a string runs to the same
    place, so it does not close either."""

    def __init__(self, text: str):
        self.text, self.start, self.stop = text, -1, -1

    def end(self, at: int) -> int | None:
        if self.start < at < self.stop:
            return None
        body = _STRING_BODY.match(self.text, at)
        assert body is not None  # a quote stands at `at`
        stop = body.end()
        if stop < len(self.text) and self.text[stop] == '"':
            return stop + 1
        self.start, self.stop = at, stop
        return None


def _outside_strings(pattern: re.Pattern, text: str, at: int, strings: _Strings) -> re.Match | None:
    """The first match of `pattern` (which also matches a quote) from `at` on that is no string's
    quote: a string is passed over whole, an unclosed string's quote as one character of text."""
    while found := pattern.search(text, at):
        if found.group() != '"':
            return found
        end = strings.end(found.start())
        at = found.start() + 1 if end is None else end
    return None


def _blank_comments(text: str) -> str:
    pieces, kept, at, strings, unclosed = [], 0, 0, _Strings(text), False
    while found := _outside_strings(_COMMENT_OR_QUOTE, text, at, strings):
        at = found.start()
        if found.group() == "//":
            end = text.find("\n", at)
            end = len(text) if end < 0 else end
        else:
            close = -1 if unclosed else text.find("*/", at + 2)
            if close < 0:  # no "*/" from here on: no later "/*" closes either
                unclosed, at = True, at + 1
                continue
            end = close + 2
        pieces += [text[kept:at], _NOT_LINE_BREAK.sub(" ", text[at:end])]
        kept = at = end
    return "".join(pieces) + text[kept:] if pieces else text


def _blank_trailing_commas(text: str) -> str:
    pieces, kept, at, strings = [], 0, 0, _Strings(text)
    while found := _outside_strings(_QUOTE_OR_TRAILING_COMMA, text, at, strings):
        at = found.start()
        pieces += [text[kept:at], " "]
        kept = at = at + 1
    return "".join(pieces) + text[kept:] if pieces else text


@functools.lru_cache(maxsize=8)
def blank(text: str) -> str:
    """`text` with its comments and trailing commas turned into spaces (line breaks kept): plain
    JSON with every value where it was, so positions found in it are positions in `text`."""
    if "/" not in text and "," not in text:
        return text
    return _blank_trailing_commas(_blank_comments(text))


def loads(text: str, **kwargs):
    """json.loads for JSON or JSONC."""
    return json.loads(blank(text), **kwargs)


def scan(text: str, i: int = 0) -> Node:
    """The structure of JSON or JSONC text that loads() has already accepted."""
    plain = blank(text)
    node, _ = _value(plain, _ws(plain, i))
    return node


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _string_end(text: str, i: int) -> int:
    i += 1
    while text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _value(text: str, i: int) -> tuple[Node, int]:
    c = text[i]
    if c == '"':
        end = _string_end(text, i)
        return Node(i, end), end
    if c in "[{":
        members: list[tuple[str, int, Node]] | None = [] if c == "{" else None
        items: list[Node] | None = [] if c == "[" else None
        closing, j = "]" if c == "[" else "}", _ws(text, i + 1)
        while text[j] != closing:
            if members is not None:
                key_end = _string_end(text, j)
                key, key_at = json.loads(text[j:key_end]), j
                j = _ws(text, _ws(text, key_end) + 1)  # past the colon
            value, j = _value(text, j)
            if members is not None:
                members.append((key, key_at, value))
            elif items is not None:
                items.append(value)
            j = _ws(text, j)
            if text[j] == ",":
                j = _ws(text, j + 1)
        return Node(i, j + 1, members, items), j + 1
    j = i
    while j < len(text) and text[j] not in ",]} \t\r\n":
        j += 1
    return Node(i, j), j


def _line_indent(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    line = text[start:]
    return line[: len(line) - len(line.lstrip(" \t"))]


def indent_unit(text: str) -> str:
    """The file's indentation step (two spaces for a new or one-line file)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            return "\t" if indent.startswith("\t") else indent
    return "  "


def _render(value, unit: str, indent: str, newline: str, inline: bool) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    dumped = json.dumps(value, indent=unit, ensure_ascii=False)
    return dumped.replace("\n", newline + indent)


def set_member(text: str, obj: Node, key: str, value) -> str:
    """`text` with `key` of the object at `obj` set to `value`: its value replaced in place, or a
    member added after the last one, indented as its siblings."""
    unit, newline = indent_unit(text), newline_of(text)
    existing = obj.get(key)
    inline = "\n" not in text[obj.start : obj.end] and (bool(obj.members) or "\n" not in text)
    if existing:
        node = existing[-1]
        indent = _line_indent(text, node.start)
        return text[: node.start] + _render(value, unit, indent, newline, inline) + text[node.end :]
    if obj.members:
        last = obj.members[-1][2]
        if inline:
            member = f", {json.dumps(key, ensure_ascii=False)}: {_render(value, unit, '', newline, True)}"
        else:
            indent = _line_indent(text, obj.members[-1][1])
            member = (
                f",{newline}{indent}{json.dumps(key, ensure_ascii=False)}: "
                f"{_render(value, unit, indent, newline, False)}"
            )
        return _after_value(text, last.end, member, newline)
    close = obj.end - 1
    if blank(text[obj.start : obj.end]) != text[obj.start : obj.end]:  # only comments inside: kept
        if inline:
            member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, unit, '', newline, True)} "
            return text[:close] + member + text[close:]
        outer = _line_indent(text, obj.start)
        indent = outer + unit
        head = text[:close].rstrip(" \t\r\n")
        member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, unit, indent, newline, False)}"
        return head + newline + indent + member + newline + outer + text[close:]
    if inline:
        member = f"{json.dumps(key, ensure_ascii=False)}: {_render(value, unit, '', newline, True)}"
        return text[: obj.start + 1] + member + text[close:]
    outer = _line_indent(text, obj.start)
    indent = outer + unit
    member = (
        f"{newline}{indent}{json.dumps(key, ensure_ascii=False)}: "
        f"{_render(value, unit, indent, newline, False)}{newline}{outer}"
    )
    return text[: obj.start + 1] + member + text[close:]


def _after_value(text: str, end: int, piece: str, newline: str) -> str:
    """`text` with `piece` (", ..." or ",<newline><indent>...") after the value ending at `end`; when a
    line comment follows that value on its line, after the comment, so it stays with its value."""
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end - (text[line_end - 1] == "\r")
    rest = text[end:line_end]
    if not piece.startswith("," + newline) or not rest.lstrip(" \t,").startswith("//"):
        return text[:end] + piece + text[end:]
    comma = "" if rest.lstrip(" \t").startswith(",") else ","
    return text[:end] + comma + rest + piece[1:] + text[line_end:]


def delete_member(text: str, obj: Node, key: str) -> str:
    """`text` without the member `key` of the object at `obj`, and the comma that joined it."""
    members = obj.members or []
    index = next(i for i, (name, _at, _v) in enumerate(members) if name == key)
    _name, key_at, value = members[index]
    if index > 0:
        return text[: members[index - 1][2].end] + text[value.end :]
    if len(members) > 1:
        return text[:key_at] + text[members[1][1] :]
    return text[: obj.start + 1] + text[obj.end - 1 :]


def _single(obj: Node, key: str, where: str) -> Node | None:
    found = obj.get(key)
    if len(found) > 1:
        raise Refused(f"it has {len(found)} {key!r} keys in {where} (a client reads only the last); keep one")
    return found[0] if found else None


def _json_object(text: str) -> tuple[str, Node]:
    """(the text, "{}" for an empty one; its top object) of a config we may splice into; Refused
    when it is not plain JSON or not an object."""
    try:
        json.loads(text or "{}")
    except RecursionError:
        raise Refused("it nests deeper than a config does") from None
    except ValueError as exc:
        try:
            loads(text)  # JSONC: its comments and trailing commas stay
        except RecursionError:
            raise Refused("it nests deeper than a config does") from None
        except ValueError:
            raise Refused(f"it is not valid JSON ({exc}); fix it first") from None
    if not text.strip():
        text = "{}\n"
    top = scan(text)
    if top.members is None:
        raise Refused("it is not a JSON object")
    return text, top


def merge_json_entry(text: str, key: str, name: str, wanted: dict, defaults: dict, drop) -> tuple[str, dict | None]:
    """(the new text, our entry as it was or None) with our server `name` under `key`: `wanted`
    set, `defaults` added when absent, keys for which drop(key, value) is true removed; everything
    else byte for byte. Refused when the text is not a JSON object with `key` an object."""
    text, top = _json_object(text)
    servers = _single(top, key, "the file")
    if servers is None:
        entry = {**wanted, **defaults}
        return set_member(text, top, key, {name: entry}), None
    if servers.members is None:
        raise Refused(f"its {key!r} is not an object")
    ours = _single(servers, name, f"{key!r}")
    if ours is None:
        return set_member(text, servers, name, {**wanted, **defaults}), None
    if ours.members is None:
        raise Refused(f"its {name!r} entry is not an object")
    current = loads(text[ours.start : ours.end])
    for k in current:
        _single(ours, k, f"the {name!r} entry")
    for k, v in list(wanted.items()) + [(k, v) for k, v in defaults.items() if k not in current]:
        if current.get(k, object()) != v or k not in current:
            text = set_member(text, _entry_node(text, key, name), k, v)
    for k, v in current.items():
        if k not in wanted and drop(k, v):
            text = delete_member(text, _entry_node(text, key, name), k)
    return text, current


def _entry_node(text: str, key: str, name: str) -> Node:
    return scan(text).get(key)[0].get(name)[0]


def merge_json_hooks(
    text: str, wanted: dict[str, list], ours, top: dict, mine=lambda _e: False
) -> tuple[str, list[str]]:
    """(the new text, the events whose hooks changed) with our hook group in each event's list
    under "hooks" (_put_group: a group of ours, ours(group) true, refreshed in place; a user's
    hook that runs ours, mine(hook) true, upgraded in place; else ours appended after the user's
    groups, which stay byte for byte); `top` members added when absent (Cursor's "version").
    Refused when the text is not a JSON object whose "hooks" is an object of lists."""
    text, root = _json_object(text)
    for key, value in top.items():
        if _single(root, key, "the file") is None:
            text = set_member(text, root, key, value)
            root = scan(text)
    changed: list[str] = []
    if _single(root, "hooks", "the file") is None:
        return set_member(text, root, "hooks", wanted), list(wanted)
    for event, groups in wanted.items():
        hooks = _single(scan(text), "hooks", "the file")
        if hooks is None or hooks.members is None:
            raise Refused("its 'hooks' is not an object")
        current = _single(hooks, event, "'hooks'")
        if current is None:
            text = set_member(text, hooks, event, groups)
            changed.append(event)
            continue
        if current.items is None:
            raise Refused(f"its hooks for {event!r} are not a list")
        before = text
        for group in groups:
            text = _put_group(text, event, group, ours, mine)
        if text != before:
            changed.append(event)
    return text, changed


def _event_list(text: str, event: str) -> Node:
    return scan(text).get("hooks")[0].get(event)[0]


def _put_group(text: str, event: str, group: dict, ours, mine) -> str:
    """Our group in the event's list: the first group of ours replaced when it differs and any
    later one removed (two would run the hook twice); else, when a user's group on the same
    matcher already runs our hook beside theirs, that hook's command brought to ours and nothing
    added; else ours appended after the user's groups."""
    listed = _event_list(text, event)
    values = [loads(text[node.start : node.end]) for node in listed.items or []]
    found = [i for i, value in enumerate(values) if ours(value)]
    if found:
        first, *extra = found
        for index in reversed(extra):
            text = delete_item(text, _event_list(text, event), index)
        if values[first] == group:
            return text
        node = (_event_list(text, event).items or [])[first]
        unit, newline = indent_unit(text), newline_of(text)
        inline = "\n" not in text[node.start : node.end]  # the group written on one line stays so
        indent = _line_indent(text, node.start)
        return text[: node.start] + _render(group, unit, indent, newline, inline) + text[node.end :]
    command = (group["hooks"][0] if isinstance(group.get("hooks"), list) else group)["command"]
    for i, value in enumerate(values):
        if not isinstance(value, dict) or value.get("matcher") != group.get("matcher"):
            continue
        entries = value["hooks"] if isinstance(value.get("hooks"), list) else []
        for j, entry in enumerate(entries):
            if mine(entry):
                if entry.get("command") != command:
                    node = ((listed.items or [])[i].get("hooks")[-1].items or [])[j]
                    text = set_member(text, node, "command", command)
                return text
    items = listed.items or []
    if not items:
        hooks = scan(text).get("hooks")[0]
        return set_member(text, hooks, event, [group])
    unit, newline = indent_unit(text), newline_of(text)
    inline = "\n" not in text[listed.start : listed.end]
    last = items[-1]
    if inline:
        return text[: last.end] + ", " + _render(group, unit, "", newline, True) + text[last.end :]
    indent = _line_indent(text, last.start)
    return _after_value(text, last.end, f",{newline}{indent}" + _render(group, unit, indent, newline, False), newline)


def delete_item(text: str, listed: Node, index: int) -> str:
    """`text` without item `index` of the array at `listed`, and the comma that joined it."""
    items = listed.items or []
    if index > 0:
        return text[: items[index - 1].end] + text[items[index].end :]
    if len(items) > 1:
        return text[: items[0].start] + text[items[1].start :]
    return text[: listed.start + 1] + text[listed.end - 1 :]
