"""Context rules for a login written down: a user and a password after a word for a login ("login
for the relay — ops / …", "계정 admin / …", `login('ops', '…')`, "try ci-bot with …"), `Basic` and
the base64 of `user:password` wherever it is written, and a Google app password in a text about
app passwords, Gmail or SMTP. redaction/engine.py runs them before the sentence rule of
redaction/nearby.py, whose judgements of a value they share."""

from __future__ import annotations

import base64
import binascii
import re

from ..lazy import lazy
from .formats import Rule
from .gates import _words
from .nearby import _generated, _password_like
from .values import _strongly_secret

# "login for the SMTP relay — ops / RxPx…", "Jenkins login is admin:BLUE!bird…", "어드민 계정 admin /
# SUNN*y…": a user and a password after a word for a login, in the same line.
_LOGIN_PAIR = lazy(
    r"(?:(?<![A-Za-z])(?i:login|logins|log-in|sign-in|account|creds|credentials|console|router|vpn|계정|로그인|라우터)(?![A-Za-z])"
    r"[^\n]{0,80}?(?<![\w@.+\-/:])[A-Za-z0-9_.@+\-]{1,64}(?:[ \t]*/[ \t]*(?:(?i:pass(?:word)?|pw|pwd)[ \t:]+)?|:)"
    # try ci-bot with …, "admin + …", login('ops', '…')
    r"|(?<![A-Za-z])(?i:try|use)[ \t]+[A-Za-z0-9_.@\-]{1,64}[ \t]+with[ \t]+"
    r"|[\"'“][A-Za-z0-9_.@\-]{1,64}[ \t]+\+[ \t]+"
    r"|(?<![A-Za-z])(?i:login|log_in|authenticate|auth|connect|sign_in)\([ \t]*['\"][^'\"\n]{1,64}['\"][ \t]*,[ \t]*['\"])"
    r"""(?P<value>[^\s/:'"`,;()<>\[\]]{6,128})"""
)


def _login_password(match: re.Match, value: str) -> bool:
    # after "pass" itself ("… / pass Galaxy_1998"), any strong password
    return (
        _password_like(value)
        or _generated(value)
        or (_PASS_WORD.search(match.group(0)) is not None and _strongly_secret(value))
    )


_PASS_WORD = lazy(r"(?i:pass(?:word)?|pw|pwd)[ \t:]")


# "Basic <base64 of user:password>" wherever it is written (an Apache RequestHeader, a trace).
_BASIC = lazy(r"(?<![A-Za-z])(?i:basic)[ \t]+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])")


def _basic_credentials(match: re.Match, value: str) -> bool:
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    user, colon, password = raw.partition(b":")
    return bool(colon and user and password) and all(32 < b < 127 for b in raw)


# A Google app password: 16 small letters, often in four groups, in a text about app passwords,
# Gmail or SMTP. Words are not one: a group without a vowel, or four consonants in a row, and few
# vowels in all.
_APP_PASSWORD = lazy(r"(?<![A-Za-z])(?P<value>(?:[a-z]{4} ){3}[a-z]{4}|[a-z]{16})(?![A-Za-z])")
_APP_PASSWORD_CONTEXT = lazy(r"(?i:app[ \-]?(?:specific[ \-]?)?password|gmail|smtp)|앱[ ]?(?:비밀번호|암호)")


def _app_password(match: re.Match, value: str) -> bool:
    letters = value.replace(" ", "")
    vowels = sum(c in "aeiou" for c in letters)
    groups = value.split(" ") if " " in value else [letters[i : i + 4] for i in range(0, 16, 4)]
    unlike_words = any(not any(c in "aeiouy" for c in g) for g in groups) or (
        " " not in value and re.search(r"[^aeiouy]{4}", letters)
    )
    return vowels <= 5 and bool(unlike_words) and _APP_PASSWORD_CONTEXT.search(match.string) is not None


def _app_password_gate(low: str) -> bool:
    return _APP_PASSWORD_CONTEXT.search(low) is not None


_LOGIN_WORDS = _words(
    "log",
    "account",
    "cred",
    "console",
    "router",
    "vpn",
    "계정",
    "로그인",
    "라우터",
    "auth(",
    "authenticate(",
    "connect(",
    "sign_in(",
)


def _login_gate(low: str) -> bool:
    if _LOGIN_WORDS(low):
        return True
    return (" with " in low and ("try " in low or "use " in low)) or (" + " in low and ('"' in low or "'" in low))


LOGIN_RULES: tuple[Rule, ...] = (
    Rule(
        name="app_password",
        pattern=_APP_PASSWORD,
        strict=False,
        groups=("value",),
        accept=_app_password,
        gate=_app_password_gate,
    ),
    Rule(
        name="basic_credentials",
        pattern=_BASIC,
        strict=False,
        groups=("value",),
        accept=_basic_credentials,
        gate=_words("basic"),
    ),
    Rule(
        name="login_pair_in_prose",
        pattern=_LOGIN_PAIR,
        strict=False,
        groups=("value",),
        accept=_login_password,
        gate=_login_gate,
    ),
)
