"""Context rules for the ways people write a credential down apart from `name = value`: a value
named after it in a sentence ("… is the Snyk token", "…을 sumo 시크릿 키로"), a default beside an
environment variable's name (`os.Getenv("X_TOKEN") // was "…"`), a Markdown list item that pairs
a name with a generated value in backquotes, a setter call or an HTTP client's login pair, a
`?key=` in a URL, a label alone on the line above the value. The rules for a value in a table
(Markdown, CSV, SQL) are redaction/tables.py's, in this list at their place in the order.
redaction/engine.py runs them after the rules of redaction/rules.py."""

from __future__ import annotations

import re

from ..lazy import lazy
from .gates import _PROSE_GATE, _words
from .rules import Rule
from .tables import CSV_COLUMN, SQL_INSERT_VALUE, SQL_NAMED_VALUE, TABLE_COLUMN
from .values import (
    _GENERIC_KEY,
    _KEY_LIKE_ID,
    _ORDINARY_KEY,
    _SECRET_KEYWORD,
    _hex_key,
    _is_placeholder,
    _looks_like_secret,
    _random_value,
    _strongly_secret,
)

# A credential's name in prose, English or Korean; a Korean name ends the clause or takes 로, 으로
# or a copula ("…을 토큰으로 쓴다"), so "…을 기준으로 토큰 갱신" names no value.
_NAME_EN = r"(?P<kw>(?i:pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?))(?![A-Za-z0-9_])"
_NAME_KO = r"(?P<ko>비밀[ ]?번호|비번|패스워드|토큰|시크릿|인증키|키)(?=으?로|입니|이다|이에요|예요|임|[ \t]*(?:$|[\n.,;:!?)\]]))"
# What may follow an English name for the sentence to have named the value: an end, a clause.
_AFTER_NAME = (
    r"(?=[ \t]*(?:$|[\n.,;:!?)\]\"'`<—]|-|(?i:and|but|from|for|in|on|of|to|with|so|we|i|it|that|which|until"
    r"|after|before|until|now|today|yesterday)(?![A-Za-z])))"
)

# "<value> is the snyk token.", "used <value> as the db password and", "rotate <value>? it's the
# okta key", "<value> <- etsy access token", "<value>을 sumo 시크릿 키로 쓰면 됩니다". The value starts
# after a blank, a quote or a bracket and cannot run over one; up to three words of the name stand
# before its credential word.
_VALUE_NAMED_AFTER = lazy(
    # (atomic: the value ends before a blank, a quote, Hangul or closing punctuation, with nothing
    # to try again; its length is judged after)
    r"""(?<![^\s"'`(])["'`]?(?P<bare>(?>[^\s"'`()?.,;:!\uac00-\ud7a3]+(?:[?.,;:!]+[^\s"'`()?.,;:!\uac00-\ud7a3]+)*))"""
    r"""["'`]?[?.,;:!]?"""
    r"(?:[ \t]+(?i:is|was)[ \t]+(?i:the|our|my|your|an?|its)"
    r"|[ \t]+(?i:as)[ \t]+(?i:the|our|my|your|an?)"
    r"|[ \t]+(?i:it'?s|it[ \t]+is|that'?s|that[ \t]+is)[ \t]+(?i:the|our|my|your|an?)"
    r"|[ \t]+(?:<-{1,2}|←)|[ \t]+\("
    r"|[ \t]?(?:을|를|은|는|이|가|이게|이건))"
    r"(?:[ \t]*[\w.\-]{1,30}){0,3}?[ \t]+(?:" + _NAME_EN + _AFTER_NAME + "|" + _NAME_KO + ")"
)


def _value_named_after(match: re.Match, value: str) -> bool:
    """The value must look generated or strongly like a secret, and the word before the name
    must not make it an ordinary key (the cache key, the public token)."""
    if not 8 <= len(value) <= 200 or _is_placeholder(value):
        return False
    name = match.group("kw") or match.group("ko")
    name_at = match.start("kw") if match.group("kw") is not None else match.start("ko")
    before = _WORD_BEFORE.search(match.string, max(0, name_at - 40), name_at)
    if name.lower() in ("key", "키") and before and before.group(1).lower() in _ORDINARY_KEY:
        return False
    return (
        _random_value(value) or _strongly_secret(value) or _KEY_LIKE_ID.fullmatch(value) is not None or _hex_key(value)
    )


_WORD_BEFORE = lazy(r"([A-Za-z0-9]+)[ \t]+$")
_CONNECTOR_TEXTS = (
    " is ",
    " was ",
    " as ",
    "it's ",
    "it is ",
    "that",
    "<-",
    "←",
    " (",
    "을",
    "를",
    "은",
    "는",
    "이",
    "가",
)


def _value_named_after_gate(low: str) -> bool:
    return _PROSE_GATE(low) and any(c in low for c in _CONNECTOR_TEXTS)


# `os.Getenv("DATADOG_API_KEY") // was "…"`, `GetEnvironmentVariable("X_TOKEN") ?? "…"`,
# `os.environ.get("API_TOKEN", "…")`: a quoted name of a credential, then on the same line a
# quoted value, a fallback or an old value.
_ENV_DEFAULT = lazy(
    r"""(?i:getenv|environ(?:\.get)?|env(?:\.fetch|::var)?|GetEnvironmentVariable|getProperty)[ \t]*[(\[][ \t]*"""
    r"""(?P<q>["'])[\w.\-]{0,60}?(?:""" + _SECRET_KEYWORD + "|(?P<gkey>" + _GENERIC_KEY + r"))(?P=q)"
    r"""[^"'\n]{0,40}?["'](?P<dq>[^"'\n]{8,200})["']"""
)


def _random_key(match: re.Match, value: str) -> bool:
    return not _is_placeholder(value) and (_random_value(value) or _hex_key(value))


def _env_default(match: re.Match, value: str) -> bool:
    return _random_value(value) or _strongly_secret(value)


# `auth=("api", "…")`, `HTTPBasicAuth("user", "…")`, `req.SetBasicAuth("user", "…")`: the second
# element of a login pair given to an HTTP client is its password.
_AUTH_PAIR = lazy(
    r"""(?i:auth|basicauth|basic_auth|credentials?)[ \t]*(?:=[ \t]*)?[(\[][ \t]*(?P<q>["'])[^"'\n]{0,100}(?P=q)[ \t]*,[ \t]*"""
    r"""["'](?P<dq>[^"'\n]{6,200})["'][ \t]*[)\]]"""
)


def _auth_pair(match: re.Match, value: str) -> bool:
    return _looks_like_secret(value) or _random_value(value)


# "* etsy: `…`", "- **cloudflare**: `…`": a list item that names something and gives a value in
# backquotes; the value must look generated and not be a hash or an id (a commit, a digest).
_LIST_ITEM = lazy(r"(?m)^[ \t]*[-*+][ \t]+\**(?P<name>[A-Za-z][\w.\- ]{0,40}?)\**[ \t]*:[ \t]*`(?P<bq>[^`\n]{8,256})`")
_NOT_CREDENTIAL_NAME = lazy(
    r"(?i).*\b(?:commit|sha|hash|digest|checksum|etag|id|uuid|version|build|image|tag|ref|branch|path|file|url"
    r"|trace|span|request|run|job|release|fixed|fix|revision)\b.*"
)


def _list_item(match: re.Match, value: str) -> bool:
    if _NOT_CREDENTIAL_NAME.fullmatch(match.group("name")) or _is_placeholder(value):
        return False
    return _random_value(value) and _KEY_LIKE_ID.fullmatch(value) is None and not _hex_key(value)


# setApiKey("…"), .bearer_auth("…"), twitch.with_token('…'): a call that sets a credential from
# a literal. A getter (getToken("scope"), read_secret("path")) names a value, it does not hold one.
_SETTER_CALL = lazy(r"""(?<=[A-Za-z0-9_$])\([ \t]*(?P<q>["'])(?P<dq>[^"'\n]{8,200})(?P=q)[ \t]*\)""")
_SETTER_NAME = lazy(r"(?:" + _SECRET_KEYWORD + r"|(?i:bearer_auth|basic_auth))$")
_GETTER = lazy(
    r"(?i:get|read|fetch|load|find|lookup|has|is|delete|remove|revoke|validate|verify|check|parse|decode|hash"
    r"|encrypt|decrypt|mask|redact|gen|generate|create|new|rotate|refresh|require|describe|list)(?![a-z])"
)


def _setter_call(match: re.Match, value: str) -> bool:
    text, start = match.string, match.start()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_$"):
        start -= 1
    name = text[start : match.start()]
    if not _SETTER_NAME.search(name) or _GETTER.match(name):
        return False
    return _random_value(value) or _strongly_secret(value)


# A label alone on its line and the value alone on the next (a console's "API key" then the key,
# copied): "Okta key\n00…\nCopy this now", "zendesk 키\n…".
_LABEL_LINE = lazy(
    r"(?m)(?:(?P<kw>(?i:key|token|secret|password|passwd|pw|credentials?))(?![A-Za-z0-9_])"
    r"|(?P<ko>키|토큰|시크릿|비밀번호|비번|인증키))[ \t*:]*\r?\n[ \t]*`?(?P<bare>[^\s`]{8,256})`?[ \t]*\r?$"
)


_SETTING_LINE = lazy(r"[A-Za-z_][\w.\-]*[ \t]*[=:]")


def _label_line(match: re.Match, value: str) -> bool:
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    if _is_placeholder(value) or match.start() - line_start > 64:
        return False  # (a label, not the end of a long line)
    if "=" in match.string[line_start : match.start()] or _SETTING_LINE.match(value):
        return False  # an assignment above (X_KEY=example-token) or below (LOG_LEVEL=info): no label
    if match.group("kw") is not None and match.group("kw").lower() == "key" or match.group("ko") == "키":
        before = _WORD_BEFORE.search(
            match.string,
            max(0, match.start("kw" if match.group("kw") else "ko") - 40),
            match.start("kw" if match.group("kw") else "ko"),
        )
        if before and before.group(1).lower() in _ORDINARY_KEY:
            return False
    return _random_value(value) or _strongly_secret(value) or _hex_key(value)


# ?key=… in a URL's query: a bare "key" parameter (a maps or search API's key).
_QUERY_KEY = lazy(r"""(?<=[?&])(?i:key)=(?P<bare>[^&#\s"'<>`]{8,256})""")


FORM_RULES: tuple[Rule, ...] = (
    Rule(
        name="value_named_after",
        pattern=_VALUE_NAMED_AFTER,
        strict=False,
        groups=("bare",),
        accept=_value_named_after,
        gate=_value_named_after_gate,
    ),
    Rule(
        name="env_default",
        pattern=_ENV_DEFAULT,
        strict=False,
        groups=("dq",),
        accept=_env_default,
        gate=_words("getenv", "environ", "env.", "env::", "getenvironmentvariable", "getproperty"),
    ),
    TABLE_COLUMN,
    CSV_COLUMN,
    Rule(
        name="auth_pair",
        pattern=_AUTH_PAIR,
        strict=False,
        groups=("dq",),
        accept=_auth_pair,
        gate=_words("auth", "credential"),
    ),
    Rule(name="list_item_value", pattern=_LIST_ITEM, strict=False, groups=("bq",), accept=_list_item, needles=(": `",)),
    Rule(
        name="setter_call",
        pattern=_SETTER_CALL,
        strict=False,
        groups=("dq",),
        accept=_setter_call,
        needles=('("', "('", '( "', "( '"),
    ),
    Rule(
        name="query_key",
        pattern=_QUERY_KEY,
        strict=False,
        groups=("bare",),
        accept=_random_key,
        needles=("key=", "KEY=", "Key="),
    ),
    Rule(
        name="label_line",
        pattern=_LABEL_LINE,
        strict=False,
        groups=("bare",),
        accept=_label_line,
        needles=("\n",),
        gate=_PROSE_GATE,
    ),
    SQL_NAMED_VALUE,
    SQL_INSERT_VALUE,
)
