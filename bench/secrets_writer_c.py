"""Independent secret-redaction test corpus, writer C.

Theme: credentials as people write them down in conversation and incidents
(chat messages, handover notes, incident reports, bug reports quoting HTTP
requests/responses, log lines, Markdown tables, e-mails, ticket comments,
Korean / mixed Korean-English messages), later pasted into a lesson.

Every value is generated at run time from a seeded random.Random.  No full
credential-shaped literal appears in this file; prefixes are split.

corpus(part) -> list of (text, kind, secrets, lang); part is "dev" or "heldout".

Written without sight of the redaction rules, their tests or the other corpora, from facts read
in the scanners' public test fixtures (gitleaks, MIT; trufflehog, AGPL-3.0; detect-secrets,
Apache-2.0; secretlint, MIT): services, prefixes, lengths, alphabets and the kinds of context.
No fixture value or sentence is reproduced. "dev" may be tuned on; "heldout" is run only to
report a figure (bench/secrets_bench.py prints the misses of "dev" alone).
"""
from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

SEEDS = {"dev": 5505, "heldout": 6606}

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DG = string.digits
AN = string.ascii_letters + string.digits
ANL = string.ascii_lowercase + string.digits
HX = "0123456789abcdef"
B64 = AN + "+/"
URLSAFE = AN + "-_"


def rs(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def mixed(rng, alphabet, n):
    """Random string guaranteed to contain a digit, a lower and (if possible) an upper."""
    while True:
        s = rs(rng, alphabet, n)
        if (not any(c in DG for c in alphabet) or any(c.isdigit() for c in s)) and any(c.islower() for c in s) and (
            not any(c in UP for c in alphabet) or any(c.isupper() for c in s)
        ):
            return s


# --------------------------------------------------------------------------
# value generators (shapes taken from public scanner fixtures, values fresh)
# --------------------------------------------------------------------------

def g_aws_id(r):
    return "AK" + "IA" + rs(r, UP + "234567", 16)


def g_aws_temp_id(r):
    return "AS" + "IA" + rs(r, UP + "234567", 16)


def g_aws_secret(r):
    return mixed(r, B64, 40)


def g_gcp(r):
    return "AI" + "za" + "Sy" + mixed(r, URLSAFE, 33)


def g_azure_secret(r):
    return rs(r, AN, 3) + rs(r, DG, 1) + "Q" + "~" + mixed(r, AN + "_~.-", 34)


def g_azure_storage(r):
    return mixed(r, B64, 86) + "=="


def g_alibaba_id(r):
    return "LT" + "AI" + mixed(r, AN, 20)


def g_alibaba_secret(r):
    return mixed(r, AN, 30)


def g_do_pat(r):
    return "dop" + "_v1_" + rs(r, HX, 64)


def g_do_oauth(r):
    return "doo" + "_v1_" + rs(r, HX, 64)


def g_ghp(r):
    return "gh" + "p_" + mixed(r, AN, 36)


def g_gho(r):
    return "gh" + "o_" + mixed(r, AN, 36)


def g_ghs(r):
    return "gh" + "s_" + mixed(r, AN, 36)


def g_gh_fine(r):
    return "github" + "_pat_" + "11" + rs(r, UP + DG, 20) + "_" + mixed(r, AN, 59)


def g_glpat(r):
    return "gl" + "pat-" + mixed(r, AN + "_-", 20)


def g_gldt(r):
    return "gl" + "dt-" + mixed(r, AN, 20)


def g_glrt(r):
    return "gl" + "rt-" + mixed(r, AN, 20)


def g_bitbucket(r):
    return mixed(r, AN, 64)


def g_xoxb(r):
    return "xo" + "xb-" + rs(r, DG, 12) + "-" + rs(r, DG, 13) + "-" + mixed(r, AN, 24)


def g_xoxp(r):
    return ("xo" + "xp-" + rs(r, DG, 11) + "-" + rs(r, DG, 11) + "-" + rs(r, DG, 12)
            + "-" + rs(r, HX, 32))


def g_xapp(r):
    return "xa" + "pp-1-A" + rs(r, UP + DG, 10) + "-" + rs(r, DG, 13) + "-" + rs(r, HX, 64)


def g_slack_hook(r):
    return "T" + rs(r, UP + DG, 10) + "/B" + rs(r, UP + DG, 10) + "/", mixed(r, AN, 24)


def g_discord_hook(r):
    return rs(r, DG, 19), mixed(r, URLSAFE, 68)


def g_teams_hook(r):
    return rs(r, HX, 32)


def g_telegram(r):
    return rs(r, DG, 10) + ":AA" + mixed(r, URLSAFE, 33)


def g_stripe_sk(r):
    return "sk" + "_live_" + "51" + mixed(r, AN, 96)


def g_stripe_rk(r):
    return "rk" + "_live_" + "51" + mixed(r, AN, 56)


def g_square(r):
    return "EA" + "AA" + mixed(r, URLSAFE, 60)


def g_square_secret(r):
    return "sq0" + "csp-" + mixed(r, URLSAFE, 43)


def g_braintree(r):
    return rs(r, HX, 32)


def g_openai(r):
    return "sk-" + "proj-" + mixed(r, URLSAFE, 74) + "T3Blbk" + "FJ" + mixed(r, URLSAFE, 74)


def g_anthropic(r):
    return "sk-" + "ant-api03-" + mixed(r, URLSAFE, 93) + "AA"


def g_hf(r):
    return "h" + "f_" + mixed(r, string.ascii_letters, 34)


def g_pplx(r):
    return "pp" + "lx-" + mixed(r, AN, 48)


def g_cohere(r):
    return mixed(r, AN, 40)


def g_groq(r):
    return "gs" + "k_" + mixed(r, AN, 52)


def g_replicate(r):
    return "r8" + "_" + mixed(r, AN, 37)


def g_deepseek(r):
    return "sk-" + mixed(r, ANL, 32)


def g_xai(r):
    return "xa" + "i-" + mixed(r, AN, 80)


def g_sendgrid(r):
    return "SG" + "." + mixed(r, URLSAFE, 22) + "." + mixed(r, URLSAFE, 43)


def g_mailgun(r):
    return "ke" + "y-" + rs(r, HX, 32)


def g_mailchimp(r):
    return rs(r, HX, 32) + "-us" + str(r.randint(10, 21))


def g_brevo(r):
    return "xkey" + "sib-" + rs(r, HX, 64) + "-" + mixed(r, AN, 16)


def g_twilio_sk(r):
    return "S" + "K" + rs(r, HX, 32)


def g_twilio_auth(r):
    return rs(r, HX, 32)


def g_npm(r):
    return "np" + "m_" + mixed(r, AN, 36)


def g_pypi(r):
    return "pypi-" + "AgEIcHlwaS5vcmc" + mixed(r, URLSAFE, 140)


def g_rubygems(r):
    return "rubygems" + "_" + rs(r, HX, 48)


def g_nuget(r):
    return "oy" + "2" + rs(r, ANL, 43)


def g_docker(r):
    return "dckr" + "_pat_" + mixed(r, URLSAFE, 27)


def g_doppler(r):
    return "dp" + ".pt." + mixed(r, AN, 43)


def g_pulumi(r):
    return "pu" + "l-" + rs(r, HX, 40)


def g_vault(r):
    return "hv" + "s." + rs(r, DG, 1) + mixed(r, URLSAFE, 94)


def g_tfc(r):
    return rs(r, ANL, 14) + ".atlas" + "v1." + mixed(r, AN, 67)


def g_linear(r):
    return "lin" + "_api_" + mixed(r, AN, 40)


def g_notion(r):
    return "nt" + "n_" + rs(r, DG, 11) + mixed(r, AN, 35)


def g_postman(r):
    return "PM" + "AK-" + rs(r, HX, 24) + "-" + rs(r, HX, 34)


def g_shpat(r):
    return "shp" + "at_" + rs(r, HX, 32)


def g_shpss(r):
    return "shp" + "ss_" + rs(r, HX, 32)


def g_databricks(r):
    return "da" + "pi" + rs(r, HX, 32)


def g_glc(r):
    return "gl" + "c_" + mixed(r, AN, 80) + "=="


def g_glsa(r):
    return "gl" + "sa_" + mixed(r, AN, 32) + "_" + rs(r, HX, 8)


def g_pscale(r):
    return "pscale" + "_pw_" + mixed(r, AN + "_", 43)


def g_sentry(r):
    return "sntry" + "u_" + rs(r, HX, 64)


def g_newrelic(r):
    return "NR" + "AK-" + rs(r, UP + DG, 27)


def g_dynatrace(r):
    return "dt0" + "c01." + rs(r, UP + DG, 24) + "." + mixed(r, AN, 64)


def g_datadog_api(r):
    return rs(r, HX, 32)


def g_datadog_app(r):
    return rs(r, HX, 40)


def g_heroku(r):
    return "HR" + "KU-AA" + mixed(r, URLSAFE, 58)


def g_fly(r):
    return "fo" + "1_" + mixed(r, URLSAFE, 43)


def g_age(r):
    return "AGE-" + "SECRET-KEY-1" + rs(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)


def g_atlassian(r):
    return "ATA" + "TT3" + mixed(r, URLSAFE, 176) + "=" + rs(r, UP + DG, 8) + "0"


def g_okta(r):
    return "00" + mixed(r, AN + "_-", 40)


def g_algolia(r):
    return rs(r, HX, 32)


def g_airtable(r):
    return "pa" + "t" + mixed(r, AN, 14) + "." + rs(r, HX, 64)


def g_contentful(r):
    return mixed(r, URLSAFE, 43)


def g_mapbox(r):
    body = base64.urlsafe_b64encode(json.dumps({"u": rs(r, LO, 8), "a": rs(r, ANL, 24)}).encode()).decode().rstrip("=")
    return "s" + "k." + body + "." + mixed(r, URLSAFE, 22)


def g_trello(r):
    return rs(r, HX, 64)


def g_zendesk(r):
    return mixed(r, AN, 40)


def g_twitch(r):
    return rs(r, ANL, 30)


def g_cloudflare(r):
    return mixed(r, URLSAFE, 40)


def g_netlify(r):
    return "nf" + "p_" + mixed(r, AN, 36)


def g_confluent(r):
    return mixed(r, B64, 64)


def g_sendbird(r):
    return rs(r, HX, 40)


def g_kakao(r):
    return rs(r, HX, 32)


def g_naver(r):
    return mixed(r, AN, 10)


def g_snyk(r):
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def g_sonar(r):
    return "sq" + "u_" + rs(r, HX, 40)


def g_sourcegraph(r):
    return "sg" + "p_" + rs(r, HX, 16) + "_" + rs(r, HX, 40)


def g_typeform(r):
    return "tf" + "p_" + mixed(r, URLSAFE, 44) + "_" + mixed(r, AN, 14)


def g_infracost(r):
    return "ic" + "o-" + mixed(r, AN, 32)


def g_prefect(r):
    return "pn" + "u_" + mixed(r, AN, 36)


def g_easypost(r):
    return "EZ" + "AK" + mixed(r, AN, 54)


def g_launchdarkly(r):
    return "api-" + str(uuid.UUID(int=r.getrandbits(128), version=4))


def g_fastly(r):
    return mixed(r, URLSAFE, 32)


def g_intercom(r):
    return "dG9rOj" + mixed(r, AN, 54) + "="


def g_opaque(r):
    return mixed(r, URLSAFE, r.randint(32, 48))


def g_hex40(r):
    return rs(r, HX, 40)


def g_django_secret(r):
    return "django-insecure-" + mixed(r, LO + DG + "!@#%^&*(-_=+)", 50)


def g_hmac_secret(r):
    return mixed(r, AN, 44)


def _b64u(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def g_jwt(r):
    hdr = _b64u({"alg": r.choice(["HS256", "RS256"]), "typ": "JWT"})
    pl = _b64u({"sub": str(r.randint(10000, 99999)), "role": r.choice(["admin", "service", "ops"]),
                "iat": 1760000000 + r.randint(0, 9000000), "exp": 1770000000 + r.randint(0, 9000000)})
    return hdr + "." + pl + "." + mixed(r, URLSAFE, 43)


WORDS = ["maple", "river", "tiger", "orbit", "cobalt", "lemon", "harbor", "pixel", "sunny",
         "falcon", "winter", "copper", "nova", "delta", "puppy", "kimchi", "hangang", "bori"]


def g_password(r):
    style = r.randint(0, 3)
    if style == 0:
        return mixed(r, AN + "!#%*@$^&", r.randint(14, 20))
    if style == 1:
        return r.choice(WORDS).capitalize() + r.choice("!@#$%") + str(r.randint(1000, 9999)) + rs(r, AN, 5)
    if style == 2:
        return rs(r, UP, 2) + r.choice(WORDS) + str(r.randint(10, 99)) + r.choice("!#&*") + r.choice(WORDS).upper() + rs(r, DG, 2)
    return mixed(r, AN, r.randint(16, 24))


def g_url_password(r):
    # no '@', ':', '/', '?' or '#' inside URL passwords
    style = r.randint(0, 2)
    if style == 0:
        return mixed(r, AN, r.randint(16, 24))
    if style == 1:
        return r.choice(WORDS).capitalize() + str(r.randint(100, 999)) + "_" + rs(r, AN, 8)
    return mixed(r, AN + "-_.~", r.randint(18, 26))


def g_session(r):
    return rs(r, ANL, 32)


def g_connect_sid(r):
    return "s%3A" + mixed(r, URLSAFE, 32) + "." + mixed(r, AN + "%", 43)


def pem_lines(r, nlines, first=""):
    lines = []
    for i in range(nlines):
        body = mixed(r, B64, 64)
        if i == 0 and first:
            body = first + body[len(first):]
        lines.append(body)
    last = mixed(r, B64, r.randint(20, 50))
    lines.append(last + "=" * r.randint(0, 2))
    return lines


PEM_KINDS = {
    "private_key_rsa_pem": ("RSA PRIVATE KEY", "MIIEow" + "IBAAKCAQEA"),
    "private_key_openssh": ("OPENSSH PRIVATE KEY", "b3BlbnNzaC1rZXktdjEAAAAA"),
    "private_key_ec_pem": ("EC PRIVATE KEY", "MHcCAQEEI"),
    "private_key_pkcs8": ("PRIVATE KEY", "MIIEvQ" + "IBADANBgkqhkiG9w0BAQEFAASC"),
}

# --------------------------------------------------------------------------
# kind table for "token" style credentials:
# kind -> (generator, service name(s) as people say it, env/key name, header line fmt, api host)
# --------------------------------------------------------------------------
B = "Authorization: Bearer {v}"
TOK = {
    "aws_access_key_id": (g_aws_id, "AWS", "AWS_ACCESS_KEY_ID", None, None),
    "aws_temp_access_key_id": (g_aws_temp_id, "AWS STS", "AWS_ACCESS_KEY_ID", None, None),
    "gcp_api_key": (g_gcp, "Google Maps", "GOOGLE_API_KEY", "X-Goog-Api-Key: {v}", "maps.googleapis.com"),
    "azure_ad_client_secret": (g_azure_secret, "Azure AD app", "AZURE_CLIENT_SECRET", None, None),
    "alibaba_access_key_id": (g_alibaba_id, "Alibaba Cloud", "ALIBABA_CLOUD_ACCESS_KEY_ID", None, None),
    "digitalocean_pat": (g_do_pat, "DigitalOcean", "DIGITALOCEAN_TOKEN", B, "api.digitalocean.com"),
    "digitalocean_oauth_token": (g_do_oauth, "DigitalOcean OAuth", "DO_OAUTH_TOKEN", B, "api.digitalocean.com"),
    "github_pat": (g_ghp, "GitHub", "GITHUB_TOKEN", "Authorization: token {v}", "api.github.com"),
    "github_oauth_token": (g_gho, "GitHub OAuth", "GH_OAUTH_TOKEN", B, "api.github.com"),
    "github_app_installation_token": (g_ghs, "GitHub App", "GH_APP_TOKEN", "Authorization: token {v}", "api.github.com"),
    "github_fine_grained_pat": (g_gh_fine, "GitHub", "GH_TOKEN", B, "api.github.com"),
    "gitlab_pat": (g_glpat, "GitLab", "GITLAB_TOKEN", "PRIVATE-TOKEN: {v}", "gitlab.com"),
    "gitlab_deploy_token": (g_gldt, "GitLab deploy token", "CI_DEPLOY_PASSWORD", None, None),
    "gitlab_runner_token": (g_glrt, "GitLab runner", "RUNNER_TOKEN", None, None),
    "slack_bot_token": (g_xoxb, "Slack bot", "SLACK_BOT_TOKEN", B, "slack.com"),
    "slack_user_token": (g_xoxp, "Slack", "SLACK_USER_TOKEN", B, "slack.com"),
    "slack_app_token": (g_xapp, "Slack socket mode", "SLACK_APP_TOKEN", B, None),
    "telegram_bot_token": (g_telegram, "Telegram bot", "TELEGRAM_BOT_TOKEN", None, None),
    "stripe_secret_key": (g_stripe_sk, "Stripe", "STRIPE_SECRET_KEY", B, "api.stripe.com"),
    "stripe_restricted_key": (g_stripe_rk, "Stripe restricted", "STRIPE_RK", B, "api.stripe.com"),
    "square_access_token": (g_square, "Square", "SQUARE_ACCESS_TOKEN", B, "connect.squareup.com"),
    "square_oauth_secret": (g_square_secret, "Square OAuth", "SQUARE_APP_SECRET", None, None),
    "openai_api_key": (g_openai, "OpenAI", "OPENAI_API_KEY", B, "api.openai.com"),
    "anthropic_api_key": (g_anthropic, "Anthropic", "ANTHROPIC_API_KEY", "x-api-key: {v}", "api.anthropic.com"),
    "huggingface_token": (g_hf, "Hugging Face", "HF_TOKEN", B, "huggingface.co"),
    "perplexity_api_key": (g_pplx, "Perplexity", "PPLX_API_KEY", B, "api.perplexity.ai"),
    "groq_api_key": (g_groq, "Groq", "GROQ_API_KEY", B, "api.groq.com"),
    "replicate_token": (g_replicate, "Replicate", "REPLICATE_API_TOKEN", B, "api.replicate.com"),
    "deepseek_api_key": (g_deepseek, "DeepSeek", "DEEPSEEK_API_KEY", B, "api.deepseek.com"),
    "xai_api_key": (g_xai, "xAI Grok", "XAI_API_KEY", B, "api.x.ai"),
    "cohere_api_key": (g_cohere, "Cohere", "CO_API_KEY", B, "api.cohere.com"),
    "sendgrid_api_key": (g_sendgrid, "SendGrid", "SENDGRID_API_KEY", B, "api.sendgrid.com"),
    "mailgun_api_key": (g_mailgun, "Mailgun", "MAILGUN_API_KEY", None, None),
    "mailchimp_api_key": (g_mailchimp, "Mailchimp", "MAILCHIMP_API_KEY", None, None),
    "brevo_api_key": (g_brevo, "Brevo (Sendinblue)", "BREVO_API_KEY", "api-key: {v}", "api.brevo.com"),
    "twilio_api_key": (g_twilio_sk, "Twilio API key", "TWILIO_API_KEY", None, None),
    "twilio_auth_token": (g_twilio_auth, "Twilio auth token", "TWILIO_AUTH_TOKEN", None, None),
    "npm_token": (g_npm, "npm", "NPM_TOKEN", B, "registry.npmjs.org"),
    "pypi_token": (g_pypi, "PyPI", "TWINE_PASSWORD", None, None),
    "rubygems_api_key": (g_rubygems, "RubyGems", "GEM_HOST_API_KEY", "Authorization: {v}", "rubygems.org"),
    "nuget_api_key": (g_nuget, "NuGet", "NUGET_API_KEY", "X-NuGet-ApiKey: {v}", None),
    "dockerhub_pat": (g_docker, "Docker Hub", "DOCKERHUB_TOKEN", None, None),
    "doppler_token": (g_doppler, "Doppler", "DOPPLER_TOKEN", B, "api.doppler.com"),
    "pulumi_token": (g_pulumi, "Pulumi", "PULUMI_ACCESS_TOKEN", "Authorization: token {v}", "api.pulumi.com"),
    "vault_token": (g_vault, "Vault", "VAULT_TOKEN", "X-Vault-Token: {v}", None),
    "terraform_cloud_token": (g_tfc, "Terraform Cloud", "TFE_TOKEN", B, "app.terraform.io"),
    "linear_api_key": (g_linear, "Linear", "LINEAR_API_KEY", "Authorization: {v}", "api.linear.app"),
    "notion_token": (g_notion, "Notion", "NOTION_TOKEN", B, "api.notion.com"),
    "postman_api_key": (g_postman, "Postman", "POSTMAN_API_KEY", "X-Api-Key: {v}", "api.getpostman.com"),
    "shopify_access_token": (g_shpat, "Shopify admin", "SHOPIFY_ACCESS_TOKEN", "X-Shopify-Access-Token: {v}", None),
    "shopify_shared_secret": (g_shpss, "Shopify app", "SHOPIFY_API_SECRET", None, None),
    "databricks_token": (g_databricks, "Databricks", "DATABRICKS_TOKEN", B, None),
    "grafana_cloud_token": (g_glc, "Grafana Cloud", "GRAFANA_CLOUD_TOKEN", B, None),
    "grafana_service_account_token": (g_glsa, "Grafana", "GRAFANA_SA_TOKEN", B, None),
    "planetscale_password": (g_pscale, "PlanetScale", "DATABASE_PASSWORD", None, None),
    "sentry_user_token": (g_sentry, "Sentry", "SENTRY_AUTH_TOKEN", B, "sentry.io"),
    "newrelic_user_key": (g_newrelic, "New Relic", "NEW_RELIC_API_KEY", "Api-Key: {v}", "api.newrelic.com"),
    "dynatrace_token": (g_dynatrace, "Dynatrace", "DT_API_TOKEN", "Authorization: Api-Token {v}", None),
    "datadog_api_key": (g_datadog_api, "Datadog", "DD_API_KEY", "DD-API-KEY: {v}", "api.datadoghq.com"),
    "datadog_app_key": (g_datadog_app, "Datadog application key", "DD_APP_KEY", "DD-APPLICATION-KEY: {v}", "api.datadoghq.com"),
    "heroku_api_key": (g_heroku, "Heroku", "HEROKU_API_KEY", B, "api.heroku.com"),
    "flyio_token": (g_fly, "Fly.io", "FLY_API_TOKEN", B, None),
    "age_secret_key": (g_age, "age", "SOPS_AGE_KEY", None, None),
    "atlassian_api_token": (g_atlassian, "Jira", "JIRA_API_TOKEN", None, None),
    "okta_api_token": (g_okta, "Okta", "OKTA_API_TOKEN", "Authorization: SSWS {v}", None),
    "algolia_admin_key": (g_algolia, "Algolia admin", "ALGOLIA_ADMIN_KEY", "X-Algolia-API-Key: {v}", None),
    "airtable_pat": (g_airtable, "Airtable", "AIRTABLE_TOKEN", B, "api.airtable.com"),
    "contentful_delivery_token": (g_contentful, "Contentful", "CONTENTFUL_ACCESS_TOKEN", B, "cdn.contentful.com"),
    "mapbox_secret_token": (g_mapbox, "Mapbox", "MAPBOX_SECRET_TOKEN", None, "api.mapbox.com"),
    "trello_token": (g_trello, "Trello", "TRELLO_TOKEN", None, "api.trello.com"),
    "zendesk_api_token": (g_zendesk, "Zendesk", "ZENDESK_API_TOKEN", None, None),
    "twitch_client_secret": (g_twitch, "Twitch", "TWITCH_CLIENT_SECRET", None, None),
    "cloudflare_api_token": (g_cloudflare, "Cloudflare", "CLOUDFLARE_API_TOKEN", B, "api.cloudflare.com"),
    "netlify_token": (g_netlify, "Netlify", "NETLIFY_AUTH_TOKEN", B, "api.netlify.com"),
    "confluent_api_secret": (g_confluent, "Confluent Cloud", "CONFLUENT_API_SECRET", None, None),
    "sendbird_api_token": (g_sendbird, "Sendbird", "SENDBIRD_API_TOKEN", "Api-Token: {v}", None),
    "kakao_rest_api_key": (g_kakao, "Kakao REST API", "KAKAO_REST_API_KEY", "Authorization: KakaoAK {v}", "dapi.kakao.com"),
    "naver_client_secret": (g_naver, "Naver 검색 API", "NAVER_CLIENT_SECRET", "X-Naver-Client-Secret: {v}", None),
    "snyk_token": (g_snyk, "Snyk", "SNYK_TOKEN", "Authorization: token {v}", None),
    "sonarqube_token": (g_sonar, "SonarQube", "SONAR_TOKEN", None, None),
    "sourcegraph_token": (g_sourcegraph, "Sourcegraph", "SRC_ACCESS_TOKEN", "Authorization: token {v}", None),
    "typeform_token": (g_typeform, "Typeform", "TYPEFORM_TOKEN", B, "api.typeform.com"),
    "infracost_api_key": (g_infracost, "Infracost", "INFRACOST_API_KEY", "X-Api-Key: {v}", None),
    "prefect_api_key": (g_prefect, "Prefect Cloud", "PREFECT_API_KEY", B, None),
    "easypost_api_key": (g_easypost, "EasyPost", "EASYPOST_API_KEY", None, None),
    "launchdarkly_token": (g_launchdarkly, "LaunchDarkly", "LD_API_TOKEN", "Authorization: {v}", None),
    "fastly_api_token": (g_fastly, "Fastly", "FASTLY_API_TOKEN", "Fastly-Key: {v}", "api.fastly.com"),
    "intercom_access_token": (g_intercom, "Intercom", "INTERCOM_ACCESS_TOKEN", B, "api.intercom.io"),
    "braintree_private_key": (g_braintree, "Braintree", "BRAINTREE_PRIVATE_KEY", None, None),
    "bitbucket_client_secret": (g_bitbucket, "Bitbucket OAuth consumer", "BITBUCKET_CLIENT_SECRET", None, None),
    "internal_api_token": (g_hex40, "internal billing API", "BILLING_API_TOKEN", B, "billing.internal.corp"),
    "jwt": (g_jwt, "admin API", "ADMIN_JWT", B, "admin.internal.corp"),
    "django_secret_key": (g_django_secret, "Django", "SECRET_KEY", None, None),
    "hmac_signing_secret": (g_hmac_secret, "webhook signing", "WEBHOOK_SIGNING_SECRET", None, None),
}

# --------------------------------------------------------------------------
# template pools.  Placeholders:
#   {v} value  {svc} service  {env} env/key name  {H} header line holding {v}
#   {who} {host} {n} {t} {rid} {path}
# --------------------------------------------------------------------------

TOKEN_T = {
    "dev": {
        "en": [
            "Chat log pasted for context — @{who}: here's the {svc} key: {v}\nLesson: never paste live keys into chat, rotate after.",
            "{who} in #deploy: \"use this one → {v} (the old {svc} token got revoked)\". Keep a note that the new one lives in the vault now.",
            "Handover note: {svc} creds are in {env}, current value {v}, expires end of quarter.",
            "INC-{n} postmortem: the {svc} token ({v}) was printed by the retry wrapper into the build log; we added masking.",
            "Bug report quoted the failing call:\n```\ncurl -s https://{host}/v1/status \\\n  -H \"{H}\"\n```\nThe 401 came from a trailing newline in the env file.",
            "Log line from the worker: `{t} WARN auth failed for {svc} key={v} status=401` — the key was from the staging project.",
            "| service | variable | value |\n|---|---|---|\n| {svc} | {env} | `{v}` |\nThis table was in the old onboarding doc; moved it into the secret manager.",
            "- {svc}: {v}\n- region: ap-northeast-2\nThe handover list above should have pointed to 1Password instead of listing the key.",
            "Ticket comment from {who}: tried again with {env}={v} and it works now, closing.",
            "Email from vendor: \"Your new {svc} API key is {v}. Please store it securely.\" Lesson: forward only the vault link.",
            "Quick one from {who}: the {svc} token changed, it's now {v}!",
            "Subject: {svc} access\n\nHi team,\nthe production key is: {v}\nThanks,\n{who}\n(kept here only as an example of what not to send)",
            "Jira comment: {svc} ({env}) = {v}; verified with a test call, see attached response.",
        ],
        "ko": [
            "{who}님 슬랙 메시지: {svc} 키 여기요: {v}\n→ 채팅에 키 붙이지 말고 볼트 링크로 공유하기.",
            "인수인계 메모: {svc} 토큰은 {v}이고, 만료는 다음 달 말입니다.",
            "장애 보고서 INC-{n}: 빌드 로그에 {env}={v} 값이 그대로 찍혀서 마스킹 옵션 추가함.",
            "{svc} 연동할 때 {v}을 넣으세요 라고 전달받았는데, 스테이징용 키였음.",
            "티켓 댓글: 토큰 `{v}`로 다시 호출하니 200 나옵니다. 원인은 헤더 오타였어요.",
            "토큰 여기요: {v} ({svc}용, 운영 아님)",
            "{who}: ㅇㅋ {svc} 키 {v} 로 바꿨어요~ 재배포 부탁드려요",
        ],
    },
    "heldout": {
        "en": [
            "Copied from the on-call thread: \"{svc} key is {v}, don't share it outside the team.\" We rotated it the next morning.",
            "Request from the bug report, verbatim:\nPOST /api/v2/jobs HTTP/1.1\nHost: {host}\n{H}\nContent-Type: application/json\nThe server rejected it because of clock skew.",
            "Stack trace excerpt: `AuthError: invalid credentials (token=\"{v}\")` raised from {path} — the {svc} client logs the token on failure.",
            "Notes from the call with {who}: {svc} → {v}; project id is the one in the README.",
            "Per {who}'s message, set {env} to '{v}' in the CI settings, then re-run the pipeline.",
            "Incident timeline {t}: attacker used the leaked {svc} credential {v} from a public gist.",
            "Service | Key\n------- | ---\n{svc} | {v}\nRemoved this from the wiki page after the audit.",
            "Ops journal: rotated {svc}; new value - {v} - pushed to the parameter store.",
            "> {who}: pw for the {svc} integration? \n> {who2}: it's a token not a pw: {v}\nLesson: move such exchanges to the secrets tool.",
            "Reproduction steps in the issue used `{env}=\"{v}\" ./run.sh`, which leaked into shell history.",
            "Slack DM transcribed for the audit: 'ok here -> {v} ({svc}, prod)'.",
            "From: {who}@example.com\nTo: ops@example.com\nRe: {svc} rotation\n\nNew key below.\n\n{v}\n\n-- sent from my phone",
            "Error in CI: `fatal: {svc} rejected token \"{v}\": scope missing`",
        ],
        "ko": [
            "{who}: {svc} 시크릿 이거 쓰시면 돼요 → {v}\n(다음부터는 디엠으로도 보내지 말기)",
            "포스트모템: 공개 저장소에 {svc} 인증키({v})가 커밋되어 즉시 폐기했습니다.",
            "{svc} 액세스 키는 \"{v}\"입니다. 설정 파일 {path}에 넣고 재시작하세요.",
            "로그에 `{env}: {v}`가 남아 있어서 로그 수집기에서 필터 추가함.",
            "에러 메시지 그대로: 401 Unauthorized (key {v}) — {svc} 프로젝트가 달라서 생긴 문제.",
            "{svc} 인증키 알려드릴게요. {v} 입니다!",
            "{who}님 {env} 값을 {v}로 업데이트 부탁드려요.",
        ],
    },
}

# header-only forms (used when the kind has a header)
HDR_T = {
    "dev": {
        "en": ["Raw request from the support ticket:\nGET /v1/me HTTP/1.1\n{H}\nAccept: */*\nReturned 403 because the {svc} scope was read-only."],
        "ko": ["재현 요청 헤더 (고객 문의에서 복사):\n{H}\n→ {svc} 권한 범위가 부족해서 403."],
    },
    "heldout": {
        "en": ["HAR export attached to the bug had `{H}` in the request headers; scrub HAR files before uploading."],
        "ko": ["브라우저 네트워크 탭 캡처에 `{H}` 헤더가 보였어요. 캡처 올리기 전에 가리기."],
    },
}

# query-parameter forms (used when the kind has an api host)
QP_T = {
    "dev": {
        "en": ["The nginx access log kept full URLs: \"GET https://{host}/v1/search?q=test&api_key={v} HTTP/1.1\" 200 — strip query strings in logs."],
        "ko": ["프록시 로그에 https://{host}/v1/query?token={v}&page=2 이런 식으로 남음. 쿼리스트링 로깅 끄기."],
    },
    "heldout": {
        "en": ["Error message quoted in the ticket: requests.exceptions.HTTPError: 429 Client Error for url: https://{host}/v3/items?access_token={v}"],
        "ko": ["에러: 요청 실패 url=https://{host}/api?key={v} (429). {svc} 쿼터 초과였음."],
    },
}

PASSWORD_KINDS = {
    # kind -> (what people call it, key name)
    "password_assignment": ("the admin console", "password"),
    "chat_password": ("the shared staging box", "pw"),
    "db_password_env": ("the reporting database", "DB_PASSWORD"),
    "smtp_password": ("the SMTP relay", "SMTP_PASSWORD"),
    "keystore_password": ("the Android release keystore", "storePassword"),
    "ldap_bind_password": ("the LDAP bind account", "bindPassword"),
    "wifi_router_admin_password": ("the office router admin page", "admin password"),
}

PW_T = {
    "dev": {
        "en": [
            "{who}: pw is {v} for {what}, user is {user}.",
            "Handover: login for {what} — {user} / {v}",
            "Config snippet from the ticket:\n```\n{key}={v}\n```\nfor {what}; moved it to an env var afterwards.",
            "Incident note: {what} password (`{v}`) was in the README since March; changed it and purged history.",
            "| system | user | password |\n|---|---|---|\n| {what} | {user} | {v} |",
            "Email thread: \"The {key} for {what} is: {v}. Let me know if it doesn't work.\"",
        ],
        "ko": [
            "{what} 비번은 {v}이고 아이디는 {user}예요.",
            "{who}님: 비밀번호 {v}로 로그인하시면 됩니다 ({what}).",
            "인수인계: {key}: {v} ← {what}용, 다음 주에 변경 예정",
        ],
    },
    "heldout": {
        "en": [
            "Message from {who}: \"{user} + {v}\" gets you into {what}. Please change it after first login.",
            "The failing test printed `login({user!r}, {v!r})` for {what}; removed the debug print.",
            "From the postmortem: the password for {what} was '{v}' and had never been rotated.",
            "Onboarding bullet list:\n* host: {host}\n* user: {user}\n* {key}: {v}\nThis belongs in the vault, not the wiki.",
            "Slack: try {user} with {v} — {what} only, not prod.",
            "Log excerpt: `DEBUG connecting to {what} with {key}=\"{v}\"` — lowered the log level.",
        ],
        "ko": [
            "{what} 접속 정보: 계정 {user}, 비밀번호는 \"{v}\"입니다.",
            "비번 바뀌었어요 → {v} ({what})",
            "장애 회고: {what} {key}가 `{v}`로 설정 파일에 평문 저장돼 있었음.",
        ],
    },
}

URL_KINDS = {
    # kind -> (scheme builder)
    "postgres_url_password": "postgresql://{user}:{v}@{dbhost}:5432/{db}",
    "mysql_url_password": "mysql://{user}:{v}@{dbhost}:3306/{db}",
    "mongodb_srv_password": "mongodb+srv://{user}:{v}@cluster0.{sub}.mongodb.net/{db}?retryWrites=true",
    "redis_url_password": "redis://default:{v}@{dbhost}:6379/0",
    "amqp_url_password": "amqps://{user}:{v}@{dbhost}:5671/{db}",
    "basic_auth_url_password": "https://{user}:{v}@{dbhost}/simple/",
    "jdbc_password_param": "jdbc:postgresql://{dbhost}:5432/{db}?user={user}&password={v}",
    "smtp_url_password": "smtp://{user}:{v}@smtp.{sub}.example.net:587",
}

URL_T = {
    "dev": {
        "en": [
            "{who} shared the connection string in chat: {url}\nLesson: share the secret-manager path, not the URL.",
            "Incident report: the worker logged its {what} URL on startup ({url}), so the password ended up in Loki.",
            "Bug report: `OperationalError: could not connect using {url}` — the host was wrong, not the password.",
            "Handover: {what} → {url}",
        ],
        "ko": [
            "{what} 접속 URL은 {url} 이거 쓰시면 돼요.",
            "에러 로그에 {url}가 그대로 찍힘. 연결 문자열 로깅 제거함.",
        ],
    },
    "heldout": {
        "en": [
            "Ticket comment: can you try `{url}`? That's the {what} replica.",
            "Traceback quoted in the issue ended with: ValueError: invalid URL '{url}'",
            "Postmortem: a .env with DATABASE_URL={url} was baked into the image layer.",
            "- {what}\n  - url: {url}\n  - owner: {who}",
        ],
        "ko": [
            "인수인계 메모 - {what}: {url} (읽기 전용 계정 아님 주의)",
            "{who}님이 보내준 주소 {url}로 접속하니 됩니다.",
        ],
    },
}

SPECIAL_KINDS = ["aws_secret_access_key", "azure_storage_account_key", "alibaba_access_key_secret",
                 "slack_webhook_url", "discord_webhook_url", "teams_webhook_url",
                 "basic_auth_header", "session_cookie", "set_cookie_session", "express_session_cookie",
                 "gitlab_session_cookie"] + list(PEM_KINDS)

NAMES = ["minji", "jaehyun", "sora", "alex", "dana", "priya", "tom", "yuna", "hyunwoo", "kate", "seojin", "marco"]
KO_NAMES = ["민지", "재현", "소라", "현우", "서진", "유나", "지훈", "하늘"]
USERS = ["admin", "deploy", "svc_report", "app_user", "ops", "root", "ci-bot", "readonly_analytics"]
HOSTS = ["db-prod-1.internal", "pg.staging.corp", "10.0.3.17", "mq.internal.corp", "cache-01.svc.local",
         "pkgs.internal.corp", "mysql-replica.ap-northeast-2.rds.amazonaws.com"]
PATHS = ["src/clients/vendor.py", "app/services/notify.ts", "internal/auth/client.go", "lib/sync/worker.rb",
         "config/settings/prod.py"]
WHAT_URL = ["orders database", "analytics warehouse", "job queue", "session cache", "package mirror", "mail relay"]


def fill(tpl: str, r: random.Random, ctx: dict) -> str:
    base = {
        "who": r.choice(NAMES), "who2": r.choice(NAMES), "n": r.randint(100, 9999),
        "t": f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}Z",
        "path": r.choice(PATHS), "host": r.choice(HOSTS), "user": r.choice(USERS),
    }
    base.update(ctx)
    return tpl.format(**base)


def _pick(pool, i, r):
    return pool[(i + r.randint(0, len(pool) - 1)) % len(pool)]


def gen_token_kind(kind, part, r, count):
    gen, svc, env, hdr, host = TOK[kind]
    out = []
    pools = TOKEN_T[part]
    for i in range(count):
        lang = "ko" if i % 3 == 2 else "en"
        v = gen(r)
        ctx = {"v": v, "svc": svc, "env": env, "host": host or "api.vendor.example"}
        ctx["H"] = (hdr or "Authorization: Bearer {v}").format(v=v)
        if lang == "ko":
            ctx["who"] = r.choice(KO_NAMES)
        choice = r.random()
        if hdr and choice < 0.2:
            tpl = r.choice(HDR_T[part][lang])
        elif host and choice < 0.35:
            tpl = r.choice(QP_T[part][lang])
        else:
            tpl = _pick(pools[lang], i, r)
        if kind == "aws_access_key_id" and r.random() < 0.5:
            # pair with its secret: both are credentials
            sec = g_aws_secret(r)
            text = fill(tpl, r, ctx) + ("\n(시크릿: " + sec + ")" if lang == "ko" else f"\nsecret access key was {sec}")
            out.append((text, kind, (v, sec), lang))
            continue
        out.append((fill(tpl, r, ctx), kind, (v,), lang))
    return out


def gen_pw_kind(kind, part, r, count):
    what, key = PASSWORD_KINDS[kind]
    ko_what = {"the admin console": "관리자 콘솔", "the shared staging box": "스테이징 공용 서버",
               "the reporting database": "리포팅 DB", "the SMTP relay": "SMTP 릴레이",
               "the Android release keystore": "안드로이드 릴리스 키스토어",
               "the LDAP bind account": "LDAP 바인드 계정", "the office router admin page": "사무실 공유기 관리자 페이지"}[what]
    out = []
    for i in range(count):
        lang = "ko" if i % 3 == 2 else "en"
        v = g_password(r)
        ctx = {"v": v, "what": ko_what if lang == "ko" else what, "key": key}
        if lang == "ko":
            ctx["who"] = r.choice(KO_NAMES)
        tpl = _pick(PW_T[part][lang], i, r)
        out.append((fill(tpl, r, ctx), kind, (v,), lang))
    return out


def gen_url_kind(kind, part, r, count):
    out = []
    for i in range(count):
        lang = "ko" if i % 3 == 2 else "en"
        v = g_url_password(r)
        url = URL_KINDS[kind].format(user=r.choice(USERS), v=v, dbhost=r.choice(HOSTS), db=r.choice(["orders", "app", "analytics", "jobs"]),
                                     sub=rs(r, ANL, 5))
        what = r.choice(WHAT_URL)
        if lang == "ko":
            what = {"orders database": "주문 DB", "analytics warehouse": "분석용 웨어하우스", "job queue": "작업 큐",
                    "session cache": "세션 캐시", "package mirror": "패키지 미러", "mail relay": "메일 릴레이"}[what]
        ctx = {"url": url, "what": what}
        if lang == "ko":
            ctx["who"] = r.choice(KO_NAMES)
        tpl = _pick(URL_T[part][lang], i, r)
        out.append((fill(tpl, r, ctx), kind, (v,), lang))
    return out


# special kinds: each has its own dev and heldout forms
def gen_special(kind, part, r, count):
    out = []
    dev = part == "dev"
    for i in range(count):
        lang = "ko" if i % 3 == 2 else "en"
        who = r.choice(KO_NAMES if lang == "ko" else NAMES)
        n = r.randint(100, 9999)
        if kind == "aws_secret_access_key":
            kid = g_aws_id(r)
            s = g_aws_secret(r)
            if dev:
                t = (f"{who}: 새 IAM 키 발급했어요. 액세스 키 {kid}, 시크릿 키는 {s}입니다." if lang == "ko" else
                     r.choice([f"{who} pasted into #infra: access key {kid} / secret {s} — use for the backup job only.",
                               f"Handover note:\n- aws_access_key_id = {kid}\n- aws_secret_access_key = {s}\nRotate before the migration."]))
            else:
                t = (f"장애 회고: ~/.aws/credentials 내용(aws_secret_access_key={s})이 스크린샷에 찍혀 공유됨. 키 ID {kid}도 폐기." if lang == "ko" else
                     r.choice([f"From the leaked gist: `AWS_SECRET_ACCESS_KEY=\"{s}\"` alongside id {kid}. Both deactivated in IAM.",
                               f"| user | key id | secret |\n|---|---|---|\n| backup-bot | {kid} | {s} |"]))
            out.append((t, kind, (kid, s), lang))
            continue
        if kind == "azure_storage_account_key":
            s = g_azure_storage(r)
            acct = "st" + rs(r, ANL, 10)
            cs = f"DefaultEndpointsProtocol=https;AccountName={acct};AccountKey={s};EndpointSuffix=core.windows.net"
            if dev:
                t = (f"스토리지 연결 문자열 여기요: {cs}" if lang == "ko" else
                     r.choice([f"{who} dropped the Azure storage connection string in the ticket: {cs}",
                               f"INC-{n}: function app logged its config, including {cs}"]))
            else:
                t = (f"Azure 스토리지 계정 키는 {s}이고 계정명은 {acct}예요." if lang == "ko" else
                     r.choice([f"Storage account {acct}, key1 → {s} (regenerated after the audit)",
                               f"Bug: SDK threw 'Server failed to authenticate the request' with AccountKey={s}; the clock was off."]))
            out.append((t, kind, (s,), lang))
            continue
        if kind == "alibaba_access_key_secret":
            kid = g_alibaba_id(r)
            s = g_alibaba_secret(r)
            if dev:
                t = (f"알리바바 클라우드 AccessKey ID {kid}, AccessKey Secret은 {s}입니다." if lang == "ko" else
                     f"Alibaba Cloud creds from the vendor email: AccessKeyId {kid}, AccessKeySecret {s}.")
            else:
                t = (f"알리윈 OSS 업로드용 시크릿: {s} (ID {kid})" if lang == "ko" else
                     f"The OSS uploader printed `accessKeySecret: '{s}'` for key {kid} in its debug output.")
            out.append((t, kind, (kid, s), lang))
            continue
        if kind == "slack_webhook_url":
            mid, s = g_slack_hook(r)
            url = "https://hooks." + "slack.com/services/" + mid + s
            if dev:
                t = (f"알림용 슬랙 웹훅 URL은 {url} 입니다." if lang == "ko" else
                     r.choice([f"{who}: alerts webhook → {url}", f"Incident INC-{n}: someone spammed #alerts via the webhook {url} found in a public repo."]))
            else:
                t = (f"웹훅 주소 바뀜: {url} (이전 건 폐기)" if lang == "ko" else
                     r.choice([f"curl -X POST -d '{{\"text\":\"deploy done\"}}' {url} was in the runbook; replaced with a secret reference.",
                               f"Ticket: notifier fails with 'no_service' for {url}."]))
            out.append((t, kind, (s,), lang))
            continue
        if kind == "discord_webhook_url":
            wid, s = g_discord_hook(r)
            url = "https://discord.com/api/" + "webhooks/" + wid + "/" + s
            if dev:
                t = (f"디스코드 웹훅: {url}" if lang == "ko" else f"{who} shared the Discord webhook for build alerts: {url}")
            else:
                t = (f"빌드 알림은 {url}로 보내고 있어요." if lang == "ko" else f"Postmortem: the Discord webhook ({url}) was embedded in the client bundle.")
            out.append((t, kind, (s,), lang))
            continue
        if kind == "teams_webhook_url":
            s = g_teams_hook(r)
            u1, u2, u3 = (str(uuid.UUID(int=r.getrandbits(128), version=4)) for _ in range(3))
            url = f"https://contoso{rs(r, LO, 4)}.webhook.office.com/webhookb2/{u1}@{u2}/IncomingWebhook/{s}/{u3}"
            if dev:
                t = (f"팀즈 채널 웹훅 주소 {url} 이거 넣으세요." if lang == "ko" else f"Teams incoming webhook from the handover doc: {url}")
            else:
                t = (f"회고: Teams 웹훅 {url} 이 공개 위키에 있었음." if lang == "ko" else f"The alert script posts to {url} — should come from the vault.")
            out.append((t, kind, (s,), lang))
            continue
        if kind == "basic_auth_header":
            user = r.choice(USERS)
            pw = g_url_password(r)
            b = base64.b64encode(f"{user}:{pw}".encode()).decode()
            if dev:
                t = (f"고객 문의에 첨부된 요청 헤더: Authorization: Basic {b}" if lang == "ko" else
                     r.choice([f"Raw request in the bug report:\nGET /artifactory/api/repositories HTTP/1.1\nAuthorization: Basic {b}\nUser-Agent: curl/8.4.0",
                               f"{who}: the Jenkins job sends `Authorization: Basic {b}` and gets 401 since the password change."]))
            else:
                t = (f"로그에 'authorization': 'Basic {b}' 가 그대로 남아 있었음." if lang == "ko" else
                     r.choice([f"Proxy log excerpt: headers={{'Authorization': 'Basic {b}', 'Accept': 'application/json'}}",
                               f"Incident INC-{n}: basic auth header (Basic {b}) captured in the APM trace."]))
            out.append((t, kind, (b,), lang))
            continue
        if kind in ("session_cookie", "set_cookie_session", "express_session_cookie", "gitlab_session_cookie"):
            if kind == "express_session_cookie":
                s = g_connect_sid(r)
                name = "connect.sid"
            elif kind == "gitlab_session_cookie":
                s = g_session(r)
                name = "_gitlab_session"
            else:
                s = g_session(r) if kind == "session_cookie" else mixed(r, URLSAFE, 43)
                name = "sessionid" if kind == "session_cookie" else "__Host-session"
            if kind == "set_cookie_session":
                line = f"Set-Cookie: {name}={s}; Path=/; Secure; HttpOnly; SameSite=Lax"
            else:
                line = f"Cookie: theme=dark; {name}={s}"
            if dev:
                t = (f"재현할 때 쓴 쿠키예요 → {line}" if lang == "ko" else
                     r.choice([f"Bug report response headers:\nHTTP/1.1 302 Found\nLocation: /dashboard\n{line}",
                               f"{who} pasted their browser cookie to reproduce: `{line}`"]))
            else:
                t = (f"지원팀이 세션 값({name}={s})을 티켓에 남김. 해당 세션 강제 만료 처리." if lang == "ko" else
                     r.choice([f"Logged by the debug middleware: request.cookies = {{'{name}': '{s}'}}",
                               f"Postmortem: the {name} value {s} was visible in a shared screenshot; sessions were invalidated."]))
            out.append((t, kind, (s,), lang))
            continue
        if kind in PEM_KINDS:
            label, first = PEM_KINDS[kind]
            lines = pem_lines(r, r.randint(3, 5), first)
            pem = "-----BEGIN " + label + "-----\n" + "\n".join(lines) + "\n-----END " + label + "-----"
            if dev:
                t = (f"배포 서버 키 여기 붙여요:\n{pem}\n(다음엔 파일로 전달하기)" if lang == "ko" else
                     r.choice([f"{who} pasted the deploy key into the thread:\n{pem}\nLesson: send a vault path instead.",
                               f"INC-{n}: this key was committed in infra/keys/:\n```\n{pem}\n```"]))
            else:
                t = (f"회고: 아래 개인 키가 위키 페이지에 있었음.\n{pem}" if lang == "ko" else
                     r.choice([f"From the handover doc, section 'SSH access':\n{pem}",
                               f"Ticket attachment contents (should never have been uploaded):\n{pem}"]))
            out.append((t, kind, tuple(lines), lang))
            continue
        raise KeyError(kind)
    return out


# --------------------------------------------------------------------------
# negatives
# --------------------------------------------------------------------------

def _sha(r, n=40):
    return rs(r, HX, n)


def _uuid(r):
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def _integrity(r):
    return "sha512-" + base64.b64encode(hashlib.sha512(rs(r, AN, 20).encode()).digest()).decode()


def _ed25519_pub(r):
    return "ssh-ed25519 " + "AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, B64, 43) + " " + r.choice(NAMES) + "@laptop"


SVC_ENV = [("GitHub", "GITHUB_TOKEN"), ("Stripe", "STRIPE_SECRET_KEY"), ("OpenAI", "OPENAI_API_KEY"),
           ("Slack", "SLACK_BOT_TOKEN"), ("Datadog", "DD_API_KEY"), ("Sentry", "SENTRY_AUTH_TOKEN"),
           ("Postgres", "DB_PASSWORD"), ("npm", "NPM_TOKEN"), ("Twilio", "TWILIO_AUTH_TOKEN"), ("Vault", "VAULT_TOKEN")]
KO_SVC = ["깃허브", "슬랙", "스트라이프", "데이터독", "센트리", "노션"]


def neg_dev(r):
    (svc, env), who = r.choice(SVC_ENV), r.choice(NAMES)
    kw = r.choice(NAMES)
    en = [
        ("placeholder", f"{who}: here's the template for the {svc} key: {env}=<YOUR_TOKEN_HERE> — fill it in locally, never commit it."),
        ("placeholder", f"Handover note: {svc} token lives in 1Password under 'ci/{svc.lower()}'; the .env.example has {env}=xxxxxxxxxxxxxxxx."),
        ("placeholder", f"Ticket comment: set `{env}=${{{env}}}` in the workflow and let the runner inject it."),
        ("placeholder", f"Log line after the fix: `auth ok for {svc} key=****{rs(r, DG, 0)}` — we only print the mask now."),
        ("code", f"Bug was in {r.choice(PATHS)}: `token = os.environ[\"{env}\"]` ran at import time, before load_dotenv()."),
        ("code", f"Fix: `const key = process.env.{env} ?? ''; if (!key) throw new Error('missing {env}')` instead of a silent fallback."),
        ("prose", f"INC-{r.randint(100, 9999)} postmortem: the {svc} token expired at midnight UTC and nobody owned rotation; added a calendar reminder and an expiry alert."),
        ("prose", f"{who} asked for the {svc} password in chat; we pointed them to the access-request form instead."),
        ("git_sha", f"The regression came in with commit {_sha(r)} ({who}'s refactor of the {svc} client); reverted in {_sha(r)[:12]}."),
        ("uuid", f"Error from {svc}: 500 Internal Server Error, request id {_uuid(r)} — their support needed that id to look it up."),
        ("digest", f"Pinned the base image to python@sha256:{_sha(r, 64)} after the tag was re-pushed."),
        ("integrity", f"package-lock diff showed \"integrity\": \"{_integrity(r)}\" changing for the same version, which meant a republish."),
        ("version", f"Upgrading the {svc} SDK from {r.randint(1, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} to {r.randint(10, 19)}.0.0 changed how the token is read from env."),
        ("public_key", f"Added {who}'s public key to authorized_keys: {_ed25519_pub(r)}"),
        ("key_id", f"The JWKS endpoint rotated: old kid `{rs(r, URLSAFE, 22)}` is gone, clients must refetch /.well-known/jwks.json."),
        ("url", f"Docs link for rotating {svc} tokens: https://docs.example.com/{svc.lower()}/tokens#rotate?ref=handover&tab=api"),
        ("hash", f"Cache key was md5 of the request body ({_sha(r, 32)}), so two users collided when bodies matched."),
        ("base64_data", f"The webhook payload is base64 JSON, e.g. {base64.b64encode(json.dumps({'event': 'deploy', 'ok': True, 'n': r.randint(1, 99)}).encode()).decode()} — decode before parsing."),
        ("identifier", f"Renamed get{svc}AccessTokenFromEnvironmentOrThrow to loadToken in {r.choice(PATHS)}."),
        ("http", f"Bug report request:\nGET /v1/health HTTP/1.1\nHost: api.{svc.lower()}.example\nAuthorization: Bearer <redacted by reporter>\nReturns 200 without auth, which is intended."),
        ("changeme", f"Default password in docker-compose is `changeme`; the entrypoint refuses to start in prod if it's unchanged."),
        ("table", f"| service | where the key lives |\n|---|---|\n| {svc} | vault: kv/{svc.lower()}/api |\n| Sentry | SSM /prod/sentry/dsn |"),
    ]
    ko = [
        ("placeholder", f"{r.choice(KO_NAMES)}님: {r.choice(KO_SVC)} 토큰은 `.env`에 {env}=<발급받은_토큰> 형태로 넣으세요. 실제 값은 볼트에 있어요."),
        ("prose", f"비번 공유는 채팅 말고 1Password 공유 볼트로 해주세요. {r.choice(KO_SVC)} 키도 마찬가지입니다."),
        ("prose", f"장애 회고 INC-{r.randint(100, 9999)}: {r.choice(KO_SVC)} 토큰 만료로 배포 실패. 만료 알림 추가함."),
        ("code", f"토큰은 `os.getenv(\"{env}\")`로 읽고, 없으면 바로 예외 던지게 수정했어요."),
        ("git_sha", f"문제 커밋은 {_sha(r)}이고 되돌린 커밋은 {_sha(r)[:10]}입니다."),
        ("uuid", f"요청 ID {_uuid(r)}로 벤더에 문의했어요. 500 에러 원인은 그쪽 장애였음."),
        ("digest", f"이미지 다이제스트 sha256:{_sha(r, 64)}로 고정해서 재배포함."),
        ("placeholder", f"비밀번호 칸에는 ******** 만 보이게 마스킹 처리했습니다."),
        ("version", f"{r.choice(KO_SVC)} SDK 버전을 {r.randint(2, 5)}.{r.randint(0, 20)}.{r.randint(0, 9)}로 올린 뒤 인증 방식이 바뀌었어요."),
        ("public_key", f"공개키 등록 완료: {_ed25519_pub(r)}"),
        ("url", f"키 재발급 방법은 https://wiki.example.com/security/rotate-keys 문서를 참고하세요."),
    ]
    return en, ko


def neg_heldout(r):
    (svc, env), who = r.choice(SVC_ENV), r.choice(NAMES)
    en = [
        ("placeholder", f"From the on-call thread: \"{svc} key is in the usual place, {env} in the team vault — don't paste it here.\""),
        ("placeholder", f"README now says: export {env}='your-{svc.lower()}-key' (replace with your own)."),
        ("placeholder", f"Runbook step 3: `curl -H \"Authorization: Bearer $TOKEN\" https://api.{svc.lower()}.example/v1/me` where TOKEN comes from `vault kv get`."),
        ("placeholder", f"Sample config checked in: api_key: \"REPLACE_ME\" and secret: \"\" — both are loaded from env in prod."),
        ("code", f"The middleware does `req.headers.authorization?.replace(/^Bearer /, '')` and passes it to verifyToken(); it never logs the value."),
        ("code", f"Changed `password = settings.DB_PASSWORD` to read from the secret manager in {r.choice(PATHS)}."),
        ("prose", f"Incident timeline: 10:02 alert fired, 10:05 {who} rotated the {svc} credential, 10:20 consumers picked up the new value from the vault."),
        ("prose", f"Lesson: when a user pastes a password into a ticket, delete the comment and ask them to reset it."),
        ("git_sha", f"Bisected to {_sha(r)}; the parent {_sha(r)} still passes the {svc} auth tests."),
        ("uuid", f"Stack trace: TimeoutError after 30s (trace_id={_uuid(r)}, span={rs(r, HX, 16)}) in the {svc} client."),
        ("digest", f"docker pull registry.example.com/app@sha256:{_sha(r, 64)} fails on arm64; no multi-arch manifest."),
        ("integrity", f"yarn.lock checksum mismatch: expected {_integrity(r)} — cleared the cache and it resolved."),
        ("hash", f"Artifact checksum (sha256) {_sha(r, 64)} matched the release page, so the download was fine."),
        ("key_id", f"GPG key fingerprint {rs(r, UP[:6] + DG, 40)} is what signs our release tags; it's public."),
        ("key_id", f"KMS key arn:aws:kms:ap-northeast-2:{rs(r, DG, 12)}:key/{_uuid(r)} encrypts the bucket; the ARN is not secret."),
        ("url", f"Webhook target is https://hooks.example.com/ci/{r.choice(['deploy', 'build', 'release'])} and it checks the X-Signature header."),
        ("identifier", f"Long test name: test_{svc.lower()}_client_refreshes_expired_access_token_without_retry_storm_{r.randint(1, 9)} started flaking."),
        ("http", f"Response from the failing call:\nHTTP/1.1 401 Unauthorized\nWWW-Authenticate: Bearer realm=\"api\", error=\"invalid_token\"\nContent-Type: application/json"),
        ("masked", f"Log after redaction looked like: token=sk-****...{rs(r, DG, 0)}**** user={who} status=403"),
        ("base64_data", f"The cursor param is just base64 of JSON: {base64.urlsafe_b64encode(json.dumps({'offset': r.randint(0, 999), 'limit': 50}).encode()).decode()}."),
        ("table", f"Service | Owner | Rotation\n------- | ----- | --------\n{svc} | {who} | 90 days\nDatadog | sre | 180 days"),
        ("path", f"Keys are mounted at /var/run/secrets/{svc.lower()}/token and read once at startup."),
    ]
    ko = [
        ("placeholder", f"{r.choice(KO_NAMES)}: 시크릿은 여기 붙이지 마시고 볼트 경로 kv/{svc.lower()}/prod 참고하세요."),
        ("placeholder", f"설정 예시: {env}=여기에_토큰_입력 (실제 값 아님)"),
        ("prose", f"토큰 만료되면 401이 나니까, 재발급 후 파드 재시작하면 됩니다."),
        ("prose", f"비밀번호를 티켓에 적으신 분이 있어서 댓글 삭제하고 재설정 요청드렸어요."),
        ("code", f"헤더에서 `Authorization` 값을 꺼내서 verify_token()에 넘기도록 수정, 값은 로그에 안 남깁니다."),
        ("git_sha", f"{_sha(r)} 커밋부터 인증 테스트가 깨져요."),
        ("uuid", f"트레이스 ID {_uuid(r)} 기준으로 보면 토큰 갱신이 두 번 일어났어요."),
        ("hash", f"다운로드 파일 sha256 체크섬 {_sha(r, 64)} 확인 완료."),
        ("version", f"노드 버전 {r.randint(18, 22)}.{r.randint(0, 12)}.{r.randint(0, 9)}에서 fetch 헤더 처리 방식이 달라서 생긴 문제."),
        ("key_id", f"서명용 GPG 키 ID {rs(r, HX.upper(), 16)}는 공개 키서버에 올라가 있는 값이라 시크릿 아님."),
        ("url", f"인증 서버 주소는 https://auth.example.co.kr/oauth2/token 입니다."),
    ]
    return en, ko


def negatives(part, r, n_target):
    f = neg_dev if part == "dev" else neg_heldout
    out, seen = [], set()
    tries = 0
    while len(out) < n_target and tries < n_target * 20:
        tries += 1
        en, ko = f(r)
        if len(out) % 3 == 2:
            cat, text = r.choice(ko)
            lang = "ko"
        else:
            cat, text = r.choice(en)
            lang = "en"
        if text in seen:
            continue
        seen.add(text)
        out.append((text, "neg:" + cat, (), lang))
    return out


def all_kinds():
    return list(TOK) + list(PASSWORD_KINDS) + list(URL_KINDS) + SPECIAL_KINDS


def corpus(part: str):
    if part not in SEEDS:
        raise ValueError(part)
    r = random.Random(SEEDS[part])
    out = []
    per = 6
    for kind in TOK:
        out += gen_token_kind(kind, part, r, per)
    for kind in PASSWORD_KINDS:
        out += gen_pw_kind(kind, part, r, per)
    for kind in URL_KINDS:
        out += gen_url_kind(kind, part, r, per)
    for kind in SPECIAL_KINDS:
        out += gen_special(kind, part, r, per)
    npos = len(out)
    out += negatives(part, r, int(npos * 0.45))
    return out


if __name__ == "__main__":
    import collections
    for part in ("dev", "heldout"):
        c = corpus(part)
        pos = [x for x in c if not x[1].startswith("neg:")]
        neg = [x for x in c if x[1].startswith("neg:")]
        kinds = collections.Counter(x[1] for x in pos)
        ko = sum(1 for x in c if x[3] == "ko")
        print(f"== {part}: total={len(c)} positives={len(pos)} negatives={len(neg)} kinds={len(kinds)} ko_share={ko / len(c):.2f}")
        rr = random.Random(1)
        for x in rr.sample(pos, 3) + rr.sample(neg, 3):
            print("---", x[1], x[3], x[2])
            print(x[0])
