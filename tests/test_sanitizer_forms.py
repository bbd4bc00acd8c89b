"""Redaction of the forms other scanners' tests exercise (gitleaks, trufflehog, detect-secrets,
secretlint): key names of services we do not list, more assignment operators and quoting, settings
named apart from their value, and more provider formats. Every fake is assembled at run time."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from sentinel_memory.redaction.engine import REDACTED, redact

_R = random.Random(7)


def rand(alphabet: str, n: int) -> str:
    while True:
        v = "".join(_R.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
            return v


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
LOWNUM = string.ascii_lowercase + string.digits


def gone(text: str, secret: str) -> bool:
    out, count = redact(text)
    return secret not in out and REDACTED in out and count >= 1


# --- a name that only ends in "key": a service we do not list ---------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"DATADOG_KEY={v}",
    lambda v: f'lobKey: "{v}"',
    lambda v: f'{{"heroku.key": "{v}"}}',
    lambda v: f"$env:MAILJET_KEY = \"{v}\"",
    lambda v: f"openweather-key: '{v}'",
])
@pytest.mark.parametrize("value", [lambda: rand(HEX, 32), lambda: str(uuid.UUID(int=_R.getrandbits(128))),
                                   lambda: rand(ALNUM, 40), lambda: rand(HEX, 8) + ":" + rand(HEX, 8)])
def test_a_random_value_after_any_name_ending_in_key_is_replaced(make, value):
    v = value()
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    f'cache_key = "{"3f9a" * 8}"',
    'primaryKey: "order_id"',
    f"PUBLIC_KEY={'ab12' * 16}",
    'sort_key = "1700000000#a1b2c3"',
    "idempotency_key: 550e8400-e29b-41d4-a716-446655440000",
    'object_key = "uploads/2024/f00d.png"',
    "i18n_key = \"settings.datadog.api_key.label\"",
    "DATADOG_KEY=<your-datadog-key>",
    "monkey = 'ThisIsNotAKeyAtAll'",
])
def test_ordinary_keys_and_placeholders_stay(text):
    assert redact(text) == (text, 0)


# --- operators, quoting and types around a credential's name --------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f'DB_PASSWORD ?= "{v}"',
    lambda v: f'API_TOKEN ::= "{v}"',
    lambda v: f'$client_secret .= "{v}";',
    lambda v: f'token ||= "{v}"',
    lambda v: f'if (api_key == "{v}") {{ return true; }}',
    lambda v: f'if (password !== "{v}")',
    lambda v: f'password = @"{v}";',
    lambda v: f'var github_token string = "{v}"',
    lambda v: f'val apiSecret: String = "{v}"',
    lambda v: f'char secret[25] = "{v}";',
    lambda v: f'ENV["STRIPE_TOKEN"] = "{v}"',
    lambda v: f"slack token - '{v}'",
    lambda v: f"twitch key - '{v}'",
])
def test_a_secret_behind_other_operators_and_quotes_is_replaced(make):
    v = rand(ALNUM, 24)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "if token == expected: return",
    "assert password != confirm",
    'if (token == "") { retry(); }',
    "var token_type string = \"bearer\"",
    "the token - it expires hourly",
])
def test_comparisons_and_code_without_a_value_stay(text):
    assert redact(text) == (text, 0)


# --- a setting named apart from its value ----------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f'- name: SENTRY_AUTH_TOKEN\n  value: "{v}"',
    lambda v: f'<add key="ApiSecret" value="{v}" />',
    lambda v: f'{{"name": "OPENAI_API_KEY", "value": "{v}"}}',
    lambda v: f'System.setProperty("ZENDESK_TOKEN", "{v}");',
    lambda v: f'os.Setenv("ALGOLIA_KEY", "{v}")',
    lambda v: f'if ("{v}" == db_password) {{',
    lambda v: f"ENV NPM_TOKEN {v}",
    lambda v: f"set -gx OPENAI_API_KEY {v}",
])
def test_a_value_named_by_a_setting_beside_it_is_replaced(make):
    v = rand(ALNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "- name: LOG_LEVEL\n  value: debug",
    '<add key="Theme" value="dark" />',
    '- name: API_TOKEN\n  value: "${API_TOKEN}"',
    'System.setProperty("TOKEN_URL", "https://auth.internal/token");',
    "ENV NODE_ENV production",
    'cfg.put("cache_key", "user:42:profile")',
])
def test_settings_without_a_secret_stay(text):
    assert redact(text) == (text, 0)


# --- Korean -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"콘솔에서 발급한 키 {v} 를 환경 변수에 넣었다",
    lambda v: f'환경 변수 FINNHUB_KEY 값이 "{v}" 로 하드코딩되어 있었다',
    lambda v: f"azure openai 키: {v}",
])
def test_korean_forms_name_the_value(make):
    v = rand(LOWNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", ["정렬 키: created_at", "기본 키는 id 이다", "키 높이는 180 이다"])
def test_korean_key_words_for_ordinary_keys_stay(text):
    assert redact(text) == (text, 0)


# --- formats with their own prefix ------------------------------------------------------------------

PREFIXED = [
    lambda: "ts" + "key-api-" + rand(ALNUM, 12) + "-" + rand(ALNUM, 28),
    lambda: "FLW" + "SECK_TEST-" + rand(HEX, 32) + "-X",
    lambda: "AP" + "I-" + rand(string.ascii_uppercase + string.digits, 26),
    lambda: "sm" + "_pat_" + rand(LOWNUM, 16),
    lambda: "dn" + "key-" + rand(LOWNUM, 26) + "-" + rand(LOWNUM, 52),
    lambda: "dG9y" [:3] + "rOj" + rand(ALNUM + "+/", 54) + "=",
    lambda: "s" + "c_" + rand(LOWNUM, 20) + "." + rand(LOWNUM, 5) + ".acc_" + rand(LOWNUM, 24) + "." + rand(ALNUM, 60),
    lambda: "NR" + "JS-" + rand(HEX, 19),
    lambda: "NR" + "IQ-" + rand(ALNUM, 32),
]


@pytest.mark.parametrize("make", PREFIXED)
def test_prefixed_formats_are_replaced_in_any_field(make):
    v = make()
    text = f"The CI job printed {v} in its log; rotate it."
    assert gone(text, v)
    assert v not in redact(text, strict_only=True)[0]


def test_a_snake_case_prefix_with_a_long_random_tail_is_a_token_not_a_name():
    v = "li" + "ve_" + rand(HEX, 35)
    assert gone(f"lob api token - '{v}'", v)
    assert redact("the token is refresh_token_v2 now") == ("the token is refresh_token_v2 now", 0)


# --- XML elements, YAML blocks, properties, escaped JSON, SQL, docker login ----------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"<OKTA_APP_SECRET>{v}</OKTA_APP_SECRET>",
    lambda v: f"<cloudflare-api-secret>\n\t{v}\n</cloudflare-api-secret>",
    lambda v: f"<messagebird.access_token>{v}</messagebird.access_token>",
    lambda v: f"<DATADOG_KEY>{v}</DATADOG_KEY>",
    lambda v: f"sentry_token: |\n  {v}\nnext: 1",
    lambda v: f"java -Ddatadog.api.key={v} -jar service.jar",
    lambda v: 'payload = "{\\"api_key\\": \\"' + v + '\\"}"',
    lambda v: f"ALTER USER app_svc IDENTIFIED BY '{v}';",
    lambda v: f"docker login -u ci -p {v} registry.internal",
    lambda v: f"CI 변수 TWITCH_PRIVATE_KEY 에 {v} 를 넣어 두었다",
    lambda v: f"datadog 키는 {v} 로 바뀌었다",
])
def test_secrets_in_elements_blocks_properties_and_commands_are_replaced(make):
    v = rand(ALNUM, 30)
    assert gone(make(v), v)


def test_twenty_to_thirty_one_hex_digits_after_a_key_name_are_a_key():
    v = rand(HEX, 30)
    assert gone(f"PLAID_KEY={v}", v)
    assert redact("ORDER_KEY=20240101") == ("ORDER_KEY=20240101", 0)


@pytest.mark.parametrize("text", [
    "<ApiKeyHeader>X-Api-Key</ApiKeyHeader>",
    "<secretName>app-secrets</secretName>",
    "<password>${DB_PASSWORD}</password>",
    f"<app_cache_key>{'3f9a' * 8}</app_cache_key>",
    "description: |\n  the token is rotated by the nightly job",
    "docker run -p 8080:80 app",
    "java -Ddatadog.api.key.header=X-Api-Key -jar service.jar",
    "CI 변수 DATADOG_API_KEY 에 값을 넣어 두었다",
    "ALTER USER app IDENTIFIED BY PASSWORD;",
])
def test_look_alikes_of_those_forms_stay(text):
    assert redact(text) == (text, 0)


# --- sentences, Markdown, secret stores' command lines ---------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"Set DATADOG_API_KEY to {v} in the CI settings.",
    lambda v: f"| SENTRY_AUTH_TOKEN | {v} | prod |",
    lambda v: f"**smtp.pass**: `{v}`",
    lambda v: f"token := `{v}`",
    lambda v: f'gh secret set NPM_TOKEN --body "{v}"',
    lambda v: f"aws secretsmanager create-secret --name app/prod --secret-string '{v}'",
    lambda v: f"The datadog key is {v}.",
    lambda v: f"The password for the staging db is {v}",
    lambda v: f"The key for the mailjet account is {v}",
    lambda v: f"The access token was rotated to {v} yesterday.",
    lambda v: f"acme-cli login --acme-key {v}",
    lambda v: f"//registry.internal/:_auth={v}",
])
def test_secrets_named_in_sentences_tables_and_store_commands_are_replaced(make):
    v = rand(ALNUM, 28)
    assert gone(make(v), v)


def test_thirty_hex_digits_stated_in_a_sentence_are_a_key():
    v = rand(HEX, 30)
    assert gone(f"The plaid access token was rotated to {v} yesterday.", v)


@pytest.mark.parametrize("text", [
    "Set TOKEN_TTL to 3600 in the CI settings.",
    "| API_KEY | required | string |",
    "**Password**: see the vault",
    'gh secret set API_TOKEN --body "$API_TOKEN"',
    f"The cache key is {'3f9a' * 8}.",
    "The primary key is order_id.",
    "The password for the admin account is in 1Password.",
    "The token was rotated to fix the leak.",
    "mycli --ssh-key ~/.ssh/id_ed25519",
    "basic_auth = true",
    "Set API_TOKEN to the value from the vault.",
    f'cache_key = "{"ab12" * 8}"',
])
def test_sentences_and_tables_without_a_secret_stay(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("text", [
    "The feature flag key is checkout-redesign-2025.",
    "DATADOG_KEY=release_2025_q3",
    "The translation key is settings.billing.title",
])
def test_a_name_made_of_words_and_numbers_after_a_key_is_not_a_secret(text):
    assert redact(text) == (text, 0)


# --- a value before its name, a lone `key:` under a service's section ------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"Stored {v} as DATADOG_API_KEY in the CI secrets.",
    lambda v: f"{v} 를 SIDEKIQ_API_SECRET 에 넣고 재배포했다",
    lambda v: f"sendgrid:\n  key: {v}\n  region: eu",
    lambda v: f"[acme]\nkey = {v}",
    lambda v: f"The beamer key was rotated to {v} yesterday.",
])
def test_a_value_before_its_name_or_under_a_section_is_replaced(make):
    v = rand(ALNUM, 30)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    f"Pinned {'9f86d081884c7d65' * 2} as the base image, then rotated the token.",
    f"커밋 {'9f86d081884c7d65' * 2} 를 토큰 교체 기준으로 삼았다",
    f"Moved {'9f86d081884c7d65' * 2} in the cache_key rotation.",
    "- key: app.kubernetes.io/name\n  value: api",
    "key: ${{ runner.os }}-npm-${{ hashFiles('**/package-lock.json') }}",
    "[keys]\nkey = left-arrow",
    "Use the key A1b2C3d4 to open the door.",
])
def test_values_next_to_names_that_do_not_hold_them_stay(text):
    assert redact(text) == (text, 0)


def test_a_yaml_block_keeps_its_indicator_and_redacting_again_changes_nothing():
    v = rand(ALNUM, 30)
    once, count = redact(f"fastlySecret: |\n  {v}\nnext: 1")
    assert once == f"fastlySecret: |\n  {REDACTED}\nnext: 1" and count == 1
    assert redact(once) == (once, 0)


def test_every_text_of_the_external_corpus_is_a_fixed_point_once_redacted():
    from corpora import examples

    for text, _, _, _ in examples("external", "dev") + examples("external", "held-out"):
        for strict_only in (False, True):
            once = redact(text, strict_only=strict_only)[0]
            assert redact(once, strict_only=strict_only) == (once, 0), text


# --- a token as a URL's user, Oracle and .pgpass logins, a bearer flag, a word before the colon -------

@pytest.mark.parametrize("make", [
    lambda v: f"git clone https://{v}@git.internal/acme/app.git",
    lambda v: f"curl --oauth2-bearer {v} https://api.internal/v1/me",
    lambda v: f"jdbc:oracle:thin:acme_app/{v}@db.internal:1521/ORCL",
    lambda v: f"sqlplus scott/{v}@orcl",
    lambda v: f"db.internal:5432:app:app_user:{v}",
    lambda v: f"acme 토큰 재발급: {v}",
    lambda v: f"The zendesk key (new): {v}",
])
def test_logins_and_labelled_values_are_replaced(make):
    v = rand(ALNUM, 30)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "git clone https://git@git.internal/app.git",
    "localhost:5432:*:*:*",
    "10:30:45:12:xyz happened in the log",
    "sqlplus scott/${ORACLE_PASSWORD}@orcl",
    "토큰 만료: 3600초",
    "The token (old): revoked yesterday",
    "Kubernetes secret name: payments-db-creds-v2 in namespace payments.",
    "The token policy: rotate-every-90d",
    "토큰 이름: ci-deploy-2025",
    "https://user@example.com/profile",
    "sentry dsn https://" + "0123456789abcdef" * 2 + "@o123456.ingest.sentry.io/1234567",
])
def test_look_alikes_of_logins_and_labels_stay(text):
    assert redact(text) == (text, 0)


# --- a suffix after the key word ----------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda v: f"DB_PASSWORD_PROD={v}",
    lambda v: f'stripe_secret_key_staging: "{v}"',
    lambda v: f"SECRET_KEY_BASE={v}",
    lambda v: f"github_token_ci = '{v}'",
])
def test_a_key_word_with_an_environment_suffix_names_a_secret(make):
    v = rand(ALNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "API_KEY_ID=AB12CD34EF56GH78IJ90",
    "TOKEN_URL=https://auth.internal/oauth/token",
    "PASSWORD_MIN_LENGTH=12",
    "token_count: 18432",
    "password_hash = make_password(raw)",
    "API_TOKEN_PROD=${{ secrets.API_TOKEN_PROD }}",
    "SECRET_NAME_PREFIX=prod/app",
])
def test_a_key_word_with_a_suffix_that_names_something_else_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("name", ["DJANGO_SECRET_KEY", "SECRET_KEY", "app_secret_key"])
def test_a_key_name_that_ends_in_a_key_word_is_not_read_as_a_word_and_a_suffix(name):
    v = "9#" + "k$"  # short and all symbols: a secret after SECRET_KEY (a & ends the bare value)
    assert gone(f"{name}={v}&%c(tk84s in plain text", v)


# --- how people write a value down: named after it, beside an env var's name, tables, lists -------------

def uid() -> str:
    return str(uuid.UUID(int=_R.getrandbits(128)))


@pytest.mark.parametrize("make", [
    lambda v: f"{v} is the snyk token.",
    lambda v: f"ok so I used {v} as the db password and it worked",
    lambda v: f"@ops can you rotate {v}? it's the okta key from staging",
    lambda v: f"{v} <- etsy access token, revoke after the demo",
    lambda v: f"{v}을 sumo 시크릿 키로 쓰면 됩니다",
    lambda v: f"`{v}` was the launchdarkly secret until Monday",
])
def test_a_value_named_after_it_in_a_sentence_goes(make):
    for v in (rand(ALNUM, 28), uid(), rand(HEX, 40)):
        assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "0f3a9c1d2b7e is the commit that fixed the token refresh.",
    uid() + " is the request id of the failed token call.",
    "v2.14.3 is the release with the new token cache.",
    "order-service-prod is the name of the secret.",
    rand(HEX, 40) + " is the cache key for the session.",
    "pk_" + rand(ALNUM, 24) + " is the public key of the widget.",
    "<YOUR_API_KEY> is the placeholder for your token.",
    "배포 커밋 " + rand(HEX, 40) + "을 기준으로 토큰 갱신을 확인했다",
])
def test_a_hash_an_id_or_a_name_before_a_credential_word_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f'apiKey := os.Getenv("ETHEREUM_API_KEY") // was "{v}"',
    lambda v: f'var key = Environment.GetEnvironmentVariable("NUGET_API_KEY") ?? "{v}";',
    lambda v: f"token = os.environ.get('SQUARESPACE_TOKEN', '{v}')",
])
def test_a_default_beside_an_environment_variables_name_goes(make):
    v = rand(ALNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    'token := os.Getenv("API_TOKEN") // was "changeme"',
    'region := os.Getenv("AWS_REGION") // was "' + rand(ALNUM, 20) + '"',
    "secret = os.environ.get('APP_SECRET', '')",
])
def test_an_environment_default_that_is_no_secret_stays(text):
    assert redact(text) == (text, 0)


def test_a_cell_under_a_credential_column_of_a_markdown_table_goes():
    values = [uid(), rand(HEX, 32), rand(ALNUM, 24)]
    rows = "".join(f"| {svc} | {v} | eu |\n" for svc, v in zip(["snyk", "trello", "looker"], values, strict=True))
    text = "| Service | API Key | Region |\n|---|:---:|---|\n" + rows
    out, count = redact(text)
    assert count == 3 and not any(v in out for v in values)
    assert "| snyk |" in out and "| eu |" in out and "| Service | API Key |" in out


@pytest.mark.parametrize("text", [
    "| Build | Commit | Status |\n|---|---|---|\n| 1412 | " + rand(HEX, 40) + " | passed |",
    "| Service | Key |\n|---|---|\n| stripe | <YOUR_STRIPE_KEY> |",
    "| name | token |\n|---|---|\n| ci | ${{ secrets.CI_TOKEN }} |",
    "| Service | Key | Owner |\n|---|---|---|\n| snyk | see vault | " + rand(HEX, 40) + " |",
])
def test_a_markdown_table_without_a_secret_in_a_credential_column_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"* etsy: `{v}`",
    lambda v: f"- **cloudflare**: `{v}`",
    lambda v: f"notes\n  + twitter: `{v}`",
])
def test_a_list_item_that_names_a_generated_value_goes(make):
    v = rand(LOWNUM, 22) + "7q"  # (two digits at least, as a generated value of this length has 49 times in 50)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "- fixed in: `" + rand(HEX, 12) + "`",
    "* commit: `" + rand(HEX, 40) + "`",
    "* build id: `" + rand(LOWNUM, 24) + "`",
    "* image: `ghcr.io/acme/api:1.4.2`",
    "- sendbird: `" + rand(HEX, 40) + "`",  # the shape of a commit: kept in a list
    "* flag: `new-checkout-flow-2024`",
])
def test_a_list_item_with_a_hash_an_id_or_a_name_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"datadog 토큰이 {v}인데 권한이 부족함",
    lambda v: f"ipstack 시크릿가 {v}으로 설정돼 있음",
    lambda v: f"meraki 토큰은 {v}입니다.",
    lambda v: f"bitbucket 키가 {v}로 바뀜",
])
def test_a_korean_copula_glued_to_a_hex_or_uuid_value_states_it(make):
    for v in (rand(HEX, 40), uid()):
        assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "토큰이 " + uid() + " 요청에서 만료됨",
    "커밋이 " + rand(HEX, 40) + "인데 아직 배포 안 됨",
    "키가 " + rand(HEX, 32) + "로 계산된다 (캐시)",
])
def test_a_korean_sentence_about_an_id_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"SMTP_PASS 값: {v}",
    lambda v: f"helm upgrade api ./chart --set redis.redisPass={v}",
    lambda v: f'{{"smtpPass": "{v}"}}',
])
def test_a_value_after_a_korean_label_or_a_camel_case_pass_goes(make):
    v = rand(ALNUM, 14) + "*"
    assert gone(make(v), v)


@pytest.mark.parametrize("text", ["compassRose = 12", "byPassCache: true", "bootPassCount=3", "SurPass: none"])
def test_pass_inside_a_word_is_no_key_name(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"{v} (algolia API key)",
    lambda v: f"password for smtp -> {v}",
    lambda v: f"ethereum API 키 → {v}",
    lambda v: f"here's the okta key `{v}` - keep it safe",
    lambda v: f"Rotated the travis key {v} today; the old one is revoked.",
    lambda v: f"{v} 이게 freshbooks 시크릿 키임",
    lambda v: f"codecov 비번 {v} 으로 로그인 성공",
])
def test_arrows_brackets_and_a_key_word_right_before_a_value(make):
    v = rand(ALNUM, 30)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "Rotated the cache key " + rand(ALNUM, 30) + " today.",
    "the key " + rand(HEX, 40) + " is a commit, not a key",
    "node -> " + rand(ALNUM, 20) + " (the next hop)",
    "release-2024-q3 (the key date)",
    "토큰 조회는 " + uid() + " 요청에서 실패",
])
def test_look_alikes_of_arrows_and_brackets_stay(text):
    assert redact(text) == (text, 0)


def test_a_csv_column_headed_by_a_key_name_goes():
    a, b = rand(LOWNUM, 32), rand(ALNUM, 40)
    text = f"service,datadog_api_key,owner\ndatadog,{a},ops\nokta,{b},sec"
    out, count = redact(text)
    assert count == 2 and a not in out and b not in out and "service,datadog_api_key,owner" in out


@pytest.mark.parametrize("text", [
    "service,commit,owner\napi," + rand(HEX, 40) + ",ops",
    "name,api_key,owner\nstripe,<YOUR_KEY>,ops",
    "id,token_count,ts\n" + uid() + ",18432,2024-01-02T10:11:12Z",
    "a,b\nkey_id," + rand(ALNUM, 20),
])
def test_a_csv_without_a_secret_in_a_credential_column_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f'requests.post(url, auth=("api", "{v}"))',
    lambda v: f"session.auth = ('deploy', '{v}')",
    lambda v: f'req.SetBasicAuth("ci", "{v}")',
    lambda v: f'HTTPBasicAuth("admin", "{v}")',
])
def test_the_password_of_an_http_clients_login_pair_goes(make):
    v = rand(ALNUM, 22)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    'requests.get(url, auth=("user", os.environ["PASSWORD"]))',
    'auth=("api", "<your-token>")',
    'oauth_scopes = ("read", "write_all")',
])
def test_a_login_pair_without_a_password_literal_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f'client.setApiKey("{v}");',
    lambda v: f'let client = Client::new().bearer_auth("{v}");',
    lambda v: f"twitch.with_token('{v}')",
    lambda v: f'new NetworkCredential("svc-travis", "{v}")',
])
def test_a_call_that_sets_a_credential_from_a_literal_goes(make):
    v = rand(ALNUM, 30)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    'token = vault.getToken("payments-prod-2024")',
    "secret = read_secret('kv/data/app/stripe')",
    'keyring.get_password("svc", "deploy-user-01")',
    'validateToken("' + rand(ALNUM, 30) + '")',
    'client.setApiKey("<YOUR_API_KEY>");',
])
def test_a_getter_or_a_placeholder_in_a_call_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"Okta key\n{v}\nCopy this now; it will not be shown again.",
    lambda v: f"zendesk 키\n{v}\n(다시 표시되지 않음)",
    lambda v: f"## Personal access token\n\n`{v}`".replace("\n\n", "\n"),
])
def test_a_label_line_then_the_value_alone_on_the_next_goes(make):
    v = rand(ALNUM, 36)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "Cache key\n" + rand(ALNUM, 36),
    "Fix the token refresh\n" + rand(HEX, 40),
    "## Token\nSee the vault entry payments/prod.",
])
def test_a_label_line_over_an_ordinary_key_or_prose_stays(text):
    assert redact(text) == (text, 0)


def test_sql_rows_under_a_credential_column_and_named_settings_go():
    a, b = rand(ALNUM, 32), rand(ALNUM, 40)
    insert = f"INSERT INTO api_keys (service, etsy_token, owner) VALUES ('etsy', '{a}', 'ops-team');"
    out, count = redact(insert)
    assert count == 1 and a not in out and "'etsy'" in out and "'ops-team'" in out
    update = f"UPDATE settings SET value = '{b}' WHERE name = 'nytimes_api_key';"
    assert gone(update, b)


@pytest.mark.parametrize("text", [
    "INSERT INTO commits (repo, sha) VALUES ('api', '" + rand(HEX, 40) + "');",
    "INSERT INTO tokens (name, token_ttl) VALUES ('ci', '3600');",
    "UPDATE settings SET value = '" + rand(ALNUM, 20) + "' WHERE name = 'region';",
])
def test_sql_without_a_credential_column_stays(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"{{\"Datadog API Key\": \"{v}\"}}",
    lambda v: f"algolia pw: {v}",
    lambda v: f"ethereum에서 받은 키: {v}",
    lambda v: f"{v} ← cohere 토큰",
])
def test_spaced_key_names_pw_and_korean_received_keys(make):
    v = rand(ALNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("template", [
    "The key for the mailjet account is {v}",
    "DATADOG_KEY={v}",
    "Rotated the travis key {v} today.",
])
def test_a_generated_value_with_a_single_digit_is_still_generated(template):
    v = "jsNOBAGx5diFoNPc" + "bdaKwtgHwIoA"  # 28 letters of both cases and one digit
    assert gone(template.format(v=v), v)


@pytest.mark.parametrize("template", [
    '$env:SUMO_KEY = "{v}"',
    "The smtp key is {v}.",
])
def test_a_short_generated_value_with_a_single_digit_is_still_generated(template):
    v = "suuVLjHiq" + "0sbrQ"  # 14 characters of both cases, one digit: a third of such draws
    assert gone(template.format(v=v), v)


@pytest.mark.parametrize("text", [
    "DATADOG_KEY=ParseHTTPResponseBody2",
    "CACHE_KEY=UserProfileCache1",
    "the flag key is EnableDarkMode7",
    "The key for the flag is NewCheckoutFlowEnabled1",
    "api_key_name: abcdefghijklmnopqrs1",
])
def test_camel_case_words_with_one_digit_stay(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"npm config set //registry.internal/:_authToken {v}",
    lambda v: f"git config --global looker.token {v}",
    lambda v: f"the snyk key's {v}",
    lambda v: f"etsy 토큰 알려드립니다: {v}",
    lambda v: f"nuget용 키: `{v}`",
    lambda v: f"키 값 {v} (heroku)",
    lambda v: f"GET https://maps.internal/api/geocode?address=x&key={v}&format=json",
])
def test_config_commands_possessives_korean_predicates_and_query_keys(make):
    v = rand(ALNUM, 32)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "토큰 이름: ci-deploy-2025",
    "캐시 키 값 " + rand(HEX, 40),
    "git config --global user.name ci-bot-2024",
    "https://shop.internal/search?key=red-shoes-2024&page=2",
    "the token's expiry is 3600",
])
def test_their_look_alikes_stay(text):
    assert redact(text) == (text, 0)


@pytest.mark.parametrize("make", [
    lambda v: f"**Cohere token:** {v}",
    lambda v: f"| **key** | `{v}` |",
    lambda v: f"| Algolia API key | {v} |",
])
def test_bold_labels_and_two_column_tables_of_names_and_values(make):
    v = rand(LOWNUM, 30)
    assert gone(make(v), v)


@pytest.mark.parametrize("text", [
    "| **cache key** | `user:1234:profile` |",
    "| token | expires in 3600 s |",
    "**Token:** see the vault entry",
])
def test_tables_of_names_and_values_without_a_secret_stay(text):
    assert redact(text) == (text, 0)
