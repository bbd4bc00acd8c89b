"""Writer G: a mixed 'memory file' corpus for a secret redactor.

Every value is generated at run time from a seeded random.Random; no credential-shaped
literal is written in this source (prefixes are split).

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

AN = string.ascii_letters + string.digits
LO = string.ascii_lowercase + string.digits
UP = string.ascii_uppercase + string.digits
HX = "0123456789abcdef"
B64 = AN + "+/"
URLS = AN + "-_"
BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def rs(r, alpha, n):
    return "".join(r.choice(alpha) for _ in range(n))


def b64u(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


WORDS = ["Maple", "Hanbit", "Sunny", "Tiger", "Ocean", "Winter", "Spring", "Falcon", "Coffee",
         "Seoul", "Busan", "Purple", "Rocket", "Mango", "Dragon", "Nabi", "Pangyo", "Harbor"]


def human_pw(r, urlsafe=False):
    sym = "!*_-." if urlsafe else "!@#$%&*?"
    f = r.randrange(4)
    w1, w2 = r.choice(WORDS), r.choice(WORDS).lower()
    if f == 0:
        return f"{w1}{r.randrange(1990, 2027)}{r.choice(sym)}"
    if f == 1:
        return f"{w1}{r.choice(sym)}{w2}{r.randrange(10, 99)}"
    if f == 2:
        return f"{w1[0].lower()}{w1[1:]}{r.choice(sym)}{r.randrange(100, 9999)}{r.choice(sym)}{w2[:3].upper()}"
    return rs(r, AN, 6) + r.choice(sym) + rs(r, AN, 7)


def jwt(r, payload=None):
    h = b64u(json.dumps({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    p = payload or {"sub": str(r.randrange(10**5, 10**8)), "iat": r.randrange(1600000000, 1800000000),
                    "role": r.choice(["user", "admin", "svc"])}
    return h + "." + b64u(json.dumps(p).encode()) + "." + rs(r, URLS, 43)


def pem_body(r, n):
    lines = [rs(r, B64, 64) for _ in range(n)]
    lines.append(rs(r, B64, r.randrange(20, 60)) + "==")
    return lines


DASH = "-" * 5


def pem(r, label, n=4):
    body = pem_body(r, n)
    if label == "OPENSSH":
        body[0] = "b3BlbnNzaC1rZXktdjEAAAAA" + body[0][24:]
    beg = DASH + "BEGIN " + label + " PRIVATE" + " KEY" + DASH
    end = DASH + "END " + label + " PRIVATE" + " KEY" + DASH
    return beg + "\n" + "\n".join(body) + "\n" + end, tuple(body)


def tok(prefix, alpha, n, suffix=""):
    return lambda r: (prefix + rs(r, alpha, n) + suffix,)


def uuid(r):
    h = rs(r, HX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


# ---- kinds: (kind, service display name, env names, generator -> (display, *secrets), style, source)
def K(kind, svc, envs, gen, style="tok", src="gitleaks"):
    return dict(kind=kind, svc=svc, envs=envs, gen=gen, style=style, src=src)


def _single(f):
    def g(r):
        v = f(r)[0]
        return v, (v,)
    return g


def _url(scheme, user, host, path, urlsafe=True):
    def g(r):
        pw = human_pw(r, urlsafe) if r.random() < .5 else rs(r, AN, r.randrange(14, 24))
        return f"{scheme}://{user}:{pw}@{host}{path}", (pw,)
    return g


def _slack_hook(r):
    t = rs(r, AN, 24)
    return f"https://hooks.slack.com/services/T{rs(r, UP, 10)}/B{rs(r, UP, 10)}/{t}", (t,)


def _discord_hook(r):
    t = rs(r, URLS, 68)
    return f"https://discord.com/api/webhooks/{r.randrange(10**17, 10**18)}/{t}", (t,)


def _teams_hook(r):
    t = rs(r, HX, 32)
    return (f"https://contoso.webhook.office.com/webhookb2/{uuid(r)}@{uuid(r)}/IncomingWebhook/{t}/{uuid(r)}/V2"
            + rs(r, AN, 40)), (t,)


def _bearer(r):
    t = rs(r, URLS, r.randrange(32, 48))
    return "Authorization: Bearer " + t, (t,)


def _basic_hdr(r):
    u = r.choice(["deploy", "ci-bot", "admin", "svc_reports"])
    t = base64.b64encode(f"{u}:{human_pw(r)}".encode()).decode()
    return "Authorization: Basic " + t, (t,)


def _apikey_hdr(r):
    t = rs(r, AN, 40)
    return "X-API-Key: " + t, (t,)


def _cookie(r):
    t = rs(r, URLS, r.randrange(32, 64))
    n = r.choice(["sessionid", "connect.sid", "_gitlab_session", "laravel_session", "JSESSIONID"])
    return f"Cookie: {n}={t}", (t,)


def _jwt_plain(r):
    v = jwt(r)
    return v, (v,)


def _supabase(r):
    v = jwt(r, {"iss": "supabase", "ref": rs(r, string.ascii_lowercase, 20), "role": "service_role",
                "iat": r.randrange(1600000000, 1700000000), "exp": r.randrange(1900000000, 2100000000)})
    return v, (v,)


def _mssql(r):
    pw = human_pw(r)
    return (f"Server=tcp:sql-{rs(r, LO, 6)}.database.windows.net,1433;Database=orders;User ID=app_rw;"
            f"Password={pw};Encrypt=True;"), (pw,)


def _jdbc(r):
    pw = human_pw(r, True)
    return f"jdbc:mysql://db-internal:3306/billing?user=billing&password={pw}&useSSL=true", (pw,)


def _azure_conn(r):
    k = rs(r, B64, 86) + "=="
    return (f"DefaultEndpointsProtocol=https;AccountName=st{rs(r, LO, 8)};AccountKey={k};"
            "EndpointSuffix=core.windows.net"), (k,)


def _sas(r):
    s = rs(r, B64, 43) + "%3D"
    return f"https://st{rs(r, LO, 6)}.blob.core.windows.net/exports?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-12-31&sig={s}", (s,)


def _k8s_b64(r):
    v = base64.b64encode(human_pw(r).encode()).decode()
    return v, (v,)


def _docker_auth(r):
    v = base64.b64encode(f"ci-push:{rs(r, AN, 20)}".encode()).decode()
    return v, (v,)


def _git_cred(r):
    t = "gl" + "pat-" + rs(r, URLS, 20)
    return f"https://oauth2:{t}@gitlab.internal.example.com/platform/infra.git", (t,)


def _pip_idx(r):
    t = rs(r, AN, 32)
    return f"https://__token__:{t}@pkgs.example-corp.dev/simple/", (t,)


def _atlassian(r):
    v = "ATATT" + "3xFfGF0" + rs(r, URLS, 170) + "=" + rs(r, UP, 8)
    return v, (v,)


def _mailchimp(r):
    v = rs(r, HX, 32) + "-us" + str(r.randrange(2, 21))
    return v, (v,)


def _hubspot(r):
    v = "pat-" + "na1-" + uuid(r)
    return v, (v,)


def _ld(r):
    v = "api" + "-" + uuid(r)
    return v, (v,)


def _firebase(r):
    v = "AAAA" + rs(r, URLS, 7) + ":APA91b" + rs(r, URLS, 134)
    return v, (v,)


def _discord_bot(r):
    v = b64u(str(r.randrange(10**17, 10**18)).encode()) + "." + rs(r, URLS, 6) + "." + rs(r, URLS, 38)
    return v, (v,)


def _telegram(r):
    v = f"{r.randrange(10**8, 10**10)}:AA{rs(r, URLS, 33)}"
    return v, (v,)


def _pem(label):
    return lambda r: pem(r, label, r.randrange(3, 6))


def _laravel(r):
    v = "base64:" + base64.b64encode(bytes(r.randrange(256) for _ in range(32))).decode()
    return v, (v,)


def _ops(r):
    p = b64u(json.dumps({"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096"},
                         "email": rs(r, LO, 12) + "@1passwordserviceaccounts.com",
                         "srpX": rs(r, HX, 64), "muk": {"k": rs(r, URLS, 43)}}).encode())
    v = "ops" + "_" + p.replace("-", "A").replace("_", "B")
    return v, (v,)


KINDS = [
    K("aws_access_key_id", "AWS", ["AWS_ACCESS_KEY_ID"], _single(tok("AK" + "IA", string.ascii_uppercase + "234567", 16))),
    K("aws_secret_access_key", "AWS", ["AWS_SECRET_ACCESS_KEY", "aws_secret_access_key"], _single(tok("", B64, 40)), src="gitleaks aws.go / detect-secrets aws"),
    K("github_pat", "GitHub", ["GITHUB_TOKEN", "GH_TOKEN"], _single(tok("gh" + "p_", AN, 36))),
    K("github_oauth", "GitHub OAuth", ["GITHUB_OAUTH_TOKEN"], _single(tok("gh" + "o_", AN, 36))),
    K("github_app_token", "GitHub App", ["GH_APP_INSTALL_TOKEN"], _single(tok("gh" + "s_", AN, 36))),
    K("github_fine_grained_pat", "GitHub", ["GITHUB_PAT", "RELEASE_TOKEN"], _single(lambda r: ("github" + "_pat_11" + rs(r, UP, 20) + "_" + rs(r, AN, 59),))),
    K("gitlab_pat", "GitLab", ["GITLAB_TOKEN", "CI_PUSH_TOKEN"], _single(tok("gl" + "pat-", URLS, 20))),
    K("gitlab_runner_token", "GitLab Runner", ["RUNNER_TOKEN"], _single(tok("gl" + "rt-", URLS, 20))),
    K("gitlab_deploy_url", "GitLab", ["INFRA_REPO_URL"], _git_cred, style="url"),
    K("slack_bot_token", "Slack", ["SLACK_BOT_TOKEN"], _single(lambda r: ("xox" + "b-" + str(r.randrange(10**10, 10**12)) + "-" + str(r.randrange(10**11, 10**13)) + "-" + rs(r, AN, 24),))),
    K("slack_user_token", "Slack", ["SLACK_USER_TOKEN"], _single(lambda r: ("xox" + "p-" + str(r.randrange(10**10, 10**12)) + "-" + str(r.randrange(10**10, 10**12)) + "-" + str(r.randrange(10**11, 10**13)) + "-" + rs(r, HX, 32),))),
    K("slack_webhook", "Slack", ["SLACK_WEBHOOK_URL"], _slack_hook, style="url", src="gitleaks slack.go"),
    K("discord_webhook", "Discord", ["DISCORD_WEBHOOK"], _discord_hook, style="url", src="trufflehog discordwebhook"),
    K("discord_bot_token", "Discord", ["DISCORD_BOT_TOKEN"], _discord_bot, src="gitleaks discord.go / trufflehog discordbottoken"),
    K("teams_webhook", "MS Teams", ["TEAMS_WEBHOOK_URL"], _teams_hook, style="url", src="gitleaks teams.go"),
    K("telegram_bot_token", "Telegram", ["TELEGRAM_BOT_TOKEN", "TG_TOKEN"], _telegram),
    K("stripe_secret_key", "Stripe", ["STRIPE_SECRET_KEY"], _single(tok("sk" + "_live_", AN, 99))),
    K("stripe_restricted_key", "Stripe", ["STRIPE_RESTRICTED_KEY"], _single(tok("rk" + "_live_", AN, 99))),
    K("stripe_webhook_secret", "Stripe webhook", ["STRIPE_WEBHOOK_SECRET"], _single(tok("wh" + "sec_", AN, 32)), src="trufflehog stripe / secretlint"),
    K("square_access_token", "Square", ["SQUARE_ACCESS_TOKEN"], _single(tok("EA" + "AA", URLS, 60))),
    K("shopify_access_token", "Shopify", ["SHOPIFY_ADMIN_TOKEN"], _single(tok("shp" + "at_", HX, 32))),
    K("openai_api_key", "OpenAI", ["OPENAI_API_KEY"], _single(lambda r: ("sk-" + "proj-" + rs(r, URLS, 74) + "T3Blbk" + "FJ" + rs(r, URLS, 74),))),
    K("anthropic_api_key", "Anthropic", ["ANTHROPIC_API_KEY"], _single(lambda r: ("sk-" + "ant-api03-" + rs(r, URLS, 93) + "AA",))),
    K("huggingface_token", "Hugging Face", ["HF_TOKEN"], _single(tok("h" + "f_", string.ascii_letters, 34))),
    K("groq_api_key", "Groq", ["GROQ_API_KEY"], _single(tok("gs" + "k_", AN, 52)), src="trufflehog groq"),
    K("perplexity_api_key", "Perplexity", ["PPLX_API_KEY"], _single(tok("pp" + "lx-", AN, 48))),
    K("xai_api_key", "xAI", ["XAI_API_KEY"], _single(tok("xa" + "i-", AN, 80)), src="trufflehog xai"),
    K("replicate_token", "Replicate", ["REPLICATE_API_TOKEN"], _single(tok("r8" + "_", AN, 37)), src="trufflehog replicate"),
    K("langsmith_api_key", "LangSmith", ["LANGCHAIN_API_KEY"], _single(lambda r: ("lsv2" + "_pt_" + rs(r, HX, 32) + "_" + rs(r, HX, 10),)), src="trufflehog langsmith"),
    K("cohere_api_key", "Cohere", ["COHERE_API_KEY", "CO_API_KEY"], _single(tok("", AN, 40)), src="gitleaks cohere.go (name-only)"),
    K("mistral_api_key", "Mistral", ["MISTRAL_API_KEY"], _single(tok("", AN, 32)), src="trufflehog mistral (name-only)"),
    K("deepseek_api_key", "DeepSeek", ["DEEPSEEK_API_KEY"], _single(tok("sk" + "-", HX, 32)), src="trufflehog deepseek"),
    K("google_api_key", "Google Maps/Gemini", ["GOOGLE_API_KEY", "GEMINI_API_KEY"], _single(tok("AI" + "za", URLS, 35)), src="gitleaks gcp.go"),
    K("google_oauth_client_secret", "Google OAuth", ["GOOGLE_CLIENT_SECRET"], _single(tok("GOC" + "SPX-", URLS, 28)), src="trufflehog googleoauth2"),
    K("google_refresh_token", "Google OAuth", ["GOOGLE_REFRESH_TOKEN"], _single(lambda r: ("1" + "//0" + rs(r, URLS, 100),)), src="trufflehog gcp / detect-secrets"),
    K("firebase_server_key", "FCM", ["FCM_SERVER_KEY"], _firebase, src="trufflehog firebasecloudmessaging"),
    K("azure_storage_key", "Azure Storage", ["AZURE_STORAGE_CONNECTION_STRING"], _azure_conn, style="url", src="gitleaks azure.go / detect-secrets azure"),
    K("azure_sas_token", "Azure Blob", ["EXPORT_SAS_URL"], _sas, style="url", src="trufflehog azure sas"),
    K("azure_client_secret", "Azure AD", ["AZURE_CLIENT_SECRET"], _single(lambda r: (rs(r, AN, 3) + "8Q" + "~" + rs(r, URLS + "~.", 34),)), src="gitleaks azure.go"),
    K("sendgrid_api_key", "SendGrid", ["SENDGRID_API_KEY"], _single(lambda r: ("S" + "G." + rs(r, URLS, 22) + "." + rs(r, URLS, 43),))),
    K("mailgun_api_key", "Mailgun", ["MAILGUN_API_KEY"], _single(tok("ke" + "y-", HX, 32))),
    K("mailchimp_api_key", "Mailchimp", ["MAILCHIMP_API_KEY"], _mailchimp),
    K("brevo_api_key", "Brevo (Sendinblue)", ["BREVO_API_KEY"], _single(lambda r: ("xkey" + "sib-" + rs(r, HX, 64) + "-" + rs(r, AN, 16),)), src="gitleaks sendinblue.go"),
    K("twilio_api_key", "Twilio", ["TWILIO_API_KEY_SID"], _single(tok("S" + "K", HX, 32)), src="gitleaks twilio.go"),
    K("twilio_auth_token", "Twilio", ["TWILIO_AUTH_TOKEN"], _single(tok("", HX, 32)), src="trufflehog twilio (name-only)"),
    K("npm_token", "npm", ["NPM_TOKEN"], _single(tok("np" + "m_", AN, 36))),
    K("pypi_token", "PyPI", ["PYPI_API_TOKEN", "TWINE_PASSWORD"], _single(lambda r: ("pyp" + "i-AgEIcHlwaS5vcmc" + rs(r, URLS, 120),))),
    K("rubygems_api_key", "RubyGems", ["GEM_HOST_API_KEY"], _single(tok("rubyg" + "ems_", HX, 48))),
    K("nuget_api_key", "NuGet", ["NUGET_API_KEY"], _single(tok("oy" + "2", LO, 43)), src="trufflehog nugetapikey"),
    K("dockerhub_pat", "Docker Hub", ["DOCKERHUB_TOKEN"], _single(tok("dck" + "r_pat_", URLS, 27)), src="trufflehog dockerhub"),
    K("docker_config_auth", "Docker registry", ["auth"], _docker_auth, src="secretlint / detect-secrets base64 auth"),
    K("digitalocean_token", "DigitalOcean", ["DIGITALOCEAN_TOKEN"], _single(tok("do" + "p_v1_", HX, 64))),
    K("heroku_api_key", "Heroku", ["HEROKU_API_KEY"], _single(tok("HR" + "KU-AA", URLS, 58))),
    K("vercel_token", "Vercel", ["VERCEL_TOKEN"], _single(tok("", AN, 24)), src="trufflehog vercel (name-only)"),
    K("netlify_token", "Netlify", ["NETLIFY_AUTH_TOKEN"], _single(tok("", URLS, 43)), src="gitleaks netlify.go (name-only)"),
    K("cloudflare_api_token", "Cloudflare", ["CLOUDFLARE_API_TOKEN", "CF_API_TOKEN"], _single(tok("", URLS, 40)), src="gitleaks cloudflare.go (name-only)"),
    K("fly_token", "Fly.io", ["FLY_API_TOKEN"], _single(tok("fo" + "1_", URLS, 43))),
    K("datadog_api_key", "Datadog", ["DD_API_KEY"], _single(tok("", HX, 32)), src="gitleaks datadog.go (name-only)"),
    K("datadog_app_key", "Datadog", ["DD_APP_KEY"], _single(tok("", HX, 40)), src="trufflehog datadogtoken (name-only)"),
    K("newrelic_user_key", "New Relic", ["NEW_RELIC_API_KEY"], _single(tok("NR" + "AK-", UP, 27))),
    K("sentry_user_token", "Sentry", ["SENTRY_AUTH_TOKEN"], _single(tok("sntr" + "yu_", HX, 64)), src="gitleaks sentry.go"),
    K("grafana_service_account", "Grafana", ["GRAFANA_TOKEN"], _single(lambda r: ("gl" + "sa_" + rs(r, AN, 32) + "_" + rs(r, HX, 8),))),
    K("pagerduty_api_key", "PagerDuty", ["PAGERDUTY_TOKEN"], _single(tok("u+", URLS, 18)), src="trufflehog pagerdutyapikey (name-only)"),
    K("linear_api_key", "Linear", ["LINEAR_API_KEY"], _single(tok("lin" + "_api_", AN, 40))),
    K("notion_token", "Notion", ["NOTION_TOKEN"], _single(lambda r: ("nt" + "n_" + rs(r, string.digits, 11) + rs(r, AN, 35),))),
    K("airtable_pat", "Airtable", ["AIRTABLE_TOKEN"], _single(lambda r: ("pa" + "t" + rs(r, AN, 14) + "." + rs(r, HX, 64),))),
    K("atlassian_api_token", "Jira/Confluence", ["JIRA_API_TOKEN", "ATLASSIAN_TOKEN"], _atlassian),
    K("postman_api_key", "Postman", ["POSTMAN_API_KEY"], _single(lambda r: ("PM" + "AK-" + rs(r, HX, 24) + "-" + rs(r, HX, 34),))),
    K("doppler_token", "Doppler", ["DOPPLER_TOKEN"], _single(tok("dp" + ".pt.", AN, 43))),
    K("vault_token", "Vault", ["VAULT_TOKEN"], _single(tok("hv" + "s.", URLS, 92)), src="gitleaks hashicorp_vault.go"),
    K("terraform_cloud_token", "Terraform Cloud", ["TF_TOKEN_app_terraform_io"], _single(lambda r: (rs(r, AN, 14) + ".atlas" + "v1." + rs(r, URLS, 67),)), src="gitleaks hashicorp.go"),
    K("pulumi_token", "Pulumi", ["PULUMI_ACCESS_TOKEN"], _single(tok("pu" + "l-", HX, 40))),
    K("databricks_token", "Databricks", ["DATABRICKS_TOKEN"], _single(tok("da" + "pi", HX, 32))),
    K("planetscale_password", "PlanetScale", ["DATABASE_PASSWORD"], _single(tok("pscale" + "_pw_", URLS, 43))),
    K("age_secret_key", "age", ["SOPS_AGE_KEY"], _single(tok("AGE-SECRET" + "-KEY-1", BECH, 58))),
    K("okta_api_token", "Okta", ["OKTA_API_TOKEN"], _single(tok("0" + "0", URLS, 40)), src="gitleaks okta.go"),
    K("auth0_client_secret", "Auth0", ["AUTH0_CLIENT_SECRET"], _single(tok("", URLS, 64)), src="trufflehog auth0oauth (name-only)"),
    K("algolia_admin_key", "Algolia", ["ALGOLIA_ADMIN_KEY"], _single(tok("", HX, 32)), src="gitleaks algolia.go (name-only)"),
    K("mapbox_secret_token", "Mapbox", ["MAPBOX_SECRET_TOKEN"], _single(lambda r: ("s" + "k.eyJ1Ijoi" + rs(r, AN, 30) + "." + rs(r, URLS, 22),))),
    K("dropbox_token", "Dropbox", ["DROPBOX_TOKEN"], _single(tok("s" + "l.", URLS, 135))),
    K("figma_token", "Figma", ["FIGMA_TOKEN"], _single(tok("fig" + "d_", URLS, 40)), src="trufflehog figmapersonalaccesstoken"),
    K("contentful_token", "Contentful", ["CONTENTFUL_MANAGEMENT_TOKEN"], _single(tok("CFP" + "AT-", URLS, 43))),
    K("shippo_token", "Shippo", ["SHIPPO_API_KEY"], _single(tok("shippo" + "_live_", HX, 40))),
    K("flutterwave_secret", "Flutterwave", ["FLW_SECRET_KEY"], _single(tok("FLWSE" + "CK-", HX, 32, "-X"))),
    K("razorpay_key_secret", "Razorpay", ["RAZORPAY_KEY_SECRET"], _single(tok("", AN, 24)), src="trufflehog razorpay (name-only)"),
    K("paypal_client_secret", "PayPal", ["PAYPAL_CLIENT_SECRET"], _single(tok("E", URLS, 79)), src="trufflehog paypaloauth (name-only)"),
    K("hubspot_private_app", "HubSpot", ["HUBSPOT_ACCESS_TOKEN"], _hubspot),
    K("zendesk_api_token", "Zendesk", ["ZENDESK_API_TOKEN"], _single(tok("", AN, 40)), src="gitleaks zendesk.go (name-only)"),
    K("fastly_api_token", "Fastly", ["FASTLY_API_TOKEN"], _single(tok("", URLS, 32)), src="gitleaks fastly.go (name-only)"),
    K("circleci_token", "CircleCI", ["CIRCLE_TOKEN"], _single(lambda r: ("CCI" + "PAT_" + rs(r, AN, 22) + "_" + rs(r, HX, 40),)), src="trufflehog circleci"),
    K("buildkite_token", "Buildkite", ["BUILDKITE_API_TOKEN"], _single(tok("bk" + "ua_", HX, 40)), src="trufflehog buildkitev2"),
    K("snyk_token", "Snyk", ["SNYK_TOKEN"], _single(lambda r: (uuid(r),)), src="gitleaks snyk.go (uuid, name-only)"),
    K("sonarqube_token", "SonarQube", ["SONAR_TOKEN"], _single(tok("sq" + "u_", HX, 40)), src="gitleaks sonar.go"),
    K("launchdarkly_token", "LaunchDarkly", ["LD_API_KEY"], _ld),
    K("onepassword_service_token", "1Password", ["OP_SERVICE_ACCOUNT_TOKEN"], _ops),
    K("segment_write_key", "Segment", ["SEGMENT_WRITE_KEY"], _single(tok("", AN, 32)), src="trufflehog segment (name-only)"),
    K("mixpanel_api_secret", "Mixpanel", ["MIXPANEL_API_SECRET"], _single(tok("", HX, 32)), src="trufflehog mixpanel (name-only)"),
    K("elastic_api_key", "Elastic Cloud", ["ELASTIC_API_KEY"], _single(lambda r: (base64.b64encode((rs(r, URLS, 20) + ":" + rs(r, URLS, 22)).encode()).decode(),)), src="trufflehog elasticsearch (name-only)"),
    # generic / structural
    K("jwt", "API gateway", ["ACCESS_TOKEN", "id_token"], _jwt_plain, src="gitleaks jwt.go"),
    K("supabase_service_role", "Supabase", ["SUPABASE_SERVICE_ROLE_KEY"], _supabase, src="trufflehog supabasetoken / jwt"),
    K("bearer_header", "internal API", ["Authorization"], _bearer, style="hdr", src="gitleaks generic/curl.go"),
    K("basic_auth_header", "internal API", ["Authorization"], _basic_hdr, style="hdr", src="gitleaks curl.go / detect-secrets basic auth"),
    K("api_key_header", "partner API", ["X-API-Key"], _apikey_hdr, style="hdr", src="gitleaks curl.go header tests"),
    K("session_cookie", "admin console", ["Cookie"], _cookie, style="hdr", src="trufflehog / secretlint (cookie contexts)"),
    K("rsa_private_key", "deploy", ["DEPLOY_KEY"], _pem("RSA"), style="pem", src="gitleaks privatekey.go"),
    K("ec_private_key", "TLS", ["TLS_KEY"], _pem("EC"), style="pem", src="gitleaks privatekey.go"),
    K("openssh_private_key", "bastion", ["SSH_KEY"], _pem("OPENSSH"), style="pem", src="detect-secrets private_key"),
    K("pkcs8_private_key", "GCP service account", ["private_key"], _pem("RSA"), style="pem", src="secretlint privatekey"),
    K("postgres_url_password", "Postgres", ["DATABASE_URL"], _url("postgresql", "app", "pg-main.internal:5432", "/orders"), style="url", src="gitleaks / detect-secrets uri"),
    K("mysql_url_password", "MySQL", ["MYSQL_URL"], _url("mysql", "report", "10.0.4.12:3306", "/analytics"), style="url"),
    K("mongodb_url_password", "MongoDB Atlas", ["MONGO_URI"], _url("mongodb+srv", "svc-api", "cluster0.ab12c.mongodb.net", "/prod?retryWrites=true"), style="url", src="trufflehog mongodb"),
    K("redis_url_password", "Redis", ["REDIS_URL"], _url("rediss", "default", "cache-prod.internal:6380", "/0"), style="url", src="trufflehog redis"),
    K("amqp_url_password", "RabbitMQ", ["AMQP_URL"], _url("amqps", "orders", "mq.internal:5671", "/prod"), style="url", src="trufflehog rabbitmq"),
    K("basic_auth_url", "artifact server", ["MAVEN_REPO_URL"], _url("https", "deployer", "nexus.corp.example.com", "/repository/releases/"), style="url", src="detect-secrets basic_auth"),
    K("pip_index_token_url", "private PyPI", ["PIP_INDEX_URL"], _pip_idx, style="url"),
    K("mssql_conn_password", "SQL Server", ["ConnectionStrings__Default"], _mssql, style="url", src="trufflehog sqlserver"),
    K("jdbc_password", "MySQL (JDBC)", ["spring.datasource.url"], _jdbc, style="url", src="trufflehog jdbc"),
    K("db_password", "Postgres", ["DB_PASSWORD", "POSTGRES_PASSWORD", "PGPASSWORD"], lambda r: (lambda p: (p, (p,)))(human_pw(r)), src="gitleaks generic.go / detect-secrets keyword"),
    K("smtp_password", "SMTP relay", ["SMTP_PASSWORD", "MAIL_PASSWORD"], lambda r: (lambda p: (p, (p,)))(human_pw(r)), src="detect-secrets keyword"),
    K("ldap_bind_password", "LDAP", ["LDAP_BIND_PASSWORD"], lambda r: (lambda p: (p, (p,)))(human_pw(r)), src="detect-secrets keyword"),
    K("admin_password", "Grafana admin", ["GF_SECURITY_ADMIN_PASSWORD", "ADMIN_PASSWORD"], lambda r: (lambda p: (p, (p,)))(human_pw(r)), src="detect-secrets keyword"),
    K("redis_requirepass", "Redis", ["REDIS_PASSWORD", "requirepass"], _single(tok("", AN, 28)), src="detect-secrets keyword"),
    K("django_secret_key", "Django", ["SECRET_KEY", "DJANGO_SECRET_KEY"], _single(lambda r: ("django-insecure-" + rs(r, LO + "!@#%^&*(-_=+)", 50),) if r.random() < .3 else (rs(r, LO + "!@#%^&*(-_=+)", 50),)), src="gitleaks generic.go"),
    K("rails_secret_key_base", "Rails", ["SECRET_KEY_BASE"], _single(tok("", HX, 128)), src="gitleaks generic.go"),
    K("jwt_signing_secret", "auth service", ["JWT_SECRET", "JWT_SIGNING_KEY"], _single(tok("", URLS, 48)), src="gitleaks generic.go"),
    K("laravel_app_key", "Laravel", ["APP_KEY"], _laravel, src="trufflehog / generic base64 key"),
    K("webhook_signing_secret", "GitHub webhook", ["WEBHOOK_SECRET"], _single(tok("", HX, 40)), src="gitleaks generic.go"),
    K("k8s_secret_b64", "k8s Secret", ["password"], _k8s_b64, src="gitleaks kubernetes.go"),
    K("encryption_key_hex", "field encryption", ["ENCRYPTION_KEY", "AES_KEY"], _single(tok("", HX, 64)), src="detect-secrets hex high entropy"),
]
KINDS[[k["kind"] for k in KINDS].index("pkcs8_private_key")]["gen"] = lambda r: pem(r, "", r.randrange(3, 6))
for _k in KINDS:
    if _k["kind"] in ("docker_config_auth", "k8s_secret_b64"):
        _k["style"] = "b64"
    if _k["kind"] in ("db_password", "smtp_password", "ldap_bind_password", "admin_password"):
        _k["style"] = "pw"

# ---------------------------------------------------------------- templates
# placeholders: @V@ value display, @E@ env var name, @S@ service, @L@ lowercase key, @H@ host, @N@ number
TOK = {
 "dev": {
  "en": [
   "Lesson: the staging deploy failed because @E@ was missing from the job env. Fixed by adding `@E@=@V@` to the CI variables (masked).",
   "```env\n# .env.staging\nAPP_ENV=staging\n@E@=@V@\nLOG_LEVEL=info\n```\nRemember to restart the worker after editing .env.",
   "```yaml\nservices:\n  api:\n    environment:\n      - NODE_ENV=production\n      - @E@=@V@\n```\nThe compose file overrides the Helm values locally.",
   "config/settings.json had `\"@L@\": \"@V@\"` hardcoded for @S@ — moved it to the secret store, but the old value still sits in git history.",
   "```toml\n[@L@_client]\nendpoint = \"https://api.example.io\"\napi_key = \"@V@\"\ntimeout = 30\n```",
   "resource \"kubernetes_secret\" \"app\" {\n  data = {\n    @E@ = \"@V@\"\n  }\n}\n# terraform plan showed this in cleartext, use sensitive = true",
   "```dockerfile\nFROM python:3.11-slim\nENV @E@=@V@\nRUN pip install -r requirements.txt\n```\nDon't bake this into the image next time; use build secrets.",
   "$ export @E@=@V@\n$ ./scripts/smoke.sh\n[ok] @S@ reachable (212 ms)",
   "Handover for Mina: @S@ integration works now. Token I used: @V@ — it's the team one, please rotate on Friday.",
   "INC-@N@: @S@ calls returned 401 for 40 min after the key rotation. New @E@ is @V@; old one revoked at 14:05.",
   "| service | var | value |\n|---|---|---|\n| @S@ | @E@ | `@V@` |\n| Redis | REDIS_HOST | cache-prod |",
   "- region: ap-northeast-2\n- @S@ key: @V@\n- owner: platform-team",
   "os.environ.setdefault(\"@E@\", \"@V@\")  # TODO remove before merge — found this in tests/conftest.py",
   "const client = new Client({ apiKey: '@V@', retries: 3 }); // @S@ SDK v4, was process.env earlier",
   "cfg := Config{Endpoint: \"https://api.internal\", Token: \"@V@\"} // @S@ client in cmd/sync/main.go",
   "private static final String @E@ = \"@V@\"; // TODO: read from Vault instead (@S@)",
   "Rails.application.configure { config.x.@L@ = \"@V@\" } # @S@ creds, staging only",
   "var client = new HttpClient(); client.DefaultRequestHeaders.Add(\"X-Token\", \"@V@\"); // @S@",
   "$config['@L@'] = '@V@'; // @S@ key in wp-config.php, moved to env later",
   "let token = \"@V@\"; // @S@ — hardcoded in src/bin/backfill.rs for the one-off run",
   "val @L@ = \"@V@\" // @S@ key in build.gradle.kts local.properties fallback",
   "let apiKey = \"@V@\" // @S@ key in AppConfig.swift, remove before the TestFlight build",
   "Fixed the flaky @S@ test: the mock was ignoring auth. Real key for manual checks is @V@.",
  ],
  "ko": [
   "스테이징 배포가 실패한 원인은 @E@ 누락이었음. CI 변수에 `@E@=@V@`를 추가해서 해결함.",
   "@S@ 연동 완료. 토큰은 @V@이고 금요일에 교체 예정입니다.",
   "인수인계: @S@ 키는 `@V@`로 되어 있어요. 운영 반영 전에 꼭 rotate 해주세요.",
   "```env\n# 로컬용 .env\n@E@=@V@\nDEBUG=false\n```\n워커 재시작해야 반영됨.",
   "장애 노트: @S@ 호출이 401로 떨어졌음 → @E@ 값을 @V@로 교체하고 나서 정상화.",
   "helm values.yaml에 `@L@: @V@`가 평문으로 들어가 있었음. sealed-secrets로 옮겨야 함.",
   "테스트용 @S@ 키(@V@)는 conftest.py에 하드코딩돼 있던 거라 지웠습니다.",
   "| 서비스 | 값 |\n|---|---|\n| @S@ | @V@ |\n\n위 값은 팀 공용 계정 거예요.",
   "$ export @E@=@V@ 하고 나서 smoke 테스트 통과함.",
  ],
 },
 "heldout": {
  "en": [
   "Note to self: @S@ sandbox credentials → @V@ (expires end of quarter).",
   "```yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secrets\nstringData:\n  @E@: \"@V@\"\n```\nstringData avoids manual base64 but it's still committed — bad.",
   "The cron job kept dying silently; turned out @E@ had a trailing newline. Correct value is @V@ with no whitespace.",
   "{\n  \"name\": \"sync-worker\",\n  \"env\": { \"@E@\": \"@V@\" }\n}\n(copied from the Vercel project settings)",
   "[env]\n@E@ = \"@V@\"\n\nin .cargo/config.toml worked for the local build of the exporter.",
   "variable \"@L@\" {\n  default   = \"@V@\"\n  sensitive = true\n}",
   "docker run --rm -e @E@=@V@ ghcr.io/acme/worker:1.8.2 --once",
   "kubectl create secret generic worker-env --from-literal=@E@=@V@ -n jobs",
   "<jun> is the @S@ thing still broken?\n<agent> fixed, I swapped in @V@ as the key\n<jun> nice thx",
   "Postmortem: leaked @S@ credential (@V@) was pushed in a debug commit; revoked within 20 minutes.",
   "* @S@\n  * key = @V@\n  * scopes: read, write",
   "settings.@L@ = \"@V@\"  # python: set before importing the client module",
   "export const config = { @L@: \"@V@\" } as const; // @S@",
   "os.Setenv(\"@E@\", \"@V@\") // test helper; breaks if run in parallel",
   "props.setProperty(\"@L@\", \"@V@\"); // @S@ via Java Properties",
   "ENV['@E@'] ||= '@V@'  # ruby fallback for @S@",
   "Environment.SetEnvironmentVariable(\"@E@\", \"@V@\"); // @S@ in the integration fixture",
   "putenv('@E@=@V@'); // legacy PHP bootstrap for @S@",
   "std::env::set_var(\"@E@\", \"@V@\"); // rust test for the @S@ poller",
   "System.setProperty(\"@L@\", \"@V@\") // kotlin, @S@ client init",
   "UserDefaults.standard.set(\"@V@\", forKey: \"@L@\") // swift, @S@ — do not store secrets here",
   "After rotating @S@ I updated GitHub Actions secret @E@ to @V@ and re-ran the pipeline.",
  ],
  "ko": [
   "메모: @S@ 샌드박스 키 → @V@ (분기 말 만료)",
   "크론이 조용히 죽던 이유: @E@ 끝에 개행이 붙어 있었음. 올바른 값은 @V@임.",
   "@S@ 토큰이 @V@인데 권한이 read만 있어서 배포가 막혔어요.",
   "```yaml\nstringData:\n  @E@: \"@V@\"\n```\nstringData로 넣었는데 결국 커밋돼버림. 바로 폐기함.",
   "포스트모템: 디버그 커밋에 @S@ 키(@V@)가 올라감. 20분 안에 회수 완료.",
   "docker run -e @E@=@V@ 로 워커 한 번 돌려봤더니 잘 됨.",
   "@E@을 @V@로 바꾸고 파이프라인 다시 돌렸습니다.",
   "준호님께: @S@ 계정 키 @V@ 공유드려요, 쓰시고 나면 재발급 부탁해요.",
   "GitHub Actions 시크릿 @E@에 @V@를 넣고 재실행함.",
  ],
 },
}

URLT = {
 "dev": {
  "en": [
   "@E@=@V@ — the app only picked it up after `docker compose up --force-recreate`.",
   "B|Connection string for @S@ in appsettings: \"@V@\"",
   "```yaml\n@L@: \"@V@\"\n```\nThe worker reads this on boot.",
   "B|Migration script used `@V@`; remember the pool limit is 20 on this tier.",
   "Ping in #infra: @S@ endpoint is @V@ if anyone needs it for debugging today.",
   "B|$ psql-like tools accept the URL directly, e.g. `tool --url @V@`.",
  ],
  "ko": [
   "@S@ 접속 정보: @V@ 로 붙으면 됩니다.",
   "B|`@E@=@V@`로 설정했더니 마이그레이션이 정상 동작함.",
   "@V@ 이 주소는 임시 계정이라 이번 주 안에 지울 예정.",
   "@S@ 연결이 계속 실패해서 보니 @E@에 옛날 값이 있었음. 지금은 @V@ 씀.",
  ],
 },
 "heldout": {
  "en": [
   "B|Fixed the timeout: the old @E@ pointed at the replica. Now `@V@`.",
   "B|[database]\nurl = \"@V@\"\n# toml config for the batch job",
   "Handover: @S@ — use @V@ (read/write).",
   "B|export @E@='@V@' && make migrate",
   "| env | url |\n|---|---|\n| prod | @V@ |",
   "Heads-up for whoever picks this up: the @S@ URL with creds baked in is @V@ — swap it for a secret ref.",
  ],
  "ko": [
   "운영 @S@ 주소는 `@V@`입니다. 외부 공유 금지.",
   "@E@ 값을 @V@로 바꾸니 타임아웃이 사라짐.",
   "인수인계 — @S@: @V@ (읽기/쓰기 권한)",
  ],
 },
}

HDRT = {
 "dev": {
  "en": [
   "Reproduced the 403 with curl -H \"@V@\" https://api.internal/v2/orders",
   "Lesson: the proxy strips auth unless forwarded. Working request had header `@V@`.",
   "fetch(url, { headers: { \"@HN@\": \"@HV@\" } }) // copied from devtools",
   "Copied from the browser's network tab: @V@",
  ],
  "ko": [
   "curl -H \"@V@\" 로 호출하니 403이 재현됨.",
   "프록시가 인증 헤더를 지워서 실패했음. 성공한 요청의 헤더는 `@V@`였음.",
  ],
 },
 "heldout": {
  "en": [
   "http GET :8080/admin/users '@V@'  # httpie, returned 200",
   "requests.get(url, headers={\"@HN@\": \"@HV@\"}, timeout=5)",
   "The replay from the HAR file: @V@ (expired tomorrow anyway)",
  ],
  "ko": [
   "HAR 파일에서 뽑은 헤더 @V@ 로 재현 성공.",
   "브라우저 개발자도구에서 복사한 값: `@V@`",
  ],
 },
}

PEMT = {
 "dev": {
  "en": [
   "Key for the @S@ user (rotate after migration):\n@V@",
   "```\n@V@\n```\nPasted into ~/.ssh/id_deploy; chmod 600 or ssh refuses it.",
  ],
  "ko": ["@S@ 용 키 붙여둠, 마이그레이션 끝나면 교체:\n@V@"],
 },
 "heldout": {
  "en": ["tls:\n  key: |\n    @VI@\n", "Found this in the old Ansible repo (@S@):\n\n@V@\n\nrevoked."],
  "ko": ["예전 Ansible 저장소에서 발견한 @S@ 키임. 폐기 완료.\n@V@"],
 },
}


def _fill(t, k, disp, r, part):
    env = r.choice(k["envs"])
    low = env.lower().replace(".", "_")
    hn, _, hv = disp.partition(": ")
    out = (t.replace("@VI@", disp.replace("\n", "\n    ")).replace("@V@", disp).replace("@E@", env)
           .replace("@S@", k["svc"]).replace("@L@", low).replace("@N@", str(r.randrange(100, 999)))
           .replace("@HN@", hn).replace("@HV@", hv))
    return out


B64T = {
 "dev": {
  "en": [
   "D|```json\n{ \"auths\": { \"registry.corp.example.com\": { \"auth\": \"@V@\" } } }\n```\nThis is ~/.docker/config.json on the old runner; (@S@).",
   "K|```yaml\napiVersion: v1\nkind: Secret\ntype: Opaque\ndata:\n  @L@: @V@\n```\n(@S@) — base64 is not encryption, this was committed by mistake.",
   "Decoded the @S@ value @V@ with base64 -d to confirm it matched what the app expected.",
  ],
  "ko": [
   "D|러너의 docker config.json에 `\"auth\": \"@V@\"`가 그대로 남아 있었음 (@S@).",
   "K|@S@ data 필드 @L@: @V@ 는 base64일 뿐이라 평문이나 다름없음.",
  ],
 },
 "heldout": {
  "en": [
   "K|kubectl get secret app -o jsonpath='{.data.@L@}' printed @V@ which decodes to the live credential (@S@).",
   "The CI log echoed the @S@ auth blob @V@ before we added masking.",
   "D|`docker login` wrote {\"auth\": \"@V@\"} into config.json on the shared runner; wiped it and switched to a credential helper.",
  ],
  "ko": [
   "CI 로그에 @S@ auth 값 @V@가 마스킹 없이 찍혀 있었음.",
   "D|공용 러너 config.json에 docker login이 남긴 auth(@V@)가 있어서 지우고 credential helper로 바꿈.",
   "K|jsonpath로 뽑은 @L@ 값(@V@)을 디코딩하니 실제 비밀번호였음.",
  ],
 },
}

PWT = {
 "dev": {
  "en": [
   "@S@ login for the migration: user `svc_migrate`, password `@V@`. Change it after cutover.",
   "```env\n@E@=@V@\n```\nThe container healthcheck failed until this was set.",
   "Handover: @S@ admin password is @V@ (temporary, set by me on Tuesday).",
   "spring:\n  datasource:\n    username: app\n    password: @V@",
   "INC-@N@: @S@ auth failures after someone reset the password to @V@ without updating the secret.",
  ],
  "ko": [
   "@S@ 비밀번호는 @V@입니다. 컷오버 후에 바꿔주세요.",
   "@E@=@V@ 로 설정하니까 헬스체크 통과함.",
   "@S@ 계정 임시 비번 `@V@`로 초기화해 뒀어요.",
  ],
 },
 "heldout": {
  "en": [
   "Reset the @S@ password to @V@ so QA can log in; they know to change it.",
   "$ curl -u admin:'@V@' http://localhost:8080/api/health  # @S@ local check, 200 OK",
   "\"@L@\": \"@V@\" was sitting in appsettings.Development.json (@S@).",
   "<dana> what's the @S@ pw again?\n<agent> @V@ — please move it to the vault after",
   "| system | user | password |\n|---|---|---|\n| @S@ | admin | @V@ |",
  ],
  "ko": [
   "QA가 로그인할 수 있게 @S@ 비밀번호를 @V@로 리셋했음.",
   "다나님, @S@ 비번은 @V@예요. 확인하시고 볼트로 옮겨주세요.",
   "appsettings.Development.json에 \"@L@\": \"@V@\"가 남아 있었음 (@S@).",
  ],
 },
}

POOLS = {"pw": PWT, "b64": B64T, "tok": TOK, "url": URLT, "hdr": HDRT, "pem": PEMT}

# ---------------------------------------------------------------- negatives
def _neg_values(r):
    sha = rs(r, HX, 40)
    return dict(
        SHA=sha, SSHA=sha[:7], UUID=uuid(r), S256=rs(r, HX, 64),
        INTEG="sha512-" + base64.b64encode(bytes(r.randrange(256) for _ in range(64))).decode(),
        DIG="sha256:" + rs(r, HX, 64),
        VER=f"{r.randrange(1, 9)}.{r.randrange(0, 30)}.{r.randrange(0, 20)}",
        B64D=base64.b64encode(json.dumps({"page": r.randrange(2, 40), "sort": "created_at"}).encode()).decode(),
        PUB="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, B64, 43) + " deploy@ci",
        FP="SHA256:" + rs(r, B64, 43), GPG=rs(r, HX, 40).upper(), KID=rs(r, HX, 16).upper(),
        ARN=f"arn:aws:kms:ap-northeast-2:{r.randrange(10**11, 10**12)}:key/{uuid(r)}",
        REQ="req_" + rs(r, HX, 24), ENVN=r.choice(NEG_ENVS), ENV2=r.choice(NEG_ENVS), SVCN=r.choice(NEG_SVCS), TRACE=rs(r, HX, 32), N=str(r.randrange(100, 9999)),
        LAST4=rs(r, AN, 4), CACHE=rs(r, HX, 20),
    )


NEG = {
 "dev": {
  "en": [
   ("placeholder", "Set `@ENVN@=<YOUR_TOKEN>` in .env.example; the real one lives in 1Password."),
   ("placeholder", "```yaml\nenv:\n  @ENVN@: ${@ENVN@}\n  @ENV2@: ${@ENV2@}\n```"),
   ("placeholder", "@ENVN@=changeme is only the docker-compose default for local dev; prod reads from Vault."),
   ("placeholder", "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxx in the README is a dummy, don't try it."),
   ("placeholder", "@ENVN@: \"********\" is how the settings page renders it, the API never returns the value."),
   ("env_ref", "api_key = os.environ[\"@ENVN@\"]  # fail fast when unset"),
   ("env_ref", "const token = process.env.@ENVN@ ?? throwMissing('@ENVN@');"),
   ("env_ref", "token := os.Getenv(\"@ENVN@\"); if token == \"\" { log.Fatal(\"@ENVN@ not set\") }"),
   ("code_handles_token", "def auth_header(token: str) -> dict:\n    return {\"Authorization\": f\"Bearer {token}\"}"),
   ("code_handles_token", "String secret = secretsManager.getSecretValue(req).secretString(); // never log this"),
   ("git_sha", "Bisected the regression to @SHA@ (\"switch to pooled http client\"); reverted in @SSHA@."),
   ("uuid", "Request @UUID@ timed out at the gateway; retry succeeded. Trace id @TRACE@."),
   ("hash", "Artifact checksum after the rebuild: sha256 @S256@ — matches the release page."),
   ("npm_integrity", "package-lock had `\"integrity\": \"@INTEG@\"` for left-pad after the lockfile regen."),
   ("docker_digest", "Pinned the base image to python@@DIG@ so rebuilds are reproducible."),
   ("version", "Upgraded terraform-provider-aws from 5.31.0 to @VER@; plan was clean."),
   ("base64_data", "The cursor param is just base64 JSON: @B64D@ decodes to the page/sort pair."),
   ("public_key", "Added the CI public key to authorized_keys: `@PUB@`"),
   ("key_id", "The KMS key used for SOPS is @ARN@ (ARN only, access is via IAM)."),
   ("key_id", "Releases are signed with GPG key @GPG@; fingerprint is published on the docs site."),
   ("prose", "Lesson from the @SVCN@ rotation: never paste tokens into Slack threads; share a 1Password link instead and rotate if in doubt."),
   ("prose", "The password reset flow sends a one-time link that expires after 15 minutes; no secret is stored in the email."),
   ("url", "Docs for the webhook payload: https://docs.example.com/webhooks/signing#verify — compare HMAC in constant time."),
   ("path", "Credentials file is at ~/.aws/credentials and the profile is `staging-readonly`; don't commit that path's contents."),
   ("masked", "Stripe dashboard shows the key as sk_live_…@LAST4@; that suffix is what we match in the rotation log."),
   ("conn_no_pw", "DATABASE_URL=postgresql://app@localhost:5432/app_test works because pg_hba trusts local connections."),
   ("identifier", "Renamed `LegacyBillingAccountSynchronizationCoordinatorFactoryImpl` to `BillingSync`; tests green."),
   ("placeholder", "In the @SVCN@ docs the example is `@ENVN@=your-key-here`; ours is injected by the External Secrets operator."),
   ("code_handles_token", "@SVCN@ client now takes `token: string` from the DI container; unit tests pass `\"test-token\"`."),
   ("key_id", "AZURE_TENANT_ID=@UUID@ is just the directory id, not a secret; the client secret stays in Key Vault."),
   ("toml_ref", "[tool.poetry.source]\nurl = \"https://pypi.internal/simple\"\n# credentials come from POETRY_HTTP_BASIC_INTERNAL_PASSWORD"),
  ],
  "ko": [
   ("placeholder", ".env.example에는 `@ENVN@=<YOUR_TOKEN>`만 넣어두고 실제 값은 1Password에 있음."),
   ("placeholder", "로컬 compose의 DB_PASSWORD=changeme는 개발용 기본값이라 괜찮음. 운영은 Vault에서 읽음."),
   ("env_ref", "키는 os.environ[\"@ENVN@\"]로만 읽도록 바꿨어요. 하드코딩 금지."),
   ("git_sha", "회귀 원인은 커밋 @SHA@였고 @SSHA@에서 되돌림."),
   ("uuid", "요청 ID @UUID@에서 게이트웨이 타임아웃 발생, 재시도로 해결됨."),
   ("docker_digest", "베이스 이미지를 node@@DIG@로 고정해서 빌드 재현성 확보함."),
   ("version", "terraform을 @VER@로 올렸는데 plan 변화 없음."),
   ("prose", "@SVCN@ 건 교훈: 토큰이나 비밀번호는 슬랙에 붙여넣지 말고 1Password 링크로 공유할 것."),
   ("public_key", "CI 공개키를 authorized_keys에 추가함: `@PUB@`"),
   ("masked", "대시보드에는 키가 ****@LAST4@ 형태로만 보임. 원문은 다시 볼 수 없음."),
   ("hash", "빌드 산출물 sha256은 @S256@로 릴리스 페이지와 일치함."),
   ("code_handles_token", "토큰을 받아서 헤더만 만드는 함수: `def auth(t): return {\"Authorization\": f\"Bearer {t}\"}`"),
  ],
 },
 "heldout": {
  "en": [
   ("placeholder", "Template reads `api_key: {{ .Values.apiKey }}`; the chart ships with an empty default."),
   ("placeholder", "AWS_SECRET_ACCESS_KEY=YOUR_SECRET_KEY_HERE stays in docs/setup.md as an example."),
   ("placeholder", "@ENVN@=\"\"  # left blank on purpose; tests use the fake client"),
   ("placeholder", "@ENVN@: REPLACE_ME was still in the staging overlay, which is why auth failed (no real value there)."),
   ("env_ref", "let key = std::env::var(\"@ENVN@\").expect(\"@ENVN@ missing\");"),
   ("env_ref", "val token = System.getenv(\"@ENVN@\") ?: error(\"no @ENVN@\")"),
   ("env_ref", "$key = getenv('@ENVN@'); if (!$key) { throw new RuntimeException('missing key'); }"),
   ("code_handles_token", "func redact(s string) string { return tokenRe.ReplaceAllString(s, \"***\") } // used in logger"),
   ("code_handles_token", "guard let token = try keychain.read(account: \"api\") else { return } // Swift, token never printed"),
   ("git_sha", "Merge commit @SHA@ brought in the retry fix; cherry-picked to release/@VER@."),
   ("uuid", "Job @UUID@ stuck in PENDING for 2h; the scheduler lost its lease."),
   ("hash", "ETag was \"@CACHE@\" so the CDN served the stale bundle."),
   ("npm_integrity", "yarn complained about `@INTEG@` mismatch; clearing the cache fixed it."),
   ("docker_digest", "Deployed ghcr.io/acme/api@@DIG@ to prod at 09:12."),
   ("base64_data", "Kafka message value (base64) was @B64D@, i.e. a plain pagination cursor."),
   ("public_key", "Host key fingerprint for the new bastion: @FP@ — verify before accepting."),
   ("key_id", "JWKS kid rotated to @KID@; clients refetch keys every hour."),
   ("key_id", "Stripe event id evt_@LAST4@@KID@ was delivered twice; handler is idempotent now."),
   ("prose", "@SVCN@ note: rotating the database password requires restarting pgbouncer, otherwise old connections keep working until idle timeout."),
   ("prose", "Same as @SVCN@ does, we store only bcrypt hashes of API keys; the plaintext is shown once at creation and never again."),
   ("url", "Grafana dashboard: https://grafana.internal/d/@CACHE@/api-latency?orgId=1&from=now-6h"),
   ("path", "Moved secrets loading into internal/config/secrets.go and deleted config/secrets.example.yaml."),
   ("masked", "The log line now prints `token=ghp_****` instead of the value; verified in Loki."),
   ("conn_no_pw", "redis://cache-prod.internal:6379/0 — no auth on the private subnet, protected by security group."),
   ("identifier", "Request id @REQ@ shows the 502 came from the upstream, not our proxy."),
   ("placeholder", "Helm: `--set @ENVN@=$(@ENVN@)` reads from the runner env; nothing is stored in values.yaml."),
   ("code_handles_token", "if not hmac.compare_digest(sig, expected):\n    raise Forbidden()  # @SVCN@ webhook verification"),
   ("identifier", "Alerts go to Slack channel C@KID@ (channel id only; the bot token is injected at runtime)."),
   ("hcl_ref", "resource \"aws_db_instance\" \"main\" {\n  password = var.db_password\n}"),
  ],
  "ko": [
   ("placeholder", "차트 기본값은 `apiKey: \"\"`로 비어 있고, 실제 값은 외부 시크릿에서 주입됨."),
   ("placeholder", "문서에 있는 AWS_SECRET_ACCESS_KEY=YOUR_SECRET_KEY_HERE는 예시일 뿐임."),
   ("env_ref", "토큰은 System.getenv(\"@ENVN@\")으로 읽고 없으면 바로 실패하게 함."),
   ("git_sha", "재시도 수정은 머지 커밋 @SHA@에 들어가 있음."),
   ("uuid", "잡 @UUID@이 두 시간째 PENDING이라 스케줄러 재시작함."),
   ("npm_integrity", "yarn이 @INTEG@ 무결성 불일치를 뱉어서 캐시 지우고 해결."),
   ("prose", "DB 비밀번호를 바꾸면 pgbouncer를 재시작해야 기존 커넥션이 끊김."),
   ("prose", "API 키는 bcrypt 해시만 저장하고 원문은 생성 시 한 번만 보여줌."),
   ("public_key", "새 배스천 호스트키 지문은 @FP@이니 접속 전에 확인하세요."),
   ("masked", "로그에는 이제 token=****로만 찍힘. Loki에서 확인 완료."),
   ("conn_no_pw", "redis://cache-prod.internal:6379/0 은 인증 없이 사설망에서만 접근 가능."),
   ("env_ref", "@SVCN@ 키는 `${@ENVN@}`로 참조만 하고 값은 Secret Manager에서 주입함."),
   ("docker_digest", "운영에 ghcr.io/acme/worker@@DIG@ 배포 완료 (@VER@)."),
   ("hash", "CDN ETag가 \"@CACHE@\"로 남아 있어서 옛 번들이 나갔음."),
   ("identifier", "요청 ID @REQ@ 기준으로 보면 502는 업스트림에서 난 것."),
   ("key_id", "JWKS kid가 @KID@로 바뀌었고 클라이언트는 한 시간마다 키를 다시 가져옴."),
   ("code_handles_token", "로그 찍기 전에 `redact(@ENVN@)`를 거치도록 바꿨어요. 값 자체는 절대 출력 안 함."),
   ("base64_data", "커서 파라미터 @B64D@는 그냥 페이지 정보 JSON을 base64로 인코딩한 것임."),
  ],
 },
}


NEG_ENVS = sorted({e for k in KINDS for e in k["envs"] if e.isupper() and "_" in e})
NEG_SVCS = sorted({k["svc"] for k in KINDS})

DB_KINDS = {"postgres_url_password", "mysql_url_password", "mongodb_url_password", "redis_url_password",
            "amqp_url_password", "mssql_conn_password", "jdbc_password", "azure_storage_key"}

SEEDS = {"dev": 1212, "heldout": 3434}
PER_KIND = 6


def corpus(part):
    r = random.Random(SEEDS[part])
    out = []
    for k in KINDS:
        pool = POOLS[k["style"]][part]
        for i in range(PER_KIND):
            lang = "ko" if i % 3 == 2 else "en"
            disp, secs = k["gen"](r)
            tags = {"docker_config_auth": "D|", "k8s_secret_b64": "K|"}
            tag = "B|" if k["kind"] in DB_KINDS else tags.get(k["kind"])
            cands = [x for x in pool[lang] if x[:2] not in ("D|", "K|", "B|") or x[:2] == tag]
            t = r.choice(cands)
            if t[:2] in ("D|", "K|", "B|"):
                t = t[2:]
            text = _fill(t, k, disp, r, part)
            secs = tuple(s for s in secs if s)
            out.append((text, k["kind"], secs, lang))
    npos = len(out)
    nneg = int(npos * 0.62)
    seen_neg = set()
    en, ko = NEG[part]["en"], NEG[part]["ko"]
    for i in range(nneg):
        lang = "ko" if i % 3 == 2 else "en"
        cat, t = r.choice(ko if lang == "ko" else en)
        vals = _neg_values(r)
        for key, v in vals.items():
            t = t.replace("@" + key + "@", v)
        if t in seen_neg:
            continue
        seen_neg.add(t)
        out.append((t, "neg:" + cat, (), lang))
    return out


def _check():
    seen = {}
    for part in ("dev", "heldout"):
        for text, kind, secs, lang in corpus(part):
            assert "[REDACTED]" not in text
            for s in secs:
                assert s in text, (kind, s, text)
            assert "@" + "V@" not in text and "@E@" not in text, text
    for pools in (TOK, URLT, HDRT, PEMT, B64T, PWT, NEG):
        a = {str(x) for l in pools["dev"].values() for x in l}
        b = {str(x) for l in pools["heldout"].values() for x in l}
        assert not (a & b), a & b


if __name__ == "__main__":
    _check()
    for part in ("dev", "heldout"):
        c = corpus(part)
        pos = [x for x in c if not x[1].startswith("neg:")]
        neg = [x for x in c if x[1].startswith("neg:")]
        ko = sum(1 for x in c if x[3] == "ko")
        print(f"{part}: positives={len(pos)} negatives={len(neg)} kinds={len({x[1] for x in pos})} "
              f"neg_categories={len({x[1] for x in neg})} ko_share={ko / len(c):.2f}")
        rr = random.Random(7)
        for x in rr.sample(pos, 3) + rr.sample(neg, 3):
            print("  ---", x[1], x[3], x[2])
            print("   ", x[0].replace("\n", "\n    "))
