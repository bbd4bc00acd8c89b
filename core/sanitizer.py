"""Credential redaction: every secret in a text becomes "[REDACTED]" before the text is stored.

The memory file is tracked by git, and a key pushed to git cannot be recalled, so each rule below
errs towards redacting. `redact` runs the rules of `RULES` in order over the text; a rule either
replaces its whole match or only the part of it that holds the value (the keyword, the URL's user
and host are kept). A value that is plainly a placeholder (`<YOUR_KEY>`, `${VAR}`, `null`, `xxxx`,
an earlier `[REDACTED]`) is left alone, so redacting twice changes nothing.

`strict_only=True` applies only the rules marked strict: provider formats with a fixed prefix and
shape, JWTs and PEM private-key blocks, which have essentially no false positives. It is meant for
short fields such as a topic, where a keyword rule could mangle ordinary words.

No pattern can backtrack catastrophically: each starts at a fixed literal or a bounded prefix,
and no two quantified parts can share the same characters, so a hostile 1 KiB input is redacted
in about a millisecond (tests/test_sanitizer.py keeps a list of such inputs).
"""

import re
from typing import NamedTuple

REDACTED = "[REDACTED]"


class Rule(NamedTuple):
    name: str
    pattern: re.Pattern
    strict: bool  # applied even with strict_only=True
    groups: tuple[str, ...] = ()  # the first of these that matched is replaced; () = whole match


# A token must not start in the middle of a longer word ("task-..." is not an "sk-..." key).
_START = r"(?<![A-Za-z0-9])"

# `key = value`, `key: value`, `"key": "value"`, `key => value`, `key := value`.
_SEPARATOR = r"""["']?[ \t]*(?::=|=>|[:=])[ \t]*"""

# A value: double-quoted, single-quoted, or bare up to whitespace or a delimiter. Hangul is not
# part of a bare value, so Korean prose after a colon is never taken for a secret.
_VALUE = r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`,;&\uac00-\ud7a3]+))"""
_VALUE_GROUPS = ("dq", "sq", "bare")

# The end of a key name that means its value is a secret (DB_PASSWORD, apiKey, client_secret...).
_SECRET_KEYWORD = (
    r"(?i:pass(?:word|wd|phrase)|pwd|secret|token|api[_\-]?key"
    r"|(?:private|secret|access|signing|encryption|master)[_\-]?key)"
    r"|비밀번호|패스워드|토큰"
)

RULES: tuple[Rule, ...] = (
    # PEM blocks first: their base64 body must be gone before the token rules look at it.
    # An unterminated block is redacted to the end of the text.
    Rule("pem_private_key", re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)", re.DOTALL), True),
    Rule("aws_access_key_id", re.compile(
        _START + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"), True),
    # 40 base64 characters right after an "aws secret" keyword. Forty lowercase hex digits
    # (a git SHA) are never taken for one.
    Rule("aws_secret_access_key", re.compile(
        r"(?i:aws[_\-. ]?secret(?:[_\-. ]?access)?(?:[_\-. ]?key)?|secret[_\-. ]?access[_\-. ]?key)"
        + _SEPARATOR + r"""["']?"""
        r"(?P<value>(?![0-9a-f]{40}(?![A-Za-z0-9/+]))[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"),
        True, ("value",)),
    Rule("github_token", re.compile(
        _START + r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"), True),
    Rule("gitlab_token", re.compile(
        _START + r"gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_\-]{20,}"), True),
    Rule("slack_token", re.compile(
        _START + r"(?:xox[abprs]|xapp)-[A-Za-z0-9\-]{10,}"), True),
    Rule("slack_webhook", re.compile(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"(?P<value>[A-Za-z0-9_\-]+/[A-Za-z0-9_/\-]{8,})"), True, ("value",)),
    Rule("stripe_key", re.compile(
        _START + r"(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,})"), True),
    # Anthropic before OpenAI: both start with "sk-".
    Rule("anthropic_key", re.compile(_START + r"sk-ant-[A-Za-z0-9_\-]{20,}"), True),
    Rule("openai_key", re.compile(
        _START + r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20,})"), True),
    Rule("google_api_key", re.compile(_START + r"AIza[A-Za-z0-9_\-]{35}"), True),
    Rule("google_oauth_client_secret", re.compile(_START + r"GOCSPX-[A-Za-z0-9_\-]{20,}"), True),
    Rule("npm_token", re.compile(_START + r"npm_[A-Za-z0-9]{36,}"), True),
    Rule("pypi_token", re.compile(_START + r"pypi-AgE[A-Za-z0-9_\-]{50,}"), True),
    Rule("huggingface_token", re.compile(_START + r"hf_[A-Za-z0-9]{34,}"), True),
    Rule("sendgrid_key", re.compile(
        _START + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"), True),
    # header.payload.signature, base64url; the header is JSON, so it starts with "eyJ".
    Rule("jwt", re.compile(
        r"(?<![A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"), True),
    # scheme://user:password@host -> only the password goes. The password runs to the last "@"
    # before the path, so an unescaped "@" inside it is covered too.
    Rule("url_password", re.compile(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^\s:/@?#]*:"
        r"(?P<value>[^\s/?#]+)@"), False, ("value",)),
    Rule("authorization_header", re.compile(
        r"(?i:\bauthorization)" + _SEPARATOR + r"""["']?"""
        r"(?i:bearer|basic|token|digest|bot)[ \t]+(?P<value>[A-Za-z0-9._~+/\-]+=*)"),
        False, ("value",)),
    # "Bearer <token>" without the header name: the token must be long and contain a digit,
    # so that "bearer authentication" stays.
    Rule("bearer_token", re.compile(
        r"(?i:\bbearer)[ \t]+(?=[A-Za-z._~+/\-]*[0-9])(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
        False, ("value",)),
    # --password hunter2, --api-key abc (the "--password=..." form is a keyword assignment).
    Rule("cli_flag", re.compile(
        r"(?<![\w\-])--(?i:(?:[a-z0-9]+-){0,3}(?:password|passwd|token|secret|api-key|apikey))"
        r"""[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""),
        False, _VALUE_GROUPS),
    # password=..., DB_PASSWORD: ..., "apiKey": "...", client_secret = '...': the key name must
    # end in a secret keyword right before the separator ("tokens: 5" and "secretary:" stay).
    # Whatever precedes the keyword (DB_, db, client_) is not part of the match.
    Rule("keyword_assignment", re.compile(
        r"(?:" + _SECRET_KEYWORD + r")" + _SEPARATOR + _VALUE), False, _VALUE_GROUPS),
)

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = re.compile(
    r"""(?:\[REDACTED\])+"""
    r"""|<[A-Za-z_].*"""                                # <YOUR_API_KEY>, <your password>
    r"""|\$\{.*|\$\(.*|\$[A-Z_][A-Z0-9_]*"""            # ${DB_PASSWORD}, $(pass show x), $TOKEN
    r"""|%[A-Za-z_(].*|\{.*"""                          # %DB_PASS%, %(pw)s, {{ secret }}
    r"""|(?i:null|none|nil|undefined|true|false|~)"""
    r"""|(?i:your|my)[_\- ].*"""                        # your-api-key, YOUR_TOKEN_HERE
    r"""|(?:os\.environ|os\.getenv|process\.env|getenv)\b.*|env[\[(.].*"""  # os.environ["PW"]
    r"""|[xX*.#•_\-]*"""                                # "", xxxx, ****, ...
    r"""|(?:[A-Za-z0-9]{1,10}[_\-]){1,2}[xX*.#•]{3,}""",  # sk-xxxx, ghp_XXXX, sk-proj-****
    re.DOTALL,
)


_MAX_PASSES = 8  # a bound that is never reached, so that no input can keep the loop going


def redact(text: str, *, strict_only: bool = False) -> tuple[str, int]:
    """Return (text with each credential replaced by [REDACTED], number of values replaced)."""
    count = 0

    def replace(match: re.Match) -> str:  # `rule` is the rule being applied in the loop below
        nonlocal count
        group = next((g for g in rule.groups if match.group(g) is not None), 0)
        if _PLACEHOLDER.fullmatch(match.group(group)):
            return match.group(0)
        count += 1
        start, end = match.span(group)
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + REDACTED + whole[end - offset :]

    # A key glued to the end of another ("...AIza...AKIA...") only shows its start once the first
    # one is gone, so passes repeat until one replaces nothing; in practice the second pass does.
    for _ in range(_MAX_PASSES):
        before = count
        for rule in RULES:
            if rule.strict or not strict_only:
                text = rule.pattern.sub(replace, text)
        if count == before:
            break
    return text, count
