"""Behaviour of core.sanitizer.redact: credentials go, everything else stays byte for byte.

No real credential appears here. Every fake is built in code with the right shape, and the
prefixes are split from the bodies so that secret scanners on the repository stay quiet.
"""

import base64
import hashlib
import json
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sanitizer import REDACTED, RULES, redact

# --- fakes with the right shape -----------------------------------------------------------------

BODY = "A1b2" * 9  # 36 alphanumerics


def _b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


AWS_KEY_ID = "AK" + "IA" + "Q7RT2WXZ4N6P8L3M"
AWS_TEMP_KEY_ID = "AS" + "IA" + "Q7RT2WXZ4N6P8L3M"
AWS_SECRET = "wJ7r" + "Ab3/" * 9  # 40 base64 characters
GITHUB = {p: p + "_" + BODY for p in ("ghp", "gho", "ghu", "ghs", "ghr")}
GITHUB_PAT = "github" + "_pat_" + "11ABCDEFG0" + "A1b2" * 3 + "_" + "C3d4" * 14 + "e5f"
GITLAB = "gl" + "pat-" + "A1b2C3d4E5f6G7h8I9j0"
SLACK = {p: p + "-" + "1234567890-1234567890123-" + "A1b2" * 6
         for p in ("xoxb", "xoxp", "xoxa", "xoxr", "xoxs")}
SLACK_APP = "xa" + "pp-1-A0123456789-1234567890123-" + "a1b2" * 16
SLACK_WEBHOOK_PATH = "T0" + "1234567/B0" + "1234567/" + "A1b2" * 6
SLACK_WEBHOOK = "https://hooks.slack.com/services/" + SLACK_WEBHOOK_PATH
STRIPE = {p: p + "_" + "A1b2" * 6 for p in ("sk_live", "sk_test", "rk_live", "rk_test")}
OPENAI = "sk" + "-" + "A1b2" * 12
OPENAI_PROJECT = "sk" + "-proj-" + "A1b2_C3d4-" * 8
ANTHROPIC = "sk" + "-ant-" + "api03-" + "A1b2-C3d4_" * 9
GOOGLE_API = "AI" + "za" + "Sy" + "A1b2" * 8 + "C"  # AIza + 35
GOOGLE_OAUTH = "GOC" + "SPX-" + "A1b2" * 7
JWT = ".".join([_b64url({"alg": "HS256", "typ": "JWT"}),
                _b64url({"sub": "1234567890", "name": "Test", "iat": 1516239022}),
                "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"])
PASSWORD = "s3cr3t-Pw!"


def pem(kind: str = "") -> str:
    """A PEM private-key block of the given kind ("RSA ", "EC ", ... or "")."""
    body = "\n".join(["MII" + "E" + "A1b2" * 15] * 4)
    return (f"-----BEGIN {kind}PRIVATE KEY-----\n" + body + f"\n-----END {kind}PRIVATE KEY-----")


PROVIDER_KEYS = [
    pytest.param(AWS_KEY_ID, id="aws-access-key-id"),
    pytest.param(AWS_TEMP_KEY_ID, id="aws-temporary-key-id"),
    *[pytest.param(v, id=f"github-{p}") for p, v in GITHUB.items()],
    pytest.param(GITHUB_PAT, id="github-fine-grained-pat"),
    pytest.param(GITLAB, id="gitlab"),
    *[pytest.param(v, id=f"slack-{p}") for p, v in SLACK.items()],
    pytest.param(SLACK_APP, id="slack-app"),
    *[pytest.param(v, id=f"stripe-{p}") for p, v in STRIPE.items()],
    pytest.param(OPENAI, id="openai"),
    pytest.param(OPENAI_PROJECT, id="openai-project"),
    pytest.param(ANTHROPIC, id="anthropic"),
    pytest.param(GOOGLE_API, id="google-api-key"),
    pytest.param(GOOGLE_OAUTH, id="google-oauth-client-secret"),
    pytest.param(JWT, id="jwt"),
]

PEM_KINDS = ["", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "]


# --- provider formats ---------------------------------------------------------------------------

@pytest.mark.parametrize("key", PROVIDER_KEYS)
def test_provider_key_in_a_sentence_is_replaced_and_the_sentence_kept(key):
    """A provider key inside a sentence is replaced and the sentence around it kept."""
    text = f"The deploy failed because {key} was revoked; ask for a new one."
    assert redact(text) == (
        f"The deploy failed because {REDACTED} was revoked; ask for a new one.", 1)


@pytest.mark.parametrize("key", PROVIDER_KEYS)
def test_provider_key_in_korean_text_is_replaced(key):
    """A provider key inside Korean text is replaced and the Korean text kept."""
    text = f"배포 실패: 키 {key} 가 만료됨. 새 키를 요청할 것."
    expected = f"배포 실패: 키 {REDACTED} 가 만료됨. 새 키를 요청할 것."
    assert redact(text) == (expected, 1)


@pytest.mark.parametrize("key", PROVIDER_KEYS)
def test_provider_key_is_replaced_even_with_strict_only(key):
    """Provider formats are unambiguous, so strict_only=True still replaces them."""
    assert redact(f"use {key} here", strict_only=True) == (f"use {REDACTED} here", 1)


@pytest.mark.parametrize("key", PROVIDER_KEYS)
def test_provider_key_assigned_to_a_keyword_counts_once(key):
    """A provider key assigned to a secret keyword is one value: replaced once, counted once."""
    assert redact(f'API_TOKEN="{key}"') == (f'API_TOKEN="{REDACTED}"', 1)


def test_aws_secret_key_next_to_its_keyword_is_replaced():
    """An AWS secret key after an aws/secret keyword is replaced; the keyword stays."""
    for line in (f"aws_secret_access_key = {AWS_SECRET}",
                 f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
                 f'"SecretAccessKey": "{AWS_SECRET}"'):
        redacted, count = redact(line, strict_only=True)
        assert AWS_SECRET not in redacted and count == 1
        assert redacted == line.replace(AWS_SECRET, REDACTED)


def test_forty_hex_digits_after_an_aws_secret_keyword_are_a_sha_not_a_key():
    """Forty lowercase hex digits are a git SHA, never an AWS secret key."""
    sha = hashlib.sha1(b"commit").hexdigest()
    assert redact(f"aws secret: {sha}", strict_only=True) == (f"aws secret: {sha}", 0)


def test_slack_webhook_keeps_the_host_and_redacts_the_path():
    """A Slack webhook URL keeps its host and loses the secret path."""
    text = f"notify via {SLACK_WEBHOOK} on failure"
    expected = f"notify via https://hooks.slack.com/services/{REDACTED} on failure"
    assert redact(text) == (expected, 1)
    assert redact(text, strict_only=True) == (expected, 1)


@pytest.mark.parametrize("kind", PEM_KINDS)
def test_pem_private_key_block_is_replaced_whole(kind):
    """A multi-line PEM private-key block of any kind becomes one [REDACTED]."""
    text = f"key file:\n{pem(kind)}\nend of note"
    assert redact(text) == (f"key file:\n{REDACTED}\nend of note", 1)
    assert redact(text, strict_only=True) == (f"key file:\n{REDACTED}\nend of note", 1)


def test_unterminated_pem_block_is_replaced_to_the_end_of_the_text():
    """A BEGIN line with no END line takes everything after it."""
    text = "pasted: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nmore"
    assert redact(text) == (f"pasted: {REDACTED}", 1)


def test_public_key_and_certificate_blocks_stay():
    """Public keys and certificates are not secrets."""
    text = ("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
            "-----BEGIN PUBLIC KEY-----")
    assert redact(text) == (text, 0)


# --- URLs, headers, keyword assignments ---------------------------------------------------------

POSITIVES = [
    # (text, expected)
    ("postgres://app:" + PASSWORD + "@db:5432/x", f"postgres://app:{REDACTED}@db:5432/x"),
    ("redis://:" + PASSWORD + "@cache:6379/0", f"redis://:{REDACTED}@cache:6379/0"),
    ("mongodb+srv://u:p@ss@cluster0.example.net/db",
     f"mongodb+srv://u:{REDACTED}@cluster0.example.net/db"),
    ("password=hunter2", f"password={REDACTED}"),
    ("passwd: hunter2", f"passwd: {REDACTED}"),
    ("token: abc123def", f"token: {REDACTED}"),
    ("secret=abc123def", f"secret={REDACTED}"),
    ('api_key = "abc123def"', f'api_key = "{REDACTED}"'),
    ('{"apiKey": "abc123def", "region": "eu"}', f'{{"apiKey": "{REDACTED}", "region": "eu"}}'),
    ("client_secret: 'abc 123'", f"client_secret: '{REDACTED}'"),
    ("export DB_PASSWORD=hunter2; make run", f"export DB_PASSWORD={REDACTED}; make run"),
    ("Server=db;User Id=sa;Password=hunter2;", f"Server=db;User Id=sa;Password={REDACTED};"),
    ("https://api.example.com/v1?access_token=abc123&page=2",
     f"https://api.example.com/v1?access_token={REDACTED}&page=2"),
    ("Authorization: Bearer abc.def-123", f"Authorization: Bearer {REDACTED}"),
    ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {REDACTED}"),
    ('curl -H "Authorization: token abc123def" url',
     f'curl -H "Authorization: token {REDACTED}" url'),
    ("send it as Bearer abcdef0123456789xyz", f"send it as Bearer {REDACTED}"),
    ("docker login --password hunter2 registry", f"docker login --password {REDACTED} registry"),
    ("password=Summer2024-", f"password={REDACTED}"),
    ("env_password=env-prod-pw", f"env_password={REDACTED}"),
    ("비밀번호: hunter2 로 접속", f"비밀번호: {REDACTED} 로 접속"),
    ("DB 접속 시 password=hunter2 를 썼다", f"DB 접속 시 password={REDACTED} 를 썼다"),
]


@pytest.mark.parametrize("text, expected", POSITIVES)
def test_only_the_value_is_replaced_and_the_keyword_kept(text, expected):
    """URL passwords, auth headers and keyword assignments lose the value, not the keyword."""
    assert redact(text) == (expected, 1)


@pytest.mark.parametrize("text, _expected", POSITIVES)
def test_keyword_rules_do_not_apply_with_strict_only(text, _expected):
    """With strict_only=True the keyword, URL and header rules leave the text alone."""
    assert redact(text, strict_only=True) == (text, 0)


def test_strict_only_redacts_provider_key_but_not_keyword_assignment():
    """strict_only=True replaces a provider key and keeps a keyword assignment in the same text."""
    text = f"password=hunter2 and {GITHUB['ghp']}"
    assert redact(text, strict_only=True) == (f"password=hunter2 and {REDACTED}", 1)
    assert redact(text) == (f"password={REDACTED} and {REDACTED}", 2)


# --- what must not change -----------------------------------------------------------------------

NEGATIVES = [
    "the password must be rotated every 90 days",
    "tokens expire after an hour; refresh the token before calling",
    "the secret sauce is caching; Bearer authentication is required",
    "max_tokens: 4096",
    "secretary: Kim",
    "set OPENAI_API_KEY in .env, never in code",
    "export GITHUB_TOKEN before running gh",
    "<YOUR_API_KEY>",
    "api_key = <YOUR_API_KEY>",
    "API_KEY=${API_KEY}",
    "token=$GITHUB_TOKEN",
    "sk-...",
    "sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "ghp_" + "x" * 36,
    "xxxx",
    "password=xxxx",
    "password=****",
    "password=<your password>",
    "password=${DB_PASSWORD}",
    "password={{ db_password }}",
    "password=os.environ",
    'password=os.environ["DB_PASSWORD"]',
    "api_key=process.env.API_KEY",
    "sk-proj-****",
    "token: null",
    "password=None",
    'password=""',
    "password=''",
    f"password={REDACTED}",
    "postgres://user:<password>@localhost:5432/db",
    "postgres://localhost:5432/db",
    "https://github.com/org/repo/blob/main/core/token_store.py#L10",
    "https://example.com:8080/path?q=1",
    "ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git",
    "see /home/me/.aws/credentials and ~/.ssh/id_rsa and C:\\Users\\me\\secrets.yaml",
    "src/auth/password_reset.py:42",
    "fixed in " + hashlib.sha1(b"fix").hexdigest(),
    "request id " + str(uuid.UUID(int=0x1234567890ABCDEF1234567890ABCDEF)),
    "sha256:" + hashlib.sha256(b"image").hexdigest(),
    "python 3.12.1, fastmcp>=2.3,<3, v1.2.3-rc.1, node v20.11.0",
    "A sentence mentioning sk_live keys and AKIA prefixes without any key.",
    "토큰이 만료되면 재발급",
    "비밀번호는 반드시 주기적으로 변경해야 한다",
    "API 키를 .env 파일에 넣지 말 것. 토큰: 만료되면 재발급",
    "",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_text_without_credentials_is_unchanged(text):
    """Prose, placeholders, hashes, ids, versions, paths, plain URLs and Korean text stay."""
    assert redact(text) == (text, 0)
    assert redact(text, strict_only=True) == (text, 0)


# --- counting and idempotence -------------------------------------------------------------------

def test_count_is_the_number_of_values_replaced():
    """Each credential counts as one, whatever rule found it."""
    text = "\n".join([
        f"github: {GITHUB['ghp']}",
        f"db: postgres://app:{PASSWORD}@db/x",
        "password=hunter2",
        pem("RSA "),
        f"jwt {JWT}",
    ])
    redacted, count = redact(text)
    assert count == 5
    assert redacted.count(REDACTED) == 5


ALL_POSITIVES = ([p.values[0] for p in PROVIDER_KEYS] + [t for t, _ in POSITIVES]
                 + [pem(k) for k in PEM_KINDS]
                 + [SLACK_WEBHOOK, f"aws_secret_access_key={AWS_SECRET}"])


@pytest.mark.parametrize("text", ALL_POSITIVES)
@pytest.mark.parametrize("strict_only", [False, True])
def test_redacting_twice_changes_nothing_more(text, strict_only):
    """A redacted text is a fixed point: the second pass changes nothing and counts 0."""
    once, _ = redact(text, strict_only=strict_only)
    assert redact(once, strict_only=strict_only) == (once, 0)


SECRETS = [p.values[0] for p in PROVIDER_KEYS] + [pem("EC "), SLACK_WEBHOOK]
FILLER = ["the", "password", "token:", "토큰이", "만료", "=", ":", "'", '"', "@", "/", "-",
          "_",
          "https://host/path", "v1.2.3", "eyJ", "sk-", "\n", "${X}", "<KEY>", REDACTED]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SECRETS + FILLER), max_size=12),
       st.sampled_from([" ", "\n", ", ", " = "]))
def test_no_secret_survives_among_other_words(words, sep):
    """Whatever surrounds them, provider secrets never survive, and the result is a fixed point."""
    text = sep.join(words)
    for strict_only in (False, True):
        once, count = redact(text, strict_only=strict_only)
        for secret in SECRETS:
            assert secret not in once
        assert count >= (1 if any(w in SECRETS for w in words) else 0)
        assert redact(once, strict_only=strict_only) == (once, 0)


def test_a_key_glued_after_another_is_replaced_too():
    """A key that only shows its start once the key before it is gone is still replaced."""
    assert redact(GOOGLE_API + AWS_KEY_ID) == (REDACTED + REDACTED, 2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SECRETS + FILLER), max_size=8))
def test_redaction_is_idempotent_when_words_are_glued_together(words):
    """Even with nothing between keys and words, a second pass changes nothing."""
    once, _ = redact("".join(words))
    assert redact(once) == (once, 0)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab:=@/._- \n'\"$<>{}[]Pp" + "password" + "token", max_size=80))
def test_redaction_is_idempotent_on_arbitrary_text(text):
    """Any text redacted once is left alone by a second pass."""
    once, _ = redact(text)
    assert redact(once) == (once, 0)


# --- hostile input ------------------------------------------------------------------------------

ADVERSARIAL = {
    "a*1024": "a" * 1024,
    "underscores": "_" * 1024,
    "password=*": ("password=" * 114)[:1024],
    "token: *": ("token: " * 147)[:1024],
    "jwt-dots": "eyJ" + "a." * 500,
    "jwt-segments": ("eyJaaaaa." * 114)[:1024],
    "pem-no-end": "-----BEGIN PRIVATE KEY-----" + "A" * 1000,
    "pem-false-ends": "-----BEGIN PRIVATE KEY-----" + "-----END " * 110,
    "url-colons": "a://a:" + "a:" * 509,
    "url-ats": "s://u:" + "@" * 1018,
    "schemes": "a://" * 256,
    "sk-repeat": "sk-" * 341,
    "bearer": "Bearer " + "a" * 1017,
    "auth-headers": ("authorization: bearer " * 47)[:1024],
    "flags": "--a-" * 256,
    "aws": ("aws_secret=" * 94)[:1024],
    "quote-unclosed": 'password="' + "a" * 1014,
    "hangul": "토큰" * 170,
}


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_hostile_input_terminates(text):
    """Inputs built to make regexes backtrack still return (each in well under a millisecond)."""
    for strict_only in (False, True):
        redacted, count = redact(text, strict_only=strict_only)
        assert isinstance(redacted, str) and count >= 0


def test_every_rule_is_named_and_compiled_once():
    """The rule table is the whole policy: unique names, compiled patterns."""
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert any(rule.strict for rule in RULES) and not all(rule.strict for rule in RULES)
