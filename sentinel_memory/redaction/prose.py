"""How a value named in a sentence must look to go ("the staging password is …", "the Datadog key
is …", "API 키 8f14…"): stated with a verb, a colon or a Korean copula, a long hex string or a UUID
counts; without one only a value strongly like a secret does. Base64 of prose or JSON, a page
token and a password manager's name are not credentials. redaction/rules.py's prose rules and
redaction/nearby.py use these judgements."""

from __future__ import annotations

import base64
import binascii
import re

from ..lazy import lazy
from .values import (
    _HOW_IT_IS_KEPT,
    _KEY_LIKE_ID,
    _LABELED_HASH,
    _NOT_A_CREDENTIAL,
    _ORDINARY_KEY,
    _hex_key,
    _random_value,
    _strongly_secret,
)


def _decodes_to_text(value: str) -> bool:
    """Base64 of ordinary text or JSON (a pagination cursor, `SGVsbG8=`), not of random bytes."""
    body = value.rstrip("=")
    if len(body) < 16 or len(body) % 4 == 1:
        return False
    try:
        raw = base64.b64decode(body.replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    if sum(32 <= b < 127 or b in (9, 10, 13) for b in raw) < 0.9 * len(raw):
        return False  # random bytes: a key
    # words or data (a space, lines, JSON, markup), not an encoded password or a user:password pair
    return b" " in raw or b"\n" in raw or raw[:1] in (b"{", b"[", b"<") or raw.isalpha()


_PASSWORD_MANAGERS = frozenset("1password lastpass bitwarden keepass keepassxc dashlane vaultwarden".split())
# Words that make the credential word after them something else (a page token is a position).


def _prose_value(match: re.Match, value: str) -> bool:
    """A value named in a sentence. After "is", "was", "는", ":" or "=" a long hex string or a UUID is
    stated as the credential ("the API key is 8f14e45f..."); without such a verb it stays, as a
    commit, a trace id or a request id would be written ("the token 550e8400-... expired")."""
    kw = match.group("kw")
    before = _WORD_BEFORE.search(match.string, max(0, match.start() - 40), match.start())
    if (before and before.group(1).lower() in _NOT_A_CREDENTIAL) or _decodes_to_text(value):
        return False  # the next page token, a cursor: base64 of ordinary text
    if _HOW_IT_IS_KEPT.fullmatch(value):
        return False  # "the password is Base64-encoded", "the token is HS256-signed": how, not what
    if value.lower() in _PASSWORD_MANAGERS:
        return False  # "비밀번호는 1Password 에서 복사": where it is kept
    # "API 키 8f14...", "app key 8f14...", "SENDBIRD_SECRET 값이 ...", "token - '...'"
    stated = match.group("verb") or kw[-1] in "키yY" or "값" in match.group(0)[len(kw) :]
    # "토큰이 8f14…인데", "…으로 설정됨": a copula or particle glued to the value states it.
    stated = stated or _KO_STATED.match(match.string, match.end()) is not None
    return _strongly_secret(value) or bool(stated and (_KEY_LIKE_ID.fullmatch(value) or _hex_key(value)))


def _key_in_prose(match: re.Match, value: str) -> bool:
    """ "the Datadog key is ...": a value named by a bare "key" must look generated (a flag key or
    a translation key is a name), and the word before must not name an ordinary key (the cache
    key, the primary key)."""
    before = _WORD_BEFORE.search(match.string, max(0, match.start() - 40), match.start())
    if (before and before.group(1).lower() in _ORDINARY_KEY) or _LABELED_HASH.fullmatch(value):
        return False
    if match.group("verb") is None and match.group("quote") is None:
        # "rotated the travis key OFAk6YWS…": right after "key", a generated value, not an id
        return _random_value(value) and not _KEY_LIKE_ID.fullmatch(value) and not _hex_key(value)
    return _random_value(value) or _KEY_LIKE_ID.fullmatch(value) is not None or _hex_key(value)


_WORD_BEFORE = lazy(r"([A-Za-z0-9]+)(?:[ \t]+|(?<=[a-z])-)$")  # "the next page token", --next-token
_KO_STATED = lazy(r"로|[ \t]?(?:으로|입니|이다|인데|이고|이에요|예요|이며|임(?![\w]))")
