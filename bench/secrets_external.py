"""A redaction corpus built from what other scanners test, not from what our rules know.

Sources (read, not copied): the rule tests of gitleaks (MIT; cmd/generate/config/rules/*.go:
their value shapes and the sample formats of cmd/generate/config/utils/generate.go), the detector
tests of trufflehog (AGPL-3.0; pkg/detectors/*/*_test.go: value shapes and the way the tests put a
service name, a key word and a value together), the plugin tests and test data of detect-secrets
(Apache-2.0; tests/plugins/keyword_test.py: the assignment and comparison forms of many languages)
and the rule snapshots of secretlint (MIT; packages/@secretlint/secretlint-rule-*/test). From them
this file takes only facts: which services they look for, the length, alphabet and prefix of each
value, and the kinds of context (operators, quoting, key-name styles) their tests exercise. No
file, sentence or value of theirs is reproduced: every value here is drawn fresh from a seeded
generator with the shape alone (fixture values can be real), and every sentence is our own,
written as a coding agent writes a lesson, in English and Korean. Prefixes are split from bodies
so that scanners run on this repository stay quiet.

Two parts with their own seeds and their own sentences and key-name styles:

    external("dev")       the part the rules may be tuned on
    external("heldout")   never tuned on: run to report a figure; its misses are not printed

Negatives come from the false-positive samples of the same tests, again as shapes and kinds:
placeholders in the same contexts, hashes and ids under ordinary names, versions, code that
handles a token without holding one, public keys and publishable tokens, image data, prose.

    python bench/secrets_external.py      # counts per part
"""

from __future__ import annotations

import base64
import hashlib
import random
import uuid

try:
    from secrets_corpus import ALNUM, B64, B64URL, DIGITS, HEX, LOWER, UPPER, Example
except ImportError:  # imported as bench.secrets_external (the tests)
    from bench.secrets_corpus import ALNUM, B64, B64URL, DIGITS, HEX, LOWER, UPPER, Example

SEEDS = {"dev": 4401, "heldout": 90210}
LOWNUM = LOWER + DIGITS


class _F:
    def __init__(self, rng: random.Random):
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def m(self, n: int, alphabet: str = ALNUM) -> str:
        """n characters of alphabet holding a letter and a digit (and both cases if it has them)."""
        while True:
            v = self.s(alphabet, n)
            ok = any(c.isdigit() for c in v) and any(c.isalpha() for c in v)
            if any(c.isupper() for c in alphabet) and any(c.islower() for c in alphabet):
                ok = ok and any(c.isupper() for c in v) and any(c.islower() for c in v)
            if ok:
                return v

    def uid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128)))

    def pw(self) -> str:
        return self.r.choice([
            self.m(14) + self.r.choice("!#%&*?"),
            self.s(LOWER, 5) + self.s(DIGITS, 3) + self.s(UPPER, 3) + self.r.choice("@$^~"),
            self.m(20, ALNUM + "+/") + "=",
        ])


# --- kinds: (kind, service identifier, value maker, whether the value's own shape marks it) ------
# The last field is True only for shapes a scanner finds without any context (a distinctive
# prefix); values that gitleaks and trufflehog find only next to the service's name get key names.

def _kinds(f: _F) -> list[tuple[str, str, callable, bool]]:
    s, m, uid = f.s, f.m, f.uid
    r = f.r
    return [
        # fixed prefixes (gitleaks, secretlint, trufflehog)
        ("tailscale_key", "tailscale", lambda: "tskey-" + r.choice(["api", "auth", "client", "scim", "webhook"])
         + "-" + m(12) + "-" + m(30), True),
        ("github_pat", "github", lambda: "gh" + "p_" + m(36), True),
        ("github_app_token", "github", lambda: "gh" + r.choice("su") + "_" + m(36), True),
        ("gitlab_pat", "gitlab", lambda: "gl" + "pat-" + s(B64URL, 20), True),
        ("slack_user_token", "slack", lambda: "xo" + "xp-" + s(DIGITS, 11) + "-" + s(DIGITS, 11) + "-"
         + s(DIGITS, 12) + "-" + s(HEX, 32), True),
        ("slack_app_token", "slack", lambda: "xa" + "pp-1-A" + s(UPPER + DIGITS, 10) + "-" + s(DIGITS, 13) + "-"
         + s(HEX, 64), True),
        ("stripe_restricted", "stripe", lambda: "rk" + "_live_" + m(24), True),
        ("openai_key", "openai", lambda: "sk" + "-proj-" + s(B64URL, 58) + "T3Blbk" + "FJ" + s(B64URL, 58), True),
        ("anthropic_admin_key", "anthropic", lambda: "sk" + "-ant-admin01-" + s(B64URL, 93) + "AA", True),
        ("huggingface_token", "huggingface", lambda: "h" + "f_" + s(LOWER + UPPER, 34), True),
        ("npm_token", "npm", lambda: "np" + "m_" + m(36), True),
        ("pypi_token", "pypi", lambda: "py" + "pi-AgEIcHlwaS5vcmc" + s(B64URL, 70), True),
        ("sendgrid_key", "sendgrid", lambda: "S" + "G." + s(B64URL, 22) + "." + s(B64URL, 43), True),
        ("shopify_access_token", "shopify", lambda: "sh" + "pat_" + s(HEX, 32), True),
        ("digitalocean_pat", "digitalocean", lambda: "do" + "p_v1_" + s(HEX, 64), True),
        ("doppler_token", "doppler", lambda: "dp" + ".pt." + m(43), True),
        ("vault_service_token", "vault", lambda: "hv" + "s." + m(24), True),
        ("vault_batch_token", "vault", lambda: "hv" + "b.AAAAAQ" + s(B64URL, 90), True),
        ("linear_key", "linear", lambda: "lin" + "_api_" + m(40), True),
        ("postman_key", "postman", lambda: "PM" + "AK-" + s(HEX, 24) + "-" + s(HEX, 34), True),
        ("pulumi_token", "pulumi", lambda: "pu" + "l-" + s(HEX, 40), True),
        ("grafana_sa_token", "grafana", lambda: "gl" + "sa_" + m(32) + "_" + s(HEX, 8), True),
        ("grafana_cloud_token", "grafana", lambda: "gl" + "c_" + s(B64, 60) + "==", True),
        ("databricks_token", "databricks", lambda: "da" + "pi" + s(HEX, 32), True),
        ("age_secret_key", "age", lambda: "AGE-" + "SECRET-KEY-1" + s(UPPER + DIGITS, 58), True),
        ("planetscale_password", "planetscale", lambda: "pscale" + "_pw_" + s(B64URL, 43), True),
        ("flutterwave_secret", "flutterwave", lambda: "FLW" + "SECK_TEST-" + s(HEX, 32) + "-X", True),
        ("flutterwave_encryption", "flutterwave", lambda: "FLW" + "SECK_TEST" + s(HEX, 12), True),
        ("newrelic_browser_key", "newrelic", lambda: "NR" + "JS-" + s(HEX, 19), True),
        ("newrelic_insights_key", "newrelic", lambda: "NR" + "IQ-" + s(B64URL, 32), True),
        ("octopus_deploy_key", "octopus", lambda: "AP" + "I-" + s(UPPER + DIGITS, 26), True),
        ("settlemint_token", "settlemint", lambda: "sm" + "_" + r.choice(["pat", "aat", "sat"]) + "_" + s(LOWNUM, 16), True),
        ("defined_networking_key", "dnkey", lambda: "dn" + "key-" + s(LOWNUM, 26) + "-" + s(LOWNUM, 52), True),
        ("lob_live_key", "lob", lambda: "li" + "ve_" + s(HEX, 35), False),
        ("gocardless_token", "gocardless", lambda: "li" + "ve_" + s(B64URL, 40), False),
        ("intercom_token", "intercom", lambda: "dG9r" + "Oj" + s(B64, 54) + "=", True),
        ("yandex_aws_key", "yandex", lambda: "Y" + "C" + s(B64URL, 38), False),
        ("okta_token", "okta", lambda: "0" + "0" + s(B64URL, 40), False),
        ("sumologic_access_id", "sumo", lambda: "s" + "u" + m(12), False),
        ("authress_key", "authress", lambda: "s" + "c_" + s(LOWNUM, 20) + "." + s(LOWNUM, 5) + ".acc_" + s(LOWNUM, 24)
         + "." + s(B64URL, 60), True),
        ("beamer_key", "beamer", lambda: "b" + "_" + s(B64URL[:-1] + "=", 44), False),
        ("mapbox_secret", "mapbox", lambda: "s" + "k.eyJ" + s(B64URL, 60) + "." + s(B64URL, 22), True),
        ("twitter_access_token", "twitter", lambda: s(DIGITS, 19) + "-" + m(40), False),
        ("discord_bot_token", "discord", lambda: "M" + s(B64URL[:-2], 25) + "." + s(B64URL, 6) + "." + s(B64URL, 38), True),
        ("telegram_bot_token", "telegram", lambda: s(DIGITS, 10) + ":A" + s(B64URL, 34), True),
        ("sidekiq_secret", "sidekiq", lambda: s(HEX, 8) + ":" + s(HEX, 8), False),
        ("ethereum_private_key", "ethereum", lambda: "0x" + s(HEX, 64), False),
        # no prefix: the service's name is the only context (gitleaks' semi-generic rules, trufflehog)
        ("algolia_key", "algolia", lambda: s(LOWNUM, 32), False),
        ("datadog_key", "datadog", lambda: s(HEX, 32), False),
        ("datadog_app_key", "datadog", lambda: s(HEX, 40), False),
        ("cloudflare_api_token", "cloudflare", lambda: m(40, B64URL), False),
        ("heroku_api_key", "heroku", lambda: uid(), False),
        ("snyk_token", "snyk", lambda: uid(), False),
        ("fastly_token", "fastly", lambda: m(32, B64URL), False),
        ("zendesk_token", "zendesk", lambda: m(40), False),
        ("confluent_secret", "confluent", lambda: m(64), False),
        ("cohere_key", "cohere", lambda: m(40), False),
        ("coinbase_secret", "coinbase", lambda: m(64, B64URL), False),
        ("etsy_key", "etsy", lambda: s(LOWNUM, 24), False),
        ("finnhub_key", "finnhub", lambda: s(LOWNUM, 20), False),
        ("freshbooks_token", "freshbooks", lambda: m(64), False),
        ("kraken_secret", "kraken", lambda: m(86, ALNUM + "+/") + "==", False),
        ("kucoin_secret", "kucoin", lambda: uid(), False),
        ("mattermost_token", "mattermost", lambda: s(LOWNUM, 26), False),
        ("messagebird_key", "messagebird", lambda: m(25), False),
        ("netlify_token", "netlify", lambda: m(43, B64URL), False),
        ("nytimes_key", "nytimes", lambda: m(32), False),
        ("rapidapi_key", "rapidapi", lambda: m(50, B64URL), False),
        ("sendbird_token", "sendbird", lambda: s(HEX, 40), False),
        ("squarespace_key", "squarespace", lambda: uid(), False),
        ("travis_token", "travis", lambda: m(22), False),
        ("trello_key", "trello", lambda: s(HEX, 32), False),
        ("twitch_token", "twitch", lambda: s(LOWNUM, 30), False),
        ("mailjet_secret", "mailjet", lambda: s(HEX, 32), False),
        ("ibm_cloud_iam_key", "ibm_cloud", lambda: m(44, B64URL), False),
        ("softlayer_key", "softlayer", lambda: s(HEX, 64), False),
        ("ipstack_key", "ipstack", lambda: s(HEX, 32), False),
        ("weatherapi_key", "openweather", lambda: s(HEX, 32), False),
        ("pagerduty_key", "pagerduty", lambda: m(20, ALNUM + "-_+"), False),
        ("launchdarkly_token", "launchdarkly", lambda: m(40, B64URL), False),
        ("looker_secret", "looker", lambda: m(24), False),
        ("plaid_secret", "plaid", lambda: s(HEX, 30), False),
        ("bitbucket_secret", "bitbucket", lambda: m(64, ALNUM + "-_="), False),
        ("adafruit_key", "adafruit", lambda: m(32, ALNUM + "_-"), False),
        ("codecov_token", "codecov", lambda: uid(), False),
        ("drone_token", "drone", lambda: m(32), False),
        ("nuget_key", "nuget", lambda: "oy2" + s(LOWNUM, 43), False),
        ("azure_openai_key", "azure_openai", lambda: s(HEX, 32), False),
        ("meraki_key", "meraki", lambda: s(HEX, 40), False),
        ("private_ai_key", "private_ai", lambda: s(LOWNUM, 32), False),
        ("db_password", "db", lambda: f.pw(), False),
        ("smtp_password", "smtp", lambda: f.pw(), False),
        ("redis_password", "redis", lambda: f.pw(), False),
    ]


# --- key names: how people name the setting that holds a service's secret -------------------------

_SUFFIXES = ["api_key", "key", "token", "secret", "api_token", "access_token", "auth_token", "client_secret",
             "secret_key", "apikey", "access_key", "app_secret", "api_secret", "private_key", "password"]


def _key(f: _F, svc: str, style: int) -> str:
    suffix = f.r.choice(_SUFFIXES if svc not in ("db", "smtp", "redis") else ["password", "pass", "pwd", "passwd"])
    words = svc.split("_") + suffix.split("_")
    if style == 0:
        return "_".join(words)
    if style == 1:
        return "_".join(words).upper()
    if style == 2:
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == 3:
        return "-".join(words)
    return ".".join([svc.replace("_", ""), "_".join(suffix.split("_"))])


# Contexts of a key and its value. Each (template, lang); {k} key name, {v} value, {s} service.
# The dev part uses the even entries, the held-out part the odd ones, so the two share no sentence.
_KEYED = [
    ("{K}={v}", "en"),
    ("In .env add {K}={v} and restart the worker.", "en"),
    ("{k}: {v}", "en"),
    ("config.yaml had `{k}: \"{v}\"` committed; it moved to the secret store.", "en"),
    ('{{"{k}": "{v}", "region": "eu-west-1"}}', "en"),
    ("settings.py: {k} = '{v}'  # replaced with os.environ later", "en"),
    ('var {k} string = "{v}"', "en"),
    ("{k} := \"{v}\"", "en"),
    ('String {k} = "{v}";', "en"),
    ("{k} := `{v}`", "en"),
    ('{K} ?= "{v}" was in the Makefile, so make exported it to every recipe.', "en"),
    ('{K} ::= "{v}"', "en"),
    ('System.setProperty("{K}", "{v}") in the test setup leaked the key into the logs.', "en"),
    ('  "{k}" => "{v}",', "en"),
    ("$" + '{k} .= "{v}";', "en"),
    ("<{k}>\n    {v}\n</{k}>", "en"),
    ('<add key="{k}" value="{v}" /> in web.config', "en"),
    ("{s} {w} = '{v}'", "en"),
    ("{s} {w} - '{v}'", "en"),
    ("export {K}=\"{v}\"", "en"),
    ("docker run -e {K}={v} app:latest", "en"),
    ("ENV {K} {v}", "en"),
    ("if ({k} == \"{v}\") {{ return true; }}", "en"),
    ('if ("{v}" == {k}) {{', "en"),
    ('{k} = @"{v}";', "en"),
    ('std::string {k}("{v}");', "en"),
    ("$env:{K} = \"{v}\"", "en"),
    ("set -gx {K} {v}", "en"),
    ("heroku config:set {K}={v} -a api-prod", "en"),
    ("kubectl create secret generic app --from-literal={k}={v}", "en"),
    ("- name: {K}\n  value: \"{v}\"", "en"),
    ("{k} = \"{v}\"\ntimeout = 30", "en"),
    (".env 파일에 {K}={v} 를 넣고 워커를 다시 시작했다.", "ko"),
    ("설정 파일의 {k}: {v} 줄이 커밋되어 있었다. 시크릿 저장소로 옮길 것.", "ko"),
    ("{s} {w}: {v}", "ko"),
    ("{s} {w}는 {v} 이다. 다음 배포 전에 교체.", "ko"),
    ("환경 변수 {K} 값이 \"{v}\" 로 하드코딩되어 있었다", "ko"),
    ("테스트 코드에 {k} = '{v}' 가 남아 있어서 삭제함", "ko"),
    ("{s} 콘솔에서 발급한 키 {v} 를 {K} 에 넣었다", "ko"),
    ("docker-compose.yml 의 environment 에 {K}: {v} 가 그대로 들어가 있었다", "ko"),
]

# Further forms, in the dev part only (added while tuning; the held-out part's sentences are
# unchanged): XML elements, YAML block scalars, Java system properties, escaped JSON, SQL, docker
# login, PHP define, attribute assignment, headers, Korean labels, "set X to", Markdown, secret
# stores' command lines, a bare "key" in a sentence, CLI flags, .npmrc.
_KEYED_DEV = [
    ("<{k}>{v}</{k}>", "en"),
    ("<{k}>\n\t{v}\n</{k}>", "en"),
    ("{k}: |\n  {v}\nnext: 1", "en"),
    ("java -D{d}={v} -jar service.jar", "en"),
    ('payload = "{{\\"{k}\\": \\"{v}\\"}}"', "en"),
    ("ALTER USER {s}_svc IDENTIFIED BY '{v}';", "en"),
    ("docker login -u ci -p {v} registry.internal", "en"),
    ("define('{K}', '{v}');", "en"),
    ("config.{k} = \"{v}\"", "en"),
    ('headers = {{"X-{S}-Token": "{v}"}}', "en"),
    ("{s} 키는 {v} 로 바뀌었다", "ko"),
    ("CI 변수 {K} 에 {v} 를 넣어 두었다 ({s} 콘솔에서 발급받은 키)", "ko"),
    ("Set {K} to {v} in the CI settings.", "en"),
    ("| {K} | {v} | prod |", "en"),
    ("**{k}**: `{v}`", "en"),
    ('gh secret set {K} --body "{v}"', "en"),
    ("aws secretsmanager create-secret --name {s}/prod --secret-string '{v}'", "en"),
    ("The {s} key is {v}.", "en"),
    ("The {w} for the {s} account is {v}", "en"),
    ("The {s} {w} was rotated to {v} yesterday.", "en"),
    ("{s}-cli login --{s}-key {v}", "en"),
    ("//registry.internal/:_auth={v}", "en"),
    ("Stored {v} as {K} in the CI secrets.", "en"),
    ("{v} 를 {K} 에 넣고 재배포했다", "ko"),
    ("{s}:\n  key: {v}\n  region: eu", "en"),
    ("[{s}]\nkey = {v}", "en"),
    ("git clone https://{v}@git.internal/{s}/app.git", "en"),
    ("curl --oauth2-bearer {v} https://api.internal/v1/me", "en"),
    ("{s} 토큰 재발급: {v}", "ko"),
    ("The {s} {w} (new): {v}", "en"),
    ("db.internal:5432:app:app_user:{v}", "en"),
    ("jdbc:oracle:thin:{s}_app/{v}@db.internal:1521/ORCL", "en"),
    ("{K}_PROD={v}", "en"),
    ("{k}_staging: \"{v}\"", "en"),
]

# Prose words for a service's secret ("the datadog api key").
_WORDS_EN = ["api key", "token", "secret", "access token", "secret key", "key", "password", "api token"]
_WORDS_KO = ["API 키", "토큰", "시크릿", "액세스 토큰", "비밀 키", "키", "비밀번호", "인증 키"]

_PREFIXED = [
    ("The CI job printed {v} in its log; rotate it.", "en"),
    ("Found {v} hard-coded in scripts/deploy.sh.", "en"),
    ("curl -H 'X-Api-Key: {v}' https://api.internal/v1/ping", "en"),
    ("the old value was {v} and it still worked after the migration", "en"),
    ("requests.get(url, headers={{'Authorization': '{v}'}})", "en"),
    ("client = Client(\"{v}\")", "en"),
    ("배포 로그에 {v} 가 찍혀 있었다. 바로 폐기함.", "ko"),
    ("스크립트에 {v} 가 하드코딩되어 있었다", "ko"),
]


def _positives(f: _F, part: int) -> list[Example]:
    out = []
    keyed = _KEYED[part::2] + (_KEYED_DEV if part == 0 else [])
    prefixed = _PREFIXED[part::2]
    for kind, svc, value, has_prefix in _kinds(f):
        n = 8 if has_prefix else 7
        for i in range(n):
            v = value()
            if has_prefix and i % 3 == 2:
                template, lang = prefixed[(i // 3) % len(prefixed)]
                out.append(Example(template.format(v=v), kind, (v,), lang))
                continue
            template, lang = keyed[f.r.randrange(len(keyed))]
            if "{K}" in template:  # an environment variable: UPPER_SNAKE
                k = _key(f, svc, 1)
            else:
                k = _key(f, svc, f.r.randrange(5))
            w = f.r.choice(_WORDS_KO if lang == "ko" else _WORDS_EN)
            if svc in ("db", "smtp", "redis"):
                w = "비밀번호" if lang == "ko" else "password"
            if "IDENTIFIED" in template and not v[:1].isalnum():
                v = "x" + v
            text = template.format(k=k, K=k, v=v, s=svc.replace("_", " "), w=w, S=svc.capitalize(),
                                   d=svc.replace("_", ".") + ".api.key")
            out.append(Example(text, kind, (v,), lang))
    return out


# --- negatives: the false-positive samples of the same tests, as shapes ---------------------------

def _negatives(f: _F, part: int) -> list[Example]:
    s, m, uid, r = f.s, f.m, f.uid, f.r
    sha1 = lambda: hashlib.sha1(s(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    sha256 = lambda: hashlib.sha256(s(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    svc = lambda: r.choice(["stripe", "datadog", "algolia", "github", "slack", "sendgrid", "heroku", "twilio"])  # noqa: E731
    upper_key = lambda: svc().upper() + r.choice(["_API_KEY", "_TOKEN", "_SECRET", "_KEY"])  # noqa: E731
    b64img = lambda: base64.b64encode(bytes(r.getrandbits(8) for _ in range(48))).decode()  # noqa: E731
    cats: dict[str, list] = {
        "placeholder": [
            lambda: (f"{upper_key()}=<your-{svc()}-key>", "en"),
            lambda: (f"{upper_key()}=${{{upper_key()}}}", "en"),
            lambda: (f"{svc()}_token: {{{{ secrets.{upper_key()} }}}}", "en"),
            lambda: (f"{svc()}_api_key = os.environ[\"{upper_key()}\"]", "en"),
            lambda: (f"const {svc()}Token = process.env.{upper_key()};", "en"),
            lambda: (f"{upper_key()}=" + "x" * r.choice([20, 32, 40]), "en"),
            lambda: (f"\"{svc()}_secret\": \"********\"", "en"),
            lambda: ("gh" + "p_" + "x" * 36 + " is the placeholder in the README", "en"),
            lambda: ("sk" + "_live_" + "X" * 24 + " stays in the docs as the example", "en"),
            lambda: (f"{upper_key()}=REPLACE_ME", "en"),
            lambda: (f"{svc()}_api_key: YOUR_{svc().upper()}_API_KEY", "en"),
            lambda: (f"{upper_key()} 에는 <발급받은 키> 를 넣는다", "ko"),
            lambda: (f"{upper_key()}=changeme 는 로컬 전용 기본값이다", "ko"),
            lambda: (f"{svc()}_token = \"{{{{ .Values.{svc()}.token }}}}\"", "en"),
            lambda: (f"{svc()} key = '%({svc()}_key)s'", "en"),
        ],
        "hash_or_id": [
            lambda: (f"commit: {sha1()}", "en"),
            lambda: (f"checksum = \"{sha256()}\"", "en"),
            lambda: (f"request_id = \"{uid()}\"", "en"),
            lambda: (f"trace id {s(HEX, 32)} shows the retry", "en"),
            lambda: (f"image: registry.internal/api@sha256:{sha256()}", "en"),
            lambda: (f"integrity: sha512-{b64img()}", "en"),
            lambda: (f"etag: \"{s(HEX, 32)}\"", "en"),
            lambda: (f"Fixed in {sha1()[:12]}; the {svc()} token refresh now retries.", "en"),
            lambda: (f"go.sum: example.org/mod v1.4.2 h1:{b64img()[:43]}=", "en"),
            lambda: (f"aws account id 1234{s(DIGITS, 8)}, role arn:aws:iam::1234{s(DIGITS, 8)}:role/deploy", "en"),
            lambda: (f"client_id: {s(DIGITS, 12)}-{s(LOWNUM, 32)}.apps.googleusercontent.com", "en"),
            lambda: (f"idempotency_key = \"{uid()}\"", "en"),
            lambda: (f"cache_key = \"user:{s(DIGITS, 6)}:{s(HEX, 8)}\"", "en"),
            lambda: (f"커밋 {sha1()} 에서 토큰 갱신 로직을 고쳤다", "ko"),
            lambda: (f"요청 ID {uid()} 로 로그를 찾았다", "ko"),
            lambda: (f"build hash {s(HEX, 20)}, chunk main.{s(HEX, 8)}.js", "en"),
        ],
        "named_non_secret": [  # names that end like a credential's, values that are not one
            lambda: (f"cache_key = \"{s(HEX, 32)}\"", "en"),
            lambda: (f"GPG_KEY_ID={s(HEX, 16).upper()}", "en"),
            lambda: (f"primary_key: \"{r.choice(['id', 'uuid', 'order_id'])}\"", "en"),
            lambda: ("SSH_KEY_PATH=~/.ssh/id_ed25519", "en"),
            lambda: (f"TOKEN_URL=https://auth.{svc()}.com/oauth/token", "en"),
            lambda: (f"object_key = \"uploads/{s(DIGITS, 4)}/{s(HEX, 8)}.png\"", "en"),
            lambda: (f"{upper_key()}_HEADER=X-Api-Key", "en"),
            lambda: (f"key_id: \"{uid()}\"", "en"),
            lambda: (f"SECRET_NAME=prod/{svc()}/api", "en"),
            lambda: (f"\"kid\": \"{s(B64URL, 43)}\"", "en"),
            lambda: (f"TOKEN_LIFETIME={r.choice([900, 3600, 86400])}", "en"),
            lambda: (f"partition_key: \"tenant#{s(DIGITS, 5)}\"", "en"),
            lambda: (f"{svc()}_key_file = \"/etc/{svc()}/key.pem\"", "en"),
            lambda: (f"idempotency-key: {uid()}", "en"),
            lambda: (f"storage_key_prefix = \"{svc()}/{s(LOWER, 6)}\"", "en"),
            lambda: (f"i18n_key = \"settings.{svc()}.api_key.label\"", "en"),
            lambda: (f"환경 변수 {upper_key()}_FILE 에 키 파일 경로 /run/secrets/{svc()} 를 넣는다", "ko"),
            lambda: (f"sort_key = \"{s(DIGITS, 10)}#{s(HEX, 6)}\"", "en"),
        ],
        "version_or_number": [
            lambda: (f"{svc()}-sdk=={r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)}", "en"),
            lambda: (f"max_tokens: {r.choice([256, 1024, 4096, 8192])}", "en"),
            lambda: (f"token_ttl = {r.randint(60, 86400)}", "en"),
            lambda: (f"secret rotation every {r.randint(7, 90)}d", "en"),
            lambda: (f"토큰 만료 시간은 {r.randint(60, 7200)}초로 줄였다", "ko"),
            lambda: (f"api_version: \"20{r.randint(20, 26)}-0{r.randint(1, 9)}-1{r.randint(0, 9)}\"", "en"),
        ],
        "code": [
            lambda: ("token = get_token(user)", "en"),
            lambda: ("password = request.form['password']", "en"),
            lambda: (f"{svc()}_api_key = settings.{upper_key()}", "en"),
            lambda: ("secret: str = Field(..., min_length=32)", "en"),
            lambda: ("const token = await getAccessToken(scope);", "en"),
            lambda: ("if token is None: raise AuthError('missing token')", "en"),
            lambda: ('token_type: "bearer"', "en"),
            lambda: ("tokenizer = AutoTokenizer.from_pretrained(model_name)", "en"),
            lambda: ("id = Column(Integer, primary_key=True)", "en"),
            lambda: ("sort_key: created_at", "en"),
            lambda: ("api_key_header = APIKeyHeader(name='X-API-Key')", "en"),
            lambda: ("secretKeyRef:\n  name: app-secrets\n  key: " + svc() + "-token", "en"),
            lambda: (f"{svc()}Key := os.Getenv(\"{upper_key()}\")", "en"),
            lambda: ("password_hash = bcrypt.hashpw(pw, bcrypt.gensalt())", "en"),
            lambda: ("key = cache.make_key(prefix, user_id)", "en"),
            lambda: ("토큰은 get_token() 으로만 읽는다", "ko"),
        ],
        "public_value": [
            lambda: ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + s(B64, 43) + " deploy@ci", "en"),
            lambda: ("p" + "k_test_" + m(24) + " is the publishable key, fine in the browser", "en"),
            lambda: ("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + s(B64, 40)
                     + "\n-----END PUBLIC KEY-----", "en"),
            lambda: (f"<img src=\"data:image/png;base64,iVBORw0KGgo{b64img()}\">", "en"),
            lambda: (f"public_key: \"{s(HEX, 64)}\"", "en"),
            lambda: (f"sentry dsn https://{s(HEX, 32)}@o{s(DIGITS, 6)}.ingest.sentry.io/{s(DIGITS, 7)}", "en"),
            lambda: (f"{svc()} 공개 키는 번들에 넣어도 된다 (pk_ 로 시작)", "ko"),
        ],
        "prose": [
            lambda: (f"Rotate the {svc()} token after every deploy and never log it.", "en"),
            lambda: (f"The {svc()} secret lives in Vault under kv/{svc()}/prod.", "en"),
            lambda: ("The password must be at least 12 characters long.", "en"),
            lambda: (f"set {upper_key()} in .env before running the tests", "en"),
            lambda: (f"{svc()} API 키는 팀 비밀번호 관리자에 있다. 커밋하지 말 것.", "ko"),
            lambda: ("토큰이 만료되면 refresh_token 으로 다시 받는다", "ko"),
            lambda: (f"The secret manager path is projects/app/secrets/{svc()}-key/versions/{r.randint(1, 9)}", "en"),
            lambda: ("Keyboard shortcuts: press the key Ctrl+Shift+K to open the token panel.", "en"),
        ],
    }
    if part == 0:  # look-alikes of the forms added to the dev part while tuning (_KEYED_DEV)
        cats["dev_forms"] = [
            lambda: ("<ApiKeyHeader>X-Api-Key</ApiKeyHeader>", "en"),
            lambda: (f"<secretName>{svc()}-secrets</secretName>", "en"),
            lambda: ("<password>${DB_PASSWORD}</password>", "en"),
            lambda: ('<add key="ClientValidationEnabled" value="true" />', "en"),
            lambda: ("description: |\n  the token is rotated by the nightly job", "en"),
            lambda: ("docker run -p 8080:80 -e TOKEN_TTL=3600 app", "en"),
            lambda: (f"java -D{svc()}.api.key.header=X-Api-Key -jar service.jar", "en"),
            lambda: ("spring.datasource.password=${DB_PASS}", "en"),
            lambda: (f"CI 변수 {upper_key()} 에 값을 넣어 두었다", "ko"),
            lambda: (f"<{svc()}_cache_key>{s(HEX, 32)}</{svc()}_cache_key>", "en"),
            lambda: (f"{svc().upper()}_PUBLIC_KEY={s(HEX, 64)}", "en"),
            lambda: ("ALTER USER app IDENTIFIED BY PASSWORD;", "en"),
            lambda: ("Set TOKEN_TTL to 3600 in the CI settings.", "en"),
            lambda: (f"| {upper_key()} | required | string |", "en"),
            lambda: ("**Password**: see the vault", "en"),
            lambda: (f'gh secret set {upper_key()} --body "${upper_key()}"', "en"),
            lambda: (f"aws secretsmanager get-secret-value --secret-id prod/{svc()}", "en"),
            lambda: (f"The cache key is {s(HEX, 32)}.", "en"),
            lambda: ("The primary key is order_id.", "en"),
            lambda: ("The password for the admin account is in 1Password.", "en"),
            lambda: ("The token was rotated to fix the leak.", "en"),
            lambda: ("mycli --ssh-key ~/.ssh/id_ed25519", "en"),
            lambda: ("basic_auth = true", "en"),
            lambda: (f"Set {upper_key()} to the value from the vault.", "en"),
            lambda: (f"Moved {sha1()} in the cache_key rotation.", "en"),
            lambda: (f"Pinned {sha1()} as the base image, then rotated the token.", "en"),
            lambda: ("- key: app.kubernetes.io/name\n  value: api", "en"),
            lambda: ("key: ${{ runner.os }}-npm-${{ hashFiles('**/package-lock.json') }}", "en"),
            lambda: ("[keys]\nkey = left-arrow", "en"),
            lambda: (f"커밋 {sha1()} 를 토큰 교체 기준으로 삼았다", "ko"),
            lambda: ("git clone https://git@git.internal/app.git", "en"),
            lambda: ("localhost:5432:*:*:*", "en"),
            lambda: ("10:30:45:12:xyz happened in the log", "en"),
            lambda: ("sqlplus scott/${ORACLE_PASSWORD}@orcl", "en"),
            lambda: ("토큰 만료: 3600초", "ko"),
            lambda: ("The token (old): revoked yesterday", "en"),
            lambda: (f"sentry dsn https://{s(HEX, 32)}@o{s(DIGITS, 6)}.ingest.sentry.io/{s(DIGITS, 7)}", "en"),
            lambda: ("Kubernetes secret name: payments-db-creds-v2 in namespace payments.", "en"),
            lambda: (f"API_KEY_ID={s(UPPER + DIGITS, 20)}", "en"),
            lambda: (f"{upper_key()}_URL=https://api.{svc()}.com/v2", "en"),
            lambda: ("PASSWORD_MIN_LENGTH=12", "en"),
            lambda: ("token_count: 18432", "en"),
            lambda: ("password_hash = make_password(raw)", "en"),
            lambda: (f"{upper_key()}_PROD=${{{{ secrets.{upper_key()}_PROD }}}}", "en"),
        ]
    out, seen = [], set()
    for cat, makers in cats.items():
        mine = makers if cat == "dev_forms" else makers[part::2] * 2  # each part its own half, twice over
        for _ in range(4):
            for maker in mine:
                text, lang = maker()
                if text not in seen:
                    seen.add(text)
                    out.append(Example(text, "neg:" + cat, (), lang))
    return out


def external(part: str) -> list[Example]:
    """The labelled examples of one part: "dev" (may be tuned on) or "heldout" (never)."""
    index = ("dev", "heldout").index(part)
    f = _F(random.Random(SEEDS[part]))
    examples = _positives(f, index) + _negatives(f, index)
    for e in examples:
        assert all(secret in e.text for secret in e.secrets), e
    return examples


if __name__ == "__main__":
    for name in ("dev", "heldout"):
        ex = external(name)
        pos = [e for e in ex if e.positive]
        print(f"{name}: {len(pos)} positives in {len({e.kind for e in pos})} kinds, "
              f"{len(ex) - len(pos)} negatives; Korean: {sum(e.lang == 'ko' for e in ex)}")
