"""How a credential's value must look to be redacted, and the pattern fragments the rules of
redaction/rules.py are written with: key words in English, Korean and other languages, the value
after a key, placeholders that stay (`<YOUR_KEY>`, `${VAR}`, `your-api-key-here`,
`AKIAXXXXXXXXXXXXXXXX`), and the judgements a keyword rule makes of its value (an assignment,
prose, a URL's password; a command line's flags: redaction/commands.py). docs/security.md lists
the decisions."""

from __future__ import annotations

import re

from ..lazy import lazy
from .gates import NOT_SECRET_SUFFIX

_HANGUL = "\uac00-\ud7a3\u3131-\u318e"
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# A value: double-quoted, single-quoted, or bare up to whitespace or a delimiter. Hangul is not
# part of a bare value, so Korean prose after a colon is never taken for a secret, and a bare
# value never starts with "=" (so "token == expected" is a comparison, not an assignment).
_BARE = rf"""[^\s"'`,;&<>()\[\]{_HANGUL}=][^\s"'`,;&<>()\[\]{_HANGUL}]*"""
# A quote may follow "@" (Objective-C and C# string literals: @"...").
# In a JSON string the quotes are escaped: {\"api_key\": \"...\"}.
# Backquotes: Go raw strings, Markdown code.
_VALUE = rf"""(?:\\?@?"(?P<dq>[^"\n]*?)\\?"|@?'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|(?P<bare>{_BARE}))"""
# A keyword assignment's bare value may also run to the end of its line through , ; & < > ( ) [ ]
# (a generated password in a .env or YAML line: DB_PASSWORD=RqZbl5K&#CR%ZNqh), up to blanks and a
# `#` comment; never through `=` (a form body: password=abc&user=bob). The engine keeps that run
# only for a setting alone on its line (line_value_end), and the bare value's part otherwise.
_LINE_VALUE = (
    rf"""(?:\\?@?"(?P<dq>[^"\n]*?)\\?"|@?'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`"""
    rf"""|(?P<bare>\{{[^{{}}\n]{{1,256}}\}}(?=[;"'\s]|\Z)"""  # ODBC's PWD={a;b}
    rf"""|[^\s"'`,;&<>()\[\]{_HANGUL}=][^\s"'`{_HANGUL}=]*(?=[ \t]*(?:\r?\n|\Z)|[ \t]+\#)|{_BARE}))"""
)
# What ends a bare value that is not alone on its line.
_BARE_STOP = lazy(r"[,;&<>()\[\]]")
# The start of a line that holds only a setting: its indent, a YAML list's dash, `export`, a quote,
# and the name's part before the keyword (DB_ in DB_PASSWORD).
_SETTING_HEAD = lazy(r"""[ \t]*(?:-[ \t]+)?(?:export[ \t]+)?["']?[\w.\-]*""")


# An index or a call in code (values[0], headers[apiKeyHeader], testutil.ToFloat64(total)): an
# expression, not a setting's value.
_INDEX_OR_CALL = lazy(r"[A-Za-z_$][\w.$]*[\[(].*[\])][^\w]*")  # closed: values[0], f(x),


def line_value_end(match: re.Match, start: int, end: int) -> tuple[int, bool]:
    """Where a keyword assignment's bare value text[start:end] ends, and whether it is a setting's
    whole value: at the line's end when the assignment is a setting alone on its line, `KEY=value`
    or `key: value` (see _LINE_VALUE; a last , or ; left out: `apiKey: env.KEY,`), unless the run
    is an index or a call in code; else at the first character that ends a bare value."""
    text, match_start = match.string, match.start()
    if text.startswith("{", start) and text[end - 1 : end] == "}":  # ODBC's PWD={a;b}: its braces hold it
        return end, True
    stop = _BARE_STOP.search(text, start, end)
    head = text[text.rfind("\n", 0, match_start) + 1 : match_start]
    alone = _SETTING_HEAD.fullmatch(head) is not None and not text[end : end + 1].strip()
    if alone and end - start > 1 and text[end - 1] in ",;":  # a line of code or JSON: the comma ends the value
        end -= 1
        stop = _BARE_STOP.search(text, start, end)
    if stop is None:
        return end, alone
    setting = match.group("sep") == ":" or (
        match.group("sep") == "=" and not match.group("pre") and not match.group("post")
    )
    if alone and setting and not _INDEX_OR_CALL.fullmatch(text, start, end):
        return end, True
    return stop.start(), False


_VALUE_GROUPS = ("dq", "sq", "bare")
_VALUE_GROUPS_BQ = ("dq", "sq", "bq", "bare")

# Korean names of a credential: password (also the everyday 비번), token, secret, and the compound
# "<kind> 키" forms (API 키, 액세스 키, 비밀 키, 개인 키, 인증 키); "키" alone (key, height) is not one.
_KO_KEYWORD = (
    r"비밀[ ]?번호|패스[ ]?워드|비번|토큰|클라이언트[ ]?시크릿|시크릿[ ]?키|시크릿|암호[ ]?키|암호"
    r"|(?:발급|전달)?받은[ ]?키|발급(?:한|된)?[ ]?키"  # "the key issued" (발급받은 키, 콘솔에서 발급한 키)
    r"|(?<=[A-Za-z0-9] )키(?=[ \t]*[:=]|는|은|가[ \t])"  # "<service> 키: ..." (a label, not a key id)
    r"|(?<=[A-Za-z0-9][\uac00-\ud7a3] )키(?=[ \t]*[:=])"  # "nuget용 키:", "datadog의 키:"
    r"|(?<![^\n])키(?=[ ]?값)|(?<=[A-Za-z0-9] )키(?=[ ]?값)"  # "키 값 …" opening a line, "<service> 키 값"
    r"|(?i:rest[ ]api|api|액세스|접근|접속|비밀|개인|인증|앱|마스터|서비스|보안|라이선스|라이센스)[ ]?키"
)
# Server settings whose value is a password without saying so (redis: requirepass, masterauth).
_SETTING_KEYWORD = r"requirepass|masterauth"
# The end of a key name that means its value is a secret (DB_PASSWORD, apiKey, client_secret...).
_SECRET_KEYWORD = (
    r"(?i:pass(?:word|wd|phrase)|(?:(?<=[_\-])|(?<![A-Za-z]))pass(?![A-Za-z])|(?-i:(?<=[a-z0-9])Pass)(?![a-z])|pwd|secret|token"
    r"|(?<![A-Za-z])pw(?![A-Za-z])|(?<![A-Za-z])psk(?![A-Za-z])|api[_\-. ]?(?:key|hash)|x-api-key|passkey|x-(?:[a-z0-9]+-){1,4}key"
    r"|(?:private|secret|access|signing|encryption|decryption|master|account|storage|auth|app|admin"
    r"|licen[cs]e|server|service(?:[_\-]?role)?|write|ingest|deploy|sdk|client|consumer|subscription"
    r"|integration|routing|webhook|management|mgmt|partner|merchant|shared|hmac|jwt|cipher|rest"
    r"|personal|oauth|bot|dev(?:eloper)?|root)[_\-. ]?key"
    r"|(?<=[\"'])auth(?=[\"'])|(?<=_)auth|credentials?|pepper|"
    + _SETTING_KEYWORD
    # a personal access token in capitals: AZURE_DEVOPS_EXT_PAT, GH_PAT, PAT (its value must look
    # generated; in small letters, id_pat is as often a pattern)
    + r"|(?-i:(?:(?<=_)|(?<![A-Za-z0-9]))PAT(?![A-Za-z0-9])))|"
    + _KO_KEYWORD
)
# Any other name that ends in "key" (DATADOG_KEY, lobKey, heroku.key): a key of a service not
# listed above, or an ordinary key (cache_key, primary_key). Its value must look random
# (_random_value) and the word before "key" must not name an ordinary one (_ORDINARY_KEY).
# (The letter comes before the look-behind so that most positions fail at the first test.)
_GENERIC_KEY = r"(?:[kK](?<=[A-Za-z0-9][_\-.][kK])(?i:ey)|K(?<=[a-z0-9]K)ey)(?![A-Za-z0-9])"
_ORDINARY_KEY = frozenset(
    (
        "cache primary foreign sort partition range hash composite natural surrogate unique index row "
        "idempotency dedup dedupe object s3 bucket file path map dict lookup group label i18n translation "
        "message event state query public publishable pub ssh gpg pgp host ca hot shortcut keyboard "
        "redis memcache kv lock prefix cursor react list item entry field column id recv"
    ).split()
)
# A label and a SHA-1, SHA-256 or SHA-512, as CI caches name their entries: node-cache-Linux-x64-npm-<sha256>,
# pip-<sha1>; a word of a cache's label must be among its parts (prod-api-<sha256> may be a key), and
# 32 hex digits are no hash of these (scp-live-<32> is a key)
_LABELED_HASH = lazy(
    r"(?=(?:[A-Za-z0-9]+-)*?(?i:cache|linux|windows|macos|darwin|ubuntu|x64|x86|arm64|npm|pip|node|yarn|pnpm|cargo"
    r"|gradle|maven|gomod|go|poetry|uv|deps|bundle|gems|ccache|buildx|docker|runner)-)"
    r"(?:[A-Za-z][A-Za-z0-9]{1,20}-){1,8}(?:[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128})"
)
# The word before "token" that makes it a position in a listing or a public value: NextToken,
# next_page_token, pageToken, --starting-token, a publishable key.
_NOT_A_CREDENTIAL = frozenset(
    "public publishable page pagination continuation next sync cursor resume starting".split()
)
_WORD_BEFORE = lazy(r"([A-Z]?[a-z]+|[A-Z]+)[_\-.]?$")

# "Password" and "token" in the other languages people write lessons in: German, Dutch, French,
# Spanish, Portuguese, Italian, Swedish, Finnish, Polish, Turkish, Russian, Japanese, Chinese.
_OTHER_KEYWORD = (
    r"(?i:passwort(?:es)?|kennwort|api-schl(?:ü|ue)ssel|wachtwoord|mot de passe|(?<![A-Za-z])mdp(?![A-Za-z])"
    r"|cl(?:é|e) (?:d'|de l')?api|jeton|contrase(?:ñ|n)a|(?<![A-Za-z])clave(?![A-Za-z])|senha|palavra-passe"
    r"|chiave api|l(?:ö|o)senord(?:et)?|salasana(?:[ \t]+on)?|has(?:ł|l)o|(?:ş|s)ifre|парол[ьяею]|токен[аеу]?)"
    r"|パスワード|トークン|API[ ]?キー|暗証番号|密码|密碼|口令|令牌|密钥|秘钥"
)
# Japanese, Chinese and fullwidth characters: a value ends where they start ("…です").
_CJK = "\u3000-\u30ff\u4e00-\u9fff\uff00-\uffef"
# The same words as they appear in a sentence ("the staging password is ...").
# The English words must start a word; the Korean ones may follow Latin letters ("DB비밀번호").
_PROSE_KEYWORD = (
    r"(?<![A-Za-z])(?i:pass(?:word|wd|phrase|code)|secret|token|identified[ \t]+by"
    r"|(?:api|access|secret|private|licen[cs]e|admin|master|signing|encryption|app)[ _\-]?key|"
    + _SETTING_KEYWORD
    + r")|"
    + _KO_KEYWORD
    + r"|"
    + _OTHER_KEYWORD
)

# --- how a value must look ----------------------------------------------------------------------

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = lazy(
    r"""(?:\[REDACTED\])+"""
    r"""|<[A-Za-z_][^<>]*>.*"""  # <YOUR_API_KEY>, <your password> (closed: <Jr3(J|1T… is a generated value)
    r"""|\$\{.*|\$\(.*|\$[A-Za-z_][A-Za-z0-9_]*"""  # ${DB_PASSWORD}, $(pass show x), $TOKEN
    r"""|%[A-Za-z_][A-Za-z0-9_]*%|%\(.*"""  # %DB_PASS%, %(pw)s
    # {{ secret }}, {% … %}, {password}, {0}, {env:VAR}, a JSON object or block's opening brace; not a
    # password in braces ({Kd8#w;Q2!}, ODBC's way)
    r"""|\{(?:\{|%|[ \t]*(?:\}|"|$)|[ \t]*[A-Za-z0-9_][\w.:\-/\[\]'" ]*\}).*"""  # (a JSON object: {"…)
    r"""|%[-+ 0#]*[0-9]*(?:\.[0-9]+)?[sdvqx]"""  # a format's %s, %v, %q
    r"""|#\{.*\}|@@[\w.\-]+@@|__[A-Z][A-Z0-9_]*__|\[\[.*\]\]|ENC\[.*\]"""  # Ruby, token files, [[ ]], sops
    r"""|(?i:null|none|nil|undefined|true|false|yes|no|on|off|~|required|optional|empty|unset"""
    r"""|hidden|masked|redacted|changeme|change[_\-]me|changeit|placeholder|dummy|example"""
    r"""|sample|todo|tbd|fixme|str|string|bytes|int|bool|secret|password|token)"""
    r"""|(?i:your|my)[_\- ].*"""  # your-api-key, YOUR_TOKEN_HERE
    r"""|(?:os\.environ|os\.getenv|process\.env|getenv)\b.*|(?i:env)[\[(.].*"""  # os.environ["PW"], ENV["PW"]
    r"""|\$ENV\{.*|\$_(?:ENV|SERVER)\[.*"""  # Perl's $ENV{PW}, PHP's $_ENV['PW']
    r"""|[xX*.#•_\-%]*"""  # "", xxxx, ****, ..., "%" of %(pw)s
    # a YAML tag that fetches it (!vault |, !Ref DbPassword, !secret db_pw), not a password that starts with "!"
    r"""|!(?:vault|Ref|Sub|GetAtt|ImportValue|FindInMap|Join|Select|Base64|If|secret|env_var|ENV|env|include)"""
    r"""(?:[ \t][^\n]*)?"""
    r"""|(?:[A-Za-z0-9]{1,10}[_\-.]){1,2}[xX*.#•]{3,}"""  # sk-xxxx, ghp_XXXX, sk-proj-****
    r"""|(?:[A-Za-z0-9]{1,10}[_\-.]){0,2}(?:[*•]{3,}|\.{3}|…)[A-Za-z0-9]{1,6}"""  # ****xeU6, sk-...abcd: the last four shown
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
    r"|발급받은|키|비밀번호|토큰|값|여기에?|입력)"
)
_PLACEHOLDER_WORDS = lazy(r"(?i:[<\[({]?[ ]?(?:" + _PLACEHOLDER_WORD + r"(?:[_\-. ]+(?=.)|[ ]?[>\])}]?$))+)")
_VALUE_PART = lazy(r"[_\-.:]+")
# A prefix, then one character repeated: AKIAXXXXXXXXXXXXXXXX, sk_live_000000000000.
_PREFIX_AND_REPEAT = lazy(r"[A-Za-z0-9]{0,8}?([xX*0#])\1{5,}")


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
    while tail > 0 and (
        len(set(parts[tail - 1])) == 1
        and len(parts[tail - 1]) >= 3
        or _PLACEHOLDER_WORDS.fullmatch(parts[tail - 1])
        or _PREFIX_AND_REPEAT.fullmatch(parts[tail - 1])
    ):
        tail -= 1
    return 0 < tail < len(parts) and all(len(part) <= 8 for part in parts[:tail])


# Code, not a value: a dotted name (settings.SECRET_KEY, getpass.getpass) or a bare identifier
# without digits (await, load_token) after "token = ".
_CODE_REF = lazy(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+[!?]?|[A-Za-z_$][A-Za-z_$]*[!?]?")
_NAME_PARTS = lazy(r"[._$!?]")


def _is_code(v: str) -> bool:
    """Whether v is a name in code (_CODE_REF): a dotted one only when it starts with an object's
    lowercase name or each of its parts is made of words (settings.SECRET_KEY, testutil.ToFloat64,
    Response.Data.AccessToken, config.db1): a password or a key with a dot in it (Kx9mQ2.vLp8Rt, a
    kubeadm token) has the shape of a dotted name, not its words."""
    if not _CODE_REF.fullmatch(v):
        return False
    if "." not in v or _OBJECT.fullmatch(v.split(".", 1)[0]):
        return True
    return all(_CAMEL_WORDS.fullmatch(part) for part in _NAME_PARTS.split(v) if part)


# What comes before the first dot of a name in code: an object's or a module's lowercase name
# (testutil.ToFloat64, http_client.DefaultTimeout).
_OBJECT = lazy(r"[a-z_]{2,}")


# Lowercase words, maybe hyphenated ("expires", "short-lived"): prose after "token:".
_WORDS = lazy(r"[A-Za-z]+(?:[\-_][A-Za-z]+)*")
# Ids that some providers use as keys (Heroku's UUIDs, 32-hex API keys): kept unless stated as
# the value of a credential.
_KEY_LIKE_ID = lazy(r"[0-9a-fA-F]{32,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_SYMBOL = lazy(r"[!@#$%^&*+/=~?|\\]")
_NOT_SECRET_SHAPE = lazy(
    r"[0-9a-fA-F]+"  # hashes, SHAs, ids
    r"|(?i:sha\d*|md5|blake2[bs]?)[:\-][A-Za-z0-9+/=]+"  # digests, integrity hashes
    r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|v?\d+(?:\.\d+)+.*"  # versions
    r"|\d+(?:ms|s|m|h|d|px|kb|mb|gb|%)?"  # numbers and durations
    r"|[a-z]+(?:_[a-z0-9]{1,15})+(?:\.[a-z]+)?"  # snake_case names, file names (not live_8f14...)
    r"|(?:\.{0,2}/|~/|[A-Za-z]:\\).*|[\w.\-]+/[\w.\-/]+\.\w+"  # paths
    r"|\w+://.*",  # URLs
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
    if len(v) < 8 or _NOT_SECRET_SHAPE.fullmatch(v) or _is_code(v):
        return False
    letters = any(c.isalpha() for c in v)
    return letters and (_has_digit(v) or (bool(_SYMBOL.search(v)) and _inner_upper(v)))


def _on_its_own_line(match: re.Match, value_end: int) -> bool:
    """`  password: value` alone on its line, as in YAML, INI or a .env file (the value ending at
    value_end)."""
    text = match.string
    head = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    end = text.find("\n", value_end)
    tail = text[value_end : len(text) if end == -1 else end]
    return _SETTING_HEAD.fullmatch(head) is not None and (not tail.strip() or tail.lstrip().startswith("#"))


# A file path: where a key lives (client_key: /etc/ssl/client.key), not the key.
_FILE_PATH = lazy(
    r"(?:~|\.{1,2})?/(?:[\w.\-]+/)*[\w\-]+\.[A-Za-z0-9]{1,5}"
    r"|(?:~|\.{1,2})/[\w.\-/]*|/(?:etc|var|run|home|usr|opt|tmp|mnt|srv|secrets?|certs?|keys?)/[\w.\-/]*"
    r"|[A-Za-z]:\\[\w.\-\\ ]*"
)


_LONG_BASE64 = lazy(r"[A-Za-z0-9+/_\-]{257,65536}={0,2}")


def _mixed(v: str) -> bool:
    """Capitals, small letters and digits, each."""
    return any(map(str.isupper, v)) and any(map(str.islower, v)) and any(map(str.isdigit, v))


def _random_value(v: str) -> bool:
    """A value that looks generated: 14+ characters without blanks, either a long hex string or a
    UUID, or letters mixed with digits (and no shape of a path, URL, version or name)."""
    if len(v) > 256:  # an encoded key or keystore (a base64 EC key is some 300 characters)
        return _LONG_BASE64.fullmatch(v) is not None and _mixed(v)
    if len(v) < 14 or _BLANK.search(v):
        return False
    if _KEY_LIKE_ID.fullmatch(v) or _ID_AND_SECRET.fullmatch(v):
        return True
    if _HEX_RUN.fullmatch(v):
        return _hex_key(v)
    if _NOT_SECRET_SHAPE.fullmatch(v) or _FILE_PATH.fullmatch(v) or ":" in v:
        return False
    if _is_code(v) and ("." in v or len(v) < 20 or _CAMEL_WORDS.fullmatch(v)):
        return False  # a name in code; 20+ letters of both cases in no words are drawn at random
    if _WORDS_AND_NUMBERS.fullmatch(v):  # new-checkout-flow-2024, release_2024_q3: a name
        return False
    letters, digits = sum(map(str.isalpha, v)), sum(map(str.isdigit, v))
    if digits < 2:  # base62 drawn at random: 14 characters hold fewer than two digits one time in three
        upper = sum(map(str.isupper, v))
        balanced = 4 * upper >= letters and 4 * (letters - upper) >= letters
        # (distinct characters: three in four up to 24 drawn, three in five beyond, as random draws give)
        varied = (4 if len(v) < 24 else 5) * len(set(v)) >= 3 * len(v) and len(set(v)) >= 11
        if not balanced:  # one case: 20+ characters this varied are not words (words repeat letters)
            return len(v) >= 20 and 10 * len(set(v.lower())) >= 7 * len(v) and v.isalnum()
        return varied and not _CAMEL_WORDS.fullmatch(v)
    return letters >= 4 and digits >= 2 and len(set(v)) >= 10


_HEX_RUN = lazy(r"[0-9a-fA-F]{20,}")
_BLANK = lazy(r"\s")
# Words written in camel case (HelloWorldFooBar, ParseHTTPResponse2): a name, not drawn at random.
# Each run is taken whole (a capitals' run ends before a capitalised word: HTTP|Response), so a
# text that is not such words fails at once rather than after trying every way to split its runs
# (ARTIFACTORYREFERENCETOKEN_INACTIVE took seconds).
_CAMEL_WORDS = lazy(r"(?:[A-Z]?[a-z]{2,}(?![a-z])|[A-Z]+(?=[A-Z][a-z]|[^A-Za-z]|$)|[0-9]+(?![0-9]))+")
# Parts of only letters or only digits, joined by - _ or .: a name someone chose, not generated.
_WORDS_AND_NUMBERS = lazy(r"(?:[A-Za-z]+|[0-9]+)(?:[\-_.](?:[A-Za-z]+|[0-9]+))+")
# An id and a secret joined by a colon, as some services hand out (8f14e45f:3c59dc04).
_ID_AND_SECRET = lazy(r"(?=[^:]*[0-9][^:]*:)[A-Za-z0-9]{8,64}:[A-Za-z0-9]{8,64}")
_NAME_TAIL = lazy(r"[\w.\-]{0,60}$")
_NAME_WORD = lazy(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")


def _ordinary_key(text: str, end: int) -> bool:
    """Whether the name ending at `end` (..._key, ...Key) names an ordinary key: cache_key,
    primaryKey, PUBLIC_KEY (see _ORDINARY_KEY)."""
    tail = _NAME_TAIL.search(text, max(0, end - 60), end)  # always found: it may be empty
    words = [w.lower() for w in _NAME_WORD.findall(tail.group(0) if tail else "")]
    return len(words) < 2 or words[-2] in _ORDINARY_KEY


def _generic_key_value(text: str, key_end: int, value: str) -> bool:
    """The value after a name that only ends in "key": random-looking, and the name not ordinary."""
    return _random_value(value) and not _ordinary_key(text, key_end) and not _is_placeholder(value)


# A YAML block scalar's indicator (`token: |`): the value is on the next lines.
_BLOCK_INDICATOR = lazy(r"[|>][+\-]?[0-9]?")

# Separators that compare rather than assign (`if (api_key == "...")`): only a quoted value counts.
_COMPARISON = frozenset(("==", "===", "!=", "!=="))
_WORD_SEPARATORS = frozenset(("to", "|", "에"))


def _not_a_credential_name(text: str, keyword_start: int) -> bool:
    """Whether the word right before a credential keyword makes it something else (NextToken,
    next_page_token). Not in capitals: an environment variable's name (FB_PAGE_TOKEN) is a setting."""
    before = _WORD_BEFORE.search(text, max(0, keyword_start - 24), keyword_start)
    return before is not None and not before.group(1).isupper() and before.group(1).lower() in _NOT_A_CREDENTIAL


_HEADER_KEY = lazy(r"(?i:x-(?:[a-z0-9]+-)*?([a-z0-9]+)-key)")
_GPG_KEY = lazy(r"(?:0x)?(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{16}|[0-9A-Fa-f]{40})|key::.*|.*\.pub")


def _signing_key_id(match: re.Match, value: str) -> bool:
    """git's user.signingkey: a GPG key's id or fingerprint, or an SSH public key, never a secret."""
    return "signingkey" in match.group(0).lower() and _GPG_KEY.fullmatch(value) is not None


def _assignment(match: re.Match, value: str) -> bool:
    """Whether the value of `key = value`, `key: value`, `"key": "value"` is a secret."""
    if _FILE_PATH.fullmatch(value) or _BLOCK_INDICATOR.fullmatch(value):
        return False
    if _not_a_credential_name(match.string, match.start()) or _signing_key_id(match, value):
        return False
    if match.string.startswith("PAT", match.start()):  # GH_PAT: generated; URL_PAT = "…": a pattern
        return _random_value(value)
    header = _HEADER_KEY.match(match.string, match.start())  # X-Idempotency-Key, X-Cache-Key: ordinary
    if header is not None and header.group(1).lower() in _ORDINARY_KEY:
        return False
    # (where the value ends: a bare one may be shorter than its group, line_value_end)
    value_end = match.end() if match.group("bare") is None else match.start("bare") + len(value)
    if match.group("bare") is not None and match.string[value_end : value_end + 1] == "(":
        return False  # password=getpass.getpass(): a call that asks for it
    suffix = match.group("suffix")
    if suffix is not None and _STRICT_NAME.search(match.string, match.start(), match.end("suffix")):
        suffix = None  # the suffix completes a key name itself: SECRET + _KEY
    elif suffix is not None and suffix.lower().endswith("key"):  # SECRET_FOO_KEY: any name ending in key
        return _generic_key_value(match.string, match.end("suffix"), value)
    if suffix is not None:  # DB_PASSWORD_PROD, API_KEY_STAGING: a generated-looking value, not API_KEY_ID
        words = {w.lower() for w in re.split(r"[_\-]", suffix) if w}
        if words & NOT_SECRET_SUFFIX or _is_placeholder(value):
            return False
        if match.group("gkey") is not None:
            return not _ordinary_key(match.string, match.end("gkey")) and _random_value(value)
        return _random_value(value) or (_looks_like_secret(value) and not _is_code(value))
    if match.group("gkey") is not None:
        return _generic_key_value(match.string, match.end("gkey"), value)
    sep = match.group("sep")
    if sep in _COMPARISON and match.group("bare") is not None:
        return False
    if sep in _WORD_SEPARATORS:  # "set API_TOKEN to ...", "| API_TOKEN | ... |": it must look like one
        return _looks_like_secret(value) and not _is_code(value)
    if match.group("bare") is None:  # quoted: a value was meant
        return not _is_code(value) or _has_digit(value) or len(value) >= 8
    sep, spaced = match.group("sep"), bool(match.group("pre") or match.group("post"))
    if sep != ":" and not spaced:  # PASSWORD=..., --password=...: env and flag style
        return True
    if _is_code(value) or _WORDS.fullmatch(value):
        # `token = await`, `password: str`, `token: expires` - code or prose, unless a YAML line
        return sep == ":" and _on_its_own_line(match, value_end) and len(value) >= 6
    return _looks_like_secret(value) or _on_its_own_line(match, value_end)


_AUTH_SCHEME = lazy(r"(?i:bearer|basic|token|digest|bot|apikey|sso-key|key|ssws|kakaoak|oauth)")


def _authorization(match: re.Match, value: str) -> bool:
    """`Authorization: <scheme> <value>`: any value after a known scheme; after another word
    (KakaoAK, GenieKey, DeepL-Auth-Key, ...) a value that looks like a secret, 8+ characters."""
    return bool(_AUTH_SCHEME.fullmatch(match.group("scheme"))) or (
        len(value) >= 8 and _looks_like_secret(value) and not _is_code(value)
    )


_COOKIE_LINE = lazy(r"(?i:cookie)[\"']?[ \t]*:")


def _cookie_value(match: re.Match, value: str) -> bool:
    """A session cookie's value, on a line that a Cookie or Set-Cookie header starts."""
    text = match.string
    line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    return bool(_COOKIE_LINE.search(line)) and _random_value(value)


_STRICT_NAME = lazy(r"(?:" + _SECRET_KEYWORD + r")$")


def _named_value(match: re.Match, value: str) -> bool:
    """The value of a setting named apart from it: `- name: API_TOKEN` / `value: ...`,
    `<add key="ApiToken" value="..."/>`, `setProperty("API_TOKEN", "...")`. After a name that only
    ends in "key" the value must look random (as for keyword_assignment)."""
    name = match.group("name") or match.group("cname")
    if not _STRICT_NAME.search(name):
        end = match.end("name") if match.group("name") else match.end("cname")
        return _generic_key_value(match.string, end, value)
    if _FILE_PATH.fullmatch(value) or _is_code(value) and not _has_digit(value):
        return False
    return match.group("bare") is None or _looks_like_secret(value)


# How a credential is kept, not the credential: Base64-encoded, HS256-signed, UTF8-kodiert.
_HOW_IT_IS_KEPT = lazy(
    r"[\w.+]{2,24}-(?i:encoded|decoded|signed|hashed|encrypted|salted|based|protected|wrapped|escaped|quoted"
    r"|kodiert|verschlüsselt|signiert|codé|chiffré|signé|codificad[ao]|cifrad[ao]|firmad[ao])[.,;:!?]?"
)


def _value_then_name(match: re.Match, value: str) -> bool:
    """A value before its name ("stored ... as DATADOG_API_KEY"): it must look generated."""
    if _is_placeholder(value) or _HOW_IT_IS_KEPT.fullmatch(value):
        return False
    if match.group("gkey") is not None:
        return not _ordinary_key(match.string, match.end("gkey")) and _random_value(value)
    return _random_value(value) or _strongly_secret(value)


def _spaced_value(match: re.Match, value: str) -> bool:
    """A value after a name and a blank (ENV API_TOKEN ..., set -x API_TOKEN ...) or before a
    comparison with a name (`"..." == password`): it must look like a secret."""
    if "gkey" in match.re.groupindex and match.group("gkey") is not None:
        return _generic_key_value(match.string, match.end("gkey"), value)
    return _looks_like_secret(value) and not _is_code(value)


_SECRET_NAME = lazy(r"(?:[A-Za-z0-9]+[_\-])*?(?:" + _SECRET_KEYWORD + r")")  # API_KEY, POSTGRES_PASSWORD


def _variable_default(match: re.Match, value: str) -> bool:
    """A default of redaction/rules.py variable_default: not a word and not a path, under a name
    that ends in a secret's keyword (POSTGRES_PASSWORD, not TOKEN_FILE or SIGNING_KEY_ID)."""
    return (
        _SECRET_NAME.fullmatch(match.group("name")) is not None
        and _looks_like_secret(value)
        and not _FILE_PATH.fullmatch(value)
    )


def _hex_key(v: str) -> bool:
    """20-31 hex digits with letters and digits: a key of some services (30 for Plaid), not a number."""
    return bool(_HEX_RUN.fullmatch(v)) and sum(map(str.isdigit, v)) >= 2 and sum(map(str.isalpha, v)) >= 2


# Hosts reserved for documentation and tests (RFC 2606, RFC 6761) and the local machine.
_EXAMPLE_HOST = lazy(
    r"(?i:(?:[\w\-]+\.)*(?:example\.(?:com|org|net)|example|test|invalid|localhost)"
    r"|localhost|127\.0\.0\.1|0\.0\.0\.0|\[?::1\]?)(?::\d+)?"
)
_PLAIN_WORD = lazy(r"[a-z]+")
# A port and a path, not a password: "https://host:8080/a@b" has no credentials.
_PORT_AND_PATH = lazy(r"\d{1,5}(?:/.*)?", re.DOTALL)


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
