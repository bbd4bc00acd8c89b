"""Independent secret-redaction test corpus, writer B.

Theme: configuration / operations text pasted into a lesson (.env, YAML, JSON, TOML,
INI, properties, XML, HCL, Dockerfile, shell / PowerShell / cmd, systemd, nginx, CLI
commands, connection strings, credential files).

Every value is generated at run time from a seeded random.Random; prefixes are split
so that this source file itself holds no credential-shaped literal.

corpus(part) -> list of (text, kind, secrets, lang)

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

SEEDS = {"dev": 3303, "heldout": 4404}

A = string.ascii_letters + string.digits
UP = string.ascii_uppercase + string.digits
LO = string.ascii_lowercase + string.digits
HX = "0123456789abcdef"
B64 = A + "+/"
URLS = A + "-_"
LET = string.ascii_letters
BECH = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
PWCH = A + "!#%^*-_.@+"


def s(r, alpha, n):
    return "".join(r.choice(alpha) for _ in range(n))


def num(r, n):
    return str(r.randint(1, 9)) + s(r, string.digits, n - 1)


def uuid(r):
    h = s(r, HX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:]}"


def b64url(raw):
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


WORDS = ["harbor", "maple", "orbit", "falcon", "copper", "violet", "tundra", "lantern",
         "pepper", "glacier", "walnut", "canyon", "ember", "sparrow", "quartz", "meadow"]


def password(r, urlsafe=False):
    mode = r.random()
    if mode < 0.45:
        pw = s(r, A, r.randint(14, 24))
        # ensure mixed
        pw = pw[:3] + r.choice(string.digits) + pw[4:]
        if not urlsafe:
            pw += r.choice("!#%^*-_.@+")
        return pw
    if mode < 0.75:
        w1, w2 = r.sample(WORDS, 2)
        sep = r.choice("-_.") if urlsafe else r.choice("-_.!#@")
        return w1.capitalize() + sep + w2.capitalize() + str(r.randint(10, 9999)) + (
            "" if urlsafe else r.choice(["!", "#", "$", "*", ""]))
    pw = s(r, A + ("-_." if urlsafe else "!#%^*-_.+"), r.randint(16, 28))
    return "P" + pw if not pw[0].isalnum() else pw


def user(r):
    return r.choice(["app", "svc_api", "deploy", "admin", "etl_writer", "backend", "ci-bot",
                     "orders_rw", "reporting", "root", "webapp", "analytics"])


def host(r, kind="db"):
    pools = {
        "db": ["db.internal", "pg-prod-01.corp.lan", "10.0.12.34", "orders-db.cluster-c8x.ap-northeast-2.rds.amazonaws.com",
               "mysql.staging.svc.cluster.local", "postgres", "db", "127.0.0.1"],
        "mongo": ["cluster0.ab12c.mongodb.net", "prod-shard.x7kq2.mongodb.net", "analytics.zz91p.mongodb.net"],
        "redis": ["redis", "cache.internal", "redis-master.prod.svc", "10.1.4.22"],
        "mq": ["rabbitmq", "mq.internal", "broker-01.prod.lan", "b-1234.mq.ap-northeast-2.amazonaws.com"],
        "mail": ["smtp.sendgrid.net", "smtp.gmail.com", "email-smtp.ap-northeast-2.amazonaws.com", "mail.corp.example"],
        "ftp": ["ftp.partner-a.com", "files.vendor.net", "192.168.10.5"],
        "ldap": ["ldap.corp.example", "ad01.corp.lan", "openldap.infra.svc"],
        "web": ["nexus.corp.example", "registry.internal.dev", "artifacts.example.org", "git.corp.example"],
    }
    return r.choice(pools[kind])


def dbname(r):
    return r.choice(["orders", "app_prod", "billing", "users", "analytics", "shop", "core", "inventory"])


# ---------------------------------------------------------------------------
# Value kinds: generator returns (value, secrets); rendered by format renderers.
# (kind, generator, [env var names], service label, source fixture)
# ---------------------------------------------------------------------------

def g_simple(fn):
    def g(r):
        v = fn(r)
        return v, (v,)
    return g


def g_uri_pg(r):
    pw = password(r, True)
    u = user(r)
    return f"{r.choice(['postgres', 'postgresql'])}://{u}:{pw}@{host(r)}:5432/{dbname(r)}" + r.choice(["", "?sslmode=require"]), (pw,)


def g_uri_mysql(r):
    pw = password(r, True)
    return f"{r.choice(['mysql', 'mysql2', 'mysql+pymysql'])}://{user(r)}:{pw}@{host(r)}:3306/{dbname(r)}", (pw,)


def g_uri_mongo(r):
    pw = password(r, True)
    return f"mongodb+srv://{user(r)}:{pw}@{host(r, 'mongo')}/{dbname(r)}?retryWrites=true&w=majority", (pw,)


def g_uri_redis(r):
    pw = password(r, True)
    if r.random() < 0.5:
        return f"redis://:{pw}@{host(r, 'redis')}:6379/0", (pw,)
    return f"rediss://default:{pw}@{host(r, 'redis')}:6380", (pw,)


def g_uri_amqp(r):
    pw = password(r, True)
    return f"{r.choice(['amqp', 'amqps'])}://{user(r)}:{pw}@{host(r, 'mq')}:5672/{r.choice(['%2F', 'prod', 'orders'])}", (pw,)


def g_mssql(r):
    pw = password(r).replace(";", "")
    return (f"Server=tcp:{r.choice(['sql-prod.database.windows.net', 'MSSQL01', '10.2.0.15'])},1433;"
            f"Database={dbname(r)};User Id={user(r)};Password={pw};"
            + r.choice(["Encrypt=True;", "TrustServerCertificate=True;", "MultipleActiveResultSets=true;"]), (pw,))


def g_jdbc(r):
    pw = password(r, True)
    if r.random() < 0.5:
        return f"jdbc:postgresql://{host(r)}:5432/{dbname(r)}?user={user(r)}&password={pw}", (pw,)
    return f"jdbc:sqlserver://{host(r)}:1433;databaseName={dbname(r)};user={user(r)};password={pw}", (pw,)


def g_smtp(r):
    pw = password(r, True)
    return f"smtp{r.choice(['', 's'])}://{r.choice(['apikey', 'noreply%40example.com', 'mailer'])}:{pw}@{host(r, 'mail')}:{r.choice(['587', '465'])}", (pw,)


def g_ftp(r):
    pw = password(r, True)
    return f"{r.choice(['ftp', 'sftp'])}://{r.choice(['partner_upload', 'edi', 'batch'])}:{pw}@{host(r, 'ftp')}/{r.choice(['inbound', 'exports', 'upload'])}", (pw,)


def g_ldap(r):
    pw = password(r, True)
    return f"ldap://cn={r.choice(['admin', 'binduser', 'svc-ldap'])},dc=corp,dc=example:{pw}@{host(r, 'ldap')}:389", (pw,)


def g_basic_url(r):
    pw = password(r, True)
    return f"https://{r.choice(['deploy', 'ci', 'jenkins', 'reader'])}:{pw}@{host(r, 'web')}/{r.choice(['repository/npm-private/', 'simple/', 'api/v2/', 'charts'])}", (pw,)


def g_azure_storage(r):
    k = s(r, B64, 86) + "=="
    return (f"DefaultEndpointsProtocol=https;AccountName={r.choice(['prodassets', 'stlogs01', 'mediastore'])};"
            f"AccountKey={k};EndpointSuffix=core.windows.net", (k,))


def g_laravel(r):
    k = base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()
    return "base64:" + k, (k,)


def g_jwt(r, role=None):
    hdr = b64url(json.dumps({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"}, separators=(",", ":")).encode())
    body = {"sub": str(r.randint(1000, 99999)), "iat": r.randint(1700000000, 1760000000)}
    if role:
        body = {"iss": "supabase", "ref": s(r, string.ascii_lowercase, 20), "role": role,
                "iat": r.randint(1700000000, 1760000000), "exp": r.randint(2000000000, 2100000000)}
    else:
        body["name"] = r.choice(["svc-report", "batch", "admin", "kim.dev"])
        body["scope"] = r.choice(["read write", "admin", "orders:write"])
    pl = b64url(json.dumps(body, separators=(",", ":")).encode())
    sig = s(r, URLS, 43)
    return f"{hdr}.{pl}.{sig}", None


def g_jwt_plain(r):
    v, _ = g_jwt(r)
    return v, (v,)


def g_supabase(r):
    v, _ = g_jwt(r, "service_role")
    return v, (v,)


VALUE_KINDS = [
    # VCS
    ("github_pat", g_simple(lambda r: "gh" + "p_" + s(r, A, 36)), ["GITHUB_TOKEN", "GH_TOKEN", "GITHUB_PAT"], "GitHub", "gitleaks github.go"),
    ("github_fine_grained_pat", g_simple(lambda r: "github" + "_pat_" + s(r, A, 22) + "_" + s(r, A, 59)), ["GH_TOKEN", "GITHUB_TOKEN", "RELEASE_TOKEN"], "GitHub", "gitleaks github.go"),
    ("github_oauth_token", g_simple(lambda r: "gh" + "o_" + s(r, A, 36)), ["GITHUB_OAUTH_TOKEN", "GH_OAUTH"], "GitHub OAuth", "gitleaks github.go"),
    ("github_app_token", g_simple(lambda r: "gh" + r.choice("su") + "_" + s(r, A, 36)), ["GH_APP_TOKEN", "INSTALLATION_TOKEN"], "GitHub App", "gitleaks github.go"),
    ("gitlab_pat", g_simple(lambda r: "glp" + "at-" + s(r, URLS, 20)), ["GITLAB_TOKEN", "GL_TOKEN", "CI_PUSH_TOKEN"], "GitLab", "gitleaks gitlab.go"),
    ("gitlab_runner_token", g_simple(lambda r: "glr" + "t-" + s(r, URLS, 20)), ["RUNNER_TOKEN", "CI_SERVER_TOKEN"], "GitLab runner", "gitleaks gitlab.go"),
    ("gitlab_deploy_token", g_simple(lambda r: "gld" + "t-" + s(r, A, 20)), ["GITLAB_DEPLOY_TOKEN", "DEPLOY_TOKEN"], "GitLab deploy", "gitleaks gitlab.go"),
    ("bitbucket_app_password", g_simple(lambda r: "AT" + "BB" + s(r, A, 32)), ["BITBUCKET_APP_PASSWORD", "BB_APP_PASSWORD"], "Bitbucket", "trufflehog bitbucketapppassword"),
    # chat
    ("slack_bot_token", g_simple(lambda r: "xo" + "xb-" + num(r, 12) + "-" + num(r, 13) + "-" + s(r, A, 24)), ["SLACK_BOT_TOKEN", "SLACK_TOKEN"], "Slack bot", "gitleaks slack.go"),
    ("slack_user_token", g_simple(lambda r: "xo" + "xp-" + num(r, 11) + "-" + num(r, 11) + "-" + num(r, 12) + "-" + s(r, HX, 32)), ["SLACK_USER_TOKEN", "SLACK_LEGACY_TOKEN"], "Slack user", "gitleaks slack.go"),
    ("slack_app_token", g_simple(lambda r: "xa" + "pp-1-A" + s(r, UP, 10) + "-" + num(r, 13) + "-" + s(r, HX, 64)), ["SLACK_APP_TOKEN"], "Slack socket mode", "gitleaks slack.go"),
    ("slack_webhook", g_simple(lambda r: "https://hooks.slack.com/" + "services/T" + s(r, UP, 10) + "/B" + s(r, UP, 10) + "/" + s(r, A, 24)), ["SLACK_WEBHOOK_URL", "ALERT_WEBHOOK"], "Slack webhook", "gitleaks slack.go"),
    ("discord_webhook", g_simple(lambda r: "https://discord.com/api/" + "webhooks/" + num(r, 19) + "/" + s(r, URLS, 68)), ["DISCORD_WEBHOOK_URL"], "Discord webhook", "gitleaks discord.go / trufflehog discordwebhook"),
    ("discord_bot_token", g_simple(lambda r: r.choice("MN") + s(r, A, 23) + "." + s(r, URLS, 6) + "." + s(r, URLS, 27)), ["DISCORD_BOT_TOKEN", "DISCORD_TOKEN"], "Discord bot", "trufflehog discordbottoken"),
    ("telegram_bot_token", g_simple(lambda r: num(r, 10) + ":AA" + s(r, URLS, 33)), ["TELEGRAM_BOT_TOKEN", "TG_TOKEN"], "Telegram bot", "gitleaks telegram.go"),
    ("teams_webhook", g_simple(lambda r: "https://" + r.choice(["contoso", "acmecorp"]) + ".webhook.office.com/webhookb2/" + uuid(r) + "@" + uuid(r) + "/IncomingWebhook/" + s(r, HX, 32) + "/" + uuid(r)), ["TEAMS_WEBHOOK_URL"], "Teams webhook", "gitleaks teams.go; trufflehog microsoftteamswebhook"),
    # payments
    ("stripe_secret_key", g_simple(lambda r: "sk_" + "live_" + s(r, A, r.choice([24, 99]))), ["STRIPE_SECRET_KEY", "STRIPE_API_KEY"], "Stripe", "gitleaks stripe.go"),
    ("stripe_restricted_key", g_simple(lambda r: "rk_" + "live_" + s(r, A, r.choice([24, 99]))), ["STRIPE_RESTRICTED_KEY"], "Stripe restricted", "gitleaks stripe.go"),
    ("stripe_webhook_secret", g_simple(lambda r: "whs" + "ec_" + s(r, A, 32)), ["STRIPE_WEBHOOK_SECRET", "STRIPE_ENDPOINT_SECRET"], "Stripe webhook", "no fixture; whsec_ shape from Stripe docs (keyword context as detect-secrets keyword)"),
    ("square_access_token", g_simple(lambda r: "EA" + "AA" + s(r, URLS, 60)), ["SQUARE_ACCESS_TOKEN"], "Square", "gitleaks square.go"),
    ("braintree_access_token", g_simple(lambda r: "access_token" + "$production$" + s(r, LO, 16) + "$" + s(r, HX, 32)), ["BRAINTREE_ACCESS_TOKEN", "PAYPAL_ACCESS_TOKEN"], "Braintree", "trufflehog braintreepayments / gitleaks (paypal)"),
    # AI
    ("openai_api_key", g_simple(lambda r: "sk-" + "proj-" + s(r, URLS, 74) + "T3Blbk" + "FJ" + s(r, URLS, 74)), ["OPENAI_API_KEY"], "OpenAI", "gitleaks openai.go"),
    ("anthropic_api_key", g_simple(lambda r: "sk-" + "ant-api03-" + s(r, URLS, 93) + "AA"), ["ANTHROPIC_API_KEY", "CLAUDE_API_KEY"], "Anthropic", "gitleaks anthropic.go"),
    ("huggingface_token", g_simple(lambda r: "h" + "f_" + s(r, LET, 34)), ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"], "Hugging Face", "gitleaks huggingface.go"),
    ("groq_api_key", g_simple(lambda r: "gs" + "k_" + s(r, A, 52)), ["GROQ_API_KEY"], "Groq", "trufflehog groq"),
    ("perplexity_api_key", g_simple(lambda r: "ppl" + "x-" + s(r, A, 48)), ["PERPLEXITY_API_KEY", "PPLX_API_KEY"], "Perplexity", "gitleaks perplexity.go"),
    ("cohere_api_key", g_simple(lambda r: s(r, A, 40)), ["COHERE_API_KEY", "CO_API_KEY"], "Cohere", "gitleaks cohere.go (keyword + 40 alnum)"),
    # cloud
    ("aws_secret_access_key", g_simple(lambda r: s(r, B64, 40)), ["AWS_SECRET_ACCESS_KEY"], "AWS", "gitleaks aws.go / detect-secrets aws"),
    ("google_api_key", g_simple(lambda r: "AI" + "za" + s(r, URLS, 35)), ["GOOGLE_API_KEY", "GOOGLE_MAPS_API_KEY", "GEMINI_API_KEY"], "Google", "gitleaks gcp.go"),
    ("google_oauth_client_secret", g_simple(lambda r: "GOC" + "SPX-" + s(r, URLS, 28)), ["GOOGLE_CLIENT_SECRET", "OAUTH_GOOGLE_SECRET"], "Google OAuth", "no fixture; GOCSPX- shape from Google docs (keyword client_secret as gitleaks generic.go)"),
    ("azure_client_secret", g_simple(lambda r: s(r, A + "_~.", 3) + r.choice(string.digits) + "Q~" + s(r, A + "_~.-", 34)), ["AZURE_CLIENT_SECRET", "ARM_CLIENT_SECRET"], "Azure AD", "gitleaks azure.go"),
    ("azure_storage_connection_string", g_azure_storage, ["AZURE_STORAGE_CONNECTION_STRING", "AzureWebJobsStorage"], "Azure Storage", "trufflehog azure_storage; detect-secrets azure_storage_key"),
    ("digitalocean_token", g_simple(lambda r: "do" + "p_v1_" + s(r, HX, 64)), ["DIGITALOCEAN_TOKEN", "DO_TOKEN"], "DigitalOcean", "gitleaks digitalocean.go"),
    ("heroku_api_key", g_simple(lambda r: uuid(r) if r.random() < 0.6 else "HRKU-" + "AA" + s(r, URLS, 58)), ["HEROKU_API_KEY"], "Heroku", "gitleaks heroku.go"),
    ("vercel_token", g_simple(lambda r: s(r, A, 24)), ["VERCEL_TOKEN"], "Vercel", "trufflehog vercel (keyword + 24 alnum)"),
    ("netlify_token", g_simple(lambda r: "nf" + "p_" + s(r, A, 36)), ["NETLIFY_AUTH_TOKEN"], "Netlify", "trufflehog netlify/v2 (nfp_ + 36)"),
    ("cloudflare_api_token", g_simple(lambda r: s(r, URLS, 40)), ["CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"], "Cloudflare", "gitleaks cloudflare.go"),
    ("flyio_token", g_simple(lambda r: "fo" + "1_" + s(r, URLS, 43)), ["FLY_API_TOKEN"], "Fly.io", "gitleaks flyio.go"),
    ("alibaba_access_key", g_simple(lambda r: "LT" + "AI" + s(r, A, 20)), ["ALIBABA_CLOUD_ACCESS_KEY_ID", "ALICLOUD_ACCESS_KEY"], "Alibaba Cloud", "gitleaks alibaba.go"),
    # packages / registries
    ("npm_token", g_simple(lambda r: "np" + "m_" + s(r, A, 36)), ["NPM_TOKEN", "NODE_AUTH_TOKEN"], "npm", "gitleaks npm.go"),
    ("pypi_token", g_simple(lambda r: "py" + "pi-" + "AgEIcHlwaS5vcmc" + s(r, URLS, r.randint(70, 150))), ["PYPI_API_TOKEN", "TWINE_PASSWORD", "POETRY_PYPI_TOKEN_PYPI"], "PyPI", "gitleaks pypi.go"),
    ("rubygems_api_key", g_simple(lambda r: "rubygems" + "_" + s(r, HX, 48)), ["GEM_HOST_API_KEY", "RUBYGEMS_API_KEY"], "RubyGems", "gitleaks rubygems.go"),
    ("nuget_api_key", g_simple(lambda r: "oy" + "2" + s(r, LO, 43)), ["NUGET_API_KEY"], "NuGet", "trufflehog nugetapikey (46 lower alnum)"),
    ("dockerhub_pat", g_simple(lambda r: "dck" + "r_pat_" + s(r, URLS, 27)), ["DOCKERHUB_TOKEN", "DOCKER_PASSWORD"], "Docker Hub", "trufflehog dockerhub/v2; secretlint docker"),
    ("artifactory_api_key", g_simple(lambda r: "AK" + "Cp" + s(r, A, 69)), ["ARTIFACTORY_API_KEY", "JFROG_API_KEY"], "Artifactory", "gitleaks artifactory.go / detect-secrets artifactory"),
    ("clojars_token", g_simple(lambda r: "CLOJARS" + "_" + s(r, LO, 60)), ["CLOJARS_PASSWORD", "CLOJARS_TOKEN"], "Clojars", "gitleaks clojars.go"),
    # email / sms
    ("sendgrid_api_key", g_simple(lambda r: "S" + "G." + s(r, URLS, 22) + "." + s(r, URLS, 43)), ["SENDGRID_API_KEY"], "SendGrid", "gitleaks sendgrid.go"),
    ("mailgun_api_key", g_simple(lambda r: "ke" + "y-" + s(r, HX, 32)), ["MAILGUN_API_KEY"], "Mailgun", "gitleaks mailgun.go"),
    ("mailchimp_api_key", g_simple(lambda r: s(r, HX, 32) + "-us" + str(r.randint(2, 21))), ["MAILCHIMP_API_KEY"], "Mailchimp", "gitleaks mailchimp.go"),
    ("brevo_api_key", g_simple(lambda r: "xkey" + "sib-" + s(r, HX, 64) + "-" + s(r, A, 16)), ["BREVO_API_KEY", "SENDINBLUE_API_KEY"], "Brevo", "gitleaks sendinblue.go"),
    ("twilio_auth_token", g_simple(lambda r: s(r, HX, 32)), ["TWILIO_AUTH_TOKEN"], "Twilio", "trufflehog twilio (keyword + hex32)"),
    ("postmark_server_token", g_simple(uuid), ["POSTMARK_SERVER_TOKEN", "POSTMARK_API_TOKEN"], "Postmark", "trufflehog postmark (keyword + uuid)"),
    # observability / devops SaaS
    ("datadog_api_key", g_simple(lambda r: s(r, HX, 32)), ["DD_API_KEY", "DATADOG_API_KEY"], "Datadog", "gitleaks datadog.go"),
    ("datadog_app_key", g_simple(lambda r: s(r, HX, 40)), ["DD_APP_KEY", "DATADOG_APP_KEY"], "Datadog", "gitleaks datadog.go"),
    ("newrelic_user_key", g_simple(lambda r: "NR" + "AK-" + s(r, UP, 27)), ["NEW_RELIC_API_KEY", "NEWRELIC_USER_KEY"], "New Relic", "gitleaks newrelic.go"),
    ("newrelic_license_key", g_simple(lambda r: s(r, HX, 32) + "FFFF" + "NR" + "AL"), ["NEW_RELIC_LICENSE_KEY"], "New Relic", "trufflehog newreliclicensekey"),
    ("sentry_auth_token", g_simple(lambda r: "sntry" + "u_" + s(r, HX, 64)), ["SENTRY_AUTH_TOKEN"], "Sentry", "gitleaks sentry.go; trufflehog sentrytoken/v2"),
    ("grafana_sa_token", g_simple(lambda r: "gl" + "sa_" + s(r, A, 32) + "_" + s(r, HX, 8)), ["GRAFANA_SA_TOKEN", "GRAFANA_API_KEY"], "Grafana", "gitleaks grafana.go"),
    ("dynatrace_token", g_simple(lambda r: "dt0" + "c01." + s(r, UP, 24) + "." + s(r, UP, 64)), ["DT_API_TOKEN", "DYNATRACE_TOKEN"], "Dynatrace", "gitleaks dynatrace.go"),
    ("pagerduty_api_key", g_simple(lambda r: s(r, A + "-_+", 20)), ["PAGERDUTY_TOKEN", "PD_API_KEY"], "PagerDuty", "trufflehog pagerdutyapikey (keyword + 20)"),
    ("sonarqube_token", g_simple(lambda r: "sq" + r.choice("upa") + "_" + s(r, HX, 40)), ["SONAR_TOKEN"], "SonarQube", "gitleaks sonar.go"),
    ("snyk_token", g_simple(uuid), ["SNYK_TOKEN"], "Snyk", "gitleaks snyk.go"),
    ("vault_token", g_simple(lambda r: "hv" + "s." + s(r, URLS, 95)), ["VAULT_TOKEN"], "Vault", "gitleaks hashicorp_vault.go"),
    ("terraform_cloud_token", g_simple(lambda r: s(r, A, 14) + ".atlas" + "v1." + s(r, A, 67)), ["TF_TOKEN_app_terraform_io", "TFE_TOKEN", "ATLAS_TOKEN"], "Terraform Cloud", "trufflehog terraformcloudpersonaltoken"),
    ("doppler_token", g_simple(lambda r: "dp." + "pt." + s(r, A, 43)), ["DOPPLER_TOKEN"], "Doppler", "gitleaks doppler.go"),
    ("pulumi_token", g_simple(lambda r: "pu" + "l-" + s(r, HX, 40)), ["PULUMI_ACCESS_TOKEN"], "Pulumi", "gitleaks pulumi.go"),
    ("databricks_token", g_simple(lambda r: "da" + "pi" + s(r, HX, 32)), ["DATABRICKS_TOKEN"], "Databricks", "gitleaks databricks.go"),
    ("okta_api_token", g_simple(lambda r: "00" + s(r, URLS, 40)), ["OKTA_API_TOKEN", "OKTA_CLIENT_TOKEN"], "Okta", "gitleaks okta.go"),
    ("age_secret_key", g_simple(lambda r: "AGE-SECRET" + "-KEY-1" + s(r, BECH, 58)), ["SOPS_AGE_KEY"], "age/SOPS", "gitleaks age.go"),
    # productivity / SaaS
    ("linear_api_key", g_simple(lambda r: "lin" + "_api_" + s(r, A, 40)), ["LINEAR_API_KEY"], "Linear", "gitleaks linear.go"),
    ("notion_token", g_simple(lambda r: "nt" + "n_" + s(r, string.digits, 11) + s(r, A, 35)), ["NOTION_TOKEN", "NOTION_API_KEY"], "Notion", "gitleaks notion.go"),
    ("shopify_access_token", g_simple(lambda r: "shp" + "at_" + s(r, HX, 32)), ["SHOPIFY_ACCESS_TOKEN", "SHOPIFY_ADMIN_TOKEN"], "Shopify", "gitleaks shopify.go"),
    ("atlassian_api_token", g_simple(lambda r: "ATA" + "TT3" + s(r, URLS, 170) + "=" + s(r, "0123456789ABCDEF", 8)), ["JIRA_API_TOKEN", "CONFLUENCE_API_TOKEN"], "Jira", "gitleaks atlassian.go"),
    ("airtable_pat", g_simple(lambda r: "pa" + "t" + s(r, A, 14) + "." + s(r, HX, 64)), ["AIRTABLE_API_KEY", "AIRTABLE_PAT"], "Airtable", "trufflehog airtablepersonalaccesstoken"),
    ("algolia_admin_key", g_simple(lambda r: s(r, HX, 32)), ["ALGOLIA_ADMIN_API_KEY", "ALGOLIA_WRITE_KEY"], "Algolia", "gitleaks algolia.go"),
    ("mapbox_secret_token", g_simple(lambda r: "sk." + "eyJ1Ijoi" + s(r, A, 52) + "." + s(r, URLS, 22)), ["MAPBOX_SECRET_TOKEN", "MAPBOX_DOWNLOADS_TOKEN"], "Mapbox", "gitleaks mapbox.go"),
    ("easypost_api_key", g_simple(lambda r: "EZ" + "AK" + s(r, A, 54)), ["EASYPOST_API_KEY"], "EasyPost", "gitleaks easypost.go"),
    ("planetscale_password", g_simple(lambda r: "pscale" + "_pw_" + s(r, URLS, 43)), ["PLANETSCALE_DB_PASSWORD", "DATABASE_PASSWORD"], "PlanetScale", "gitleaks planetscale.go"),
    ("meta_access_token", g_simple(lambda r: "EA" + "AG" + s(r, A, r.randint(150, 190))), ["FB_ACCESS_TOKEN", "META_PAGE_TOKEN"], "Meta Graph", "gitleaks facebook.go"),
    ("twitter_bearer_token", g_simple(lambda r: "A" * 22 + s(r, A, 20) + "%2F" + s(r, A, 20) + "%3D" + s(r, A, 50)), ["TWITTER_BEARER_TOKEN", "X_BEARER_TOKEN"], "Twitter/X", "gitleaks twitter.go"),
    ("supabase_service_role_key", g_supabase, ["SUPABASE_SERVICE_ROLE_KEY"], "Supabase", "gitleaks jwt.go + trufflehog supabasetoken"),
    ("jwt", g_jwt_plain, ["API_JWT", "SERVICE_JWT", "AUTH_TOKEN"], "internal API", "gitleaks jwt.go"),
    # connection strings
    ("postgres_uri_password", g_uri_pg, ["DATABASE_URL", "POSTGRES_URL", "DB_DSN"], "Postgres", "trufflehog uri / postgres; detect-secrets basic_auth"),
    ("mysql_uri_password", g_uri_mysql, ["DATABASE_URL", "MYSQL_URL", "SQLALCHEMY_DATABASE_URI"], "MySQL", "trufflehog uri; gitleaks generic"),
    ("mongodb_uri_password", g_uri_mongo, ["MONGODB_URI", "MONGO_URL"], "MongoDB Atlas", "trufflehog mongodb"),
    ("redis_uri_password", g_uri_redis, ["REDIS_URL", "CACHE_URL", "CELERY_BROKER_URL"], "Redis", "trufflehog redis"),
    ("amqp_uri_password", g_uri_amqp, ["AMQP_URL", "RABBITMQ_URL", "BROKER_URL"], "RabbitMQ", "trufflehog uri (amqp)"),
    ("mssql_connection_password", g_mssql, ["ConnectionStrings__Default", "SQLSERVER_CONNECTION"], "SQL Server", "trufflehog sqlserver"),
    ("jdbc_url_password", g_jdbc, ["SPRING_DATASOURCE_URL", "JDBC_URL"], "JDBC", "trufflehog jdbc"),
    ("smtp_uri_password", g_smtp, ["SMTP_URL", "EMAIL_URL", "MAIL_DSN"], "SMTP", "trufflehog uri"),
    ("ftp_uri_password", g_ftp, ["FTP_URL", "SFTP_URL", "PARTNER_DROP_URL"], "FTP", "trufflehog ftp"),
    ("ldap_uri_password", g_ldap, ["LDAP_URL", "AUTH_LDAP_URI"], "LDAP", "trufflehog ldap"),
    ("basic_auth_url", g_basic_url, ["REGISTRY_URL", "NEXUS_URL", "HELM_REPO_URL"], "private registry", "detect-secrets basic_auth; gitleaks curl.go"),
    # generic named secrets
    ("generic_password", g_simple(lambda r: password(r)), ["DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD", "ADMIN_PASSWORD", "KEYSTORE_PASSWORD", "RABBITMQ_DEFAULT_PASS", "SMTP_PASSWORD", "LDAP_BIND_PASSWORD"], "database", "detect-secrets keyword; gitleaks generic.go"),
    ("generic_secret", g_simple(lambda r: s(r, r.choice([A, HX, URLS]), r.choice([32, 40, 48, 64]))), ["JWT_SECRET", "SESSION_SECRET", "NEXTAUTH_SECRET", "COOKIE_SECRET", "APP_SECRET", "HMAC_SECRET"], "app", "detect-secrets keyword; gitleaks generic.go"),
    ("generic_api_key", g_simple(lambda r: s(r, r.choice([A, HX]), r.choice([32, 36, 40]))), ["PAYMENTS_API_KEY", "INTERNAL_API_KEY", "PARTNER_API_KEY", "GEOCODER_API_KEY", "WEATHER_API_KEY"], "partner API", "gitleaks generic.go (generic-api-key)"),
    ("django_secret_key", g_simple(lambda r: s(r, string.ascii_lowercase + string.digits + "!@%^*(-_=+)", 50)), ["DJANGO_SECRET_KEY", "SECRET_KEY"], "Django", "detect-secrets keyword"),
    ("rails_secret_key_base", g_simple(lambda r: s(r, HX, 128)), ["SECRET_KEY_BASE", "RAILS_MASTER_KEY"], "Rails", "detect-secrets keyword / high-entropy hex"),
    ("laravel_app_key", g_laravel, ["APP_KEY"], "Laravel", "detect-secrets base64 high-entropy"),
    ("webhook_secret", g_simple(lambda r: s(r, HX, 40)), ["GITHUB_WEBHOOK_SECRET", "WEBHOOK_SIGNING_SECRET"], "webhook", "detect-secrets keyword"),
    ("oauth_client_secret", g_simple(lambda r: s(r, URLS, r.choice([32, 40, 48]))), ["OAUTH_CLIENT_SECRET", "KEYCLOAK_CLIENT_SECRET", "AUTH0_CLIENT_SECRET"], "OAuth", "gitleaks generic.go (client_secret)"),
    ("encryption_key", g_simple(lambda r: s(r, B64, 43) + "="), ["ENCRYPTION_KEY", "FIELD_ENCRYPTION_KEY", "BACKUP_ENCRYPTION_KEY"], "encryption", "detect-secrets base64 high-entropy"),
]

# ---------------------------------------------------------------------------
# helpers for renderers
# ---------------------------------------------------------------------------

def lower_kebab(v):
    return v.lower().replace("_", "-")


def lower_snake(v):
    return v.lower()


def camel(v):
    parts = v.lower().split("_")
    return parts[0] + "".join(p.capitalize() for p in parts[1:])


def pascal(v):
    return "".join(p.capitalize() for p in v.lower().split("_"))


def dotted(v):
    return "".join(c if c != "_" else "." for c in v.lower().replace("__", "_"))


KO_COMMENTS = ["운영 키", "스테이징 전용", "임시로 하드코딩, 나중에 시크릿 매니저로 옮길 것", "배포 봇 계정",
               "로컬 테스트용이지만 실계정", "CI에서만 사용", "고객사 연동용", "만료 전에 교체 필요"]
KO_DB_COMMENTS = ["운영 DB 비밀번호", "운영 DB 접속 정보", "스테이징 DB", "읽기 전용 계정 아님, 주의"]
EN_DB_COMMENTS = ["prod db", "primary db credentials", "staging database", "rw account, careful"]
EN_COMMENTS = ["prod", "staging only", "TODO move to vault", "deploy bot", "temp, rotate after release",
               "used by the nightly job", "do not share", "shared team account"]


def cmt(r, lang, var=""):
    if any(x in var for x in ("PASSWORD", "DATABASE", "DB_", "_URL", "DSN", "URI", "Connection", "CONNECTION")):
        return r.choice(KO_DB_COMMENTS if lang == "ko" else EN_DB_COMMENTS)
    return r.choice(KO_COMMENTS if lang == "ko" else EN_COMMENTS)


def svc_host(r):
    return r.choice(["api.example.com", "internal-api.corp.lan", "localhost:8080", "partner.example.net",
                     "gateway.staging.example.io"])


# Renderers: (id, fn(r, var, val, lang) -> snippet, single_line)
# DEV renderers -------------------------------------------------------------

def rd_env(r, var, val, lang):
    q = r.choice(["", '"', "'"])
    line = f"{var}={q}{val}{q}"
    if r.random() < 0.5:
        return f"# {cmt(r, lang, var)}\n{line}"
    return line


def rd_compose(r, var, val, lang):
    svcn = r.choice(["api", "worker", "web", "backend", "scheduler"])
    if r.random() < 0.5:
        return (f"services:\n  {svcn}:\n    image: {r.choice(['node:20-alpine', 'python:3.12-slim', 'ghcr.io/acme/api:1.8.2'])}\n"
                f"    environment:\n      - {var}={val}  # {cmt(r, lang, var)}")
    return f"services:\n  {svcn}:\n    environment:\n      {var}: \"{val}\""


def rd_k8s_stringdata(r, var, val, lang):
    name = r.choice(["app-secrets", "api-credentials", "backend-env", "integration-keys"])
    return (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\ntype: Opaque\n"
            f"stringData:\n  # {cmt(r, lang, var)}\n  {lower_kebab(var)}: \"{val}\"")


def rd_gha(r, var, val, lang):
    return (f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n      {var}: {val}\n"
            f"    steps:\n      - uses: actions/checkout@v4")


def rd_json(r, var, val, lang):
    key = r.choice([camel(var), lower_snake(var), var])
    other = r.choice(['"region": "ap-northeast-2"', '"timeout": 30', '"debug": false', '"baseUrl": "https://api.example.com"'])
    return "{\n  " + other + ",\n  \"" + key + "\": \"" + val + "\"\n}"


def rd_dockerfile(r, var, val, lang):
    kw = r.choice(["ENV", "ARG"])
    base = r.choice(["FROM node:20-alpine", "FROM python:3.12-slim", "FROM eclipse-temurin:21-jre"])
    return f"{base}\n# {cmt(r, lang, var)}\n{kw} {var}={val}\nRUN make build"


def rd_powershell(r, var, val, lang):
    return f"$env:{var} = \"{val}\""


def rd_curl_header(r, var, val, lang):
    hdr = r.choice(["Authorization: Bearer ", "X-Api-Key: ", "Authorization: token "])
    return f"curl -sS -H \"{hdr}{val}\" https://{svc_host(r)}/v1/{r.choice(['status', 'projects', 'me', 'deployments'])}"


def rd_toml(r, var, val, lang):
    sec = r.choice(["[tool.integration]", "[env]", "[settings.secrets]", "[deploy]"])
    return f"{sec}\n# {cmt(r, lang, var)}\n{lower_snake(var)} = \"{val}\""


def rd_vscode(r, var, val, lang):
    return ("// .vscode/settings.json\n{\n  \"terminal.integrated.env.linux\": {\n    \""
            + var + "\": \"" + val + "\"\n  }\n}")


# HELDOUT renderers ---------------------------------------------------------

def rh_export(r, var, val, lang):
    return f"export {var}='{val}'" if r.random() < 0.5 else f"export {var}={val}"


def rh_cmd(r, var, val, lang):
    if r.random() < 0.5:
        return f"REM {cmt(r, lang, var)}\nset {var}={val}"
    return f"set \"{var}={val}\""


def rh_systemd(r, var, val, lang):
    unit = r.choice(["api.service", "worker.service", "exporter.service"])
    if r.random() < 0.5:
        return f"# /etc/systemd/system/{unit}\n[Service]\nEnvironment=\"{var}={val}\"\nExecStart=/opt/app/bin/server"
    return f"[Service]\nEnvironment={var}={val}"


def rh_helm(r, var, val, lang):
    if r.random() < 0.5:
        return f"# values-prod.yaml\nsecrets:\n  # {cmt(r, lang, var)}\n  {camel(var)}: {val}"
    return f"helm upgrade --install api ./charts/api -n prod --set secrets.{camel(var)}={val}"


def rh_ansible(r, var, val, lang):
    return f"# group_vars/{r.choice(['prod', 'all', 'webservers'])}.yml\n{lower_snake(var)}: \"{val}\"\napp_port: 8080"


def rh_ini(r, var, val, lang):
    sec = r.choice(["[default]", "[credentials]", "[service]", "[integration]"])
    return f"{sec}\n; {cmt(r, lang, var)}\n{lower_snake(var)} = {val}"


def rh_properties(r, var, val, lang):
    return f"# application-prod.properties\napp.{dotted(var)}={val}\nserver.port=8443"


def rh_xml(r, var, val, lang):
    return f"<appSettings>\n  <add key=\"{pascal(var)}\" value=\"{val}\" />\n</appSettings>"


def rh_tfvars(r, var, val, lang):
    if r.random() < 0.5:
        return f"# terraform.tfvars\n{lower_snake(var)} = \"{val}\""
    return f"variable \"{lower_snake(var)}\" {{\n  type    = string\n  default = \"{val}\"\n}}"


def rh_appsettings(r, var, val, lang):
    return ("{\n  \"Integrations\": {\n    \"" + pascal(var) + "\": \"" + val + "\",\n    \"Enabled\": true\n  }\n}")


def rh_httpie(r, var, val, lang):
    if r.random() < 0.5:
        return f"http GET https://{svc_host(r)}/v2/items \"Authorization:Bearer {val}\""
    return f"wget --header=\"Authorization: Bearer {val}\" -O out.json https://{svc_host(r)}/export"


def rh_k8s_env(r, var, val, lang):
    return f"containers:\n  - name: app\n    env:\n      - name: {var}\n        value: \"{val}\""


def rh_kubectl(r, var, val, lang):
    return f"kubectl create secret generic app-env --from-literal={var}={val} -n {r.choice(['prod', 'staging'])}"


DEV_RENDERERS = [("env", rd_env, False), ("compose", rd_compose, False), ("k8s_sd", rd_k8s_stringdata, False),
                 ("gha", rd_gha, False), ("json", rd_json, False), ("dockerfile", rd_dockerfile, False),
                 ("pwsh", rd_powershell, True), ("curlh", rd_curl_header, True), ("toml", rd_toml, False),
                 ("vscode", rd_vscode, False)]
HELD_RENDERERS = [("export", rh_export, True), ("cmd", rh_cmd, False), ("systemd", rh_systemd, False),
                  ("helm", rh_helm, False), ("ansible", rh_ansible, False), ("ini", rh_ini, False),
                  ("props", rh_properties, False), ("xml", rh_xml, False), ("tf", rh_tfvars, False),
                  ("appsettings", rh_appsettings, False), ("httpie", rh_httpie, True), ("k8senv", rh_k8s_env, False),
                  ("kubectl", rh_kubectl, True)]
# renderers that put the value in an HTTP auth header: only for token-like kinds
HEADER_RENDERERS = {"curlh", "httpie"}
NO_HEADER_KINDS = {"postgres_uri_password", "mysql_uri_password", "mongodb_uri_password", "redis_uri_password",
                   "amqp_uri_password", "mssql_connection_password", "jdbc_url_password", "smtp_uri_password",
                   "ftp_uri_password", "ldap_uri_password", "basic_auth_url", "generic_password", "django_secret_key",
                   "rails_secret_key_base", "laravel_app_key", "webhook_secret", "encryption_key", "slack_webhook",
                   "discord_webhook", "teams_webhook", "azure_storage_connection_string", "age_secret_key",
                   "stripe_webhook_secret", "generic_secret", "oauth_client_secret", "google_oauth_client_secret",
                   "azure_client_secret", "aws_secret_access_key", "newrelic_license_key", "alibaba_access_key",
                   "planetscale_password", "clojars_token", "bitbucket_app_password"}

# ---------------------------------------------------------------------------
# Sentence wrappers. {svc} service label, {var} variable, {snip} snippet.
# block: snippet on its own lines; inline: single-line snippet in the sentence.
# ---------------------------------------------------------------------------

DEV_WRAP = {
    ("en", "block"): [
        "Fixed the 401 from {svc}: the variable was missing from the deploy config. Working version:\n{snip}",
        "Lesson: {svc} reads {var} at startup, not per request, so restart after changing it.\n{snip}",
        "{svc} integration config that finally passed the smoke test:\n{snip}",
        "Note for next time - this is the block I pasted to get {svc} working locally:\n{snip}",
        "The staging deploy failed because {var} had a trailing newline. Correct entry:\n\n{snip}",
        "{snip}",
        "Copied from the ops runbook ({svc} section):\n```\n{snip}\n```",
    ],
    ("en", "inline"): [
        "`{snip}` is what I used for {svc} while debugging the auth error.",
        "{svc} check from my terminal: {snip}",
        "Worked around a 401 from {svc} with `{snip}` until the config was fixed.",
    ],
    ("ko", "block"): [
        "{svc} 연동에서 401 나던 문제 해결. 배포 설정에 {var} 항목이 빠져 있었음:\n{snip}",
        "교훈: {svc} 쪽은 {var} 값을 기동 시점에만 읽는다. 값 바꾸면 재시작해야 함.\n{snip}",
        "로컬에서 {svc} 붙일 때 쓴 설정 (그대로 복붙):\n{snip}",
        "스테이징 배포 실패 원인은 {var} 끝의 개행 문자였다. 수정본:\n\n{snip}",
        "운영 런북 {svc} 항목에서 가져온 설정\n```\n{snip}\n```",
    ],
    ("ko", "inline"): [
        "{svc} 인증 디버깅할 때 쓴 명령: `{snip}`",
        "터미널에서 {svc} 확인용으로 돌린 것: {snip}",
    ],
}

HELD_WRAP = {
    ("en", "block"): [
        "Root cause of the outage: {svc} credentials in the wrong file. What the server actually had:\n{snip}",
        "After the migration {svc} needs {var} here, otherwise the job silently falls back to anonymous mode:\n{snip}",
        "Reminder - {svc} settings in production (rotate after the audit):\n{snip}",
        "{snip}\n(this is what got picked up for {svc})",
        "Debugged timeouts in {svc}; turned out the config below was being overridden by an older one.\n```\n{snip}\n```",
        "Pasting the working config for {svc} so I don't lose it again:\n\n{snip}\n",
    ],
    ("en", "inline"): [
        "Handy one-liner from my {svc} incident notes: {snip}",
        "The line that unblocked deploys for {svc} was {snip}.",
        "Exact command I ran while fixing {svc}: {snip}",
    ],
    ("ko", "block"): [
        "장애 원인: {svc} 인증 정보가 엉뚱한 파일에 있었음. 서버에 실제로 들어있던 내용은 아래와 같다.\n{snip}",
        "마이그레이션 이후 {svc} 쪽은 {var} 값을 여기서 읽는다. 없으면 조용히 익명 모드로 떨어짐.\n{snip}",
        "{snip}\n위 설정으로 {svc} 연결 성공함",
        "{svc} 타임아웃 디버깅하다 보니 예전 설정이 덮어쓰고 있었다. 최종 설정:\n```\n{snip}\n```",
        "잊어버리기 전에 기록: 운영 {svc} 설정값 (감사 끝나면 교체 예정)\n\n{snip}",
    ],
    ("ko", "inline"): [
        "{svc} 장애 때 메모해 둔 한 줄: {snip}",
        "{snip} 한 줄로 {svc} 배포 막힌 거 풀었음.",
    ],
}


def wrap(r, pool, lang, single, svc, var, snip, tag):
    shape = "inline" if single and r.random() < 0.6 else "block"
    opts = pool[(lang, shape)]
    i = r.randrange(len(opts))
    tag.append(f"{tag[0]}|wrap:{lang}:{shape}:{i}")
    txt = opts[i].format(svc=svc, var=var, snip=snip)
    return txt[0].upper() + txt[1:] if txt.startswith("the ") else txt


# ---------------------------------------------------------------------------
# Structured kinds with their own forms: fn(r, lang) -> (text, secrets)
# Each kind: (kind, dev_forms, heldout_forms, source)
# ---------------------------------------------------------------------------

def aws_pair(r):
    return "AK" + "IA" + s(r, string.ascii_uppercase + "234567", 16), s(r, B64, 40)


def ko(lang, en, kr):
    return kr if lang == "ko" else en


def f_aws_credfile(r, lang):
    kid, sec = aws_pair(r)
    prof = r.choice(["default", "prod", "deploy"])
    t = (ko(lang, "Had to put the deploy profile into ~/.aws/credentials on the build box:",
            "빌드 서버 ~/.aws/credentials에 배포 프로파일 추가함:")
         + f"\n[{prof}]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = ap-northeast-2")
    return t, (kid, sec)


def f_aws_envpair(r, lang):
    kid, sec = aws_pair(r)
    t = (f"# {ko(lang, 'ci user', 'CI 전용 IAM 유저')}\nAWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}\nAWS_DEFAULT_REGION=us-east-1")
    return t, (kid, sec)


def f_aws_configure(r, lang):
    kid, sec = aws_pair(r)
    t = (ko(lang, "Switching profiles from the terminal:", "터미널에서 프로파일 설정할 때:")
         + f"\naws configure set aws_access_key_id {kid} --profile ops\naws configure set aws_secret_access_key {sec} --profile ops")
    return t, (kid, sec)


def f_aws_tf(r, lang):
    kid, sec = aws_pair(r)
    t = (ko(lang, "Provider block from the old repo (keys inline, which is why it leaked):",
            "예전 레포의 provider 블록 — 키가 그대로 박혀 있어서 문제였음")
         + f"\nprovider \"aws\" {{\n  region     = \"ap-northeast-2\"\n  access_key = \"{kid}\"\n  secret_key = \"{sec}\"\n}}")
    return t, (kid, sec)


def f_aws_ps(r, lang):
    kid, sec = aws_pair(r)
    t = (f"$env:AWS_ACCESS_KEY_ID=\"{kid}\"; $env:AWS_SECRET_ACCESS_KEY=\"{sec}\"\n"
         + ko(lang, "then `aws s3 ls` worked from PowerShell.", "이후 PowerShell에서 `aws s3 ls` 정상 동작."))
    return t, (kid, sec)


def f_aws_boto(r, lang):
    kid, sec = aws_pair(r)
    t = (ko(lang, "Legacy /etc/boto.cfg on the cron host:", "크론 서버의 오래된 /etc/boto.cfg:")
         + f"\n[Credentials]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}")
    return t, (kid, sec)


def pem_lines(r, first, n, width=64):
    lines = [first + s(r, B64, width - len(first))]
    for _ in range(n - 2):
        lines.append(s(r, B64, width))
    lines.append(s(r, B64, r.randint(10, width - 4)) + r.choice(["", "=", "=="]))
    return lines


BEGIN = "-----BEGIN "
END = "-----END "
PK = " KEY-----"


def pem(r, label, first, n, width=64):
    body = pem_lines(r, first, n, width)
    return BEGIN + label + PK + "\n" + "\n".join(body) + "\n" + END + label + PK, tuple(body)


def f_rsa_file(r, lang):
    blk, body = pem(r, "RSA PRIVATE", "MIIE" + r.choice("opv") + "AIBAAKCAQEA", r.randint(4, 7))
    t = ko(lang, "Contents of deploy/id_rsa that the old pipeline wrote out:\n", "예전 파이프라인이 deploy/id_rsa에 써두던 내용:\n") + blk
    return t, body


def f_rsa_k8s(r, lang):
    blk, body = pem(r, "RSA PRIVATE", "MIIE" + r.choice("opv") + "AIBAAKCAQEA", r.randint(4, 6))
    ind = "\n".join("    " + ln for ln in blk.split("\n"))
    t = f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls-signing\nstringData:\n  signing.key: |\n{ind}"
    return t, body


def f_ec_env(r, lang):
    body = pem_lines(r, "MHcCAQEEI", 3)
    val = BEGIN + "EC PRIVATE" + PK + "\\n" + "\\n".join(body) + "\\n" + END + "EC PRIVATE" + PK
    t = ko(lang, "The JWT signer expects the key with literal \\n escapes in .env:\n", ".env에는 \\n 이스케이프로 한 줄에 넣어야 JWT 서명 라이브러리가 읽음:\n") + f"JWT_PRIVATE_KEY=\"{val}\""
    return t, tuple(body)


def f_ssh_tf(r, lang):
    blk, body = pem(r, "OPENSSH PRIVATE", "b3BlbnNzaC1rZXktdjEAAAAA", r.randint(4, 6), 70)
    t = ko(lang, "Bastion key was inlined in a heredoc:\n", "bastion 키가 heredoc으로 그대로 들어가 있었다:\n") + \
        f"resource \"tls_private_key\" \"unused\" {{}}\nlocals {{\n  bastion_key = <<-EOT\n{blk}\nEOT\n}}"
    return t, body


def f_pkcs8_gha(r, lang):
    blk, body = pem(r, "PRIVATE", "MIIEvgIBADANBgkqhkiG9w0BAQEFAASC", r.randint(4, 6))
    ind = "\n".join("            " + ln for ln in blk.split("\n"))
    t = ("- name: write app key\n  run: echo \"$KEY\" > app.pem\n  env:\n    KEY: |\n" + ind)
    return t, body


def f_ec_ansible(r, lang):
    blk, body = pem(r, "EC PRIVATE", "MHcCAQEEI", 3)
    ind = "\n".join("  " + ln for ln in blk.split("\n"))
    t = ko(lang, "host_vars had the TLS key in plain text (not vaulted):\n", "host_vars에 TLS 키가 vault 암호화 없이 평문으로 있었음:\n") + "tls_key: |\n" + ind
    return t, body


def f_ssh_cat(r, lang):
    blk, body = pem(r, "OPENSSH PRIVATE", "b3BlbnNzaC1rZXktdjEAAAAA", 4, 70)
    t = "$ cat ~/.ssh/ci_deploy\n" + blk + "\n" + ko(lang, "(this is the key GitLab uses to push tags)", "(GitLab이 태그 푸시할 때 쓰는 키)")
    return t, body


def f_rsa_json(r, lang):
    body = pem_lines(r, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", 4)
    val = BEGIN + "PRIVATE" + PK + "\\n" + "\\n".join(body) + "\\n" + END + "PRIVATE" + PK + "\\n"
    t = "{\n  \"issuer\": \"billing-svc\",\n  \"signingKey\": \"" + val + "\"\n}"
    return t, tuple(body)


def sa_json(r, lang, compact):
    proj = r.choice(["acme-prod", "data-pipeline-314", "shop-analytics"])
    body = pem_lines(r, "MIIEvAIBADANBgkqhkiG9w0BAQEFAASC", 5)
    pk = BEGIN + "PRIVATE" + PK + "\\n" + "\\n".join(body) + "\\n" + END + "PRIVATE" + PK + "\\n"
    d = [("type", "service_account"), ("project_id", proj), ("private_key_id", s(r, HX, 40)),
         ("private_key", pk), ("client_email", f"deployer@{proj}.iam.gserviceaccount.com"), ("client_id", num(r, 21))]
    if compact:
        js = "{" + ", ".join(f"\"{k}\": \"{v}\"" for k, v in d) + "}"
    else:
        js = "{\n" + ",\n".join(f"  \"{k}\": \"{v}\"" for k, v in d) + "\n}"
    return js, tuple(body)


def f_sa_file(r, lang):
    js, body = sa_json(r, lang, False)
    return ko(lang, "key.json the BigQuery loader used:\n", "BigQuery 로더가 쓰던 key.json:\n") + js, body


def f_sa_env(r, lang):
    js, body = sa_json(r, lang, True)
    return ko(lang, "Passing the service account as one env var in Cloud Run:\n", "Cloud Run에서는 서비스 계정을 env 하나로 넘겼다:\n") + f"GOOGLE_CREDENTIALS='{js}'", body


def f_sa_tf(r, lang):
    js, body = sa_json(r, lang, False)
    return ko(lang, "terraform provider credentials were inlined as a heredoc:\n", "terraform provider에 credentials가 heredoc으로 박혀 있었음:\n") + \
        f"provider \"google\" {{\n  credentials = <<EOF\n{js}\nEOF\n}}", body


def f_sa_yaml(r, lang):
    js, body = sa_json(r, lang, True)
    return f"# {ko(lang, 'gke workload secret', 'GKE 워크로드용 시크릿')}\nstringData:\n  sa.json: '{js}'", body


# credential files ----------------------------------------------------------

def f_netrc_d(r, lang):
    pw = password(r)
    return (ko(lang, "~/.netrc on the runner so git over https stops prompting:", "러너의 ~/.netrc (https git 프롬프트 안 뜨게):")
            + f"\nmachine {host(r, 'web')}\n  login {user(r)}\n  password {pw}"), (pw,)


def f_netrc_h(r, lang):
    pw = "gh" + "p_" + s(r, A, 36) if r.random() < 0.4 else password(r)
    return f"machine github.com login {r.choice(['ci-bot', 'octo-deploy'])} password {pw}\n" + \
        ko(lang, "(single-line .netrc form also works with curl -n)", "(한 줄짜리 .netrc 형식도 curl -n에서 됨)"), (pw,)


def f_gitcred_d(r, lang):
    tok = "gh" + "p_" + s(r, A, 36) if r.random() < 0.5 else "glp" + "at-" + s(r, URLS, 20)
    u = r.choice(["oauth2", "x-access-token", "kim-dev", "ci"])
    return (ko(lang, "`git config credential.helper store` wrote this to ~/.git-credentials:",
               "`git config credential.helper store` 하면 ~/.git-credentials에 이렇게 저장됨:")
            + f"\nhttps://{u}:{tok}@{r.choice(['github.com', 'gitlab.com', 'git.corp.example'])}"), (tok,)


def f_gitcred_h(r, lang):
    tok = password(r, True)
    return (f"git remote set-url origin https://{user(r)}:{tok}@git.corp.example/platform/infra.git\n"
            + ko(lang, "-> the remote URL now carries the password, visible in `git remote -v`.",
                 "-> 이러면 `git remote -v`에 비밀번호가 그대로 보임.")), (tok,)


def f_pgpass_d(r, lang):
    pw = password(r).replace(":", "")
    return (ko(lang, "~/.pgpass entry (chmod 600 or psql ignores it):", "~/.pgpass 항목 (chmod 600 안 하면 psql이 무시함):")
            + f"\n{host(r)}:5432:{dbname(r)}:{user(r)}:{pw}"), (pw,)


def f_pgpass_h(r, lang):
    pw = password(r).replace(":", "")
    return f"echo '*:*:{dbname(r)}:{user(r)}:{pw}' >> ~/.pgpass && chmod 600 ~/.pgpass", (pw,)


def f_pypirc_d(r, lang):
    pw = password(r)
    return (ko(lang, "~/.pypirc for the internal index:", "사내 인덱스용 ~/.pypirc:")
            + f"\n[distutils]\nindex-servers = internal\n\n[internal]\nrepository = https://{host(r, 'web')}/repository/pypi-internal/\nusername = {user(r)}\npassword = {pw}"), (pw,)


def f_pypirc_h(r, lang):
    tok = "py" + "pi-" + "AgEIcHlwaS5vcmc" + s(r, URLS, r.randint(80, 140))
    return f"[pypi]\n  username = __token__\n  password = {tok}", (tok,)


def f_pipconf_d(r, lang):
    pw = password(r, True)
    return (ko(lang, "pip.conf pointing at Nexus:", "Nexus 바라보는 pip.conf:")
            + f"\n[global]\nindex-url = https://{user(r)}:{pw}@{host(r, 'web')}/repository/pypi/simple\ntrusted-host = {host(r, 'web')}"), (pw,)


def f_pipconf_h(r, lang):
    pw = password(r, True)
    return (f"PIP_EXTRA_INDEX_URL=https://{r.choice(['deploy', 'reader'])}:{pw}@pkgs.corp.example/simple/ pip install -r requirements.txt"), (pw,)


def f_poetry_d(r, lang):
    pw = password(r)
    return (f"poetry config http-basic.private {user(r)} {pw}\n"
            + ko(lang, "# after this `poetry install` can reach the private source", "# 이후 poetry install이 private 소스에 접근 가능")), (pw,)


def f_poetry_h(r, lang):
    pw = password(r, True)
    return ("[[tool.poetry.source]]\nname = \"private\"\n"
            f"url = \"https://{user(r)}:{pw}@{host(r, 'web')}/simple/\"\npriority = \"supplemental\""), (pw,)


def f_npmrc_d(r, lang):
    tok = "np" + "m_" + s(r, A, 36)
    return (ko(lang, "project .npmrc (committed by mistake):", "실수로 커밋된 프로젝트 .npmrc:")
            + f"\n@acme:registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={tok}"), (tok,)


def f_npmrc_h(r, lang):
    raw = f"{user(r)}:{password(r)}"
    b = base64.b64encode(raw.encode()).decode()
    return (f"registry=https://{host(r, 'web')}/repository/npm-group/\n_auth={b}\nalways-auth=true"), (b,)


def f_cargo_d(r, lang):
    tok = "cio" + s(r, A, 32)
    return (ko(lang, "~/.cargo/credentials.toml:", "~/.cargo/credentials.toml 내용:")
            + f"\n[registry]\ntoken = \"{tok}\""), (tok,)


def f_cargo_h(r, lang):
    tok = "cio" + s(r, A, 32)
    return f"cargo login {tok}\n" + ko(lang, "(stores it in credentials.toml)", "(credentials.toml에 저장됨)"), (tok,)


def f_docker_cfg_d(r, lang):
    raw = f"{r.choice(['ci-bot', 'acme'])}:{'dck' + 'r_pat_' + s(r, URLS, 27)}"
    b = base64.b64encode(raw.encode()).decode()
    return ("~/.docker/config.json\n{\n  \"auths\": {\n    \"https://index.docker.io/v1/\": {\n      \"auth\": \"" + b + "\"\n    }\n  }\n}"), (b,)


def f_docker_cfg_h(r, lang):
    raw = f"_json_key:{password(r)}" if r.random() < 0.3 else f"{user(r)}:{password(r)}"
    b = base64.b64encode(raw.encode()).decode()
    return (ko(lang, "imagePullSecret payload for the private registry:", "프라이빗 레지스트리 imagePullSecret 내용:")
            + "\n{\"auths\":{\"" + host(r, 'web') + "\":{\"auth\":\"" + b + "\"}}}"), (b,)


def f_docker_login_d(r, lang):
    pw = password(r)
    return f"docker login {host(r, 'web')} -u {user(r)} -p '{pw}'", (pw,)


def f_docker_login_h(r, lang):
    pw = password(r)
    return (ko(lang, "The Jenkins step that leaked into the console log:\n", "Jenkins 콘솔 로그에 찍힌 스텝:\n")
            + f"sh \"docker login --username {user(r)} --password {pw} {host(r, 'web')}\""), (pw,)


def f_mysql_cli_d(r, lang):
    pw = password(r).replace("'", "")
    return f"mysql -h {host(r)} -u {user(r)} -p'{pw}' {dbname(r)} < dump.sql", (pw,)


def f_mysql_cli_h(r, lang):
    pw = s(r, A, r.randint(14, 20))
    return (ko(lang, "restore one-liner: ", "복원 한 줄 명령: ") + f"mysqldump -u{user(r)} -p{pw} --single-transaction {dbname(r)} | gzip > backup.sql.gz"), (pw,)


def f_psql_d(r, lang):
    pw = password(r, True)
    return f"psql \"postgresql://{user(r)}:{pw}@{host(r)}:5432/{dbname(r)}?sslmode=require\" -c '\\dt'", (pw,)


def f_psql_h(r, lang):
    pw = password(r).replace("'", "")
    return f"PGPASSWORD='{pw}' pg_dump -h {host(r)} -U {user(r)} -Fc {dbname(r)} > nightly.dump", (pw,)


def f_maven_d(r, lang):
    pw = password(r).replace("<", "").replace("&", "")
    return (ko(lang, "settings.xml server entry for deploys:", "배포용 settings.xml server 항목:")
            + f"\n<servers>\n  <server>\n    <id>internal-releases</id>\n    <username>{user(r)}</username>\n    <password>{pw}</password>\n  </server>\n</servers>"), (pw,)


def f_maven_h(r, lang):
    pw = password(r).replace("<", "").replace("&", "")
    return (f"<server><id>nexus</id><username>deployment</username><password>{pw}</password></server>\n"
            + ko(lang, "<!-- goes into ~/.m2/settings.xml -->", "<!-- ~/.m2/settings.xml에 넣음 -->")), (pw,)


def f_gradle_d(r, lang):
    pw = password(r)
    return ("# ~/.gradle/gradle.properties\n" + f"nexusUsername={user(r)}\nnexusPassword={pw}"), (pw,)


def f_gradle_h(r, lang):
    pw = password(r)
    return f"./gradlew publish -PsigningPassword={pw} -PossrhUsername=acme", (pw,)


def f_webconfig_d(r, lang):
    pw = password(r).replace(";", "").replace("\"", "").replace("&", "").replace("<", "")
    return (ko(lang, "web.config of the legacy IIS app:", "레거시 IIS 앱의 web.config:")
            + f"\n<connectionStrings>\n  <add name=\"Default\" connectionString=\"Data Source=SQL01;Initial Catalog={dbname(r)};User ID={user(r)};Password={pw};\" providerName=\"System.Data.SqlClient\" />\n</connectionStrings>"), (pw,)


def f_webconfig_h(r, lang):
    pw = password(r).replace(";", "").replace("\"", "").replace("&", "").replace("<", "")
    return ("{\n  \"ConnectionStrings\": {\n    \"Main\": \"Server=" + host(r) + ";Database=" + dbname(r)
            + ";Uid=" + user(r) + ";Pwd=" + pw + ";\"\n  }\n}"), (pw,)


def f_k8s_data_d(r, lang):
    pw = password(r)
    b = base64.b64encode(pw.encode()).decode()
    return (ko(lang, "Secret manifest (data is only base64, not encryption):", "Secret 매니페스트 (data는 base64일 뿐 암호화 아님):")
            + f"\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db-auth\ndata:\n  username: {base64.b64encode(b'app').decode()}\n  password: {b}"), (b,)


def f_k8s_data_h(r, lang):
    tok = "gh" + "p_" + s(r, A, 36) if r.random() < 0.5 else s(r, A, 40)
    b = base64.b64encode(tok.encode()).decode()
    return f"kubectl get secret api-token -o yaml\n...\ndata:\n  token: {b}\ntype: Opaque", (b,)


def f_bearer_d(r, lang):
    tok = s(r, URLS, r.choice([32, 40, 48]))
    return (f"curl -X POST https://{svc_host(r)}/internal/reindex \\\n  -H 'Authorization: Bearer {tok}' \\\n  -H 'Content-Type: application/json' -d '{{}}'"), (tok,)


def f_bearer_h(r, lang):
    tok = s(r, URLS, r.choice([36, 44]))
    return (ko(lang, "nginx proxy in front of the metrics backend injects the token:\n", "메트릭 백엔드 앞 nginx가 토큰을 붙여서 넘김:\n")
            + f"location /metrics/ {{\n    proxy_pass http://backend:9090/;\n    proxy_set_header Authorization \"Bearer {tok}\";\n}}"), (tok,)


def f_basic_hdr_d(r, lang):
    b = base64.b64encode(f"{user(r)}:{password(r)}".encode()).decode()
    return f"curl -H \"Authorization: Basic {b}\" https://{host(r, 'web')}/service/rest/v1/status", (b,)


def f_basic_hdr_h(r, lang):
    b = base64.b64encode(f"{user(r)}:{password(r)}".encode()).decode()
    return (ko(lang, "Apache reverse proxy config:\n", "Apache 리버스 프록시 설정:\n")
            + f"<Location /upstream>\n  RequestHeader set Authorization \"Basic {b}\"\n  ProxyPass http://10.0.3.7:8081/\n</Location>"), (b,)


def f_curl_u_d(r, lang):
    pw = password(r).replace("'", "")
    return f"curl -u {user(r)}:'{pw}' https://{host(r, 'web')}/api/v1/artifacts", (pw,)


def f_curl_u_h(r, lang):
    pw = password(r, True)
    return (ko(lang, "Elasticsearch health check:\n", "ES 헬스 체크:\n")
            + f"curl -s --user elastic:{pw} https://es.internal:9200/_cluster/health?pretty"), (pw,)


def f_cli_login_d(r, lang):
    ch = r.random()
    if ch < 0.33:
        tok = "gh" + "p_" + s(r, A, 36)
        return f"echo {tok} | gh auth login --with-token", (tok,)
    if ch < 0.66:
        tok = s(r, A, 24)
        return f"vercel deploy --prod --token {tok}", (tok,)
    tok = "np" + "m_" + s(r, A, 36)
    return f"npm config set //registry.npmjs.org/:_authToken {tok}", (tok,)


def f_cli_login_h(r, lang):
    ch = r.random()
    if ch < 0.33:
        sec = s(r, URLS, 40)
        return f"az login --service-principal -u {uuid(r)} -p {sec} --tenant {uuid(r)}", (sec,)
    if ch < 0.66:
        tok = uuid(r)
        return f"HEROKU_API_KEY={tok} heroku container:release web -a acme-api", (tok,)
    tok = "sq" + "p_" + s(r, HX, 40)
    return f"mvn sonar:sonar -Dsonar.host.url=https://sonar.corp.example -Dsonar.token={tok}", (tok,)


def f_ldap_bind_d(r, lang):
    pw = password(r).replace("'", "")
    return f"ldapsearch -x -H ldap://{host(r, 'ldap')} -D 'cn=admin,dc=corp,dc=example' -w '{pw}' -b 'ou=people,dc=corp,dc=example'", (pw,)


def f_ldap_bind_h(r, lang):
    pw = password(r)
    return ("spring:\n  ldap:\n    urls: ldaps://" + host(r, 'ldap') + ":636\n    username: cn=svc-ldap,dc=corp,dc=example\n    password: " + pw), (pw,)


def f_smtp_cfg_d(r, lang):
    pw = password(r)
    return ("# " + ko(lang, "mail settings", "메일 발송 설정") + f"\nMAIL_HOST={host(r, 'mail')}\nMAIL_PORT=587\nMAIL_USERNAME=apikey\nMAIL_PASSWORD={pw}"), (pw,)


def f_smtp_cfg_h(r, lang):
    pw = password(r)
    return ("spring.mail.host=" + host(r, 'mail') + "\nspring.mail.username=noreply@example.com\nspring.mail.password=" + pw), (pw,)


def f_redis_conf_d(r, lang):
    pw = password(r)
    return (ko(lang, "redis.conf on the cache node:", "캐시 노드 redis.conf:") + f"\nbind 0.0.0.0\nrequirepass {pw}\nmaxmemory 2gb"), (pw,)


def f_redis_conf_h(r, lang):
    pw = password(r)
    return f"redis-cli -h {host(r, 'redis')} -a '{pw}' --no-auth-warning INFO replication", (pw,)


def f_datasource_d(r, lang):
    pw = password(r)
    return ("spring:\n  datasource:\n    url: jdbc:postgresql://" + host(r) + ":5432/" + dbname(r)
            + "\n    username: " + user(r) + "\n    password: " + pw + "   # " + cmt(r, lang)), (pw,)


def f_datasource_h(r, lang):
    pw = password(r)
    return ("database:\n  adapter: postgresql\n  host: " + host(r) + "\n  username: " + user(r)
            + "\n  password: \"" + pw + "\"\n  pool: 10"), (pw,)


def f_git_cfg_d(r, lang):
    tok = "gh" + "p_" + s(r, A, 36)
    return (ko(lang, "global git config on the build agent:", "빌드 에이전트의 global git config:")
            + f"\n[url \"https://ci-bot:{tok}@github.com/\"]\n\tinsteadOf = https://github.com/"), (tok,)


def f_git_cfg_h(r, lang):
    tok = "glp" + "at-" + s(r, URLS, 20)
    return f"git config --global http.https://gitlab.com/.extraheader \"PRIVATE-TOKEN: {tok}\"", (tok,)


STRUCT_KINDS = [
    ("aws_access_key_pair", [f_aws_credfile, f_aws_envpair, f_aws_configure], [f_aws_tf, f_aws_ps, f_aws_boto], "gitleaks aws.go; detect-secrets aws test data"),
    ("private_key_pem", [f_rsa_file, f_rsa_k8s, f_ec_env, f_ssh_cat], [f_ssh_tf, f_pkcs8_gha, f_ec_ansible, f_rsa_json], "gitleaks privatekey.go; detect-secrets private_key"),
    ("gcp_service_account_key", [f_sa_file, f_sa_env], [f_sa_tf, f_sa_yaml], "gitleaks gcp.go (service_account); trufflehog gcp"),
    ("netrc_password", [f_netrc_d], [f_netrc_h], "detect-secrets keyword (no dedicated netrc fixture)"),
    ("git_credentials_token", [f_gitcred_d, f_git_cfg_d], [f_gitcred_h, f_git_cfg_h], "detect-secrets basic_auth; gitleaks github.go"),
    ("pgpass_password", [f_pgpass_d], [f_pgpass_h], "trufflehog postgres"),
    ("pypirc_password", [f_pypirc_d, f_pipconf_d, f_poetry_d], [f_pypirc_h, f_pipconf_h, f_poetry_h], "gitleaks pypi.go; detect-secrets basic_auth"),
    ("npmrc_auth", [f_npmrc_d], [f_npmrc_h], "gitleaks npm.go; secretlint npm rule"),
    ("cargo_registry_token", [f_cargo_d], [f_cargo_h], "no fixture; crates.io token shape (cio + 32 alnum) from crates.io docs"),
    ("docker_registry_auth", [f_docker_cfg_d, f_docker_login_d], [f_docker_cfg_h, f_docker_login_h], "trufflehog dockerhub/v2; secretlint docker"),
    ("db_cli_password", [f_mysql_cli_d, f_psql_d], [f_mysql_cli_h, f_psql_h], "gitleaks curl.go-style CLI contexts; trufflehog uri"),
    ("maven_gradle_password", [f_maven_d, f_gradle_d], [f_maven_h, f_gradle_h], "detect-secrets keyword (xml/properties)"),
    ("dotnet_connection_password", [f_webconfig_d], [f_webconfig_h], "trufflehog sqlserver"),
    ("k8s_secret_data", [f_k8s_data_d], [f_k8s_data_h], "gitleaks kubernetes.go"),
    ("bearer_token_header", [f_bearer_d], [f_bearer_h], "gitleaks curl.go (curl-auth-header)"),
    ("basic_auth_header", [f_basic_hdr_d], [f_basic_hdr_h], "gitleaks curl.go; detect-secrets basic_auth"),
    ("curl_user_password", [f_curl_u_d], [f_curl_u_h], "gitleaks curl.go (curl-auth-user)"),
    ("cli_login_token", [f_cli_login_d], [f_cli_login_h], "gitleaks github.go/npm.go; trufflehog azure/heroku/sonar"),
    ("ldap_bind_password", [f_ldap_bind_d], [f_ldap_bind_h], "trufflehog ldap"),
    ("smtp_password", [f_smtp_cfg_d], [f_smtp_cfg_h], "detect-secrets keyword; trufflehog uri"),
    ("redis_password", [f_redis_conf_d], [f_redis_conf_h], "trufflehog redis"),
    ("yaml_db_password", [f_datasource_d], [f_datasource_h], "detect-secrets keyword (yaml)"),
]

# ---------------------------------------------------------------------------
# Negatives: fn(r, lang) -> text.  (category, dev_fns, heldout_fns)
# ---------------------------------------------------------------------------

def sha(r, n=40):
    return s(r, HX, n)


def ver(r):
    return f"{r.randint(0, 5)}.{r.randint(0, 30)}.{r.randint(0, 20)}"


PLACEHOLDERS = ["<YOUR_TOKEN>", "xxxxxxxxxxxxxxxx", "changeme", "********", "your-api-key-here", "<redacted>",
                "REPLACE_ME", "TODO", "dummy", "<paste key here>", "sk-...", "XXXX-XXXX-XXXX"]


def n_placeholder_env(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    ph = r.choice(PLACEHOLDERS)
    return (ko(lang, "Added .env.example so new devs know what to fill in:\n", "신규 입사자용 .env.example 추가:\n")
            + f"{var}={ph}\nLOG_LEVEL=info\nPORT=3000")


def n_compose_interp(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return (f"services:\n  api:\n    environment:\n      {var}: ${{{var}}}\n      NODE_ENV: production\n"
            + ko(lang, "# compose picks the value from the shell, nothing is committed", "# 값은 셸 환경에서 가져오므로 커밋되는 건 없음"))


def n_gha_secret_ref(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return (ko(lang, "Moved the token into repository secrets; workflow now reads:\n", "토큰을 repository secret으로 옮기고 워크플로는 이렇게 참조:\n")
            + f"    env:\n      {var}: ${{{{ secrets.{var} }}}}")


def n_k8s_ref(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return (f"env:\n  - name: {var}\n    valueFrom:\n      secretKeyRef:\n        name: app-secrets\n        key: {lower_kebab(var)}")


def n_code_env(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    c = r.choice([f"token = os.environ[\"{var}\"]", f"const key = process.env.{var};",
                  f"api_key = os.getenv(\"{var}\", \"\")", f"String secret = System.getenv(\"{var}\");"])
    return ko(lang, f"Read it from the environment instead of hardcoding: `{c}`", f"하드코딩 대신 환경변수에서 읽도록 변경: `{c}`")


def n_docker_digest(r, lang):
    return (f"FROM python:3.12-slim@sha256:{sha(r, 64)}\n"
            + ko(lang, "# pinned by digest so rebuilds are reproducible", "# 재빌드 재현성 위해 digest로 고정"))


def n_git_sha(r, lang):
    return ko(lang, f"The regression came in with commit {sha(r)}; reverted in {sha(r)[:12]}.",
              f"회귀는 커밋 {sha(r)}에서 들어왔고 {sha(r)[:12]}에서 되돌렸다.")


def n_request_id(r, lang):
    return ko(lang, f"Support asked for the request id: X-Request-Id: {uuid(r)} (trace {sha(r, 32)}).",
              f"지원팀에 요청 ID 전달함: X-Request-Id: {uuid(r)} (trace {sha(r, 32)})")


def n_integrity(r, lang):
    pkg = r.choice(["lodash", "react-dom", "esbuild", "axios"])
    v = ver(r)
    integ = base64.b64encode(bytes(r.getrandbits(8) for _ in range(64))).decode()
    return (f"\"node_modules/{pkg}\": {{\n  \"version\": \"{v}\",\n  \"resolved\": \"https://registry.npmjs.org/{pkg}/-/{pkg}-{v}.tgz\",\n"
            f"  \"integrity\": \"sha512-{integ}\"\n}}")


def n_versions(r, lang):
    return ko(lang, f"Pinned terraform {ver(r)}, helm {ver(r)} and kubectl v{ver(r)} in .tool-versions.",
              f".tool-versions에 terraform {ver(r)}, helm {ver(r)}, kubectl v{ver(r)}로 고정함.")


def n_url_nocred(r, lang):
    h = host(r, 'web')
    if r.random() < 0.5:
        return (ko(lang, "pip.conf without credentials (auth comes from keyring):\n", "자격 증명 없는 pip.conf (인증은 keyring이 처리):\n")
                + f"[global]\nindex-url = https://{h}/repository/{r.choice(['pypi', 'pypi-group', 'python'])}/simple\ntimeout = {r.choice([30, 60, 120])}")
    return (ko(lang, "poetry source without credentials (set via POETRY_HTTP_BASIC_* in CI):\n", "자격 증명 없는 poetry source (CI에서 POETRY_HTTP_BASIC_* 로 주입):\n")
            + f"[[tool.poetry.source]]\nname = \"{r.choice(['internal', 'private', 'corp'])}\"\nurl = \"https://{h}/simple/\"\npriority = \"{r.choice(['primary', 'supplemental', 'explicit'])}\"")


def n_talk(r, lang):
    return r.choice([
        ko(lang, "Rotated the Stripe secret key and updated it in the vault; the old one was revoked within the hour.",
           "Stripe 시크릿 키를 교체하고 vault에 갱신함. 이전 키는 한 시간 안에 폐기했다."),
        ko(lang, "Never pass the DB password with -p on the command line; it shows up in ps output.",
           "DB 비밀번호를 커맨드라인 -p로 넘기지 말 것. ps 출력에 그대로 보인다."),
        ko(lang, "The GitHub token needs the `repo` and `workflow` scopes, otherwise the release job 403s.",
           "GitHub 토큰에 repo, workflow 스코프가 있어야 릴리스 잡이 403 안 남."),
        ko(lang, "If the API key is missing the client falls back to anonymous mode and gets rate-limited at 60 req/h.",
           "API 키가 없으면 클라이언트가 익명 모드로 떨어지고 시간당 60회로 제한됨."),
        ko(lang, "Secrets in docker-compose should come from an env_file that is listed in .gitignore, never from the compose file itself.",
           "docker-compose 시크릿은 .gitignore에 들어간 env_file에서 읽게 하고 compose 파일에는 절대 직접 쓰지 말 것."),
        ko(lang, "The Kubernetes Secret is only base64-encoded, so anyone with `get secrets` RBAC can read the password.",
           "쿠버네티스 Secret은 base64 인코딩일 뿐이라 get secrets 권한만 있으면 비밀번호를 볼 수 있다."),
        ko(lang, "Heroku API keys do not expire, so we switched CI to short-lived OAuth authorizations.",
           "Heroku API 키는 만료가 없어서 CI는 단기 OAuth authorization으로 바꿨다."),
        ko(lang, "The npm token was scoped to read-only and restricted to the CI IP range after the incident.",
           "사고 이후 npm 토큰은 read-only 권한에 CI IP 대역으로만 제한했다."),
        ko(lang, "psql ignores ~/.pgpass unless the file mode is 0600; it prints no warning about it.",
           "~/.pgpass 권한이 0600이 아니면 psql이 경고 없이 그냥 무시한다."),
        ko(lang, "Terraform state stores the RDS master password in plain text, so the S3 backend bucket must be encrypted.",
           "Terraform state에 RDS 마스터 비밀번호가 평문으로 남으므로 S3 백엔드 버킷은 반드시 암호화할 것."),
    ])


def n_pubkey(r, lang):
    body = "AAAAC3NzaC1lZDI1NTE5AAAAI" + s(r, B64, 43)
    return (ko(lang, "Added the deploy public key to authorized_keys:\n", "배포용 공개키를 authorized_keys에 추가:\n")
            + f"ssh-ed25519 {body} deploy@ci")


def n_ps_prompt(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return (f"$env:{var} = Read-Host -Prompt \"{var}\" -AsSecureString | ConvertFrom-SecureString -AsPlainText\n"
            + ko(lang, "# prompts instead of storing the value in the profile", "# 프로필에 저장하지 않고 매번 입력받음"))


def n_tf_sensitive(r, lang):
    v = r.choice(["db_password", "master_password", "admin_pass", "rds_password"])
    res = r.choice(["main", "orders", "reporting", "primary"])
    return (f"variable \"{v}\" {{\n  type      = string\n  sensitive = true\n}}\n\n"
            f"resource \"aws_db_instance\" \"{res}\" {{\n  instance_class = \"db.t4g.{r.choice(['micro', 'small', 'medium'])}\"\n  password = var.{v}\n}}")


def n_sha256sum(r, lang):
    v = ver(r)
    return (ko(lang, "Verified the download:\n", "다운로드 파일 검증:\n")
            + f"$ sha256sum terraform_{v}_linux_amd64.zip\n{sha(r, 64)}  terraform_{v}_linux_amd64.zip")


def n_configmap_b64(r, lang):
    raw = r.choice([f"log_level={r.choice(['info', 'debug', 'warn'])}\nfeature_x={r.choice(['true', 'false'])}\n",
                    f'{{"theme":"{r.choice(["dark", "light"])}","pageSize":{r.choice([20, 50, 100])}}}',
                    f"server.port={r.choice([8080, 9000, 3000])}\nworkers={r.randint(2, 16)}\n"]).encode()
    nm = r.choice(["app-config", "feature-flags", "web-settings", "worker-tuning"])
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {nm}\nbinaryData:\n  settings: {base64.b64encode(raw).decode()}")


def n_conn_no_pw(r, lang):
    return r.choice([
        f"DATABASE_URL=postgres://{user(r)}@{host(r)}:5432/{dbname(r)}",
        f"Server={host(r)};Database={dbname(r)};Integrated Security=true;TrustServerCertificate=True;",
        f"MONGODB_URI=mongodb://localhost:27017/{dbname(r)}",
        f"REDIS_URL=redis://{host(r, 'redis')}:6379/0",
    ]) + "\n" + ko(lang, "(auth via IAM / peer auth, no password in the string)", "(IAM/peer 인증이라 문자열에 비밀번호 없음)")


def n_stdin_login(r, lang):
    return r.choice([
        "echo \"$CR_PAT\" | docker login ghcr.io -u USERNAME --password-stdin",
        "gh auth login --with-token < ~/.config/gh/token.txt",
        "aws ecr get-login-password --region ap-northeast-2 | docker login --username AWS --password-stdin 123456789012.dkr.ecr.ap-northeast-2.amazonaws.com",
        "mysql -h db.internal -u app -p orders",
    ]) + "\n" + ko(lang, "# value is never on the command line", "# 값이 커맨드라인에 남지 않음")


def n_nginx(r, lang):
    loc = r.choice(["/admin/", "/grafana/", "/internal/", "/kibana/", "/metrics/"])
    f = r.choice(["/etc/nginx/.htpasswd", "/etc/nginx/auth/ops.htpasswd", "/etc/apache2/.htpasswd"])
    return (f"location {loc} {{\n    auth_basic \"restricted\";\n    auth_basic_user_file {f};\n"
            f"    proxy_set_header Authorization $http_authorization;\n    proxy_pass http://{r.choice(['backend', '127.0.0.1', 'upstream_api'])}:{r.choice([3000, 8080, 9090])};\n}}")


def n_arn(r, lang):
    return ko(lang, f"The app reads arn:aws:secretsmanager:ap-northeast-2:{num(r, 12)}:secret:prod/db-{s(r, A, 6)} at boot.",
              f"앱은 기동 시 arn:aws:secretsmanager:ap-northeast-2:{num(r, 12)}:secret:prod/db-{s(r, A, 6)}를 읽는다.")


def n_cmd_ref(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return f"set {var}=%{var}_PROD%\ncall deploy.cmd"


def n_go_sum(r, lang):
    h = base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()
    return f"github.com/{r.choice(['spf13/cobra', 'rs/zerolog', 'stretchr/testify'])} v{ver(r)} h1:{h}"


def n_systemd_file(r, lang):
    a = r.choice(["api", "worker", "billing", "exporter", "gateway"])
    c = r.choice(["db-password", "api-token", "smtp-pass", "tls-key"])
    return (f"[Service]\nEnvironmentFile=/etc/{a}/{a}.env\nLoadCredential={c}:/etc/credstore/{c}\n"
            f"ExecStart=/opt/{a}/bin/{a} --config /etc/{a}/config.yaml")


def n_helm_tpl(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return (f"env:\n  - name: {var}\n    value: {{{{ .Values.secrets.{camel(var)} | quote }}}}\n"
            + ko(lang, "# actual value comes from sops-encrypted values file", "# 실제 값은 sops로 암호화된 values 파일에서 옴"))


def n_ansible_vault(r, lang):
    a = lower_snake(r.choice(VALUE_KINDS)[2][0])
    b = r.choice(VALUE_KINDS)[2][0]
    return f"{a}: \"{{{{ vault_{a} }}}}\"\n{lower_snake(b)}: \"{{{{ lookup('env', '{b}') }}}}\""


def n_kid(r, lang):
    return ko(lang, f"JWKS rotation done; new signing key id is kid={s(r, URLS, 22)}, old kid kept for 24h.",
              f"JWKS 교체 완료. 새 서명 키 kid={s(r, URLS, 22)}, 이전 kid는 24시간 유지.")


def n_properties_ref(r, lang):
    pre = r.choice(["spring.datasource", "app.db", "spring.rabbitmq", "spring.mail"])
    return f"{pre}.username=${{{pre.split('.')[-1].upper()}_USER}}\n{pre}.password=${{{pre.split('.')[-1].upper()}_PASSWORD}}\nserver.port={r.choice([8080, 8443, 9000])}"


def n_xml_ph(r, lang):
    i = r.choice(["nexus", "internal-releases", "ossrh", "github", "artifactory"])
    e = i.upper().replace("-", "_")
    return f"<server>\n  <id>{i}</id>\n  <username>${{env.{e}_USER}}</username>\n  <password>${{env.{e}_PASSWORD}}</password>\n</server>"


def n_npmrc_var(r, lang):
    sc = r.choice(["acme", "platform", "shop", "internal"])
    reg = r.choice(["registry.npmjs.org", "npm.pkg.github.com", "gitlab.com/api/v4/packages/npm"])
    return f"//{reg}/:_authToken=${{{r.choice(['NPM_TOKEN', 'NODE_AUTH_TOKEN', 'CI_JOB_TOKEN'])}}}\n@{sc}:registry=https://{reg}/"


def n_long_ident(r, lang):
    nm = "".join(r.sample(["Token", "Refresh", "Scheduler", "Configuration", "Properties", "Validator", "Secret",
                            "Credential", "Provider", "Factory", "Rotation", "Password", "Policy"], 6))
    pk = r.choice(["auth/config", "security/vault", "infra/credentials", "billing/keys"])
    return ko(lang, f"Renamed {nm} to keep checkstyle happy; path src/main/java/com/acme/{pk}/{nm}.java",
              f"checkstyle 때문에 {nm} 이름 변경함. 경로 src/main/java/com/acme/{pk}/{nm}.java")


def n_settings_numbers(r, lang):
    return (f"TOKEN_TTL_SECONDS={r.choice([900, 3600, 86400])}\nPASSWORD_MIN_LENGTH={r.randint(10, 16)}\n"
            f"SESSION_COOKIE_NAME=sid\nAUTH_PROVIDER=oidc\nAWS_REGION=ap-northeast-2\nAWS_PROFILE=prod")


def n_cargo_git(r, lang):
    return f"[dependencies]\nserde = {{ version = \"{ver(r)}\", features = [\"derive\"] }}\ninternal-auth = {{ git = \"https://github.com/acme/internal-auth\", rev = \"{sha(r)}\" }}"


def n_publishable(r, lang):
    return ko(lang, "Frontend only needs the publishable key; e.g. NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=" + "pk_" + "test_" + s(r, A, 24) + " is safe in the bundle.",
              "프론트엔드에는 publishable 키만 넣는다. NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=" + "pk_" + "test_" + s(r, A, 24) + " 는 번들에 들어가도 무방.")


def n_masked(r, lang):
    var = r.choice(VALUE_KINDS)[2][0]
    return f"Run log:\n  {var}: ***\n  " + ko(lang, "(Actions masks secrets automatically)", "(Actions가 시크릿을 자동 마스킹함)")


def n_file_paths(r, lang):
    n = r.choice(["api", "gateway", "wildcard.corp", "mail", "vpn"])
    d = r.choice(["/etc/ssl/private", "/etc/pki/tls/private", "/run/secrets", "/etc/nginx/certs"])
    return ko(lang, f"Certificates live at {d}/{n}.key and /etc/ssl/certs/{n}.crt; the key file is mode 0600 and owned by root.",
              f"인증서는 {d}/{n}.key, /etc/ssl/certs/{n}.crt에 있음. 키 파일은 0600, root 소유.")


def n_docker_images(r, lang):
    return ("$ docker images\nREPOSITORY          TAG       IMAGE ID       CREATED       SIZE\n"
            f"ghcr.io/acme/api    {ver(r)}     {sha(r, 12)}   2 days ago    {r.randint(80, 400)}MB")


NEG_DEV = [("placeholder", n_placeholder_env), ("env_ref", n_compose_interp), ("secret_ref", n_gha_secret_ref),
           ("docker_digest", n_docker_digest), ("git_sha", n_git_sha), ("request_id", n_request_id),
           ("npm_integrity", n_integrity), ("version", n_versions), ("url_no_creds", n_url_nocred),
           ("prose", n_talk), ("public_key", n_pubkey), ("prompt", n_ps_prompt), ("checksum", n_sha256sum),
           ("conn_no_password", n_conn_no_pw), ("stdin_login", n_stdin_login), ("long_identifier", n_long_ident),
           ("properties_ref", n_properties_ref), ("settings", n_settings_numbers), ("publishable_key", n_publishable)]
NEG_HELD = [("secret_ref", n_k8s_ref), ("code_env", n_code_env), ("terraform_var", n_tf_sensitive),
            ("base64_config", n_configmap_b64), ("nginx", n_nginx), ("arn", n_arn), ("env_ref", n_cmd_ref),
            ("go_sum", n_go_sum), ("systemd_ref", n_systemd_file), ("helm_template", n_helm_tpl),
            ("ansible_ref", n_ansible_vault), ("key_id", n_kid), ("xml_ref", n_xml_ph), ("npmrc_ref", n_npmrc_var),
            ("cargo_git", n_cargo_git), ("masked", n_masked), ("file_path", n_file_paths),
            ("docker_images", n_docker_images)]


# placeholder values run through the part's own renderers (negatives too)
RENDER_PH = ["<YOUR_TOKEN>", "changeme", "xxxxxxxxxxxxxxxxxxxx", "${SECRET_VALUE}", "********", "<api-key>",
             "your_password_here", "{{ secret }}"]
NEG_WRAP = {
    "en": ["Template for the docs (fill in your own value):\n{snip}", "{snip}\n(placeholder only, real value is in the vault)",
           "Example shape of the config, values intentionally fake:\n{snip}"],
    "ko": ["문서용 템플릿 (값은 각자 채울 것):\n{snip}", "{snip}\n(자리표시자임, 실제 값은 vault에 있음)",
           "설정 형태 예시, 값은 일부러 가짜로 넣음:\n{snip}"],
}
NEG_WRAP_H = {
    "en": ["Sample config for the README, no real credentials:\n{snip}", "{snip}\n^ dummy value, CI injects the real one"],
    "ko": ["README 예시 설정 (실제 자격 증명 없음):\n{snip}", "{snip}\n^ 더미 값, 실제 값은 CI가 주입함"],
}


# ---------------------------------------------------------------------------

PER_KIND = 6
GENERIC_SVC = {"DB_PASSWORD": "the database", "POSTGRES_PASSWORD": "Postgres", "MYSQL_ROOT_PASSWORD": "MySQL",
               "REDIS_PASSWORD": "Redis", "ADMIN_PASSWORD": "the admin console", "KEYSTORE_PASSWORD": "the Java keystore",
               "RABBITMQ_DEFAULT_PASS": "RabbitMQ", "SMTP_PASSWORD": "SMTP", "LDAP_BIND_PASSWORD": "LDAP",
               "JWT_SECRET": "JWT auth", "SESSION_SECRET": "session middleware", "NEXTAUTH_SECRET": "NextAuth",
               "COOKIE_SECRET": "cookie signing", "APP_SECRET": "the app", "HMAC_SECRET": "HMAC signing",
               "PAYMENTS_API_KEY": "the payments API", "INTERNAL_API_KEY": "the internal API",
               "PARTNER_API_KEY": "the partner API", "GEOCODER_API_KEY": "the geocoder", "WEATHER_API_KEY": "the weather API",
               "GITHUB_WEBHOOK_SECRET": "the GitHub webhook", "WEBHOOK_SIGNING_SECRET": "webhook signing",
               "ENCRYPTION_KEY": "field encryption", "FIELD_ENCRYPTION_KEY": "field encryption",
               "BACKUP_ENCRYPTION_KEY": "backup encryption", "KEYCLOAK_CLIENT_SECRET": "Keycloak",
               "AUTH0_CLIENT_SECRET": "Auth0"}
HANGUL = __import__("re").compile("[\uac00-\ud7a3]")
KO_LEADS_DEV = ["작업 끝나고 남기는 메모. 이 설정으로 동작 확인함:\n{snip}",
                "{snip}\n# 위 명령으로 해결됨 (다음에도 동일하게)",
                "배포 스크립트에서 그대로 가져온 부분:\n{snip}"]
KO_NEG_LEADS_DEV = ["설정 정리하면서 확인한 부분 (문제 없음):\n{snip}", "{snip}\n# 참고용으로 남김"]
KO_NEG_LEADS_HELD = ["리뷰하면서 확인한 내용, 민감한 값은 없음.\n\n{snip}", "{snip}\n→ 이 부분은 그대로 둬도 됨"]
EN_NEG_LEADS_DEV = ["Relevant bit of the config after the cleanup:\n{snip}", "{snip}\n# keeping this for reference"]
EN_NEG_LEADS_HELD = ["Reviewed this block, nothing sensitive in it:\n\n{snip}", "{snip}\n-> safe to leave as is"]
KO_LEADS_HELD = ["참고용으로 서버에서 실제 쓰던 설정을 붙여둠.\n\n{snip}",
                 "{snip}\n이렇게 해야 인증이 통과한다는 걸 한참 헤매고 알았음",
                 "인수인계 문서에 있던 내용 그대로:\n{snip}"]


def corpus(part):
    if part not in SEEDS:
        raise ValueError(part)
    r = random.Random(SEEDS[part])
    dev = part == "dev"
    renderers = DEV_RENDERERS if dev else HELD_RENDERERS
    wraps = DEV_WRAP if dev else HELD_WRAP
    out = []
    tags = []

    def lang_pick():
        return "ko" if r.random() < 0.34 else "en"

    for kind, gen, vars_, svc, _src in VALUE_KINDS:
        pool = [x for x in renderers if not (x[0] in HEADER_RENDERERS and kind in NO_HEADER_KINDS)]
        order = r.sample(pool, len(pool))
        for i in range(PER_KIND):
            lang = lang_pick()
            rid, fn, single = order[i % len(order)]
            var = r.choice(vars_)
            val, secrets = gen(r)
            svc_l = GENERIC_SVC.get(var, svc)
            if lang == "ko":
                svc_l = svc_l.removeprefix("the ")
            elif svc_l.startswith("the "):
                svc_l = svc_l  # sentence-initial "the" is fixed below

            snip = fn(r, var, val, lang)
            tag = [f"{part}|r:{rid}"]
            text = wrap(r, wraps, lang, single and "\n" not in snip, svc_l, var, snip, tag)
            tags.append(tag[-1])
            out.append((text, kind, tuple(secrets), lang))

    for kind, dforms, hforms, _src in STRUCT_KINDS:
        forms = dforms if dev else hforms
        for i in range(PER_KIND):
            lang = lang_pick()
            f = forms[i % len(forms)]
            text, secrets = f(r, lang)
            if lang == "ko" and not HANGUL.search(text):
                leads = KO_LEADS_DEV if dev else KO_LEADS_HELD
                j = r.randrange(len(leads))
                text = leads[j].format(snip=text)
                tags.append(f"{part}|lead{part[0]}:{j}")
            tags.append(f"{part}|s:{f.__name__}")
            out.append((text, kind, tuple(secrets), lang))

    npos = len(out)
    negs = NEG_DEV if dev else NEG_HELD
    nwrap = NEG_WRAP if dev else NEG_WRAP_H
    target = int(npos * 0.45)
    i = 0
    ni = 0
    seen = set()
    while len(out) - npos < target:
        lang = lang_pick()
        if i % 3 == 2:
            rid, fn, _ = r.choice([x for x in renderers if x[0] not in HEADER_RENDERERS])
            var = r.choice(VALUE_KINDS)[2][0]
            snip = fn(r, var, r.choice(RENDER_PH), lang)
            text = r.choice(nwrap[lang]).format(snip=snip)
            out.append((text, "neg:placeholder_config", (), lang))
        else:
            cat, fn = negs[ni % len(negs)]
            ni += 1
            text = None
            for _ in range(8):
                cand = fn(r, lang)
                if lang == "ko" and not HANGUL.search(cand):
                    cand = r.choice(KO_NEG_LEADS_DEV if dev else KO_NEG_LEADS_HELD).format(snip=cand)
                elif lang == "en" and r.random() < 0.4 and "\n" in cand and cand.split("\n")[0][-1:] not in ":)":
                    cand = r.choice(EN_NEG_LEADS_DEV if dev else EN_NEG_LEADS_HELD).format(snip=cand)
                if cand not in seen:
                    text = cand
                    break
            if text is None:
                i += 1
                continue
            seen.add(text)
            out.append((text, "neg:" + cat, (), lang))
        i += 1
    r.shuffle(out)
    corpus.tags = getattr(corpus, "tags", {})
    corpus.tags[part] = tags
    return out


def _check():
    parts = {p: corpus(p) for p in ("dev", "heldout")}
    for p, items in parts.items():
        for text, kind, secrets, lang in items:
            assert "[REDACTED]" not in text, text
            assert lang in ("en", "ko")
            for sct in secrets:
                assert sct and sct in text, (kind, sct, text)
            if kind.startswith("neg:"):
                assert secrets == ()
            else:
                assert secrets, kind
    td = {t.split("|", 1)[1] for t in corpus.tags["dev"]}
    th = {t.split("|", 1)[1] for t in corpus.tags["heldout"]}
    assert not (td & th), td & th
    return parts


if __name__ == "__main__":
    parts = _check()
    for p, items in parts.items():
        pos = [x for x in items if not x[1].startswith("neg:")]
        neg = [x for x in items if x[1].startswith("neg:")]
        kinds = sorted({x[1] for x in pos})
        ko_share = sum(1 for x in items if x[3] == "ko") / len(items)
        print(f"== {p}: positives={len(pos)} negatives={len(neg)} kinds={len(kinds)} ko_share={ko_share:.2f}")
        rr = random.Random(7)
        for text, kind, secrets, lang in rr.sample(pos, 3) + rr.sample(neg, 3):
            print(f"--- [{kind}] ({lang}) secrets={secrets}\n{text}\n")
