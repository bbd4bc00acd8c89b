"""The redaction corpora (bench/corpora/*.jsonl) and the one seeded generator that fills them.

A corpus line is one example: {"text", "kind", "language", "expected", "part"}. `kind` is the
credential kind, or "neg:<category>" for a text with nothing to redact; `expected` lists the
substrings that must be gone after redaction (empty for a negative); `part` is "dev" (rules may
be tuned on it) or "held-out" (only ever scored), and each part has its own file.

No credential is written down: where one goes, `text` and `expected` hold a placeholder that this
module fills at run time with a fake of the same shape, so that no scanner (or push protection)
finds a key in the repository. A placeholder is `{...}`; a literal brace outside one is doubled
(`{{`, `}}`). Inside, a shape:

    <hex*32>        32 characters drawn from the alphabet named hex (ALPHABETS below)
    b64(...)        the base64 of what is inside (b64n: without padding; b64u: URL-safe, without
                    padding; b64up: URL-safe, padded)
    \\x             the character x itself (\\{ \\} \\< \\> \\( \\) \\# \\\\ and, in key labels, a
                    space kept apart from its neighbours)
    anything else   itself: a provider's prefix, a separator, a dictionary word of a password

A placeholder that appears twice in one example is one value (the text and `expected` agree); two
values of the same shape in one example differ by a suffix `#2`, `#3`. Every example draws from its
own random.Random, seeded by the corpus seed, its file and its line, so an edit to one line
changes no other line's values.

    python bench/fakes.py NAME PART    # prints the filled examples of one file
"""

from __future__ import annotations

import base64
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

CORPORA = Path(__file__).resolve().parent / "corpora"
SEED = 20260227
PARTS = ("dev", "held-out")
FIELD_BYTES = 1024  # the hostile inputs are the largest field

_DIGITS = "0123456789"
_LOWER = "abcdefghijklmnopqrstuvwxyz"
_UPPER = _LOWER.upper()
ALPHABETS = {
    "d": _DIGITS,
    "hex": _DIGITS + "abcdef",
    "HEX": _DIGITS + "ABCDEF",
    "af": "abcdef",
    "AF": "ABCDEF",
    "b32": _UPPER + "234567",
    "b32l": _LOWER + "234567",
    "bech": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "lower": _LOWER,
    "upper": _UPPER,
    "ln": _LOWER + _DIGITS,
    "un": _UPPER + _DIGITS,
    "letters": _LOWER + _UPPER,
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "an": _LOWER + _UPPER + _DIGITS,
}
_ENCODINGS = {
    "b64": lambda raw: base64.b64encode(raw).decode(),
    "b64n": lambda raw: base64.b64encode(raw).decode().rstrip("="),
    "b64u": lambda raw: base64.urlsafe_b64encode(raw).decode().rstrip("="),
    "b64up": lambda raw: base64.urlsafe_b64encode(raw).decode(),
}


@dataclass(frozen=True)
class Example:
    text: str
    kind: str  # the credential kind, or "neg:<category>" for a negative
    secrets: tuple[str, ...]  # substrings that must be gone after redaction; () for a negative
    lang: str  # "en" or "ko"

    @property
    def positive(self) -> bool:
        return bool(self.secrets)


class Fakes:
    """Fills one example's placeholders from its own seeded random.Random."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.values: dict[str, str] = {}

    def fill(self, template: str) -> str:
        out: list[str] = []
        i = 0
        while i < len(template):
            c = template[i]
            if c in "{}" and template[i + 1 : i + 2] == c:
                out.append(c)
                i += 2
            elif c == "{":
                end = _closing(template, i + 1, "}")
                spec = template[i + 1 : end]
                if spec not in self.values:
                    self.values[spec] = self.make(spec)
                out.append(self.values[spec])
                i = end + 1
            else:
                out.append(c)
                i += 1
        return "".join(out)

    def make(self, spec: str) -> str:
        """The value a shape describes, drawn afresh."""
        hash_at = _unescaped_hash(spec)
        if hash_at is not None:
            spec = spec[:hash_at]
        out: list[str] = []
        i = 0
        while i < len(spec):
            c = spec[i]
            if c == "\\":
                out.append(spec[i + 1])
                i += 2
            elif c == "<":
                end = spec.index(">", i)
                name, count = spec[i + 1 : end].split("*")
                alphabet = ALPHABETS[name]
                out.append("".join(self.rng.choice(alphabet) for _ in range(int(count))))
                i = end + 1
            elif c == "b" and (call := _encoding_at(spec, i)):
                start = i + len(call) + 1
                end = _closing(spec, start, ")")
                out.append(_ENCODINGS[call](self.make(spec[start:end]).encode()))
                i = end + 1
            else:
                out.append(c)
                i += 1
        return "".join(out)


def _encoding_at(spec: str, i: int) -> str | None:
    for name in sorted(_ENCODINGS, key=len, reverse=True):
        if spec.startswith(name + "(", i):
            return name
    return None


def _closing(s: str, i: int, close: str) -> int:
    """The index of the `close` that ends the group opened just before i (escapes and nested
    groups skipped)."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c in "({":
            depth += 1
        elif c in ")}":
            if depth == 0 and c == close:
                return i
            depth -= 1
        i += 1
    raise ValueError(f"unclosed placeholder in {s!r}")


def _unescaped_hash(spec: str) -> int | None:
    i, found = 0, None
    while i < len(spec):
        if spec[i] == "\\":
            i += 2
            continue
        if spec[i] == "#":
            found = i
        i += 1
    return found


def path(name: str, part: str) -> Path:
    if part not in PARTS:
        raise ValueError(f"part is {part!r}; it must be one of {', '.join(PARTS)}")
    return CORPORA / f"{name}.{part}.jsonl"


def load(name: str, part: str, seed: int = SEED) -> list[Example]:
    """The examples of one corpus part, every placeholder filled."""
    examples = []
    lines = path(name, part).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        row = json.loads(line)
        fakes = Fakes(random.Random(f"{seed} {name} {part} {number}"))
        text = fakes.fill(row["text"])
        secrets = tuple(fakes.fill(s) for s in row["expected"])
        examples.append(Example(text, row["kind"], secrets, row["language"]))
    return examples


def hostile(size: int = FIELD_BYTES) -> dict[str, str]:
    """Name -> an input of `size` bytes (a field's, 1 KiB, unless given) built to make the
    redaction rules backtrack: `unit` repeated after `prefix` (each a string, or pieces joined, kept
    apart so that scanners stay quiet) up to that size, then cut to `cut` characters if given and
    `suffix` appended."""
    out = {}
    for line in (CORPORA / "hostile.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        unit, prefix = ("".join(x) if isinstance(x, list) else x for x in (row["unit"], row.get("prefix", "")))
        text = prefix + unit * (size // max(1, len(unit.encode())) + 1)
        while len(text.encode()) > size:
            text = text[:-1]
        if "cut" in row:
            text = text[: row["cut"]]
        out[row["name"]] = text + row.get("suffix", "")
    return out


if __name__ == "__main__":
    for example in load(sys.argv[1], sys.argv[2]):
        print(json.dumps(example.__dict__, ensure_ascii=False))
