"""Quick tests on the lowercased text that the context rules of redaction/rules.py run before
their patterns (docs/security.md, "Quick tests before the patterns"): each is true for every
text its rule can match, and cheaper than the pattern."""

from __future__ import annotations

from collections.abc import Callable

from ..lazy import lazy

# Words after a key word that make the name something else than the secret (API_KEY_ID,
# TOKEN_URL, PASSWORD_MIN_LENGTH, SECRET_NAME, token_count, password_hash).
NOT_SECRET_SUFFIX = frozenset(
    (
        "id ids url urls uri endpoint host name names header ttl length len min max timeout file path dir env "
        "type prefix suffix expiry expires expiration exp lifetime count size version policy hint field param "
        "label hash format mode enabled required rotation at in by on ref arn location region"
    ).split()
)

# Every key name of keyword_assignment ends in one of these right before its separator (after an
# optional quote and blanks): a text without such an ending is skipped. Looking back from each ":"
# and "=" is quicker than trying the long alternation of key names at every position.
_KEY_NAME_ENDINGS = (
    "word",
    "wd",
    "phrase",
    "pass",
    "pwd",
    "pw",
    "secret",
    "token",
    "key",
    "hash",
    "credential",
    "credentials",
    "auth",
    "requirepass",
    "masterauth",
    "pepper",
    "pat",
    "호",
    "드",
    "번",
    "큰",
    "릿",
    "키",
)
_SEPARATOR = lazy(r"[:=|]|<-|->")
_WORD_SEPARATOR_TEXTS = (" to ", "값", " 에 ")
_TYPE_WORDS = ("string", "str")


def _key_before(low: str, at: int) -> bool:
    head = low[max(0, at - 48) : at].rstrip(" \t\"'`*?.+|!:[]0123456789\\")
    if head.endswith(_TYPE_WORDS):  # var api_key string = "...", api_key: String = "..."
        head = head[: head.rfind("str")].rstrip(" \t:")
    if head.endswith(_KEY_NAME_ENDINGS):
        return True
    for _ in range(2):  # a suffix after the key word: DB_PASSWORD_PROD, api_token_v2
        cut = max(head.rfind("_"), head.rfind("-"))
        if cut <= 0 or len(head) - cut > 13 or head[cut + 1 :] in NOT_SECRET_SUFFIX:
            return False  # (TOKEN_TTL, API_KEY_ID: keyword_assignment keeps their values)
        head = head[:cut]
        if head.endswith(_KEY_NAME_ENDINGS):
            return True
    return False


def _assignment_gate(low: str) -> bool:
    for sep in _SEPARATOR.finditer(low):
        if _key_before(low, sep.start()):
            return True
    for word in _WORD_SEPARATOR_TEXTS:  # "set API_TOKEN to ...", "API_KEY 값이 ...", "API_KEY 에 ..."
        at = low.find(word)
        while at != -1:
            if _key_before(low, at):
                return True
            at = low.find(word, at + 1)
    return False


# value_then_name: a connector, then a name ending like a key name ("as DATADOG_API_KEY").
_CONNECTORS = (" into ", " as ", " in ", " to ", "를", "을")
_NAME_AFTER_CONNECTOR = lazy(
    r"[ \t]*(?:the[ \t]+)?[`\"']?[\w.\-$]{0,60}?(?:" + "|".join(_KEY_NAME_ENDINGS) + r")(?![a-z0-9])"
)


def _value_then_name_gate(low: str) -> bool:
    for connector in _CONNECTORS:
        at = low.find(connector)
        while at != -1:
            if _NAME_AFTER_CONNECTOR.match(low, at + len(connector)):
                return True
            at = low.find(connector, at + 1)
    return False


# The Korean words that name a credential (password, pass, token, secret, key), in every gate.
_KOREAN_STEMS = ("비밀", "패스", "비번", "토큰", "시크릿", "암호", "키")
# (values.py _OTHER_KEYWORD's words, lowercased, by a part each holds)
_OTHER_STEMS = (
    "passw",
    "kennw",
    "schlüssel",
    "schluessel",
    "wachtw",
    "mot de passe",
    "clé",
    "cle d",
    "jeton",
    "contrase",
    "senha",
    "chiave",
    "senord",
    "salasana",
    "hasło",
    "haslo",
    "ifre",
    "парол",
    "токен",
    "mdp",
    "clave",
    "palavra-passe",
    "パスワード",
    "トークン",
    "キー",
    "暗証",
    "密",
    "口令",
    "令牌",
    "钥",
)

_NAME_STEMS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "auth",
    "credential",
    *_KOREAN_STEMS,
)


def _named_value_gate(low: str) -> bool:
    """named_value: a "value" beside a name, or a call with a quoted first argument, and a key word."""
    if "value" not in low and '("' not in low and "('" not in low and "( " not in low:
        return False
    for stem in _NAME_STEMS:
        if stem in low:
            return True
    return False


def _login_pair_gate(low: str) -> bool:
    """login_pair: an Oracle login (user/password@host) or a .pgpass line (host:port:..., *:*:...)."""
    if (
        "oracle" in low
        or "sqlplus" in low
        or "connect" in low
        or "*:*:" in low
        or "rman" in low
        or "userid" in low
        or "expdp" in low
        or "impdp" in low
    ):
        return True
    at = low.find(":")
    while at != -1:  # a port between colons
        end = low.find(":", at + 1)
        if end == -1:
            return False
        if 3 <= end - at <= 6 and low[at + 1 : end].isdigit():
            return True
        at = end
    return False


def _words(*words: str) -> Callable[[str], bool]:
    """A gate: the lowercased text holds one of these words."""

    def gate(low: str) -> bool:
        for word in words:  # (a plain loop: cheaper than a generator for a handful of words)
            if word in low:
                return True
        return False

    return gate


_PROSE_GATE = _words(
    "pass",
    "secret",
    "token",
    "key",
    "requirepass",
    "masterauth",
    "identified",
    "passcode",
    *_KOREAN_STEMS,
    *_OTHER_STEMS,
)


_NEARBY_WORDS = (
    "key",
    "token",
    "secret",
    "bearer",
    "auth",
    "pass",
    "pw",
    "psk",
    "cred",
    "sess",
    "sid",
    "cookie",
    "세션",
    "쿠키",
    "토큰",
    "키",
    "시크릿",
    "비밀",
    "비번",
    "암호",
)


def nearby_gate(low: str) -> bool:
    """redaction/nearby.py: a credential word, or a name and its value on a line, or `use … for`."""
    for word in _NEARBY_WORDS:
        if word in low:
            return True
    if ":" in low or "|" in low or "->" in low or "=>" in low or "→" in low:
        return True  # a name and its value on a line
    return " for " in low and ("use " in low or "using " in low or "try " in low)  # use … for <service>
