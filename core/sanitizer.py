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
again only when a value replaced in a pass touched a character that could continue a token.

`strict_only=True` applies only the rules marked strict: provider formats with a fixed prefix and
shape, JWTs and PEM private-key blocks, which have essentially no false positives. It is meant
for short fields such as a topic, where a keyword rule could mangle ordinary words.

No pattern can backtrack catastrophically: each starts at a fixed literal or a bounded prefix,
and no two quantified parts can share the same characters, so a hostile 1 KiB input is redacted
in a few milliseconds at most (bench/secrets_corpus.py:hostile holds such inputs;
bench/secrets_bench.py prints their times).
"""

from __future__ import annotations

import re
import string
from typing import Callable, NamedTuple

REDACTED = "[REDACTED]"


class Rule(NamedTuple):
    name: str
    pattern: re.Pattern
    strict: bool  # applied even with strict_only=True
    groups: tuple[str, ...] = ()  # the first of these that matched is replaced; () = whole match
    accept: Callable[[re.Match, str], bool] | None = None  # (match, value) -> is it a secret?
    # Strings of which every match holds at least one; a text with none of them is skipped
    # (a fast substring test instead of a regular-expression scan). () = always run.
    needles: tuple[str, ...] = ()
    # A quicker test on the lowercased text, true for every text the rule can match; None = none.
    gate: Callable[[str], bool] | None = None


# A token must not start in the middle of a longer word ("task-..." is not an "sk-..." key) nor
# run on into one.
_START = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"


def _provider(name: str, body: str, end: str = _END, needles: tuple[str, ...] | None = None) -> Rule:
    """A strict rule for a key with a fixed prefix and shape; the whole match goes. Unless given,
    the literal prefixes of the body's alternatives become the rule's needles."""
    return Rule(name, re.compile(_START + body + end), True,
                needles=_literal_prefixes(body) if needles is None else needles)


def _literal_prefixes(body: str) -> tuple[str, ...]:
    """The literal strings one of which starts every match of body, or () if some alternative
    starts with a class, a repeat or a case-insensitive group (or has a prefix of one character)."""
    from re import _constants as C, _parser  # the parser of the re module: the same syntax

    def of(items) -> list[str] | None:
        prefixes = [""]
        for op, av in items:
            if op is C.LITERAL:
                prefixes = [p + chr(av) for p in prefixes]
                continue
            if op is C.SUBPATTERN and not (av[1] & C.SRE_FLAG_IGNORECASE):
                inner = of(av[3])
            elif op is C.BRANCH:
                alternatives = [of(branch) for branch in av[1]]
                inner = [x for a in alternatives for x in a]
            else:
                inner = [""]
            prefixes = [p + q for p in prefixes for q in inner]
            break
        return prefixes

    found = of(_parser.parse(body).data)
    return tuple(sorted(set(found))) if all(len(p) >= 2 for p in found) and len(found) <= 16 else ()


_HANGUL = "\uac00-\ud7a3\u3131-\u318e"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# A value: double-quoted, single-quoted, or bare up to whitespace or a delimiter. Hangul is not
# part of a bare value, so Korean prose after a colon is never taken for a secret, and a bare
# value never starts with "=" (so "token == expected" is a comparison, not an assignment).
_BARE = rf"""[^\s"'`,;&<>()\[\]{_HANGUL}=][^\s"'`,;&<>()\[\]{_HANGUL}]*"""
_VALUE = rf"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>{_BARE}))"""
_VALUE_GROUPS = ("dq", "sq", "bare")

# Korean names of a credential: password (also the everyday 비번), token, secret, and the compound
# "<kind> 키" forms (API 키, 액세스 키, 비밀 키, 개인 키, 인증 키); "키" alone (key, height) is not one.
_KO_KEYWORD = (r"비밀[ ]?번호|패스[ ]?워드|비번|토큰|클라이언트[ ]?시크릿|시크릿[ ]?키|시크릿|암호[ ]?키|암호"
               r"|(?i:rest[ ]api|api|액세스|접근|접속|비밀|개인|인증|앱|마스터|서비스|보안|라이선스|라이센스)[ ]?키")
# Server settings whose value is a password without saying so (redis: requirepass, masterauth).
_SETTING_KEYWORD = r"requirepass|masterauth"
# The end of a key name that means its value is a secret (DB_PASSWORD, apiKey, client_secret...).
_SECRET_KEYWORD = (
    r"(?i:pass(?:word|wd|phrase)|(?:(?<=[_\-])|(?<![A-Za-z]))pass(?![A-Za-z])|pwd|secret|token"
    r"|api[_\-]?(?:key|hash)|x-api-key|passkey|x-(?:[a-z0-9]+-){1,4}key"
    r"|(?:private|secret|access|signing|encryption|decryption|master|account|storage|auth|app|admin"
    r"|licen[cs]e|server|service(?:[_\-]?role)?|write|ingest|deploy|sdk|client|consumer|subscription"
    r"|integration|routing|webhook|management|mgmt|partner|merchant|shared|hmac|jwt|cipher|rest"
    r"|personal|oauth|bot|dev(?:eloper)?|root)[_\-]?key"
    r"|(?<=[\"'])auth(?=[\"'])|credentials?|" + _SETTING_KEYWORD + r")|" + _KO_KEYWORD
)
# The same words as they appear in a sentence ("the staging password is ...").
# The English words must start a word; the Korean ones may follow Latin letters ("DB비밀번호").
_PROSE_KEYWORD = (
    r"(?<![A-Za-z])(?i:pass(?:word|wd|phrase)|secret|token"
    r"|(?:api|access|secret|private|licen[cs]e|admin|master|signing|encryption|app)[ _\-]?key|"
    + _SETTING_KEYWORD + r")|" + _KO_KEYWORD
)

# --- how a value must look ----------------------------------------------------------------------

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = re.compile(
    r"""(?:\[REDACTED\])+"""
    r"""|<[A-Za-z_].*"""                                # <YOUR_API_KEY>, <your password>
    r"""|\$\{.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*"""      # ${DB_PASSWORD}, $(pass show x), $TOKEN
    r"""|%[A-Za-z_][A-Za-z0-9_]*%|%\(.*|\{.*"""         # %DB_PASS%, %(pw)s, {{ secret }}
    r"""|(?i:null|none|nil|undefined|true|false|yes|no|on|off|~|required|optional|empty|unset"""
    r"""|hidden|masked|redacted|changeme|change[_\-]me|changeit|placeholder|dummy|example"""
    r"""|sample|todo|tbd|fixme|str|string|bytes|int|bool|secret|password|token)"""
    r"""|(?i:your|my)[_\- ].*"""                        # your-api-key, YOUR_TOKEN_HERE
    r"""|(?:os\.environ|os\.getenv|process\.env|getenv)\b.*|env[\[(.].*"""  # os.environ["PW"]
    r"""|[xX*.#•_\-%]*"""                               # "", xxxx, ****, ..., "%" of %(pw)s
    r"""|(?:[A-Za-z0-9]{1,10}[_\-.]){1,2}[xX*.#•]{3,}"""  # sk-xxxx, ghp_XXXX, sk-proj-****
    # The documentation examples of AWS (AKIAIOSFODNN7EXAMPLE and its secret): public, never valid.
    r"""|(?:AKIA|ASIA)[A-Z0-9]{9}EXAMPLE|[A-Za-z0-9/+]{30}EXAMPLEKEY""",
    re.DOTALL,
)

# A value made only of the words people put where a secret will go: your-api-key-here,
# REPLACE_WITH_CLIENT_SECRET, dummy-password, <insert key>, test, changeme_please.
_PLACEHOLDER_WORD = (
    r"(?:your|my|our|the|a|an|some|new|real|actual|example|sample|dummy|fake|test|testing|demo|mock"
    r"|placeholder|insert|enter|put|replace|change|fill|add|paste|set|generated|redacted|hidden"
    r"|secret|password|passwd|pass|pwd|passphrase|token|key|api|apikey|access|private|client|auth"
    r"|here|value|me|it|this|that|goes|with|string|foo|bar|baz|please|default|local|dev|todo|tbd"
    r"|none|blank|empty|something|whatever|app|db|database|admin|user|username|service|account"
    r"|bot|webhook|signing|id|for|of|to|in|on|and|or|only|tests?|use|xxx+|yyy+|zzz+|[.]{3}|[*]{3,}"
    r"|발급받은|키|비밀번호|토큰|값|여기에?|입력)")
_PLACEHOLDER_WORDS = re.compile(
    r"(?i:[<\[({]?[ ]?(?:" + _PLACEHOLDER_WORD + r"(?:[_\-. ]+(?=.)|[ ]?[>\])}]?$))+)")
_VALUE_PART = re.compile(r"[_\-.:]+")
# A prefix, then one character repeated: AKIAXXXXXXXXXXXXXXXX, sk_live_000000000000.
_PREFIX_AND_REPEAT = re.compile(r"[A-Za-z0-9]{0,8}?([xX*0#])\1{5,}")


def _is_placeholder(value: str) -> bool:
    """A value that stands for a secret without being one (see _PLACEHOLDER and the words above);
    also a provider prefix followed by placeholder parts: SG.xxxxx.yyyyy, xoxb-your-token."""
    if _PLACEHOLDER.fullmatch(value):
        return True
    if len(value) > 80:
        return False
    if _PLACEHOLDER_WORDS.fullmatch(value):
        return True
    parts = [part for part in _VALUE_PART.split(value) if part]
    if len(parts) == 1:
        return bool(_PREFIX_AND_REPEAT.fullmatch(parts[0]))
    # short prefix parts (sk, live, xoxb, SG), then only placeholder parts
    tail = len(parts)
    while tail > 0 and (len(set(parts[tail - 1])) == 1 and len(parts[tail - 1]) >= 3
                        or _PLACEHOLDER_WORDS.fullmatch(parts[tail - 1])
                        or _PREFIX_AND_REPEAT.fullmatch(parts[tail - 1])):
        tail -= 1
    return 0 < tail < len(parts) and all(len(part) <= 8 for part in parts[:tail])


# Code, not a value: a dotted name (settings.SECRET_KEY, getpass.getpass) or a bare identifier
# without digits (await, load_token) after "token = ".
_CODE_REF = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+|[A-Za-z_$][A-Za-z_$]*")
# Lowercase words, maybe hyphenated ("expires", "short-lived"): prose after "token:".
_WORDS = re.compile(r"[A-Za-z]+(?:[\-_][A-Za-z]+)*")
# Ids that some providers use as keys (Heroku's UUIDs, 32-hex API keys): kept unless stated as
# the value of a credential.
_KEY_LIKE_ID = re.compile(
    r"[0-9a-fA-F]{32,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SYMBOL = re.compile(r"[!@#$%^&*+/=~?|\\]")
_NOT_SECRET_SHAPE = re.compile(
    r"[0-9a-fA-F]+"                                         # hashes, SHAs, ids
    r"|(?i:sha\d*|md5|blake2[bs]?)[:\-][A-Za-z0-9+/=]+"       # digests, integrity hashes
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|v?\d+(?:\.\d+)+.*"                                   # versions
    r"|\d+(?:ms|s|m|h|d|px|kb|mb|gb|%)?"                    # numbers and durations
    r"|[a-z]+(?:_[a-z0-9]+)+(?:\.[a-z]+)?"                  # snake_case names, file names
    r"|(?:\.{0,2}/|~/|[A-Za-z]:\\).*|[\w.\-]+/[\w.\-/]+\.\w+"   # paths
    r"|\w+://.*",                                           # URLs
)


def _has_digit(v: str) -> bool:
    return any(c.isdigit() for c in v)


def _inner_upper(v: str) -> bool:
    return any(c.islower() for c in v) and any(c.isupper() for c in v[1:])


def _looks_like_secret(v: str) -> bool:
    """A bare value that is not plainly words: a digit, a symbol, or mixed case in 10+ chars."""
    if len(v) < 6 or _WORDS.fullmatch(v):
        return False
    return _has_digit(v) or bool(_SYMBOL.search(v)) or (len(v) >= 10 and _inner_upper(v))


def _strongly_secret(v: str) -> bool:
    """A value named in a sentence ("the password is ..."): 8+ chars mixing letters with digits
    or symbols, and no shape of an id, hash, version, number, path or URL."""
    if len(v) < 8 or _NOT_SECRET_SHAPE.fullmatch(v) or _CODE_REF.fullmatch(v):
        return False
    letters = any(c.isalpha() for c in v)
    return letters and (_has_digit(v) or (bool(_SYMBOL.search(v)) and _inner_upper(v)))


def _on_its_own_line(match: re.Match) -> bool:
    """`  password: value` alone on its line, as in YAML, INI or a .env file."""
    text = match.string
    head = text[text.rfind("\n", 0, match.start()) + 1: match.start()]
    end = text.find("\n", match.end())
    tail = text[match.end(): len(text) if end == -1 else end]
    return bool(re.fullmatch(r"""[ \t]*(?:-[ \t]+)?["']?[\w.\-]*""", head)) and (
        not tail.strip() or tail.lstrip().startswith("#"))


# A file path: where a key lives (client_key: /etc/ssl/client.key), not the key.
_FILE_PATH = re.compile(
    r"(?:~|\.{1,2})?/(?:[\w.\-]+/)*[\w\-]+\.[A-Za-z0-9]{1,5}"
    r"|(?:~|\.{1,2})/[\w.\-/]*|/(?:etc|var|run|home|usr|opt|tmp|mnt|srv|secrets?|certs?|keys?)/[\w.\-/]*"
    r"|[A-Za-z]:\\[\w.\-\\ ]*")


def _assignment(match: re.Match, value: str) -> bool:
    """Whether the value of `key = value`, `key: value`, `"key": "value"` is a secret."""
    if _FILE_PATH.fullmatch(value):
        return False
    if match.group("bare") is None:  # quoted: a value was meant
        return not _CODE_REF.fullmatch(value) or _has_digit(value) or len(value) >= 8
    sep, spaced = match.group("sep"), bool(match.group("pre") or match.group("post"))
    if sep != ":" and not spaced:  # PASSWORD=..., --password=...: env and flag style
        return True
    if _CODE_REF.fullmatch(value) or _WORDS.fullmatch(value):
        # `token = await`, `password: str`, `token: expires` - code or prose, unless a YAML line
        return sep == ":" and _on_its_own_line(match) and len(value) >= 6
    return _looks_like_secret(value) or _on_its_own_line(match)


_AUTH_SCHEME = re.compile(r"(?i:bearer|basic|token|digest|bot|apikey|sso-key|key|ssws|kakaoak|oauth)")


def _authorization(match: re.Match, value: str) -> bool:
    """`Authorization: <scheme> <value>`: any value after a known scheme; after another word
    (KakaoAK, GenieKey, DeepL-Auth-Key, ...) a value that looks like a secret, 8+ characters."""
    return bool(_AUTH_SCHEME.fullmatch(match.group("scheme"))) or (
        len(value) >= 8 and _looks_like_secret(value) and not _CODE_REF.fullmatch(value))


def _flag_value(match: re.Match, value: str) -> bool:
    return match.group("bare") is None or _looks_like_secret(value)


def _prose_value(match: re.Match, value: str) -> bool:
    """A value named in a sentence. After "is", "was", "는", ":" or "=" a long hex string or a UUID is
    stated as the credential ("the API key is 8f14e45f..."); without such a verb it stays, as a
    commit, a trace id or a request id would be written ("the token 550e8400-... expired")."""
    stated = match.group("verb") or match.group("kw")[-1] in "키yY"  # "API 키 8f14...", "app key 8f14..."
    return _strongly_secret(value) or bool(stated and _KEY_LIKE_ID.fullmatch(value))


# Hosts reserved for documentation and tests (RFC 2606, RFC 6761) and the local machine.
_EXAMPLE_HOST = re.compile(
    r"(?i:(?:[\w\-]+\.)*(?:example\.(?:com|org|net)|example|test|invalid|localhost)"
    r"|localhost|127\.0\.0\.1|0\.0\.0\.0|\[?::1\]?)(?::\d+)?")
_PLAIN_WORD = re.compile(r"[a-z]+")
# A port and a path, not a password: "https://host:8080/a@b" has no credentials.
_PORT_AND_PATH = re.compile(r"\d{1,5}(?:/.*)?", re.DOTALL)


def _url_password(match: re.Match, value: str) -> bool:
    """Whether the password of scheme://user:password@host is a secret. Kept: the password of a
    template (postgres://user:password@localhost, a placeholder word), a default login whose
    password is its user name (guest:guest, postgres:postgres), a lowercase word on a
    documentation or local host (https://user:pass@example.com), and a port with a path."""
    if _PORT_AND_PATH.fullmatch(value) or value == match.group("user"):
        return False
    if _PLAIN_WORD.fullmatch(value) and _EXAMPLE_HOST.fullmatch(match.group("host") or ""):
        return False
    return True


# Every key name of keyword_assignment ends in one of these right before its separator (after an
# optional quote and blanks): a text without such an ending is skipped. Looking back from each ":"
# and "=" is quicker than trying the long alternation of key names at every position.
_KEY_NAME_ENDINGS = ("word", "wd", "phrase", "pass", "pwd", "secret", "token", "key", "hash",
                     "credential", "credentials", "auth", "requirepass", "masterauth",
                     "호", "드", "번", "큰", "릿", "키")
_SEPARATOR = re.compile(r"[:=]")


def _assignment_gate(low: str) -> bool:
    for sep in _SEPARATOR.finditer(low):
        if low[max(0, sep.start() - 24): sep.start()].rstrip(" \t\"'").endswith(_KEY_NAME_ENDINGS):
            return True
    return False


def _words(*words: str) -> Callable[[str], bool]:
    """A gate: the lowercased text holds one of these words."""
    return lambda low: any(word in low for word in words)


_PROSE_GATE = _words("pass", "secret", "token", "key", "requirepass", "masterauth",
                     "비밀", "패스", "비번", "토큰", "시크릿", "암호", "키")


# --- the rules ----------------------------------------------------------------------------------

RULES: tuple[Rule, ...] = (
    # PEM blocks first: their base64 body must be gone before the token rules look at it.
    # An unterminated block is redacted to the end of the text. Inside JSON the newlines are
    # "\n" escapes, which the block swallows just the same.
    Rule("pem_private_key", re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)", re.DOTALL), True,
        needles=("-----BEGIN",)),
    # A GCP service-account file: its private_key is a PEM block (above); its key id goes too.
    Rule("gcp_private_key_id", re.compile(
        r""""private_key_id"[ \t]*:[ \t]*"(?P<value>[0-9a-f]{40})\""""), True, ("value",),
        needles=('"private_key_id"',)),
    _provider("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    _provider("aws_session_token", r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}", ""),
    # 40 base64 characters right after an "aws secret" keyword. Forty lowercase hex digits
    # (a git SHA) are never taken for one.
    Rule("aws_secret_access_key", re.compile(
        r"(?i:aws[_\-. ]?secret(?:[_\-. ]?access)?(?:[_\-. ]?key)?|secret[_\-. ]?(?:access[_\-. ]?)?key)"
        r"""(?:["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?|[ \t]+)"""
        r"(?P<value>(?![0-9a-f]{40}(?![A-Za-z0-9/+]))[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
        True, ("value",), gate=_words("secret")),
    _provider("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
    _provider("gitlab_token",
              r"(?:gl(?:pat|dt|rt|ptt|soat|cbt|imt|agent|oas|ffct|ft|suat)-[A-Za-z0-9_\-]{20,}(?:\.[0-9a-z]{2,12}){0,2}"
              r"|GR1348941[A-Za-z0-9_\-]{20,})", ""),
    _provider("slack_token", r"(?:xox[abposre]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9\-]{10,}", ""),
    Rule("slack_webhook", re.compile(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"(?P<value>[A-Za-z0-9_\-]+/[A-Za-z0-9_/\-]{8,})"), True, ("value",), needles=("hooks.slack.com/",)),
    _provider("stripe_key", r"(?:(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"),
    # Anthropic before OpenAI: both start with "sk-".
    _provider("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", ""),
    _provider("openai_key",
              r"sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20,})", ""),
    _provider("google_api_key", r"AIza[A-Za-z0-9_\-]{35}", ""),
    _provider("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_\-]{20,}", ""),
    _provider("google_oauth_token", r"ya29\.[A-Za-z0-9_\-]{20,}", ""),
    _provider("npm_token", r"npm_[A-Za-z0-9]{36,}"),
    _provider("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ""),
    _provider("huggingface_token", r"(?:hf_[A-Za-z0-9]{34,}|api_org_[A-Za-z0-9]{34,})"),
    _provider("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", r"(?![A-Za-z0-9_\-])"),
    _provider("twilio_key", r"(?:SK|AC)[0-9a-f]{32}"),
    _provider("mailgun_key", r"(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})"),
    _provider("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}"),
    _provider("heroku_key", r"HRKU-[A-Za-z0-9_\-]{58,}", ""),
    _provider("databricks_token", r"dapi[a-f0-9]{32}(?:-\d+)?"),
    _provider("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    _provider("atlassian_token", r"AT(?:ATT|CTT)[A-Za-z0-9_\-=]{60,}", ""),
    _provider("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    _provider("notion_token", r"(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})"),
    _provider("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    _provider("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", ""),
    _provider("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    _provider("grafana_token", r"(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}={0,2})"),
    _provider("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}", ""),
    _provider("supabase_token", r"(?:sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})"),
    _provider("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}", ""),
    _provider("replicate_token", r"r8_[A-Za-z0-9]{37}"),
    _provider("groq_key", r"gsk_[A-Za-z0-9]{48,}"),
    _provider("xai_key", r"xai-[A-Za-z0-9]{60,}"),
    _provider("perplexity_key", r"pplx-[A-Za-z0-9]{40,}"),
    _provider("newrelic_key", r"(?:NRAK-[A-Z0-9]{27}|NRII-[A-Za-z0-9_\-]{32}|[a-f0-9]{36}NRAL)",
              needles=("NRAK-", "NRII-", "NRAL")),
    _provider("square_token", r"(?:sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-+=]{60,})", ""),
    _provider("mapbox_secret_token", r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}", ""),
    _provider("pulumi_token", r"pul-[a-f0-9]{40}"),
    _provider("terraform_cloud_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", "", needles=(".atlasv1.",)),
    _provider("firebase_fcm_server_key", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}", "", needles=(":APA91b",)),
    # Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", then 31-34 more.
    Rule("azure_ad_client_secret", re.compile(
        r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"), True,
        needles=("Q~",)),
    _provider("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # Discord bot token: base64 of the bot's numeric id, a timestamp, an HMAC.
    _provider("discord_bot_token",
              r"[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}", r"(?![A-Za-z0-9_\-])"),
    Rule("discord_webhook", re.compile(
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,25}/"
        r"(?P<value>[A-Za-z0-9_\-]{30,})"), True, ("value",), needles=("/api/webhooks/",)),
    # Telegram bot token: the bot id, a colon, 35 characters ("bot123:AA..." in API URLs).
    Rule("telegram_bot_token", re.compile(
        r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_\-]{34}(?![A-Za-z0-9_\-])"), True, needles=(":A",)),
    # Azure: storage-account keys in connection strings, and the signature of a SAS URL.
    Rule("azure_storage_key", re.compile(
        r"(?i:AccountKey|SharedAccessKey)=(?P<value>[A-Za-z0-9+/]{20,}={0,2})"), True, ("value",),
        gate=_words("accountkey=", "sharedaccesskey=")),
    Rule("azure_sas_signature", re.compile(
        r"(?<![A-Za-z0-9_])sig=(?P<value>[A-Za-z0-9%+/]{20,}={0,2})"), True, ("value",), needles=("sig=",)),
    # Providers whose formats gitleaks' rule set and the providers' own
    # documentation describe; the shapes are written here from those descriptions.
    _provider("openrouter_key", r"sk-or-v1-[a-f0-9]{64}"),
    _provider("langfuse_key", r"sk-lf-" + _UUID),
    _provider("google_oauth_refresh_token", r"1//0[A-Za-z0-9_\-]{40,}", r"(?![A-Za-z0-9_\-])"),
    _provider("docker_hub_token", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}", r"(?![A-Za-z0-9_\-])"),
    _provider("bitbucket_token", r"ATBB[A-Za-z0-9]{32,}"),
    _provider("mailchimp_key", r"[0-9a-f]{32}-us[0-9]{1,2}", needles=("-us",)),
    _provider("airtable_token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    _provider("figma_token", r"figd_[A-Za-z0-9_\-]{30,}", r"(?![A-Za-z0-9_\-])"),
    _provider("hubspot_token",
              r"pat-(?:na|eu|ap)[0-9]-" + _UUID),
    _provider("vercel_token", r"vc[pikar]_[A-Za-z0-9]{24,}"),
    _provider("netlify_token", r"nf[pc]_[A-Za-z0-9]{30,}"),
    _provider("grafana_legacy_api_key", r"eyJrIjoi[A-Za-z0-9]{40,}={0,3}", ""),
    _provider("dropbox_token",
              r"(?:sl\.(?:u\.)?[A-Za-z0-9_\-=]{100,}|(?=A{0,10}[B-Za-z0-9])[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_\-=]{43})",
              r"(?![A-Za-z0-9_\-=])", needles=("sl.", "A" * 10)),
    _provider("facebook_token", r"EAA[B-Z][A-Za-z0-9]{80,}"),
    _provider("braintree_token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    _provider("alibaba_access_key_id", r"LTAI[A-Za-z0-9]{12,20}"),
    _provider("tencent_secret_id", r"AKID[A-Za-z0-9]{32,34}"),
    _provider("twitter_bearer_token", r"A{20,24}(?=[A-Z]*[a-z0-9%])[A-Za-z0-9%]{60,}", needles=("A" * 20,)),
    _provider("salesforce_token", r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{60,}", ""),
    _provider("asana_token", r"[0-9]/[0-9]{10,}(?:/[0-9]{10,})?:[a-f0-9]{32}", needles=(":",)),
    _provider("clickup_token", r"pk_[0-9]{6,10}_[A-Z0-9]{32}"),
    _provider("plaid_token",
              r"access-(?:sandbox|development|production)-" + _UUID),
    _provider("launchdarkly_key", r"(?:sdk|api)-" + _UUID),
    _provider("jfrog_token", r"(?:AKCp[A-Za-z0-9]{60,}|cmVmd[A-Za-z0-9]{59})"),
    _provider("clojars_token", r"CLOJARS_[a-z0-9]{60}"),
    _provider("onepassword_token", r"(?:ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"
              r"|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})", ""),
    _provider("harness_token", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    _provider("cloudflare_origin_ca_key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    _provider("dynatrace_token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    _provider("easypost_key", r"EZ[AT]K[A-Za-z0-9]{54}"),
    _provider("flyio_token", r"(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})", "",
              needles=("fo1_", "fm1", "fm2_")),
    _provider("infracost_key", r"ico-[A-Za-z0-9]{32}"),
    _provider("readme_key", r"rdme_[a-z0-9]{70}"),
    _provider("typeform_token", r"tfp_[A-Za-z0-9_\-.=]{40,}", ""),
    _provider("render_key", r"rnd_[A-Za-z0-9]{32,}"),
    _provider("rubygems_key", r"rubygems_[a-f0-9]{48}"),
    _provider("shippo_token", r"shippo_(?:live|test)_[a-f0-9]{40}"),
    _provider("brevo_key", r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    _provider("prefect_key", r"pnu_[A-Za-z0-9]{36}"),
    _provider("buildkite_token", r"bkua_[a-f0-9]{40}"),
    _provider("sonarqube_token", r"sq[pau]_[a-f0-9]{40}"),
    _provider("circleci_token", r"CCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}"),
    _provider("contentful_token", r"CFPAT-[A-Za-z0-9_\-]{43}", r"(?![A-Za-z0-9_\-])"),
    _provider("langsmith_key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _provider("pinecone_key", r"pcsk_[A-Za-z0-9_]{40,}"),
    _provider("tavily_key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"),
    _provider("elevenlabs_key", r"sk_[a-f0-9]{48}"),
    _provider("deepl_key", _UUID + ":fx", needles=(":fx",)),
    _provider("duffel_token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ""),
    _provider("frameio_token", r"fio-u-[A-Za-z0-9_\-=]{64}", ""),
    _provider("scalingo_token", r"tk-us-[A-Za-z0-9_\-]{48}", ""),
    _provider("sourcegraph_token", r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}"),
    _provider("openshift_token", r"sha256~[A-Za-z0-9_\-]{43}", r"(?![A-Za-z0-9_\-])"),
    _provider("maxmind_key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", needles=("_mmk",)),
    _provider("adobe_client_secret", r"p8e-[A-Za-z0-9]{32}"),
    _provider("yandex_token", r"(?:AQVN[A-Za-z0-9_\-]{35,38}|y0_Ag[A-Za-z0-9_\-]{40,})", r"(?![A-Za-z0-9_\-])"),
    _provider("azure_devops_pat", r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}", needles=("AZDO",)),
    Rule("teams_webhook", re.compile(
        r"https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/(?P<value>[A-Za-z0-9@/\-]{40,})"),
        True, ("value",), needles=(".webhook.office.com/",)),
    # header.payload.signature, base64url; the header is JSON, so it starts with "eyJ".
    Rule("jwt", re.compile(
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"), True,
        needles=("eyJ",)),

    # --- the rules below judge by context, so strict_only=True skips them ---
    # scheme://user:password@host -> only the password goes. The password runs to the last "@"
    # that is followed by a host (a name, then "/", "?", "#", whitespace or the end), so an
    # unescaped "@", "#", "?", "/", "+" or "=" inside it is covered too (base64 passwords).
    Rule("url_password", re.compile(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://(?P<user>[^\s:/@?#]*):"
        r"(?P<value>[^\s]{1,256}?)@(?=(?P<host>[^\s/@?#]*)(?:[/?#\s\"'`<>)\]]|$))"),
        False, ("value",), _url_password, needles=("://",)),
    # The same URL percent-encoded, as in a redirect or a query parameter:
    # https%3A%2F%2Fuser%3Apassword%40host (or with a plain "@"); twice-encoded (%253A) too.
    Rule("url_password_encoded", re.compile(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}(?i:%(?:25)?3A%(?:25)?2F%(?:25)?2F)"
        r"(?P<user>[A-Za-z0-9._~\-]*)(?i:%(?:25)?3A)"
        r"(?P<value>[^\s@&%]{0,256}(?:%(?!(?:25)?40)[0-9A-Fa-f]{2}[^\s@&%]{0,256}){0,32})"
        r"(?:@|(?i:%(?:25)?40))(?P<host>[A-Za-z0-9.\-]*)"), False, ("value",), _url_password, needles=("%2",)),
    Rule("authorization_header", re.compile(
        r"(?i:\b(?:proxy-)?authorization)" + r"""["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?"""
        r"(?P<scheme>[A-Za-z][A-Za-z0-9_\-]{1,30})[ \t]+(?P<value>[A-Za-z0-9._~+/:\-]+=*)"),
        False, ("value",), _authorization, gate=_words("authorization")),
    # "Bearer <token>" without the header name: the token must be long and contain a digit,
    # so that "bearer authentication" stays.
    Rule("bearer_token", re.compile(
        r"(?i:\bbearer)[ \t]+(?=[A-Za-z._~+/\-]*[0-9])(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
        False, ("value",), gate=_words("bearer")),
    # curl -u user:password, --user user:password
    Rule("basic_auth_flag", re.compile(
        r"(?<![\w\-])(?:-u|--user)[ \t]+[\"']?[^\s:\"'@]+:(?P<value>[^\s\"']+)"), False, ("value",),
        needles=("-u",)),
    # Clients whose password flag is not named "password": mysql -u root -pS3cret (glued to -p;
    # a bare -p prompts and stays), redis-cli -a S3cret, sshpass -p S3cret.
    Rule("client_password_flag", re.compile(
        r"(?<![\w\-])(?:(?:mysql|mysqldump|mysqladmin|mariadb)(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-p(?P<glued>[^\s\"']+)"
        r"|(?:redis-cli(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-a|sshpass[ \t]+-p)[ \t]+"
        r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*)))"""),
        False, ("glued",) + _VALUE_GROUPS, needles=("mysql", "mariadb", "redis-cli", "sshpass")),
    # --password hunter2, --api-key abc (the "--password=..." form is a keyword assignment).
    Rule("cli_flag", re.compile(
        r"(?<![\w\-])--?(?i:(?:[a-z0-9]+-){0,3}(?:password|passwd|token|secret|api-key|apikey|" + _SETTING_KEYWORD + r"))"
        r"""[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""),
        False, _VALUE_GROUPS, _flag_value,
        gate=_words("pass", "token", "secret", "api-key", "apikey", "masterauth")),
    # .netrc: "machine api.example.com login me password VALUE" - any value after such a login.
    Rule("netrc_password", re.compile(
        r"(?<![\w\-])(?:machine[ \t]+[^\s]{1,253}|default)[ \t]+login[ \t]+[^\s]{1,100}[ \t]+"
        r"password[ \t]+(?P<bare>[^\s\"'`]+)"),
        False, ("bare",), needles=("password",)),
    Rule("xml_secret_element", re.compile(
        r"<(?i:(?:[a-z]+[_\-]?)?(?:password|secret|token|api[_\-]?key))>(?P<value>[^<\s]{1,512})</"),
        False, ("value",), needles=("</",)),
    # password=..., DB_PASSWORD: ..., "apiKey": "...", client_secret = '...': the key name must
    # end in a secret keyword right before the separator ("tokens: 5" and "secretary:" stay).
    # Whatever precedes the keyword (DB_, db, client_) is not part of the match.
    Rule("keyword_assignment", re.compile(
        r"(?:" + _SECRET_KEYWORD + r""")["']?(?P<pre>[ \t]*)(?P<sep>:=|=>|:(?!//)|=(?!=))"""
        r"(?P<post>[ \t]*)" + _VALUE), False, _VALUE_GROUPS, _assignment, gate=_assignment_gate),
    # "the staging password is Tr0ub4dor&3", "비밀번호는 ...": a value named in a sentence must
    # look strongly like a secret (letters with digits or symbols, 8+ chars, not an id or hash).
    Rule("keyword_in_prose", re.compile(
        r"(?P<kw>" + _PROSE_KEYWORD + r")(?:[ \t]+(?i:value)|[ ]?값)?"
        r"(?:(?P<verb>[ \t]+(?i:is|was|are|were|becomes|now)|[ \t]*[:=]|는|은)|이|가|을|를)?[ \t]+"
        r"""(?:(?P<quote>["'`])(?P<pq>[^"'`\n]{8,200})(?P=quote)"""
        r"""|(?P<bare>[^\s"'`,;<>(){}\[\]""" + _HANGUL + r"""]{8,}))"""),
        False, ("pq", "bare"), _prose_value, gate=_PROSE_GATE),
)

# A URL's password is judged by _url_password: "Pass" in https://u:Pass@host is a password, while
# the placeholder words (pass, test, admin, ...) would keep it.
_URL_RULES = frozenset({"url_password", "url_password_encoded"})

# Sentence punctuation that ends a bare value ("the password is Xy7#kq9z.") stays in the text.
_TRAILING = ".)"

_MAX_PASSES = 8  # a bound that is never reached, so that no input can keep the loop going

# The rules each mode runs, in order, each with its pattern's bound sub (looked up once, not per text).
_RUNS = {strict_only: tuple((rule, rule.pattern.sub, rule.needles, rule.gate) for rule in RULES
                             if rule.strict or not strict_only)
         for strict_only in (False, True)}


def redact(text: str, *, strict_only: bool = False) -> tuple[str, int]:
    """Return (text with each credential replaced by [REDACTED], number of values replaced)."""
    text, names = _apply(text, strict_only)
    return text, len(names)


def rules_hit(text: str, *, strict_only: bool = False) -> list[str]:
    """The names of the rules that would replace a value in text, one per value (never a value)."""
    return _apply(text, strict_only)[1]


# Characters that may continue a token: a value replaced next to one of them may have hidden the
# start (after it) or the end (before it) of another match, so another pass is needed.
_GLUE_AFTER = frozenset(string.ascii_letters + string.digits + "_-.~+/=%")
_GLUE_BEFORE = frozenset(string.ascii_letters + string.digits + "_-.~+/%")


def _apply(text: str, strict_only: bool) -> tuple[str, list[str]]:
    names: list[str] = []
    if not text:
        return text, names
    glued = [False]  # whether a value replaced in this pass touched a character of _GLUE_*

    def replace(match: re.Match) -> str:  # `rule` is the rule being applied in the loop below
        group = next((g for g in rule.groups if match.group(g) is not None), 0)
        start, end = match.span(group)
        if group == "bare":
            while end > start + 1 and match.string[end - 1] in _TRAILING and (
                    end == len(match.string) or match.string[end].isspace()):
                end -= 1
        value = match.string[start:end]
        placeholder = _PLACEHOLDER.fullmatch(value) if rule.name in _URL_RULES else _is_placeholder(value)
        if placeholder or (rule.accept and not rule.accept(match, value)):
            return match.group(0)
        names.append(rule.name)
        string_ = match.string
        if (end < len(string_) and string_[end] in _GLUE_AFTER) or (start > 0 and string_[start - 1] in _GLUE_BEFORE):
            glued[0] = True
        offset = match.start()
        whole = match.group(0)
        return whole[: start - offset] + REDACTED + whole[end - offset:]

    # A key glued to the end of another ("...AIza...AKIA...") only shows its start once the first
    # one is gone, so passes repeat until one replaces nothing next to such a character (a value
    # between blanks, quotes or brackets cannot hide another match); in practice the second does.
    for _ in range(_MAX_PASSES):
        glued[0] = False
        low = text.lower()
        for rule, sub, needles, gate in _RUNS[strict_only]:
            if needles and not any(needle in text for needle in needles):
                continue
            if gate is not None and not gate(low):
                continue
            text = sub(replace, text)
        if not glued[0]:
            break
    return text, names
