"""Independent secret-redaction test corpus, writer A.

Theme: lessons as a coding agent logs them after a task ("what the instructions
lacked", "what I learned"), mixing prose, inline code, short code lines in several
languages, commands and file references; about a third in Korean.

Every credential-shaped value is generated at run time from a seeded
random.Random (prefix pieces are split so that scanners do not flag this file).
Standard library only.

Written without sight of the redaction rules, their tests or the other corpora, from facts read
in the scanners' public test fixtures (gitleaks, MIT; trufflehog, AGPL-3.0; detect-secrets,
Apache-2.0; secretlint, MIT): services, prefixes, lengths, alphabets and the kinds of context.
No fixture value or sentence is reproduced. "dev" may be tuned on; "heldout" is run only to
report a figure (bench/secrets_bench.py prints the misses of "dev" alone).
"""
from __future__ import annotations

import base64
import json
import random
import re
import string
import sys

SEEDS = {"dev": 1101, "heldout": 2202}

# ---------------------------------------------------------------- alphabets
LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
AN = LOW + UP + DIG
LN = LOW + DIG
UN = UP + DIG
HEX = "0123456789abcdef"
B32 = UP + "234567"
BECH = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
LETTERS = LOW + UP


def r(rng, alpha, n):
    return "".join(rng.choice(alpha) for _ in range(n))


def rx(rng, alpha, n):
    """n chars from alpha, but first and last char alphanumeric."""
    if n <= 2:
        return r(rng, AN, n)
    return r(rng, AN, 1) + r(rng, alpha, n - 2) + r(rng, AN, 1)


def uuid(rng):
    h = r(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


WORDS = ["maple", "harbor", "quartz", "falcon", "copper", "willow", "ember", "tundra",
         "violet", "saturn", "pepper", "orchid", "granite", "comet", "lagoon", "cobalt"]


def password(rng, url_safe=False):
    syms = "!*-_." if url_safe else "!#$%&*-_.+"
    w1, w2 = rng.sample(WORDS, 2)
    form = rng.randint(0, 3)
    if form == 0:
        return w1.capitalize() + rng.choice(syms) + r(rng, DIG, 4) + w2
    if form == 1:
        return r(rng, AN, rng.randint(14, 22))
    if form == 2:
        return w1 + r(rng, DIG, 2) + rng.choice(syms) + w2.upper() + r(rng, DIG, 2)
    return rx(rng, AN + syms, rng.randint(16, 24))


# ---------------------------------------------------------------- generators
def g_openai(rng):
    mid = "T3Blbk" + "FJ"
    if rng.random() < 0.7:
        return "sk-" + rng.choice(["proj-", "svcacct-"]) + rx(rng, AN + "_-", 74) + mid + rx(rng, AN + "_-", 74)
    return "sk-" + r(rng, AN, 20) + mid + r(rng, AN, 20)


def g_jwt(rng):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    iat = rng.randint(1690000000, 1730000000)
    body = {"iss": rng.choice(["supabase", "auth.internal", "api-gw"]),
            "ref": r(rng, LOW, 20), "role": rng.choice(["service_role", "admin", "worker"]),
            "iat": iat, "exp": iat + 10 * 365 * 86400}
    pay = b64url(json.dumps(body, separators=(",", ":")).encode())
    return f"{head}.{pay}.{rx(rng, AN + '_-', 43)}"


def g_stripe(kind):
    def g(rng):
        pre = ("s" if kind == "sk" else "r") + "k_" + rng.choice(["live_", "live_", "test_"])
        return pre + r(rng, AN, rng.choice([24, 99]))
    return g


def g_mailgun(rng):
    if rng.random() < 0.5:
        return "key-" + r(rng, HEX, 32)
    return r(rng, HEX, 32) + "-" + r(rng, HEX, 8) + "-" + r(rng, HEX, 8)


def g_laravel(rng):
    body = base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode()
    return ("base64:" + body, (body,))


def g_generic_pw(rng):
    return password(rng)


# kind -> (family, service, VAR, noun_en, noun_ko, generator)
# family "tok": single value next to its name or service.
TOK = [
    # cloud / infra
    ("aws_access_key_id", "AWS", "AWS_ACCESS_KEY_ID", "access key id", "액세스 키 ID", lambda g: "AK" + "IA" + r(g, B32, 16)),
    ("gcp_api_key", "Google Maps", "GOOGLE_MAPS_API_KEY", "API key", "API 키", lambda g: "AI" + "za" + rx(g, AN + "_-", 35)),
    ("azure_ad_client_secret", "Azure AD", "AZURE_CLIENT_SECRET", "client secret", "클라이언트 시크릿", lambda g: r(g, AN, 3) + r(g, DIG, 1) + "Q~" + rx(g, AN + "_~.-", 34)),
    ("digitalocean_pat", "DigitalOcean", "DIGITALOCEAN_TOKEN", "token", "토큰", lambda g: "dop_" + "v1_" + r(g, HEX, 64)),
    ("heroku_api_key", "Heroku", "HEROKU_API_KEY", "API key", "API 키", lambda g: "HRKU" + "-AA" + rx(g, AN + "_-", 58)),
    ("cloudflare_api_token", "Cloudflare", "CLOUDFLARE_API_TOKEN", "API token", "API 토큰", lambda g: rx(g, AN + "_-", 40)),
    ("flyio_token", "Fly.io", "FLY_API_TOKEN", "deploy token", "배포 토큰", lambda g: "fo1" + "_" + rx(g, AN + "_-", 43)),
    ("vercel_token", "Vercel", "VERCEL_TOKEN", "token", "토큰", lambda g: r(g, AN, 24)),
    ("netlify_token", "Netlify", "NETLIFY_AUTH_TOKEN", "auth token", "인증 토큰", lambda g: rx(g, LN + "_-", 43)),
    ("supabase_pat", "Supabase", "SUPABASE_ACCESS_TOKEN", "access token", "액세스 토큰", lambda g: "sb" + "p_" + r(g, LN, 40)),
    ("tailscale_auth_key", "Tailscale", "TS_AUTHKEY", "auth key", "인증 키", lambda g: "tskey-" + "auth-k" + r(g, AN, 11) + "CNTRL-" + r(g, AN, 33)),
    ("vault_token", "Vault", "VAULT_TOKEN", "token", "토큰", lambda g: "hv" + "s." + r(g, DIG, 1) + rx(g, AN + "_-", 93)),
    ("terraform_cloud_token", "Terraform Cloud", "TFE_TOKEN", "API token", "API 토큰", lambda g: r(g, LN, 14) + ".atlas" + "v1." + rx(g, LN + "_-", 66)),
    ("doppler_token", "Doppler", "DOPPLER_TOKEN", "service token", "서비스 토큰", lambda g: "dp." + "pt." + r(g, AN, 43)),
    ("pulumi_token", "Pulumi", "PULUMI_ACCESS_TOKEN", "access token", "액세스 토큰", lambda g: "pul" + "-" + r(g, HEX, 40)),
    ("databricks_token", "Databricks", "DATABRICKS_TOKEN", "token", "토큰", lambda g: "da" + "pi" + r(g, HEX, 32)),
    ("planetscale_password", "PlanetScale", "PLANETSCALE_DB_PASSWORD", "password", "비밀번호", lambda g: "pscale" + "_pw_" + rx(g, AN + "_", 43)),
    ("clickhouse_cloud_key", "ClickHouse Cloud", "CLICKHOUSE_KEY_SECRET", "key secret", "키 시크릿", lambda g: "4b" + "1d" + r(g, AN, 38)),
    ("age_secret_key", "SOPS", "SOPS_AGE_KEY", "age key", "age 키", lambda g: "AGE-" + "SECRET-KEY-1" + r(g, BECH, 58)),
    # VCS / packages / CI
    ("github_pat_classic", "GitHub", "GITHUB_TOKEN", "token", "토큰", lambda g: "gh" + "p_" + r(g, AN, 36)),
    ("github_fine_grained_pat", "GitHub", "GH_TOKEN", "fine-grained token", "fine-grained 토큰", lambda g: "github" + "_pat_" + r(g, AN, 22) + "_" + r(g, AN, 59)),
    ("github_oauth_token", "GitHub OAuth", "GITHUB_OAUTH_TOKEN", "OAuth token", "OAuth 토큰", lambda g: "gh" + "o_" + r(g, AN, 36)),
    ("github_app_token", "GitHub App", "GITHUB_APP_INSTALLATION_TOKEN", "installation token", "설치 토큰", lambda g: "gh" + "s_" + r(g, AN, 36)),
    ("gitlab_pat", "GitLab", "GITLAB_TOKEN", "personal access token", "개인 액세스 토큰", lambda g: "gl" + "pat-" + rx(g, AN + "_-", 20)),
    ("gitlab_runner_token", "GitLab runner", "RUNNER_TOKEN", "registration token", "등록 토큰", lambda g: "gl" + "rt-" + rx(g, AN + "_-", 20)),
    ("bitbucket_app_password", "Bitbucket", "BITBUCKET_APP_PASSWORD", "app password", "앱 비밀번호", lambda g: "AT" + "BB" + r(g, AN, 32)),
    ("npm_token", "npm", "NPM_TOKEN", "publish token", "배포 토큰", lambda g: "np" + "m_" + r(g, AN, 36)),
    ("pypi_token", "PyPI", "TWINE_PASSWORD", "upload token", "업로드 토큰", lambda g: "pypi-" + "AgEIcHlwaS5vcmc" + rx(g, AN + "_-", 70)),
    ("rubygems_api_key", "RubyGems", "GEM_HOST_API_KEY", "API key", "API 키", lambda g: "rubygems" + "_" + r(g, HEX, 48)),
    ("nuget_api_key", "NuGet", "NUGET_API_KEY", "API key", "API 키", lambda g: "oy" + "2" + r(g, LN, 43)),
    ("dockerhub_pat", "Docker Hub", "DOCKERHUB_TOKEN", "access token", "액세스 토큰", lambda g: "dckr" + "_pat_" + rx(g, AN + "_-", 27)),
    ("atlassian_api_token", "Jira", "JIRA_API_TOKEN", "API token", "API 토큰", lambda g: "ATA" + "TT3" + rx(g, AN + "_-", 177) + "=" + r(g, UP[:6] + DIG, 8)),
    ("circleci_pat", "CircleCI", "CIRCLECI_TOKEN", "personal token", "개인 토큰", lambda g: "CCI" + "PAT_" + r(g, AN, 22) + "_" + r(g, HEX, 40)),
    # chat
    ("slack_bot_token", "Slack", "SLACK_BOT_TOKEN", "bot token", "봇 토큰", lambda g: "xo" + "xb-" + r(g, DIG, 12) + "-" + r(g, DIG, 13) + "-" + r(g, AN, 24)),
    ("slack_user_token", "Slack", "SLACK_USER_TOKEN", "user token", "유저 토큰", lambda g: "xo" + "xp-" + r(g, DIG, 12) + "-" + r(g, DIG, 13) + "-" + r(g, DIG, 13) + "-" + r(g, HEX, 32)),
    ("slack_app_token", "Slack Socket Mode", "SLACK_APP_TOKEN", "app-level token", "앱 레벨 토큰", lambda g: "xa" + "pp-1-A" + r(g, UN, 10) + "-" + r(g, DIG, 13) + "-" + r(g, HEX, 64)),
    ("discord_bot_token", "Discord", "DISCORD_TOKEN", "bot token", "봇 토큰", lambda g: "M" + rng_pick(g, "TQRSzjkDUVY") + r(g, AN, g.choice([22, 24])) + "." + r(g, AN + "_-", 6) + "." + rx(g, AN + "_-", g.choice([27, 38]))),
    ("telegram_bot_token", "Telegram", "TELEGRAM_BOT_TOKEN", "bot token", "봇 토큰", lambda g: r(g, "123456789", 1) + r(g, DIG, 9) + ":AA" + rx(g, AN + "_-", 33)),
    # mail / messaging
    ("sendgrid_api_key", "SendGrid", "SENDGRID_API_KEY", "API key", "API 키", lambda g: "S" + "G." + rx(g, AN + "_-", 22) + "." + rx(g, AN + "_-", 43)),
    ("mailgun_api_key", "Mailgun", "MAILGUN_API_KEY", "API key", "API 키", g_mailgun),
    ("mailchimp_api_key", "Mailchimp", "MAILCHIMP_API_KEY", "API key", "API 키", lambda g: r(g, HEX, 32) + "-us" + str(g.randint(2, 21))),
    ("brevo_api_key", "Brevo", "BREVO_API_KEY", "API key", "API 키", lambda g: "xkey" + "sib-" + r(g, HEX, 64) + "-" + r(g, AN, 16)),
    ("postmark_server_token", "Postmark", "POSTMARK_SERVER_TOKEN", "server token", "서버 토큰", uuid),
    # payments / commerce
    ("stripe_secret_key", "Stripe", "STRIPE_SECRET_KEY", "secret key", "시크릿 키", g_stripe("sk")),
    ("stripe_restricted_key", "Stripe", "STRIPE_RESTRICTED_KEY", "restricted key", "제한 키", g_stripe("rk")),
    ("stripe_webhook_secret", "Stripe webhook", "STRIPE_WEBHOOK_SECRET", "signing secret", "서명 시크릿", lambda g: "wh" + "sec_" + r(g, AN, 32)),
    ("square_access_token", "Square", "SQUARE_ACCESS_TOKEN", "access token", "액세스 토큰", lambda g: "EA" + "AA" + rx(g, AN + "_-", 60)),
    ("shopify_access_token", "Shopify", "SHOPIFY_ACCESS_TOKEN", "Admin API token", "Admin API 토큰", lambda g: "shp" + "at_" + r(g, HEX, 32)),
    ("flutterwave_secret_key", "Flutterwave", "FLW_SECRET_KEY", "secret key", "시크릿 키", lambda g: "FLWSECK" + "_TEST-" + r(g, HEX, 32) + "-X"),
    # AI / LLM
    ("openai_api_key", "OpenAI", "OPENAI_API_KEY", "API key", "API 키", g_openai),
    ("anthropic_api_key", "Anthropic", "ANTHROPIC_API_KEY", "API key", "API 키", lambda g: "sk-" + "ant-api03-" + rx(g, AN + "_-", 93) + "AA"),
    ("huggingface_token", "Hugging Face", "HF_TOKEN", "access token", "액세스 토큰", lambda g: "h" + "f_" + r(g, LETTERS, 34)),
    ("groq_api_key", "Groq", "GROQ_API_KEY", "API key", "API 키", lambda g: "gs" + "k_" + r(g, AN, 52)),
    ("replicate_api_token", "Replicate", "REPLICATE_API_TOKEN", "API token", "API 토큰", lambda g: "r8" + "_" + rx(g, AN + "_-", 37)),
    ("cohere_api_key", "Cohere", "CO_API_KEY", "API key", "API 키", lambda g: r(g, AN, 40)),
    ("mistral_api_key", "Mistral", "MISTRAL_API_KEY", "API key", "API 키", lambda g: r(g, AN, 32)),
    ("perplexity_api_key", "Perplexity", "PPLX_API_KEY", "API key", "API 키", lambda g: "pp" + "lx-" + r(g, AN, 48)),
    ("openrouter_api_key", "OpenRouter", "OPENROUTER_API_KEY", "API key", "API 키", lambda g: "sk-" + "or-v1-" + r(g, HEX, 64)),
    ("xai_api_key", "xAI", "XAI_API_KEY", "API key", "API 키", lambda g: "x" + "ai-" + r(g, AN, 80)),
    ("deepseek_api_key", "DeepSeek", "DEEPSEEK_API_KEY", "API key", "API 키", lambda g: "sk-" + r(g, LN, 32)),
    ("langsmith_api_key", "LangSmith", "LANGSMITH_API_KEY", "API key", "API 키", lambda g: "ls" + "v2_" + g.choice(["pt_", "sk_"]) + r(g, HEX, 32) + "_" + r(g, HEX, 10)),
    ("elevenlabs_api_key", "ElevenLabs", "ELEVENLABS_API_KEY", "API key", "API 키", lambda g: "s" + "k_" + r(g, HEX, 48)),
    # observability / SaaS
    ("datadog_api_key", "Datadog", "DD_API_KEY", "API key", "API 키", lambda g: r(g, HEX, 32)),
    ("datadog_app_key", "Datadog", "DD_APP_KEY", "application key", "애플리케이션 키", lambda g: r(g, HEX, 40)),
    ("newrelic_user_key", "New Relic", "NEW_RELIC_API_KEY", "user key", "유저 키", lambda g: "NR" + "AK-" + r(g, UN, 27)),
    ("sentry_user_token", "Sentry", "SENTRY_AUTH_TOKEN", "auth token", "인증 토큰", lambda g: "sntry" + "u_" + r(g, HEX, 64)),
    ("grafana_sa_token", "Grafana", "GRAFANA_TOKEN", "service account token", "서비스 계정 토큰", lambda g: "gl" + "sa_" + r(g, AN, 32) + "_" + r(g, HEX, 8)),
    ("dynatrace_api_token", "Dynatrace", "DT_API_TOKEN", "API token", "API 토큰", lambda g: "dt0" + "c01." + r(g, UN, 24) + "." + r(g, UN, 64)),
    ("linear_api_key", "Linear", "LINEAR_API_KEY", "API key", "API 키", lambda g: "lin" + "_api_" + r(g, AN, 40)),
    ("notion_token", "Notion", "NOTION_TOKEN", "integration token", "통합 토큰", lambda g: "nt" + "n_" + r(g, DIG, 11) + r(g, AN, 35)),
    ("postman_api_key", "Postman", "POSTMAN_API_KEY", "API key", "API 키", lambda g: "PM" + "AK-" + r(g, HEX, 24) + "-" + r(g, HEX, 34)),
    ("airtable_pat", "Airtable", "AIRTABLE_TOKEN", "personal access token", "개인 액세스 토큰", lambda g: "pat" + r(g, AN, 14) + "." + r(g, HEX, 64)),
    ("okta_api_token", "Okta", "OKTA_API_TOKEN", "API token", "API 토큰", lambda g: "00" + rx(g, AN + "_-", 40)),
    ("snyk_token", "Snyk", "SNYK_TOKEN", "API token", "API 토큰", uuid),
    ("pagerduty_api_key", "PagerDuty", "PAGERDUTY_TOKEN", "REST API key", "REST API 키", lambda g: "u+" + rx(g, AN + "_+-", 18)),
    ("jwt_service_role", "Supabase service role", "SUPABASE_SERVICE_ROLE_KEY", "JWT", "JWT", g_jwt),
    # generic assignments
    ("generic_password", None, None, "password", "비밀번호", g_generic_pw),
    ("generic_secret", None, None, "secret", "시크릿", lambda g: g.choice([r(g, HEX, 64), r(g, AN, 48)])),
    ("generic_api_key", None, None, "API key", "API 키", lambda g: r(g, AN, g.choice([32, 40]))),
    ("django_secret_key", "Django", "DJANGO_SECRET_KEY", "secret key", "시크릿 키", lambda g: rx(g, LN + "!@#%^&*(-_=+)", 50)),
    ("rails_secret_key_base", "Rails", "SECRET_KEY_BASE", "secret_key_base", "secret_key_base", lambda g: r(g, HEX, 128)),
    ("laravel_app_key", "Laravel", "APP_KEY", "app key", "앱 키", g_laravel),
]

GENERIC_NAMES = {
    "generic_password": [("Postgres", "DB_PASSWORD"), ("SMTP", "SMTP_PASSWORD"), ("admin console", "ADMIN_PASSWORD"),
                         ("Redis", "REDIS_PASSWORD"), ("Keycloak admin", "KEYCLOAK_ADMIN_PASSWORD"), ("Elasticsearch", "ELASTIC_PASSWORD")],
    "generic_secret": [("auth service", "JWT_SECRET"), ("session middleware", "SESSION_SECRET"),
                       ("NextAuth", "NEXTAUTH_SECRET"), ("webhook receiver", "WEBHOOK_SIGNING_SECRET")],
    "generic_api_key": [("billing API", "BILLING_API_KEY"), ("internal search API", "SEARCH_API_KEY"),
                        ("geocoding service", "GEOCODER_API_KEY"), ("partner API", "PARTNER_API_KEY")],
}


def rng_pick(g, s):
    return g.choice(s)


# pair family: (kind, service, VAR, id VAR, id generator, secret generator, label id?)
PAIR = [
    ("aws_secret_access_key", "AWS", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
     lambda g: "AK" + "IA" + r(g, B32, 16), lambda g: rx(g, AN + "/+", 40), True),
    ("alibaba_access_key_secret", "Alibaba Cloud", "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_ACCESS_KEY_ID",
     lambda g: "LT" + "AI" + r(g, AN, 20), lambda g: r(g, AN, 30), True),
    ("twilio_auth_token", "Twilio", "TWILIO_AUTH_TOKEN", "TWILIO_ACCOUNT_SID",
     lambda g: "AC" + r(g, HEX, 32), lambda g: r(g, HEX, 32), False),
    ("paypal_client_secret", "PayPal", "PAYPAL_CLIENT_SECRET", "PAYPAL_CLIENT_ID",
     lambda g: "A" + rx(g, AN + "_-", 79), lambda g: "E" + rx(g, AN + "_-", 79), False),
    ("plaid_secret", "Plaid", "PLAID_SECRET", "PLAID_CLIENT_ID",
     lambda g: r(g, HEX, 24), lambda g: r(g, HEX, 30), False),
    ("algolia_admin_key", "Algolia", "ALGOLIA_ADMIN_KEY", "ALGOLIA_APP_ID",
     lambda g: r(g, UN, 10), lambda g: r(g, HEX, 32), False),
    ("google_oauth_client_secret", "Google OAuth", "GOOGLE_CLIENT_SECRET", "GOOGLE_CLIENT_ID",
     lambda g: r(g, DIG, 12) + "-" + r(g, LN, 32) + ".apps.googleusercontent.com", lambda g: "GOC" + "SPX-" + rx(g, AN + "_-", 28), False),
    ("github_oauth_client_secret", "GitHub OAuth app", "GITHUB_CLIENT_SECRET", "GITHUB_CLIENT_ID",
     lambda g: "Iv1." + r(g, HEX, 16), lambda g: r(g, HEX, 40), False),
]


# url / connection-string family: builder returns (text_value, secret)
def _u(rng):
    return password(rng, url_safe=True)


def c_pg(g):
    pw = _u(g)
    return f"postgres://{g.choice(['app_user', 'api', 'migrator'])}:{pw}@{g.choice(['db.internal', '10.0.3.12', 'pg-staging.cluster-c9x.eu-west-1.rds.amazonaws.com'])}:5432/{g.choice(['app', 'orders', 'core'])}", pw


def c_mysql(g):
    pw = _u(g)
    return f"mysql://{g.choice(['root', 'shop', 'wp'])}:{pw}@{g.choice(['127.0.0.1', 'mysql.staging.local'])}:3306/{g.choice(['shop', 'wordpress'])}", pw


def c_mongo(g):
    pw = _u(g)
    return f"mongodb+srv://{g.choice(['svc', 'reporting', 'admin'])}:{pw}@cluster0.{r(g, LN, 5)}.mongodb.net/{g.choice(['prod', 'analytics'])}?retryWrites=true&w=majority", pw


def c_redis(g):
    pw = _u(g)
    return f"redis://default:{pw}@redis-{r(g, DIG, 5)}.c{g.randint(1, 300)}.us-east-1-2.ec2.cloud.redislabs.com:{r(g, DIG, 5)}", pw


def c_amqp(g):
    pw = _u(g)
    return f"amqps://{g.choice(['worker', 'celery'])}:{pw}@{g.choice(['rabbit.internal', 'mq.prod.local'])}:5671/%2f", pw


def c_https(g):
    pw = _u(g)
    return f"https://{g.choice(['deploy', 'ci-bot', 'jenkins'])}:{pw}@{g.choice(['nexus.corp.example', 'artifacts.internal.example', 'git.example.org'])}/{g.choice(['repository/npm-private/', 'scm/app.git', 'api/v1/'])}", pw


def c_smtp(g):
    pw = _u(g)
    return f"smtp://postmaster%40mg.{g.choice(['example.com', 'acme.io'])}:{pw}@smtp.mailgun.org:587", pw


def c_jdbc(g):
    pw = password(g)
    while ";" in pw:
        pw = password(g)
    return f"jdbc:sqlserver://{g.choice(['sql01', 'mssql.internal'])}:1433;databaseName={g.choice(['orders', 'hr'])};user={g.choice(['app', 'etl'])};password={pw}", pw


def c_dotnet(g):
    pw = password(g)
    return f"Server=tcp:{r(g, LN, 8)}.database.windows.net,1433;Database={g.choice(['app', 'crm'])};User ID=appadmin;Password={pw};Encrypt=True;", pw


def c_azstore(g):
    key = base64.b64encode(bytes(g.randrange(256) for _ in range(64))).decode()
    return f"DefaultEndpointsProtocol=https;AccountName={r(g, LN, 12)};AccountKey={key};EndpointSuffix=core.windows.net", key


URLS = [
    ("postgres_url_password", "Postgres", "DATABASE_URL", c_pg),
    ("mysql_url_password", "MySQL", "DATABASE_URL", c_mysql),
    ("mongodb_uri_password", "MongoDB Atlas", "MONGODB_URI", c_mongo),
    ("redis_url_password", "Redis", "REDIS_URL", c_redis),
    ("amqp_url_password", "RabbitMQ", "CELERY_BROKER_URL", c_amqp),
    ("basic_auth_url", "Nexus registry", "REGISTRY_URL", c_https),
    ("smtp_url_password", "Mailgun SMTP", "EMAIL_URL", c_smtp),
    ("jdbc_password", "SQL Server", "SPRING_DATASOURCE_URL", c_jdbc),
    ("dotnet_connstring_password", "Azure SQL", "ConnectionStrings__Default", c_dotnet),
    ("azure_storage_account_key", "Azure Storage", "AZURE_STORAGE_CONNECTION_STRING", c_azstore),
]


def h_slack(g):
    s = r(g, AN, 24)
    return f"https://hooks.slack.com/services/T{r(g, UN, 10)}/B{r(g, UN, 10)}/{s}", s


def h_discord(g):
    s = rx(g, AN + "_-", 68)
    return f"https://discord.com/api/webhooks/{r(g, '123456789', 1)}{r(g, DIG, 17)}/{s}", s


def h_teams(g):
    s = r(g, HEX, 32)
    return (f"https://{g.choice(['contoso', 'acmecorp'])}.webhook.office.com/webhookb2/{uuid(g)}@{uuid(g)}"
            f"/IncomingWebhook/{s}/{uuid(g)}"), s


HOOKS = [
    ("slack_webhook", "Slack", "SLACK_WEBHOOK_URL", h_slack),
    ("discord_webhook", "Discord", "DISCORD_WEBHOOK_URL", h_discord),
    ("teams_webhook", "Teams", "TEAMS_WEBHOOK_URL", h_teams),
]


def hd_bearer(g):
    t = r(g, AN, g.choice([32, 40, 48]))
    return "Bearer", t


def hd_basic(g):
    user = g.choice(["ci", "deploy", "svc-reporting", "admin"])
    t = base64.b64encode(f"{user}:{password(g)}".encode()).decode()
    return "Basic", t


HEADERS = [
    ("bearer_token", hd_bearer),
    ("basic_auth_header", hd_basic),
]


def _pem(g, label, prefix: bytes, nbytes):
    raw = prefix + bytes(g.randrange(256) for _ in range(nbytes))
    body = base64.b64encode(raw).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    if len(lines) > 1 and len(lines[-1]) < 20:
        lines[-2] = lines[-2] + lines[-1]
        lines.pop()
    dash = "-" * 5
    text = "\n".join([f"{dash}BEGIN {label}{dash}"] + lines + [f"{dash}END {label}{dash}"])
    return text, tuple(lines)


PEMS = [
    ("private_key_rsa", "RSA " + "PRIVATE KEY", lambda g: _pem(g, "RSA " + "PRIVATE KEY", b"\x30\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00", g.randint(230, 330))),
    ("private_key_openssh", "OPENSSH " + "PRIVATE KEY", lambda g: _pem(g, "OPENSSH " + "PRIVATE KEY", b"openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00\x00\x04none\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x003\x00\x00\x00\x0bssh-ed25519", g.randint(120, 200))),
    ("private_key_ec", "EC " + "PRIVATE KEY", lambda g: _pem(g, "EC " + "PRIVATE KEY", b"\x30\x77\x02\x01\x01\x04\x20", 110)),
    ("private_key_pkcs8", "PRIVATE" + " KEY", lambda g: _pem(g, "PRIVATE" + " KEY", b"\x30\x82\x04\xbe\x02\x01\x00\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00", g.randint(230, 330))),
]

# ---------------------------------------------------------------- templates
# Placeholders: @V@ value, @SVC@ service, @VAR@ env var, @VARL@ lower var, @CAMEL@ camelCase,
# @SLUG@ slug, @NOUN@ / @NOUNKO@ noun, @ENV@ environment name.
T = {}

T["tok", "dev", "en"] = [
    "The @ENV@ deploy failed because @VAR@ was not set; I set it to @V@ in .env.local and it passed.",
    "What the instructions lacked: the @SVC@ @NOUN@. The user gave me `@V@` and the sync job started working.",
    "Learned: @SVC@ rejects the request when the @NOUN@ is in a query param. Moved `@V@` into a header and got a 200.",
    "Added `@VAR@=@V@` to `.env` — the test suite reads it through settings.py, not from CI secrets.",
    "`export @VAR@=@V@` before `npm run e2e`, otherwise every fixture returns 401.",
    "Fix for the flaky integration test: `os.environ.setdefault(\"@VAR@\", \"@V@\")` at the top of conftest.py.",
    "In src/config.ts I hardcoded `const @CAMEL@ = \"@V@\";` for now; the brief never said where the @SVC@ @NOUN@ lives.",
    "Two credentials were missing from the brief; the @SVC@ one is @V@ and the other was already in Vault.",
    "For @SVC@ use @V@ (the old @NOUN@ was revoked on Monday).",
    "The Go client needed it explicitly: `client := @SLUG@.NewClient(\"@V@\")` — the env lookup silently returned \"\".",
    "Note to self: the @SVC@ @NOUN@ the user pasted is @V@. It only works against the @ENV@ project.",
    "Values I ended up using:\n| service | value |\n|---|---|\n| @SVC@ | `@V@` |\n| region | eu-west-1 |",
    "Checklist for next run:\n- @SVC@ @NOUN@: @V@\n- run `make seed` before the e2e suite",
    "Ruby side: `ENV[\"@VAR@\"] ||= \"@V@\"` in config/initializers/@SLUG@.rb made the worker boot.",
    "PHP: had to put '@V@' into config/services.php under the @SVC@ entry because the config cache was stale.",
    "Ran `gh secret set @VAR@ --body @V@` so the workflow can reach @SVC@.",
    "Java test used `System.setProperty(\"@VAR@\", \"@V@\");` because the @SVC@ SDK reads system properties first.",
    "The 403 was a scope problem, not a typo: @V@ is the @SVC@ @NOUN@ with write scope; the read-only one failed.",
    "C#: `var @CAMEL@ = \"@V@\";` in Program.cs until appsettings.Development.json is wired up.",
    "Rust example compiled and ran once I passed the @NOUN@ directly: `let @SLUG@_key = \"@V@\";`",
    "User clarified mid-task that @VAR@ should be @V@, not the value shown in the README.",
    "Lesson: `docker run -e @VAR@=@V@ app:dev` works; the compose env_file was ignored in this setup.",
]

T["tok", "dev", "ko"] = [
    "사용자가 알려준 @SVC@ @NOUNKO@은 @V@이고, 권한 설정이 먼저 필요했다.",
    "`.env.local`에 `@VAR@=@V@`를 추가하니 @ENV@ 빌드가 통과했다.",
    "지시사항에 빠져 있던 것: @SVC@ @NOUNKO@. 사용자에게 물어봐서 @V@를 받았다.",
    "@SVC@ 연동이 401로 계속 실패했는데, @NOUNKO@을 `@V@`로 바꾸니 바로 해결됨.",
    "배운 점 — @SVC@ SDK는 `@VAR@` 환경변수만 읽는다. 현재 값은 @V@.",
    "`export @VAR@=@V@` 한 뒤에 `make test` 돌리면 통과.",
    "settings.py에서 `@VAR@ = \"@V@\"`로 하드코딩해 둠. 나중에 Vault로 옮겨야 함.",
    "@SVC@ 쪽은 @V@ 쓰면 됨 (예전 @NOUNKO@은 폐기됐다고 함).",
    "@V@의 scope가 read-only라서 push가 막혔었다. @SVC@ 콘솔에서 권한을 올렸다.",
    "src/config.ts의 `@CAMEL@` 값을 \"@V@\"으로 교체하고 나서 e2e 테스트가 초록색이 됐다.",
    "CI에서 `gh secret set @VAR@ --body @V@`로 등록해야 워크플로가 @SVC@에 접근한다.",
    "메모: @ENV@ 환경의 @SVC@ @NOUNKO@ = `@V@`, 다른 환경에서 쓰면 403이 난다.",
    "결론: @SVC@는 쿼리 파라미터로 보낸 @NOUNKO@을 거부한다. `@V@`를 헤더로 옮기니 200.",
    "Go 클라이언트는 `@SLUG@.NewClient(\"@V@\")`처럼 직접 넘겨야 했다. env 조회가 빈 문자열을 돌려줬음.",
    "| 서비스 | 값 |\n|---|---|\n| @SVC@ | `@V@` |\n위 값으로 스테이징 검증 완료.",
    "다음 실행 체크리스트:\n- @SVC@ @NOUNKO@: @V@\n- e2e 전에 `make seed` 실행",
    "Ruby 쪽은 `ENV[\"@VAR@\"] ||= \"@V@\"`를 initializer에 넣어서 해결.",
    "사용자가 작업 도중에 @VAR@ 값은 README에 있는 게 아니라 @V@라고 정정해줌.",
]

T["tok", "heldout", "en"] = [
    "Root cause: @SVC@ calls went out anonymous because @VAR@ was empty in the container. Setting it to `@V@` fixed the 401s.",
    "Missing from the task description: which @SVC@ account to use. Answer from the user — @NOUN@ @V@, org 'platform'.",
    "I wasted 20 minutes on this: the @SVC@ @NOUN@ (@V@) has to go in `X-Api-Key`, not `Authorization`.",
    "config/settings.yml now has `@VARL@: @V@` under the @ENV@ block.",
    "`@VAR@: \"@V@\"` in docker-compose.override.yml was what the worker container needed.",
    "Next time: pass `--token @V@` to the @SVC@ CLI directly; it ignores the env var when a profile exists.",
    "Python: `client = @SLUG@.Client(api_key=\"@V@\")` — the @SVC@ library does not pick up @VAR@ on its own.",
    "TS fix in src/lib/@SLUG@.ts: `headers: { \"x-api-key\": \"@V@\" }`.",
    "The @ENV@ @SVC@ @NOUN@ is @V@; prod uses a different one that I did not touch.",
    "Go: `os.Setenv(\"@VAR@\", \"@V@\")` inside TestMain, otherwise the @SVC@ client refused to start.",
    "What I learned about @SVC@: credentials are per project, and the one for this repo is `@V@`.",
    "Stored @V@ as @VAR@ in the GitHub Actions secrets; the job log masks it now.",
    "Java: `private static final String @VAR@ = \"@V@\";` made the @SVC@ client test pass locally.",
    "Gotcha: @VAR@ in .env.example is a placeholder; the working value the user gave is @V@.",
    "Ruby rake task: `@SLUG@ = Client.new(key: '@V@')`; the initializer runs too late for rake.",
    "PHP worker: `$@CAMEL@ = '@V@';` in bootstrap/worker.php, because Laravel's config cache kept the old value.",
    "Helm values for @ENV@: `@VARL@: @V@` (the secret template renders it into the pod env).",
    "Rust: `std::env::set_var(\"@VAR@\", \"@V@\");` in the integration test setup.",
    "C#: `builder.Configuration[\"@SLUG@:ApiKey\"] = \"@V@\";` got the console app talking to @SVC@.",
    "@SVC@ → @V@ (rotated today, the previous @NOUN@ is dead).",
    "Handoff note: I used the @SVC@ @NOUN@ @V@ for the backfill; please rotate it afterwards.",
    "Reproduced the failure with `@VAR@=@V@ pytest tests/integration -k @SLUG@`; passes now.",
]

T["tok", "heldout", "ko"] = [
    "@ENV@ 배포가 실패한 원인은 @VAR@ 누락이었다. 값을 @V@로 넣고 재시도해서 성공.",
    "작업 설명에 @SVC@ 계정 정보가 없었음. 사용자 답변: @NOUNKO@은 @V@.",
    "@SVC@ @NOUNKO@(@V@)은 `X-Api-Key` 헤더로 보내야 한다. Authorization 헤더로 보내면 401.",
    "docker-compose.override.yml에 `@VAR@: \"@V@\"`을 넣어야 워커가 뜬다.",
    "다음엔 @SVC@ CLI에 `--token @V@`를 직접 넘길 것. 프로필이 있으면 환경변수를 무시함.",
    "파이썬 클라이언트는 `Client(api_key=\"@V@\")`처럼 명시적으로 넘겨야 했다.",
    "이번에 알게 된 점: @SVC@ @NOUNKO@은 프로젝트마다 다르고, 이 저장소용은 `@V@`이다.",
    "@SVC@의 @ENV@ @NOUNKO@이 @V@라는 걸 사용자가 나중에 알려줬다.",
    "GitHub Actions 시크릿에 @VAR@로 @V@을 등록했더니 로그에서 마스킹된다.",
    "헬름 values에 `@VARL@: @V@`와 리전 설정을 같이 넣었다.",
    "백필 작업에는 @SVC@ @NOUNKO@ @V@을 썼음 — 끝나면 교체 요청 필요.",
    "`.env.example`의 값은 자리표시자였고, 실제로 동작하는 @VAR@는 @V@였다.",
    "원인: 컨테이너 안에서 @VAR@가 비어 있어 @SVC@ 호출이 익명으로 나갔다. `@V@`로 채우니 401이 사라짐.",
    "TS 수정 — src/lib/@SLUG@.ts에 `headers: { \"x-api-key\": \"@V@\" }` 추가.",
    "Go 테스트는 TestMain에서 `os.Setenv(\"@VAR@\", \"@V@\")`를 호출해야 통과했다.",
    "@SVC@ → @V@ (오늘 교체함, 이전 @NOUNKO@은 폐기).",
    "`@VAR@=@V@ pytest tests/integration`으로 재현했고 지금은 통과한다.",
    "C# 콘솔 앱은 `builder.Configuration[\"@SLUG@:ApiKey\"] = \"@V@\";`로 @SVC@에 붙었다.",
]

T["pair", "dev", "en"] = [
    "@SVC@ needed both values: id `@ID@`, secret `@V@`. The brief only mentioned the id.",
    "`@IDVAR@=@ID@` and `@VAR@=@V@` in .env.local — uploads work now.",
    "Learned: @SVC@ signs requests with the secret, so @ID@ alone was useless; the secret is @V@.",
    "settings.py:\n```python\n@IDVAR@ = \"@ID@\"\n@VAR@ = \"@V@\"\n```\nTemporary, move to the secret store.",
]
T["pair", "dev", "ko"] = [
    "@SVC@는 ID(@ID@)와 시크릿(@V@)이 둘 다 필요했다. 지시사항엔 ID만 있었음.",
    "`.env.local`에 `@IDVAR@=@ID@`, `@VAR@=@V@`를 넣으니 업로드 성공.",
]
T["pair", "heldout", "en"] = [
    "Credentials for @SVC@ from the user: @IDVAR@ @ID@ / @VAR@ @V@.",
    "Python: `client = Client(\"@ID@\", \"@V@\")` in scripts/sync.py got the @SVC@ import going.",
    "The secret half (@V@) was what was missing; @ID@ had been in the README all along.",
    "`export @IDVAR@=@ID@ @VAR@=@V@` then `./scripts/smoke.sh` — green.",
]
T["pair", "heldout", "ko"] = [
    "사용자가 준 @SVC@ 자격 증명: @ID@ / @V@.",
    "시크릿 쪽 값(@V@)이 빠져 있었다. ID인 @ID@는 README에 이미 있었음.",
]

T["url", "dev", "en"] = [
    "Migrations failed locally because @VAR@ pointed at the wrong host; the working one is `@URL@`.",
    "`@VAR@=@URL@` in .env fixed `prisma migrate dev`.",
    "The user gave me the @ENV@ @SVC@ connection string: @URL@ — it needs the VPN.",
    "`conn = connect(\"@URL@\")` in scripts/seed.py worked once the port was right.",
    "Learned that @SVC@ in CI is reachable at @URL@ (not localhost).",
    "Go: `dsn := \"@URL@\"` in cmd/worker/main.go, temporary until the secret manager is wired.",
]
T["url", "dev", "ko"] = [
    "로컬 마이그레이션이 실패한 건 @VAR@ 때문이었다. 제대로 된 값은 `@URL@`이다.",
    "사용자가 알려준 @SVC@ 접속 정보는 @URL@이고, VPN이 켜져 있어야 한다.",
    "`.env`에 `@VAR@=@URL@`를 넣으니 시드 스크립트가 돌아갔다.",
]
T["url", "heldout", "en"] = [
    "Connection refused until I used @URL@ as @VAR@; the docs had the old port.",
    "JS: `new Client({ connectionString: \"@URL@\" })` in scripts/backfill.ts.",
    "The instructions skipped the @SVC@ credentials; the user pasted @URL@ in chat.",
    "Compose file: `@VAR@: @URL@` for the api service.",
    "Ruby one-off script connected with \"@URL@\" hardcoded; delete it before merging.",
    "appsettings.Development.json / env for @SVC@ ended up as:\n@VAR@=@URL@",
]
T["url", "heldout", "ko"] = [
    "@SVC@ 연결이 계속 거부됐는데 @VAR@를 @URL@로 바꾸고 나서 해결.",
    "작업 지시에 @SVC@ 접속 정보가 없어서 물어봤고, 받은 값은 @URL@였다.",
    "compose 파일의 `@VAR@`를 `@URL@`으로 수정.",
]

T["hook", "dev", "en"] = [
    "Alerts weren't posting because the @SVC@ webhook was wrong; the correct one is @URL@",
    "`@VAR@=@URL@` in .env, then `npm run notify:test` posted fine.",
    "What the brief lacked: where deploy notices go. User said @SVC@, webhook `@URL@`.",
]
T["hook", "dev", "ko"] = [
    "@SVC@ 알림이 안 가던 건 웹훅 주소 문제였다. 올바른 주소는 @URL@이다.",
    "`.env`의 @VAR@를 @URL@로 바꾸니 알림 테스트 통과.",
]
T["hook", "heldout", "en"] = [
    "User pasted the @SVC@ incoming webhook (@URL@) after I asked where failures should be reported.",
    "Python: `requests.post(\"@URL@\", json=payload)` in scripts/notify.py.",
    "Release job now posts to @SVC@ via @VAR@ = @URL@.",
]
T["hook", "heldout", "ko"] = [
    "배포 알림용 @SVC@ 웹훅은 @URL@로 설정했다.",
    "scripts/notify.py에서 `requests.post(\"@URL@\", json=payload)`로 보내게 바꿨다.",
]

T["hdr", "dev", "en"] = [
    "`curl -H \"Authorization: @SCHEME@ @V@\" https://api.internal.example/v2/jobs` returned 200, so the credential was fine and the bug was in the client.",
    "axios needed `headers: { Authorization: \"@SCHEME@ @V@\" }`; the interceptor wasn't attached in tests.",
    "Learned the reporting API wants `Authorization: @SCHEME@ @V@` exactly — lowercase scheme gets a 401.",
]
T["hdr", "dev", "ko"] = [
    "`Authorization: @SCHEME@ @V@` 헤더를 붙이니 내부 API가 200을 돌려줬다.",
    "axios 설정에 `Authorization: \"@SCHEME@ @V@\"`를 넣어야 테스트가 통과한다.",
]
T["hdr", "heldout", "en"] = [
    "Postman export showed the header as `Authorization: @SCHEME@ @V@`; copying it into tests/http/jobs.http fixed the run.",
    "requests call: `requests.get(url, headers={\"Authorization\": \"@SCHEME@ @V@\"})` in tools/probe.py.",
    "Java: `conn.setRequestProperty(\"Authorization\", \"@SCHEME@ @V@\");` made the legacy endpoint answer.",
]
T["hdr", "heldout", "ko"] = [
    "tools/probe.py에서 `headers={\"Authorization\": \"@SCHEME@ @V@\"}`로 호출해야 했다.",
    "레거시 엔드포인트는 `Authorization: @SCHEME@ @V@` 헤더가 있어야만 응답했다.",
]

T["pem", "dev", "en"] = [
    "The deploy key the user supplied, saved to ~/.ssh/deploy_ci:\n@PEM@",
    "Learned: the signer wants this exact key format. This is the one that worked:\n```\n@PEM@\n```",
]
T["pem", "dev", "ko"] = [
    "사용자가 준 배포용 키를 `~/.ssh/id_deploy`에 저장함:\n@PEM@",
]
T["pem", "heldout", "en"] = [
    "TLS test failed until I put this key in certs/dev.key:\n@PEM@\nRemember chmod 600.",
    "Private key from the user (the instructions said it would be in the vault; it wasn't):\n@PEM@",
]
T["pem", "heldout", "ko"] = [
    "`certs/dev.key`에 아래 키를 넣고 나서 TLS 테스트 통과:\n@PEM@",
]

# ---------------------------------------------------------------- negatives
NEG = {}
NEG["dev", "en"] = [
    ("placeholder", "The brief's example used `@EV@=<YOUR_TOKEN>`; I left the placeholder in .env.example and told the user to fill it in."),
    ("placeholder", "Don't commit real values: .env.example now reads `@EV@=xxxx` and CI injects the real one."),
    ("placeholder", "docker-compose.yml uses `${@EV@}` so nothing sensitive lives in the repo."),
    ("placeholder", "The seed script sets the admin password to `changeme` only when APP_ENV=test; prod refuses to boot with it."),
    ("placeholder", "Logs show the key as `****` because the logger masks everything under `credentials.`."),
    ("placeholder", "Docs snippet: `git clone https://<username>:<token>@github.com/org/repo.git` — I replaced it with the SSH remote instead."),
    ("env_ref", "Switched from a literal to `process.env.@EV@` in src/config.ts; a missing env var now throws at startup."),
    ("env_ref", "`api_key = os.environ[\"@EV@\"]` raised KeyError in CI because secrets aren't exposed to forked PRs."),
    ("env_ref", "Go: `token := os.Getenv(\"@EV@\")` returned empty because the systemd unit had no EnvironmentFile."),
    ("git_sha", "Bisected the regression to @SHA@; reverting that commit fixed the token refresh test."),
    ("git_sha", "Pinned actions/checkout to @SHA@ instead of `@v4`, per the supply-chain guidance."),
    ("uuid", "The failing webhook delivery had request id @UUID@; support could find it with that."),
    ("hash", "Artifact checksum is sha256:@HEX64@ and matches the release page."),
    ("npm_integrity", "package-lock had `\"integrity\": \"@INTEG@\"` for the old tarball; regenerating the lock fixed EINTEGRITY."),
    ("docker_digest", "Pinned the base image to `node@sha256:@HEX64@` so builds are reproducible."),
    ("version", "Upgrading @octokit/rest from 19.0.7 to 20.1.1 fixed the auth token type error."),
    ("base64_data", "The pagination cursor `@B64@` is just base64 JSON of the last id, safe to log."),
    ("identifier", "Renamed `refreshAccessTokenIfExpiredOrMissingScopes` to `ensureFreshToken` in src/auth/session.ts."),
    ("path", "Credentials are read from ~/.aws/credentials and ~/.config/gcloud/application_default_credentials.json — the task didn't mention that."),
    ("url", "Webhook endpoint is https://api.example-shop.com/webhooks/stripe?version=2024-06-20; no auth in the URL, the signature is checked in the handler."),
    ("code", "Python: `headers = {\"Authorization\": f\"Bearer {token}\"}` where token comes from `get_access_token()`."),
    ("code", "`if (!apiKey) throw new Error(\"@EV@ is not set\");` added to src/llm.ts."),
    ("prose", "Learned that fine-grained GitHub tokens expire after 90 days by default; the nightly job broke because the token was old, so I asked the user to rotate it."),
    ("prose", "The password reset flow stored plaintext tokens; switched to hashing them with SHA-256 before saving."),
    ("public_key", "Added the CI public key to authorized_keys: `@SSHPUB@ ci@runner`."),
    ("key_id", "KMS key for envelope encryption: arn:aws:kms:eu-west-1:@ACCT@:key/@UUID@."),
    ("key_id", "Stripe price id for the Pro plan is `@PRICE@`; the checkout test was still using the archived one."),
    ("url", "DATABASE_URL for the test container is postgres://postgres@localhost:5432/app_test (trust auth, no password)."),
    ("uuid", "Idempotency-Key header is now a fresh uuid per request (e.g. @UUID@), which fixed the duplicate charges."),
    ("hash", "ETag for the config blob was \"@HEX32@\"; the CDN served the stale copy until I purged it."),
    ("identifier", "The Slack channel id is @CHAN@ and the bot user id is @USERID@ — ids, not credentials."),
    ("version", "Python 3.11.9 with pydantic 2.7.4; pydantic-settings 2.3.0 is what reads SecretStr fields from .env."),
    ("code", "Wrapped the key in `SecretStr` so `repr(settings)` prints `SecretStr('**********')` instead of the value."),
    ("git_sha", "Release v@VER@ is tagged at @SHA@; the changelog entry mentions the token cache fix."),
    ("code", "`const key = await loadSecret(\"@EV@\");` in src/@SVCL@.ts — the loader throws if the secret is missing."),
    ("prose", "What the instructions lacked: that @SVCN@ keys are scoped per environment. I asked the user to create a separate one for @ENVN@ instead of reusing prod."),
    ("prose", "Learned: @SVCN@ returns 403 (not 401) when the token is valid but lacks a scope, so check scopes before regenerating anything."),
    ("path", "The @SVCN@ credentials live in @SECPATH@ on the runner; the job mounts that path read-only."),
    ("url", "Health check for @SVCN@ is https://status.@DOM@/api/v2/summary.json — no auth needed."),
    ("identifier", "The workflow step now calls `fetch_@SVCL@_token()` instead of reading the env var directly."),
    ("version", "@SVCN@ SDK @VER@ renamed `apiKey` to `authToken` in the constructor; updated all call sites."),
]
NEG["dev", "ko"] = [
    ("placeholder", "`.env.example`에는 `@EV@=<YOUR_TOKEN>`만 남겨두고 실제 값은 CI에서 주입한다."),
    ("env_ref", "`process.env.@EV@`가 undefined라서 빌드가 실패했다. Vercel 프로젝트 설정에 변수가 없었음."),
    ("git_sha", "회귀 원인은 커밋 @SHA@였다. 되돌리니 토큰 갱신 테스트가 통과."),
    ("uuid", "실패한 요청의 request id는 @UUID@이다. 지원팀에 전달함."),
    ("docker_digest", "베이스 이미지를 `python@sha256:@HEX64@`로 고정했다."),
    ("npm_integrity", "lockfile의 integrity 값이 `@INTEG@`로 바뀌어서 EINTEGRITY 에러가 났다."),
    ("placeholder", "배운 점: 토큰은 로그에 찍지 말고 `****`로 마스킹할 것."),
    ("env_ref", "API 키는 `os.environ[\"@EV@\"]`로 읽도록 settings.py를 고쳤다."),
    ("prose", "비밀번호 재설정 토큰을 평문으로 저장하던 걸 해시로 바꿨다."),
    ("version", "next 버전을 14.1.0에서 14.2.5로 올리니 미들웨어 인증 버그가 사라졌다."),
    ("base64_data", "커서 값 `@B64@`는 마지막 id를 base64로 인코딩한 것뿐이라 로그에 남겨도 된다."),
    ("public_key", "배포 서버 authorized_keys에 `@SSHPUB@ deploy@ci`를 추가했다."),
    ("placeholder", "docker-compose.yml에서는 `${@EV@}`로 참조하니 저장소에는 실제 값이 없다."),
    ("uuid", "Idempotency-Key는 요청마다 새 uuid(예: @UUID@)를 쓰도록 바꿨더니 중복 결제가 사라졌다."),
    ("identifier", "슬랙 채널 id는 @CHAN@, 봇 유저 id는 @USERID@이다. 둘 다 비밀 값이 아니다."),
    ("hash", "설정 파일 ETag가 \"@HEX32@\"로 고정돼 있어서 CDN 캐시를 퍼지했다."),
    ("git_sha", "v@VER@ 태그는 @SHA@에 달려 있고, 토큰 캐시 수정이 포함됐다."),
    ("prose", "지시사항에 없던 것: @SVCN@ 키는 환경별로 따로 발급해야 한다. @ENVN@용은 사용자에게 새로 만들어달라고 요청함."),
    ("prose", "배운 점: @SVCN@는 토큰은 유효한데 scope가 부족하면 401이 아니라 403을 준다."),
    ("path", "@SVCN@ 자격 증명은 러너의 @SECPATH@에 있고 잡에서는 읽기 전용으로 마운트한다."),
    ("code", "`const key = await loadSecret(\"@EV@\");`로 바꿔서 하드코딩을 없앴다."),
    ("version", "@SVCN@ SDK @VER@부터 생성자 인자가 `apiKey`에서 `authToken`으로 바뀌었다."),
]
NEG["heldout", "en"] = [
    ("placeholder", "Instructions showed `Authorization: Bearer <token>`; the client builds the real header at runtime."),
    ("placeholder", "README example: `export @EV@=your-key-here` — kept it, it's documentation."),
    ("placeholder", "The template config has `password: \"${DB_PASSWORD}\"`; helm fills it from the sealed secret."),
    ("placeholder", "The sample key `@SKX@` in the docs is a placeholder; the tests mock Stripe entirely."),
    ("placeholder", "Set `api_key: REPLACE_ME` in config/local.yml.sample so nobody copies a real one."),
    ("env_ref", "Ruby: `ENV.fetch(\"@EV@\")` raises KeyError early, which beats a nil token at request time."),
    ("env_ref", "Java: `System.getenv(\"@EV@\")` was null inside the test JVM — surefire didn't pass the env through."),
    ("env_ref", "Rust: `let key = std::env::var(\"@EV@\")?;` and the error message now names the variable."),
    ("env_ref", "C#: `Environment.GetEnvironmentVariable(\"@EV@\")` returns null under IIS Express unless launchSettings.json sets it."),
    ("env_ref", "PHP: `$key = getenv('@EV@');` returned false because php-fpm clears the env by default; `clear_env = no` fixed it."),
    ("git_sha", "Cherry-picked @SHA@ onto release/2.3; the conflict in src/auth/token.ts was trivial."),
    ("git_sha", "Commit @SHORT@ introduced double-encoding of the API key header; fixed in the follow-up."),
    ("uuid", "Trace @UUID@ shows the 401 came from the gateway, not from the service."),
    ("hash", "The cache key is the sha256 of the lockfile (@HEX64@), so bumping a dependency invalidates it."),
    ("npm_integrity", "`npm ci` failed on an integrity mismatch (@INTEG@); the registry mirror served a stale tarball."),
    ("docker_digest", "Rolled the deployment back to image digest sha256:@HEX64@."),
    ("version", "Pinned `stripe` to 8.222.0 and `openai` to 1.35.3; newer majors changed the client constructor."),
    ("base64_data", "Decoded the OAuth state param `@B64R@` — it's only the redirect path, nothing secret."),
    ("identifier", "Test name `test_rotating_api_key_invalidates_previous_session_tokens` was too long for the JUnit report; shortened it."),
    ("path", "Secrets are mounted at /var/run/secrets/kubernetes.io/serviceaccount/token; the app reads the file, not an env var."),
    ("url", "The sandbox base URL is https://sandbox.api.example.io/v3/ and the key goes in a header, never in the URL."),
    ("code", "TS: `const secret = await sm.getSecretValue({ SecretId: \"prod/api\" });` replaced the hardcoded value."),
    ("code", "Go: `req.Header.Set(\"Authorization\", \"Bearer \"+token)` — I had forgotten the space and got 401."),
    ("prose", "Lesson: rotating the Slack bot token invalidates the old one immediately, so update the secret before restarting the bot."),
    ("key_id", "The JWKS endpoint returned kid `@KID@`; the verifier was caching an old key set."),
    ("key_id", "GPG signing key fingerprint @FPR@ is now in the repo's allowed signers list."),
    ("placeholder", "The dashboard only shows the key as `sk-...@LAST4@` (last four chars), enough to confirm which key is deployed."),
    ("uuid", "Correlation id @UUID@ tied the frontend error to the expired-session branch in middleware.ts."),
    ("key_id", "AWS account @ACCT@ hosts the staging stack; the deploy role is arn:aws:iam::@ACCT@:role/ci-deploy."),
    ("code", "Java: `String token = vault.logical().read(\"secret/data/api\").getData().get(\"token\");` — no literal in the code anymore."),
    ("hash", "Asset filenames carry a content hash, e.g. main.@HEX8@.js, so cache busting works without query strings."),
    ("version", "Bumped the chart to @VER@; the image tag follows the app version, not the git sha."),
    ("code", "Python: `token = keyring.get_password(\"@SVCL@\", getpass.getuser())` replaced the value that used to sit in @FILEN@."),
    ("prose", "The brief never said the @SVCN@ token must be regenerated after changing its scopes; the old one kept the old scopes until the user rotated it."),
    ("prose", "Note for next time: @SVCN@ hides a secret in its UI after creation, so ask the user for the value up front instead of searching the dashboard."),
    ("path", "Moved the @SVCN@ config from @FILEN@ to @SECPATH@, which is in .gitignore now."),
    ("url", "Docs for the @SVCN@ auth flow: https://docs.@DOM@/authentication#rotating-keys — bookmarked for the rotation runbook."),
    ("identifier", "Feature flag `@SVCL@_token_rotation_v2` gates the new refresh logic; it's off in @ENVN@."),
    ("version", "Pinned @SVCL@-sdk to @VER@ in requirements.txt; @VER2@ broke the token refresh callback."),
    ("public_key", "JWT verification key (public half only) now lives in config/jwt_public.pem:\n@PUBPEM@"),
]
NEG["heldout", "ko"] = [
    ("placeholder", "지시서 예시의 `Bearer <token>`은 자리표시자다. 실제 헤더는 런타임에 만든다."),
    ("placeholder", "config/local.yml.sample에는 `api_key: REPLACE_ME`만 둔다."),
    ("env_ref", "자바에서 `System.getenv(\"@EV@\")`가 null이었는데, surefire가 환경변수를 넘기지 않아서였다."),
    ("git_sha", "@SHA@ 커밋을 release 브랜치로 cherry-pick 했다."),
    ("uuid", "트레이스 @UUID@를 보면 401은 게이트웨이에서 났다."),
    ("docker_digest", "이미지 다이제스트 sha256:@HEX64@로 롤백했다."),
    ("npm_integrity", "`npm ci`가 integrity @INTEG@ 불일치로 실패했다. 미러 캐시 문제였음."),
    ("base64_data", "state 파라미터 `@B64R@`를 디코딩해보니 리다이렉트 경로뿐이었다."),
    ("path", "서비스 계정 토큰은 /var/run/secrets/kubernetes.io/serviceaccount/token 파일에서 읽는다."),
    ("prose", "교훈: 슬랙 봇 토큰을 재발급하면 이전 토큰은 즉시 무효가 된다. 재시작 전에 시크릿부터 갱신할 것."),
    ("key_id", "GPG 서명 키 지문 @FPR@을 allowed signers에 추가했다."),
    ("code", "Go에서 `req.Header.Set(\"Authorization\", \"Bearer \"+token)`로 고쳤다. 공백이 빠져서 401이었음."),
    ("placeholder", "대시보드에는 키가 `sk-...@LAST4@`처럼 끝 네 자리만 보인다."),
    ("uuid", "correlation id @UUID@ 덕분에 프론트 에러가 세션 만료 분기에서 났다는 걸 알았다."),
    ("key_id", "스테이징 스택은 AWS 계정 @ACCT@에 있고, 배포 role은 arn:aws:iam::@ACCT@:role/ci-deploy이다."),
    ("hash", "번들 파일명에 main.@HEX8@.js처럼 content hash가 붙어서 캐시 무효화가 된다."),
    ("public_key", "JWT 검증용 공개키만 config/jwt_public.pem에 넣었다:\n@PUBPEM@"),
    ("prose", "@SVCN@ 토큰은 scope를 바꾼 뒤 재발급해야 반영된다는 점이 지시서에 빠져 있었다."),
    ("path", "@SVCN@ 설정을 @FILEN@에서 @SECPATH@로 옮기고 .gitignore에 추가했다."),
    ("code", "파이썬에서 `keyring.get_password(\"@SVCL@\", getpass.getuser())`로 읽게 바꿨다."),
    ("url", "@SVCN@ 인증 문서는 https://docs.@DOM@/authentication 에 있다. 키 교체 절차 참고용."),
    ("identifier", "`@SVCL@_token_rotation_v2` 플래그가 새 갱신 로직을 켠다. @ENVN@에서는 꺼져 있음."),
]

ENV_VARS = ["OPENAI_API_KEY", "STRIPE_SECRET_KEY", "GITHUB_TOKEN", "SLACK_BOT_TOKEN", "DATABASE_URL",
            "SENDGRID_API_KEY", "DD_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "MAILGUN_API_KEY"]
NEG_SERVICES = [("Stripe", "stripe", "stripe.com"), ("Slack", "slack", "slack.com"), ("Datadog", "datadog", "datadoghq.com"),
                ("GitHub", "github", "github.com"), ("Twilio", "twilio", "twilio.com"), ("OpenAI", "openai", "openai.com"),
                ("Sentry", "sentry", "sentry.io"), ("Mailgun", "mailgun", "mailgun.com"), ("Notion", "notion", "notion.so")]
ENVS = ["staging", "dev", "preview", "qa"]


def _neg_fill(g, tpl):
    def b64data():
        obj = g.choice([{"last_id": g.randint(1000, 99999), "dir": "next"},
                        {"last_id": g.randint(100, 9999), "sort": g.choice(["created_at", "name"])},
                        {"page": g.randint(2, 40), "limit": g.choice([20, 50, 100])}])
        return base64.b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode()

    def b64redirect():
        obj = {"redirect": g.choice(["/dashboard", "/settings/billing", "/projects/42", "/onboarding/step-2"]),
               "nonce_ts": g.randint(1700000000, 1730000000)}
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")

    def pubpem():
        der = (b"\x30\x82\x01\x22\x30\x0d\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01\x05\x00\x03\x82\x01\x0f\x00"
               b"\x30\x82\x01\x0a\x02\x82\x01\x01\x00" + bytes(g.randrange(256) for _ in range(256)) + b"\x02\x03\x01\x00\x01")
        body = base64.b64encode(der).decode()
        dash = "-" * 5
        return "\n".join([f"{dash}BEGIN PUBLIC KEY{dash}"] + [body[i:i + 64] for i in range(0, len(body), 64)] + [f"{dash}END PUBLIC KEY{dash}"])

    def sshpub():
        raw = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes(g.randrange(256) for _ in range(32))
        return "ssh-ed25519 " + base64.b64encode(raw).decode()

    def integ():
        return "sha512-" + base64.b64encode(bytes(g.randrange(256) for _ in range(64))).decode()

    sv_name, sv_slug, sv_dom = g.choice(NEG_SERVICES)
    fills = {
        "@SVCN@": lambda: sv_name,
        "@SVCL@": lambda: sv_slug,
        "@DOM@": lambda: sv_dom,
        "@ENVN@": lambda: g.choice(ENVS),
        "@FILEN@": lambda: g.choice(["config/local.yml", "settings.py", ".env", "src/config.ts", "appsettings.json"]),
        "@SECPATH@": lambda: g.choice([f"/run/secrets/{sv_slug}", f"~/.config/{sv_slug}/credentials", "/etc/ci/secrets/"]),
        "@VER2@": lambda: f"{g.randint(1, 9)}.{g.randint(0, 30)}.{g.randint(0, 20)}",
        "@EV@": lambda: g.choice(ENV_VARS),
        "@SHA@": lambda: r(g, HEX, 40),
        "@SHORT@": lambda: r(g, HEX, 7),
        "@UUID@": lambda: uuid(g),
        "@HEX64@": lambda: r(g, HEX, 64),
        "@INTEG@": integ,
        "@B64@": b64data,
        "@B64R@": b64redirect,
        "@PUBPEM@": pubpem,
        "@SSHPUB@": sshpub,
        "@ACCT@": lambda: r(g, DIG, 12),
        "@PRICE@": lambda: "price_1" + r(g, AN, 23),
        "@KID@": lambda: r(g, HEX, 16),
        "@FPR@": lambda: r(g, HEX.upper()[:16], 40),
        "@SKX@": lambda: "sk_" + "test_" + "X" * 24,
        "@LAST4@": lambda: r(g, AN, 4),
        "@HEX32@": lambda: r(g, HEX, 32),
        "@HEX8@": lambda: r(g, HEX, 8),
        "@CHAN@": lambda: "C0" + r(g, UN, 9),
        "@USERID@": lambda: "U0" + r(g, UN, 9),
        "@VER@": lambda: f"{g.randint(1, 9)}.{g.randint(0, 30)}.{g.randint(0, 20)}",
    }
    out = tpl
    for k, f in fills.items():
        if k in out:
            out = out.replace(k, f())
    return out


# ---------------------------------------------------------------- assembly
def _camel(var):
    parts = [p for p in re.split(r"[_\W]+", var.lower()) if p]
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def _slug(svc):
    s = re.sub(r"[^a-z0-9]", "", svc.lower().replace("the ", ""))
    return s or "svc"


def _fill(tpl, d):
    out = tpl
    for k, v in d.items():
        out = out.replace(k, v)
    return out


def _josa(word, with_final, without_final):
    ch = word[-1]
    if "\uac00" <= ch <= "\ud7a3":
        return with_final if (ord(ch) - 0xAC00) % 28 else without_final
    return without_final  # English abbreviations here are read ending in a vowel


def _fix_noun_particles(tpl, nounko):
    for a, b in (("은", "는"), ("을", "를"), ("이", "가")):
        for p in (a, b):
            tpl = tpl.replace("@NOUNKO@" + p, nounko + _josa(nounko, a, b))
    return tpl


def _pick_lang(g):
    return "ko" if g.random() < 1 / 3 else "en"


def corpus(part: str):
    if part not in SEEDS:
        raise ValueError(part)
    g = random.Random(SEEDS[part])
    items = []

    def tpl(fam, lang):
        return g.choice(T[fam, part, lang])

    for kind, svc, var, noun, nounko, gen in TOK:
        for _ in range(g.randint(5, 8)):
            s, v = svc, var
            if svc is None:
                s, v = g.choice(GENERIC_NAMES[kind])
            val = gen(g)
            if isinstance(val, tuple):
                shown, labels = val
            else:
                shown, labels = val, (val,)
            lang = _pick_lang(g)
            text = _fill(_fix_noun_particles(tpl("tok", lang), nounko), {
                "@V@": shown, "@SVC@": s, "@VARL@": v.lower(), "@VAR@": v, "@CAMEL@": _camel(v),
                "@SLUG@": _slug(s), "@NOUNKO@": nounko, "@NOUN@": noun, "@ENV@": g.choice(ENVS)})
            items.append((text, kind, tuple(labels), lang))

    for kind, svc, var, idvar, idgen, secgen, label_id in PAIR:
        for _ in range(g.randint(5, 8)):
            i, sec = idgen(g), secgen(g)
            lang = _pick_lang(g)
            text = _fill(tpl("pair", lang), {"@V@": sec, "@ID@": i, "@SVC@": svc, "@IDVAR@": idvar, "@VAR@": var})
            items.append((text, kind, (i, sec) if label_id else (sec,), lang))

    for kind, svc, var, builder in URLS:
        for _ in range(g.randint(5, 8)):
            url, sec = builder(g)
            lang = _pick_lang(g)
            text = _fill(tpl("url", lang), {"@URL@": url, "@SVC@": svc, "@VAR@": var, "@ENV@": g.choice(ENVS)})
            items.append((text, kind, (sec,), lang))

    for kind, svc, var, builder in HOOKS:
        for _ in range(g.randint(5, 8)):
            url, sec = builder(g)
            lang = _pick_lang(g)
            text = _fill(tpl("hook", lang), {"@URL@": url, "@SVC@": svc, "@VAR@": var})
            items.append((text, kind, (sec,), lang))

    for kind, builder in HEADERS:
        for _ in range(g.randint(5, 8)):
            scheme, sec = builder(g)
            lang = _pick_lang(g)
            text = _fill(tpl("hdr", lang), {"@SCHEME@": scheme, "@V@": sec})
            items.append((text, kind, (sec,), lang))

    for kind, _label, builder in PEMS:
        for _ in range(g.randint(5, 8)):
            pem, lines = builder(g)
            lang = _pick_lang(g)
            text = _fill(tpl("pem", lang), {"@PEM@": pem})
            items.append((text, kind, lines, lang))

    n_pos = len(items)
    n_neg = int(n_pos * 0.45) + 1
    seen = set()
    tries = 0
    while len(seen) < n_neg and tries < 50 * n_neg:
        tries += 1
        lang = _pick_lang(g)
        pool = NEG[part, lang]
        cat = g.choice(sorted({c for c, _ in pool}))
        t = g.choice([t for c, t in pool if c == cat])
        text = _neg_fill(g, t)
        if text in seen:
            continue
        seen.add(text)
        items.append((text, "neg:" + cat, (), lang))

    g.shuffle(items)
    return items


def _templates(part):
    out = set()
    for (fam, p, lang), lst in T.items():
        if p == part:
            out.update(lst)
    for (p, lang), lst in NEG.items():
        if p == part:
            out.update(t for _, t in lst)
    return out


def _check():
    assert not (_templates("dev") & _templates("heldout")), "template shared between parts"
    for part in SEEDS:
        for text, kind, secrets, lang in corpus(part):
            assert "[REDACTED]" not in text
            assert "@" + "V@" not in text and "@URL@" not in text and "@SVC@" not in text, text
            for s in secrets:
                assert s and s in text, (kind, s, text)
            assert kind.startswith("neg:") == (secrets == ()), (kind, text)
            assert lang in ("en", "ko")


if __name__ == "__main__":
    _check()
    for part in ("dev", "heldout"):
        c = corpus(part)
        pos = [x for x in c if not x[1].startswith("neg:")]
        neg = [x for x in c if x[1].startswith("neg:")]
        kinds = sorted({x[1] for x in pos})
        ko = sum(1 for x in c if x[3] == "ko") / len(c)
        print(f"== {part}: {len(c)} texts, {len(pos)} positives, {len(neg)} negatives, "
              f"{len(kinds)} kinds, ko share {ko:.2f}")
        g = random.Random(7)
        for x in g.sample(pos, 3) + g.sample(neg, 3):
            print("  ", repr(x)[:400])
    sys.exit(0)
