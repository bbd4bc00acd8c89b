"""Independent secret-redaction test corpus, writer F.

Theme: a team's shared memory file accumulated over months by many people/agents:
terse one-liners, pasted terminal output, JSON blobs, Korean Slack/Notion/Jira style.
All values are generated at run time from seeded random.Random; prefixes are split.

Written without sight of the redaction rules, their tests or the other corpora, from facts read
in the scanners' public test fixtures (gitleaks, MIT; trufflehog, AGPL-3.0; detect-secrets,
Apache-2.0; secretlint, MIT): services, prefixes, lengths, alphabets and the kinds of context.
No fixture value or sentence is reproduced. "dev" may be tuned on; "heldout" is run only to
report a figure (bench/secrets_bench.py prints the misses of "dev" alone).
"""
import base64
import random
import string

LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
AN = LOW + UP + DIG
ANX = AN + "_-"
HEX = "0123456789abcdef"
B64 = AN + "+/"
B32 = UP + "234567"


def rs(r, alpha, n):
    return "".join(r.choice(alpha) for _ in range(n))


def P(*parts):
    return "".join(parts)


def uuid(r):
    h = rs(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


WORDS = ["sunflower", "tiger", "marble", "river", "pencil", "falcon", "winter", "mango", "coffee",
         "harbor", "violet", "rocket", "kimchi", "bada", "haneul", "orange", "summer", "castle", "pluto"]


def human_pw(r):
    k = r.randrange(6)
    w = r.choice(WORDS)
    if k == 0:
        return w.capitalize() + str(r.randrange(1990, 2027)) + r.choice("!@#$")
    if k == 1:
        return w + r.choice("#@!") + r.choice(WORDS).capitalize() + str(r.randrange(10, 99))
    if k == 2:
        return "-".join(r.choice(WORDS) for _ in range(3)) + str(r.randrange(1, 9))
    if k == 3:
        return rs(r, AN, r.randrange(14, 22))
    if k == 4:
        return r.choice(["Qwer", "Asdf", "Zxcv"]) + str(r.randrange(1000, 9999)) + r.choice(WORDS) + "!!"
    return w.upper()[:3] + rs(r, AN + "!#%", 9) + str(r.randrange(10, 99))


def jwt(r):
    def b(s):
        return base64.urlsafe_b64encode(s.encode()).decode().rstrip("=")
    head = b('{"alg":"HS256","typ":"JWT"}')
    body = b('{"sub":"%s","role":"service","iat":%d}' % (uuid(r), r.randrange(1600000000, 1760000000)))
    return head + "." + body + "." + rs(r, ANX, 43)


def pem_body(r, n):
    return [rs(r, B64, 64) for _ in range(n)]


# ---------------------------------------------------------------------------
# kinds: name -> (svc label, ENV name, json key, what(en), what(ko), generator)
# generator returns (rendered_value, secrets_tuple)
def tok(fn):
    def g(r):
        v = fn(r)
        return v, (v,)
    return g


def url_kind(scheme, user, host, port, path):
    def g(r):
        pw = human_pw(r) if r.random() < 0.5 else rs(r, AN, r.randrange(16, 28))
        pw = pw.replace("@", "A").replace("#", "H").replace("/", "x").replace(":", "c").replace("%", "p").replace("!", "1")
        return f"{scheme}://{user}:{pw}@{host}:{port}{path}", (pw,)
    return g


def aws_pair(r):
    kid = P("AK", "IA") + rs(r, B32, 16)
    sec = rs(r, B64, 40)
    return f"{kid} / {sec}", (kid, sec)


def basic_url(r):
    t = P("gh", "p_") + rs(r, AN, 36)
    return f"https://ci-bot:{t}@github.com/acme-corp/infra.git", (t,)


KINDS = {
    "github_pat": ("github", "GITHUB_TOKEN", "token", "token", "토큰", tok(lambda r: P("gh", "p_") + rs(r, AN, 36))),
    "github_oauth": ("gh cli", "GH_TOKEN", "oauth_token", "oauth token", "토큰", tok(lambda r: P("gh", "o_") + rs(r, AN, 36))),
    "github_app_token": ("github app", "GH_APP_INSTALL_TOKEN", "token", "install token", "토큰", tok(lambda r: P("gh", "s_") + rs(r, AN, 36))),
    "github_fine_grained_pat": ("github", "GH_PAT", "pat", "fine-grained pat", "PAT", tok(lambda r: P("github", "_pat_") + rs(r, AN, 22) + "_" + rs(r, AN, 59))),
    "gitlab_pat": ("gitlab", "GITLAB_TOKEN", "private_token", "token", "토큰", tok(lambda r: P("glp", "at-") + rs(r, ANX, 20))),
    "gitlab_runner_token": ("gitlab runner", "RUNNER_TOKEN", "runner_token", "runner token", "러너 토큰", tok(lambda r: P("glr", "t-") + rs(r, ANX, 20))),
    "slack_bot_token": ("slack bot", "SLACK_BOT_TOKEN", "bot_token", "bot token", "봇 토큰", tok(lambda r: P("xo", "xb-") + rs(r, DIG, 12) + "-" + rs(r, DIG, 13) + "-" + rs(r, AN, 24))),
    "slack_user_token": ("slack", "SLACK_USER_TOKEN", "access_token", "user token", "유저 토큰", tok(lambda r: P("xo", "xp-") + rs(r, DIG, 12) + "-" + rs(r, DIG, 12) + "-" + rs(r, DIG, 13) + "-" + rs(r, HEX, 32))),
    "slack_webhook": ("slack alerts", "SLACK_WEBHOOK_URL", "webhook_url", "webhook", "웹훅 URL", tok(lambda r: P("https://hooks.sl", "ack.com/services/T") + rs(r, UP + DIG, 10) + "/B" + rs(r, UP + DIG, 10) + "/" + rs(r, AN, 24))),
    "discord_webhook": ("discord", "DISCORD_WEBHOOK", "webhook", "webhook", "웹훅", tok(lambda r: P("https://discord.com/api/web", "hooks/") + rs(r, DIG, 19) + "/" + rs(r, ANX, 68))),
    "discord_bot_token": ("discord bot", "DISCORD_BOT_TOKEN", "bot_token", "bot token", "봇 토큰", tok(lambda r: "M" + rs(r, AN, 25) + "." + rs(r, ANX, 6) + "." + rs(r, ANX, 38))),
    "telegram_bot_token": ("telegram bot", "TELEGRAM_BOT_TOKEN", "bot_token", "bot token", "봇 토큰", tok(lambda r: rs(r, DIG, 10) + ":AA" + rs(r, ANX, 33))),
    "stripe_secret_key": ("stripe", "STRIPE_SECRET_KEY", "secret_key", "secret key", "시크릿 키", tok(lambda r: P("sk", "_live_") + rs(r, AN, 99))),
    "stripe_restricted_key": ("stripe", "STRIPE_RK", "restricted_key", "restricted key", "제한 키", tok(lambda r: P("rk", "_live_") + rs(r, AN, 99))),
    "stripe_webhook_secret": ("stripe webhook", "STRIPE_WEBHOOK_SECRET", "signing_secret", "signing secret", "서명 시크릿", tok(lambda r: P("wh", "sec_") + rs(r, AN, 32))),
    "openai_api_key": ("openai", "OPENAI_API_KEY", "api_key", "key", "키", tok(lambda r: P("sk-", "proj-") + rs(r, ANX, 74) + P("T3Blbk", "FJ") + rs(r, ANX, 74))),
    "openai_legacy_key": ("openai", "OPENAI_KEY", "openai_key", "old key", "구 키", tok(lambda r: "sk-" + rs(r, AN, 20) + P("T3Blbk", "FJ") + rs(r, AN, 20))),
    "anthropic_api_key": ("anthropic", "ANTHROPIC_API_KEY", "api_key", "api key", "API 키", tok(lambda r: P("sk-ant-", "api03-") + rs(r, ANX, 93) + "AA")),
    "sendgrid_api_key": ("sendgrid", "SENDGRID_API_KEY", "apiKey", "key", "키", tok(lambda r: P("S", "G.") + rs(r, ANX, 22) + "." + rs(r, ANX, 43))),
    "twilio_api_key": ("twilio", "TWILIO_API_SECRET", "api_key_secret", "api key", "API 키", tok(lambda r: P("S", "K") + rs(r, HEX, 32))),
    "twilio_auth_token": ("twilio", "TWILIO_AUTH_TOKEN", "auth_token", "auth token", "auth 토큰", tok(lambda r: rs(r, HEX, 32))),
    "npm_token": ("npm", "NPM_TOKEN", "npm_token", "publish token", "배포 토큰", tok(lambda r: P("np", "m_") + rs(r, AN, 36))),
    "pypi_token": ("pypi", "TWINE_PASSWORD", "pypi_token", "upload token", "업로드 토큰", tok(lambda r: P("pypi-", "AgEIcHlwaS5vcmc") + rs(r, ANX, 70))),
    "huggingface_token": ("huggingface", "HF_TOKEN", "hf_token", "token", "토큰", tok(lambda r: P("h", "f_") + rs(r, LOW + UP, 34))),
    "google_api_key": ("google maps", "GOOGLE_API_KEY", "key", "api key", "API 키", tok(lambda r: P("AI", "za") + rs(r, ANX, 35))),
    "gemini_api_key": ("gemini", "GEMINI_API_KEY", "geminiKey", "key", "키", tok(lambda r: P("AI", "za") + rs(r, ANX, 35))),
    "mailgun_api_key": ("mailgun", "MAILGUN_API_KEY", "api_key", "api key", "API 키", tok(lambda r: P("ke", "y-") + rs(r, HEX, 32))),
    "mailchimp_api_key": ("mailchimp", "MAILCHIMP_KEY", "apikey", "key", "키", tok(lambda r: rs(r, HEX, 32) + "-us" + str(r.randrange(1, 21)))),
    "shopify_token": ("shopify", "SHOPIFY_ACCESS_TOKEN", "access_token", "admin token", "어드민 토큰", tok(lambda r: P("shp", "at_") + rs(r, HEX, 32))),
    "digitalocean_token": ("digitalocean", "DIGITALOCEAN_TOKEN", "do_token", "token", "토큰", tok(lambda r: P("dop", "_v1_") + rs(r, HEX, 64))),
    "heroku_api_key": ("heroku", "HEROKU_API_KEY", "heroku_api_key", "api key", "API 키", tok(uuid)),
    "doppler_token": ("doppler", "DOPPLER_TOKEN", "token", "service token", "서비스 토큰", tok(lambda r: P("dp", ".st.") + "prd." + rs(r, AN, 40))),
    "linear_api_key": ("linear", "LINEAR_API_KEY", "apiKey", "api key", "API 키", tok(lambda r: P("lin", "_api_") + rs(r, AN, 40))),
    "notion_token": ("notion", "NOTION_TOKEN", "integration_token", "integration token", "연동 토큰", tok(lambda r: P("nt", "n_") + rs(r, DIG, 11) + rs(r, AN, 35))),
    "postman_api_key": ("postman", "POSTMAN_API_KEY", "apikey", "api key", "API 키", tok(lambda r: P("PM", "AK-") + rs(r, HEX, 24) + "-" + rs(r, HEX, 34))),
    "pulumi_token": ("pulumi", "PULUMI_ACCESS_TOKEN", "accessToken", "access token", "액세스 토큰", tok(lambda r: P("pu", "l-") + rs(r, HEX, 40))),
    "grafana_sa_token": ("grafana", "GRAFANA_TOKEN", "token", "service account token", "SA 토큰", tok(lambda r: P("gl", "sa_") + rs(r, AN, 32) + "_" + rs(r, HEX, 8))),
    "grafana_cloud_token": ("grafana cloud", "GRAFANA_CLOUD_TOKEN", "cloud_token", "cloud token", "클라우드 토큰", tok(lambda r: P("gl", "c_") + rs(r, AN + "+/", 100) + "==")),
    "sentry_token": ("sentry", "SENTRY_AUTH_TOKEN", "auth_token", "auth token", "auth 토큰", tok(lambda r: P("sntr", "yu_") + rs(r, HEX, 64))),
    "newrelic_api_key": ("new relic", "NEW_RELIC_API_KEY", "api_key", "user key", "유저 키", tok(lambda r: P("NR", "AK-") + rs(r, UP + DIG, 27))),
    "datadog_api_key": ("datadog", "DD_API_KEY", "api_key", "api key", "API 키", tok(lambda r: rs(r, HEX, 32))),
    "datadog_app_key": ("datadog", "DD_APP_KEY", "application_key", "app key", "앱 키", tok(lambda r: rs(r, HEX, 40))),
    "jwt": ("internal api", "SERVICE_JWT", "access_token", "jwt", "JWT", tok(jwt)),
    "azure_storage_key": ("azure storage", "AZURE_STORAGE_KEY", "accountKey", "account key", "계정 키", tok(lambda r: rs(r, B64, 86) + "==")),
    "azure_client_secret": ("azure ad app", "AZURE_CLIENT_SECRET", "clientSecret", "client secret", "클라이언트 시크릿", tok(lambda r: rs(r, AN, 3) + str(r.randrange(10)) + "Q~" + rs(r, AN + "_.-", 34))),
    "atlassian_api_token": ("jira", "JIRA_API_TOKEN", "api_token", "api token", "API 토큰", tok(lambda r: P("ATAT", "T3") + rs(r, ANX, 186))),
    "databricks_token": ("databricks", "DATABRICKS_TOKEN", "token", "token", "토큰", tok(lambda r: P("da", "pi") + rs(r, HEX, 32))),
    "terraform_cloud_token": ("terraform cloud", "TF_TOKEN_app_terraform_io", "token", "team token", "팀 토큰", tok(lambda r: rs(r, LOW + DIG, 14) + P(".atl", "asv1.") + rs(r, AN, 67))),
    "vault_token": ("vault", "VAULT_TOKEN", "client_token", "token", "토큰", tok(lambda r: P("hv", "s.") + rs(r, ANX, 92))),
    "age_secret_key": ("sops age", "SOPS_AGE_KEY", "age_key", "secret key", "시크릿 키", tok(lambda r: P("AGE-SECRET", "-KEY-1") + rs(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))),
    "cloudflare_api_token": ("cloudflare", "CF_API_TOKEN", "api_token", "api token", "API 토큰", tok(lambda r: rs(r, ANX, 40))),
    "flyio_token": ("fly.io", "FLY_API_TOKEN", "token", "deploy token", "배포 토큰", tok(lambda r: P("Fly", "V1 fm2_") + rs(r, AN + "+/", 120))),
    "planetscale_password": ("planetscale", "PSCALE_PASSWORD", "password", "password", "비번", tok(lambda r: P("pscale", "_pw_") + rs(r, ANX, 43))),
    "supabase_token": ("supabase", "SUPABASE_ACCESS_TOKEN", "access_token", "access token", "액세스 토큰", tok(lambda r: P("sb", "p_") + rs(r, HEX, 40))),
    "supabase_service_role": ("supabase service_role", "SUPABASE_SERVICE_ROLE_KEY", "service_role", "service role key", "service_role 키", tok(jwt)),
    "vercel_token": ("vercel", "VERCEL_TOKEN", "token", "token", "토큰", tok(lambda r: rs(r, AN, 24))),
    "netlify_token": ("netlify", "NETLIFY_AUTH_TOKEN", "access_token", "personal token", "개인 토큰", tok(lambda r: P("nf", "p_") + rs(r, AN, 36) + rs(r, HEX, 4))),
    "fastly_api_token": ("fastly", "FASTLY_API_TOKEN", "api_token", "api token", "API 토큰", tok(lambda r: rs(r, ANX, 32))),
    "algolia_admin_key": ("algolia", "ALGOLIA_ADMIN_KEY", "adminApiKey", "admin key", "어드민 키", tok(lambda r: rs(r, HEX, 32))),
    "okta_api_token": ("okta", "OKTA_API_TOKEN", "okta_token", "api token", "API 토큰", tok(lambda r: "00" + rs(r, ANX, 40))),
    "snyk_token": ("snyk", "SNYK_TOKEN", "api", "token", "토큰", tok(uuid)),
    "sonarqube_token": ("sonarqube", "SONAR_TOKEN", "sonar_token", "user token", "유저 토큰", tok(lambda r: P("sq", "u_") + rs(r, HEX, 40))),
    "square_access_token": ("square", "SQUARE_ACCESS_TOKEN", "access_token", "access token", "액세스 토큰", tok(lambda r: P("EA", "AA") + rs(r, ANX, 60))),
    "dropbox_token": ("dropbox", "DROPBOX_TOKEN", "access_token", "token", "토큰", tok(lambda r: P("s", "l.") + rs(r, ANX, 135))),
    "rubygems_api_key": ("rubygems", "GEM_HOST_API_KEY", "rubygems_api_key", "api key", "API 키", tok(lambda r: P("rubyg", "ems_") + rs(r, HEX, 48))),
    "nuget_api_key": ("nuget", "NUGET_API_KEY", "apiKey", "api key", "API 키", tok(lambda r: P("oy", "2") + rs(r, LOW + DIG, 43))),
    "shippo_token": ("shippo", "SHIPPO_TOKEN", "token", "live token", "라이브 토큰", tok(lambda r: P("shippo", "_live_") + rs(r, HEX, 40))),
    "easypost_api_key": ("easypost", "EASYPOST_API_KEY", "api_key", "prod key", "운영 키", tok(lambda r: P("EZ", "AK") + rs(r, AN, 54))),
    "perplexity_api_key": ("perplexity", "PPLX_API_KEY", "api_key", "key", "키", tok(lambda r: P("ppl", "x-") + rs(r, AN, 48))),
    "groq_api_key": ("groq", "GROQ_API_KEY", "api_key", "key", "키", tok(lambda r: P("gs", "k_") + rs(r, AN, 52))),
    "xai_api_key": ("xai grok", "XAI_API_KEY", "api_key", "key", "키", tok(lambda r: P("xa", "i-") + rs(r, AN, 80))),
    "cohere_api_key": ("cohere", "COHERE_API_KEY", "api_key", "key", "키", tok(lambda r: rs(r, AN, 40))),
    "mistral_api_key": ("mistral", "MISTRAL_API_KEY", "api_key", "key", "키", tok(lambda r: rs(r, AN, 32))),
    "replicate_token": ("replicate", "REPLICATE_API_TOKEN", "api_token", "token", "토큰", tok(lambda r: P("r", "8_") + rs(r, AN, 37))),
    "tailscale_auth_key": ("tailscale", "TS_AUTHKEY", "authkey", "auth key", "auth 키", tok(lambda r: P("tskey", "-auth-") + rs(r, AN, 12) + "CNTRL-" + rs(r, AN, 33))),
    "artifactory_api_key": ("artifactory", "ARTIFACTORY_API_KEY", "apiKey", "api key", "API 키", tok(lambda r: P("AK", "Cp") + rs(r, AN, 69))),
    "dockerhub_pat": ("docker hub", "DOCKERHUB_TOKEN", "token", "pat", "PAT", tok(lambda r: P("dckr", "_pat_") + rs(r, ANX, 27))),
    "buildkite_token": ("buildkite", "BUILDKITE_API_TOKEN", "token", "api token", "API 토큰", tok(lambda r: P("bku", "a_") + rs(r, HEX, 40))),
    "circleci_token": ("circleci", "CIRCLE_TOKEN", "circle_token", "personal token", "개인 토큰", tok(lambda r: rs(r, HEX, 40))),
    "jenkins_api_token": ("jenkins", "JENKINS_API_TOKEN", "apiToken", "api token", "API 토큰", tok(lambda r: "11" + rs(r, HEX, 32))),
    "firebase_fcm_key": ("fcm", "FCM_SERVER_KEY", "server_key", "server key", "서버 키", tok(lambda r: "AAAA" + rs(r, ANX, 7) + P(":APA", "91b") + rs(r, ANX, 134))),
    "mapbox_secret_token": ("mapbox", "MAPBOX_SECRET_TOKEN", "secret_token", "secret token", "시크릿 토큰", tok(lambda r: P("sk", ".eyJ") + rs(r, AN, 50) + "." + rs(r, ANX, 22))),
    "facebook_access_token": ("facebook page", "FB_PAGE_TOKEN", "access_token", "page token", "페이지 토큰", tok(lambda r: P("EA", "A") + rs(r, AN, 150))),
    "twitter_bearer_token": ("twitter", "TWITTER_BEARER_TOKEN", "bearer_token", "bearer token", "bearer 토큰", tok(lambda r: "A" * 22 + rs(r, AN, 20) + "%3D" + rs(r, AN, 50))),
    "postgres_url_password": ("postgres", "DATABASE_URL", "database_url", "db url", "DB URL", url_kind("postgres", "app_rw", "db-stg.internal", 5432, "/orders")),
    "mysql_url_password": ("mysql", "MYSQL_URL", "dsn", "dsn", "DSN", url_kind("mysql", "admin", "10.0.3.21", 3306, "/shop")),
    "mongodb_url_password": ("mongo", "MONGO_URI", "mongoUri", "conn string", "접속 문자열", url_kind("mongodb", "svc_api", "cluster0.mongo.internal", 27017, "/prod?authSource=admin")),
    "redis_url_password": ("redis", "REDIS_URL", "redis_url", "url", "URL", url_kind("redis", "default", "redis-stg.cache.local", 6379, "/0")),
    "amqp_url_password": ("rabbitmq", "AMQP_URL", "broker_url", "broker url", "브로커 URL", url_kind("amqp", "worker", "mq.internal", 5672, "/vhost")),
    "git_url_token": ("git remote", "REPO_URL", "remote", "remote url", "remote URL", basic_url),
    "db_password": ("db", "DB_PASSWORD", "password", "pw", "비번", tok(human_pw)),
    "redis_password": ("redis", "REDIS_PASSWORD", "requirepass", "pw", "비번", tok(human_pw)),
    "jenkins_admin_password": ("jenkins admin", "JENKINS_ADMIN_PASSWORD", "adminPassword", "pw", "비번", tok(human_pw)),
    "grafana_admin_password": ("grafana admin", "GF_SECURITY_ADMIN_PASSWORD", "admin_password", "password", "비밀번호", tok(human_pw)),
    "smtp_password": ("smtp relay", "SMTP_PASSWORD", "smtp_pass", "pw", "비번", tok(human_pw)),
    "app_secret_key": ("django", "DJANGO_SECRET_KEY", "secret_key", "SECRET_KEY", "SECRET_KEY", tok(lambda r: rs(r, LOW + DIG + "!@#%^&*(-_=+)", 50))),
    "generic_client_secret": ("oauth client", "OAUTH_CLIENT_SECRET", "client_secret", "client secret", "client secret", tok(lambda r: rs(r, ANX, 40))),
    "encryption_key": ("payload encryption", "ENCRYPTION_KEY", "enc_key", "aes key", "암호화 키", tok(lambda r: base64.b64encode(bytes(r.randrange(256) for _ in range(32))).decode())),
}

SPECIAL = {}  # kinds with their own templates (PEM blocks, headers, k8s/docker auth)


def _pem(label):
    def g(r):
        lines = pem_body(r, r.randrange(3, 6))
        tail = rs(r, B64, 4 * r.randrange(5, 15) - 1) + "="
        lines.append(tail)
        return lines
    return g


SPECIAL_KINDS = ["aws_access_key", "private_key_rsa", "private_key_openssh", "private_key_ec", "gcp_service_account_key",
                 "k8s_secret_base64", "docker_config_auth", "basic_auth_header", "bearer_header",
                 "ssh_password_cmd", "htpasswd_plain"]

PEM_LABEL = {"private_key_rsa": "RSA PRIVATE KEY", "private_key_openssh": "OPENSSH PRIVATE KEY",
             "private_key_ec": "EC PRIVATE KEY", "gcp_service_account_key": "PRIVATE KEY"}


# ---------------------------------------------------------------------------
# fillers
PEOPLE = ["jh", "minsu", "@dana", "kevin", "서연", "지훈", "agent-7", "claude", "ops-bot", "yuna.k", "Tom", "박팀장"]
APPS = ["billing-api", "orders", "web", "notif-worker", "admin", "search", "auth-svc", "cron"]
ENVS = ["stg", "prod", "dev", "qa", "staging", "운영", "개발"]


def date(r):
    return f"2025-{r.randrange(1,13):02d}-{r.randrange(1,29):02d}"


def fill(r, tpl, **kw):
    d = dict(who=r.choice(PEOPLE), app=r.choice(APPS), env=r.choice(ENVS[:5]), envk=r.choice(ENVS),
             date=date(r), n=r.randrange(2, 40), ip=f"10.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1,255)}",
             sha=rs(r, HEX, 40), short=rs(r, HEX, 7), uuid=uuid(r), port=r.choice([8080, 3000, 443, 5432]))
    d.update(kw)
    return tpl.format(**d)


# Generic templates: {svc} {ENV} {jk} {what} {whatko} {v}
# style tags: line / term / json / ko
DEV_T = {
    "line": [
        "{env} {svc} {what} = {v}",
        "FYI: new {svc} {what} {v} (old one revoked {date})",
        "{svc} {what} rotated -> {v}",
        "{what} for {svc} is {v} , ask {who} before changing",
        "- [{date}] {svc}: {v}",
        "{ENV}={v}  # {env}, set by {who}",
        "note to self: {svc} {what} `{v}` lives in 1pw too",
    ],
    "term": [
        "$ env | grep -i {svcu}\n{ENV}={v}\n{svcu}_TIMEOUT_MS=5000",
        "$ heroku config -a {app}-{env}\n=== {app}-{env} Config Vars\nNODE_ENV:        production\n{ENV}: {v}\nWEB_CONCURRENCY: 2",
        "$ kubectl get secret {app}-env -o jsonpath='{{.data.{ENV}}}' | base64 -d\n{v}",
        "$ docker inspect {app} --format '{{{{json .Config.Env}}}}'\n[\"PATH=/usr/local/bin:/usr/bin\",\"{ENV}={v}\",\"PORT={port}\"]",
        "pasted from {who}'s shell:\n$ echo ${ENV}\n{v}",
    ],
    "json": [
        '{{"ok":true,"{jk}":"{v}","expires_in":3600,"scope":"read write"}}',
        'credentials.json for {app}:\n{{\n  "service": "{svc}",\n  "{jk}": "{v}",\n  "created": "{date}"\n}}',
        'resp from {svc}: {{"status":"active","id":{n},"{jk}":"{v}"}}',
    ],
    "ko": [
        "{svc} {whatko} 바꿈 {v}",
        "{envk} {svc} {whatko}: {v} 입니다",
        "{svc} {whatko} {v}로 교체했어요 (by {who})",
        "{svc} {whatko}값 {v} 이거 쓰면 됨",
        "$ env | grep {ENV}\n{ENV}={v}\n↑ {envk} 서버에서 확인한 값임",
        '{svc} 응답 그대로 붙임 {{"{jk}":"{v}","ok":true}}',
    ],
}
HELD_T = {
    "line": [
        "{svc} {what}: {v}",
        "pw/keys dump ({env}) | {svc} | {v} |",
        "heads up - {who} regenerated the {svc} {what}, new value is \"{v}\".",
        "{svc} {env} => {v}",
        "if deploy fails w/ 401 check {ENV} ({v}) hasn't expired",
        "* {svc} ({env}) {what} '{v}'",
    ],
    "term": [
        "$ printenv {ENV}\n{v}",
        "$ vercel env pull .env.local\n> Downloading `development` Environment Variables\n$ cat .env.local\n{ENV}=\"{v}\"",
        "root@{app}-{n}:/app# cat /proc/1/environ | tr '\\0' '\\n' | grep {ENV}\n{ENV}={v}",
        "$ gh secret set {ENV} --body \"{v}\" -R acme/{app}\n✓ Set Actions secret {ENV} for acme/{app}",
        "$ docker run -d -e {ENV}={v} -p {port}:{port} acme/{app}:latest\n{sha}",
    ],
    "json": [
        '{{\n  "{svc}": {{\n    "{jk}": "{v}"\n  }}\n}}',
        '< HTTP/1.1 201 Created\n{{"data":{{"type":"token","id":"{n}","attributes":{{"name":"ci-{app}","{jk}":"{v}"}}}}}}',
        '$ cat ~/.config/{app}/auth.json\n{{"user":"{who}","{jk}":"{v}","updated_at":"{date}T09:12:44Z"}}',
    ],
    "ko": [
        "{svc} {whatko} 새로 발급함 → {v}",
        "{who}님이 {svc} {whatko} {v} 으로 갱신해주셨습니다",
        "[{envk}] {svc} 계정정보 공유드려요. {whatko}은 `{v}`",
        "{svc} 키값 {v} (만료일 {date})",
        "참고) {ENV} 값이 {v}인데 {envk}에서만 씀",
        "$ printenv | grep {ENV}\n{ENV}={v}\n이거 {envk} 파드에서 뽑은거에요",
    ],
}


def gen_special(r, kind, part):
    dev = part == "dev"
    who = r.choice(PEOPLE)
    if kind in PEM_LABEL:
        lab = PEM_LABEL[kind]
        lines = _pem(lab)(r)
        block = f"-----BEGIN {lab}-----\n" + "\n".join(lines) + f"\n-----END {lab}-----"
        if kind == "gcp_service_account_key":
            esc = "\\n".join(lines)
            pk = "-----BEGIN " + f"PRIVATE KEY-----\\n{esc}\\n-----END PRIVATE KEY-----\\n"
            proj = r.choice(["acme-prod", "data-lake-123", "ml-stg"])
            if dev:
                tpls = [('gcp SA key for {p} (bq loader):\n{{"type":"service_account","project_id":"{p}","private_key_id":"{h}","private_key":"{k}","client_email":"loader@{p}.iam.gserviceaccount.com"}}', "en"),
                        ('bq 로더용 SA 키 json 통째로 붙여둠\n{{"type": "service_account", "project_id": "{p}", "private_key": "{k}"}}', "ko")]
            else:
                tpls = [('$ cat sa.json | jq \'{{type, private_key}}\'\n{{\n  "type": "service_account",\n  "private_key": "{k}"\n}}', "en"),
                        ('GCP 서비스계정 키파일 내용 ({p}) — private_key만 발췌:\n"private_key": "{k}"', "ko")]
            t, lang = r.choice(tpls)
            return t.format(p=proj, h=rs(r, HEX, 40), k=pk), tuple(lines), lang
        if dev:
            tpls = [("$ cat ~/.ssh/deploy_key\n{b}", "en"),
                    ("bastion key (old one, {w} still uses it):\n{b}", "en"),
                    ("배포서버 키 여기 붙여둠 ㅇㅇ\n{b}", "ko")]
        else:
            tpls = [("{w}: pasting the signing key here until vault is set up\n```\n{b}\n```", "en"),
                    ("$ kubectl get secret tls-{a} -o jsonpath='{{.data.tls\\.key}}' | base64 -d\n{b}", "en"),
                    ("인증서 키파일 내용입니다 ({a}용)\n{b}", "ko")]
        t, lang = r.choice(tpls)
        return t.format(b=block, w=who, a=r.choice(APPS)), tuple(lines), lang
    if kind == "aws_access_key":
        kid = P("AK", "IA") + rs(r, B32, 16)
        sec = rs(r, B64, 40)
        if dev:
            tpls = [("$ env | grep AWS\nAWS_DEFAULT_REGION=ap-northeast-2\nAWS_ACCESS_KEY_ID={k}\nAWS_SECRET_ACCESS_KEY={s}", "en"),
                    ("s3 upload iam user keys: {k} / {s}  (bucket-only policy)", "en"),
                    ('{{"AccessKey":{{"UserName":"ci-s3","AccessKeyId":"{k}","Status":"Active","SecretAccessKey":"{s}"}}}}', "en"),
                    ("s3 업로드용 IAM 키 발급함 access key {k} secret {s} 입니다", "ko")]
        else:
            tpls = [("$ cat ~/.aws/credentials\n[deploy]\naws_access_key_id = {k}\naws_secret_access_key = {s}", "en"),
                    ("aws creds for the backup job -> id {k}, secret {s}.", "en"),
                    ("백업잡 aws 키값 공유: `{k}` / `{s}` (권한은 s3만)", "ko")]
        t, lang = r.choice(tpls)
        return t.format(k=kid, s=sec), (kid, sec), lang
    if kind == "k8s_secret_base64":
        pw = human_pw(r)
        b = base64.b64encode(pw.encode()).decode()
        a = r.choice(APPS)
        if dev:
            tpls = [("$ kubectl get secret {a}-db -o yaml\napiVersion: v1\ndata:\n  password: {b}\n  username: YXBw\nkind: Secret\nmetadata:\n  name: {a}-db\ntype: Opaque", "en"),
                    ("k8s secret {a}-db 의 password 필드: {b} (base64임, 디코딩하면 실제 비번)", "ko")]
        else:
            tpls = [("secret.yaml we applied by hand:\n```yaml\nkind: Secret\nmetadata: {{name: {a}-db}}\ndata:\n  DB_PASS: \"{b}\"\n```", "en"),
                    ("$ kubectl get secret {a}-db -o json | jq .data\n{{\n  \"DB_PASS\": \"{b}\"\n}}\n운영 클러스터 값이니까 조심", "ko")]
        t, lang = r.choice(tpls)
        return t.format(a=a, b=b), (b,), lang
    if kind == "docker_config_auth":
        user = r.choice(["ci-bot", "deploy", "acme"])
        b = base64.b64encode(f"{user}:{rs(r, AN, 24)}".encode()).decode()
        if dev:
            tpls = [('$ cat ~/.docker/config.json\n{{\n  "auths": {{\n    "ghcr.io": {{\n      "auth": "{b}"\n    }}\n  }}\n}}', "en"),
                    ('도커 레지스트리 로그인 정보 {{"auths":{{"registry.acme.io":{{"auth":"{b}"}}}}}} 이거 ~/.docker/config.json에 넣으면 됨', "ko")]
        else:
            tpls = [('imagePullSecret .dockerconfigjson decoded: {{"auths":{{"harbor.acme.io":{{"username":"{u}","auth":"{b}"}}}}}}', "en"),
                    ('harbor 풀 시크릿 auth값은 {b} 임 (user {u})', "ko")]
        t, lang = r.choice(tpls)
        return t.format(b=b, u=user), (b,), lang
    if kind == "basic_auth_header":
        b = base64.b64encode(f"admin:{human_pw(r)}".encode()).decode()
        if dev:
            tpls = [("curl -H 'Authorization: Basic {b}' https://es.internal:9200/_cat/indices", "en"),
                    ("es 클러스터 호출할때 헤더 Authorization: Basic {b} 붙여야 함", "ko")]
        else:
            tpls = [("> GET /api/health HTTP/1.1\n> Host: grafana.internal\n> Authorization: Basic {b}\n< HTTP/1.1 200 OK", "en"),
                    ("kibana 프록시 basic auth 헤더값 = Basic {b}", "ko")]
        t, lang = r.choice(tpls)
        return t.format(b=b), (b,), lang
    if kind == "bearer_header":
        v = rs(r, ANX, r.randrange(32, 48))
        if dev:
            tpls = [("curl -s https://api.partner.io/v2/orders -H \"Authorization: Bearer {v}\" | jq .", "en"),
                    ("partner api 호출 Bearer {v} 로 하면 됨, 만료 없음", "ko")]
        else:
            tpls = [("http --json POST partner.io/v2/refund Authorization:'Bearer {v}' amount=100", "en"),
                    ("파트너사가 준 토큰 Authorization: Bearer {v} 헤더로 넣어주세요", "ko")]
        t, lang = r.choice(tpls)
        return t.format(v=v), (v,), lang
    if kind == "ssh_password_cmd":
        pw = human_pw(r).replace("'", "")
        if dev:
            tpls = [("sshpass -p '{p}' ssh ubuntu@{ip}  # legacy box, no keys", "en"),
                    ("레거시 서버 {ip} ssh 비번 {p} 임 키 등록 안돼있음", "ko")]
        else:
            tpls = [("legacy host {ip}: user ubuntu / pass {p} (keys not set up yet)", "en"),
                    ("{ip} 접속: ubuntu / {p} 입니다. 키 등록 요청해둠", "ko")]
        t, lang = r.choice(tpls)
        ip = f"10.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1,255)}"
        return t.format(p=pw, ip=ip), (pw,), lang
    if kind == "htpasswd_plain":
        pw = human_pw(r)
        if dev:
            tpls = [("nginx basic auth for /admin -> user: ops, pass: {p}", "en"),
                    ("어드민 페이지 basic auth 계정 ops / 비번 {p}", "ko")]
        else:
            tpls = [("staging site is behind basic auth, creds ops:{p}", "en"),
                    ("스테이징 사이트 들어갈때 ops / {p} 치면 돼요~", "ko")]
        t, lang = r.choice(tpls)
        return t.format(p=pw), (pw,), lang
    raise KeyError(kind)


# kind-specific forms (tool output where only that kind appears)
EXTRA_DEV = {
    "git_url_token": [("en", "$ git remote -v\norigin\t{v} (fetch)\norigin\t{v} (push)"),
                      ("ko", "CI에서 clone 안돼서 remote를 {v} 로 바꿔둠")],
    "npm_token": [("en", "$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={v}\nsave-exact=true"),
                  ("ko", ".npmrc에 //registry.npmjs.org/:_authToken={v} 한줄 넣으면 publish 됨")],
    "pypi_token": [("en", "$ cat ~/.pypirc\n[pypi]\n  username = __token__\n  password = {v}")],
    "redis_password": [("en", "$ redis-cli -h redis-stg.cache.local -a {v} ping\nWarning: Using a password with '-a' option on the command line interface may not be safe.\nPONG"),
                       ("ko", "redis-cli -a {v} 로 붙으면 됨 (stg만)")],
    "db_password": [("en", "$ PGPASSWORD={v} psql -h db-stg.internal -U app_rw orders\npsql (15.4)\norders=>")],
    "jenkins_admin_password": [("en", "pw for jenkins admin is {v}"), ("ko", "젠킨스 admin 비번 {v} 임 바꾸지마셈")],
    "github_oauth": [("en", "$ cat ~/.config/gh/hosts.yml\ngithub.com:\n    user: {who}\n    oauth_token: {v}\n    git_protocol: https")],
    "heroku_api_key": [("en", "$ cat ~/.netrc\nmachine api.heroku.com\n  login {who}@acme.io\n  password {v}")],
    "openai_api_key": [("en", "openai key rotated -> {v}"), ("ko", "openai 키 바꿨음 {v}")],
    "sendgrid_api_key": [("en", "FYI: new sendgrid key {v}")],
}
EXTRA_HELD = {
    "git_url_token": [("en", "$ git clone {v}\nCloning into 'infra'...\nremote: Enumerating objects: 412, done."),
                      ("ko", "[{date}] git remote -v 찍어보니 origin이 {v} 로 돼있었음;;")],
    "npm_token": [("en", "$ npm config get //registry.npmjs.org/:_authToken\n{v}")],
    "pypi_token": [("ko", "twine upload -u __token__ -p {v} dist/* 로 올림")],
    "redis_password": [("en", "$ grep requirepass /etc/redis/redis.conf\nrequirepass {v}"),
                       ("ko", "stg redis 비번 = {v}")],
    "db_password": [("en", "$ cat ~/.pgpass\ndb-stg.internal:5432:orders:app_rw:{v}")],
    "jenkins_admin_password": [("en", "jenkins admin / {v} (set during the {date} reinstall)"), ("ko", "젠킨스 admin 계정 비밀번호는 {v}입니다.")],
    "github_oauth": [("en", "$ gh auth token\n{v}")],
    "heroku_api_key": [("en", "$ heroku auth:token\n ›   Warning: token will expire {date}\n{v}")],
    "openai_api_key": [("ko", "openai 키 로테이션함. 새 키: {v}")],
    "sendgrid_api_key": [("en", "new sendgrid key from {who}: {v} -- old one deleted")],
}


def gen_generic(r, kind, part):
    svc, env, jk, what, whatko, g = KINDS[kind]
    v, secrets = g(r)
    pool = DEV_T if part == "dev" else HELD_T
    style = "ko" if r.random() < 0.34 else r.choice(["line", "line", "term", "json"])
    tpl = r.choice(pool[style])
    extra = (EXTRA_DEV if part == "dev" else EXTRA_HELD).get(kind)
    if extra and r.random() < 0.45:
        lang, tpl = r.choice(extra)
        style = "ko" if lang == "ko" else "term"
    envname = env.split("/")[0]
    svcd = svc
    if r.random() < 0.3:
        svcd = svc.upper() if r.random() < 0.5 else svc.title()
    text = fill(r, tpl, svc=svcd, svcu=envname.split("_")[0], ENV=envname, jk=jk,
                what=what, whatko=whatko, v=v)
    return text, secrets, ("ko" if style == "ko" else "en")


# ---------------------------------------------------------------------------
# negatives
def neg_values(r):
    return dict(
        sha=rs(r, HEX, 40), short=rs(r, HEX, 7), uuid=uuid(r), uuid2=uuid(r),
        digest="sha256:" + rs(r, HEX, 64),
        integ="sha512-" + base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode(),
        ver=f"{r.randrange(1,20)}.{r.randrange(30)}.{r.randrange(40)}",
        last4=rs(r, AN, 4), app=r.choice(APPS), who=r.choice(PEOPLE), date=date(r),
        ts=r.randrange(1700000000, 1770000000), n=r.randrange(2, 900),
        b64=base64.b64encode(r.choice(['{"theme":"dark","lang":"ko"}', "hello from the build step",
                                       "user_id=1042&page=3", "metrics-exporter-v2"]).encode()).decode(),
        reqid="req_" + rs(r, HEX, 24), acct="AC" + rs(r, HEX, 32),
        kid="arn:aws:iam::" + rs(r, DIG, 12) + ":role/" + r.choice(APPS) + "-deploy",
        pub="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, B64, 43) + " " + r.choice(PEOPLE).strip("@") + "@laptop",
        ip=f"10.{r.randrange(256)}.{r.randrange(256)}.{r.randrange(1,255)}",
        port=r.choice([8080, 3000, 5432, 6379]),
        minor=r.randrange(1, 19), acct12=rs(r, DIG, 12), low5=rs(r, LOW + DIG, 5),
        roleid="AROA" + rs(r, B32, 16), hex64=rs(r, HEX, 64), hex12=rs(r, HEX, 12),
        nodeid=base64.b64encode(("04:User" + str(r.randrange(10000, 9999999))).encode()).decode(),
        modulus=rs(r, ANX, 86), env2=r.choice(["stg", "prod", "qa"]),
        envn=r.choice(["STRIPE_SECRET_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "SLACK_BOT_TOKEN", "JENKINS_API_TOKEN", "REDIS_PASSWORD", "DD_API_KEY"]), ver2=f"{r.randrange(1,20)}.{r.randrange(30)}.{r.randrange(40)}",
    )


NEG_DEV = [
    ("placeholder", "en", "stg redis pw = <ask {who}>, it's not in this file on purpose"),
    ("placeholder", "en", "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxx in .env.example, real one in 1password"),
    ("placeholder", "en", "$ env | grep STRIPE\nSTRIPE_SECRET_KEY=${{STRIPE_SECRET_KEY}}\nSTRIPE_MODE=live"),
    ("masked", "en", "$ aws configure list\n      Name                    Value             Type    Location\n      ----                    -----             ----    --------\n   profile                <not set>             None    None\naccess_key     ****************{last4} shared-credentials-file\nsecret_key     ****************{last4} shared-credentials-file\n    region           ap-northeast-2      config-file    ~/.aws/config"),
    ("masked", "en", "$ gh auth status\ngithub.com\n  ✓ Logged in to github.com account {who} (keyring)\n  - Active account: true\n  - Git operations protocol: https\n  - Token: gho_************************************\n  - Token scopes: 'gist', 'read:org', 'repo'"),
    ("masked", "en", "$ kubectl describe secret {app}-env\nName:         {app}-env\nNamespace:    default\nType:  Opaque\n\nData\n====\nDB_PASSWORD:  18 bytes\nAPI_KEY:      40 bytes"),
    ("sha", "en", "reverted {sha} — the retry loop fix broke the {app} migration"),
    ("sha", "en", "$ git log --oneline -3\n{short} fix token refresh race\n{short2} bump axios to {ver}\n{short3} add sentry breadcrumbs"),
    ("uuid", "en", '{{"error":"invalid_grant","error_description":"token expired","request_id":"{uuid}"}}'),
    ("digest", "en", "$ docker inspect {app} --format '{{{{.Image}}}}'\n{digest}"),
    ("integrity", "en", '"node_modules/jsonwebtoken": {{\n  "version": "{ver}",\n  "integrity": "{integ}"\n}}'),
    ("version", "en", "$ npm config list\n; \"user\" config from /home/dev/.npmrc\n//registry.npmjs.org/:_authToken = (protected)\n; node version = v20.{minor}.0\n; npm version = {ver}"),
    ("url", "en", "$ git remote -v\norigin\thttps://github.com/acme-corp/{app}.git (fetch)\norigin\thttps://github.com/acme-corp/{app}.git (push)"),
    ("code", "en", "token handling: `const token = process.env.GITHUB_TOKEN; if (!token) throw new Error('missing GITHUB_TOKEN')`"),
    ("code", "en", "db pw comes from os.environ[\"DB_PASSWORD\"]; never hardcode, {who} got burned last time"),
    ("prose", "en", "rotated the sendgrid key today, new one is only in vault (path secret/{app}/sendgrid). ping {who} for access"),
    ("public_key", "en", "added my pubkey to the bastion: {pub}"),
    ("id", "en", "twilio account sid is {acct} (not secret, the auth token is in vault)"),
    ("base64", "en", "$ kubectl get cm {app}-flags -o jsonpath='{{.data.defaults}}'\n{b64}"),
    ("json_ids", "en", '{{"id":"{uuid}","object":"api_key","name":"ci-{app}","created":{ts},"last_used":null,"redacted_value":"sk-...{last4}"}}'),
    ("env_names", "en", "$ docker inspect {app} | jq '.[0].Config.Env'\n[\n  \"NODE_ENV=production\",\n  \"LOG_LEVEL=info\",\n  \"BUILD_SHA={sha}\",\n  \"SECRETS_PATH=/run/secrets\"\n]"),
    ("env_names", "en", "$ env | grep -i token\nTOKEN_TTL_SECONDS=3600\nREFRESH_TOKEN_ROTATION=true\nGITHUB_TOKEN_FILE=/run/secrets/github_token"),
    ("config_dump", "en", "$ heroku config -a {app}\n=== {app} Config Vars\nLOG_LEVEL:       debug\nRELEASE_SHA:     {sha}\nWEB_CONCURRENCY: 3"),
    ("listing", "en", "$ kubectl get secrets -n {app}\nNAME                  TYPE                                  DATA   AGE\n{app}-env             Opaque                                4      {n}d\ndefault-token-{low5}   kubernetes.io/service-account-token   3      412d"),
    ("json_ids", "en", '{{\n  "login": "{who}",\n  "id": {n},\n  "node_id": "{nodeid}",\n  "two_factor_authentication": true\n}}'),
    ("public_key", "en", 'jwks we publish: {{"keys":[{{"kid":"{short}{short2}","kty":"RSA","use":"sig","alg":"RS256","e":"AQAB","n":"{modulus}"}}]}}'),
    ("hash", "en", "$ sha256sum dist/{app}.tar.gz\n{hex64}  dist/{app}.tar.gz"),
    ("version", "en", "bumped stripe-node {ver} -> {ver2}; webhook signature check API unchanged"),
    ("placeholder", "en", "curl example for the wiki: curl -H \"Authorization: Bearer <token>\" https://api.acme.io/v1/me"),
    ("code", "en", "fix in {app}/client.py: `token = os.environ.get(\"{envn}\") or load_from_vault(\"{app}/{envl}\")` — never fall back to a default"),
    ("placeholder", "en", "{envn}=changeme  # local docker-compose only, overridden in {env2} by the {app} chart"),
    ("placeholder", "en", '{{"{envl}": "${{{envn}}}", "timeout_ms": {n}0}}  <- how {app}/config.json looks now, value injected at boot'),
    ("placeholder", "ko", "stg redis 비번은 여기 안적음, {who}한테 물어보세요"),
    ("code", "ko", "{app} 에서 {envn} 없으면 바로 죽게 해놨음: `if not os.environ.get(\"{envn}\"): sys.exit(1)`"),
    ("prose", "ko", "토큰 만료시간 3600초로 늘림 (TOKEN_TTL_SECONDS). 재배포 필요"),
    ("prose", "ko", "jenkins 비번 초기화는 Manage Jenkins > Security 에서 하면 됨. 비번 자체는 여기 적지 말기"),
    ("prose", "ko", "키값 길이가 40자여야 되는데 복붙하면서 39자 돼서 401 났던거였음 ㅠ"),
    ("url", "ko", "$ git remote -v\norigin\thttps://github.com/acme-corp/{app}.git (fetch)\n토큰은 remote에 박지 말고 credential helper 쓰세요"),
    ("uuid", "ko", "openai 쪽 요청 id {reqid} 로 지원팀에 문의 넣었어요"),
    ("placeholder", "ko", ".env.example 에 OPENAI_API_KEY=<YOUR_KEY> 로 돼있는데 실제 키는 1password에 있음"),
    ("masked", "ko", "$ vercel env ls\n  name              value        environments\n  DATABASE_URL      Encrypted    Production\n  NEXTAUTH_SECRET   Encrypted    Production, Preview\n값은 대시보드에서만 보임"),
    ("sha", "ko", "{short} 커밋에서 토큰 갱신 로직 깨졌음. {sha} 로 롤백함"),
    ("uuid", "ko", "결제 실패 건 request id {uuid} 로 stripe 대시보드에서 찾으면 됨"),
    ("prose", "ko", "토큰 바꿈! 새 키값은 vault secret/{app}/openai 에 넣어둠 (슬랙에 올리지 마세요)"),
    ("digest", "ko", "운영 이미지 digest {digest} 로 고정했어요"),
    ("code", "ko", "비번은 `os.getenv(\"JENKINS_ADMIN_PASSWORD\")` 로 읽도록 바꿨음, 하드코딩 금지"),
]
NEG_HELD = [
    ("placeholder", "en", "jenkins admin pw is changeme on a fresh install — we change it on first boot, see runbook"),
    ("placeholder", "en", '{{\n  "apiKey": "YOUR_API_KEY_HERE",\n  "endpoint": "https://api.example.com/v1"\n}}'),
    ("placeholder", "en", "$ printenv DATABASE_URL\npostgres://app:****@db-stg.internal:5432/orders"),
    ("masked", "en", "$ heroku config:get STRIPE_SECRET_KEY -a {app}\n(hidden — use heroku config --shell with prod access)\nlast 4 shown in dashboard: ...{last4}"),
    ("masked", "en", "$ fly secrets list\nNAME                DIGEST                  CREATED AT\nDATABASE_URL        {short}{short2}   {n}h ago\nREDIS_PASSWORD      {short3}{short}   {n}h ago"),
    ("sha", "en", "bisected it: {sha} is the first bad commit (tokens.py refactor)"),
    ("uuid", "en", "< HTTP/1.1 401 Unauthorized\n< x-request-id: {uuid}\n{{\"message\":\"Bad credentials\",\"documentation_url\":\"https://docs.github.com/rest\"}}"),
    ("digest", "en", "pinned base image: python:3.11-slim@{digest}"),
    ("integrity", "en", "lockfile diff only touched integrity: {integ}"),
    ("version", "en", "openai sdk {ver} changed the client ctor; api key now read from OPENAI_API_KEY automatically"),
    ("url", "en", "$ git remote -v\norigin\tgit@github.com:acme-corp/{app}.git (fetch)\norigin\tgit@github.com:acme-corp/{app}.git (push)"),
    ("code", "en", "```python\nheaders = {{\"Authorization\": f\"Bearer {{os.environ['API_TOKEN']}}\"}}\n```"),
    ("prose", "en", "FYI the slack webhook 404s after workspace migration; {who} is recreating it, don't paste the URL here"),
    ("public_key", "en", "deploy key (public half) registered on the repo: {pub}"),
    ("id", "en", "the deploy role is {kid}; CI assumes it via OIDC, no static keys anymore"),
    ("base64", "en", '$ echo {b64} | base64 -d\n(just the default prefs blob, nothing sensitive)'),
    ("json_ids", "en", '{{"token_type":"bearer","expires_in":3600,"scope":"repo","request_id":"{reqid}","created_at":"{date}T10:00:00Z"}}'),
    ("timestamp", "en", "cron token refresh ran at {ts} (epoch) and again {date}; both returned 200"),
    ("id", "en", "$ aws sts get-caller-identity\n{{\n    \"UserId\": \"{roleid}:{who}\",\n    \"Account\": \"{acct12}\",\n    \"Arn\": \"arn:aws:sts::{acct12}:assumed-role/deploy/{who}\"\n}}"),
    ("digest", "en", "$ docker images --digests acme/{app}\nREPOSITORY   TAG     DIGEST      IMAGE ID\nacme/{app}   {ver}   {digest}   {hex12}"),
    ("json_ids", "en", '{{"commit":{{"sha":"{sha}","message":"move secrets to vault"}},"state":"success","run_id":{ts}}}'),
    ("config_dump", "en", '$ vercel env pull .env.local && cat .env.local\nVERCEL_ENV="development"\nVERCEL_GIT_COMMIT_SHA="{sha}"\nNEXT_PUBLIC_API_BASE="https://api.acme.io"'),
    ("listing", "en", "$ kubectl get sa deploy -o yaml | grep -A2 secrets\nsecrets:\n- name: deploy-token-{low5}"),
    ("hash", "en", "cache key for the build is {hex64} (hash of poetry.lock)"),
    ("prose", "en", "pw for jenkins admin got reset by the helm upgrade; {who} set a new one and put it in 1pw, NOT here"),
    ("version", "en", "pinned terraform {ver} and aws provider {ver2} — token auth to TFC works again"),
    ("env_names", "en", "$ printenv | grep -i key | cut -d= -f1\nSTRIPE_PUBLISHABLE_KEY_NAME\nAPI_KEY_HEADER\nKEYCLOAK_REALM"),
    ("code", "en", "```ts\nconst {envl} = process.env.{envn} ?? '';\nif (!{envl}) throw new Error('{envn} not set for {app}');\n```"),
    ("placeholder", "en", "{app} .env.example now has {envn}=<paste-yours-here> (ask {who} for the {env2} one)"),
    ("masked", "en", "{envn} in the {app} dashboard shows as ••••••••{last4}; the full value is only visible to admins"),
    ("placeholder", "ko", "키값은 `${{SENTRY_AUTH_TOKEN}}` 으로 CI에서 주입됨, 로컬은 direnv로"),
    ("placeholder", "ko", "{app} 설정파일 {envl}: \"xxxxxxxx\" 로 두고 실제값은 {env2} 시크릿에서 주입받음"),
    ("code", "ko", "{app} 클라이언트는 `os.environ[\"{envn}\"]` 로 토큰 읽음. 테스트에선 monkeypatch로 가짜값 넣음"),
    ("prose", "ko", "키값 바뀌면 {app} 파드 재시작 필요함 (kubectl rollout restart deploy/{app})"),
    ("prose", "ko", "비번 정책 바뀜: 12자 이상 + 특수문자, 90일마다 교체. 계정정보는 각자 1password에서 확인"),
    ("env_names", "ko", "$ printenv | grep -i key\nKEYCLOAK_REALM=acme\nAPI_KEY_HEADER=X-Api-Key\n키 이름만 나오고 실제 키는 없음"),
    ("prose", "ko", "github 토큰은 ghp_ 로 시작하는 걸로 새로 만들어야 함, fine-grained는 아직 org에서 막혀있어요"),
    ("hash", "ko", "배포 산출물 sha256 {hex64} 맞는지 확인하고 올림"),
    ("placeholder", "ko", "jenkins 초기 비번은 /var/jenkins_home/secrets/initialAdminPassword 파일에 있어요"),
    ("masked", "ko", "$ gh auth status\n  ✓ Logged in to github.com account {who}\n  - Token: ghp_************************************\n토큰 마스킹돼서 나옴, 실제 값은 keyring에"),
    ("sha", "ko", "배포 태그 v{ver} = {sha} 입니다"),
    ("uuid", "ko", "sendgrid 발송 실패 message id {uuid}, 로그에서 이걸로 검색"),
    ("prose", "ko", "openai 키 로테이션 했어요~ 새 키는 팀 vault에만 올렸고 예전 키는 폐기함"),
    ("json_ids", "ko", '토큰 발급 응답 (값은 지움) {{"id":{n},"name":"deploy","token":"<redacted>","expires_at":"{date}"}}'),
    ("code", "ko", "토큰은 `process.env.SLACK_BOT_TOKEN` 에서 읽고 없으면 에러 던지게 해둠"),
    ("digest", "ko", "npm integrity {integ} 불일치 에러나서 lockfile 다시 생성함"),
]


def _neg(r, pool):
    cat, lang, tpl = r.choice(pool)
    d = neg_values(r)
    d["envl"] = d["envn"].lower()
    d["short2"] = rs(r, HEX, 7)
    d["short3"] = rs(r, HEX, 7)
    return tpl.format(**d), "neg:" + cat, (), lang


def corpus(part):
    if part not in ("dev", "heldout"):
        raise ValueError(part)
    r = random.Random(4242 if part == "dev" else 4343)
    out = []
    for kind in list(KINDS) + SPECIAL_KINDS:
        for _ in range(r.randrange(5, 9)):
            if kind in KINDS:
                text, secrets, lang = gen_generic(r, kind, part)
            else:
                text, secrets, lang = gen_special(r, kind, part)
            out.append((text, kind, tuple(secrets), lang))
    npos = len(out)
    pool = NEG_DEV if part == "dev" else NEG_HELD
    # each negative template used; then fill to ~45% of positives
    negs, seen = [], set()
    while len(negs) < int(npos * 0.45):
        x = _neg(r, pool)
        if x[0] not in seen:
            seen.add(x[0])
            negs.append(x)
    out.extend(negs)
    r.shuffle(out)
    return out


if __name__ == "__main__":
    for part in ("dev", "heldout"):
        c = corpus(part)
        pos = [x for x in c if x[2]]
        neg = [x for x in c if not x[2]]
        kinds = {x[1] for x in pos}
        ko = sum(1 for x in c if x[3] == "ko") / len(c)
        print(f"{part}: positives={len(pos)} negatives={len(neg)} kinds={len(kinds)} ko_share={ko:.2f}")
        rr = random.Random(7)
        for x in rr.sample(pos, 3) + rr.sample(neg, 3):
            print("  ---", x[1], x[2], x[3])
            print("  " + x[0].replace("\n", "\n  "))
