"""Behaviour of redaction.engine.redact: credentials go, everything else stays byte for byte.

No real credential appears here. Every fake is built in code with the right shape, and the
prefixes are split from the bodies so that secret scanners on the repository stay quiet.
"""

import base64
import hashlib
import json
import random
import string
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import examples, hostile
from sentinel_memory.redaction.engine import REDACTED, RULES, redact, rules_hit

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
HEX32 = "0123456789abcdef" * 2

# One fake per further provider format (docs/security.md lists them all).
MORE_PROVIDER_KEYS = {
    "gitlab-deploy": "gl" + "dt-" + "A1b2C3d4E5f6G7h8I9j0",
    "slack-refresh": "xo" + "xe-1-" + "A1b2" * 10,
    "stripe-webhook": "wh" + "sec_" + "A1b2" * 8,
    "anthropic-admin": "sk" + "-ant-admin01-" + "A1b2" * 10,
    "google-oauth-token": "ya" + "29." + "A1b2_C3d4-" * 5,
    "huggingface": "h" + "f_" + "A1b2" * 9,
    "npm": "np" + "m_" + BODY,
    "pypi": "py" + "pi-AgE" + "IcHlwaS5vcmc" + "A1b2" * 13,
    "sendgrid": "S" + "G." + "A1b2C3d4E5f6G7h8I9j0Kl" + "." + "A1b2" * 10 + "C3d",
    "twilio-api-key": "S" + "K" + HEX32,
    "twilio-account-sid": "A" + "C" + HEX32,
    "mailgun": "ke" + "y-" + HEX32,
    "mailgun-new": HEX32 + "-0123abcd-4567ef01",
    "digitalocean": "do" + "p_v1_" + HEX32 * 2,
    "heroku": "HR" + "KU-" + "AA" + "A1b2" * 15,
    "databricks": "da" + "pi" + HEX32,
    "shopify": "sh" + "pat_" + HEX32,
    "atlassian": "ATA" + "TT3xFfGF0" + "A1b2" * 20,
    "linear": "li" + "n_api_" + "A1b2" * 10,
    "notion": "sec" + "ret_" + "A1b2" * 10 + "C3d",
    "notion-ntn": "nt" + "n_" + "12345678901" + "A1b2" * 8 + "C3d",
    "doppler": "dp" + ".pt." + "A1b2" * 11,
    "vault": "hv" + "s." + "A1b2_C3d4-" * 5,
    "postman": "PM" + "AK-" + "0123456789abcdef01234567-" + HEX32 + "01",
    "grafana": "gl" + "sa_" + "A1b2" * 8 + "_0123abcd",
    "sentry": "sn" + "trys_" + "A1b2" * 12,
    "supabase": "sb" + "p_" + HEX32 + "01234567",
    "planetscale": "pscale" + "_tkn_" + "A1b2" * 9,
    "replicate": "r8" + "_" + "A1b2" * 9 + "C",
    "groq": "gs" + "k_" + "A1b2" * 13,
    "xai": "xa" + "i-" + "A1b2" * 16,
    "perplexity": "pp" + "lx-" + "A1b2" * 12,
    "newrelic": "NR" + "AK-" + "A1B2C3D4E5F6G7H8I9J0K1L2M3N",
    "square": "sq0" + "atp-" + "A1b2" * 6,
    "pulumi": "pu" + "l-" + HEX32 + "01234567",
    "age": "AGE-SECRET" + "-KEY-1" + "A1B2" * 14 + "C3",
    "discord-bot": "MTA" + "yMzQ1Njc4OTAxMjM0NTY3" + ".GhIjKl." + "A1b2_C3d4-" * 3,
    "telegram": "1234567890" + ":AA" + "A1b2_C3d4-" * 3 + "A1b",
    "aws-session-token": "IQoJb3JpZ2luX2Vj" + "A1b2/C3d4+" * 6,
    "firebase-fcm-server-key": "AAAA" + "Xk9mPq2" + ":APA91b" + "A1b2_C3d4-" * 14,
    "azure-ad-client-secret": "Ab1" + "8Q~" + "k2l3m4n5o6p7q8r9s0t1u2v3w4x5y6z7A",
    "mapbox-secret": "sk" + ".eyJ" + "1IjoiYWNtZSIsImEiOiJjbHgifQ" + "." + "A1b2_C3d4-" * 2 + "A1",
    "terraform-cloud": "A1b2C3d4E5f6G7" + ".atlas" + "v1." + "A1b2_C3d4-" * 7,
    # provider formats added for issue 13
    "gitlab-routable": "gl" + "pat-" + "A1b2_C3d4-" * 4 + ".01." + "a1b2c3d",
    "gitlab-ci-job": "gl" + "cbt-" + "a1_" + "A1b2C3d4E5f6G7h8I9j0",
    "stripe-prod": "rk" + "_prod_" + "A1b2" * 8,
    "openrouter": "sk" + "-or-v1-" + HEX32 * 2,
    "langfuse": "sk" + "-lf-" + str(uuid.UUID(int=0x1F2E3D4C5B6A79880123456789ABCDEF)),
    "google-refresh-token": "1/" + "/0" + "A1b2_C3d4-" * 6,
    "docker-hub": "dc" + "kr_pat_" + "A1b2_C3d4-" * 3,
    "bitbucket": "AT" + "BB" + "A1b2" * 9,
    "mailchimp": HEX32 + "-us" + "14",
    "newrelic-license": HEX32 + "0123" + "NR" + "AL",
    "airtable": "pa" + "t" + "A1b2C3d4E5f6G7" + "." + HEX32 * 2,
    "figma": "fi" + "gd_" + "A1b2_C3d4-" * 4,
    "hubspot": "pa" + "t-na1-" + str(uuid.UUID(int=0x1F2E3D4C5B6A79880123456789ABCDEF)),
    "vercel": "vc" + "p_" + "A1b2" * 8,
    "netlify": "nf" + "p_" + "A1b2" * 9,
    "supabase-secret": "sb" + "_secret_" + "A1b2_C3d4-" * 3,
    "grafana-legacy": "eyJr" + "Ijoi" + "A1b2" * 12,
    "dropbox": "sl" + ".u." + "A1b2_C3d4-" * 12,
    "facebook": "EA" + "AG" + "A1b2" * 30,
    "braintree": "access_token" + "$production$" + "a1b2c3d4e5f6g7h8" + "$" + HEX32,
    "alibaba": "LT" + "AI" + "A1b2" * 5,
    "tencent": "AK" + "ID" + "A1b2" * 8,
    "twitter-bearer": "A" * 22 + "A1b2" * 20,
    "salesforce": "00D" + "A1b2C3d4E5f6G7h" + "!" + "AQ" + "A1b2.C3d4_" * 8,
    "asana": "2/" + "1234567890123456" + "/" + "6543210987654321" + ":" + HEX32,
    "clickup": "pk" + "_12345678_" + "A1B2" * 8,
    "plaid": "access" + "-sandbox-" + str(uuid.UUID(int=0x1F2E3D4C5B6A79880123456789ABCDEF)),
    "launchdarkly": "sd" + "k-" + str(uuid.UUID(int=0x1F2E3D4C5B6A79880123456789ABCDEF)),
    "jfrog": "AK" + "Cp" + "A1b2" * 17 + "C",
    "clojars": "CLO" + "JARS_" + "a1b2c3" * 10,
    "onepassword": "op" + "s_eyJ" + "A1b2+/" * 20,
    "harness": "pa" + "t." + "A1b2_C3d4-A1b2_C3d4-A1" + "." + "A1b2" * 6 + "." + "A1b2" * 5,
    "cloudflare-origin-ca": "v1" + ".0-" + HEX32[:24] + "-" + HEX32 * 4 + HEX32[:18],
    "dynatrace": "dt0" + "c01." + "A1B2" * 6 + "." + "A1B2" * 16,
    "easypost": "EZ" + "AK" + "A1b2" * 13 + "C3",
    "flyio": "fo" + "1_" + "A1b2_C3d4-" * 4 + "A1b",
    "infracost": "ic" + "o-" + "A1b2" * 8,
    "readme": "rd" + "me_" + "a1b2c3d4e5" * 7,
    "typeform": "tf" + "p_" + "A1b2_C3d4-" * 5,
    "render": "rn" + "d_" + "A1b2" * 8,
    "rubygems": "ruby" + "gems_" + HEX32 + "0123456789abcdef",
    "shippo": "shi" + "ppo_live_" + HEX32 + "01234567",
    "brevo": "xkey" + "sib-" + HEX32 * 2 + "-" + "A1b2" * 4,
    "prefect": "pn" + "u_" + "A1b2" * 9,
    "buildkite": "bk" + "ua_" + HEX32 + "01234567",
    "sonarqube": "sq" + "u_" + HEX32 + "01234567",
    "circleci": "CCI" + "PAT_" + "A1b2" * 6 + "_" + HEX32 + "01234567",
    "contentful": "CF" + "PAT-" + "A1b2_C3d4-" * 4 + "A1b",
    "langsmith": "lsv2" + "_pt_" + HEX32 + "_" + "0123456789",
    "pinecone": "pc" + "sk_" + "A1b2C_" + "A1b2" * 12,
    "tavily": "tv" + "ly-" + "A1b2" * 8,
    "elevenlabs": "sk" + "_" + HEX32 + "0123456789abcdef",
    "deepl": str(uuid.UUID(int=0x1F2E3D4C5B6A79880123456789ABCDEF)) + ":f" + "x",
    "duffel": "duf" + "fel_test_" + "A1b2_C3d4-" * 4 + "A1b",
    "sourcegraph": "sg" + "p_" + "0123456789abcdef" + "_" + HEX32 + "01234567",
    "openshift": "sha" + "256~" + "A1b2_C3d4-" * 4 + "A1b",
    "maxmind": "A1b2C3" + "_" + "A1b2" * 7 + "C" + "_m" + "mk",
    "adobe": "p8" + "e-" + "A1b2" * 8,
    "yandex": "AQ" + "VN" + "A1b2_C3d4-" * 3 + "A1b2C3",
    "azure-devops": "A1b2" * 19 + "AZ" + "DO" + "A1b2",
}


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
    *[pytest.param(v, id=k) for k, v in MORE_PROVIDER_KEYS.items()],
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
                 f'"SecretAccessKey": "{AWS_SECRET}"',
                 f"aws configure set aws_secret_access_key {AWS_SECRET}"):
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


def test_teams_webhook_keeps_the_host_and_redacts_the_path():
    """A Microsoft Teams webhook URL keeps its host and loses the ids and the secret after it."""
    path = ("0123abcd-0000-4000-8000-0123456789ab@0123abcd-0000-4000-8000-0123456789ab/IncomingWebhook/"
            + HEX32 + "/0123abcd-0000-4000-8000-0123456789ab")
    text = f"alerts go to https://acme.webhook.office.com/webhookb2/{path} now"
    expected = f"alerts go to https://acme.webhook.office.com/webhookb2/{REDACTED} now"
    assert redact(text, strict_only=True) == (expected, 1)


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
    ("The staging admin password is Tr0ub4dor&3; ask first.",
     f"The staging admin password is {REDACTED}; ask first."),
    ("스테이징 DB 비밀번호는 nhess172dwv 이다.", f"스테이징 DB 비밀번호는 {REDACTED} 이다."),
    ("values.yaml:\n  auth:\n    password: letmein\n", f"values.yaml:\n  auth:\n    password: {REDACTED}\n"),
    ("curl -u admin:hunter2 https://ci.example.com", f"curl -u admin:{REDACTED} https://ci.example.com"),
    ("<password>hunter2</password>", f"<password>{REDACTED}</password>"),
    # a quoted value of 8+ characters goes, dots and all (docs/security.md)
    ('{"password": "correct.horse.battery.staple"}', f'{{"password": "{REDACTED}"}}'),
    ('the db password: "Summer.Breeze"', f'the db password: "{REDACTED}"'),
    ("mysql://app:Falcon4160#@db:3306/shop", f"mysql://app:{REDACTED}@db:3306/shop"),
    ("amqp://guest:s3cret@rabbit:5672/%2F", f"amqp://guest:{REDACTED}@rabbit:5672/%2F"),
    ("[pypi]\npassword = Summer2024!", f"[pypi]\npassword = {REDACTED}"),
    ("AccountName=acme;AccountKey=" + "A1b2+/" * 14 + "==;EndpointSuffix=core.windows.net",
     f"AccountName=acme;AccountKey={REDACTED};EndpointSuffix=core.windows.net"),
    ("blob.core.windows.net/c/app.zip?sv=2022-11-02&sp=r&sig=" + "A1b2" * 8 + "%2B%3D",
     f"blob.core.windows.net/c/app.zip?sv=2022-11-02&sp=r&sig={REDACTED}"),
    ('{"private_key_id": "' + "0123456789abcdef0123" * 2 + '"}', f'{{"private_key_id": "{REDACTED}"}}'),
    # the same service-account JSON written inside a JSON string (an environment variable, a manifest)
    ('"{\\"private_key_id\\": \\"' + "0123456789abcdef0123" * 2 + '\\"}"', f'"{{\\"private_key_id\\": \\"{REDACTED}\\"}}"'),
    ("https://discord.com/api/webhooks/123456789012345678/" + "A1b2_C3d4-" * 7,
     f"https://discord.com/api/webhooks/123456789012345678/{REDACTED}"),
    ("HEROKU_API_KEY=" + str(uuid.UUID(int=0xABCDEF)), f"HEROKU_API_KEY={REDACTED}"),
    ("DB 접속 시 password=hunter2 를 썼다", f"DB 접속 시 password={REDACTED} 를 썼다"),
    # Sentences written by hand, the way an agent logs what went wrong (not from the corpus).
    ("redis-server --requirepass Rq7vLm2Xz9 was in docker-compose.yml",
     f"redis-server --requirepass {REDACTED} was in docker-compose.yml"),
    ("redis-cli -h cache -p 6379 -a Rq7vLm2Xz9 ping returned PONG",
     f"redis-cli -h cache -p 6379 -a {REDACTED} ping returned PONG"),
    ("sshpass -p 'Xk9mPq2vL' ssh deploy@10.0.0.5 was in the Makefile",
     f"sshpass -p '{REDACTED}' ssh deploy@10.0.0.5 was in the Makefile"),
    ("The .netrc line was: machine api.heroku.com login me@example.com password "
     + str(uuid.UUID(int=0xFEED)), f"The .netrc line was: machine api.heroku.com login me@example.com password {REDACTED}"),
    ("비번은 Qw3rty!2024 이고 다음 주에 바뀐다.", f"비번은 {REDACTED} 이고 다음 주에 바뀐다."),
    ("스테이징 API 키는 a8Kd92LmQz0aXv7Yp3Wc 이다.", f"스테이징 API 키는 {REDACTED} 이다."),
    ("액세스 키 a8Kd92LmQz0aXv7Yp3Wc 는 만료됨", f"액세스 키 {REDACTED} 는 만료됨"),
    ("지갑 개인키 0x" + "4c0883a6" * 8 + " 를 커밋함", f"지갑 개인키 {REDACTED} 를 커밋함"),
    ("DB비밀번호 Xk9mPq2vL! 를 README에 적지 말 것", f"DB비밀번호 {REDACTED} 를 README에 적지 말 것"),
    ("암호는 'hunter2pass99' 였다", f"암호는 '{REDACTED}' 였다"),
    ("토큰 값: abcdef123456ghijkl", f"토큰 값: {REDACTED}"),
    ("API 키는 " + HEX32 + " 이고 샌드박스 전용이다.", f"API 키는 {REDACTED} 이고 샌드박스 전용이다."),
    ("mysqldump -u backup -p%BPro!2#ayx%Am shop > shop.sql", f"mysqldump -u backup -p{REDACTED} shop > shop.sql"),
    ("DB_PASSWORD=%Xk9mPq2vL", f"DB_PASSWORD={REDACTED}"),
    ("the api key is " + HEX32 + " for the partner sandbox",
     f"the api key is {REDACTED} for the partner sandbox"),
    ("Jenkins credential: username deploy, password: Summer2025!",
     f"Jenkins credential: username deploy, password: {REDACTED}"),
    ("git remote set-url origin https://oauth2:" + "gl" + "pat-" + "Ab12Cd34Ef56Gh78Ij90" + "@gitlab.com/acme/app.git",
     f"git remote set-url origin https://oauth2:{REDACTED}@gitlab.com/acme/app.git"),
]


@pytest.mark.parametrize("text, expected", POSITIVES)
def test_only_the_value_is_replaced_and_the_keyword_kept(text, expected):
    """URL passwords, auth headers and keyword assignments lose the value, not the keyword."""
    assert redact(text) == (expected, 1)


STRICT_CONTEXT = ("AccountKey=", "sig=", "private_key_id", "discord.com", "gitlab.com")


@pytest.mark.parametrize("text, _expected", [p for p in POSITIVES if not any(k in p[0] for k in STRICT_CONTEXT)])
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
    # a single short word quoted is an option's value (docs/security.md)
    'fetch(url, { credentials: "include" }) sends the cookie',
    'the client sends {"auth": "bearer"} and {"token": "jwt"} by default',
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
    "password=%DB_PASSWORD%",
    "password=%(db_password)s",
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
    # prose after a keyword and a colon, and code, is not a value
    "the token: expires soon",
    "The secret: never log request headers.",
    "password: required, at least 12 characters",
    "CSRF token: generated per session",
    "비밀번호: 12자 이상",
    "def login(user: str, password: str) -> Token:",
    "password = getpass.getpass() prompts without echo",
    "token = request.headers.get('Authorization')",
    "if token == expected: use hmac.compare_digest",
    "api_key: Optional[str] = None",
    "self.secret = settings.SECRET_KEY",
    "const token = await getToken({ req })",
    "access_token: str and refresh_token: str",
    "SECRET_KEY=changeme for local runs",
    "Use --password-stdin with docker login",
    "the token TTL is 15 minutes; the password hash takes 120 ms",
    "the API token is stored hashed; tokens: 4096",
    "token sha256:" + hashlib.sha256(b"t").hexdigest(),
    "the token " + str(uuid.UUID(int=7)) + " is a request id",
    "The token for v2.3.1-beta is in the release notes",
    # the documentation example keys of AWS are public and never valid (docs/security.md)
    "AK" + "IA" + "IOSFODNN7" + "EXAMPLE",
    "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    "integrity sha512-" + base64.b64encode(hashlib.sha512(b"x").digest()).decode(),
    # Sentences written by hand, the way an agent logs a lesson (not from the corpus).
    "Rotated the leaked token; the new one lives in 1Password under 'CI deploy'.",
    "The password reset endpoint returned 500 because SMTP_PASSWORD was unset in staging.",
    "Use `gh auth token | docker login ghcr.io -u USERNAME --password-stdin` in CI.",
    "The JWT is validated with PyJWT 2.8.0; algorithm RS256; leeway 30s.",
    "비밀번호 해시는 argon2id(m=65536, t=3, p=4)로 바꾸기로 했다.",
    "토큰 만료 시간을 3600초에서 900초로 줄였다. refresh_token_ttl=30d 는 그대로.",
    "The error was 'invalid_grant: token expired' from https://oauth2.googleapis.com/token.",
    "passwordless login via magic links replaced the password form in v3.2.0.",
    "The secret name in AWS Secrets Manager is prod/orders/db; read it with boto3.",
    "Run with --token-file ~/.config/acme/token instead of --token on the command line.",
    "password_min_length: 12 and password_require_symbol: true in the auth config.",
    "secret_ref: db-credentials (a Kubernetes Secret in namespace orders)",
    "API 키는 환경변수 OPENAI_API_KEY로 넘긴다.",
    "개인 키 파일 경로는 ~/.ssh/id_ed25519 이다.",
    "the secret is 32 bytes long and generated by secrets.token_bytes(32)",
    "private key: ~/.ssh/id_ed25519 (never commit it)",
    "비번: 12자 이상, 90일마다 변경",
    "액세스 키 로테이션은 90일 주기다.",
    "토큰 값은 매 요청마다 헤더에 넣는다.",
    "The token value is read from the TOKEN_FILE path at startup.",
    "redis requirepass is set in redis.conf, not in the compose file.",
    "the login page password field has autocomplete=off",
    "redis-cli -h cache -p 6379 ping returned PONG",
    "redis-cli -a $REDIS_PASSWORD ping",
    "mysql -u root -p shop < dump.sql prompts for the password",
    "The token is valid for 3600 seconds.",
    "the password is hashed with bcrypt(cost=12) before storage",
    "토큰은 3f9a2c1 커밋에서 쿠키로 옮겼다.",
    "토큰이 " + HEX32 + " 커밋에서 바뀌었다.",
    "the token " + hashlib.sha1(b"c").hexdigest() + " row was deleted by the cleanup job",
    "The FCM sender id is 123456789012; the server key lives in Secret Manager.",
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


def test_a_value_whose_neighbour_a_replacement_changed_is_judged_in_the_same_call():
    """Replacing a value changes what the context rules read next to it: after `<KEY>` and a
    DeepL-shaped key glued to an FCM-shaped one, the first replacements leave `fxAAAAXk9mPq2`
    between two markers, which a second call used to replace too. One call now goes on until a
    pass replaces nothing, so its result is a fixed point (found by the property test below)."""
    fcm = "AAAAXk9mPq2:APA91b" + "A1b2_C3d4-" * 14
    text = "<KEY>" + "1f2e3d4c-5b6a-7988-0123-456789abcdef:fx" + fcm
    once, count = redact(text)
    assert redact(once) == (once, 0), once
    assert count == 3 and once == "<KEY>[REDACTED]:[REDACTED]:[REDACTED]"


def test_a_percent_encoded_run_redacted_is_read_again_with_its_neighbours():
    """A percent-encoded run in which a credential is found is written back partly decoded
    (`password%3A` as `password:`): the text after it is then read with that name before it, in
    the same call, not by a second one."""
    text = "password%3A:/\ndop_v1_" + "0123456789abcdef" * 6 + "0123NRAL:"
    once, _ = redact(text)
    assert redact(once) == (once, 0), once
    assert "dop_v1_" not in once


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

HOSTILE = hostile()


def test_hostile_inputs_fill_the_largest_field():
    """The hostile inputs are as large as a field may be (1,024 bytes), so they test the worst case."""
    sizes = [len(text.encode()) for text in HOSTILE.values()]
    assert len(HOSTILE) >= 30 and max(sizes) == 1024 and min(sizes) >= 1020


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_redacted_to_a_fixed_point(text):
    """Inputs built to make regexes backtrack still come back redacted, and a second pass changes
    nothing (bench/secrets_bench.py prints how long each takes)."""
    for strict_only in (False, True):
        once, count = redact(text, strict_only=strict_only)
        assert count == once.count(REDACTED) - text.count(REDACTED)
        assert redact(once, strict_only=strict_only) == (once, 0)


@pytest.mark.parametrize("hidden", ["\u200b", "\u2060", "\u00ad", "\ufeff", "\x00", "\x1b[0m"],
                         ids=["zero-width space", "word joiner", "soft hyphen", "BOM", "NUL", "colour reset"])
def test_a_key_with_a_character_that_shows_nothing_inside_is_still_redacted(hidden):
    """A key pasted with a zero-width character or a terminal sequence inside (the rules would see
    two short words, a reader copies the whole key): redacted, the hidden characters gone; a text
    with such characters and no key keeps them."""
    key = GITHUB["ghp"]
    text, count = redact(f"use {key[:12]}{hidden}{key[12:]} here, 한국어 note")
    assert (text, count) == ("use [REDACTED] here, 한국어 note", 1)
    assert redact(f"family 👨\u200d👩 and a{hidden}b") == (f"family 👨\u200d👩 and a{hidden}b", 0)


SEGMENTED_KEYS = {
    **{f"Slack {prefix[:4]}": key for prefix, key in SLACK.items()},
    "Slack app": SLACK_APP,
    "GitHub fine-grained": GITHUB_PAT,
    "JWT": JWT,
    "Anthropic": ANTHROPIC,
    "OpenAI project": OPENAI_PROJECT,
    "GitLab": GITLAB,
    "Google OAuth": GOOGLE_OAUTH,
}


@pytest.mark.parametrize("hidden", ["\u200b", "\u00ad", "\u2060", "\ufeff", "\x1b[0m", "\U000e0020", "\x85"],
                         ids=["zero-width space", "soft hyphen", "word joiner", "BOM", "colour reset", "tag space",
                              "C1 next line"])
@pytest.mark.parametrize("name", SEGMENTED_KEYS)
def test_a_key_with_a_hidden_character_at_a_segment_boundary_is_redacted_whole(name, hidden):
    """An editor puts a soft hyphen or a zero-width space where a key breaks (before or after a -,
    _ or .): a rule that matches the part before it must not leave the part after it, the secret,
    in view. Every boundary of each key that has segments."""
    key = SEGMENTED_KEYS[name]
    cuts = [i for i in range(1, len(key)) if key[i - 1] in "-_." or key[i] in "-_."]
    left = {i: redact(f"use {key[:i]}{hidden}{key[i:]} here") for i in cuts}
    assert cuts and {i: got for i, got in left.items() if got != ("use [REDACTED] here", 1)} == {}


@pytest.mark.parametrize("name", [name for name in SEGMENTED_KEYS if "_" in SEGMENTED_KEYS[name]] + ["GitHub"])
def test_a_key_whose_underscores_a_markdown_converter_escaped_is_redacted_whole(name):
    """HTML turned into Markdown writes `_` as `\\_`, inside a key too (`ghp\\_...`): the key is
    redacted whole; an escaped underscore in prose stays."""
    key = SEGMENTED_KEYS.get(name, GITHUB["ghp"])
    assert redact(f"set it to {key.replace('_', chr(92) + '_')} now") == ("set it to [REDACTED] now", 1)
    assert redact("the snake\\_case names in C:\\_build") == ("the snake\\_case names in C:\\_build", 0)


GENERATED_PASSWORD = "RqZb" + "l5K&#CR%ZNqh;vL,p8)"  # a password manager's symbols


@pytest.mark.parametrize("line", [
    "DB_PASSWORD={}",
    "export DB_PASSWORD={}",
    "database:\n  password: {}\n  host: db",
    "services:\n  db:\n    environment:\n      - MYSQL_ROOT_PASSWORD={}",
    "DB_PASSWORD={}   # rotated in March",
], ids=["env", "export", "YAML", "compose list", "env with a comment"])
def test_a_generated_password_alone_on_its_setting_line_is_redacted_whole(line):
    """An unquoted value on a line of its own (.env, YAML, compose) runs to the line's end, through
    & ; , ( and the like, which end a value in prose: none of it stays in view."""
    text, count = redact(line.format(GENERATED_PASSWORD))
    assert count == 1 and text == line.format("[REDACTED]")


def test_a_value_that_is_not_alone_on_its_line_still_ends_where_it_did():
    """A form body keeps its other fields, a call that asks for a password and a line of code are
    code, and in prose a value ends at the first , ; & as before."""
    assert redact("password=hunter2x&user=bob") == ("password=[REDACTED]&user=bob", 1)
    assert redact("password=getpass.getpass()") == ("password=getpass.getpass()", 0)
    assert redact("  password = get_password()") == ("  password = get_password()", 0)
    code = "const config = {\n  apiKey: import.meta.env.VITE_API_KEY,\n  secret: process.env.SECRET;\n}"
    assert redact(code) == (code, 0)  # a line's last comma or semicolon is code's, not the value's
    go = "\tsecret := parts[1]\n\tapiKey := headers[keyHeader]\n\tresult.Secret = groups[rule.Group]\n"
    assert redact(go) == (go, 0)  # an index in code, alone on its line, is no setting
    assert redact("we set password=Kx9mQ2vL;restart it") == ("we set password=[REDACTED];restart it", 1)


DOTTED_SECRET = "Kx9m" + "Q2.vLp8Rt"


@pytest.mark.parametrize("text", [
    f"the staging password is {DOTTED_SECRET}",
    f"the password is '{DOTTED_SECRET}'",
    f"비밀번호는 {DOTTED_SECRET} 입니다",
    "bootstrap token: " + "of3bit" + ".ba5y58tkvl7hgxcu",
], ids=["prose", "quoted", "Korean", "kubeadm token"])
def test_a_password_with_a_dot_in_it_is_not_taken_for_a_name_in_code(text):
    """A dotted name is code only when its parts are words: a password or a token with a dot in it
    is redacted where it is named."""
    once, count = redact(text)
    assert count == 1 and "Kx9m" not in once and "ba5y58" not in once


@pytest.mark.parametrize("text", [
    "// read the metric's value\n\tbefore := testutil.ToFloat64(requestsTotal)",
    "the token is settings.API_TOKEN",
    "the password is self.config.db_password2",
    "the key is response.data.accessToken",
    "password: os.environ.DB_PASS",
])
def test_a_dotted_name_in_code_after_a_keyword_stays(text):
    assert redact(text) == (text, 0)


CLI_PASSWORD = "Zq8v" + "N3kLTm4wQ"


@pytest.mark.parametrize("command", [
    "mongodump -u admin -p {} --authenticationDatabase admin",
    "sqlcmd -S db -U sa -P '{}'",
    "oc login -u developer -p {} https://api.crc:6443",
    "rabbitmqadmin --username ops -p {} list queues",
    "sqlcmd -P {} -U sa -S db",
    "curl -u :{} https://api.example.com/v1/x",
    "keytool -importcert -keystore ks.jks -storepass {} -file c.crt",
    "curl https://api.example.com/v1/charges -u {}:",
], ids=["mongodump", "sqlcmd", "oc login", "rabbitmqadmin", "password first", "curl empty user", "keytool",
        "curl key as user"])
def test_a_password_given_to_a_command_beside_its_user_flag_is_redacted(command):
    """Command lines that name the password -p (or -P) next to -u, in either order, and curl's key
    with an empty user or as the user with no password."""
    secret = CLI_PASSWORD + ("x7Rt2Qm9Lp4Wz8Nv3Kc5" if command.endswith("-u {}:") else "")
    text, count = redact(command.format(secret))
    assert count == 1 and CLI_PASSWORD not in text and text == command.format("[REDACTED]")


@pytest.mark.parametrize("command", [
    "docker run -u 1000 -p 8080:80 nginx",
    "docker run -p 127.0.0.1:5432:5432/tcp -u app img",
    "psql -h db -U postgres -p 5433 -d app",
    "mongo -u admin -p",
    "cp -u -p a.txt b.txt",
    "curl -u username: https://example.com",
])
def test_a_port_or_a_flag_without_a_password_beside_a_user_flag_stays(command):
    assert redact(command) == (command, 0)


ARCHIVE_PASSWORD = "Hq7m" + "Z2xRt9Lp"
SONAR_HEX = "3f2a9c8b" + "7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a"


@pytest.mark.parametrize("command", [
    "ssh-keygen -t ed25519 -N '{}' -f ~/.ssh/deploy",
    "ssh-keygen -p -f key -P {}",
    "7z a backup.7z data/ -p{} -mhe=on",
    "unzip -P {} archive.zip",
    "zip -P {} -r out.zip dir",
    "openssl enc -aes-256-cbc -k {} -in a -out b",
    "htpasswd -bc .htpasswd admin {}",
    "htpasswd -nbB admin {}",
    "net user svc_backup {} /add",
    "NET USER admin {}",
    "vault login {}",
    "ngrok authtoken {}" + "Vn3Wc4Yb6Hd1Fg5",
    "sonar.login=" + SONAR_HEX + "{}",
    "curl 'https://app-1234.firebaseio.com/users.json?auth={}Vn3Wc4Yb6Hd1Fg5'",
    "http -a admin:{} GET https://api.local/me",
    "smbclient //nas/share -U backup%{}",
    "lftp -u deploy,{} sftp://host",
    "java -jar jenkins-cli.jar -s http://j/ -auth admin:{} who-am-i",
    "xfreerdp /v:host /u:admin /p:{}",
    "echo 'deploy:{}' | chpasswd",
    'echo "{}" | sudo -S apt update',
    "rabbitmqctl add_user ci {}",
    "127.0.0.1:6379> AUTH default {}",
    "ACL SETUSER app on >{} ~* +@all",
    "vault operator unseal {}",
    "export AZURE_DEVOPS_EXT_PAT={}" + "benyjqwx6hh7566tfjgvq6kbnxjb",
    "HASH_PEPPER={}",
    "curl 'https://api.openweathermap.org/data/2.5/weather?q=Seoul&appid=3f2a9c8b{}'",
], ids=["ssh-keygen -N", "ssh-keygen -P", "7z", "unzip", "zip", "openssl -k", "htpasswd -b", "htpasswd -nb",
        "net user", "NET USER", "vault login", "ngrok", "sonar.login", "firebase auth", "httpie", "smbclient", "lftp",
        "jenkins-cli", "xfreerdp", "chpasswd", "sudo -S", "rabbitmqctl", "redis AUTH", "redis ACL", "vault unseal",
        "PAT", "pepper", "appid"])
def test_a_password_in_its_place_on_a_tools_command_line_is_redacted(command):
    """Tools whose password is not behind a flag named for it: its place on that tool's line says
    what it is."""
    text, count = redact(command.format(ARCHIVE_PASSWORD))
    assert count == 1 and ARCHIVE_PASSWORD not in text and "[REDACTED]" in text


def test_both_passphrases_of_one_ssh_keygen_or_snmp_line_are_redacted():
    text, count = redact(f"ssh-keygen -p -P {ARCHIVE_PASSWORD} -N {ARCHIVE_PASSWORD[::-1]} -f key")
    assert (text, count) == ("ssh-keygen -p -P [REDACTED] -N [REDACTED] -f key", 2)
    text, count = redact(f"snmpwalk -v3 -u me -a SHA -A {ARCHIVE_PASSWORD} -x AES -X {ARCHIVE_PASSWORD[::-1]} host")
    assert (text, count) == ("snmpwalk -v3 -u me -a SHA -A [REDACTED] -x AES -X [REDACTED] host", 2)


def test_a_page_token_is_kept_but_a_facebook_page_token_setting_is_not():
    """A listing's position (pageToken) is no credential; an environment variable in capitals that
    ends in PAGE_TOKEN holds a Facebook page's access token."""
    assert redact("pageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA2MmQ3ZjA")[1] == 0
    text, count = redact("FB_PAGE_TOKEN=EAA7dhkDP81632nZXY3M9lPImyHy0wgwBU7pQArBFvMX")
    assert (text, count) == ("FB_PAGE_TOKEN=[REDACTED]", 1)


@pytest.mark.parametrize("text", [
    "the network user guide says net user accounts exist",
    "net user bob /add",
    "net user bob *",
    "ssh -N -L 8080:localhost:80 host",
    "ssh-keygen -N '' -f key",
    "grep -N foo; ssh-keygen -f k",
    "vault login -method=userpass username=me",
    "htpasswd -c .htpasswd admin",
    "sonar.login=admin",
    "GET /items?auth=true&page=2",
])
def test_a_command_line_without_a_password_in_that_place_stays(text):
    assert redact(text) == (text, 0)


PASTED = "Pq7v" + "N2kLm9xR!"
HEX_TOKEN = "9f8e7d6c5b4a3928" + "1706f5e4d3c2b1a0"


def _encoded_private_key() -> str:
    body = "".join(random.Random(7).choice(string.ascii_letters + string.digits) for _ in range(200))
    block = "-----BEGIN EC PRIVATE KEY-----\n" + body + "\n-----END EC PRIVATE KEY-----\n"
    return base64.b64encode(block.encode()).decode()


@pytest.mark.parametrize("text, secret", [
    ("POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-" + PASTED + "}", PASTED),
    ('API_KEY="${API_KEY:=gxLd6GncfBAepf' + 'Jd0Kh8oOOL8dKLzdo}"', "gxLd6GncfBAepf"),
    ('dsn := "app:' + PASTED + '@tcp(db:3306)/app?parseTime=true"', PASTED),
    ('sql.Open("mysql", "root:' + PASTED + '@/app")', PASTED),
    ("git clone https://" + HEX_TOKEN + "abcdef12:x-oauth-basic@github.com/org/repo.git", HEX_TOKEN),
    ("curl https://Zk8mQ2xLt7Rp9Vn3" + "Wc4Yb6Hd1Fg5Js0K:@api.example.io/v1", "Zk8mQ2xLt7Rp9Vn3"),
    ("tls.key: " + _encoded_private_key(), "LS0tLS1CRUdJTiBFQyBQUklW"),
    ("KEYSTORE_KEY=" + _encoded_private_key()[60:] * 2, _encoded_private_key()[60:100]),
    ('client = Client("AC' + "0123456789abcdef" * 2 + '", "' + HEX_TOKEN + '")', HEX_TOKEN),
    ("const client = algoliasearch('WX4HH5344T', '" + HEX_TOKEN + "');", HEX_TOKEN),
    ("slackdump -t xoxc-1234567890123-1234567890123-1234567890123-" + "ab12" * 16, "ab12ab12"),
    ("-c xoxd-AbCd%2FeFgH%2BiJkL" + "%3D%3DmNoP", "eFgH"),
    ("password: !QAZ2wsx" + "3edc", "QAZ2wsx"),
    ('DB_PASSWORD="!Spring' + '.2025"', "Spring"),
    ("rotated the deploy key prod-api-" + "3f2a9c8b7d6e5f4a" * 4, "3f2a9c8b7d6e5f4a"),
    ("const resend = new Resend('re_" + "Ab3dE6g9_Kx2Lm4Np6Qr8St0Uv2Wx4Yz6A');", "Kx2Lm4Np"),
], ids=["compose default", "shell := default", "Go DSN tcp", "Go DSN slash", "token user, filler password",
        "key user, empty password", "Kubernetes tls.key", "long value of a *_KEY", "Twilio pair", "Algolia",
        "Slack xoxc", "Slack xoxd cookie", "a password that starts with !", "quoted, with !",
        "a key named like a cache entry", "Resend"])
def test_a_credential_in_a_form_a_tester_found_leaking_is_redacted(text, secret):
    """Each of these was stored whole: a shell default taken for a placeholder, a DSN without a
    scheme, a URL's token user beside a filler password, a base64-encoded key, a key over 256
    characters, a key passed after its account id, and Slack's browser tokens."""
    once, count = redact(text)
    assert count >= 1 and secret not in once


@pytest.mark.parametrize("text", [
    "PORT=${PORT:-8080}",
    "DB_PASSWORD=${DB_PASSWORD:-postgres}",
    "image: ${IMAGE:-nginx:1.25}",
    "X=${GITHUB_TOKEN:=${GH_TOKEN}}",
    'sql.Open("mysql", "user:password@tcp(127.0.0.1:3306)/hello")',
    "see 12:30@/home",
    "docker buildx build --secret id=npmrc,src=$HOME/.npmrc .",
    "docker build --secret id=gh_token,env=GH_TOKEN -t app .",
    "gpg --keyserver hkps://keys.openpgp.org --recv-keys A4C123B1D5E6F7A8B9C0D1E2F3A4B5C6D7E8F9A0",
    "git config --global user.signingkey 149D439536B3216F",
    "[user]\n    signingkey = 149D439536B3216F",
    '"NextToken": "eyJ2IjoxLCJjIjoiQWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY3ODkw"}',
    "next_page_token=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA2MmQ3ZjA",
    "pageToken=CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA2MmQ3ZjA",
    "aws logs filter-log-events --log-group-name x --next-token f/38765432109876543210987654321",
    "Cache restored from key: node-cache-Linux-x64-npm-" + "3f2a9c8b7d6e5f4a" * 4,
    "      key: pip-" + "3f2a9c8b7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
    "AUTH failed: WRONGPASS",
    "pattern = re_compile_pattern_for_the_whole_thing",
    "net user jsmith /domain",
    "net user administrator /active:yes",
    "ssh-keygen: -N the new passphrase, -P the old one",
    "the password on build-agent-07 was reset yesterday",
    "snmpget -v2c -c public host sysUpTime.0",
    "the PAT: expires soon",
    '_INIT_FACTORY_PAT = "__attr_factory_%s"',
    "user %s on >%s ~* +@all",
    "X-Idempotency-Key: 3f2a9c8b-7d6e-4f5a-9b2c-1d0e9f8a7b6c",
    "api_key: !vault |",
    "MasterUserPassword: !Ref DBPassword",
    "  tls.crt: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENDQVRlZ0F3SUJBZ0lVRm",
], ids=["port default", "default password word", "image default", "nested default", "DSN template", "a time",
        "docker build secret", "docker build secret env", "gpg recv-keys", "git signingkey", "gitconfig signingkey",
        "NextToken", "next_page_token", "pageToken", "--next-token", "CI cache key", "actions/cache key",
        "AUTH failed", "a name that starts with re_", "net user switch", "net user switch with a value", "ssh-keygen's flags in prose",
        "a host after 'password on'", "snmpget", "PAT in prose", "a pattern named PAT", "redis.conf format", "idempotency header", "ansible vault tag", "CloudFormation Ref",
        "encoded certificate"])
def test_text_that_names_a_credential_without_holding_one_stays(text):
    """What testers found mangled: where a build secret comes from, a GPG key's public id, a page
    token, a cache entry's name, a YAML tag that fetches the value, an encoded certificate."""
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("sentence", [
    "本番DBのパスワードは {} です。",
    "本番DBのパスワードは{}です。",
    "数据库密码：{}",
    "密码是 {}",
    "Das Passwort ist {}",
    "API-Schlüssel: {}",
    "le mot de passe est {}",
    "la contraseña es {}",
    "a senha é {}",
    "пароль — {}",
    "wachtwoord: {}",
    "hasło: {}",
    "トークン：{}",
    "Palvelimen salasana on {}",
    "Lösenordet är {}",
    "Das neue Passwort für den Server ist {}",
    "Пароль от сервера: {}",
    "APIキー: {}",
    "密码为：{}",
    "mdp : {}",
    "palavra-passe: {}",
    "la clave es {}",
    "passcode: {}",
], ids=["Japanese", "Japanese glued", "Chinese colon", "Chinese verb", "German", "German key", "French", "Spanish",
        "Portuguese", "Russian", "Dutch", "Polish", "Japanese token", "Finnish", "Swedish definite", "German für",
        "Russian от", "Japanese API key", "Chinese 为：", "French mdp", "Portuguese palavra-passe", "Spanish clave",
        "English passcode"])
def test_a_password_named_in_another_language_is_redacted(sentence):
    """Lessons are written in the team's language: a password or a token named in it goes, as in
    English and Korean."""
    text, count = redact(sentence.format(PASTED))
    assert count == 1 and PASTED not in text and text == sentence.format("[REDACTED]")


@pytest.mark.parametrize("sentence", [
    "Das Passwort ist abgelaufen und muss erneuert werden",
    "パスワードは8文字以上にしてください。",
    "密码是必填项",
    "la contraseña es obligatoria",
    "le mot de passe est incorrect",
    "la clave es obligatoria",
    "Das Passwort für den Server ist abgelaufen",
    "Salasana on vaihdettava",
    "mdp oublié",
    "the passcode is sent by SMS",
])
def test_a_sentence_about_a_password_in_another_language_stays(sentence):
    assert redact(sentence) == (sentence, 0)


QUOTED = "Kd8#" + "wQ2!pLz7"


@pytest.mark.parametrize("text", [
    "http -a 'admin:{}' GET https://api.x.io",
    "smbclient //fs/share -U 'CORP\\admin%{}'",
    'xfreerdp /v:h /u:admin /p:"{}"',
    "DB_PASSWORD=BH3M1(XS0{}",
    "password: JjPkVB[{}",
    "Server=db;UID=sa;PWD={{{}}};Encrypt=yes",
    "define( 'AUTH_KEY', '<Jr3(J|1T:{}' );",
    "127.0.0.1:6379> auth default {}",
    "redis-cli -h r --pass {} ping",
    "sqlplus -s admin/{}@prod",
    "rman target sys/{}@db",
    "mc alias set myminio http://minio:9000 admin {}",
    "net use Z: \\\\server\\share {} /user:DOMAIN\\admin",
    "tacacs-server key {}",
    "snmp-server community {} RO",
    "vault write auth/approle/login role_id=r secret_id=5b6c7d8e-9f8e-4d7c-8b6a-{}",
    '{{"kty":"EC","crv":"P-256","x":"AAAA","d":"Xq9vLm2Rt7Kp4Wz8Nc3Bd6{}"}}',
    'const wallet = new ethers.Wallet("0x' + "9c4e" * 13 + '{}")',
], ids=["httpie quoted", "smbclient quoted", "xfreerdp quoted", "a ( in an env password", "a [ in a YAML password",
        "ODBC braces", "WordPress key starting with <", "redis auth lowercase", "redis-cli --pass", "sqlplus -s",
        "rman", "mc alias set", "net use", "tacacs key", "snmp community", "AppRole secret_id",
        "a JSON Web Key's private part", "an Ethereum wallet's key"])
def test_a_form_a_third_tester_found_leaking_is_redacted(text):
    secret = "1234567890ff" if "secret_id" in text else "Hd1Fg5Js0Ka" if "kty" in text else QUOTED
    secret = "0a1b2c3d4e5f" if "Wallet" in text else secret
    once, count = redact(text.format(secret))
    assert count >= 1 and secret not in once, once


@pytest.mark.parametrize("text", [
    "Postfix offers AUTH CRAM-MD5 and AUTH SCRAM-SHA-256",
    "Use AUTH PLAIN or AUTH XOAUTH2",
    "TENANT_ID=${TENANT_ID:-72f988bf-86f1-41af-91ab-2d7cd011db47}",
    "TOKEN_FILE=${TOKEN_FILE:-/var/run/secrets/token}",
    "SIGNING_KEY_ID=${SIGNING_KEY_ID:-key-2024-01}",
    "The password is Base64-encoded in the Secret; the token is HS256-signed.",
    "api_key: \"#{ENV['API_KEY']}\"",
    "password: '@@DB_PASSWORD@@'",
    "password: \"[[ .Values.password ]]\"",
    "password = {password}",
    "token = {}",
    """assert response.json() == {"auth": '{"auth":"xyz"}'}""",
    '"placeholder_secret": {',
    '"id_pat_example": "([a-zA-Z0-9]{32})",',
    'url: "scope:read@/api/v2"',
    "user bob clicks Settings >Security2024 tab",
    "ssh-keygen -f k -N ''; grep -P 'Version2\\d+'",
    "net use Z: \\\\server\\share /user:DOMAIN\\admin",
    "the tacacs-server key command sets it",
    "snmp-server community public RO",
    "Azure: secret_id: 4a3b2c1d-9f8e-4d7c-8b6a-1234567890ab (the value is kept elsewhere)",
], ids=["SASL mechanisms", "SASL mechanisms 2", "a default id", "a default path", "a default key id",
        "how a password is kept", "Ruby interpolation", "a token file's marker", "double brackets", "a format field",
        "empty braces", "a JSON object", "a block's opening brace", "a pattern named _pat", "a scope, not a DSN", "prose about a user", "a flag of the next command",
        "net use without a password", "prose about a device key", "the default community", "an Azure secret id"])
def test_text_a_third_tester_found_mangled_stays(text):
    assert redact(text) == (text, 0)


def test_a_twilio_call_sid_after_the_account_sid_is_no_auth_token():
    call = "CA" + "0123456789abcdef" * 2
    text, _ = redact('client.calls.create("AC' + "0123456789abcdef" * 2 + f'", "{call}")')
    assert call in text


def test_every_rule_is_named_and_compiled_once():
    """The rule table is the whole policy: unique names, compiled patterns."""
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert any(rule.strict for rule in RULES) and not all(rule.strict for rule in RULES)


def test_at_least_forty_credential_kinds_have_a_rule():
    """The rule table names each credential kind; more than forty of them."""
    assert len(RULES) >= 40


def test_rules_hit_names_the_rules_and_never_the_values():
    """rules_hit reports one rule name per value, in the order found, and no value."""
    text = f"password=hunter2 and {GITHUB['ghp']}"
    names = rules_hit(text)
    assert sorted(names) == ["github_token", "keyword_assignment"]
    assert rules_hit(text, strict_only=True) == ["github_token"]


def test_only_the_sentence_punctuation_after_a_value_stays():
    """A full stop that ends the sentence is not part of the value."""
    assert redact("The password is Tr0ub4dor&3.") == (f"The password is {REDACTED}.", 1)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("DB_PASS=" + "Gw5Hq" + "XDgLVXZ", "DB_PASS=[REDACTED]"),
        ("SMTP_PASS: '" + "x8Yq" + "2kLm'", "SMTP_PASS: '[REDACTED]'"),
        ("mysql -u root -p" + "ZFv1ni" + "UK8iO5 shop", "mysql -u root -p[REDACTED] shop"),
        ("mysql -u root -p shop", "mysql -u root -p shop"),
        ("bypass=cache_only", "bypass=cache_only"),
        ("compass: north", "compass: north"),
    ],
)
def test_short_pass_keys_and_glued_mysql_passwords(text, expected):
    """*_PASS keys and mysql's -pPASSWORD are secrets; words that merely end in "pass" are not."""
    assert redact(text)[0] == expected


# --- URL passwords (issue 13) -------------------------------------------------------------------

URL_PASSWORDS = [
    # (text, expected): "/", "+", "=" inside the password, and percent-encoded URLs
    ("postgres://app:" + "AbC+dEf/GhI=" + "@db/app", f"postgres://app:{REDACTED}@db/app"),
    ("redis://:" + "Xy7/q9Lmk2" + "@cache", f"redis://:{REDACTED}@cache"),
    ("https%3A%2F%2Fu%3A" + "Pass" + "@host", f"https%3A%2F%2Fu%3A{REDACTED}@host"),
    ("next=https%3A%2F%2Fci%3A" + "Xk9%2Fm2%2B" + "%40git.acme.io%2Frepo",
     f"next=https%3A%2F%2Fci%3A{REDACTED}%40git.acme.io%2Frepo"),
    ("next=https%253A%252F%252Fci%253A" + "Xk9m2Lq" + "%2540git.acme.io",
     f"next=https%253A%252F%252Fci%253A{REDACTED}%2540git.acme.io"),
    ("amqp://svc:" + "k/8+Qz==" + "@rabbit:5672/%2F and more", f"amqp://svc:{REDACTED}@rabbit:5672/%2F and more"),
    ("the registry https://ci:" + "Pw9xK2/a" + "@npm.acme.io/@acme/ui",
     f"the registry https://ci:{REDACTED}@npm.acme.io/@acme/ui"),
    ('DATABASE_URL="postgres://app:' + "a/b+c=d9" + '@db.internal/app"',
     f'DATABASE_URL="postgres://app:{REDACTED}@db.internal/app"'),
]


@pytest.mark.parametrize("text, expected", URL_PASSWORDS)
def test_url_password_with_slash_plus_equals_or_percent_encoding_is_replaced(text, expected):
    """A URL password goes even when it holds "/", "+" or "=", and in a percent-encoded URL;
    the scheme, user, host and path stay."""
    assert redact(text) == (expected, 1)


URL_TEMPLATES = [
    "postgres://user:password@localhost:5432/app",
    "https://user:pass@example.com/api",
    "amqp://guest:guest@localhost:5672/",
    "postgres://postgres:postgres@db:5432/test",
    "ftp://user:secret@files.example.org/pub",
    "mysql://root:changeme@127.0.0.1:3306/shop",
    "https://api.acme.io:8443/v2/users/@me",
]


@pytest.mark.parametrize("text", URL_TEMPLATES)
def test_template_credentials_in_urls_stay(text):
    """A URL whose password is a placeholder word, the user name repeated (a default login), or a
    lowercase word on a documentation or local host is a template; a port and a path are no
    password."""
    assert redact(text) == (text, 0)



# --- key-value forms and placeholders (issue 13) -----------------------------------------------

KEY_VALUE_FORMS = [
    # (text, expected): key names of less common services, headers, Korean phrasings
    ("ALGOLIA_ADMIN_KEY=" + HEX32, f"ALGOLIA_ADMIN_KEY={REDACTED}"),
    ("NEW_RELIC_LICENSE_KEY: " + HEX32 + "abcd0123", f"NEW_RELIC_LICENSE_KEY: {REDACTED}"),
    ('"serviceRoleKey": "' + "A1b2" * 8 + '"', f'"serviceRoleKey": "{REDACTED}"'),
    ("SEGMENT_WRITE_KEY=" + "A1b2" * 8, f"SEGMENT_WRITE_KEY={REDACTED}"),
    ("TELEGRAM_API_HASH=" + HEX32, f"TELEGRAM_API_HASH={REDACTED}"),
    ("Ocp-Apim-Subscription-Key: " + HEX32, f"Ocp-Apim-Subscription-Key: {REDACTED}"),
    ("X-RapidAPI-Key: " + "A1b2" * 10, f"X-RapidAPI-Key: {REDACTED}"),
    ("Authorization: KakaoAK " + HEX32, f"Authorization: KakaoAK {REDACTED}"),
    ("Authorization: SSWS 00" + "A1b2_C3d4-" * 4, f"Authorization: SSWS {REDACTED}"),
    ('{"auths": {"ghcr.io": {"auth": "' + "Y2k6QTFiMkMzZDQ=" + '"}}}', f'{{"auths": {{"ghcr.io": {{"auth": "{REDACTED}"}}}}}}'),
    ("시크릿 키는 " + "Xk9mPq2vLz" * 2 + " 입니다.", f"시크릿 키는 {REDACTED} 입니다."),
    ("클라이언트 시크릿: " + "A1b2C3d4E5", f"클라이언트 시크릿: {REDACTED}"),
    ("앱 키 " + HEX32 + " 를 빌드에 넣지 말 것", f"앱 키 {REDACTED} 를 빌드에 넣지 말 것"),
    ("DB 비밀 번호는 Harbor123! 이다", f"DB 비밀 번호는 {REDACTED} 이다"),
    ("Our license key is " + "Xk9mPq2vLz" * 2 + ", keep it internal.", f"Our license key is {REDACTED}, keep it internal."),
]


@pytest.mark.parametrize("text, expected", KEY_VALUE_FORMS)
def test_key_value_forms_of_less_common_services_lose_the_value(text, expected):
    """Key names that end in a credential word (admin, license, write, service-role key, api
    hash, subscription key, X-...-Key), any Authorization scheme, a docker "auth" entry and the
    Korean compounds (시크릿 키, 클라이언트 시크릿, 앱 키, 비밀 번호) lose their value."""
    assert redact(text) == (expected, 1)


PLACEHOLDERS = [
    "SECRET_KEY=your-secret-key-here",
    "api_key: REPLACE_WITH_YOUR_KEY",
    "client_secret=REPLACE_WITH_CLIENT_SECRET",
    "DB_PASSWORD=change_me",
    'token = "dummy-token"',
    'secret: "fake-secret-for-tests"',
    "password: test",
    "X-API-Key: <api-key>",
    "AWS_ACCESS_KEY_ID=" + "AK" + "IA" + "X" * 16,
    "SENDGRID_API_KEY=" + "S" + "G.xxxxx.yyyyy",
    "SLACK_BOT_TOKEN=" + "xo" + "xb-your-bot-token",
    "STRIPE_KEY=" + "sk" + "_live_" + "0" * 24,
    "API_KEY=여기에_키_입력",
    "비밀번호: <비밀번호>",
    "client_key: /etc/ssl/private/client.key",
    "ssh_private_key: ~/.ssh/deploy_ed25519",
    "deploy_key=./keys/deploy.pem",
    "Authorization: required for every route except /healthz",
    "image acme/auth:1.4.2 and the auth: handled by the gateway",
    "앱 키는 카카오 개발자 콘솔의 앱 설정에 있다.",
    "The license key check returned 403 for build 1234.",
    "A" * 120,
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_paths_and_prose_stay(text):
    """Placeholder values (placeholder words, a provider prefix with repeated characters or words),
    the path where a key lives, and prose about keys are not secrets."""
    assert redact(text) == (text, 0)


def test_the_shortcuts_change_no_result(monkeypatch):
    """The two shortcuts of redact change no result: skipping a rule whose needles or gate are
    absent. Every rule run on every text gives the same texts and counts, glued keys included."""
    import random

    import sentinel_memory.redaction.engine as sanitizer
    own = examples("own", "dev")
    rng = random.Random(13)
    secrets = [s for _, _, expected, _ in own for s in expected]
    glued = ["".join(rng.choice(secrets) + rng.choice(["", "=", ":", "-", "_", ".", "/", "@", " ", "%"])
                     for _ in range(rng.randint(2, 4))) for _ in range(500)]
    one_per_kind = list({kind: expected[0] for _, kind, expected, _ in own if expected}.values())
    pairs = [a + sep + b for i, a in enumerate(one_per_kind) for sep in ("", "-")
             for b in (one_per_kind[(i + 1) % len(one_per_kind)], AWS_KEY_ID, GITHUB["ghp"])]
    external = examples("external", "dev") + examples("external", "held-out")
    texts = ([text for text, _, _, _ in own + external] + glued + pairs + ALL_POSITIVES + NEGATIVES
             + [t for t, _ in KEY_VALUE_FORMS] + PLACEHOLDERS + list(HOSTILE.values())
             + ["DB_PASS=" + "Gw5Hq" + "XDgLVXZ", "SMTP_PASS: '" + "x8Yq" + "2kLm'", GOOGLE_API + AWS_KEY_ID])
    quick = {s: [sanitizer._apply(t, s) for t in texts] for s in (False, True)}
    monkeypatch.setattr(sanitizer, "_RUNS", {s: tuple((r, sub, None, (), None) for r, sub, _, _, _ in runs)
                                             for s, runs in sanitizer._RUNS.items()})
    for strict_only in (False, True):
        assert [sanitizer._apply(t, strict_only) for t in texts] == quick[strict_only]


_COMPILED_PROBE = """
import gc, json
from sentinel_memory.redaction import redact
from sentinel_memory.lazy import LazyPattern, _Compiled

def count(kind):
    return sum(isinstance(o, kind) for o in gc.get_objects())

counts, outputs = [count(_Compiled)], []
for text in ("the deploy moved to Friday", "the .env had password=Hunter2Xy9 for staging", "a second " + KEY):
    outputs.append(redact(text))
    counts.append(count(_Compiled))
outputs.append(redact("a second " + KEY))  # the same rules again: nothing more to compile
counts.append(count(_Compiled))
print(json.dumps({"patterns": count(LazyPattern) + counts[-1], "compiled": counts, "outputs": outputs}))
"""


def test_patterns_compile_on_first_use_not_on_import():
    """Importing the redaction package compiles none of its patterns, so a process that imports it
    and never redacts pays nothing for them; a text compiles only the patterns of the rules it
    reaches (plain prose: a handful of the hundreds), and a rule compiled once is not again."""
    import subprocess
    import sys

    from conftest import ROOT

    probe = _COMPILED_PROBE.replace("KEY", repr(GITHUB["ghp"]))
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    patterns, compiled = seen["patterns"], seen["compiled"]
    assert patterns > 100, seen  # the rules' patterns are lazy ones
    assert compiled[0] == 0, seen
    assert 0 < compiled[1] < patterns // 10, seen
    assert compiled[1] < compiled[2] < compiled[3] < patterns // 2, seen
    assert compiled[4] == compiled[3], seen
    assert seen["outputs"] == [
        ["the deploy moved to Friday", 0],
        ["the .env had password=[REDACTED] for staging", 1],
        ["a second [REDACTED]", 1],
        ["a second [REDACTED]", 1],
    ]


@pytest.mark.parametrize("key", [*GITHUB.values(), GITHUB_PAT])
def test_a_github_token_with_a_hyphen_after_it_is_replaced(key):
    """A hyphen is no character of a classic or fine-grained GitHub token: `<token>-ci` (a name
    someone gave the token) is the token and a word after it."""
    assert redact(f"use {key}-ci for the runners") == (f"use {REDACTED}-ci for the runners", 1)
