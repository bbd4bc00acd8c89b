"""The rules that read a command line or a tool's own setting: a password or a key in the place a
command, a client or a device's configuration gives it (curl -u, mysql -p, ssh-keygen -N, net use,
redis AUTH, tacacs-server key, ...). redaction/rules.py puts them in its table where they stand."""

from __future__ import annotations

import re

from ..lazy import lazy
from .formats import Rule
from .gates import _words
from .values import (
    _FILE_PATH,
    _SETTING_KEYWORD,
    _VALUE_GROUPS,
    _generic_key_value,
    _looks_like_secret,
    _not_a_credential_name,
    _random_value,
)

# What a text about Vault AppRole, Consul or Nomad says (rule secret_id).
_SECRET_ID_CONTEXT = lazy(r"(?i:approle|role_id|role-id|consul|nomad|AccessorID)")
# SMTP's and IMAP's AUTH mechanisms ("AUTH CRAM-MD5", "250 AUTH PLAIN LOGIN"): a name, not a password.
_SASL = lazy(
    r"(?i:PLAIN|LOGIN|CRAM-MD5|DIGEST-MD5|SCRAM-SHA-\d+(?:-PLUS)?|XOAUTH2?|OAUTHBEARER|GSSAPI|NTLM|EXTERNAL|ANONYMOUS)"
)

# docker build --secret id=npmrc,src=$HOME/.npmrc: where a build secret comes from, not the secret
_BUILD_SECRET = lazy(r"(?:id|src|source|env|type|target|required|mode|uid|gid)=[^,\s]*(?:,[a-z]{2,8}=[^,\s]*)*")
# A port or ports mapped (docker run -p 8080:80, -p 127.0.0.1:5432:5432/tcp), not a password.
_PORTS = lazy(r"(?:[\w.\-]+:)?\d+(?::\d+){0,2}(?:/(?:tcp|udp|sctp))?")


def _flag_value(match: re.Match, value: str) -> bool:
    """A value after a flag that names a credential (--password, --api-key, --datadog-key): a
    generated-looking one after a flag that only ends in "key"; not where a build secret comes from
    (--secret id=…) or a position in a listing (--next-token)."""
    if "gkey" in match.re.groupindex and match.group("gkey") is not None:  # --datadog-key ...
        return _generic_key_value(match.string, match.end("gkey"), value)
    flag = match.group(0).split(None, 1)[0]
    if _BUILD_SECRET.fullmatch(value) or _not_a_credential_name(match.string, match.start() + flag.rfind("-") + 1):
        return False  # --secret id=…, --next-token …
    return match.group("bare") is None or _looks_like_secret(value)


def _password_flag(match: re.Match, value: str) -> bool:
    """A -p value beside a user flag (user_and_password_flags): not words, with letters, and not a
    port, a mapping of ports or a file."""
    return (
        _looks_like_secret(value)
        and any(c.isalpha() for c in value)
        and not _PORTS.fullmatch(value)
        and not _FILE_PATH.fullmatch(value)
    )


def _command_password(match: re.Match, value: str) -> bool:
    """A value of command_password_arg: net user's password when it is not a word or a switch,
    ssh-keygen's -N or -P and an SNMP tool's -A or -X when that tool runs earlier in that command."""
    if match.group("bare") is not None and (value.startswith("/") or not _looks_like_secret(value)):
        return False  # net user NAME /domain, "-N the new passphrase": a switch or a word, not one
    if match.group("net") is not None:
        return True
    text = match.string
    line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    command = line[max(line.rfind(c) for c in ";|&") + 1 :]  # the command this flag is given to
    return ("ssh-keygen" if match.group("flag") in "NP" else "snmp") in command


COMMAND_RULES: tuple[Rule, ...] = (
    # curl -u user:password, --user user:password, -u :password; and an API key as the user with
    # no password (curl -u KEY:, as Stripe's and other services' documentation writes it).
    Rule(
        name="basic_auth_flag",
        pattern=lazy(
            r"""(?<![\w\-])(?:-u|--user)[ \t]+["']?(?:(?P<user>[^\s:"'@]{14,}):(?=["']?(?:\s|$))"""
            r"""|[^\s:"'@]*:(?:'(?P<sq>[^'\n]+)'|"(?P<dq>[^"\n]+)"|(?P<value>[^\s"']+)))"""
        ),
        strict=False,
        groups=("value", "sq", "dq", "user"),
        accept=lambda m, v: m.group("user") is None or _random_value(v),
        needles=("-u",),
    ),
    # A client's password flag beside its user flag on one command line: mongodump -u admin -p
    # VALUE, sqlcmd -U sa -P VALUE, oc login -u dev -p VALUE, rabbitmqadmin ... (either order). A
    # -p alone is often a port (psql -p 5433, docker run -p 8080:80): the value must have letters.
    Rule(
        name="user_and_password_flags",
        pattern=lazy(
            r"(?<![\w\-])(?:-[uU]|--user(?:name)?)(?:[ \t]+|=)[^\s\-][^\s]{0,100}(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-[pP][ \t]+"
            r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""
            r"|(?<![\w\-])-[pP][ \t]+"
            r"""(?:"(?P<dq2>[^"\n]*)"|'(?P<sq2>[^'\n]*)'|(?P<bare2>[^\s"'`\-][^\s"'`]*))"""
            r"(?=(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+(?:-[uU]|--user(?:name)?)(?:[ \t]+|=)[^\s\-])"
        ),
        strict=False,
        groups=("dq", "sq", "bare", "dq2", "sq2", "bare2"),
        accept=_password_flag,
        needles=("-p", "-P"),
    ),
    # Clients whose password flag is not named "password": mysql -u root -pS3cret and 7z a x.7z
    # -pS3cret (glued to -p; a bare -p prompts and stays), redis-cli -a S3cret, sshpass -p S3cret,
    # zip/unzip -P, openssl -k, htpasswd -b FILE USER S3cret (-nb USER S3cret), ngrok authtoken
    # TOKEN, vault login TOKEN.
    Rule(
        name="client_password_flag",
        pattern=lazy(
            r"(?<![\w\-])(?:(?:mysql|mysqldump|mysqladmin|mariadb|7z|7za|7zz)(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-p"
            r"(?:'(?P<gsq>[^'\n]+)'|\"(?P<gdq>[^\"\n]+)\"|(?P<glued>[^\s\"']+))"
            r"|(?:redis-cli(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-a|sshpass[ \t]+-p"
            r"|ldap(?:search|modify|add|delete|passwd|compare|whoami)(?:[ \t]+[^\s]{1,100}){0,10}?[ \t]+-w"
            r"|poetry[ \t]+config[ \t]+http-basic\.[\w.\-]{1,60}[ \t]+[^\s]{1,100}"
            r"|(?:docker|az)[ \t]+login(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-p|cargo[ \t]+login(?:[ \t]+--registry[ \t]+[^\s]{1,60})?"
            r"|(?:un)?zip(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-P"
            r"|openssl(?:[ \t]+[^\s]{1,100}){0,10}?[ \t]+-k"
            r"|htpasswd[ \t]+-(?=[a-zA-Z]*b)(?:(?=[a-zA-Z]*n)[a-zA-Z]+[ \t]+|(?![a-zA-Z]*n)[a-zA-Z]+[ \t]+[^\s\-][^\s]{0,200}[ \t]+)"
            r"[^\s\-][^\s]{0,100}|ngrok[ \t]+authtoken|vault[ \t]+(?:login|operator[ \t]+unseal)"
            r"|rabbitmqctl(?:\.bat)?(?:[ \t]+-[a-z][ \t]+[^\s]{1,100})*[ \t]+(?:add_user|change_password)[ \t]+[^\s\-][^\s]{0,100}"
            r"|redis-cli(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+--pass"
            r"|mc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+[^\s]{1,100}[ \t]+[^\s]{1,300}[ \t]+[^\s]{1,200}"
            r"|(?i:net[ \t]+use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?\\\\[^\s]{1,300})[ \t]+"
            r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*)))"""
        ),
        strict=False,
        groups=("gsq", "gdq", "glued") + _VALUE_GROUPS,
        accept=lambda m, v: not (v.startswith("/") and m.group(0)[:3].lower() == "net"),  # net use … /user:x
        needles=(
            "mysql",
            "mariadb",
            "7z",
            "redis-cli",
            "sshpass",
            "docker",
            "ldap",
            "poetry",
            "az",
            "cargo",
            "zip",
            "openssl",
            "htpasswd",
            "ngrok",
            "vault",
            "rabbitmqctl",
            "mc ",
            "net use",
            "NET USE",
            "Net use",
        ),
    ),
    # A user and a password glued by the separator a tool reads: HTTPie's -a user:pass, smbclient
    # -U user%pass, lftp -u user,pass, jenkins-cli -auth user:token, xfreerdp /p:pass, and what is
    # piped to chpasswd (user:pass) or to sudo -S (the password).
    Rule(
        name="tool_login",
        pattern=lazy(
            r"(?<![\w\-])(?:(?:https?|httpie)(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+(?:-a|--auth)(?:[ \t]+|=)(?P<q1>[\"']?)[^\s:\"']{1,100}:"
            r"|smbclient(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+(?:-U|--user)(?:[ \t]+|=)(?P<q2>[\"']?)[^\s%\"']{1,100}%"
            r"|lftp(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-u[ \t]+(?P<q3>[\"']?)[^\s,\"']{1,100},"
            r"|jenkins-cli(?:\.jar)?(?:[ \t]+[^\s]{1,100}){0,6}?[ \t]+-auth[ \t]+(?P<q4>[\"']?)[^\s:@\"']{1,100}:"
            r"|(?:[xw]|sdl-)freerdp3?(?:[ \t]+[^\s]{1,100}){0,8}?[ \t]+/p:(?P<q5>[\"']?)"
            r"""|echo[ \t]+(?:-n[ \t]+)?["']?[\w.\-]{1,64}:(?=[^\s"']{1,128}["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd)"""
            r"""|echo[ \t]+(?:-n[ \t]+)?["']?(?=[^\s"']{1,128}["']?[ \t]*\|[ \t]*sudo[ \t]+(?:-[a-zA-Z]+[ \t]+)*?-[a-zA-Z]*S))"""
            # quoted (the password holds ! # $ &), to the closing quote; else to the next blank
            r"""(?:(?<=["'])(?P<quoted>[^"'\n]{1,256})(?=["'])|(?P<bare>[^\s"'`]{1,256}?)(?=["'`]?(?:\s|$|\|)))"""
        ),
        strict=False,
        groups=("quoted", "bare"),
        accept=lambda m, v: not v.startswith("$"),
        needles=("http", "smbclient", "lftp", "jenkins-cli", "freerdp", "chpasswd", "sudo"),
    ),
    # Redis: AUTH [user] password (redis-cli, a client's log), ACL SETUSER name on >password and a
    # redis.conf `user name on >password` line. AUTH's value must not be a word ("AUTH failed").
    Rule(
        name="redis_auth",
        pattern=lazy(
            r"(?<![\w\-])(?:(?:AUTH|(?<=> )auth|(?<=>)auth)(?:[ \t]+[\w.\-]{1,64}(?=[ \t]+[^\s]))?[ \t]+(?P<auth>[^\s\"'`]{1,256})"
            r"|(?:(?i:acl[ \t]+setuser)[ \t]+[^\s]{1,100}|(?<![^\n])[ \t]*user[ \t]+[^\s]{1,100}(?=[^\n]*[ \t](?:on|off)(?:[ \t]|$)))"
            r"(?:[ \t]+[^\s>]{1,100}){0,10}?[ \t]+>(?P<bare>[^\s\"'`]{1,256}))"
        ),
        strict=False,
        groups=("auth", "bare"),
        accept=lambda m, v: m.group("auth") is None or (_looks_like_secret(v) and not _SASL.fullmatch(v)),
        needles=("AUTH", "> auth", ">auth", "user", "USER", "setuser"),
    ),
    # Vault AppRole's secret_id and Consul's or Nomad's SecretID are the credential, not an id (an
    # Azure "secret ID" is one): taken in a text about AppRole, a role_id, Consul, Nomad or an
    # AccessorID beside it.
    Rule(
        name="secret_id",
        pattern=lazy(
            r"""(?<![\w\-])(?:secret_id|SecretID|secret-id)["']?[ \t]*[:=][ \t]*["']?(?P<bare>[A-Za-z0-9\-]{20,64})"""
        ),
        strict=False,
        groups=("bare",),
        accept=lambda m, v: _SECRET_ID_CONTEXT.search(m.string) is not None,
        needles=("secret_id", "SecretID", "secret-id"),
    ),
    # Network devices' shared keys (Cisco IOS, Junos, net-snmp): tacacs-server/radius-server key,
    # crypto isakmp key, pre-shared-key, key-string, snmp-server community, rocommunity/rwcommunity,
    # ntp/ospf md5 keys. A community named public or private is the default, not a secret.
    Rule(
        name="device_key",
        pattern=lazy(
            r"(?<![\w\-])(?i:(?:tacacs|radius)-server(?:[ \t]+host[ \t]+[^\s]{1,100})?[ \t]+key(?:[ \t]+[0-7])?"
            r"|crypto[ \t]+isakmp[ \t]+key(?:[ \t]+[0-7])?|pre-shared-key(?:[ \t]+(?:ascii-text|hex|[0-7]))?"
            r"|key-string(?:[ \t]+[0-7])?|snmp-server[ \t]+community|r[ow]community6?"
            r"|(?:authentication|message-digest)-key[ \t]+\d{1,10}[ \t]+md5(?:[ \t]+[0-7])?)[ \t]+"
            r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`]+))"""
        ),
        strict=False,
        groups=_VALUE_GROUPS,
        accept=lambda m, v: (
            v.lower() not in ("public", "private")
            and not v.startswith("$")
            and (m.group("bare") is None or _looks_like_secret(v))  # "the tacacs-server key command"
        ),
        gate=_words("server", "isakmp", "pre-shared", "key-string", "community", "-key"),
    ),
    # Passwords as a command's argument where its flag or place says so only on that command's
    # line: ssh-keygen -N NEW -P OLD and snmpwalk -A AUTH -X PRIV (every one on the line, either
    # order), and Windows' net user NAME S3cret (not words: "net user accounts exist" stays).
    Rule(
        name="command_password_arg",
        pattern=lazy(
            r"(?<![\w\-])(?:(?P<net>(?i:net[ \t]+user)[ \t]+[^\s/*][^\s]{0,100})|-(?P<flag>[NPAX]))[ \t]+"
            r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""
        ),
        strict=False,
        groups=_VALUE_GROUPS,
        accept=_command_password,
        gate=_words("ssh-keygen", "net user", "snmp"),
    ),
    # A generated value under a name that holds one only in a known place: SonarQube's sonar.login
    # (a token of 40 hex digits before the sqp_/squ_ prefixes; a user's name stays) and a URL's
    # auth parameter (Firebase's ?auth=, a database secret or an ID token) or appid (OpenWeather's
    # API key).
    Rule(
        name="auth_parameter",
        pattern=lazy(
            r"""(?:(?<![\w\-])(?:-D)?sonar\.login[ \t]*[=:][ \t]*|[?&](?:auth|appid)=)(?P<bare>[^\s&#"'`<>]+)"""
        ),
        strict=False,
        groups=("bare",),
        accept=lambda m, v: _random_value(v),
        needles=("sonar.login", "auth=", "appid="),
    ),
    # --password hunter2, --api-key abc, keytool's -storepass and -keypass (the "--password=..."
    # form is a keyword assignment).
    Rule(
        name="cli_flag",
        pattern=lazy(
            r"(?<![\w\-])--?(?i:(?:[a-z0-9]+-){0,3}(?:password|passwd|token|secret|api-key|apikey|bearer|"
            r"(?:src|dest)?(?:store|key)pass|" + _SETTING_KEYWORD + r")|(?:[a-z0-9]+-){1,3}(?P<gkey>key))(?![\w\-])"
            r"""[ \t]+(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""
        ),
        strict=False,
        groups=_VALUE_GROUPS,
        accept=_flag_value,
        gate=_words("pass", "token", "secret", "api-key", "apikey", "masterauth", "-key", "bearer"),
    ),
    # Secret stores' command lines: gh secret set NAME --body VALUE, aws secretsmanager
    # --secret-string VALUE, aws ssm put-parameter ... --value VALUE.
    Rule(
        name="secret_store_cli",
        pattern=lazy(
            r"(?<![\w\-])(?:gh[ \t]+secret[ \t]+set[ \t]+[^\s]{1,100}(?:[ \t]+--?[a-z\-]{1,20}[ \t]+[^\s\-][^\s]{0,100}){0,3}"
            r"[ \t]+(?:--body|-b)|--secret-string|put-parameter(?:[ \t]+[^\s]{1,200}){0,8}?[ \t]+--value)[ \t=]+"
            r"""(?:"(?P<dq>[^"\n]*)"|'(?P<sq>[^'\n]*)'|(?P<bare>[^\s"'`\-][^\s"'`]*))"""
        ),
        strict=False,
        groups=_VALUE_GROUPS,
        accept=lambda m, v: not v.startswith(("file://", "fileb://")) and _flag_value(m, v),
        needles=("gh secret", "--secret-string", "put-parameter"),
    ),
    # .netrc: "machine api.example.com login me password VALUE" - any value after such a login.
    Rule(
        name="netrc_password",
        pattern=lazy(
            r"(?<![\w\-])(?:machine[ \t]+[^\s]{1,253}|default)[ \t]+login[ \t]+[^\s]{1,100}[ \t]+"
            r"password[ \t]+(?P<bare>[^\s\"'`]+)"
        ),
        strict=False,
        groups=("bare",),
        needles=("password",),
    ),
)
