"""The last context rule: a generated-looking value in a sentence that names a credential, however
the sentence is worded: "the Cohere token changed, it's now …", "토큰 여기요: …", "the NuGet token
(…) was printed", "use this one → … (the old Twilio token got revoked)", "creds are in DD_APP_KEY,
current value …". The rules before it know the forms; this one knows only that a credential word
and a value that looks generated share a sentence, with no word nearer the value that makes it
something else (a commit, a request id, a checksum, a public key). redaction/engine.py runs it
after every other rule, so it judges only what they left.

The words are read as a scanner's keyword window reads them (trufflehog pairs a service's name
with a value's shape the same way), but in both directions and only within the sentence."""

from __future__ import annotations

import bisect
import functools
import re

from ..lazy import lazy
from .formats import REDACTED, Rule
from .gates import nearby_gate
from .prose import _decodes_to_text
from .values import (
    _CAMEL_WORDS,
    _HANGUL,
    _HOW_IT_IS_KEPT,
    _KEY_LIKE_ID,
    _LABELED_HASH,
    _NOT_A_CREDENTIAL,
    _ORDINARY_KEY,
    _is_placeholder,
    _random_value,
    _strongly_secret,
)

# A candidate: a run of the characters keys and passwords are made of, from a letter or a digit,
# a dot only inside it. A name and "=" before it (key=…, DD_API_KEY=…) are not part of it; an "="
# after other characters is (…N=vA9…), and so is base64's padding (…UA==, …CM=)). Each part is
# taken whole or not at all (atomic, possessive), so each character is read once.
_CANDIDATE = lazy(
    r"(?<![A-Za-z0-9_\-+/.~!@#$%^*&=])(?>(?:[A-Za-z_][A-Za-z_.\-]{0,40}=(?=[^=\s)\]},;.`]))?)"
    # (a digit, a symbol or a capital after the first character: a word is no candidate)
    r"(?=[0-9]|.[A-Za-z0-9_\-+/~!@#$%^*&=.]*?[0-9A-Z!@#$%^*&+=/~])"
    r"(?P<value>[A-Za-z0-9](?:[A-Za-z0-9_\-+/~!@#$%^*&=]|\.(?=[A-Za-z0-9_])){7,255}+)"
    r"(?![A-Za-z0-9_\-+/=~!@#$%^*&])"
)

# Words that name a credential (a password's apart: its value may be any strong password) and
# words that make a value next to them something else.
# (credentials: what one logs in with, so a strong password counts as much as a generated key)
_PASSWORD_WORDS = frozenset("password passwords passwd pwd pw passphrase psk creds cred credential credentials".split())
_CREDENTIAL_WORDS = frozenset("key keys token tokens secret secrets apikey session sessionid cookie bearer".split())
_OTHER_WORDS = frozenset(
    (
        "id ids uuid guid request trace span correlation commit commits sha hash hashes checksum digest etag "
        "integrity fingerprint revision rev tag tagged release version build cursor kid nonce salt arn price "
        "product customer invoice order channel thread message object blob idempotency reference ref serial "
        "public publishable pub pinned image issue merge merged event hashed hashing row rows record entry column field "
        "md container volume network node tx transaction block wallet address device run job pipeline deployment "
        "bisected parent revert reverted"
    ).split()
)
_KO_PASSWORD = ("비밀번호", "비번", "패스워드", "암호")
_KO_CREDENTIAL = ("토큰", "시크릿", "인증키", "액세스키", "세션", "쿠키")
_KO_OTHER = (
    "아이디",
    "커밋",
    "해시",
    "요청",
    "식별자",
    "체크섬",
    "버전",
    "태그",
    "공개",
    "채널",
    "캐시",
    "지문",
    "핑거프린트",
)
_KO_ORDINARY = ("캐시", "기본", "정렬", "파티션", "외래", "고유", "인덱스", "멱등", "조회", "공개")
# "키" alone is also "height": a key only with a particle or a copula of its own ("키는", "키였음").
_KO_KEY_TAIL = lazy(r"(?:는|은|가|를|을|로|값|이|의|도|만|였음|였다|였어요|입니다|예요|이에요|여기요|임)?")

# The value right after a credential's name: "NAVER_CLIENT_SECRET (…", "Client Secret이 …: …".
_RIGHT_AFTER_NAME = lazy(
    r"(?i:secret|token|key|password|passwd|pwd|pw|시크릿|토큰|키|비밀번호|비번)[\uac00-\ud7a3]{0,3}[ \t]*(?:[(:=→]|->|[^\n]{0,24}:)?[ \t]*[`'\"]?$"
)
_COPULA_AFTER = lazy(r"[`'\"]?[ \t]?(?:입니다|이에요|예요|이고|임(?![\uac00-\ud7a3]))")
# `default = "…"`, `Default: '…'`, `value: …`: the value of the block around it, named above
_GENERIC_LABELS = frozenset(("default", "value", "val", "defaultvalue", "default_value"))
_GENERIC_LABEL_BEFORE = lazy(
    r"(?i:" + "|".join(sorted(_GENERIC_LABELS, key=len, reverse=True)) + r""")["']?[ \t]*[:=][ \t]*["'`]?$"""
)
_USE_BEFORE = lazy(r"(?<![A-Za-z])(?i:use|using|try)[ \t]+[`'\"]?$")
_USE_FOR = lazy(r"""[`'"]?[ \t]+for[ \t]+(?:the[ \t]+)?(?P<name>[A-Z\uac00-\ud7a3][\w.&\-]*(?:[ \t][\w.&\-]+){0,2})""")
_APART = lazy(r"[,;:()`\"'|]")
_WORD = lazy(rf"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[{_HANGUL}]+")
# Where a sentence ends: a line break, or ". ", "! ", "? " (a dot inside a value or a name is not one).
_SENTENCE_END = lazy(r"\n|[.!?](?=\s|$)")
_WINDOW = 24  # words of the sentence read on each side of the value
_REDACTED = lazy(re.escape(REDACTED))

_HEX_OR_UUID = lazy(r"[0-9a-fA-F]{16,}|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_EMAIL = lazy(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
# A part of plain lower-case letters between separators: two make a branch or a path (feature/…-login-fix);
# (not "_": sk_live_…, secret_live_… are prefixes).
_WORD_PART = lazy(r"(?:^|(?<=[/\-.]))[a-z]{4,}(?=[/\-.]|$)")
_MARKED = lazy(r"[0-9!@#$%^*&+=/~]|(?<=.)[A-Z]")
_SNAKE_NAME = lazy(r"[A-Z][A-Z0-9]{0,15}(?:_[A-Z0-9]{1,15})+|[a-z][a-z0-9]{0,15}(?:_[a-z0-9]{1,15})+")
_HOST = lazy(r"(?:[A-Za-z0-9\-]+\.)+[A-Za-z]{2,}")
# A name and its separator right before the value (`"region": "…"`, `status=…`): the value is that
# name's, and the assignment rules have judged it. A plain word before a colon ("here: …") is prose.
# (Both are matched against the reversed text before the value, from its end: read once, not once
# per starting position.)
_LABEL_REVERSED = lazy(r"""["'`]?[ \t]*(?P<sep>[:=])[ \t]*(?P<q>["']?)(?P<name>[\w.\-]*[A-Za-z_])(?P=q)""")
_CALL_REVERSED = lazy(r"""["'`][ \t]*(?:,[ \t]*["'][^"'\n]{0,64}["'][ \t]*){0,3}\([\w.]*[A-Za-z_]""")
_LISTED = lazy(r"[ \t]*(?:[-*+][ \t]|\[[\d\-: ]{4,20}\])")
_PASSPHRASE_PART = lazy(r"[\-_.]")
_STRONG_SYMBOL = lazy(r"[!@#$%^&*+=?~]")
_SWITCH = lazy(r"[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")


def _kind(word: str, previous: str) -> str | None:
    """What one word of the sentence says of a value near it: "password", "credential", "other"
    (an id, a hash, a commit…), "ref" (value, 값: the value of what came before), "auth" (a
    credential's name before a value only) or None."""
    low = word.lower()
    if word.startswith("값"):
        return "ref"
    if word[0] >= "\uac00":
        if word.startswith(_KO_PASSWORD):
            return "password"
        if word.startswith(_KO_CREDENTIAL):
            return "credential"
        if word[0] == "키" and _KO_KEY_TAIL.fullmatch(word, 1):  # 캐시 키, 기본 키: an ordinary key
            return "other" if previous.startswith(_KO_ORDINARY) or previous in _ORDINARY_KEY else "credential"
        return "other" if word.startswith(_KO_OTHER) else None
    if low in _PASSWORD_WORDS or word == "PASS":  # SSH_PASS: "pass" in a name, not the verb
        return "password"
    if low in _CREDENTIAL_WORDS:
        # the cache key, a public token, a page token: an ordinary key, a public one, a position
        return "other" if previous in _ORDINARY_KEY or previous in _NOT_A_CREDENTIAL else "credential"
    if low in ("value", "values"):
        return "ref"
    if low == "sid":  # a session's (connect.sid), not an account's or a message's (Twilio's AC…, SM…)
        return "other" if previous in ("account", "twilio", "message", "call", "service", "sms") else "credential"
    if low == "auth":
        return "auth"  # names a value before it (--auth=…), not one after it ("… passes the auth tests")
    return "other" if low in _OTHER_WORDS else None


def _value_like(value: str) -> bool:
    if _SNAKE_NAME.fullmatch(value):
        return False  # DB_PASSWORD_B64, api_key_v2: a name
    return _HEX_OR_UUID.fullmatch(value) is not None or _random_value(value) or _password_like(value)


@functools.lru_cache(maxsize=16)
def _reading(text: str) -> tuple[list[int], list[str | None], list[int], list[int]]:
    """The text's words (where each starts, and its kind), and where its sentences end (the start and
    the end of each end mark), read once per text with every value-like run and every [REDACTED]
    blanked: what a window reads is the same before and after redaction, so redacting twice
    changes nothing."""
    blank = [m.span("value") for m in _CANDIDATE.finditer(text) if _value_like(m.group("value"))]
    blank += [m.span() for m in _REDACTED.finditer(text)]
    chars = list(text)
    for a, b in blank:
        chars[a:b] = " " * (b - a)
    clean = "".join(chars)
    starts: list[int] = []
    kinds: list[str | None] = []
    previous, previous_end = "", 0
    for m in _WORD.finditer(clean):
        if m.start() - previous_end > 3 or _APART.search(clean, previous_end, m.start()):
            previous = ""  # "id `…`, secret": a value or a mark between them, the word does not qualify
        starts.append(m.start())
        kinds.append(_kind(m.group(), previous))
        previous, previous_end = m.group().lower(), m.end()
    marks = list(_SENTENCE_END.finditer(clean))
    return starts, kinds, [m.start() for m in marks], [m.end() for m in marks]


def _window(text: str, start: int, end: int) -> tuple[list[str], list[str | None], list[str]]:
    """The kinds of the classified words of the value's sentence: before it (nearest last) and after
    it (nearest first, the three words right after it always, classified or not), at most _WINDOW words each
    way; and those of the sentence before."""
    starts, kinds, mark_starts, mark_ends = _reading(text)
    i = bisect.bisect_right(mark_ends, start)
    sentence_start = mark_ends[i - 1] if i else 0
    previous_start = mark_ends[i - 2] if i >= 2 else 0
    earlier = kinds[bisect.bisect_left(starts, previous_start) : bisect.bisect_left(starts, sentence_start)]
    previous_kinds = [k for k in earlier[-_WINDOW:] if k is not None] if i else []
    j = bisect.bisect_left(mark_starts, end)
    sentence_end = mark_starts[j] if j < len(mark_starts) else len(text)
    first, here = bisect.bisect_left(starts, sentence_start), bisect.bisect_left(starts, start)
    after, last = bisect.bisect_left(starts, end), bisect.bisect_left(starts, sentence_end)
    before_kinds = [k for k in kinds[max(first, here - _WINDOW) : here] if k is not None]
    after_kinds = [k for i, k in enumerate(kinds[after : min(last, after + _WINDOW)]) if k is not None or i < 3]
    return before_kinds, after_kinds, previous_kinds


def _kinds(text: str) -> list[str]:
    out: list[str] = []
    previous = ""
    for word in _WORD.findall(text):
        kind = _kind(word, previous)
        if kind is not None:
            out.append(kind)
        previous = word.lower()
    return out


def _password_like(value: str) -> bool:
    """A value named only as a password: strong, and not a name with a number (1Password, argon2id,
    ap-northeast-2, base64-encoded): a symbol, or capitals inside with two digits, or letters and
    digits alternating three times."""
    if not _strongly_secret(value):
        return False
    digits = sum(map(str.isdigit, value))
    inner_upper = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    if _STRONG_SYMBOL.search(value) or (inner_upper and digits >= 2) or len(_SWITCH.findall(value)) >= 3:
        return True
    # a passphrase: two words of four letters and a word with a digit (violet-coffee-pencil8), not a
    # name and a number (deploy-user-01)
    parts = _PASSPHRASE_PART.split(value)
    words = sum(p.isalpha() and len(p) >= 4 for p in parts)
    return words >= 2 and any(_SWITCH.search(p) for p in parts)


def _labelled_otherwise(before: str) -> bool:
    """Whether a name that is not a credential's stands right before the value with its separator."""
    label = _LABEL_REVERSED.match(before[::-1])
    if label is None:
        return False
    name = label.group("name")[::-1]
    if name.lower() in _GENERIC_LABELS:
        return False  # `default = "…"`, `Default: '…'`: the value of the block around it
    if len(name) > 40 or _value_like(name) or _LOGIN_TARGET.search(name):
        return False  # a value before its own separator, not a name (it reads the same once redacted)
    named = label.group("q") or label.group("sep") == "=" or re.search(r"[_.\-]|[a-z][A-Z]", name)
    if not named or any(kind != "other" for kind in _kinds(name)):
        return False
    # a plain word after a credential's name qualifies it ("bearer for staging gw = …")
    qualified = not label.group("q") and name.isalpha() and name.islower()
    rest = before[: len(before) - label.end()].rsplit("\n", 1)[-1]
    return not (qualified and any(kind in ("credential", "password", "auth") for kind in _kinds(rest)[-4:]))


def _named_nearby(match: re.Match, value: str) -> bool:
    if not _MARKED.search(value):
        return False  # a word: every shape below holds a digit, a symbol or a capital inside
    hexy = _HEX_OR_UUID.fullmatch(value) is not None
    generated, password_like = not hexy and _generated(value), _password_like(value)
    if not (hexy or generated or password_like or _short_generated(value)):
        return False  # no shape a value named nearby must have (the sentence is not read)
    text, start, end = match.string, match.start("value"), match.end("value")
    if (
        _is_placeholder(value)
        or _EMAIL.fullmatch(value)
        or _HOST.fullmatch(value)
        or value.startswith("AAAA")
        or _decodes_to_text(value)
        or _SNAKE_NAME.fullmatch(value)
        or _LABELED_HASH.fullmatch(value)
        or _HOW_IT_IS_KEPT.fullmatch(value)
    ):
        return False  # a placeholder, an address, a host, an SSH public key's body, encoded text, a name,
        # a cache entry's name (pip-<sha1>)
    # Part of a URL or an ARN: the URL rules judge those.
    run = text[max(0, start - 300) : start]
    chunk = run[max(run.rfind(c) for c in " \t\r\n\"'`") + 1 :]
    if "://" in chunk or chunk.startswith("arn:") or chunk.endswith("@"):
        return False
    near = text[max(0, start - 80) : start]
    if _labelled_otherwise(near) or _CALL_REVERSED.match(near[::-1]):
        return False  # the value of another name, or an argument: the call rules judge those
    kinds_before, kinds_after, kinds_previous = _window(text, start, end)
    in_block = not kinds_before and _GENERIC_LABEL_BEFORE.search(near) is not None
    if in_block:
        # `default = "…"` in a block: the block's name, a line or three above, names the value
        block = text[max(0, start - 300) : start].split("\n")[-4:-1]
        kinds_before = [k for k in _kinds(" ".join(block)) if k != "ref"]
    right_after = _RIGHT_AFTER_NAME.search(near) is not None
    refers = "ref" in kinds_before  # "the value is …", "값은 …": the value of what came before
    kinds_before = ["credential" if k == "auth" else k for k in kinds_before if k != "ref"]
    kinds_after = [k for k in kinds_after if k != "auth"]
    kinds_previous = [k for k in kinds_previous if k != "auth"]
    if kinds_after[:1] == ["other"] or (hexy and "other" in kinds_after[:3]):
        return False  # "the token <hex> row", a hash or an id in a sentence about a token
    refers = refers or _COPULA_AFTER.match(text, end) is not None  # "… 인증키 알려드릴게요. <hex> 입니다!"
    kinds_after = [k for k in kinds_after if k is not None and k != "ref"]
    kind: str | None
    if kinds_before:
        kind = kinds_before[-1]  # the nearest word before the value decides
    elif kinds_after[:1] in (["credential"], ["password"]):
        kind = kinds_after[0]  # "… (the old NuGet token got revoked)"; not "… is the cache key"
    elif kinds_previous and (refers or not hexy):
        # "…the NuGet API key. The user gave me `…`", "…API 토큰이 따로 있음. 운영 쪽 값은 `…`"
        kind = kinds_previous[-1]
    elif (used := _USE_FOR.match(text, end)) and _USE_BEFORE.search(near):
        # "use … for Razorpay until …", "use … for Android keystore": a value put to a service's use
        kind = "password" if _LOGIN_TARGET.search(used.group("name")) else "credential"
    elif labelled := _label_line(text, start, end):
        kind = labelled  # "Twilio: …", "prod AWS → …", "| Datadog | `…` |", "office Wi-Fi: …"
    else:
        return False
    if kind == "other" or (kind != "password" and len(_WORD_PART.findall(value)) >= 2):
        return False  # (two plain words between separators: a branch or a path, unless a password's)
    if kind == "service":  # a name in small letters: a generated value, not a hex string, goes
        return generated
    if hexy:  # drawn at random: digits and letters, and not a few characters repeated
        varied = len(set(value)) >= 8 and sum(map(str.isdigit, value)) >= 2 and sum(map(str.isalpha, value)) >= 2
        return varied and (_KEY_LIKE_ID.fullmatch(value) is not None or len(value) >= 24)
    if (kind == "password" or in_block) and password_like:
        return True  # a strong password after a password word, or as a secret block's default
    # right after its name (NAVER_CLIENT_SECRET (Sfw4jkYqql)), 10 characters of both cases and digits do
    return generated or (kinds_before[-1:] == [kind] and right_after and _short_generated(value))


# A line that is only a short name, a separator and the value: "- Trello: …", "prod AWS → …",
# "| Postmark | `…` |". The name must hold a capital or Hangul (a service), no more than four words.
_LABEL_BEFORE = lazy(
    r"(?:^|\n|: )[ \t]*(?:[-*+]|\d{1,2}[.)])?[ \t]*\|?[ \t]*(?P<label>[^\n:|→=>`'\"]{1,40}?)[ \t]*(?::|\||->|=>|→)[ \t]*[`'\"]?$"
)
_LABEL_AFTER = lazy(r"""[`'"]?[ \t]*(?:\|[^\n]*|[.,;]?[ \t]*(?:\n|$)|[,;][ \t])""")


LABEL_REACH = 256  # characters before a value in which its label is looked for


def _label_line(text: str, start: int, end: int) -> str | None:
    """The kind of a line that is only a name, a separator and the value: "password" when the name
    is what one logs into (admin console, office Wi-Fi, keystore), "credential" for a service's."""
    line_start = text.rfind("\n", 0, start) + 1
    # A label ends at the value and is short: looked for in the LABEL_REACH characters before it,
    # not from the start of a line that may be the whole text (which made a long line quadratic).
    label = _LABEL_BEFORE.search(text, max(0, line_start - 1, start - LABEL_REACH), start)
    if label is None or not _LABEL_AFTER.match(text, end):
        return None
    name = label.group("label")
    if REDACTED in name or not 1 <= len(name.split()) <= 4:
        return None
    if _LOGIN_TARGET.search(name):
        return "password"
    if any(c.isupper() or c >= "\uac00" for c in name):
        return "credential"
    # "- [2025-09-01] okta: …": a service in small letters, one word of a list item or a dated note
    word = name.split()[-1]
    listed = _LISTED.match(text, line_start) is not None
    return "service" if listed and word.isalpha() and len(word) >= 3 else None


# What one logs into with a password: a label naming one makes a strong password its value.
_LOGIN_TARGET = lazy(
    r"(?i:console|wi-?fi|keystore|router|vpn|ssh|admin|root|database|db|ftp|smtp|ldap)(?![a-z])|라우터|관리자"
)


def _short_generated(value: str) -> bool:
    """10-13 characters holding capitals, small letters and digits, in no words (yF34sbpSjP)."""
    return (
        10 <= len(value) < 14
        and value.isalnum()
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and not _CAMEL_WORDS.fullmatch(value)
    )


def _generated(value: str) -> bool:
    """_random_value, and in lower case alone more than a name with a number (base64-encoded)."""
    if not _random_value(value):
        return False
    return any(c.isupper() for c in value) or len(_SWITCH.findall(value)) >= 3


NEARBY_RULES: tuple[Rule, ...] = (
    Rule(
        name="named_nearby", pattern=_CANDIDATE, strict=False, groups=("value",), accept=_named_nearby, gate=nearby_gate
    ),
)
