"""The redaction rules, in the order redaction/engine.py applies them: the strict ones (PEM blocks
and provider formats, redaction/formats.py), then the rules that judge a value by its context and its
looks (redaction/values.py, redaction/gates.py; those of command lines in redaction/commands.py),
which strict_only=True skips."""

from __future__ import annotations

from ..lazy import lazy
from .commands import COMMAND_RULES
from .formats import FORMAT_RULES, Rule
from .gates import (
    _PROSE_GATE,
    _assignment_gate,
    _login_pair_gate,
    _named_value_gate,
    _value_then_name_gate,
    _words,
)
from .prose import _key_in_prose, _prose_value
from .values import (
    _BARE,
    _CJK,
    _GENERIC_KEY,
    _HANGUL,
    _LINE_VALUE,
    _PROSE_KEYWORD,
    _SECRET_KEYWORD,
    _VALUE,
    _VALUE_GROUPS_BQ,
    _assignment,
    _authorization,
    _cookie_value,
    _is_placeholder,
    _looks_like_secret,
    _named_value,
    _random_value,
    _signing_key_id,
    _spaced_value,
    _url_password,
    _value_then_name,
    _variable_default,
)

# Twilio's ids of a call, a message, a service…: two capitals and 32 hex digits.
_TWILIO_SID = lazy(r"[A-Z]{2}[0-9a-f]{32}")
# The rules that judge by context, so strict_only=True skips them.
CONTEXT_RULES: tuple[Rule, ...] = (
    # scheme://user:password@host -> only the password goes. The password runs to the last "@"
    # that is followed by a host (a name, then "/", "?", "#", whitespace or the end), so an
    # unescaped "@", "#", "?", "/", "+" or "=" inside it is covered too (base64 passwords).
    Rule(
        name="url_password",
        pattern=lazy(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://(?P<user>[^\s:/@?#]*):"
            r"(?P<value>[^\s]{1,256}?)@(?=(?P<host>[^\s/@?#]*)(?:[/?#\s\"'`<>)\]]|$))"
        ),
        strict=False,
        groups=("value",),
        accept=_url_password,
        needles=("://",),
    ),
    # A token as the URL's user, without a password or with one that only fills the place:
    # https://<token>@github.com/org/repo.git, https://<token>:x-oauth-basic@github.com/...,
    # https://<key>:@api.example.io. A Sentry DSN's key stays: it is public by design.
    Rule(
        name="url_token_user",
        pattern=lazy(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}://(?P<value>[A-Za-z0-9_\-]{20,200})(?::[^\s:/@?#]{0,40})?"
            r"@(?P<host>[A-Za-z0-9.\-]+)"
        ),
        strict=False,
        groups=("value",),
        accept=lambda m, v: _random_value(v) and "sentry" not in m.group("host").lower(),
        needles=("://",),
    ),
    # Go's MySQL DSN, which has no scheme: user:password@tcp(host:3306)/db, user:password@unix(...)
    # and, quoted, "user:password@/db" (a password without ":", "=" or "@", so that each character
    # is read once).
    Rule(
        name="go_mysql_dsn",
        pattern=lazy(
            r"""(?<![^\s"'`=(,])[\w.\-]{1,64}:(?P<value>[^\s"'`:=@]{1,128})@(?:tcp6?|unix|udp)\("""
            r"""|(?<=["'`])[\w.\-]{1,64}:(?P<quoted>[^\s"'`:=@]{1,128})@/(?=[\w"'`?])"""
        ),
        strict=False,
        groups=("value", "quoted"),
        accept=lambda m, v: m.group("quoted") is None or _looks_like_secret(v),  # not "git:main@/repo"
        needles=("@tcp(", "@unix(", "@tcp6(", "@udp(", "@/"),
    ),
    # A shell or compose default: ${POSTGRES_PASSWORD:-S3cret}, ${API_KEY:=...}. The whole is not
    # a placeholder: the default is what runs when the variable is unset. It goes when the name
    # says it is a secret and it is not a word, or when it looks generated.
    Rule(
        name="variable_default",
        pattern=lazy(r"""\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]{0,100}):?[-=](?P<value>[^\s}"'`$]{1,256})\}"""),
        strict=False,
        groups=("value",),
        accept=_variable_default,
        needles=(":-", ":=", "${"),
    ),
    # A key given as the argument after its account's id: Twilio's Client("AC…", "<auth token>")
    # (the id is redacted first, so "[REDACTED]" stands before it on the next pass) and Algolia's
    # algoliasearch("APPID", "<admin key>").
    Rule(
        name="second_argument_secret",
        pattern=lazy(
            r"""(?:AC[0-9a-f]{32}|\[REDACTED\]|(?i:algoliasearch|searchclient)(?:\.create)?\([ \t]*["'][A-Z0-9]{10})"""
            r"""["'][ \t]*,[ \t]*["'](?P<value>[A-Za-z0-9]{32,64})["']"""
        ),
        strict=False,
        groups=("value",),
        accept=lambda m, v: _random_value(v) and not _TWILIO_SID.fullmatch(v),  # a call's CA… id stays
        needles=("AC", "[REDACTED]", "lgoliasearch", "earchClient", "earchclient"),
    ),
    # An Ethereum account's private key given to the call that makes the account: ethers'
    # new Wallet("0x…"), web3's privateKeyToAccount("0x…"), eth_account's Account.from_key("0x…").
    Rule(
        name="wallet_private_key",
        pattern=lazy(
            r"""(?:Wallet|privateKeyToAccount|fromPrivateKey|from_key)\([ \t]*["'](?P<value>(?:0x)?[0-9a-fA-F]{64})["']"""
        ),
        strict=False,
        groups=("value",),
        needles=("Wallet(", "privateKeyToAccount(", "fromPrivateKey(", "from_key("),
    ),
    # A JSON Web Key's private members (RFC 7518): "d" of an EC or RSA key, "p", "q", "dp", "dq",
    # "qi" of an RSA key, "k" of a symmetric one, in an object that names its "kty".
    Rule(
        name="jwk_private",
        pattern=lazy(r""""(?:d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*"(?P<value>[A-Za-z0-9_\-]{16,})\""""),
        strict=False,
        groups=("value",),
        accept=lambda m, v: '"kty"' in m.string,
        needles=('"kty"',),
    ),
    # Credentials that are not a URL's: Oracle's user/password@host (jdbc:oracle:thin:, sqlplus with
    # its flags, CONNECT, rman target, sqlldr/expdp/impdp userid=; the @host may be left out) and a
    # .pgpass line (host:port:database:user:password).
    Rule(
        name="login_pair",
        pattern=lazy(
            r"(?:(?i:jdbc:oracle:thin:|sqlplus(?:[ \t]+-[A-Za-z]{1,10})*[ \t]+|connect[ \t]+|rman[ \t]+(?:target|catalog)[ \t]+"
            r"|(?:sqlldr|expdp|impdp|exp|imp)[ \t]+(?:userid=)?)[\w$#]{1,30}/(?P<value>[^\s@/\"']{1,128})(?:@|(?=[ \t]|$))"
            r"|(?<![^\s'\"])(?:\*|(?=[\w.\-]*[A-Za-z.])[\w.\-]{1,253}):(?:\*|[0-9]{2,5}):[\w*\-]{1,63}:[\w*.@\-]{1,63}:"
            r"(?P<pgpass>[^\s:'\"]{1,128})(?![^\s'\"]))"
        ),
        strict=False,
        groups=("value", "pgpass"),
        accept=lambda m, v: not _is_placeholder(v) and (m.group("pgpass") is None or _looks_like_secret(v)),
        gate=_login_pair_gate,
    ),
    # The same URL percent-encoded, as in a redirect or a query parameter:
    # https%3A%2F%2Fuser%3Apassword%40host (or with a plain "@"); twice-encoded (%253A) too.
    Rule(
        name="url_password_encoded",
        pattern=lazy(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}(?i:%(?:25)?3A%(?:25)?2F%(?:25)?2F)"
            r"(?P<user>[A-Za-z0-9._~\-]*)(?i:%(?:25)?3A)"
            r"(?P<value>[^\s@&%]{0,256}(?:%(?!(?:25)?40)[0-9A-Fa-f]{2}[^\s@&%]{0,256}){0,32})"
            r"(?:@|(?i:%(?:25)?40))(?P<host>[A-Za-z0-9.\-]*)"
        ),
        strict=False,
        groups=("value",),
        accept=_url_password,
        needles=("%2",),
    ),
    Rule(
        name="authorization_header",
        pattern=lazy(
            r"(?i:\b(?:proxy-)?authorization)" + r"""["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?"""
            r"(?P<scheme>[A-Za-z][A-Za-z0-9_\-]{1,30})[ \t]+(?P<value>[A-Za-z0-9._~+/:\-]+=*)"
        ),
        strict=False,
        groups=("value",),
        accept=_authorization,
        gate=_words("authorization"),
    ),
    # Cookie: theme=dark; sessionid=…, Set-Cookie: __Host-session=…; Path=/: the value of a cookie
    # whose name says it holds a session or a credential, on a Cookie or Set-Cookie line.
    Rule(
        name="session_cookie",
        pattern=lazy(
            r"(?<![\w.\-])[\w.\-]{0,40}?(?i:sess|sid|auth|token|jwt|remember)[\w.\-]{0,40}="
            r"""(?P<bare>[^;\s,"'`]{16,4096})"""  # (as a bare value: a sentence's full stop after it stays)
        ),
        strict=False,
        groups=("bare",),
        accept=_cookie_value,
        gate=_words("cookie"),
    ),
    # "Bearer <token>" without the header name: the token must be long and contain a digit,
    # so that "bearer authentication" stays.
    Rule(
        name="bearer_token",
        pattern=lazy(r"(?i:\bbearer)[ \t]+(?=[A-Za-z._~+/\-]*[0-9])(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
        strict=False,
        groups=("value",),
        gate=_words("bearer"),
    ),
    *COMMAND_RULES,  # the passwords in their place on command lines and devices' settings (redaction/commands.py)
    # <password>...</password>, <datadogApiToken>...</...>, the value alone on its own lines too;
    # after a tag that only ends in "key" (<DATADOG_KEY>) the value must look random.
    Rule(
        name="xml_secret_element",
        pattern=lazy(
            r"<(?:[A-Za-z][\w.\-]{0,60}?)?(?:"
            + _SECRET_KEYWORD
            + r"|(?P<gkey>"
            + _GENERIC_KEY
            + r"))>[ \t\r\n]{0,80}(?P<value>[^<\s]{1,512})[ \t\r\n]{0,80}</"
        ),
        strict=False,
        groups=("value",),
        accept=lambda m, v: m.group("gkey") is None or _spaced_value(m, v),
        needles=("</",),
    ),
    # password=..., DB_PASSWORD: ..., "apiKey": "...", client_secret = '...': the key name must
    # end in a secret keyword right before the separator ("tokens: 5" and "secretary:" stay).
    # Whatever precedes the keyword (DB_, db, client_) is not part of the match.
    # The separators are those of env files, YAML, JSON, code and Makefiles (=, :, :=, ::=, ?=,
    # .=, +=, ||=, ??=, =>; in Korean "값이", "the value is", and "에", "into"), and comparisons with a quoted
    # value (`if (api_key == "...")`). A
    # type may sit between the name and the separator (`var api_key string = "..."`, `secret[] =`).
    Rule(
        name="keyword_assignment",
        pattern=lazy(
            r"(?:" + _SECRET_KEYWORD + r"|(?P<gkey>" + _GENERIC_KEY + r"))(?P<suffix>(?:[_\-][A-Za-z0-9]{1,12}){1,2})?"
            r"(?:\[[0-9]{0,4}\]|[ \t]*:[ \t]*(?:String|string|str)(?=[ \t]*=)|[ \t]+(?:string|String)(?=[ \t]*=))?"
            r"""\\?["'`]?\]?\**(?P<pre>[ \t]*)(?P<sep>:{1,3}=|\?\?=|\|\|=|[?.+]=|=>|<-|->|:(?!//)|[!=]==?|=(?!=)|값(?:이|은|는)?(?=[ \t])|값[ \t]*:(?=[ \t])|(?<=[ \t])(?:에|to|\|)(?=[ \t]))"""
            r"(?P<post>[ \t]*(?:[|>][+\-]?[ \t]*\r?\n[ \t]+)?)" + _LINE_VALUE
        ),
        strict=False,
        groups=_VALUE_GROUPS_BQ,
        accept=_assignment,
        gate=_assignment_gate,
    ),
    # A setting named apart from its value: `- name: API_TOKEN` then `value: ...` (Kubernetes,
    # JSON), `<add key="ApiToken" value="..."/>` (.NET), setProperty("API_TOKEN", "..."),
    # put('apiKey', '...'), setenv("API_TOKEN", "...").
    Rule(
        name="named_value",
        pattern=lazy(
            r"""(?:(?i:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<name>[\w.\-]{0,60}?(?:"""
            + _SECRET_KEYWORD
            + "|"
            + _GENERIC_KEY
            + r"""))["']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*-?[ \t]*)?["']?(?i:value)["']?[ \t]*[:=][ \t]*"""
            r"""|\([ \t]*["'](?P<cname>[\w.\-]{0,60}?(?:"""
            + _SECRET_KEYWORD
            + "|"
            + _GENERIC_KEY
            + r"""))["'][ \t]*,[ \t]*(?=@?["']))"""
            + _VALUE
        ),
        strict=False,
        groups=_VALUE_GROUPS_BQ,
        accept=_named_value,
        gate=_named_value_gate,
    ),
    # A value written before its name: "stored 3f9a... as DATADOG_API_KEY", "... 를 PLAID_KEY 에".
    # It starts after a blank, a quote or a bracket and cannot run over one, so each character is
    # read by one attempt at most.
    Rule(
        name="value_then_name",
        pattern=lazy(
            r"""(?<![^\s"'`(])(?P<bare>[^\s"'`()]{8,200})["'`]?(?:[ \t]+(?i:into|as|in|to)|[ \t]*(?:를|을))"""
            r"""[ \t]+(?:(?i:the)[ \t]+)?[`"']?(?=[A-Za-z_$])[\w.\-$]{0,60}?(?:"""
            + _SECRET_KEYWORD
            + "|(?P<gkey>"
            + _GENERIC_KEY
            + r"))(?![\w])"
        ),
        strict=False,
        groups=("bare",),
        accept=_value_then_name,
        gate=_value_then_name_gate,
    ),
    # `if ("..." == password)`: the value before the name.
    Rule(
        name="reversed_comparison",
        pattern=lazy(
            r"""(?P<quote>["'])(?P<pq>[^"'\n]{8,200})(?P=quote)[ \t]*[!=]==?[ \t]*[\w.$]{0,40}?(?:"""
            + _SECRET_KEYWORD
            + r")(?![\w])"
        ),
        strict=False,
        groups=("pq",),
        accept=_spaced_value,
        needles=("==", "!="),
    ),
    # Dockerfile ENV and shell `set` forms, whose separator is a blank: ENV API_TOKEN abc123...
    Rule(
        name="shell_setting",
        pattern=lazy(
            r"(?<![\w\-])(?:ENV|setx|setenv|set(?:[ \t]+-[A-Za-z]{1,3})?|config(?:[ \t]+--?[a-z\-]{1,20}){0,2})"
            r"[ \t]+[\w.\-/:@]{0,100}?(?:"
            + _SECRET_KEYWORD
            + "|(?P<gkey>"
            + _GENERIC_KEY
            + r"))[ \t]+(?P<bare>"
            + _BARE
            + ")"
        ),
        strict=False,
        groups=("bare",),
        accept=lambda m, v: _spaced_value(m, v) and not _signing_key_id(m, v),
        needles=("ENV ", "ENV\t", "set ", "set\t", "setx", "setenv", "config "),
    ),
    # "twitch key - '...'": a bare "key" names a value only before a dash and a quoted value.
    Rule(
        name="key_dash_value",
        pattern=lazy(
            r"""(?P<kw>(?<![A-Za-z])(?i:key))(?P<verb>[ \t]+-)[ \t]+(?P<quote>["'`])(?P<pq>[^"'`\n]{8,200})(?P=quote)"""
        ),
        strict=False,
        groups=("pq",),
        accept=_prose_value,
        needles=(" - '", ' - "', " - `"),
    ),
    # "the Datadog key is 3f9a...", "signing key: ...": a bare "key" with a verb; the word before
    # it must not name an ordinary key (cache, primary, public, ...).
    Rule(
        name="key_in_prose",
        pattern=lazy(
            r"(?P<kw>[kK](?<![\w.\-][kK])(?:ey|EY))[*_`]{0,2}"
            r"(?P<verb>(?:[ \t]+(?i:for|of|on)(?:[ \t]+[\w.@\-]{1,40}){1,3}?)?"
            r"(?:(?:[ \t]+(?i:is|was|has been|had been))?[ \t]+(?i:set|reset|changed|updated|rotated)[ \t]+to"
            r"|[ \t]+(?i:is|was|now|to)|['’]s|(?:[ \t]+\([A-Za-z]{2,12}\))?[ \t]*(?:[:=]|->|→|=>)[*_]{0,2}))?[ \t]+"
            r"""(?:(?P<quote>["'`])(?P<pq>[^"'`\n]{8,200})(?P=quote)"""
            r"""|(?P<bare>[^\s"'`,;<>(){}\[\]""" + _HANGUL + r"""]{8,}))"""
        ),
        strict=False,
        groups=("pq", "bare"),
        accept=_key_in_prose,
        needles=("key", "Key", "KEY"),
    ),
    # "the staging password is Tr0ub4dor&3", "비밀번호는 ...": a value named in a sentence must
    # look strongly like a secret (letters with digits or symbols, 8+ chars, not an id or hash).
    Rule(
        name="keyword_in_prose",
        pattern=lazy(
            r"(?P<kw>" + _PROSE_KEYWORD + r")[*_`]{0,2}(?:[ \t]+(?i:value)|[ ]?값)?"
            r"(?:(?P<verb>(?:[ \t]+(?i:for|of|on|für|fuer|von|pour|de|du|para|del|dla|för|voor|van|от|для)"
            r"(?:[ \t]+[\w.@\-]{1,40}){1,3}?)?"  # "the password for the db is", "Passwort für den Server ist"
            r"(?:(?:[ \t]+(?i:is|was|has been|had been))?[ \t]+(?i:set|reset|changed|updated|rotated)[ \t]+to"
            r"|[ \t]+(?i:is|was|are|were|becomes|now|to|ist|lautet|est|es|é|è|är|jest|это)|['’]s"
            # a verb (토큰 재발급:, 토큰 알려드립니다:, 비번 바꿨어요:), not a noun (토큰 이름:)
            r"|(?:[ \t]+\([A-Za-z]{2,12}\)|[ ]?(?:재발급|발급|갱신|변경|교체|생성)"
            r"|[ ]?[\uac00-\ud7a3]{0,8}(?:니다|어요|아요|해요|했음|했다|함|됨|임|다))?[ \t]*(?:[:=：]|->|→|=>)[*_]{0,2})"
            r"|[ \t]+[-—–](?=[ \t])|는|은|は|(?:是|为|為)[：:]?)|이|가|을|를)?(?:[ \t]+|(?<=[：是为為は])(?=[A-Za-z0-9]))"
            r"""(?:(?P<quote>["'`])(?P<pq>[^"'`\n]{8,200})(?P=quote)"""
            r"""|(?P<bare>[^\s"'`,;<>(){}\[\]""" + _HANGUL + _CJK + r"""]{8,}))"""
        ),
        strict=False,
        groups=("pq", "bare"),
        accept=_prose_value,
        gate=_PROSE_GATE,
    ),
)

RULES: tuple[Rule, ...] = FORMAT_RULES + CONTEXT_RULES
