"""The redaction corpora of bench/corpora/ read as data (the tests import nothing from bench/).

A line's `text` and `expected` hold placeholders where a credential goes (bench/fakes.py describes
them: `{ghp_<an*36>}`, `{b64(user:<an*12>)}`, `\\x` for x itself, `#2` to tell two values apart,
`{{`/`}}` for a brace); they are filled here with fakes of that shape from a fixed seed, so that no
key is ever written down.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

CORPORA = Path(__file__).resolve().parents[1] / "bench" / "corpora"
FIELD_BYTES = 1024

_ALPHABETS = {
    "d": string.digits,
    "hex": string.digits + "abcdef",
    "HEX": string.digits + "ABCDEF",
    "af": "abcdef",
    "AF": "ABCDEF",
    "b32": string.ascii_uppercase + "234567",
    "b32l": string.ascii_lowercase + "234567",
    "bech": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "lower": string.ascii_lowercase,
    "upper": string.ascii_uppercase,
    "ln": string.ascii_lowercase + string.digits,
    "un": string.ascii_uppercase + string.digits,
    "letters": string.ascii_letters,
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "an": string.ascii_letters + string.digits,
}
_ENCODE = {
    "b64": lambda raw: base64.b64encode(raw).decode(),
    "b64n": lambda raw: base64.b64encode(raw).decode().rstrip("="),
    "b64u": lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="),
    "b64up": lambda raw: base64.urlsafe_b64encode(raw).decode(),
}
# a doubled brace, an escaped character, a random run, a base64 call opening, a group's end, a value's name
_TOKEN = re.compile(r"\{\{|\}\}|\\(.)|<(\w+)\*(\d+)>|(b64u?p?n?)\(|([(){}#])|([^\\<b(){}#]+|.)", re.S)


def _fill(template: str, rng: random.Random, values: dict[str, str]) -> str:
    """template with every placeholder replaced; the same placeholder is the same value."""
    stack: list[list[str]] = [[]]  # the text of each open group
    opened: list[tuple[str, int]] = []  # (what opened it, where its spec starts in template)
    hashed = False
    for m in _TOKEN.finditer(template):
        whole, escaped, alphabet, count, call, mark, _ = m.group(0), *m.groups()
        if not opened and whole in ("{{", "}}"):
            stack[-1].append(whole[0])
        elif escaped is not None and opened:
            stack[-1].append(escaped)
        elif alphabet and opened:
            stack[-1].append("".join(rng.choice(_ALPHABETS[alphabet]) for _ in range(int(count))))
        elif call and opened:
            opened.append((call, m.end()))
            stack.append([])
        elif mark == "{" and not opened:
            opened.append(("{", m.end()))
            stack.append([])
            hashed = False
        elif mark == "#" and len(opened) == 1:
            hashed = True
        elif mark == ")" and opened and opened[-1][0] != "{":
            call_name, _ = opened.pop()
            inner = "".join(stack.pop())
            stack[-1].append(_ENCODE[call_name](inner.encode()))
        elif mark == "}" and len(opened) == 1:
            _, start = opened.pop()
            value = "".join(stack.pop())
            spec = template[start : m.start()]
            stack[-1].append(values.setdefault(spec, value))
            hashed = False
        elif not hashed:
            stack[-1].append(whole)
    return "".join(stack[0])


def examples(name: str, part: str) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(text, kind, expected substrings, language) of bench/corpora/NAME.PART.jsonl, filled."""
    out = []
    lines = (CORPORA / f"{name}.{part}.jsonl").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        row = json.loads(line)
        rng, values = random.Random(f"tests {name} {part} {number}"), {}
        text = _fill(row["text"], rng, values)
        expected = tuple(_fill(s, rng, values) for s in row["expected"])
        out.append((text, row["kind"], expected, row["language"]))
    return out


def hostile() -> dict[str, str]:
    """Name -> a 1 KiB input built to make the redaction rules backtrack (bench/corpora/hostile.jsonl)."""
    out = {}
    for line in (CORPORA / "hostile.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        unit, prefix = ("".join(x) if isinstance(x, list) else x for x in (row["unit"], row.get("prefix", "")))
        text = prefix + unit * (FIELD_BYTES // max(1, len(unit.encode())) + 1)
        while len(text.encode()) > FIELD_BYTES:
            text = text[:-1]
        out[row["name"]] = text[: row.get("cut")] + row.get("suffix", "")
    return out
