"""Independent secret-redaction test corpus, writer D.

Theme: (1) long multi-line lessons mixing prose with pasted config / shell history /
HTTP exchanges, (2) terse one-line developer shorthand, (3) code in less common
languages (Kotlin, Swift, Scala, Elixir, Lua, Dart, R, Perl, Haskell, Terraform,
Makefile, Jenkinsfile, nix, Bicep, CloudFormation), (4) Korean-dominant notes.

Every value is generated at run time from a seeded random.Random; prefixes are
split in the source so that no full credential-shaped literal appears here.

corpus(part) -> list of (text, kind, secrets, lang); part in {"dev", "heldout"}.

Written without sight of the redaction rules, their tests or the other corpora, from facts read
in the scanners' public test fixtures (gitleaks, MIT; trufflehog, AGPL-3.0; detect-secrets,
Apache-2.0; secretlint, MIT): services, prefixes, lengths, alphabets and the kinds of context.
No fixture value or sentence is reproduced. "dev" may be tuned on; "heldout" is run only to
report a figure (bench/secrets_bench.py prints the misses of "dev" alone).
"""
import base64
import json
import random
import string

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = UP + LO + DG
HEX = "0123456789abcdef"
B64 = AN + "+/"
URLS = AN + "-_"
B32 = UP + "234567"


def rs(r, n, alpha=AN):
    return "".join(r.choice(alpha) for _ in range(n))


def b64url_nopad(b):
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


# ---------------------------------------------------------------- value makers
def fixed(prefix, n, alpha=AN, suffix=""):
    return lambda r: prefix + rs(r, n, alpha) + suffix


def uuid4(r):
    h = rs(r, 32, HEX)
    h = h[:12] + "4" + h[13:16] + r.choice("89ab") + h[17:]
    return "-".join([h[:8], h[8:12], h[12:16], h[16:20], h[20:]])


WORDS = ["summer", "winter", "tiger", "maple", "ocean", "sunny", "dragon", "hanbit",
         "seoul", "busan", "coffee", "pingu", "rocket", "bluebird", "marble", "cheese",
         "dolphin", "kimchi", "mango", "falcon", "jeju", "panda", "harbor", "cobalt",
         "gksrmf", "dkssud", "sarang", "hodu", "nabi", "olive", "purple", "violet"]
SYMS = "!@#%&*?._-"


def human_pw(r):
    w = r.choice(WORDS)
    style = r.randrange(6)
    if style == 0:
        return w.capitalize() + str(r.randint(1990, 2026)) + r.choice(SYMS)
    if style == 1:
        return r.choice(WORDS).capitalize() + "-" + w.capitalize() + "-" + str(r.randint(10, 99))
    if style == 2:
        return w + r.choice("!@#") + str(r.randint(100, 9999)) + r.choice(WORDS)[:3].upper()
    if style == 3:
        t = w.replace("a", "@").replace("o", "0").replace("e", "3").replace("s", "$")
        return t.capitalize() + str(r.randint(10, 99)) + r.choice("!#")
    if style == 4:
        return "qwer" + str(r.randint(1000, 9999)) + r.choice(["!@", "!!", "#$"]) + w[:2]
    return w.upper()[:4] + r.choice(SYMS) + w[4:] + str(r.randint(2, 9)) + r.choice(WORDS)


def gmail_app_pw(r):
    sep = " " if r.random() < 0.4 else ""
    return sep.join(rs(r, 4, LO) for _ in range(4))


def jwt_like(r, payload):
    h = b64url_nopad(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    p = b64url_nopad(json.dumps(payload, separators=(",", ":")).encode())
    return h + "." + p + "." + rs(r, 43, URLS)


def g_jwt(r):
    return jwt_like(r, {"sub": str(r.randint(10000, 99999)), "name": r.choice(WORDS),
                        "iat": r.randint(1700000000, 1760000000), "scope": "admin"})


def g_supabase(r):
    return jwt_like(r, {"iss": "supabase", "ref": rs(r, 20, LO), "role": "service_" + "role",
                        "iat": r.randint(1700000000, 1750000000), "exp": 2000000000})


def g_mapbox(r):
    body = b64url_nopad(json.dumps({"u": r.choice(WORDS) + str(r.randint(1, 99)),
                                    "a": "cl" + rs(r, 23, LO + DG)}).encode())
    return "s" + "k." + body + "." + rs(r, 22, URLS)


def g_discord_bot(r):
    ident = str(r.randint(10 ** 17, 10 ** 18 - 1))
    return b64url_nopad(ident.encode()) + "." + rs(r, 6, URLS) + "." + rs(r, 38, URLS)


def g_openai(r):
    return "sk-" + "proj-" + rs(r, 58, URLS) + "T3Blbk" + "FJ" + rs(r, 58, URLS)


def g_anthropic(r):
    return "sk-" + "ant-" + "api03-" + rs(r, 93, URLS) + "AA"


def g_azure_ad(r):
    return rs(r, 3, AN) + r.choice(DG) + "Q~" + rs(r, 34, AN + "_.~-")


def g_tfc(r):
    return rs(r, 14, AN) + ".atlas" + "v1." + rs(r, 67, AN)


def g_braintree(r):
    return "access_token" + "$production$" + rs(r, 16, LO + DG) + "$" + rs(r, 32, HEX)


def g_fcm(r):
    return "AAAA" + rs(r, 7, AN) + ":APA91b" + rs(r, 134, URLS)


def g_twitter(r):
    return "A" * 22 + rs(r, 8, AN) + "%2F" + rs(r, 10, AN) + "%3D" + rs(r, 50, AN)


def g_slack_bot(r):
    return "xo" + "xb-" + str(r.randint(10 ** 10, 10 ** 12)) + "-" + str(r.randint(10 ** 11, 10 ** 13)) + "-" + rs(r, 24)


def g_slack_user(r):
    return "xo" + "xp-" + "-".join(str(r.randint(10 ** 10, 10 ** 12)) for _ in range(3)) + "-" + rs(r, 32, HEX)


def g_slack_app(r):
    return "xa" + "pp-1-A" + rs(r, 10, UP + DG) + "-" + str(r.randint(10 ** 12, 10 ** 13)) + "-" + rs(r, 64, HEX)


def g_telegram(r):
    return str(r.randint(10 ** 7, 10 ** 10 - 1)) + ":AA" + rs(r, 33, URLS)


def g_slack_hook(r):
    tok = rs(r, 24)
    return ("https://hooks.slack.com/" + "services/T" + rs(r, 8, UP + DG) + "/B" + rs(r, 10, UP + DG) + "/" + tok, (tok,))


def g_discord_hook(r):
    tok = rs(r, 68, URLS)
    return ("https://discord.com/api/" + "webhooks/" + str(r.randint(10 ** 17, 10 ** 18)) + "/" + tok, (tok,))


def g_teams_hook(r):
    tok = rs(r, 32, HEX)
    org = r.choice(["acmecorp", "hanbitsoft", "contoso", "northwind"])
    return ("https://" + org + ".webhook.office.com/webhookb2/" + uuid4(r) + "@" + uuid4(r)
            + "/IncomingWebhook/" + tok + "/" + uuid4(r), (tok,))


def g_azure_storage(r):
    key = base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode()
    acct = r.choice(["stprodlogs", "hanbitassets", "mediablob01", "stbackupkr"])
    return ("DefaultEndpointsProtocol=https;AccountName=" + acct + ";AccountKey=" + key
            + ";EndpointSuffix=core.windows.net", (key,))


def urlenc(pw):
    return pw.replace("%", "%25").replace("@", "%40").replace("#", "%23").replace("?", "%3F").replace("&", "%26")


def _url(scheme, port, dbs):
    def g(r):
        pw = human_pw(r) if r.random() < 0.5 else rs(r, r.randint(16, 28), AN)
        user = r.choice(["app", "svc_api", "deploy", "admin", "etl_writer", "reporting"])
        host = r.choice(["db.internal", "10.0.3.17", "pg-prod.cluster-c9x.ap-northeast-2.rds.amazonaws.com",
                         "stg-db.hanbit.local", "mysql-primary", "cache-01.prod"])
        pw_in = urlenc(pw)
        tail = "" if port is None else ":" + str(port)
        return (scheme + "://" + user + ":" + pw_in + "@" + host + tail + "/" + r.choice(dbs), (pw_in,))
    return g


def g_mongo(r):
    pw = rs(r, 20, AN)
    return ("mongodb+srv://" + r.choice(["api", "ingest", "admin"]) + ":" + pw + "@cluster0." + rs(r, 5, LO + DG)
            + ".mongodb.net/" + r.choice(["orders", "events"]) + "?retryWrites=true&w=majority", (pw,))


def g_redis(r):
    pw = rs(r, 32, AN)
    return ("redis://default:" + pw + "@" + r.choice(["redis-prod", "cache.internal", "10.0.8.4"]) + ":6379/0", (pw,))


def g_basic_url(r):
    pw = urlenc(human_pw(r))
    return ("https://" + r.choice(["ci", "deploy", "admin", "bot"]) + ":" + pw + "@"
            + r.choice(["nexus.internal.example.com", "registry.hanbit.dev", "grafana.ops.local", "jenkins.corp.example"])
            + "/" + r.choice(["repository/maven-releases/", "api/health", "job/nightly/"]), (pw,))


def g_ftp(r):
    pw = urlenc(human_pw(r))
    return ("ftp://" + r.choice(["upload", "partner_kr", "edi"]) + ":" + pw + "@ftp." + r.choice(["vendor.co.kr", "logistics.example.net"]) + "/inbound/", (pw,))


def g_cloudinary(r):
    sec = rs(r, 27, URLS)
    return ("cloudinary://" + str(r.randint(10 ** 14, 10 ** 15 - 1)) + ":" + sec + "@" + r.choice(["dxk2abc", "hanbit-media", "shop-cdn"]), (sec,))


def g_jdbc(r):
    pw = urlenc(human_pw(r))
    return ("jdbc:mysql://" + r.choice(["mysql-primary", "10.1.2.9"]) + ":3306/" + r.choice(["shop", "billing"])
            + "?user=" + r.choice(["app", "batch"]) + "&password=" + pw + "&useSSL=true", (pw,))


def g_k8s_b64(r):
    pw = human_pw(r)
    return base64.b64encode(pw.encode()).decode()


def g_laravel(r):
    body = base64.b64encode(bytes(r.randrange(256) for _ in range(32))).decode()
    return ("base64:" + body, (body,))


def g_django(r):
    return "django-insecure-" + rs(r, 50, LO + DG + "!@#%^&*(-_=+)")


def g_pypi(r):
    return "pypi-" + "AgEIcHlwaS5vcmc" + rs(r, 80, URLS)


def g_atlassian(r):
    return "ATATT" + "3xFfGF0" + rs(r, 170, URLS) + "=" + rs(r, 8, HEX.upper())


def g_langsmith(r):
    return "lsv2_" + "pt_" + rs(r, 32, HEX) + "_" + rs(r, 10, HEX)


def g_mailchimp(r):
    return rs(r, 32, HEX) + "-us" + str(r.randint(2, 21))


def g_brevo(r):
    return "xkey" + "sib-" + rs(r, 64, HEX) + "-" + rs(r, 16, AN)


def g_grafana(r):
    return "gl" + "sa_" + rs(r, 32) + "_" + rs(r, 8, HEX)


def g_postman(r):
    return "PM" + "AK-" + rs(r, 24, HEX) + "-" + rs(r, 34, HEX)


def g_airtable(r):
    return "pat" + rs(r, 14) + "." + rs(r, 64, HEX)


def g_pinecone(r):
    return "pc" + "sk_" + rs(r, 6) + "_" + rs(r, 63)


def g_circleci(r):
    return "CCI" + "PAT_" + rs(r, 22) + "_" + rs(r, 40, HEX)


def g_hubspot(r):
    return "pat-" + "na1-" + uuid4(r)


def g_launchdarkly(r):
    return "sdk-" + uuid4(r)


def g_gh_fine(r):
    return "github" + "_pat_" + "11" + rs(r, 20, UP + DG) + "_" + rs(r, 59)


def g_jenkins(r):
    return "11" + rs(r, 32, HEX)


def g_age(r):
    return "AGE-SECRET" + "-KEY-1" + rs(r, 58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".upper())


def g_aws_session(r):
    return "IQoJb3JpZ2lu" + "X2VjE" + rs(r, 220, B64) + "=="


# ---------------------------------------------------------------- PEM
def pem_lines(r, head, n):
    raw = base64.b64encode(bytes(r.randrange(256) for _ in range(48 * n))).decode()
    body = head + raw[len(head):]
    lines = [body[i:i + 64] for i in range(0, len(body), 64)][:n]
    return lines


def g_pem(label, head, nmin, nmax):
    def g(r):
        lines = pem_lines(r, head, r.randint(nmin, nmax))
        block = "-----BEGIN " + label + "-----\n" + "\n".join(lines) + "\n-----END " + label + "-----"
        return (block, tuple(lines))
    return g


def g_gcp_sa(r):
    lines = pem_lines(r, "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", r.randint(3, 5))
    proj = r.choice(["hanbit-prod", "analytics-4821", "acme-ml-dev"])
    pk = "-----BEGIN PRIVATE KEY-----\\n" + "\\n".join(lines) + "\\n-----END PRIVATE KEY-----\\n"
    doc = ('{\n  "type": "service_account",\n  "project_id": "' + proj + '",\n  "private_key_id": "'
           + rs(r, 40, HEX) + '",\n  "private_key": "' + pk + '",\n  "client_email": "ci-deployer@'
           + proj + '.iam.gserviceaccount.com"\n}')
    return (doc, tuple(lines))


# ---------------------------------------------------------------- kinds
class K:
    def __init__(self, name, svc, var, gen, src, cat="tok", noun="key", nko="키", hdr="Authorization: Bearer"):
        self.name, self.svc, self.var, self.gen, self.src = name, svc, var, gen, src
        self.cat, self.noun, self.nko, self.hdr = cat, noun, nko, hdr


GL = "gitleaks cmd/generate/config/rules/"
TH = "trufflehog pkg/detectors/"
KINDS = [
    # cloud
    K("aws_access_key_id", "AWS", "AWS_ACCESS_KEY_ID", fixed("AK" + "IA", 16, B32), GL + "aws.go", noun="access key id", nko="액세스 키 ID"),
    K("aws_secret_access_key", "AWS", "AWS_SECRET_ACCESS_KEY", fixed("", 40, B64), GL + "aws.go; " + TH + "aws", noun="secret key", nko="시크릿 키"),
    K("aws_session_token", "AWS STS", "AWS_SESSION_TOKEN", g_aws_session, TH + "aws (session token context)", noun="session token", nko="세션 토큰"),
    K("azure_storage_account_key", "Azure Storage", "AZURE_STORAGE_CONNECTION_STRING", g_azure_storage, TH + "azure_storage", cat="url", noun="connection string", nko="연결 문자열"),
    K("azure_ad_client_secret", "Azure AD", "AZURE_CLIENT_SECRET", g_azure_ad, GL + "azure.go; " + TH + "azure_entra", noun="client secret", nko="클라이언트 시크릿"),
    K("gcp_api_key", "Google Maps", "GOOGLE_API_KEY", fixed("AI" + "za", 35, URLS), GL + "gcp.go"),
    K("gcp_oauth_client_secret", "Google OAuth", "GOOGLE_CLIENT_SECRET", fixed("GOC" + "SPX-", 28, URLS), TH + "googleoauth2", noun="client secret", nko="클라이언트 시크릿"),
    K("alibaba_access_key_id", "Alibaba Cloud", "ALIBABA_CLOUD_ACCESS_KEY_ID", fixed("LT" + "AI", 20, AN), GL + "alibaba.go", noun="AccessKey ID", nko="AccessKey ID"),
    K("tencent_secret_id", "Tencent Cloud", "TENCENTCLOUD_SECRET_ID", fixed("AK" + "ID", 32, AN), "no fixture; vendor docs (AKID + 32)", noun="SecretId", nko="SecretId"),
    K("digitalocean_token", "DigitalOcean", "DIGITALOCEAN_TOKEN", fixed("dop" + "_v1_", 64, HEX), GL + "digitalocean.go", noun="token", nko="토큰"),
    K("heroku_api_key", "Heroku", "HEROKU_API_KEY", fixed("HR" + "KU-AA", 58, URLS), GL + "heroku.go"),
    K("cloudflare_api_token", "Cloudflare", "CLOUDFLARE_API_TOKEN", fixed("", 40, URLS), GL + "cloudflare.go (no prefix, keyword)", noun="API token", nko="API 토큰"),
    K("databricks_token", "Databricks", "DATABRICKS_TOKEN", fixed("da" + "pi", 32, HEX), GL + "databricks.go", noun="token", nko="토큰"),
    K("vault_token", "Vault", "VAULT_TOKEN", fixed("hv" + "s.", 24, AN), GL + "hashicorp_vault.go", noun="token", nko="토큰"),
    K("terraform_cloud_token", "Terraform Cloud", "TFE_TOKEN", g_tfc, GL + "hashicorp.go", noun="team token", nko="팀 토큰"),
    K("pulumi_token", "Pulumi", "PULUMI_ACCESS_TOKEN", fixed("pu" + "l-", 40, HEX), GL + "pulumi.go", noun="access token", nko="액세스 토큰"),
    K("doppler_token", "Doppler", "DOPPLER_TOKEN", fixed("dp" + ".pt.", 43, AN), GL + "doppler.go", noun="token", nko="토큰"),
    K("age_secret_key", "age", "SOPS_AGE_KEY", g_age, GL + "age.go", noun="secret key", nko="비밀키"),
    # VCS / CI / registries
    K("github_pat_classic", "GitHub", "GITHUB_TOKEN", fixed("gh" + "p_", 36), GL + "github.go", noun="PAT", nko="PAT"),
    K("github_pat_fine_grained", "GitHub", "GH_TOKEN", g_gh_fine, GL + "github.go", noun="fine-grained PAT", nko="fine-grained 토큰"),
    K("github_oauth_token", "GitHub", "GITHUB_OAUTH_TOKEN", fixed("gh" + "o_", 36), GL + "github.go", noun="OAuth token", nko="OAuth 토큰"),
    K("github_app_token", "GitHub App", "GH_APP_INSTALLATION_TOKEN", fixed("gh" + "s_", 36), GL + "github.go", noun="installation token", nko="설치 토큰"),
    K("gitlab_pat", "GitLab", "GITLAB_TOKEN", fixed("gl" + "pat-", 20, URLS), GL + "gitlab.go", noun="PAT", nko="PAT"),
    K("gitlab_runner_token", "GitLab Runner", "CI_RUNNER_TOKEN", fixed("gl" + "rt-", 20, URLS), GL + "gitlab.go", noun="runner token", nko="러너 토큰"),
    K("gitlab_trigger_token", "GitLab CI", "TRIGGER_TOKEN", fixed("gl" + "ptt-", 40, HEX), GL + "gitlab.go", noun="trigger token", nko="트리거 토큰"),
    K("bitbucket_app_password", "Bitbucket", "BITBUCKET_APP_PASSWORD", fixed("AT" + "BB", 32, AN), TH + "bitbucketapppassword", noun="app password", nko="앱 비밀번호"),
    K("circleci_token", "CircleCI", "CIRCLECI_TOKEN", fixed("", 40, HEX), TH + "circleci (40 hex, keyword)", noun="API token", nko="API 토큰"),
    K("buildkite_token", "Buildkite", "BUILDKITE_API_TOKEN", fixed("bk" + "ua_", 40, HEX), TH + "buildkite", noun="API token", nko="API 토큰"),
    K("jenkins_api_token", "Jenkins", "JENKINS_API_TOKEN", g_jenkins, "no fixture; Jenkins API token shape (11 + 32 hex), keyword-only", noun="API token", nko="API 토큰"),
    K("sonarqube_token", "SonarQube", "SONAR_TOKEN", fixed("sq" + "u_", 40, HEX), GL + "sonar.go", noun="token", nko="토큰"),
    K("npm_token", "npm", "NPM_TOKEN", fixed("np" + "m_", 36), GL + "npm.go; secretlint-rule-npm", noun="publish token", nko="배포 토큰"),
    K("pypi_token", "PyPI", "TWINE_PASSWORD", g_pypi, GL + "pypi.go", noun="upload token", nko="업로드 토큰"),
    K("rubygems_key", "RubyGems", "GEM_HOST_API_KEY", fixed("ruby" + "gems_", 48, HEX), GL + "rubygems.go"),
    K("nuget_key", "NuGet", "NUGET_API_KEY", fixed("oy" + "2", 43, LO + DG), GL + "nuget.go"),
    K("dockerhub_pat", "Docker Hub", "DOCKERHUB_TOKEN", fixed("dckr" + "_pat_", 27, URLS), TH + "dockerhub", noun="access token", nko="액세스 토큰"),
    K("sourcegraph_token", "Sourcegraph", "SRC_ACCESS_TOKEN", fixed("sg" + "p_", 40, HEX), GL + "sourcegraph.go", noun="access token", nko="액세스 토큰"),
    # chat / webhooks
    K("slack_bot_token", "Slack", "SLACK_BOT_TOKEN", g_slack_bot, GL + "slack.go; secretlint-rule-slack", noun="bot token", nko="봇 토큰"),
    K("slack_user_token", "Slack", "SLACK_USER_TOKEN", g_slack_user, GL + "slack.go", noun="user token", nko="유저 토큰"),
    K("slack_app_token", "Slack Socket Mode", "SLACK_APP_TOKEN", g_slack_app, GL + "slack.go", noun="app-level token", nko="앱 토큰"),
    K("slack_webhook", "Slack", "SLACK_WEBHOOK_URL", g_slack_hook, GL + "slack.go (webhook)", cat="url", noun="webhook URL", nko="웹훅 URL"),
    K("discord_bot_token", "Discord", "DISCORD_TOKEN", g_discord_bot, GL + "discord.go; " + TH + "discordbottoken", noun="bot token", nko="봇 토큰"),
    K("discord_webhook", "Discord", "DISCORD_WEBHOOK_URL", g_discord_hook, TH + "discordwebhook", cat="url", noun="webhook URL", nko="웹훅 URL"),
    K("teams_webhook", "Teams", "TEAMS_WEBHOOK_URL", g_teams_hook, GL + "teams.go", cat="url", noun="incoming webhook", nko="웹훅 URL"),
    K("telegram_bot_token", "Telegram", "TELEGRAM_BOT_TOKEN", g_telegram, GL + "telegram.go", noun="bot token", nko="봇 토큰"),
    # payment
    K("stripe_secret_key", "Stripe", "STRIPE_SECRET_KEY", fixed("sk" + "_live_", 24), GL + "stripe.go; secretlint-rule-stripe", noun="secret key", nko="시크릿 키"),
    K("stripe_restricted_key", "Stripe", "STRIPE_RESTRICTED_KEY", fixed("rk" + "_live_", 99), GL + "stripe.go", noun="restricted key", nko="제한 키"),
    K("stripe_webhook_secret", "Stripe webhook", "STRIPE_WEBHOOK_SECRET", fixed("wh" + "sec_", 32), TH + "stripe (whsec context)", noun="signing secret", nko="서명 시크릿"),
    K("square_access_token", "Square", "SQUARE_ACCESS_TOKEN", fixed("EA" + "AA", 60, URLS), GL + "square.go", noun="access token", nko="액세스 토큰"),
    K("braintree_access_token", "Braintree", "BRAINTREE_ACCESS_TOKEN", g_braintree, TH + "braintreepayments", noun="access token", nko="액세스 토큰"),
    K("paypal_client_secret", "PayPal", "PAYPAL_CLIENT_SECRET", fixed("E", 79, URLS), TH + "paypaloauth (no prefix)", noun="client secret", nko="클라이언트 시크릿"),
    K("toss_payments_secret_key", "토스페이먼츠", "TOSS_SECRET_KEY", fixed("live" + "_sk_", 24, AN), "keyword-only (Korean PG); shape per vendor docs", noun="secret key", nko="시크릿 키"),
    K("razorpay_key_secret", "Razorpay", "RAZORPAY_KEY_SECRET", fixed("", 24, AN), TH + "razorpay (no prefix)", noun="key secret", nko="키 시크릿"),
    K("paystack_secret_key", "Paystack", "PAYSTACK_SECRET_KEY", fixed("sk" + "_live_", 40, HEX), TH + "paystack", noun="secret key", nko="시크릿 키"),
    # AI / LLM
    K("openai_api_key", "OpenAI", "OPENAI_API_KEY", g_openai, GL + "openai.go", noun="API key", nko="API 키"),
    K("anthropic_api_key", "Anthropic", "ANTHROPIC_API_KEY", g_anthropic, GL + "anthropic.go", noun="API key", nko="API 키", hdr="x-api-key:"),
    K("huggingface_token", "Hugging Face", "HF_TOKEN", fixed("h" + "f_", 34, UP + LO), GL + "huggingface.go", noun="token", nko="토큰"),
    K("groq_api_key", "Groq", "GROQ_API_KEY", fixed("gs" + "k_", 52), TH + "groq", noun="API key", nko="API 키"),
    K("perplexity_api_key", "Perplexity", "PPLX_API_KEY", fixed("pp" + "lx-", 48), GL + "perplexity.go", noun="API key", nko="API 키"),
    K("replicate_token", "Replicate", "REPLICATE_API_TOKEN", fixed("r" + "8_", 37), TH + "replicate", noun="API token", nko="API 토큰"),
    K("cohere_api_key", "Cohere", "COHERE_API_KEY", fixed("", 40, AN), GL + "cohere.go (no prefix, keyword)", noun="API key", nko="API 키"),
    K("mistral_api_key", "Mistral", "MISTRAL_API_KEY", fixed("", 32, AN), "no fixture; vendor docs (32 alnum, keyword-only)", noun="API key", nko="API 키"),
    K("deepseek_api_key", "DeepSeek", "DEEPSEEK_API_KEY", fixed("s" + "k-", 32, HEX), TH + "deepseek", noun="API key", nko="API 키"),
    K("xai_api_key", "xAI Grok", "XAI_API_KEY", fixed("xa" + "i-", 80), TH + "xai", noun="API key", nko="API 키"),
    K("langsmith_api_key", "LangSmith", "LANGSMITH_API_KEY", g_langsmith, TH + "langsmith", noun="API key", nko="API 키"),
    K("azure_openai_key", "Azure OpenAI", "AZURE_OPENAI_API_KEY", fixed("", 32, HEX), TH + "azure_openai (32 hex, keyword)", noun="api-key", nko="API 키", hdr="api-key:"),
    K("pinecone_api_key", "Pinecone", "PINECONE_API_KEY", g_pinecone, TH + "pinecone", noun="API key", nko="API 키"),
    K("wandb_api_key", "Weights & Biases", "WANDB_API_KEY", fixed("", 40, HEX), TH + "weightsandbiases (40 hex, keyword)", noun="API key", nko="API 키"),
    # email / messaging SaaS
    K("sendgrid_api_key", "SendGrid", "SENDGRID_API_KEY", lambda r: "S" + "G." + rs(r, 22, URLS) + "." + rs(r, 43, URLS), GL + "sendgrid.go; secretlint-rule-sendgrid", noun="API key", nko="API 키"),
    K("mailgun_api_key", "Mailgun", "MAILGUN_API_KEY", fixed("ke" + "y-", 32, HEX), GL + "mailgun.go", noun="API key", nko="API 키"),
    K("mailchimp_api_key", "Mailchimp", "MAILCHIMP_API_KEY", g_mailchimp, GL + "mailchimp.go", noun="API key", nko="API 키"),
    K("brevo_api_key", "Brevo", "BREVO_API_KEY", g_brevo, GL + "sendinblue.go", noun="API key", nko="API 키"),
    K("postmark_server_token", "Postmark", "POSTMARK_SERVER_TOKEN", uuid4, TH + "postmark (uuid, keyword)", noun="server token", nko="서버 토큰", hdr="X-Postmark-Server-Token:"),
    K("twilio_auth_token", "Twilio", "TWILIO_AUTH_TOKEN", fixed("", 32, HEX), GL + "twilio.go; " + TH + "twilio", noun="auth token", nko="인증 토큰"),
    K("kakao_rest_api_key", "카카오 REST API", "KAKAO_REST_API_KEY", fixed("", 32, HEX), "keyword-only 32 hex (Kakao developers docs)", noun="REST API key", nko="REST API 키", hdr="Authorization: KakaoAK"),
    K("naver_client_secret", "네이버 검색 API", "NAVER_CLIENT_SECRET", fixed("", 10, AN), "keyword-only 10 alnum (Naver developers)", noun="client secret", nko="Client Secret", hdr="X-Naver-Client-Secret:"),
    # SaaS
    K("shopify_access_token", "Shopify", "SHOPIFY_ACCESS_TOKEN", fixed("sh" + "pat_", 32, HEX), GL + "shopify.go", noun="Admin API token", nko="Admin API 토큰", hdr="X-Shopify-Access-Token:"),
    K("linear_api_key", "Linear", "LINEAR_API_KEY", fixed("lin" + "_api_", 40), GL + "linear.go", noun="API key", nko="API 키"),
    K("notion_token", "Notion", "NOTION_TOKEN", fixed("sec" + "ret_", 43), GL + "notion.go", noun="integration token", nko="통합 토큰"),
    K("figma_pat", "Figma", "FIGMA_TOKEN", fixed("fi" + "gd_", 40, URLS), TH + "figmapersonalaccesstoken", noun="personal access token", nko="개인 토큰"),
    K("airtable_pat", "Airtable", "AIRTABLE_TOKEN", g_airtable, GL + "airtable.go; " + TH + "airtablepersonalaccesstoken", noun="PAT", nko="PAT"),
    K("postman_api_key", "Postman", "POSTMAN_API_KEY", g_postman, GL + "postman.go", noun="API key", nko="API 키"),
    K("atlassian_api_token", "Jira Cloud", "JIRA_API_TOKEN", g_atlassian, GL + "atlassian.go", noun="API token", nko="API 토큰"),
    K("okta_api_token", "Okta", "OKTA_API_TOKEN", fixed("0" + "0", 40, URLS), GL + "okta.go", noun="API token", nko="API 토큰", hdr="Authorization: SSWS"),
    K("grafana_sa_token", "Grafana", "GRAFANA_TOKEN", g_grafana, GL + "grafana.go", noun="service account token", nko="서비스 계정 토큰"),
    K("newrelic_user_key", "New Relic", "NEW_RELIC_API_KEY", fixed("NR" + "AK-", 27, UP + DG), GL + "newrelic.go", noun="user key", nko="유저 키", hdr="Api-Key:"),
    K("datadog_api_key", "Datadog", "DD_API_KEY", fixed("", 32, HEX), GL + "datadog.go (keyword)", noun="API key", nko="API 키", hdr="DD-API-KEY:"),
    K("datadog_app_key", "Datadog", "DD_APP_KEY", fixed("", 40, HEX), GL + "datadog.go", noun="application key", nko="앱 키", hdr="DD-APPLICATION-KEY:"),
    K("sentry_auth_token", "Sentry", "SENTRY_AUTH_TOKEN", fixed("snt" + "ryu_", 64, HEX), GL + "sentry.go", noun="auth token", nko="인증 토큰"),
    K("snyk_token", "Snyk", "SNYK_TOKEN", uuid4, GL + "snyk.go (uuid, keyword)", noun="API token", nko="API 토큰"),
    K("algolia_admin_key", "Algolia", "ALGOLIA_ADMIN_KEY", fixed("", 32, HEX), GL + "algolia.go; " + TH + "algoliaadminkey", noun="admin API key", nko="Admin API 키", hdr="X-Algolia-API-Key:"),
    K("mapbox_secret_token", "Mapbox", "MAPBOX_SECRET_TOKEN", g_mapbox, GL + "mapbox.go", noun="secret token", nko="시크릿 토큰"),
    K("fastly_api_token", "Fastly", "FASTLY_API_TOKEN", fixed("", 32, URLS), GL + "fastly.go (keyword)", noun="API token", nko="API 토큰", hdr="Fastly-Key:"),
    K("launchdarkly_sdk_key", "LaunchDarkly", "LD_SDK_KEY", g_launchdarkly, GL + "launchdarkly.go", noun="server SDK key", nko="SDK 키"),
    K("hubspot_private_app_token", "HubSpot", "HUBSPOT_ACCESS_TOKEN", g_hubspot, GL + "hubspot.go", noun="private app token", nko="프라이빗 앱 토큰"),
    K("twitter_bearer_token", "X (Twitter) API", "TWITTER_BEARER_TOKEN", g_twitter, GL + "twitter.go", noun="bearer token", nko="베어러 토큰"),
    K("facebook_app_secret", "Facebook", "FB_APP_SECRET", fixed("", 32, HEX), GL + "facebook.go", noun="app secret", nko="앱 시크릿"),
    K("firebase_fcm_server_key", "FCM", "FCM_SERVER_KEY", g_fcm, "no fixture; FCM legacy server key shape (AAAA..:APA91b..)", noun="server key", nko="서버 키", hdr="Authorization: key="),
    K("supabase_service_role_key", "Supabase", "SUPABASE_SERVICE_ROLE_KEY", g_supabase, GL + "jwt.go (service_role JWT)", noun="service_role key", nko="service_role 키"),
    K("cloudinary_url", "Cloudinary", "CLOUDINARY_URL", g_cloudinary, TH + "cloudinary", cat="url", noun="URL", nko="URL"),
    # tokens / generic
    K("jwt", "admin API", "ADMIN_JWT", g_jwt, GL + "jwt.go; secretlint (jwt)", noun="JWT", nko="JWT"),
    K("generic_secret_hex", "session signing", "SESSION_SECRET", fixed("", 64, HEX), GL + "generic.go; detect-secrets KeywordDetector", noun="secret", nko="시크릿"),
    K("django_secret_key", "Django", "DJANGO_SECRET_KEY", g_django, GL + "generic.go (keyword SECRET_KEY)", noun="SECRET_KEY", nko="SECRET_KEY"),
    K("rails_secret_key_base", "Rails", "SECRET_KEY_BASE", fixed("", 128, HEX), GL + "generic.go; detect-secrets HexHighEntropyString", noun="secret_key_base", nko="secret_key_base"),
    K("laravel_app_key", "Laravel", "APP_KEY", g_laravel, "detect-secrets Base64HighEntropyString / keyword", noun="APP_KEY", nko="APP_KEY"),
    K("k8s_secret_b64_password", "k8s Secret", "DB_PASSWORD_B64", g_k8s_b64, GL + "kubernetes.go", noun="base64 password", nko="base64 비번"),
    # passwords (human style)
    K("db_password", "Postgres app user", "DB_PASSWORD", human_pw, "detect-secrets KeywordDetector (password=)", cat="pw", noun="password", nko="비번"),
    K("mysql_root_password", "MySQL root", "MYSQL_ROOT_PASSWORD", human_pw, "detect-secrets KeywordDetector", cat="pw", noun="password", nko="비밀번호"),
    K("admin_password", "admin console", "ADMIN_PASSWORD", human_pw, "detect-secrets KeywordDetector", cat="pw", noun="password", nko="비번"),
    K("smtp_app_password", "Gmail SMTP", "SMTP_PASSWORD", gmail_app_pw, "keyword-only (Gmail app password 4x4)", cat="pw", noun="app password", nko="앱 비밀번호"),
    K("ssh_password", "bastion SSH", "SSH_PASS", human_pw, "detect-secrets KeywordDetector", cat="pw", noun="password", nko="비번"),
    K("wifi_password", "office Wi-Fi", "WIFI_PSK", human_pw, "keyword-only", cat="pw", noun="password", nko="비번"),
    K("redis_password", "Redis", "REDIS_PASSWORD", fixed("", 32, AN), "detect-secrets KeywordDetector", cat="pw", noun="password", nko="비번"),
    K("keystore_password", "Android keystore", "KEYSTORE_PASSWORD", human_pw, "detect-secrets KeywordDetector", cat="pw", noun="store password", nko="키스토어 비번"),
    # connection strings / urls
    K("postgres_url_password", "Postgres", "DATABASE_URL", _url("postgresql", 5432, ["app", "orders", "analytics"]), "detect-secrets BasicAuthDetector; " + GL + "generic (URI)", cat="url", noun="connection string", nko="접속 URL"),
    K("mysql_url_password", "MySQL", "MYSQL_URL", _url("mysql", 3306, ["shop", "legacy"]), "detect-secrets BasicAuthDetector", cat="url", noun="DSN", nko="DSN"),
    K("mongodb_url_password", "MongoDB Atlas", "MONGODB_URI", g_mongo, TH + "mongodb", cat="url", noun="URI", nko="URI"),
    K("redis_url_password", "Redis", "REDIS_URL", g_redis, TH + "redis", cat="url", noun="URL", nko="URL"),
    K("amqp_url_password", "RabbitMQ", "AMQP_URL", _url("amqps", 5671, ["%2F", "jobs"]), TH + "rabbitmq", cat="url", noun="URL", nko="URL"),
    K("jdbc_password", "billing MySQL", "SPRING_DATASOURCE_URL", g_jdbc, TH + "jdbc", cat="url", noun="JDBC URL", nko="JDBC URL"),
    K("basic_auth_url", "Nexus", "NEXUS_URL", g_basic_url, "detect-secrets BasicAuthDetector; " + GL + "curl.go", cat="url", noun="URL", nko="URL"),
    K("ftp_url_password", "partner FTP", "FTP_URL", g_ftp, "detect-secrets BasicAuthDetector; " + TH + "ftp", cat="url", noun="FTP URL", nko="FTP 주소"),
    # headers, login pairs, PEM
    K("bearer_token_header", "internal API", "", fixed("", 40, URLS), GL + "curl.go / generic (Authorization: Bearer)", cat="hdr_bearer"),
    K("basic_auth_header", "internal API", "", lambda r: base64.b64encode((r.choice(["ci-bot", "svc_report", "admin", "deployer"]) + ":" + human_pw(r)).encode()).decode(), GL + "curl.go (Authorization: Basic)", cat="hdr_basic"),
    K("login_credentials", "", "", human_pw, "detect-secrets KeywordDetector (user/pass)", cat="login"),
    K("private_key_rsa", "RSA", "", g_pem("RSA PRIVATE KEY", "MIIEpAIBAAKCAQEA", 3, 6), GL + "privatekey.go; secretlint-rule-privatekey", cat="pem"),
    K("private_key_openssh", "OpenSSH", "", g_pem("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", 3, 5), GL + "privatekey.go", cat="pem"),
    K("private_key_ec", "EC", "", g_pem("EC PRIVATE KEY", "MHcCAQEEI", 2, 3), GL + "privatekey.go", cat="pem"),
    K("gcp_service_account_key", "GCP", "", g_gcp_sa, GL + "gcp.go; " + TH + "gcp", cat="pem_json"),
]

# values that are never sent as an HTTP auth header: keep them out of header-shaped templates
NO_HEADER = {"aws_access_key_id", "aws_secret_access_key", "aws_session_token", "azure_ad_client_secret",
             "gcp_oauth_client_secret", "alibaba_access_key_id", "tencent_secret_id", "age_secret_key",
             "telegram_bot_token", "stripe_webhook_secret", "paypal_client_secret", "razorpay_key_secret",
             "facebook_app_secret", "generic_secret_hex", "django_secret_key", "rails_secret_key_base",
             "laravel_app_key", "k8s_secret_b64_password", "gcp_api_key", "pypi_token", "npm_token",
             "rubygems_key", "nuget_key", "mapbox_secret_token", "gitlab_runner_token", "gitlab_trigger_token",
             "bitbucket_app_password", "terraform_cloud_token", "pulumi_token", "doppler_token", "launchdarkly_sdk_key"}
for _k in KINDS:
    if _k.name in NO_HEADER:
        _k.cat = "key"


# ================================================================ positive templates
# Placeholders: {v} shown value, {svc}, {VAR}, {var}, {camel}, {Svc}, {slug}, {host},
# {noun}, {nko}, {date}, {file}, {user}, {hdr}. Rendered with str.replace, so code braces stay.

# ---- style 1: multi-line lessons with pasted snippets ('any' = all cats, 'tok' = API-ish only)
MULTI = {
    "dev": {
        "en": [
            ("any", "Lesson: the {svc} integration tests failed with 401 because CI still had the old {noun}. Shell history from the fix:\n  $ export {VAR}={v}\n  $ make test-integration\n  ok   integration   4.21s\nUpdate the Actions secret too, not just the local env."),
            ("any", "Onboarding note for {svc}. Local dev reads a gitignored .env; these are the working values as of {date}:\n```\n# {svc}\n{VAR}={v}\nLOG_LEVEL=debug\n```\nIf you get a 403, ask in #platform before regenerating anything."),
            ("tok", "Debugged the {svc} handshake. The request that finally worked:\nPOST /v1/hooks/verify HTTP/1.1\nHost: api.{host}\n{hv}\nContent-Type: application/json\n\n-> 200 OK {\"status\":\"verified\"}\nThe earlier 400 came from putting the {noun} in the query string."),
            ("any", "docker-compose override that got the {svc} sidecar running locally:\n  services:\n    worker:\n      environment:\n        - {VAR}={v}\n        - QUEUE=default\nDo not copy this into the shared compose file."),
            ("any", "Env matrix after today's cleanup:\n| env | var | value |\n|---|---|---|\n| staging | {VAR} | {v} |\n| prod | {VAR} | (in vault) |\nOnly the staging row is allowed in the wiki."),
            ("tok", "Rotation checklist for {svc} (done {date}):\n1. generated the new {noun} in the dashboard\n2. verified it: curl -s -H \"{hv}\" https://api.{host}/v2/me\n3. pushed it to the secrets store\n4. revoked the old one after 24h"),
            ("any", "The {slug} pod crash-looped in staging because its secret was missing. Recreated it with:\n  kubectl -n staging create secret generic {slug}-creds \\\n    --from-literal={var}='{v}'\n  kubectl -n staging rollout restart deploy/{slug}\nPods were healthy again after ~40s."),
        ],
        "ko": [
            ("any", "{svc} 연동 401 원인 찾음. CI 변수에 예전 {nko_ga} 남아 있었음.\n  $ export {VAR}={v}\n  $ ./gradlew integrationTest\n로컬은 이걸로 통과했고, GitHub Actions secret도 같이 바꿔야 함."),
            ("any", ".env 예시 (로컬 전용, 커밋 금지):\n```\n{VAR}={v}\nTZ=Asia/Seoul\n```\n{svc} 대시보드에서 {date}에 새로 받은 값임. 만료되면 다시 발급할 것."),
            ("tok", "{svc} 호출할 때 헤더 이름 헷갈려서 30분 날림. 실제로 성공한 요청:\nGET /v1/account HTTP/1.1\nHost: api.{host}\n{hv}\n응답 200. 쿼리스트링으로 넘기면 400 떨어짐."),
            ("any", "스테이징 {slug} 파드가 계속 재시작돼서 보니 시크릿이 없었음.\n  kubectl -n staging create secret generic {slug}-env --from-literal={VAR}={v}\n다시 만들고 롤아웃하니까 정상."),
        ],
    },
    "heldout": {
        "en": [
            ("any", "Terraform kept planning a change to the {svc} provider until I pinned the var file. What is in terraform.tfvars right now:\n  region   = \"ap-northeast-2\"\n  {var} = \"{v}\"\n  env      = \"prod\"\nThat file should really come from the vault, tracking it in INFRA-{num}."),
            ("any", "systemd drop-in that fixed the {svc} worker not picking up config after reboot:\n  [Service]\n  Environment=\"{VAR}={v}\"\n  Restart=on-failure\nsudo systemctl daemon-reload && sudo systemctl restart {slug}"),
            ("tok", "Note for whoever touches the {svc} client next. The API wants the {noun} in a header; this is the exchange from the debug log:\n> GET /api/v3/status\n> {hv}\n< HTTP/2 200\n< x-ratelimit-remaining: 598\nQuery-param auth was removed on their side in March."),
            ("any", "GitHub Actions job that finally published to {svc}:\n  - name: publish\n    env:\n      {VAR}: {v}\n    run: ./scripts/publish.sh --non-interactive\nMove that env block to `secrets.` before the repo goes public."),
            ("any", "Repro from my Python shell when the {svc} SDK refused to auth:\n>>> import os\n>>> os.environ[\"{VAR}\"] = \"{v}\"\n>>> client = connect()\n>>> client.ping()\n'pong'\nSo the {noun} is fine; the bug is in how settings.py loads it."),
            ("any", "{svc} setup, for the record:\n- base url: https://api.{host}\n- {noun}: {v}\n- rate limit: 100 rps\n- owner: {user}"),
            ("tok", "Token exchange for the {svc} service account, as captured in mitmproxy:\nPOST /oauth/token -> 200\n{\"access_token\": \"{v}\", \"token_type\": \"bearer\", \"expires_in\": 7776000}\nIt lives 90 days, so the cron that refreshes it can run monthly."),
        ],
        "ko": [
            ("any", "terraform.tfvars 현재 상태 (임시로 로컬에만 있음):\n  {var} = \"{v}\"\n  env = \"prod\"\n{svc} 프로바이더가 이 값 없으면 plan부터 실패함. 나중에 vault로 옮기기."),
            ("any", "재부팅 후 {svc} 워커가 설정을 못 읽던 문제, systemd 드롭인으로 해결:\n  [Service]\n  Environment=\"{VAR}={v}\"\nsudo systemctl daemon-reload 하고 재시작하면 됨."),
            ("tok", "{svc} API 디버그 로그에서 뽑은 요청/응답:\n> POST /v2/jobs\n> {hv}\n< HTTP/1.1 201 Created\n헤더로 안 보내면 401이니 주의."),
            ("any", "{svc} 설정 메모\n- 엔드포인트: https://api.{host}\n- {nko}: {v}\n- 담당: {user}\n- 한도: 초당 100건"),
            ("any", "GitHub Actions에서 {svc} 배포 성공한 설정:\n  env:\n    {VAR}: {v}\n레포 공개 전에 secrets.로 바꿔야 함."),
        ],
    },
}

# ---- style 2: terse one-liners
SHORT = {
    "dev": {
        "en": [
            ("any", "prod {svc} → {v}"),
            ("any", "{svc} {noun} rotated: {v} (old one revoked)"),
            ("tok", "new {svc} token (exp 90d): {v}"),
            ("any", "{VAR}={v}  # staging only"),
            ("any", "{svc}: {v}"),
            ("any", "TODO move {VAR} ({v}) into vault"),
            ("any", "fyi {svc} {noun} is `{v}` until Friday's rotation."),
            ("any", "{v} <- {svc} {noun}, don't lose it"),
        ],
        "ko": [
            ("any", "스테이징 {svc} {nko} 바뀜 → {v}"),
            ("any", "{svc} {nko} 재발급함: {v}"),
            ("any", "{VAR} 값 `{v}` 로 교체 완료"),
            ("any", "운영 {svc} {nko}: {v} (외부 공유 X)"),
            ("any", "{svc} {nko_eun} {v} 임."),
        ],
    },
    "heldout": {
        "en": [
            ("any", "{svc} creds updated - {v}"),
            ("any", "rotated {VAR} today, new value {v}"),
            ("any", "[{svc}] {noun}: {v} / owner: {user}"),
            ("any", "use {v} for {svc} until the vault migration lands"),
            ("any", "heads up: {VAR} is now \"{v}\"."),
            ("any", "{slug} {noun}={v} (dev acct)"),
        ],
        "ko": [
            ("any", "{svc} 새 {nko} {v} 입니다"),
            ("any", "{VAR}: {v} ← 어제 교체"),
            ("any", "{v} 이게 {svc} 운영 {nko}임"),
            ("any", "{svc} {nko} 만료돼서 새로 받음 {v}"),
            ("any", "개발서버 {svc} {nko_eun} ({v}) 쓰면 됨"),
        ],
    },
}

# ---- style 3: code in less common languages; (language, template)
CODE = {
    "dev": [
        ("kotlin", "object {Svc}Config {\n    const val {VAR} = \"{v}\"\n    const val TIMEOUT_MS = 5_000L\n}"),
        ("swift", "enum Secrets {\n    static let {camel} = \"{v}\"\n}"),
        ("scala", "object Settings {\n  val {camel}: String = \"{v}\"\n}"),
        ("elixir", "config :my_app, MyApp.{Svc},\n  api_key: \"{v}\",\n  timeout: 15_000"),
        ("lua", "local {var} = \"{v}\"\nlocal res = http.request{ url = BASE .. \"/v1/items\", headers = { [\"Authorization\"] = \"Bearer \" .. {var} } }"),
        ("dart", "const String {camel} = '{v}';"),
        ("r", "Sys.setenv({VAR} = \"{v}\")"),
        ("perl", "my $api_key = '{v}';\nmy $ua = LWP::UserAgent->new;"),
        ("haskell", "{camel} :: Text\n{camel} = \"{v}\""),
        ("hcl", "provider \"{slug}\" {\n  api_key = \"{v}\"\n}"),
        ("makefile", "{VAR} ?= {v}\n\ndeploy:\n\t{VAR}=$({VAR}) ./scripts/deploy.sh"),
        ("groovy", "pipeline {\n  environment {\n    {VAR} = '{v}'\n  }\n}"),
        ("nix", "environment.variables.{VAR} = \"{v}\";"),
        ("bicep", "param {camel} string = '{v}'"),
        ("yaml", "Parameters:\n  {Svc}Secret:\n    Type: String\n    NoEcho: true\n    Default: '{v}'"),
    ],
    "heldout": [
        ("kotlin", "val client = {Svc}Client.builder()\n    .credential(\"{v}\")\n    .build()"),
        ("swift", "let config = {Svc}Configuration(key: \"{v}\", environment: .production)"),
        ("scala", "val creds = Map(\"{var}\" -> \"{v}\", \"region\" -> \"eu-west-1\")"),
        ("elixir", "@{var} \"{v}\"\ndef headers, do: [{\"x-auth\", @{var}}]"),
        ("lua", "return {\n  {var} = \"{v}\",\n  retries = 3,\n}"),
        ("dart", "final client = {Svc}Client(secret: '{v}');"),
        ("r", "{var} <- \"{v}\"\nres <- httr::GET(url, httr::add_headers(`X-Auth` = {var}))"),
        ("perl", "$ENV{'{VAR}'} ||= '{v}';"),
        ("haskell", "main :: IO ()\nmain = do\n  let cred = \"{v}\" :: ByteString\n  runClient cred"),
        ("hcl", "variable \"{var}\" {\n  type    = string\n  default = \"{v}\"\n}"),
        ("makefile", "export {VAR} := {v}"),
        ("groovy", "withEnv([\"{VAR}={v}\"]) {\n    sh './gradlew publish'\n}"),
        ("nix", "systemd.services.{slug}.environment = {\n  {VAR} = \"{v}\";\n};"),
        ("bicep", "resource kvSecret 'Microsoft.KeyVault/vaults/secrets@2023-02-01' = {\n  name: '${kvName}/{slug}'\n  properties: {\n    value: '{v}'\n  }\n}"),
        ("json", "\"Environment\": {\n  \"Variables\": {\n    \"{VAR}\": \"{v}\"\n  }\n}"),
    ],
}
CODE_PREFACE = {
    "dev": {
        "en": ["Found a hardcoded {svc} {noun} in `{file}` during review:\n```{lang}\n{code}\n```",
               "This {lang} snippet is what made the {svc} call work locally:\n```{lang}\n{code}\n```\nNeeds to go through config before merge."],
        "ko": ["`{file}`에 {svc} {nko_ga} 하드코딩돼 있었음:\n```{lang}\n{code}\n```"],
    },
    "heldout": {
        "en": ["Repro for the {svc} bug (values copied from staging):\n{code}",
               "Left in {file} by the last deploy, rotate before merging:\n\n{code}\n"],
        "ko": ["{svc} 붙일 때 쓴 {lang} 코드 (임시, 나중에 지울 것)\n{code}"],
    },
}

# ---- style 4: Korean-dominant prose
KODOM = {
    "dev": [
        ("any", "오늘 {svc} 연동하다가 알게 된 점: 테스트용이랑 운영용 {nko_ga} 대시보드에서 탭이 따로 있음. 운영 쪽 값은 `{v}` 이고, 이건 절대 프론트에 넣으면 안 됨."),
        ("any", "{svc} 연동 시 주의할 점 정리.\n- 인증은 헤더로 (쿼리 파라미터 X)\n- 현재 스테이징 {nko}: {v}\n- 요청 한도는 분당 600회"),
        ("any", "어제 배포 실패 원인은 {VAR_ga} 비어 있었던 것. 서버에 {VAR}={v} 다시 넣고 재시작하니까 정상 동작함."),
        ("any", "{svc} 계정 정보 공유드립니다. {nko_eun} {v} 이고, 다음 주 중에 교체할 예정이라 그 전까지만 써 주세요."),
        ("any", "신규 입사자 세팅할 때 {svc} {nko_ga} 필요하면 이거 쓰면 됩니다: {v}. 권한은 읽기 전용이에요."),
    ],
    "heldout": [
        ("any", "{svc} 쪽에서 만료 안내 메일이 와서 {nko_reul} 새로 발급받았습니다. 새 값은 {v}이고, 기존 것은 내일 폐기합니다."),
        ("any", "로컬에서 {svc} 붙이려면 환경변수 {VAR}에 {v}를 넣어야 함. 안 넣으면 앱 뜨자마자 죽음."),
        ("any", "정리하면, {svc} 인증 실패는 값 불일치 때문이었음 → 대시보드 값({v})으로 맞추니 해결됨."),
        ("any", "QA팀 요청으로 {svc} 검증용 {nko} 전달드립니다: {v} (외부 공유 금지)"),
        ("any", "배포 스크립트에 {svc} {nko_ga} 박혀 있는 걸 발견했다: {v}. 일단 동작은 하니 그대로 두고, 다음 스프린트에 시크릿 매니저로 옮기기로 함."),
    ],
}

# ---- special kinds
SPECIAL = {
    "hdr_bearer": {
        "dev": [
            ("en", "Internal API calls from the batch host need the service token, otherwise the gateway returns 401:\n  $ curl -s https://api.{host}/internal/v1/reports \\\n      -H 'Authorization: Bearer {v}'\n  {\"items\": [...], \"next\": null}\nThe token is tied to svc-reporting."),
            ("en", "auth hdr for {host}: Bearer {v}"),
            ("ko", "게이트웨이 401 뜨면 토큰부터 확인. 현재 쓰는 헤더:\nAuthorization: Bearer {v}\n만료는 30일."),
            ("ko", "사내 API 호출용 베어러 토큰 → {v}"),
            ("en", "val request = Request.Builder()\n    .url(\"https://api.{host}/v1/orders\")\n    .header(\"Authorization\", \"Bearer {v}\")\n    .build()"),
        ],
        "heldout": [
            ("en", "Captured from the failing job's verbose log:\n> GET /internal/metrics HTTP/1.1\n> Host: {host}\n> Authorization: Bearer {v}\n< HTTP/1.1 200 OK\nSo auth is fine and the 5xx is from the metrics backend."),
            ("en", "bearer for staging gw = {v}"),
            ("ko", "배치 서버에서 사내 API 부를 때 이 헤더 붙이면 됨: `Authorization: Bearer {v}`"),
            ("ko", "http --auth-type=bearer --auth='{v}' GET https://api.{host}/health\n위 명령으로 토큰 살아있는지 확인 가능."),
            ("en", "local res = http.request{\n  url = \"https://api.{host}/jobs\",\n  headers = { authorization = \"Bearer {v}\" },\n}"),
        ],
    },
    "hdr_basic": {
        "dev": [
            ("en", "Legacy partner endpoint only takes basic auth. Working request:\nPOST /edi/upload HTTP/1.1\nHost: partner.{host}\nAuthorization: Basic {v}\nContent-Type: text/csv"),
            ("en", "partner api basic auth hdr → Basic {v}"),
            ("ko", "거래처 API는 basic auth만 됨. 헤더값: Authorization: Basic {v}"),
            ("en", "curl -H \"Authorization: Basic {v}\" https://partner.{host}/status\nreturns 200 from the office network only."),
        ],
        "heldout": [
            ("en", "From the nginx config we inherited:\n  location /upstream/ {\n    proxy_set_header Authorization \"Basic {v}\";\n    proxy_pass http://legacy-erp:8080/;\n  }\nThat header is why the ERP never asks for login."),
            ("ko", "레거시 ERP 프록시 설정에 인증 헤더가 박혀 있음:\nproxy_set_header Authorization \"Basic {v}\";"),
            ("en", "basic creds (b64) for the vendor sandbox: {v}"),
            ("ko", "벤더 샌드박스 호출 시 `Authorization: Basic {v}` 붙여야 200 나옴."),
        ],
    },
    "login": {
        "dev": [
            ("en", "creds: {user} / {v}"),
            ("ko", "스테이징 어드민 계정 {user} / {v}"),
            ("en", "Jenkins login is {user}:{v} (shared account, rotate monthly)."),
            ("en", "Got into the old box with the vendor's account:\n  $ sshpass -p '{v}' ssh {user}@{host}\n  Last login: Tue from 10.0.0.4\nWe should switch it to key auth."),
            ("ko", "테스트 계정 정보\n- ID: {user}\n- PW: {v}\n로그인 후 2FA는 QA 폰으로 받음."),
        ],
        "heldout": [
            ("en", "admin console → {user} / {v}"),
            ("ko", "관리자 페이지 계정: 아이디 {user}, 비번 {v}"),
            ("en", "| env | user | password |\n|---|---|---|\n| staging | {user} | {v} |\n| prod | (ask ops) | - |"),
            ("en", "mysql -h {host} -u {user} -p'{v}' -e 'show processlist'\nran this to find the stuck migration."),
            ("ko", "라우터 관리 화면은 {user}/{v} 로 들어가면 됨. 공장 초기화하면 바뀌니 주의."),
        ],
    },
    "pem": {
        "dev": [
            ("en", "Deploy key for the {host} runner (read-only). Put it in ~/.ssh/deploy_key and chmod 600:\n{v}\nThe public half is already registered on the repo."),
            ("ko", "배포 서버 접속용 키. ~/.ssh/deploy_key 에 저장하고 chmod 600 할 것:\n{v}"),
            ("en", "resource \"tls_cert\" \"legacy\" {\n  private_key = <<EOT\n{v}\nEOT\n}"),
            ("en", "val signingKey = \"\"\"\n{v}\n\"\"\".trimIndent()"),
        ],
        "heldout": [
            ("en", "The old cron host still had this key inline in its bootstrap script, which is how it talked to the git mirror:\ncat > /root/.ssh/id_mirror <<'KEY'\n{v}\nKEY"),
            ("ko", "예전 서버 부트스트랩 스크립트에 개인키가 그대로 들어 있었음. 교체 필요:\n{v}"),
            ("en", "@signing_key ~S\"\"\"\n{v}\n\"\"\""),
            ("en", "pkgs.writeText \"tls.key\" ''\n{v}\n''"),
        ],
    },
    "pem_json": {
        "dev": [
            ("en", "CI uploads to GCS with this service account; the JSON got pasted into the wiki by mistake:\n{v}\nRotate the key in IAM, then delete the wiki revision."),
            ("ko", "GCS 업로드용 서비스 계정 키 (위키에 잘못 붙어 있던 것):\n{v}"),
        ],
        "heldout": [
            ("en", "Contents of gcp-sa.json that the Makefile expects next to it:\n{v}"),
            ("ko", "로컬에서 BigQuery 붙일 때 쓴 키 파일 내용:\n{v}\nGOOGLE_APPLICATION_CREDENTIALS로 경로 지정하면 됨."),
        ],
    },
}


# ================================================================ negatives
# (category, lang, template). Fillers: {sha} {short} {uuid} {sha256} {integ} {digest} {ver}
# {ph} {svc} {VAR} {var} {camel} {Svc} {slug} {host} {file} {sshpub} {b64data} {kmsarn} {gpgid} {num} {date}
NEG = {
    "dev": [
        ("placeholder", "en", "Lesson: never commit the real {svc} key. The .env.example now reads:\n```\n{VAR}={ph}\nLOG_LEVEL=info\n```\nand the app fails fast at boot if the value is still the placeholder."),
        ("placeholder", "en", "{VAR}={ph}  # fill in locally, do not commit"),
        ("placeholder", "ko", ".env.example에는 `{VAR}={ph}` 로만 두고 실제 값은 1Password에서 복사해서 쓰세요."),
        ("placeholder", "en", "curl -H \"Authorization: Bearer $TOKEN\" https://api.{host}/v1/me  -- export TOKEN first, the docs example uses {ph}."),
        ("placeholder", "ko", "운영 DB 비번은 위키에 `********` 로 마스킹돼 있음. 실제 값은 Vault `secret/prod/db` 경로에서 조회."),
        ("placeholder", "en", "docker run -e {VAR}=${{VAR}} -p 8080:8080 {slug}:latest  -- the var is injected by the CI runner."),
        ("git_sha", "en", "Reverted {sha} (the {svc} client bump) because it broke retries; cherry-picked the fix from {short} instead."),
        ("git_sha", "ko", "{svc} 타임아웃 버그는 커밋 {sha} 에서 들어옴. `git bisect`로 찾았고 {short} 에서 고침."),
        ("uuid", "en", "The {svc} 500s all share request id {uuid}; their support confirmed an outage on {date}."),
        ("uuid", "ko", "장애 문의할 때 요청 ID {uuid} 같이 보내면 {svc} 쪽에서 로그 바로 찾아줌."),
        ("hash", "en", "Release tarball checksum (sha256): {sha256}\nVerify with `sha256sum -c` before installing on the bastion."),
        ("hash", "ko", "빌드 산출물 해시가 {sha256} 로 바뀌어서 캐시 미스 났음. lock 파일 변경이 원인."),
        ("npm_integrity", "en", "package-lock had two entries for the same version with different integrity, keeping:\n  \"integrity\": \"{integ}\"\nand deleting node_modules fixed the EINTEGRITY error."),
        ("docker_digest", "en", "Pin the base image by digest so rebuilds are reproducible:\nFROM python:3.11-slim@{digest}"),
        ("docker_digest", "ko", "베이스 이미지는 태그 말고 다이제스트로 고정: `{digest}`"),
        ("version", "en", "Upgraded {slug} from {ver} to {ver2}; the {svc} SDK needs >= {ver2} for the new auth flow."),
        ("version", "ko", "{svc} SDK {ver}에서 {ver2}로 올리니까 토큰 갱신 로직이 바뀌어서 테스트 3개 깨짐."),
        ("public_key", "en", "Added the new CI runner's public key to authorized_keys on {host}:\n{sshpub}\nPrivate half never leaves the runner."),
        ("public_key", "ko", "배포 서버 authorized_keys에 추가한 공개키 (공개해도 되는 값):\n{sshpub}"),
        ("key_id", "en", "S3 objects are encrypted with the KMS key {kmsarn}; the role only needs kms:Decrypt on that ARN."),
        ("key_id", "en", "Release tags are signed with GPG key {gpgid}; import it from the keyserver before `git tag -v`."),
        ("code_handles_secret", "en", "Kotlin config now reads the key from the environment and never logs it:\n```kotlin\nval {camel} = System.getenv(\"{VAR}\") ?: error(\"{VAR} not set\")\n```"),
        ("code_handles_secret", "en", "```elixir\nconfig :my_app, MyApp.{Svc},\n  api_key: System.fetch_env!(\"{VAR}\")\n```\nruntime.exs, so the release does not bake the value in."),
        ("code_handles_secret", "en", "```hcl\nresource \"aws_db_instance\" \"main\" {\n  username = \"app\"\n  password = var.db_password\n}\n```\ndb_password is marked sensitive and comes from TF_VAR_db_password in CI."),
        ("code_handles_secret", "en", "```groovy\nwithCredentials([string(credentialsId: '{slug}-token', variable: 'TOKEN')]) {\n  sh 'curl -fsS -H \"Authorization: Bearer $TOKEN\" https://api.{host}/deploy'\n}\n```"),
        ("code_handles_secret", "ko", "Swift 쪽은 키를 Keychain에서 읽도록 바꿈:\n```swift\nlet token = try keychain.get(\"{var}\")\n```\n앱 번들에 문자열로 넣지 말 것."),
        ("code_handles_secret", "en", "```bicep\n@secure()\nparam adminPassword string\n```\nThe value is passed from Key Vault via a parameter file reference."),
        ("code_handles_secret", "en", "```r\ntoken <- Sys.getenv(\"{VAR}\")\nif (token == \"\") stop(\"set {VAR} in ~/.Renviron\")\n```"),
        ("prose", "en", "Rotating the {svc} key every 90 days is now automated; the lambda writes the new value straight to Secrets Manager and nobody sees it."),
        ("prose", "ko", "토큰은 절대 로그에 찍지 말 것. 디버그할 때도 앞 4자리만 마스킹해서 출력하도록 유틸 만들어 둠."),
        ("prose", "ko", "{svc} 비밀번호 정책이 바뀌어서 이제 12자 이상 + 특수문자 필수. 기존 계정은 다음 로그인 때 변경 요구됨."),
        ("prose", "en", "If a password ends up in a commit, rotate it first and only then rewrite history; scrubbing alone is not enough."),
        ("base64_data", "en", "The webhook payload is base64 JSON, e.g. {b64data} decodes to a plain order event, nothing sensitive."),
        ("long_identifier", "en", "Test `{Svc}ClientRetryPolicyIntegrationTest.shouldBackOffExponentiallyOnRateLimit` is flaky on ARM runners; quarantined in {file}."),
        ("long_identifier", "ko", "설정 파일 위치는 {file} 이고, {svc} 엔드포인트는 https://api.{host}/v2/ 로 바뀜."),
        ("url", "en", "{svc} status page: https://status.{host}/incidents/{short} and API base https://api.{host}/v1/"),
        ("placeholder", "ko", "Makefile 변수는 `{VAR} ?= $(shell cat .secrets/{var})` 로 바꿔서 파일에서 읽게 함."),
        ("placeholder", "en", "prod {svc} → stored in vault at kv/prod/{slug} (no copy anywhere else)"),
        ("placeholder", "en", "Shell history from the {svc} rotation, note the value never touches the terminal:\n  $ export {VAR}=\"$(vault kv get -field=value kv/prod/{slug})\"\n  $ ./scripts/smoke.sh\n  smoke: 14 passed\nThe smoke script only prints the last 4 chars."),
        ("placeholder", "en", "Request shape for the {svc} API (from their docs, token elided):\nGET /v2/accounts HTTP/1.1\nHost: api.{host}\nAuthorization: Bearer <token>\nAccept: application/json"),
        ("placeholder", "en", "DD key rotated: new one is in SSM at /prod/{slug}/dd_api_key, old key disabled {date}."),
        ("placeholder", "en", "new PAT (exp 90d) saved as `gh-ci-{num}` in the org secrets, nothing to paste here"),
        ("version", "en", "prod {slug} → {ver2} (was {ver}), rollback tag v{ver}"),
        ("prose", "en", "Lesson from the {svc} incident on {date}: the key leaked through a debug log line, so we now wrap secrets in a type whose toString() prints only asterisks."),
        ("code_handles_secret", "en", "```kotlin\nval apiKey: String by lazy { secretsClient.getSecretValue(\"{slug}/api-key\") }\n```\nFetched once per process, never written to disk."),
        ("code_handles_secret", "en", "```makefile\ndeploy:\n\t@test -n \"$({VAR})\" || (echo \"{VAR} is not set\"; exit 1)\n\t./scripts/deploy.sh\n```"),
        ("key_id", "ko", "CloudFront 서명용 키페어 ID는 {kpid} (ID라서 공개돼도 무방), 개인키는 Secrets Manager에 있음."),
    ],
    "heldout": [
        ("placeholder", "en", "The README now shows\n  export {VAR}=\"{ph}\"\ninstead of a real value, and the setup script refuses to run while it still says that."),
        ("placeholder", "en", "{svc} key: see 1Password item \"{svc} prod\" (not pasting it here)"),
        ("placeholder", "ko", "{VAR} 는 `{ph}` 그대로 두면 앱이 기동 시 에러 냄. 실제 값은 팀 볼트 참고."),
        ("placeholder", "en", "password: changeme  <- default in the helm chart values, overridden by the sealed secret in every real env"),
        ("placeholder", "ko", "도커 실행 시 `-e {VAR}=${{VAR}}` 로 넘기면 CI에 등록된 값이 들어감."),
        ("placeholder", "en", "apiKey = os.environ[\"{VAR}\"]  # set by the k8s secret, never in code"),
        ("git_sha", "en", "Bisected the {svc} regression to {sha}; reverting it and re-applying {short} minus the retry change."),
        ("git_sha", "ko", "핫픽스 브랜치는 {sha} 기준으로 땄고, 머지 커밋은 {short}."),
        ("uuid", "en", "trace_id={uuid} span=db.query duration=812ms -- the slow query is the {slug} report."),
        ("uuid", "ko", "{svc} 고객센터 티켓 번호는 {uuid}, 답변 오면 공유하겠음."),
        ("hash", "en", "Artifact digest changed to {sha256} after the toolchain bump, expected."),
        ("hash", "ko", "다운로드한 바이너리 sha256이 {sha256} 로 공식 값과 일치하는 것 확인함."),
        ("npm_integrity", "ko", "lock 파일 integrity 값 {integ} 이 레지스트리랑 달라서 EINTEGRITY 났었음. 캐시 지우고 해결."),
        ("docker_digest", "en", "image: ghcr.io/acme/{slug}@{digest}\n(pinned after the tag was re-pushed upstream)"),
        ("docker_digest", "ko", "롤백은 이전 다이제스트 {digest} 로 재배포해서 처리함."),
        ("version", "en", "{svc} client {ver} -> {ver2}: auth header name changed, otherwise drop-in."),
        ("version", "ko", "런타임을 {ver2}로 올렸더니 {slug} 빌드가 2분 빨라짐 (이전 {ver})."),
        ("public_key", "en", "Webhook signatures are verified against this public key from their docs:\n-----BEGIN PUBLIC KEY-----\n{pubbody}\n-----END PUBLIC KEY-----"),
        ("public_key", "ko", "새 노트북 공개키 등록함:\n{sshpub}"),
        ("key_id", "en", "The JWKS has two entries, kid `{short}` (active) and the old one; rotation is handled by the IdP."),
        ("key_id", "ko", "KMS 키 ARN: {kmsarn} — 정책에 이 ARN만 허용하도록 제한함."),
        ("code_handles_secret", "en", "```scala\nval token = sys.env.getOrElse(\"{VAR}\", throw new IllegalStateException(\"missing {VAR}\"))\n```"),
        ("code_handles_secret", "en", "```lua\nlocal token = os.getenv(\"{VAR}\")\nassert(token, \"{VAR} is required\")\n```"),
        ("code_handles_secret", "en", "```nix\nservices.{slug}.passwordFile = config.sops.secrets.\"{slug}/password\".path;\n```\nsops-nix decrypts it at activation time."),
        ("code_handles_secret", "en", "```yaml\nMasterUserPassword: '{{resolve:secretsmanager:prod/{slug}:SecretString:password}}'\n```\nCloudFormation resolves it at deploy time."),
        ("code_handles_secret", "ko", "Dart는 빌드 시 주입: `const key = String.fromEnvironment('{VAR}');` 그리고 --dart-define으로 넘김."),
        ("code_handles_secret", "en", "```perl\nmy $token = $ENV{{VAR}} or die \"{VAR} missing\\n\";\n```"),
        ("code_handles_secret", "en", "```haskell\nmtoken <- lookupEnv \"{VAR}\"\ncase mtoken of\n  Nothing -> die \"{VAR} not set\"\n  Just t  -> runWith t\n```"),
        ("prose", "en", "Reminder: the {svc} token in CI is scoped to read-only and expires after 30 days; renewals go through the platform team."),
        ("prose", "ko", "API 키 노출 사고 대응 순서: 1) 즉시 폐기 2) 새 키 발급 3) 사용처 교체 4) 로그 확인. 순서 바꾸지 말 것."),
        ("prose", "ko", "비밀번호를 슬랙 DM으로 보내지 말고 1Password 공유 링크 쓰기로 팀 합의함."),
        ("prose", "en", "Lesson: the secret scanner flagged our test fixtures; we replaced them with obviously fake values like `test-key-000`."),
        ("base64_data", "ko", "쿠키 값 {b64data} 은 그냥 base64로 인코딩한 UI 설정 JSON임 (민감 정보 아님)."),
        ("long_identifier", "en", "Renamed `{Svc}CredentialRefreshScheduler` to `{Svc}TokenRenewalJob`; config key moved to {file}."),
        ("long_identifier", "ko", "로그 경로 /var/log/{slug}/{slug}-worker-{num}.log 에서 재현됨."),
        ("url", "ko", "{svc} 문서: https://docs.{host}/api/authentication#rotating-keys 참고."),
        ("placeholder", "en", "creds: see vault kv/{slug}/staging (user and pass both in there)"),
        ("placeholder", "ko", "스테이징 DB 비번 바뀜 → 새 값은 Vault에 올려둠 (secret/staging/db)"),
        ("placeholder", "en", "What the working compose file looks like now (values come from the shell):\n  environment:\n    {VAR}: ${{VAR}}\n    LOG_LEVEL: info\nand `.env` is in .gitignore."),
        ("placeholder", "en", "Captured exchange with the token masked by the proxy:\n> POST /v1/charges\n> Authorization: Bearer ****************\n< HTTP/1.1 402 Payment Required\nSo the failure is card-side, not auth."),
        ("placeholder", "en", "stg db pw changed, new one in 1Password (\"{slug} staging\")"),
        ("placeholder", "en", "{svc} sandbox creds: username `test`, password is whatever you set on first login"),
        ("version", "en", "{slug} pinned to {ver}; {ver2} changes the token refresh interval"),
        ("prose", "en", "Note to self: the {svc} API returns 401 for an expired key and 403 for a revoked one, which is why the alert fired with the wrong runbook on {date}."),
        ("code_handles_secret", "en", "```swift\nguard let key = ProcessInfo.processInfo.environment[\"{VAR}\"] else {\n    fatalError(\"{VAR} missing\")\n}\n```"),
        ("code_handles_secret", "en", "```hcl\ndata \"aws_secretsmanager_secret_version\" \"{var}\" {\n  secret_id = \"prod/{slug}\"\n}\n```\nThe provider reads it at plan time; the state file is encrypted."),
        ("key_id", "en", "AWS account id for prod is {acct}; the deploy role ARN is arn:aws:iam::{acct}:role/{slug}-deployer."),
    ],
}
PLACEHOLDERS = ["<YOUR_TOKEN>", "<your-api-key>", "xxxxxxxxxxxxxxxxxxxx", "changeme", "${API_KEY}", "REPLACE_ME",
                "your_key_here", "****", "<redacted>", "sk_test_XXXXXXXXXXXX", "TODO", "{{ secrets.API_KEY }}",
                "dummy", "example-token", "<PASTE_HERE>"]


# ================================================================ builder
HOSTS = ["example.com", "hanbit.dev", "acme-internal.net", "corp.example.kr", "shopmall.co.kr", "payments.example.org"]
USERS = ["deploy", "admin", "qa_tester", "jkim", "svc_batch", "ops", "hyunwoo.lee", "minji"]
FILES = {"kotlin": "app/src/main/kotlin/config/Keys.kt", "swift": "Sources/App/Secrets.swift",
         "scala": "src/main/scala/conf/Settings.scala", "elixir": "config/prod.exs", "lua": "conf/init.lua",
         "dart": "lib/env.dart", "r": "scripts/pull_data.R", "perl": "bin/sync.pl", "haskell": "src/Config.hs",
         "hcl": "infra/main.tf", "makefile": "Makefile", "groovy": "Jenkinsfile", "nix": "hosts/web/configuration.nix",
         "bicep": "infra/main.bicep", "yaml": "cfn/stack.yaml", "json": "template.json"}
NEG_FILES = ["config/settings/production.py", "infra/modules/rds/variables.tf", "src/main/resources/application.yml",
             "deploy/helm/values-staging.yaml", "lib/clients/payment_gateway.ex", "app/build.gradle.kts"]


def render(t, d):
    for k, val in d.items():
        t = t.replace("{" + k + "}", val)
    return t


def _names(var):
    parts = [p for p in var.lower().split("_") if p]
    camel = parts[0] + "".join(p.capitalize() for p in parts[1:]) if parts else "token"
    return var.lower(), camel


def _svc_pascal(svc):
    s = "".join(ch for ch in svc.title() if ch.isascii() and ch.isalnum())
    return s or "Vendor"


def _slug(svc):
    s = "".join(ch if (ch.isascii() and ch.isalnum()) else "-" for ch in svc.lower()).strip("-")
    while "--" in s:
        s = s.replace("--", "-")
    return s or "vendor"


def _final_consonant(word):
    w = word.strip().rstrip(")").rstrip()
    if not w:
        return False
    ch = w[-1]
    if "\uac00" <= ch <= "\ud7a3":
        return (ord(ch) - 0xAC00) % 28 != 0
    if w.upper().endswith("JWT"):
        return False
    return ch.upper() in "LMNRT0136783"


def josa(word, pair):
    a, b = pair.split("/")
    return word + (a if _final_consonant(word) else b)


def _ctx(r, k, shown):
    var, camel = _names(k.var or "API_TOKEN")
    hv = k.hdr + ("" if k.hdr.endswith("=") else " ") + shown
    return {"v": shown, "hv": hv, "svc": k.svc, "VAR": k.var, "var": var, "camel": camel,
            "Svc": _svc_pascal(k.svc), "slug": _slug(k.svc), "host": r.choice(HOSTS), "noun": k.noun,
            "nko": k.nko, "date": "2025-%02d-%02d" % (r.randint(1, 12), r.randint(1, 28)),
            "user": r.choice(USERS), "num": str(r.randint(100, 9999)),
            "nko_ga": josa(k.nko, "이/가"), "nko_eun": josa(k.nko, "은/는"), "nko_reul": josa(k.nko, "을/를"),
            "VAR_ga": josa(k.var, "이/가")}


def _pick(r, pool, cat):
    ok = [t for (c, t) in pool if c == "any" or c == cat]
    return r.choice(ok)


def _gen(r, k):
    out = k.gen(r)
    if isinstance(out, tuple):
        return out
    return out, (out,)


def _positives(part, r):
    rows = []
    for k in KINDS:
        if k.cat in SPECIAL:
            pool = SPECIAL[k.cat][part]
            idx = list(range(len(pool)))
            r.shuffle(idx)
            n = 6 if k.cat != "pem_json" else 5
            for i in range(n):
                lang, t = pool[idx[i % len(idx)]]
                shown, secs = _gen(r, k)
                d = _ctx(r, k, shown)
                rows.append((render(t, d), k.name, secs, lang))
            continue
        slots = [("multi", "en"), ("multi", "ko" if r.random() < 0.2 else "en"), ("short", "en"),
                 ("short", "ko" if r.random() < 0.6 else "en"), ("code", "ko" if r.random() < 0.25 else "en"),
                 ("kodom", "ko")]
        for style, lang in slots:
            shown, secs = _gen(r, k)
            d = _ctx(r, k, shown)
            if style == "multi":
                t = _pick(r, MULTI[part][lang], k.cat)
            elif style == "short":
                t = _pick(r, SHORT[part][lang], k.cat)
            elif style == "kodom":
                t = _pick(r, KODOM[part], k.cat)
            else:
                clang, code = r.choice(CODE[part])
                d["lang"] = clang
                d["file"] = FILES[clang]
                d["code"] = render(code, d)
                t = r.choice(CODE_PREFACE[part][lang])
                d = {k2: d[k2] for k2 in ["code", "file", "lang", "svc", "noun", "nko", "nko_ga"]}
            rows.append((render(t, d), k.name, secs, lang))
    return rows


def _neg_fill(r):
    svc = r.choice(["Stripe", "Datadog", "Sentry", "Twilio", "카카오페이", "Algolia", "Slack", "GitHub", "Toss", "Mailgun"])
    var = r.choice(["STRIPE_SECRET_KEY", "DD_API_KEY", "SENTRY_AUTH_TOKEN", "API_TOKEN", "DB_PASSWORD", "KAKAO_REST_API_KEY"])
    low, camel = _names(var)
    sha = rs(r, 40, HEX)
    pubraw = base64.b64encode(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00 " + bytes(r.randrange(256) for _ in range(32))).decode()
    pubbody = base64.b64encode(bytes(r.randrange(256) for _ in range(91))).decode()
    pubbody = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + pubbody[36:]
    pubbody = pubbody[:64] + "\n" + pubbody[64:]
    acct = "".join(r.choice(DG) for _ in range(12))
    evt = json.dumps({"event": "order.paid", "order_id": r.randint(10000, 99999), "currency": "KRW"}, separators=(",", ":"))
    mj = r.randint(1, 9)
    return {
        "svc": svc, "VAR": var, "var": low, "camel": camel, "Svc": _svc_pascal(svc), "slug": r.choice(["billing-api", "order-worker", "report-svc", "gateway"]),
        "host": r.choice(HOSTS), "file": r.choice(NEG_FILES), "ph": r.choice(PLACEHOLDERS),
        "sha": sha, "short": rs(r, 7, HEX), "uuid": uuid4(r), "sha256": rs(r, 64, HEX),
        "integ": "sha512-" + base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode(),
        "digest": "sha256:" + rs(r, 64, HEX), "ver": "%d.%d.%d" % (mj, r.randint(0, 20), r.randint(0, 30)),
        "ver2": "%d.%d.%d" % (mj + 1, r.randint(0, 5), r.randint(0, 9)),
        "sshpub": "ssh-ed25519 " + pubraw + " " + r.choice(USERS) + "@laptop", "pubbody": pubbody,
        "b64data": base64.b64encode(evt.encode()).decode(),
        "kmsarn": "arn:aws:kms:ap-northeast-2:" + acct + ":key/" + uuid4(r), "acct": acct,
        "gpgid": rs(r, 16, "0123456789ABCDEF"), "kpid": "K" + rs(r, 13, UP + DG),
        "num": str(r.randint(2, 40)), "date": "2025-%02d-%02d" % (r.randint(1, 12), r.randint(1, 28)),
    }


def _negatives(part, r, per_template=12):
    rows = []
    for cat, lang, t in NEG[part]:
        for _ in range(per_template):
            rows.append((render(t, _neg_fill(r)), "neg:" + cat, (), lang))
    return rows


SEEDS = {"dev": 7707, "heldout": 8808}


def corpus(part):
    if part not in SEEDS:
        raise ValueError(part)
    r = random.Random(SEEDS[part])
    rows = _positives(part, r) + _negatives(part, r)
    seen, out = set(), []
    for row in rows:
        if row[0] in seen:
            continue
        seen.add(row[0])
        out.append(row)
    return out


def _all_templates(part):
    ts = set()
    for lang in MULTI[part]:
        ts |= {t for _, t in MULTI[part][lang]}
    for lang in SHORT[part]:
        ts |= {t for _, t in SHORT[part][lang]}
    ts |= {t for _, t in CODE[part]}
    for lang in CODE_PREFACE[part]:
        ts |= set(CODE_PREFACE[part][lang])
    ts |= {t for _, t in KODOM[part]}
    for c in SPECIAL:
        ts |= {t for _, t in SPECIAL[c][part]}
    ts |= {t for _, _, t in NEG[part]}
    return ts


def _check():
    assert not (_all_templates("dev") & _all_templates("heldout")), "shared template"
    for part in SEEDS:
        for text, kind, secrets, lang in corpus(part):
            assert "[REDACTED]" not in text
            assert lang in ("en", "ko")
            for s in secrets:
                assert s and s in text, (kind, s, text)
            if kind.startswith("neg:"):
                assert secrets == ()
            else:
                assert secrets


if __name__ == "__main__":
    _check()
    for part in ("dev", "heldout"):
        rows = corpus(part)
        pos = [x for x in rows if not x[1].startswith("neg:")]
        neg = [x for x in rows if x[1].startswith("neg:")]
        kinds = {x[1] for x in pos}
        ko = sum(1 for x in rows if x[3] == "ko")
        print("%s: positives=%d negatives=%d kinds=%d ko_share=%.2f" % (part, len(pos), len(neg), len(kinds), ko / len(rows)))
        rr = random.Random(1)
        for label, grp in (("positive", pos), ("negative", neg)):
            for x in rr.sample(grp, 3):
                print("--- %s [%s/%s] secrets=%r\n%s" % (label, x[1], x[3], x[2], x[0]))
        print()
