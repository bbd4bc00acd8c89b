"""The held-out part of the redaction benchmark: written before the rules it measures, never tuned on.

This file was written and committed before the provider and key-value rules of that round were
added to redaction/rules.py; its sentences, key names and look-alikes are its own (none is copied
from bench/secrets_corpus.py, the tuning part). The rules are tuned on the tuning part only;
this part is run to report a figure, and a miss here is reported, not fixed here.

Deterministic (its own fixed seed). Every "secret" is a fake built in code with the shape of
the real thing as the provider documents it; prefixes are split from bodies so that secret
scanners on the repository stay quiet. No value was ever a real credential.

    heldout() -> list[Example]
"""

from __future__ import annotations

import random
import string
import uuid

from secrets_corpus import ALNUM, B64, B64URL, DIGITS, HEX, LOWER, UPPER, Example  # noqa: F401

SEED = 8675309


class _F:
    def __init__(self, rng: random.Random):
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def m(self, n: int) -> str:  # mixed alphanumerics with upper, lower and a digit
        while True:
            v = self.s(ALNUM, n)
            if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
                return v

    def uid(self) -> str:
        return str(uuid.UUID(int=self.r.getrandbits(128)))

    def pw(self) -> str:
        words = ["Harbor", "Quartz", "Nimbus", "Cobalt", "Juniper", "Sparrow", "Lantern", "Vortex"]
        return self.r.choice([
            self.r.choice(words) + self.s(DIGITS, 3) + self.r.choice("!?#$&*"),
            self.m(self.r.randint(12, 20)),
            self.s(ALNUM + "/+=", 16) + "=",
            self.s(LOWER, 4) + self.s(DIGITS, 4) + self.s(UPPER, 2) + self.s("!@#%^", 1),
        ])


# --- provider formats: kind -> a fake with the documented shape ----------------------------------

def _providers(f: _F) -> dict[str, callable]:
    s, m, uid = f.s, f.m, f.uid
    return {
        "aws_access_key_id": lambda: "AK" + "IA" + s(UPPER + "234567", 16),
        "github_pat": lambda: "gh" + "p_" + m(36),
        "github_fine_grained": lambda: "github" + "_pat_" + "11" + s(UPPER + DIGITS, 20) + "_" + m(59),
        "gitlab_pat": lambda: "gl" + "pat-" + s(B64URL, 20),
        "gitlab_pat_routable": lambda: "gl" + "pat-" + s(B64URL, 38) + "." + s(LOWER + DIGITS, 9),
        "gitlab_ci_job_token": lambda: "gl" + "cbt-" + s(ALNUM, 2) + "_" + s(B64URL, 20),
        "slack_bot": lambda: "xo" + "xb-" + s(DIGITS, 12) + "-" + s(DIGITS, 13) + "-" + m(24),
        "stripe_live_secret": lambda: "sk" + "_live_" + m(99),
        "openai_project": lambda: "sk" + "-proj-" + s(B64URL, 74) + "T3Blbk" + "FJ" + s(B64URL, 74),
        "anthropic": lambda: "sk" + "-ant-api03-" + s(B64URL, 93) + "AA",
        "google_api_key": lambda: "AI" + "za" + "Sy" + s(B64URL, 33),
        "google_refresh_token": lambda: "1/" + "/0" + s(B64URL, 100),
        "npm": lambda: "np" + "m_" + m(36),
        "pypi": lambda: "py" + "pi-" + "AgEIcHlwaS5vcmc" + s(B64URL, 120),
        "docker_hub_pat": lambda: "dc" + "kr_pat_" + s(B64URL, 27),
        "bitbucket_app_password": lambda: "AT" + "BB" + m(32) + s(HEX.upper(), 8),
        "shopify_shared_secret": lambda: "sh" + "pss_" + s(HEX, 32),
        "twilio_api_key": lambda: "S" + "K" + s(HEX, 32),
        "sendgrid": lambda: "S" + "G." + s(B64URL, 22) + "." + s(B64URL, 43),
        "mailgun": lambda: "ke" + "y-" + s(HEX, 32),
        "mailchimp": lambda: s(HEX, 32) + "-us" + str(f.r.randint(1, 21)),
        "newrelic_user_key": lambda: "NR" + "AK-" + s(UPPER + DIGITS, 27),
        "newrelic_license_key": lambda: s(HEX, 36) + "NR" + "AL",
        "sentry_user_token": lambda: "sn" + "tryu_" + s(HEX, 64),
        "linear": lambda: "li" + "n_api_" + m(40),
        "notion": lambda: "nt" + "n_" + s(DIGITS, 11) + m(35),
        "airtable_pat": lambda: "pa" + "t" + m(14) + "." + s(HEX, 64),
        "figma_pat": lambda: "fi" + "gd_" + s(B64URL, 40),
        "hubspot_private_app": lambda: "pa" + "t-na1-" + uid(),
        "heroku": lambda: "HR" + "KU-" + "AA" + s(B64URL, 58),
        "digitalocean": lambda: "do" + "p_v1_" + s(HEX, 64),
        "vercel_token": lambda: "vc" + "p_" + m(56),
        "netlify_pat": lambda: "nf" + "p_" + m(36),
        "doppler": lambda: "dp" + ".st." + m(43),
        "pulumi": lambda: "pu" + "l-" + s(HEX, 40),
        "terraform_cloud": lambda: m(14) + ".atlas" + "v1." + s(B64URL, 67),
        "vault": lambda: "hv" + "s." + s(B64URL, 92),
        "databricks": lambda: "da" + "pi" + s(HEX, 32),
        "atlassian": lambda: "ATA" + "TT3xFfGF0" + s(B64URL, 174) + "=" + s(HEX.upper(), 8),
        "grafana_service_account": lambda: "gl" + "sa_" + m(32) + "_" + s(HEX, 8),
        "grafana_cloud": lambda: "gl" + "c_" + s(B64, 120) + "==",
        "grafana_api_key_legacy": lambda: "eyJr" + "Ijoi" + m(80) + "=",
        "postman": lambda: "PM" + "AK-" + s(HEX, 24) + "-" + s(HEX, 34),
        "discord_bot": lambda: "MT" + s(B64URL[:-2], 24) + "." + s(B64URL, 6) + "." + s(B64URL, 38),
        "telegram_bot": lambda: s(DIGITS, 9) + ":" + "AA" + s(B64URL, 33),
        "dropbox_short_lived": lambda: "sl" + "." + s(B64URL, 140),
        "square": lambda: "EA" + "AA" + s(B64URL, 60),
        "braintree_access_token": lambda: "access_token" + "$production$" + s(LOWER + DIGITS, 16) + "$" + s(HEX, 32),
        "azure_ad_client_secret": lambda: m(3) + s(DIGITS, 1) + "Q~" + s(ALNUM + "_~.", 34),
        "alibaba_access_key_id": lambda: "LT" + "AI" + m(20),
        "tencent_secret_id": lambda: "AK" + "ID" + m(32),
        "age": lambda: "AGE-SECRET" + "-KEY-1" + s(UPPER + DIGITS, 58),
        "huggingface": lambda: "h" + "f_" + m(34),
        "replicate": lambda: "r8" + "_" + m(37),
        "groq": lambda: "gs" + "k_" + m(52),
        "openrouter": lambda: "sk" + "-or-v1-" + s(HEX, 64),
        "langsmith": lambda: "lsv2" + "_pt_" + s(HEX, 32) + "_" + s(HEX, 10),
        "pinecone": lambda: "pc" + "sk_" + m(6) + "_" + m(60),
        "tavily": lambda: "tv" + "ly-" + m(32),
        "elevenlabs": lambda: "sk" + "_" + s(HEX, 48),
        "deepl": lambda: uid() + ":f" + "x",
        "contentful": lambda: "CF" + "PAT-" + s(B64URL, 43),
        "buildkite": lambda: "bk" + "ua_" + s(HEX, 40),
        "sonarqube": lambda: "sq" + "u_" + s(HEX, 40),
        "circleci": lambda: "CCI" + "PAT_" + m(22) + "_" + s(HEX, 40),
        "prefect": lambda: "pn" + "u_" + m(36),
        "rubygems": lambda: "ruby" + "gems_" + s(HEX, 48),
        "shippo": lambda: "shi" + "ppo_live_" + s(HEX, 40),
        "brevo": lambda: "xkey" + "sib-" + s(HEX, 64) + "-" + m(16),
        "dynatrace": lambda: "dt0" + "c01." + s(UPPER + DIGITS, 24) + "." + s(UPPER + DIGITS, 64),
        "easypost": lambda: "EZ" + "AK" + m(54),
        "flyio": lambda: "fo" + "1_" + s(B64URL, 43),
        "infracost": lambda: "ic" + "o-" + m(32),
        "readme": lambda: "rd" + "me_" + s(LOWER + DIGITS, 70),
        "typeform": lambda: "tf" + "p_" + s(B64URL, 59),
        "render": lambda: "rn" + "d_" + m(32),
        "facebook_access_token": lambda: "EA" + "AG" + m(180),
        "twitter_bearer": lambda: "A" * 22 + m(90),
        "salesforce_access_token": lambda: "00D" + m(15) + "!" + "AQ" + s(ALNUM + "._", 94),
        "asana_pat": lambda: "2/" + s(DIGITS, 16) + "/" + s(DIGITS, 16) + ":" + s(HEX, 32),
        "clickup": lambda: "pk" + "_" + s(DIGITS, 8) + "_" + s(UPPER + DIGITS, 32),
        "plaid_access_token": lambda: "access" + "-sandbox-" + uid(),
        "launchdarkly_sdk_key": lambda: "sd" + "k-" + uid(),
        "artifactory": lambda: "AK" + "Cp" + m(69),
        "clojars": lambda: "CLO" + "JARS_" + s(LOWER + DIGITS, 60),
        "onepassword_service_account": lambda: "op" + "s_eyJ" + s(B64, 300),
        "harness": lambda: "pa" + "t." + s(B64URL, 22) + "." + m(24) + "." + m(20),
        "cloudflare_origin_ca": lambda: "v1" + ".0-" + s(HEX, 24) + "-" + s(HEX, 146),
    }


# Key-value forms of services without a fixed token prefix: (kind, key name, value maker).
def _kv(f: _F) -> list[tuple[str, str, callable]]:
    s, m, uid = f.s, f.m, f.uid
    hex32 = lambda: s(HEX, 32)  # noqa: E731
    return [
        ("datadog_api_key", "DD_API_KEY", hex32),
        ("datadog_app_key", "DATADOG_APP_KEY", lambda: s(HEX, 40)),
        ("cloudflare_api_token", "CLOUDFLARE_API_TOKEN", lambda: s(B64URL, 40)),
        ("cloudflare_global_key", "CF_API_KEY", lambda: s(HEX, 37)),
        ("naver_client_secret", "NAVER_CLIENT_SECRET", lambda: m(10)),
        ("kakao_rest_api_key", "KAKAO_REST_API_KEY", hex32),
        ("okta_api_token", "OKTA_API_TOKEN", lambda: "00" + s(B64URL, 40)),
        ("vercel_legacy_token", "VERCEL_TOKEN", lambda: m(24)),
        ("netlify_legacy_token", "NETLIFY_AUTH_TOKEN", lambda: s(B64URL, 43)),
        ("algolia_admin_key", "ALGOLIA_ADMIN_KEY", hex32),
        ("segment_write_key", "SEGMENT_WRITE_KEY", lambda: m(32)),
        ("newrelic_license_kv", "NEW_RELIC_LICENSE_KEY", lambda: s(HEX, 40)),
        ("snowflake_password", "SNOWFLAKE_PASSWORD", f.pw),
        ("postmark_server_token", "POSTMARK_SERVER_TOKEN", uid),
        ("tencent_secret_key", "TENCENTCLOUD_SECRET_KEY", lambda: m(32)),
        ("alibaba_secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", lambda: m(30)),
        ("paypal_client_secret", "PAYPAL_CLIENT_SECRET", lambda: s(B64URL, 80)),
        ("braintree_private_key", "BRAINTREE_PRIVATE_KEY", hex32),
        ("dropbox_app_secret", "DROPBOX_APP_SECRET", lambda: s(LOWER + DIGITS, 15)),
        ("telegram_api_hash", "TELEGRAM_API_HASH", hex32),
        ("mistral_api_key", "MISTRAL_API_KEY", lambda: m(32)),
        ("cohere_api_key", "CO_API_KEY", lambda: m(40)),
        ("azure_openai_key", "AZURE_OPENAI_API_KEY", hex32),
        ("slack_signing_secret", "SLACK_SIGNING_SECRET", hex32),
        ("pusher_app_secret", "PUSHER_APP_SECRET", lambda: s(HEX, 20)),
        ("razorpay_key_secret", "RAZORPAY_KEY_SECRET", lambda: m(24)),
        ("codecov_token", "CODECOV_TOKEN", uid),
        ("confluent_api_secret", "CONFLUENT_API_SECRET", lambda: s(ALNUM + "+/", 64)),
        ("jwt_signing_secret", "JWT_SECRET", lambda: s(ALNUM + "+/", 44)),
        ("django_secret_key", "DJANGO_SECRET_KEY", lambda: s(LOWER + DIGITS + "!@#$%^&*(-_=+)", 50)),
    ]


# Headers that carry a key: (kind, header name, value maker).
def _headers(f: _F) -> list[tuple[str, str, callable]]:
    s, m = f.s, f.m
    return [
        ("header_x_api_key", "X-API-Key", lambda: m(40)),
        ("header_azure_subscription", "Ocp-Apim-Subscription-Key", lambda: s(HEX, 32)),
        ("header_naver", "X-Naver-Client-Secret", lambda: m(10)),
        ("header_postmark", "X-Postmark-Server-Token", f.uid),
        ("header_kakao", "Authorization: KakaoAK", lambda: s(HEX, 32)),
        ("header_okta", "Authorization: SSWS", lambda: "00" + s(B64URL, 40)),
        ("header_datadog", "DD-API-KEY", lambda: s(HEX, 32)),
        ("header_auth_token", "X-Auth-Token", lambda: m(48)),
    ]


_PROVIDER_EN = (
    "Found {k} in the CI log after the deploy step and rotated it.",
    "Someone pasted {k} into the incident channel while debugging the webhook.",
    "The old cron job still authenticates with {k}; move it to the secret store.",
)
_PROVIDER_KO = (
    "배포 로그에 {k} 가 그대로 찍혀 있어서 즉시 폐기했다.",
    "디버깅하다가 이슈 댓글에 {k} 를 붙여넣은 적이 있다.",
)
_KV_FORMS = (
    ("The .env for staging had {name}={k} in plain text.", "en"),
    ("values-prod.yaml:\n  env:\n    {name}: \"{k}\"\nwas committed by the release bot.", "en"),
    ('The settings dump showed {{"{jname}": "{k}", "region": "ap-northeast-2"}}.', "en"),
    ("로컬 설정 파일에 {name}={k} 가 남아 있었다.", "ko"),
    ("export {name}='{k}' 를 쉘 프로필에서 지울 것.", "ko"),
)
_HEADER_FORMS = (
    ("The request dump contained `{h}: {k}` on every call.", "en"),
    ("curl -s -H \"{h}: {k}\" https://api.partner.example.net/v1/items returned 200.", "en"),
    ("프록시 로그에 {h}: {k} 헤더가 남아 있었다.", "ko"),
)


def _json_name(env_name: str) -> str:
    head, *rest = env_name.lower().split("_")
    return head + "".join(w.title() for w in rest)


def _url_positives(f: _F) -> list[tuple[str, str, tuple[str, ...], str]]:
    out = []
    for scheme, host in (("postgresql", "pg-main.internal:5432/billing"), ("mongodb", "mongo-1:27017/events"),
                         ("redis", "redis-cache.svc:6379/2"), ("https", "nexus.corp.acme.io/repository/pypi/"),
                         ("snowflake", "acme-xy12345.snowflakecomputing.com/analytics"),
                         ("sftp", "backup.acme.io:22/exports")):
        p = f.pw()
        out.append(("url_" + scheme, f"The worker connected to {scheme}://svc_reader:{p}@{host} all weekend.", (p,), "en"))
        p = f.pw()
        out.append(("url_" + scheme, f"{scheme}://etl:{p}@{host} 주소가 README 예제에 실제 값으로 들어가 있었다.", (p,), "ko"))
    for _ in range(3):
        p = f.s(ALNUM, 8) + "/" + f.s(ALNUM, 5) + "+" + f.s(ALNUM, 4) + "="
        out.append(("url_base64_password", f"DATABASE_URL=postgres://api:{p}@10.2.0.4:5432/main was in the task definition.", (p,), "en"))
    for _ in range(3):
        p = f.m(12)
        out.append(("url_encoded", f"The login redirect carried next=https%3A%2F%2Fdeploy%3A{p}%40git.acme.io%2Fops in its query.", (p,), "en"))
    return out


def _prose_positives(f: _F) -> list[tuple[str, str, tuple[str, ...], str]]:
    out = []
    for _ in range(2):
        k = f.m(10)
        out.append(("ko_naver_prose", f"네이버 클라이언트 시크릿은 {k} 이고 개발 앱 것이다.", (k,), "ko"))
        k = f.s(HEX, 32)
        out.append(("ko_kakao_prose", f"카카오 REST API 키: {k} (테스트 앱)", (k,), "ko"))
        k = f.pw()
        out.append(("ko_password_change", f"관리자 계정 비밀번호를 {k} 로 바꿨다고 들었다.", (k,), "ko"))
        k = f.m(28)
        out.append(("ko_secret_key_prose", f"시크릿 키는 {k} 입니다. 운영 환경에서는 쓰지 말 것.", (k,), "ko"))
        k = f.m(20)
        out.append(("ko_auth_key", f"발급받은 인증키 {k} 를 공공데이터 API 호출에 썼다.", (k,), "ko"))
        k = f.pw()
        out.append(("en_password_prose", f"For the record, the kiosk admin password was {k} until Friday.", (k,), "en"))
        k = f.m(32)
        out.append(("en_license_prose", f"Our license key is {k}; do not share it outside the team.", (k,), "en"))
    return out


def _negatives(f: _F) -> list[tuple[str, str]]:
    s, uid = f.s, f.uid
    sha = s(HEX, 40)
    return [
        # placeholders in the shapes people write them
        ("Put your key in .env as OPENAI_API_KEY=<your-api-key> and restart.", "en"),
        ("DB_PASSWORD=<your-password>", "en"),
        ("api_key: \"YOUR_API_KEY_HERE\"", "en"),
        ("STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx is only the format.", "en"),
        ("GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", "en"),
        ("token: xxxx-xxxx-xxxx-xxxx", "en"),
        ("password: changeme", "en"),
        ("ADMIN_PASSWORD=change_me_please", "en"),
        ("SECRET_KEY = 'replace-me'", "en"),
        ("client_secret=REPLACE_WITH_CLIENT_SECRET", "en"),
        ("\"apiKey\": \"<API_KEY>\"", "en"),
        ("password = \"********\"", "en"),
        ("Authorization: Bearer <access_token>", "en"),
        ("Authorization: Bearer YOUR_TOKEN", "en"),
        ("X-API-Key: {{api_key}}", "en"),
        ("SENDGRID_API_KEY=SG.xxxxx.yyyyy in the example env file.", "en"),
        ("aws_secret_access_key = <secret>", "en"),
        ("password: dummy-password", "en"),
        ("api_token=example-token", "en"),
        ("secret: my-secret-value", "en"),
        ("NPM_TOKEN=${{ secrets.NPM_TOKEN }}", "en"),
        ("password='%(db_password)s'", "en"),
        ("PASSWORD=...", "en"),
        ("API 키 자리에는 <발급받은-키> 를 넣는다.", "ko"),
        ("비밀번호=********", "ko"),
        ("예시: SLACK_BOT_TOKEN=xoxb-your-token", "ko"),
        ("토큰: YOUR_TOKEN_HERE", "ko"),
        ("설정 예시의 password: changeme 는 반드시 바꿀 것.", "ko"),
        ("access_key: AKIAXXXXXXXXXXXXXXXX", "en"),
        ("secret=test", "en"),
        ("password=password", "en"),
        ("token=TODO", "en"),
        ("api_key=\"\"", "en"),
        # template credentials in URLs
        ("postgres://user:password@localhost:5432/mydb", "en"),
        ("https://user:pass@example.com/private/repo.git", "en"),
        ("mysql://root:root@localhost/test", "en"),
        ("redis://:password@localhost:6379/0", "en"),
        ("amqp://guest:guest@rabbitmq:5672/", "en"),
        ("mongodb://admin:admin@localhost:27017", "en"),
        ("postgresql://postgres:postgres@127.0.0.1:5432/postgres", "en"),
        ("http://username:password@proxy.example.com:3128", "en"),
        ("smtp://user:secret@mail.example.org:587", "en"),
        ("DATABASE_URL=postgres://<user>:<password>@<host>:5432/<db>", "en"),
        ("예: postgres://user:password@localhost:5432/app 형식으로 적는다.", "ko"),
        ("ftp://anonymous:anonymous@ftp.example.net/pub", "en"),
        ("https://user:${GITHUB_TOKEN}@github.com/acme/app.git", "en"),
        # ids, hashes, versions and other values that are not secrets
        (f"Commit {sha} reverted the token cache change.", "en"),
        (f"trace_id={s(HEX, 32)} span_id={s(HEX, 16)}", "en"),
        (f"The upload id is {uid()}; retry with the same id.", "en"),
        (f"Image digest sha256:{s(HEX, 64)} is what production runs.", "en"),
        ("pk_test_" + s(ALNUM, 24) + " is the publishable key used by the checkout page.", "en"),
        ("The Mapbox public token pk." + s(B64URL, 60) + "." + s(B64URL, 22) + " is fine in the browser bundle.", "en"),
        ("Slack user U" + s(UPPER + DIGITS, 10) + " and channel C" + s(UPPER + DIGITS, 10) + " own the alert.", "en"),
        ("AWS account 123456789012 and role arn:aws:iam::123456789012:role/ci-deploy.", "en"),
        ("The Sentry project id is 4505871234567890 and the org slug is acme.", "en"),
        ("GCP project number 918273645512 owns the bucket.", "en"),
        ("Kubernetes secret name: api-credentials-v2 in namespace payments.", "en"),
        ("pip install openai==1.51.0 anthropic==0.39.0 tiktoken==0.8.0", "en"),
        ("The feature flag key is new-checkout-flow-2024.", "en"),
        ("max_tokens=4096, temperature=0.2, top_p=0.9", "en"),
        ("The cache key is session:{user_id}:v3 and expires in 3600s.", "en"),
        ("Request-Id: " + uid(), "en"),
        ("ETag: W/\"" + s(HEX, 32) + "\"", "en"),
        ("X-Request-Id: " + s(HEX, 16) + " was logged for the failed token refresh.", "en"),
        ("The public SSH key ssh-rsa AAAAB3NzaC1yc2E" + s(B64, 60) + " is on the bastion.", "en"),
        ("커밋 " + sha[:8] + " 에서 토큰 갱신 버그가 고쳐졌다.", "ko"),
        ("요청 ID " + uid() + " 를 기준으로 로그를 찾을 것.", "ko"),
        ("버전 2.14.3 부터 API 키 헤더 이름이 X-Api-Key 로 바뀌었다.", "ko"),
        # prose and code about credentials, without a value
        ("The API key lives in Doppler; the app reads it at boot.", "en"),
        ("Rotate the Datadog API key whenever someone leaves the team.", "en"),
        ("NAVER_CLIENT_SECRET and KAKAO_REST_API_KEY come from the secret manager.", "en"),
        ("Set CLOUDFLARE_API_TOKEN in the repository secrets, not in wrangler.toml.", "en"),
        ("password_reset_token_ttl: 15m", "en"),
        ("auth_token = os.environ.get('AUTH_TOKEN')", "en"),
        ("const apiKey = process.env.MAPBOX_TOKEN ?? ''", "en"),
        ("api_key = settings.PAYMENT_API_KEY", "en"),
        ("if not secret: raise ValueError('missing secret')", "en"),
        ("token_type: bearer, expires_in: 3600", "en"),
        ("The Authorization header uses the Bearer scheme; tokens last an hour.", "en"),
        ("Secrets are injected by the CSI driver; the password never touches disk.", "en"),
        ("The license key check runs once a day against the vendor API.", "en"),
        ("토큰은 만료 5분 전에 자동으로 갱신된다.", "ko"),
        ("비밀번호는 bcrypt 로 해시해서 저장한다.", "ko"),
        ("네이버 클라이언트 시크릿은 콘솔에서 재발급할 수 있다.", "ko"),
        ("카카오 REST API 키는 앱 설정 > 요약 정보에서 확인한다.", "ko"),
        ("시크릿 키는 Vault 에만 두고 코드에는 경로만 적는다.", "ko"),
        ("인증키 발급은 공공데이터포털에서 하루 정도 걸린다.", "ko"),
        ("관리자 비밀번호를 바꾼 뒤에는 세션이 모두 끊긴다.", "ko"),
        ("액세스 토큰 만료 시간은 1시간이다.", "ko"),
        ("API 키 없이 호출하면 401 이 난다.", "ko"),
    ]


_PLACEHOLDERS = ("<your-key>", "YOUR_KEY_HERE", "xxxxxxxxxxxxxxxx", "changeme", "********", "<redacted>",
                 "${SECRET_FROM_VAULT}", "replace_me", "your-token-goes-here", "dummy", "{{ .Values.secret }}",
                 "<insert key>", "TBD", "example", "REPLACE_ME", "put-your-secret-here")
_TEMPLATE_URLS = ("{scheme}://user:password@localhost:{port}/app", "{scheme}://admin:admin@{host}:{port}/",
                  "{scheme}://<user>:<password>@{host}:{port}/db", "{scheme}://user:pass@db.example.com:{port}/app",
                  "{scheme}://app:${{DB_PASSWORD}}@{host}:{port}/app", "{scheme}://{host}:{port}/app")


def _generated_negatives(f: _F) -> list[tuple[str, str]]:
    """Look-alikes made from the same key names as the positives: placeholder values, template
    URLs, and ids or hashes under names that are not credentials."""
    out = []
    for i, (_, name, _) in enumerate(_kv(f)):
        value = _PLACEHOLDERS[i % len(_PLACEHOLDERS)]
        form, lang = _KV_FORMS[i % len(_KV_FORMS)]
        out.append((form.format(name=name, jname=_json_name(name), k=value), lang))
    for i, scheme in enumerate(("postgres", "mysql", "redis", "mongodb", "amqp", "https", "postgresql", "mariadb")):
        for j, template in enumerate(_TEMPLATE_URLS):
            if (i + j) % 2 == 0:
                url = template.format(scheme=scheme, host=f.r.choice(["db", "localhost", "cache"]), port=f.r.randint(1024, 65000))
                out.append((f"The example config uses {url} for local runs.", "en") if j % 3 else
                           (f"예시 설정은 {url} 를 쓴다.", "ko"))
    for name, make in (("BUILD_SHA", lambda: f.s(HEX, 40)), ("REQUEST_ID", f.uid), ("IMAGE_DIGEST", lambda: "sha256:" + f.s(HEX, 64)),
                       ("TRACE_ID", lambda: f.s(HEX, 32)), ("RELEASE", lambda: f"v{f.r.randint(1, 9)}.{f.r.randint(0, 40)}.{f.r.randint(0, 9)}"),
                       ("TENANT_ID", f.uid), ("CHECKSUM", lambda: f.s(HEX, 64)), ("GIT_COMMIT", lambda: f.s(HEX, 40))):
        for _ in range(3):
            out.append((f"The job printed {name}={make()} before it failed.", "en"))
    return out


def heldout(seed: int = SEED, per_provider: int = 3) -> list[Example]:
    """The held-out corpus: every provider format in `per_provider` sentences, every key-value
    and header form in each of its shapes, URLs, prose, and the look-alikes that must stay."""
    f = _F(random.Random(seed))
    out: list[Example] = []
    for kind, make in _providers(f).items():
        for i in range(per_provider):
            k = make()
            if i < 2:
                text, lang = _PROVIDER_EN[(i + len(out)) % len(_PROVIDER_EN)].format(k=k), "en"
            else:
                text, lang = _PROVIDER_KO[len(out) % len(_PROVIDER_KO)].format(k=k), "ko"
            out.append(Example(text, kind, (k,), lang))
    for kind, name, make in _kv(f):
        for j, (form, lang) in enumerate(_KV_FORMS):
            if (j + len(kind)) % 5 in (0, 1, 2):  # three of the five shapes per kind
                k = make()
                out.append(Example(form.format(name=name, jname=_json_name(name), k=k), kind, (k,), lang))
    for kind, header, make in _headers(f):
        for form, lang in _HEADER_FORMS:
            k = make()
            out.append(Example(form.format(h=header, k=k).replace(": " + k, " " + k) if header.startswith("Authorization")
                               else form.format(h=header, k=k), kind, (k,), lang))
    for kind, text, secrets, lang in _url_positives(f) + _prose_positives(f):
        out.append(Example(text, kind, secrets, lang))
    for text, lang in _negatives(f) + _generated_negatives(f):
        out.append(Example(text, "neg:heldout", (), lang))
    return out


if __name__ == "__main__":
    examples = heldout()
    pos = [e for e in examples if e.positive]
    print(f"{len(pos)} positives in {len({e.kind for e in pos})} kinds, {len(examples) - len(pos)} negatives; "
          f"Korean: {sum(e.lang == 'ko' for e in examples)}")
