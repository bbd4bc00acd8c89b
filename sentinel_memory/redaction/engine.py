"""Credential redaction: every secret in a text becomes "[REDACTED]" before the text is stored.

The memory file is tracked by git, and a key pushed to git cannot be recalled, so the provider
rules err towards redacting; the keyword rules, which judge a value by its looks, err towards
keeping prose ("the token: expires soon" stays). `redact` runs the rules of `RULES` in order; a
rule replaces either its whole match or only the part that holds the value (the keyword, the
URL's user and host are kept). A placeholder (`<YOUR_KEY>`, `${VAR}`, `sk-...`, `xxxx`, an
earlier `[REDACTED]`, a value made of placeholder words such as `your-api-key-here`, a prefix
followed by them or by one repeated character such as `xoxb-your-token`, `AKIAXXXXXXXXXXXXXXXX`)
and the documentation example keys of AWS are left alone, so redacting twice changes nothing.
docs/security.md lists the decisions and the measured figures.

Each rule may carry needles (literal strings one of which every match holds) or a gate (a quick
test on the lowercased text); a text that fails them skips the rule's pattern. A text is scanned
again only when a pass replaced a value, until one replaces nothing.

`strict_only=True` applies only the rules marked strict: provider formats with a fixed prefix and
shape, JWTs and PEM private-key blocks, which have essentially no false positives. It is meant
for short fields such as a topic, where a keyword rule could mangle ordinary words.

No pattern can backtrack catastrophically: each starts at a fixed literal or a bounded prefix,
and no two quantified parts can share the same characters, so a hostile 1 KiB input is redacted
in a few milliseconds at most, and the time grows with the text's length, not its square
(bench/corpora/hostile.jsonl holds such inputs; bench/secrets_bench.py prints their times and
their growth from 16 to 64 KiB).
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from ..lazy import lazy
from ..visible import FORMAT
from .formats import REDACTED, Rule
from .forms import FORM_RULES
from .logins import LOGIN_RULES
from .nearby import NEARBY_RULES
from .rules import RULES as _FORMAT_RULES
from .values import _PLACEHOLDER, _is_placeholder, line_value_end

# A URL's password is judged by _url_password: "Pass" in https://u:Pass@host is a password, while
# the placeholder words (pass, test, admin, ...) would keep it.
# The rules of redaction/rules.py, then those of the written forms (redaction/forms.py) and of
# logins (redaction/logins.py), then the one that reads a value's sentence (redaction/nearby.py).
RULES: tuple[Rule, ...] = _FORMAT_RULES + FORM_RULES + LOGIN_RULES + NEARBY_RULES
_URL_RULES = frozenset({"url_password", "url_password_encoded"})

# Sentence punctuation that ends a bare value ("the password is Xy7#kq9z.") stays in the text.
_TRAILING = ".)"

_MAX_PASSES = 8  # a bound that is never reached, so that no input can keep the loop going

# The rules each mode runs, in order, each with its pattern (compiled the first time a text passes
# its needles and its gate: lazy.py) and its needles: the one needle of most rules apart,
# tested without a loop.
_RUNS = {
    strict_only: tuple(
        (
            rule,
            rule.pattern,
            rule.needles[0] if len(rule.needles) == 1 else None,
            rule.needles if len(rule.needles) > 1 else (),
            rule.gate,
        )
        for rule in RULES
        if rule.strict or not strict_only
    )
    for strict_only in (False, True)
}


def redact(text: str, *, strict_only: bool = False) -> tuple[str, int]:
    """Return (text with each credential replaced by [REDACTED], number of values replaced)."""
    text, names = _unhidden(text, strict_only)
    return text, len(names)


def rules_hit(text: str, *, strict_only: bool = False) -> list[str]:
    """The names of the rules that would replace a value in text, one per value (never a value)."""
    return _unhidden(text, strict_only)[1]


# Characters that show nothing, inside a key (pasted from a page or a chat, or put there to hide
# it): Unicode's format characters (visible.py FORMAT: zero-width, BiDi, the soft hyphen, the
# tags), the invisible joiner, fillers and variation selectors, NUL and the other C0 controls but
# tab and line breaks, DEL and the C1 controls, a terminal's colour or cursor sequences, and the
# backslash Markdown converters write before an underscore (`ghp\_...`).
_HIDDEN = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\\(?=_)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
    + FORMAT
    + "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]"
)


def _unhidden(text: str, strict_only: bool) -> tuple[str, list[str]]:
    """_apply; and when the text holds characters that show nothing, _apply of the text without
    them too: if that finds more values, or leaves less of the text in view (a key with a
    zero-width space inside, which the rules see as two words and a reader copies whole: a rule
    that matches its front alone would leave the secret part after that character), the text is
    that one, redacted, those characters gone."""
    redacted, names = _apply(text, strict_only)
    if not _HIDDEN.search(text):
        return redacted, names
    bare, found = _apply(_HIDDEN.sub("", text), strict_only)
    if len(found) > len(names) or _in_view(bare) < _in_view(_HIDDEN.sub("", redacted)):
        return bare, found
    if REDACTED in redacted:  # what a version before this check stored: the rest of a key kept in view
        redacted, rests = _REST_OF_A_KEY.subn(REDACTED, redacted)
        names = names + ["rest_of_a_key"] * rests
    return redacted, names


# [REDACTED], a character that shows nothing, then what a key's rest looks like: a version before
# _in_view was counted redacted the part of a key before such a character and stored the rest.
_REST_OF_A_KEY = lazy(r"\[REDACTED\](?:" + _HIDDEN.pattern + r")+[A-Za-z0-9+/=_\-]{8,}")


def _in_view(text: str) -> int:
    """How many characters of a redacted text are left in view: those outside [REDACTED]."""
    return len(text) - text.count(REDACTED) * len(REDACTED)


# A PEM block whose body is public: a public key, a certificate, a request for one.
_PUBLIC_BLOCK = lazy(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ )*?(?:PUBLIC KEY|CERTIFICATE(?: REQUEST)?|PGP PUBLIC KEY BLOCK|PGP SIGNATURE))-----"
    r"[^-]{0,65536}?-----END (?P=label)-----"
)


# A reference to where a secret is kept: an ARN (arn:aws:secretsmanager:…), a systemd credential's
# name and file (api_token:/etc/credstore/api_token) or a path under its directory (%d/api_token).
_REFERENCE = lazy(r"arn:[\w\-]+:[\w\-]+:[\w\-]*:\d*:\S*|[\w.\-]+:/[\w.\-/]+|%[dhHSCELtT]/\S*")
# Inside an ARN: `…:secret:prod/api-key-Q1w2E3` names a secret, it does not hold one.
_ARN_BEFORE = lazy(r"arn:[\w\-]+:[\w\-]+:[^\s\"'`]*$")


def _public_blocks(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _PUBLIC_BLOCK.finditer(text)]


def _apply(text: str, strict_only: bool, decodes: int = 2) -> tuple[str, list[str]]:
    names: list[str] = []
    if not text:
        return text, names
    public: list[tuple[int, int]] = []  # the spans of public PEM blocks in the text a rule reads
    arn = False  # whether the text holds an ARN
    read = None  # the text public and arn were read from

    def replace(match: re.Match) -> str:  # `rule` is the rule being applied in the loop below
        group = next((g for g in rule.groups if match.group(g) is not None), 0)
        start, end = match.span(group)
        setting = False  # a setting's whole value, alone on its line: its last character is its own
        if group == "bare" and rule.name == "keyword_assignment":  # a value alone on its line runs to its end
            end, setting = line_value_end(match, start, end)
        whole_end = end
        if group == "bare" and not setting:
            while (
                end > start + 1
                and match.string[end - 1] in _TRAILING
                and (end == len(match.string) or match.string[end].isspace())
            ):
                end -= 1
        value = match.string[start:end]
        if public and not rule.strict and any(a <= start < b for a, b in public):
            return match.group(0)  # a public key's or a certificate's body holds no secret
        if rule.name in _URL_RULES:
            placeholder = _PLACEHOLDER.fullmatch(value) is not None
        else:  # "sk-..." is a placeholder before its dots are taken for the sentence's
            placeholder = _is_placeholder(value) or (end < whole_end and _is_placeholder(match.string[start:whole_end]))
        if placeholder or (rule.accept and not rule.accept(match, value)):
            return match.group(0)
        if not rule.strict and (
            _REFERENCE.fullmatch(value) or (arn and _ARN_BEFORE.search(match.string, max(0, start - 200), start))
        ):
            return match.group(0)  # where a secret is kept, not the secret: an ARN, a credential's file
        names.append(rule.name)
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + REDACTED + whole[end - offset :]

    # A replacement can change what another rule reads: a key glued to the end of another
    # ("...AIza...AKIA...") only shows its start once the first one is gone, a value the context
    # rules judge by its neighbours (redaction/nearby.py) has new ones, and a percent-encoded run
    # redacted is written back partly decoded. So passes (the rules, then the encoded runs) repeat
    # until one replaces nothing, and the result is a fixed point (docs/contract.md §6); a text with
    # nothing to replace takes one pass, as before.
    for _ in range(_MAX_PASSES):
        replaced = len(names)
        low = text.lower()
        for rule, pattern, needle, needles, gate in _RUNS[strict_only]:  # noqa: B007 (replace() reads rule)
            if needle is not None:
                if needle not in text:
                    continue
            elif needles:
                for needle in needles:  # (a plain loop: a generator per rule and text costs more than the test)
                    if needle in text:
                        break
                else:
                    continue
            if gate is not None and not gate(low):
                continue
            if text is not read:  # (read once per text a rule is given, not once per rule)
                public[:] = _public_blocks(text) if "-----BEGIN" in text else ()
                arn, read = "arn:" in text, text
            text = pattern.sub(replace, text)
        if decodes and "%" in text:
            text = _PERCENT_RUN.sub(lambda match: _percent_encoded(match.group(0), strict_only, names, decodes), text)
        if len(names) == replaced:
            break
    return text, names


# A run of text without blanks that holds percent escapes: a URL, a query parameter, a form body.
# It starts only where such a run can (the text's start, after a blank or a `%`): from every
# position inside a long run without an escape, the search would scan to the run's end again
# (quadratic: minutes for "%41 " and 100,000 letters).
_PERCENT_RUN = re.compile(r"(?<![^\s%])[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*)+")


def _percent_encoded(run: str, strict_only: bool, names: list[str], decodes: int) -> str:
    """A percent-encoded run as the rules see it decoded (a webhook, a header or a key's block in a
    redirect or a form body: https%3A%2F%2Fhooks.slack.com%2F...): when a credential is found, the
    run is the decoded text, redacted, encoded again (the characters it held unencoded stay so, and
    [REDACTED] is written as itself, so a second pass changes nothing). Twice-encoded text is read
    by the same step on the decoded run (`decodes` bounds the depth). Otherwise the run stays
    exactly as it was, as does a run whose escapes are not UTF-8: that is no encoded text
    (`%DD_APP_KEY%`, a Windows variable)."""
    try:
        decoded = unquote(run, errors="strict")
    except UnicodeDecodeError:
        return run
    if decoded == run:
        return run
    redacted, found = _apply(decoded, strict_only, decodes - 1)
    if not found:
        return run
    names.extend(found)
    kept = (set(run) - {"%"}) | set(REDACTED)
    return "".join(c if c in kept else quote(c, safe="") for c in redacted)
