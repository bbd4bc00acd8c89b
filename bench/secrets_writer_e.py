"""Writer E: secret-redaction test corpus in the voice of QA/support engineers,
data engineers/analysts, mobile/game developers and runbook-style infra notes.

corpus(part) -> list of (text, kind, secrets, lang). Python stdlib only.
Every credential-shaped value is generated at run time from a seeded RNG;
prefixes are split in the source so scanners do not fire on this file.

Written without sight of the redaction rules, their tests or the other corpora, from facts read
in the scanners' public test fixtures (gitleaks, MIT; trufflehog, AGPL-3.0; detect-secrets,
Apache-2.0; secretlint, MIT): services, prefixes, lengths, alphabets and the kinds of context.
No fixture value or sentence is reproduced. "dev" may be tuned on; "heldout" is run only to
report a figure (bench/secrets_bench.py prints the misses of "dev" alone).
"""
import random
import string

SEEDS = {"dev": 9901, "heldout": 9902}

LOW = string.ascii_lowercase
UP = string.ascii_uppercase
DIG = string.digits
HEX = "0123456789abcdef"
AN = LOW + UP + DIG
B64 = AN + "+/"
B64U = AN + "-_"


def rs(r, alpha, n):
    return "".join(r.choice(alpha) for _ in range(n))


def uuid4(r):
    h = rs(r, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{r.choice('89ab')}{h[17:20]}-{h[20:32]}"


# ---------------------------------------------------------------- human passwords
WORDS = ["sunflower", "gangnam", "winter", "tiger", "mango", "seoul", "busan", "coffee",
         "rainbow", "hangang", "dolphin", "kimchi", "maple", "panda", "galaxy", "jeju",
         "pinetree", "bluesky", "octopus", "summer", "lotus", "hodu", "bori", "nabi"]
KO_TYPED = ["dkssud", "tkfkd", "gksrmf", "qkqh", "dlfwkd", "rhkdwl", "wjdtn", "ghkd"]  # hangul typed on EN layout
SYM = "!@#$%^&*_-."


def human_pw(r):
    style = r.randrange(5)
    w = r.choice(WORDS)
    if style == 0:
        return w.capitalize() + r.choice(SYM) + str(r.randint(1990, 2026))
    if style == 1:
        return r.choice(KO_TYPED) + str(r.randint(10, 9999)) + r.choice("!@#")
    if style == 2:
        return w.capitalize() + r.choice(WORDS).capitalize() + str(r.randint(1, 99)) + r.choice(SYM)
    if style == 3:
        return "Qa" + r.choice(SYM) + w + str(r.randint(100, 999)) + r.choice(UP)
    return w[:3].upper() + rs(r, LOW + DIG, 5) + r.choice(SYM) + rs(r, DIG, 2) + w[3:]


def rand_pw(r, n=20):
    return rs(r, AN, n - 2) + r.choice("!#%*") + r.choice(DIG)


# ---------------------------------------------------------------- value generators
# each returns (display_text, secrets_tuple)
def g_prefix(prefix, alpha, n, suffix=""):
    def f(r):
        v = prefix + rs(r, alpha, n) + suffix
        return v, (v,)
    return f


def g_human(r):
    v = human_pw(r)
    return v, (v,)


def g_randpw(r):
    v = rand_pw(r, r.randint(16, 28))
    return v, (v,)


def g_aws_id(r):
    v = "AK" + "IA" + rs(r, UP + "234567", 16)
    return v, (v,)


def g_openai(r):
    v = "sk-" + "proj-" + rs(r, B64U, 74) + "T3Blbk" + "FJ" + rs(r, B64U, 74)
    return v, (v,)


def g_anthropic(r):
    v = "sk-" + "ant-api03-" + rs(r, B64U, 93) + "AA"
    return v, (v,)


def g_ghfg(r):
    v = "github" + "_pat_" + "11" + rs(r, UP + DIG, 20) + "_" + rs(r, AN, 59)
    return v, (v,)


def g_slack_bot(r):
    v = "xo" + "xb-" + rs(r, DIG, 12) + "-" + rs(r, DIG, 13) + "-" + rs(r, AN, 24)
    return v, (v,)


def g_slack_hook(r):
    tail = rs(r, AN, 24)
    v = "https://hooks." + "slack.com/services/T" + rs(r, UP + DIG, 10) + "/B" + rs(r, UP + DIG, 10) + "/" + tail
    return v, (tail,)


def g_discord_hook(r):
    tok = rs(r, B64U, 68)
    v = "https://discord.com/api/" + "webhooks/" + rs(r, DIG, 19) + "/" + tok
    return v, (tok,)


def g_telegram(r):
    v = str(r.randint(100000000, 7999999999)) + ":AA" + rs(r, B64U, 33)
    return v, (v,)


def g_sendgrid(r):
    v = "S" + "G." + rs(r, B64U, 22) + "." + rs(r, B64U, 43)
    return v, (v,)


def g_mapbox_sk(r):
    v = "sk" + ".eyJ1Ijoi" + rs(r, AN, 40) + "." + rs(r, B64U, 22)
    return v, (v,)


def g_fcm(r):
    v = "AAAA" + rs(r, AN + "_-", 7) + ":" + "APA91b" + rs(r, B64U, 134)
    return v, (v,)


def g_pypi(r):
    v = "py" + "pi-AgEIcHlwaS5vcmc" + rs(r, B64U, 70)
    return v, (v,)


def g_tfc(r):
    v = rs(r, AN, 14) + ".atlas" + "v1." + rs(r, AN, 67)
    return v, (v,)


def g_airtable(r):
    v = "pat" + rs(r, AN, 14) + "." + rs(r, HEX, 64)
    return v, (v,)


def g_hubspot(r):
    v = "pat-" + "na1-" + uuid4(r)
    return v, (v,)


def g_azure_storage(r):
    v = rs(r, B64, 86) + "=="
    return v, (v,)


def g_fernet(r):
    v = rs(r, B64U, 43) + "="
    return v, (v,)


def g_django(r):
    v = "django-" + "insecure-" + rs(r, LOW + DIG + "!@#%^&*(-_=+)", 50) if r.random() < 0.3 else rs(r, LOW + DIG + "!@#%^&*(-_=+)", 50)
    return v, (v,)


def g_jwt_parts(r, payload_len=60):
    return "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + rs(r, B64U, payload_len) + "." + rs(r, B64U, 43)


def g_jwt(r):
    v = g_jwt_parts(r, r.randint(50, 110))
    return v, (v,)


def g_supabase_sr(r):
    v = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJpc3MiOiJzdXBhYmFzZSIsInJlZiI6I" + rs(r, B64U, 90) + "." + rs(r, B64U, 43)
    return v, (v,)


def g_grafana(r):
    v = "gl" + "c_" + rs(r, B64, 90) + "=="
    return v, (v,)


def g_vault(r):
    v = "hv" + "s." + rs(r, B64U, 92)
    return v, (v,)


def g_jenkins(r):
    v = "11" + rs(r, HEX, 32)
    return v, (v,)


def g_atlassian(r):
    v = "ATATT" + "3xFfGF0" + rs(r, B64U, 180) + "=" + rs(r, UP + DIG, 8)
    return v, (v,)


def g_okta(r):
    v = "00" + rs(r, AN + "-_", 40)
    return v, (v,)


def g_square(r):
    v = "EA" + "AA" + rs(r, B64U, 60)
    return v, (v,)


def g_twilio_sk(r):
    v = "S" + "K" + rs(r, HEX, 32)
    return v, (v,)


def g_newrelic(r):
    v = "NR" + "AK-" + rs(r, UP + DIG, 27)
    return v, (v,)


def g_ascii_upper_hex(n):
    def f(r):
        v = rs(r, "0123456789ABCDEF", n)
        return v, (v,)
    return f


def g_playfab(r):
    v = rs(r, UP + DIG, 52)
    return v, (v,)


def g_onesignal(r):
    v = "os_v2_app_" + rs(r, LOW + "234567", 113) if r.random() < 0.4 else rs(r, B64, 48)
    return v, (v,)


def g_firebase_ci(r):
    v = "1//" + "0" + rs(r, B64U, 100)
    return v, (v,)


def g_gocspx(r):
    v = "GOC" + "SPX-" + rs(r, B64U, 28)
    return v, (v,)


def g_google_key(r):
    v = "AI" + "za" + "Sy" + rs(r, B64U, 33)
    return v, (v,)


def g_heroku(r):
    v = "HR" + "KU-" + "AA" + rs(r, B64U, 58) if r.random() < 0.5 else uuid4(r)
    return v, (v,)


def g_segment(r):
    v = rs(r, B64U, 43) + "." + rs(r, B64U, 43)
    return v, (v,)


def g_bearer(r):
    v = rs(r, AN, 1) + rs(r, AN + "-._", 38) + rs(r, AN, 1)
    return v, (v,)


def g_expo(r):
    v = rs(r, B64U, 40)
    return v, (v,)


# connection strings / URLs -------------------------------------------------
USERS = ["analytics", "etl_user", "dbt_svc", "airflow", "readonly", "app_rw", "report", "loader", "qa_admin", "jupyter"]


def g_url(scheme, hosts, port, db):
    def f(r):
        pw = human_pw(r) if r.random() < 0.5 else rand_pw(r, r.randint(14, 24))
        pw = pw.replace("@", "!").replace("#", "*").replace("%", "^").replace("/", "_").replace(":", "_")
        user = r.choice(USERS)
        host = r.choice(hosts)
        v = f"{scheme}://{user}:{pw}@{host}{port}/{r.choice(db)}"
        return v, (pw,)
    return f


def g_airflow_conn(r):
    f = g_url(r.choice(["postgres", "mysql", "redshift"]), ["warehouse.internal", "10.20.3.14", "db-prod.corp.local"], ":5432", ["analytics", "staging"])
    return f(r)


def g_mongo(r):
    pw = rand_pw(r, 18).replace("#", "x").replace("%", "z")
    v = f"mongodb+srv://{r.choice(USERS)}:{pw}@cluster{r.randint(0,9)}.{rs(r, LOW + DIG, 5)}.mongodb.net/{r.choice(['events','game','crm'])}?retryWrites=true"
    return v, (pw,)


def g_redis(r):
    pw = rs(r, AN, r.randint(20, 32))
    v = f"redis://:{pw}@cache-{r.randint(1,4)}.internal:6379/{r.randint(0,5)}"
    return v, (pw,)


def g_azure_sql(r):
    pw = human_pw(r).replace(";", "!")
    v = f"Server=tcp:{r.choice(['bi-sql','reporting','gamedata'])}.database.windows.net,1433;Initial Catalog=dw;User ID=etl;Password={pw};Encrypt=True;"
    return v, (pw,)


def g_jupyter(r):
    tok = rs(r, HEX, 48)
    v = f"http://127.0.0.1:{r.choice([8888, 8889, 8890])}/lab?token={tok}"
    return v, (tok,)


def g_basic_url(r):
    pw = rand_pw(r, r.randint(12, 22)).replace("#", "q").replace("%", "v")
    host = r.choice(["nexus.corp.example.com/repository/maven-releases", "artifacts.studio.internal/unity-packages", "registry.qa-lab.local/v2", "builds.example.org/job/ios-nightly"])
    v = f"https://{r.choice(['deploy','ci-bot','qa','builder'])}:{pw}@{host}"
    return v, (pw,)


def g_azure_sas(r):
    sig = rs(r, B64, 43) + "%3D"
    v = f"https://{r.choice(['mobilebuilds','gameassets','rawdata'])}.blob.core.windows.net/uploads?sv=2022-11-02&ss=b&srt=co&sp=rwdlac&se=2026-12-31T00:00:00Z&sig={sig}"
    return v, (sig,)


# blocks ----------------------------------------------------------------------
def pem_body(r, lines, last):
    out = [rs(r, B64, 64) for _ in range(lines)]
    out.append(rs(r, B64, last) + "=")
    return out


def g_pem(label, lines_lo, lines_hi, first=""):
    def f(r):
        body = pem_body(r, r.randint(lines_lo, lines_hi), r.randint(20, 60))
        if first:
            body[0] = first + body[0][len(first):]
        head = "-----BEGIN " + label + "-----"
        tail = "-----END " + label + "-----"
        return "\n".join([head] + body + [tail]), tuple(body)
    return f


def g_sa_json(r):
    body = pem_body(r, r.randint(3, 5), 40)
    proj = r.choice(["mobile-push-prod", "bq-analytics-381204", "play-publisher-api", "game-leaderboard"])
    pk = "-----BEGIN " + "PRIVATE KEY-----\\n" + "\\n".join(body) + "\\n-----END " + "PRIVATE KEY-----\\n"
    txt = ('{\n  "type": "service_account",\n  "project_id": "%s",\n  "private_key_id": "%s",\n'
           '  "private_key": "%s",\n  "client_email": "deployer@%s.iam.gserviceaccount.com"\n}') % (proj, rs(r, HEX, 40), pk, proj)
    return txt, tuple(body)


# ---------------------------------------------------------------- kind table
# (kind, service display name, ENV var, config key, generator, form)
K = [
    # cloud
    ("aws_access_key_id", "AWS access key", "AWS_ACCESS_KEY_ID", "aws_access_key_id", g_aws_id, "key"),
    ("aws_secret_access_key", "AWS secret access key", "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", g_prefix("", B64, 40), "key"),
    ("gcp_service_account_key", "GCP service account", "GOOGLE_APPLICATION_CREDENTIALS_JSON", "credentials", g_sa_json, "block"),
    ("google_api_key", "Google Maps server key", "GOOGLE_MAPS_SERVER_KEY", "maps_server_key", g_google_key, "key"),
    ("gemini_api_key", "Gemini API key", "GEMINI_API_KEY", "gemini_api_key", g_google_key, "key"),
    ("google_oauth_client_secret", "Google OAuth client secret", "GOOGLE_CLIENT_SECRET", "client_secret", g_gocspx, "key"),
    ("azure_storage_key", "Azure storage account key", "AZURE_STORAGE_KEY", "AccountKey", g_azure_storage, "key"),
    ("azure_sas_token", "Azure blob SAS URL", "AZURE_SAS_URL", "sas_url", g_azure_sas, "url"),
    ("digitalocean_token", "DigitalOcean token", "DIGITALOCEAN_TOKEN", "do_token", g_prefix("do" + "p_v1_", HEX, 64), "key"),
    ("cloudflare_api_token", "Cloudflare API token", "CLOUDFLARE_API_TOKEN", "cf_api_token", g_prefix("", AN + "_-", 40), "key"),
    ("heroku_api_key", "Heroku API key", "HEROKU_API_KEY", "heroku_api_key", g_heroku, "key"),
    # vcs / packages / ci
    ("github_pat", "GitHub token", "GITHUB_TOKEN", "github_token", g_prefix("gh" + "p_", AN, 36), "key"),
    ("github_fine_grained_pat", "GitHub fine-grained PAT", "GH_PAT", "gh_pat", g_ghfg, "key"),
    ("gitlab_pat", "GitLab token", "GITLAB_TOKEN", "gitlab_token", g_prefix("gl" + "pat-", B64U, 20), "key"),
    ("bitbucket_app_password", "Bitbucket app password", "BITBUCKET_APP_PASSWORD", "app_password", g_prefix("AT" + "BB", AN, 32), "key"),
    ("npm_token", "npm token", "NPM_TOKEN", "_authToken", g_prefix("np" + "m_", AN, 36), "key"),
    ("pypi_token", "PyPI token", "TWINE_PASSWORD", "password", g_pypi, "key"),
    ("docker_hub_pat", "Docker Hub token", "DOCKERHUB_TOKEN", "docker_token", g_prefix("dck" + "r_pat_", B64U, 27), "key"),
    ("jenkins_api_token", "Jenkins API token", "JENKINS_API_TOKEN", "jenkins_token", g_jenkins, "key"),
    ("sonarqube_token", "SonarQube token", "SONAR_TOKEN", "sonar.token", g_prefix("sq" + "u_", HEX, 40), "key"),
    ("terraform_cloud_token", "Terraform Cloud token", "TF_TOKEN_app_terraform_io", "token", g_tfc, "key"),
    ("vault_token", "Vault token", "VAULT_TOKEN", "vault_token", g_vault, "key"),
    ("doppler_token", "Doppler token", "DOPPLER_TOKEN", "doppler_token", g_prefix("dp" + ".pt.", AN, 43), "key"),
    ("pulumi_token", "Pulumi access token", "PULUMI_ACCESS_TOKEN", "pulumi_token", g_prefix("pu" + "l-", HEX, 40), "key"),
    # chat / webhooks
    ("slack_bot_token", "Slack bot token", "SLACK_BOT_TOKEN", "slack_bot_token", g_slack_bot, "key"),
    ("slack_webhook", "Slack webhook", "SLACK_WEBHOOK_URL", "webhook_url", g_slack_hook, "url"),
    ("discord_webhook", "Discord webhook", "DISCORD_WEBHOOK", "discord_webhook", g_discord_hook, "url"),
    ("telegram_bot_token", "Telegram bot token", "TELEGRAM_BOT_TOKEN", "bot_token", g_telegram, "key"),
    # payment
    ("stripe_secret_key", "Stripe secret key", "STRIPE_SECRET_KEY", "stripe_secret", g_prefix("sk" + "_live_", AN, 24), "key"),
    ("stripe_restricted_key", "Stripe restricted key", "STRIPE_RK", "stripe_restricted_key", g_prefix("rk" + "_live_", AN, 24), "key"),
    ("square_access_token", "Square access token", "SQUARE_ACCESS_TOKEN", "square_token", g_square, "key"),
    ("shopify_admin_token", "Shopify admin token", "SHOPIFY_ADMIN_TOKEN", "shopify_token", g_prefix("shp" + "at_", HEX, 32), "key"),
    # AI
    ("openai_api_key", "OpenAI key", "OPENAI_API_KEY", "openai_api_key", g_openai, "key"),
    ("anthropic_api_key", "Anthropic key", "ANTHROPIC_API_KEY", "anthropic_api_key", g_anthropic, "key"),
    ("huggingface_token", "Hugging Face token", "HF_TOKEN", "hf_token", g_prefix("h" + "f_", AN, 34), "key"),
    ("cohere_api_key", "Cohere API key", "COHERE_API_KEY", "cohere_key", g_prefix("", AN, 40), "key"),
    ("perplexity_api_key", "Perplexity key", "PPLX_API_KEY", "pplx_key", g_prefix("pp" + "lx-", AN, 48), "key"),
    # data engineering
    ("databricks_token", "Databricks token", "DATABRICKS_TOKEN", "token", g_prefix("da" + "pi", HEX, 32), "key"),
    ("snowflake_password", "Snowflake ETL user", "SNOWFLAKE_PASSWORD", "password", g_human, "pw"),
    ("snowflake_key_passphrase", "Snowflake private key", "SNOWFLAKE_PRIVATE_KEY_PASSPHRASE", "private_key_passphrase", g_randpw, "pw"),
    ("dbt_profile_password", "dbt prod profile", "DBT_PASSWORD", "password", g_human, "pw"),
    ("redshift_url_password", "Redshift", "REDSHIFT_URL", "sqlalchemy_url", g_url("redshift+psycopg2", ["dw-cluster.abc123xyz.ap-northeast-2.redshift.amazonaws.com", "bi.redshift.internal"], ":5439", ["dev", "analytics"]), "url"),
    ("postgres_url_password", "Postgres", "DATABASE_URL", "database_url", g_url("postgresql", ["db.staging.internal", "10.0.12.7", "pg-main.corp.local"], ":5432", ["app", "orders", "qa_db"]), "url"),
    ("mysql_url_password", "MySQL", "MYSQL_URL", "mysql_url", g_url("mysql+pymysql", ["mysql-replica.internal", "gamedb.local", "192.168.10.21"], ":3306", ["game", "crm", "billing"]), "url"),
    ("mssql_url_password", "SQL Server", "MSSQL_URL", "mssql_url", g_url("mssql+pyodbc", ["reporting-sql.corp.local", "sqlsrv01"], ":1433", ["DW", "Finance"]), "url"),
    ("mongodb_url_password", "MongoDB Atlas", "MONGO_URI", "mongo_uri", g_mongo, "url"),
    ("redis_password", "Redis", "REDIS_URL", "redis_url", g_redis, "url"),
    ("azure_sql_conn_password", "Azure SQL", "AZURE_SQL_CONNSTR", "ConnectionString", g_azure_sql, "url"),
    ("airflow_conn_uri_password", "Airflow connection", "AIRFLOW_CONN_WAREHOUSE", "conn_uri", g_airflow_conn, "url"),
    ("airflow_fernet_key", "Airflow fernet key", "AIRFLOW__CORE__FERNET_KEY", "fernet_key", g_fernet, "key"),
    ("airflow_webserver_secret", "Airflow webserver secret_key", "AIRFLOW__WEBSERVER__SECRET_KEY", "secret_key", g_prefix("", AN, 32), "key"),
    ("bigquery_sa_key", "BigQuery service account key", "BQ_KEYFILE_JSON", "keyfile_json", g_sa_json, "block"),
    ("clickhouse_cloud_secret", "ClickHouse Cloud key secret", "CLICKHOUSE_KEY_SECRET", "key_secret", g_prefix("4b" + "1d", AN, 38), "key"),
    ("planetscale_password", "PlanetScale password", "PLANETSCALE_PASSWORD", "password", g_prefix("psc" + "ale_pw_", B64U, 43), "key"),
    ("supabase_service_role", "Supabase service_role key", "SUPABASE_SERVICE_ROLE_KEY", "service_role_key", g_supabase_sr, "key"),
    ("supabase_pat", "Supabase access token", "SUPABASE_ACCESS_TOKEN", "access_token", g_prefix("sb" + "p_", HEX, 40), "key"),
    ("looker_client_secret", "Looker client secret", "LOOKERSDK_CLIENT_SECRET", "client_secret", g_prefix("", AN, 24), "key"),
    ("tableau_pat_secret", "Tableau PAT secret", "TABLEAU_PAT_SECRET", "personal_access_token_secret", g_prefix("", B64, 32), "key"),
    ("fivetran_api_secret", "Fivetran API secret", "FIVETRAN_API_SECRET", "api_secret", g_prefix("", AN, 32), "key"),
    ("kaggle_key", "Kaggle API key", "KAGGLE_KEY", "key", g_prefix("", HEX, 32), "key"),
    ("prefect_api_key", "Prefect API key", "PREFECT_API_KEY", "api_key", g_prefix("pn" + "u_", AN, 36), "key"),
    ("jupyter_token", "shared Jupyter server", "JUPYTER_TOKEN", "token", g_jupyter, "url"),
    ("mixpanel_api_secret", "Mixpanel API secret", "MIXPANEL_API_SECRET", "api_secret", g_prefix("", HEX, 32), "key"),
    ("amplitude_secret_key", "Amplitude secret key", "AMPLITUDE_SECRET_KEY", "secret_key", g_prefix("", HEX, 32), "key"),
    ("segment_public_api_token", "Segment Public API token", "SEGMENT_API_TOKEN", "segment_token", g_segment, "key"),
    # mobile / game
    ("android_keystore_password", "upload keystore", "MYAPP_UPLOAD_STORE_PASSWORD", "storePassword", g_human, "pw"),
    ("android_key_password", "release signing key", "RELEASE_KEY_PASSWORD", "keyPassword", g_randpw, "pw"),
    ("fastlane_match_password", "fastlane match repo", "MATCH_PASSWORD", "match_password", g_human, "pw"),
    ("fcm_server_key", "FCM server key", "FCM_SERVER_KEY", "server_key", g_fcm, "key"),
    ("apns_p8_key", "APNs auth key (.p8)", "APNS_KEY", "apns_key", g_pem("PRIVATE KEY", 2, 3, "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQg"), "block"),
    ("play_console_sa_key", "Play Console service account", "PLAY_STORE_JSON_KEY", "json_key_data", g_sa_json, "block"),
    ("firebase_ci_token", "Firebase CI token", "FIREBASE_TOKEN", "firebase_token", g_firebase_ci, "key"),
    ("expo_access_token", "Expo access token", "EXPO_TOKEN", "expo_token", g_expo, "key"),
    ("onesignal_rest_key", "OneSignal REST API key", "ONESIGNAL_REST_API_KEY", "rest_api_key", g_onesignal, "key"),
    ("revenuecat_secret", "RevenueCat secret key", "REVENUECAT_SECRET", "revenuecat_secret", g_prefix("s" + "k_", AN, 32), "key"),
    ("mapbox_secret_token", "Mapbox secret token", "MAPBOX_DOWNLOADS_TOKEN", "MAPBOX_DOWNLOADS_TOKEN", g_mapbox_sk, "key"),
    ("appcenter_token", "App Center API token", "APPCENTER_API_TOKEN", "appcenter_token", g_prefix("", HEX, 40), "key"),
    ("bugsnag_auth_token", "Bugsnag personal auth token", "BUGSNAG_AUTH_TOKEN", "bugsnag_auth_token", g_prefix("", HEX, 36), "key"),
    ("sentry_auth_token", "Sentry auth token", "SENTRY_AUTH_TOKEN", "auth.token", g_prefix("sn" + "trys_", B64U, 120), "key"),
    ("appsflyer_api_token", "AppsFlyer API V2 token", "APPSFLYER_API_TOKEN", "appsflyer_api_token", g_jwt, "key"),
    ("branch_secret", "Branch.io secret", "BRANCH_SECRET", "branch_secret", g_prefix("secret" + "_live_", AN, 32), "key"),
    ("agora_app_certificate", "Agora app certificate", "AGORA_APP_CERTIFICATE", "appCertificate", g_prefix("", HEX, 32), "key"),
    ("steam_web_api_key", "Steam Web API key", "STEAM_API_KEY", "steam_api_key", g_ascii_upper_hex(32), "key"),
    ("playfab_secret_key", "PlayFab developer secret key", "PLAYFAB_SECRET_KEY", "DeveloperSecretKey", g_playfab, "key"),
    ("unity_cloud_secret", "Unity service account secret", "UNITY_SERVICE_SECRET", "secretKey", g_prefix("", B64U, 32), "key"),
    # infra / saas
    ("twilio_auth_token", "Twilio auth token", "TWILIO_AUTH_TOKEN", "auth_token", g_prefix("", HEX, 32), "key"),
    ("twilio_api_key_secret", "Twilio API key secret", "TWILIO_API_SECRET", "api_secret", g_prefix("", AN, 32), "key"),
    ("sendgrid_api_key", "SendGrid key", "SENDGRID_API_KEY", "sendgrid_key", g_sendgrid, "key"),
    ("mailgun_api_key", "Mailgun key", "MAILGUN_API_KEY", "mailgun_key", g_prefix("ke" + "y-", HEX, 32), "key"),
    ("datadog_api_key", "Datadog API key", "DD_API_KEY", "api_key", g_prefix("", HEX, 32), "key"),
    ("datadog_app_key", "Datadog application key", "DD_APP_KEY", "app_key", g_prefix("", HEX, 40), "key"),
    ("newrelic_user_key", "New Relic user key", "NEW_RELIC_API_KEY", "api_key", g_newrelic, "key"),
    ("grafana_cloud_token", "Grafana Cloud token", "GRAFANA_CLOUD_TOKEN", "grafana_token", g_grafana, "key"),
    ("pagerduty_integration_key", "PagerDuty integration key", "PAGERDUTY_ROUTING_KEY", "routing_key", g_prefix("", HEX, 32), "key"),
    ("atlassian_api_token", "Jira API token", "JIRA_API_TOKEN", "jira_token", g_atlassian, "key"),
    ("okta_api_token", "Okta API token", "OKTA_API_TOKEN", "okta_token", g_okta, "key"),
    ("zendesk_api_token", "Zendesk API token", "ZENDESK_API_TOKEN", "zendesk_token", g_prefix("", AN, 40), "key"),
    ("hubspot_private_app_token", "HubSpot private app token", "HUBSPOT_TOKEN", "hubspot_token", g_hubspot, "key"),
    ("airtable_pat", "Airtable token", "AIRTABLE_TOKEN", "airtable_token", g_airtable, "key"),
    ("linear_api_key", "Linear API key", "LINEAR_API_KEY", "linear_key", g_prefix("lin" + "_api_", AN, 40), "key"),
    ("notion_token", "Notion integration token", "NOTION_TOKEN", "notion_token", g_prefix("nt" + "n_", AN, 46), "key"),
    ("django_secret_key", "Django SECRET_KEY", "DJANGO_SECRET_KEY", "SECRET_KEY", g_django, "key"),
    ("rails_master_key", "Rails master key", "RAILS_MASTER_KEY", "master_key", g_prefix("", HEX, 32), "key"),
    ("jwt_token", "JWT", "AUTH_JWT", "id_token", g_jwt, "key"),
    ("bearer_token", "Bearer token", "API_BEARER", "Authorization", g_bearer, "bearer"),
    ("basic_auth_url", "registry", "REGISTRY_URL", "url", g_basic_url, "url"),
    ("rsa_private_key", "RSA private key", "DEPLOY_KEY", "private_key", g_pem("RSA " + "PRIVATE KEY", 3, 5, "MIIEow"), "block"),
    ("openssh_private_key", "SSH deploy key", "SSH_PRIVATE_KEY", "ssh_key", g_pem("OPENSSH " + "PRIVATE KEY", 3, 4, "b3BlbnNzaC1rZXktdjEAAAAA"), "block"),
    ("ec_private_key", "EC private key", "EC_KEY", "ec_key", g_pem("EC " + "PRIVATE KEY", 2, 2, "MHcCAQEEI"), "block"),
    ("test_account_password", "test account", "QA_ADMIN_PASSWORD", "password", g_human, "qa"),
    ("admin_password", "admin console", "ADMIN_PASSWORD", "admin_password", g_human, "pw"),
    ("generic_secret", "internal API secret", "INTERNAL_API_SECRET", "client_secret", g_prefix("", AN, 36), "key"),
    ("generic_token", "service token", "SERVICE_TOKEN", "token", g_prefix("", AN + "-_", 44), "key"),
]

# ---------------------------------------------------------------- templates
# placeholders: @V@ value, @SVC@ service name, @VAR@ env var, @KEY@ config key,
# @USER@ a login name, @N@ a step number
T = {"dev": {}, "heldout": {}}

T["dev"]["key"] = {
    "en": [
        "Repro needed the real @SVC@, so I exported `@VAR@=@V@` in the staging shell before running the suite.",
        "## Release checklist\n1. bump versionCode\n2. set @VAR@ in CI secrets (current value @V@)\n3. tag and push",
        "D|dbt run kept failing with 401 until profiles.yml had `@KEY@: @V@` under the prod target.",
        "Jupyter cell that finally worked:\n```python\nimport os\nos.environ[\"@VAR@\"] = \"@V@\"\n```",
        "M|gradle.properties on the build Mac:\n@VAR@=@V@\norg.gradle.jvmargs=-Xmx4g",
        "Support ticket #4471: customer pasted their @SVC@ (@V@) into the chat; rotate it after we reproduce.",
        "In the Airflow UI I added Variable @VAR@ with value @V@ — the DAG reads it via Variable.get.",
        "| setting | value |\n|---|---|\n| @SVC@ | `@V@` |\n| region | ap-northeast-2 |",
        "M|Config.xcconfig for the Debug scheme: `@VAR@ = @V@` (keep it out of Release).",
        "The R script sets it inline: Sys.setenv(@VAR@ = \"@V@\") before calling the API.",
        "Remember the @SVC@ for staging is @V@; prod uses a different one stored in 1Password.",
    ],
    "ko": [
        "재현하려면 스테이징 셸에서 `@VAR@=@V@` 먼저 export 하고 테스트 돌리면 됨.",
        "## 배포 체크리스트\n1. 빌드 번호 올리기\n2. @SVC@ 교체 → `@V@`\n3. 슬랙에 공지",
        "D|profiles.yml 의 @KEY@ 값을 @V@ 로 바꾸니까 dbt debug 통과했음.",
        "QA 환경 @SVC@ 값은 @V@ 입니다. 운영 키랑 헷갈리지 마세요.",
        "노트북 셀 맨 위에 %env @VAR@=@V@ 넣어야 커널 재시작 후에도 동작함.",
        "M|local.properties 에 @KEY@=@V@ 추가하고 gradle sync 다시 함.",
    ],
}
T["heldout"]["key"] = {
    "en": [
        "Steps to reproduce: (1) open the admin build (2) paste @V@ as the @SVC@ (3) tap Sync — crash on Android 12 only.",
        "Runbook step @N@: update `@KEY@` in the vault path and also in .env.local: @KEY@=\"@V@\"",
        "airflow connections add analytics_api --conn-type http --conn-password '@V@'  # @SVC@",
        "Analyst note: pandas pull from the vendor API only works with the @SVC@ @V@, the sandbox one returns empty frames.",
        "M|Unity ProjectSettings had the @SVC@ hardcoded (@V@), moved it to a scriptable object that is git-ignored.",
        "- [x] rotate @SVC@\n- [ ] update Bitrise env @VAR@ → @V@\n- [ ] re-run nightly",
        "export @VAR@='@V@'; python -m pipelines.backfill --date 2024-03-01",
        "M|Info.plist had <key>@KEY@</key><string>@V@</string> in it; a reviewer flagged it during QA.",
        "For the notebook demo use @V@ as @VAR@ (read-only scope, expires end of sprint).",
        "@SVC@: @V@",
    ],
    "ko": [
        "시나리오 @N@: 설정 화면에서 @SVC@ 입력란에 @V@ 붙여넣고 저장 → 토스트 안 뜨는 버그 재현됨.",
        "### 운영 반영 절차\n@N@. Secrets Manager 에 @VAR@ 값(@V@) 등록\n다음. 파드 재시작",
        "에어플로우 Variables 에 @VAR@ = @V@ 로 넣어둠. DAG 은 Variable.get 으로 읽음",
        "M|유니티 빌드 서버에 @SVC@ 값이 하드코딩돼 있었음: \"@V@\". 다음 스프린트에 분리 예정",
        "(@SVC@ 값은 @V@ — 스테이징 전용)",
    ],
}

T["dev"]["pw"] = {
    "en": [
        "D|Snowflake/dbt note: target prod uses user etl_svc with password @V@ for the @SVC@.",
        "M|signingConfigs { release { @KEY@ '@V@' } } — this was in app/build.gradle, moving to gradle.properties.",
        "Password for the @SVC@ is @V@ (set by ops last week).",
        "D|profiles.yml:\n  prod:\n    type: snowflake\n    user: LOADER\n    @KEY@: \"@V@\"",
        "After the reset, @VAR@=@V@ works again for the nightly job.",
    ],
    "ko": [
        "@SVC@ 비밀번호 변경됨: @V@ (운영팀 공지)",
        "M|build.gradle 에 @KEY@ \"@V@\" 그대로 있었음. gradle.properties 로 옮겨야 함",
        "@VAR@ 값은 @V@ 로 설정되어 있음, 만료 전에 다시 바꿔야 한다",
    ],
}
T["heldout"]["pw"] = {
    "en": [
        "D|Runbook: @N@) ssh into the bastion, @N@b) run the loader with --password '@V@' (@SVC@).",
        "M|keystore.properties\nstoreFile=release.jks\n@KEY@=@V@",
        "Heads-up for whoever picks up the ticket: @SVC@ password = @V@, do not share outside the team.",
        "CI failed because @VAR@ was blank; setting it to @V@ fixed the job.",
    ],
    "ko": [
        "## 점검 체크리스트\n- [ ] @SVC@ 로그인 (@VAR@: @V@)\n- [ ] 대시보드 새로고침",
        "참고로 @SVC@ 비밀번호는 `@V@` 이고 분기마다 변경함.",
        "M|@KEY@=@V@ 로 넣으니까 서명 단계 통과함.",
    ],
}

T["dev"]["qa"] = {
    "en": [
        "Test account: qa+@N@@example.com / pass @V@ (role: admin).",
        "Repro steps:\n1. Log in as @USER@ / @V@\n2. Open Orders > Refund\n3. Observe 500 on submit",
        "Use the seeded admin (@USER@, password @V@) when checking the export bug.",
    ],
    "ko": [
        "시나리오 @N@: 관리자 로그인 (@USER@ / @V@) → 회원 목록 → 엑셀 다운로드 시 한글 깨짐",
        "테스트 계정 @USER@ 비번 @V@ 입니다.",
    ],
}
T["heldout"]["qa"] = {
    "en": [
        "QA creds for the staging tenant — login @USER@, pw: @V@ — please don't change the password.",
        "| account | password |\n|---|---|\n| @USER@ | @V@ |",
        "I reproduced it with the shared tester login (@USER@ : @V@) on an iPhone 13.",
    ],
    "ko": [
        "재현 계정: @USER@ (비밀번호 `@V@`), 권한은 매니저",
        "@N@. 테스트폰에서 @USER@ 로 로그인, 패스워드는 @V@\n@N@. 장바구니 담기 후 결제 진입",
    ],
}

T["dev"]["url"] = {
    "en": [
        "SQLAlchemy engine for the @SVC@ notebook: create_engine(\"@V@\")",
        "Set @VAR@=@V@ in the Airflow worker env and the sensor stopped timing out.",
        "Pasting for later — the @SVC@ connection I used in the analysis was @V@",
        "## Deploy checklist\n1. scale down workers\n2. point @VAR@ at @V@\n3. run migrations",
    ],
    "ko": [
        "@SVC@ 접속 문자열: @V@",
        "분석용 노트북에서 @VAR@ 값을 @V@ 로 잡아야 쿼리가 돈다.",
        "배포 단계 @N@에서 @VAR@ 값을 `@V@` 로 바꿈",
    ],
}
T["heldout"]["url"] = {
    "en": [
        "pd.read_sql(query, \"@V@\") — the @SVC@ source for the weekly retention report.",
        "Runbook step @N@: update the secret @VAR@ (now @V@) and restart the scheduler.",
        "The link the vendor sent for @SVC@ was @V@ and it still works.",
    ],
    "ko": [
        "### 장애 대응 메모\n- @SVC@ 연결: `@V@`\n- 타임아웃 30초로 늘림",
        "R 스크립트에서 dbConnect 할 때 @V@ 그대로 넣었음 (@SVC@)",
    ],
}

T["dev"]["block"] = {
    "en": [
        "The @SVC@ that was committed by mistake (rotated since):\n@V@",
        "@VAR@ contents for the CI job:\n```\n@V@\n```",
    ],
    "ko": [
        "@SVC@ 파일 내용 (CI 시크릿에 넣을 것):\n@V@",
    ],
}
T["heldout"]["block"] = {
    "en": [
        "Runbook step @N@ — paste this into the @VAR@ secret in the pipeline settings:\n@V@\nthen re-run the release lane.",
        "Found under ~/Downloads on the shared build Mac, belongs to @SVC@:\n\n@V@",
    ],
    "ko": [
        "## 인증서 교체\n@N@. 아래 @SVC@ 내용을 시크릿에 등록\n@V@\n@N@. 빌드 재실행",
    ],
}

T["dev"]["bearer"] = {
    "en": ["Game backend smoke test: Authorization: Bearer @V@ → 200, leaderboard loads.",
           "Repro with curl: curl -H \"Authorization: Bearer @V@\" https://api.staging.example.com/v2/orders"],
    "ko": ["QA 메모 — 토큰 만료 테스트용 헤더: Bearer @V@",
           "포스트맨에서 헤더 Authorization: Bearer @V@ 넣고 호출하면 403 재현됨"],
}
T["heldout"]["bearer"] = {
    "en": [
        "Support repro (HAR export trimmed): request header `authorization: Bearer @V@` on GET /v1/profile returned someone else's data.","requests.get(url, headers={\"Authorization\": \"Bearer @V@\"}) is what the analyst notebook does."],
    "ko": ["에어플로우 HttpOperator headers 에 Bearer @V@ 박혀 있던 거 Connection 으로 옮김",
           "시나리오 @N@: 토큰 `Bearer @V@` 로 /me 조회 → 만료 안 됐는데 401"],
}

QA_USERS = ["qa_admin", "tester01", "qa+ios@example.com", "cs.manager", "admin@staging.local", "qa_kim", "support-lead"]


def fill(tpl, r, svc, var, key, val):
    out = tpl.replace("@V@", val).replace("@SVC@", svc).replace("@VAR@", var).replace("@KEY@", key)
    out = out.replace("@USER@", r.choice(QA_USERS))
    while "@N@" in out:
        out = out.replace("@N@", str(r.randint(1, 9)), 1)
    return out


KO_SVC = {"test account": "테스트 계정", "admin console": "어드민 콘솔"}

# ---------------------------------------------------------------- negatives
def n_placeholder(r):
    return r.choice(["<YOUR_TOKEN>", "xxxxxxxxxxxxxxxx", "${API_KEY}", "changeme", "****", "<redacted>",
                     "YOUR_API_KEY_HERE", "{{ secrets.PLAY_JSON }}", "dummy", "sk_test_xxx"])


def n_envref(r):
    return r.choice(["os.environ[\"SNOWFLAKE_PASSWORD\"]", "process.env.FCM_SERVER_KEY", "{{ env_var('DBT_PASSWORD') }}",
                     "System.getenv(\"STORE_PASSWORD\")", "$(MATCH_PASSWORD)", "${{ secrets.DATABRICKS_TOKEN }}",
                     "Sys.getenv(\"REDSHIFT_PW\")", "Variable.get('vendor_api_key')", "$ANDROID_KEYSTORE_PASSWORD"])


def n_sha(r):
    return rs(r, HEX, 40)


def n_short_sha(r):
    return rs(r, HEX, 7)


def n_uuid(r):
    return uuid4(r)


def n_sha256(r):
    return rs(r, HEX, 64)


def n_integrity(r):
    return "sha512-" + rs(r, B64, 86) + "=="


def n_digest(r):
    return "sha256:" + rs(r, HEX, 64)


def n_version(r):
    return f"{r.randint(1,9)}.{r.randint(0,30)}.{r.randint(0,99)}"


def n_order(r):
    return r.choice(["ORD-", "KR", "GPA."]) + rs(r, DIG, 4) + "-" + rs(r, DIG, 4) + "-" + rs(r, DIG, 4)


def n_phone(r):
    return f"010-{r.randint(1000,9999)}-{r.randint(1000,9999)}"


def n_email(r):
    return f"qa+{r.randint(1,99)}@example.com"


def n_bundle(r):
    return r.choice(["com.example.shop", "kr.co.sample.delivery", "com.studio.puzzlequest", "io.acme.fitness"]) + r.choice(["", ".debug", ".staging"])


def n_sha1fp(r):
    return ":".join(rs(r, "0123456789ABCDEF", 2) for _ in range(20))


def n_b64data(r):
    import base64
    s = r.choice(["hello world from the qa team", "{\"user\":\"tester01\",\"plan\":\"free\"}", "order_id=1234&status=shipped", "한글 테스트 문자열입니다"])
    return base64.b64encode(s.encode()).decode()


def n_fb_app_id(r):
    return f"1:{r.randint(10**11, 10**12-1)}:{r.choice(['android', 'ios', 'web'])}:{rs(r, HEX, 16)}"


def n_sender(r):
    return str(r.randint(10**11, 10**12 - 1))


def n_path(r):
    return r.choice(["/Users/jenkins/keystores/release.jks", "~/.dbt/profiles.yml", "android/app/google-services.json",
                     "ios/Runner/GoogleService-Info.plist", "/opt/airflow/dags/etl_orders.py", "C:\\Projects\\Game\\ProjectSettings\\ProjectSettings.asset"])


def n_pubkey(r):
    return "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(r, B64, 43) + " deploy@build-mac"


def n_keyid(r):
    return rs(r, UP + DIG, 10)


def n_snow_acct(r):
    return rs(r, LOW, 7) + "-" + rs(r, LOW, 2) + rs(r, DIG, 5)


def n_testcard(r):
    return r.choice(["4242 4242 4242 4242", "4000 0000 0000 9995", "5555 5555 5555 4444"])


def n_long_ident(r):
    return r.choice(["FirebaseMessagingServiceImplementationDelegate", "snowflake_loader_incremental_orders_v2_backfill", "com_google_android_gms_version_placeholder"]) + "_" + str(r.randint(1, 99))


NEG_GEN = {
    "placeholder": n_placeholder, "env_ref": n_envref, "git_sha": n_sha, "short_sha": n_short_sha, "uuid": n_uuid,
    "hash": n_sha256, "npm_integrity": n_integrity, "docker_digest": n_digest, "version": n_version,
    "order_id": n_order, "phone": n_phone, "email": n_email, "bundle_id": n_bundle, "sha1_fingerprint": n_sha1fp,
    "base64_data": n_b64data, "firebase_app_id": n_fb_app_id, "firebase_sender_id": n_sender, "path": n_path,
    "public_key": n_pubkey, "key_id": n_keyid, "snowflake_account": n_snow_acct, "test_card": n_testcard,
    "identifier": n_long_ident,
    "firebase_web": lambda r: r.choice(["shop-app", "puzzle-quest", "fitness-kr", "delivery-stg"]) + "-" + rs(r, DIG, 5),
    "conn_no_password": lambda r: r.choice(["etl_user", "airflow", "dbt_svc", "analytics"]),
}

# (category, lang, template) ; @X@ = generated non-secret value ; "prose"/"code" need no value
NEG_T = {"dev": [
    ("placeholder", "en", "Put the @SVC@ in local.properties as `MAPS_KEY=@X@` — the real one lives in the team vault."),
    ("placeholder", "ko", "README 예시에는 @X@ 로 되어 있으니 실제 값으로 바꿔서 쓰세요."),
    ("placeholder", "en", "Test account: qa+1@example.com / pass @P@ (reset it yourself from the admin page)."),
    ("env_ref", "en", "The config now reads `@X@` instead of the literal value, so nothing sensitive is committed."),
    ("firebase_web", "en", "firebaseConfig after cleanup:\n```js\nconst firebaseConfig = {\n  apiKey: import.meta.env.VITE_FIREBASE_API_KEY,\n  authDomain: \"@X@.firebaseapp.com\",\n  projectId: \"@X@\",\n  storageBucket: \"@X@.appspot.com\",\n};\n```"),
    ("conn_no_password", "en", "Airflow conn for the warehouse: postgres://@X@@warehouse.internal:5432/analytics, password comes from the secrets backend."),
    ("env_ref", "ko", "서명 비밀번호는 @X@ 로 읽도록 바꿨음. 하드코딩 제거 완료"),
    ("git_sha", "en", "Regression started at commit @X@; bisected it in the QA branch."),
    ("git_sha", "ko", "이 버그는 @X@ 커밋부터 재현됨"),
    ("short_sha", "en", "Hotfix is in @X@, cherry-picked onto release/3.2."),
    ("uuid", "en", "Support case: request id @X@ failed with 502 at 09:14 KST."),
    ("uuid", "ko", "에러 로그의 trace id @X@ 로 Datadog 에서 찾으면 됨"),
    ("hash", "en", "The exported CSV checksum was @X@, matching yesterday's file."),
    ("npm_integrity", "en", "package-lock had integrity \"@X@\" for the firebase package after the bump."),
    ("docker_digest", "ko", "airflow 이미지 digest 는 @X@ 로 고정했음"),
    ("version", "en", "Upgrading the Firebase BoM to @X@ fixed the push crash on Android 14."),
    ("version", "ko", "dbt-snowflake @X@ 로 올리고 나서 profiles.yml 경고 사라짐"),
    ("order_id", "en", "Repro: place order @X@ with coupon WELCOME10, refund fails at step 3."),
    ("order_id", "ko", "시나리오 2: 주문번호 @X@ 로 부분 환불 → 금액 0원 표시"),
    ("phone", "ko", "테스트용 번호 @X@ 로 인증문자 받으면 됨 (QA 공용폰)"),
    ("email", "en", "Use @X@ as the tester email; the inbox is shared in the QA channel."),
    ("bundle_id", "en", "Bundle id @X@ must match the one registered in App Store Connect."),
    ("sha1_fingerprint", "en", "Added SHA-1 @X@ of the debug keystore to the Firebase console so Google sign-in works."),
    ("sha1_fingerprint", "ko", "Play 앱 서명 인증서 SHA-1 은 @X@ — Firebase 프로젝트 설정에 등록함"),
    ("base64_data", "en", "The webhook body was base64: @X@ — decodes to plain JSON, nothing sensitive."),
    ("firebase_app_id", "en", "google-services.json mobilesdk_app_id is @X@ for the staging flavor."),
    ("firebase_sender_id", "ko", "FCM messagingSenderId 는 @X@ 입니다 (공개값)"),
    ("path", "en", "The keystore lives at @X@ on the build agent; permissions are 600."),
    ("path", "ko", "@X@ 파일은 gitignore 에 추가했음"),
    ("public_key", "en", "Deploy key added to the repo (public half): @X@"),
    ("key_id", "en", "App Store Connect API Key ID is @X@; the .p8 itself is in the CI secret store."),
    ("snowflake_account", "en", "Snowflake account identifier is @X@ and the warehouse is ANALYTICS_WH."),
    ("test_card", "ko", "결제 테스트는 Stripe 테스트 카드 @X@ 사용, 만료일은 아무 미래 날짜"),
    ("identifier", "en", "Renamed the task to @X@ so the Airflow graph is readable."),
    ("prose", "en", "Lesson: never put the keystore password in build.gradle; read it from gradle.properties that is git-ignored."),
    ("prose", "ko", "비밀번호를 노트북 셀에 직접 쓰지 말고 환경변수로 받을 것. 커밋 전에 출력 셀도 지우기"),
    ("prose", "en", "The FCM server key was rotated by the platform team; ask them for the new one, don't reuse the old token."),
    ("code", "en", "token = os.environ.get(\"DATABRICKS_TOKEN\")\nif not token:\n    raise RuntimeError(\"missing token\")"),
    ("code", "ko", "val storePassword = project.findProperty(\"STORE_PASSWORD\") as String? ?: \"\"  // CI 에서 주입"),
    ("prose", "en", "QA note: the staging test accounts share one password that rotates every Monday; it is pinned in the #qa-staging channel, never in tickets."),
    ("prose", "en", "Data team lesson: the Snowflake key-pair auth needs the private key path and its passphrase from the secret manager; the notebook should only reference the secret name."),
    ("prose", "ko", "APNs .p8 키는 한 번만 다운로드 가능하니 받자마자 팀 볼트에 올릴 것. 레포에는 Key ID 만 기록"),
    ("code", "en", "android {\n  signingConfigs {\n    release {\n      storePassword System.getenv(\"STORE_PASSWORD\")\n      keyPassword System.getenv(\"KEY_PASSWORD\")\n    }\n  }\n}"),
    ("code", "ko", "engine = create_engine(URL.create(\"snowflake\", username=user, password=getpass.getpass()))  # 비번은 실행 시 입력"),
    ("code", "en", "conn = BaseHook.get_connection(\"warehouse\")\npw = conn.password  # never log this"),
    ("prose", "ko", "## 배포 체크리스트\n1. 버전 코드 확인\n2. 서명 키 비밀번호는 1Password 에서 복사\n3. 스토어 업로드"),
], "heldout": [
    ("placeholder", "en", "Docs sample: `snowflake.connector.connect(user='ME', password='@X@')` — replace before running."),
    ("placeholder", "ko", "설정 예시: FIREBASE_TOKEN=@X@ (실제 토큰은 CI 변수에 있음)"),
    ("placeholder", "en", "| account | password |\n|---|---|\n| qa_admin | @P@ |"),
    ("env_ref", "en", "Airflow DAG pulls the secret via @X@ at runtime, so the DAG file is safe to share."),
    ("env_ref", "ko", "fastlane 에서는 @X@ 로 읽어서 match 에 넘김"),
    ("git_sha", "en", "Pinned the Unity package to git hash @X@ in manifest.json."),
    ("short_sha", "ko", "핫픽스 커밋 @X@ 가 release 브랜치에 들어갔는지 확인"),
    ("uuid", "en", "Play Console shows the crash cluster @X@; attaching it to the Jira ticket."),
    ("uuid", "ko", "테스트 유저 id 는 @X@ (스테이징 DB)"),
    ("hash", "ko", "APK sha256 은 @X@ — 스토어 업로드본과 일치"),
    ("npm_integrity", "ko", "lockfile integrity 가 @X@ 로 바뀌어서 캐시 깨짐"),
    ("docker_digest", "en", "Roll back the scheduler to image @X@ if the upgrade fails."),
    ("version", "en", "Xcode @X@ broke the archive step; pinned the runner image."),
    ("version", "ko", "안드로이드 gradle 플러그인 @X@ 에서 signingConfig 경고 발생"),
    ("order_id", "en", "Customer reported order @X@ shows twice in the history tab."),
    ("phone", "en", "SMS verification test number: @X@ (shared QA device)."),
    ("email", "ko", "재현 계정 이메일은 @X@, 비밀번호는 QA 채널 고정 메시지 참고"),
    ("bundle_id", "ko", "iOS 번들 아이디 @X@ 로 프로비저닝 프로파일 새로 만듦"),
    ("sha1_fingerprint", "en", "Upload certificate fingerprint (SHA-1): @X@"),
    ("base64_data", "ko", "푸시 payload 가 base64 로 와서 디코드해봄: @X@"),
    ("firebase_app_id", "ko", "GoogleService-Info.plist 의 GOOGLE_APP_ID = @X@"),
    ("firebase_sender_id", "en", "Project number @X@ is what shows in the Firebase console header."),
    ("path", "en", "That config lives in @X@ now and the path is listed in .gitignore."),
    ("firebase_web", "ko", "google-services.json 에서 project_id 는 @X@, storage_bucket 은 @X@.appspot.com (둘 다 공개값)"),
    ("conn_no_password", "ko", "dbt profiles.yml: user @X@, password: \"{{ env_var('DBT_PASSWORD') }}\" 로 바꿔서 커밋함"),
    ("public_key", "ko", "빌드 서버 공개키 등록: @X@"),
    ("key_id", "ko", "APNs Key ID 는 @X@, Team ID 는 따로 확인"),
    ("snowflake_account", "ko", "스노우플레이크 account 값은 @X@ (비밀 아님)"),
    ("test_card", "en", "Checkout QA: use card @X@ with any CVC."),
    ("identifier", "ko", "dbt 모델 이름을 @X@ 로 변경함"),
    ("prose", "en", "When a tester shares a password in a ticket, ask them to rotate it and remove it from the description."),
    ("prose", "ko", "Databricks 토큰은 90일마다 만료되니 만료 알림 오면 새로 발급받을 것"),
    ("prose", "en", "### Runbook: rotate push key\n1. Generate a new key in the Apple developer portal\n2. Upload it to the push provider\n3. Revoke the old one"),
    ("code", "en", "def get_conn():\n    return snowflake.connector.connect(password=os.environ['SF_PASSWORD'], account=ACCOUNT)"),
    ("code", "ko", "if (apiKey.isNullOrBlank()) error(\"API 키 없음\")  // BuildConfig 에서 주입"),
    ("prose", "en", "Support macro: if a customer sends us their API key, reply asking them to revoke it in the dashboard and generate a new one."),
    ("prose", "ko", "## 배포 후 점검\n1. 푸시 발송 테스트\n2. FCM 서버 키 대신 HTTP v1 서비스 계정으로 전환됐는지 확인\n3. 크래시 대시보드 확인"),
    ("prose", "en", "Analyst tip: dbt reads the warehouse password from an env var, so set it in your shell profile rather than in profiles.yml."),
    ("code", "ko", "keystoreProperties.load(FileInputStream(rootProject.file(\"keystore.properties\")))  // 파일은 gitignore 됨"),
    ("code", "en", "password <- Sys.getenv(\"REDSHIFT_PASSWORD\")\ncon <- dbConnect(RPostgres::Postgres(), host = host, password = password)"),
    ("code", "en", "let token = ProcessInfo.processInfo.environment[\"ASC_API_TOKEN\"] ?? \"\""),
    ("code", "en", "headers = {\"Authorization\": f\"Bearer {access_token}\"}  # token comes from the OAuth flow"),
]}


# ---------------------------------------------------------------- build
DATA_KINDS = {"databricks_token", "snowflake_password", "snowflake_key_passphrase", "dbt_profile_password",
              "redshift_url_password", "postgres_url_password", "mysql_url_password", "mssql_url_password",
              "mongodb_url_password", "redis_password", "azure_sql_conn_password", "airflow_conn_uri_password",
              "airflow_fernet_key", "airflow_webserver_secret", "bigquery_sa_key", "clickhouse_cloud_secret",
              "planetscale_password", "supabase_service_role", "supabase_pat", "looker_client_secret",
              "tableau_pat_secret", "fivetran_api_secret", "kaggle_key", "prefect_api_key", "jupyter_token",
              "mixpanel_api_secret", "amplitude_secret_key", "segment_public_api_token"}
MOBILE_KINDS = {"android_keystore_password", "android_key_password", "fastlane_match_password", "fcm_server_key",
                "apns_p8_key", "play_console_sa_key", "firebase_ci_token", "expo_access_token",
                "onesignal_rest_key", "revenuecat_secret", "mapbox_secret_token", "appcenter_token",
                "bugsnag_auth_token", "sentry_auth_token", "appsflyer_api_token", "branch_secret",
                "agora_app_certificate", "steam_web_api_key", "playfab_secret_key", "unity_cloud_secret"}


def theme_of(kind):
    return "D" if kind in DATA_KINDS else "M" if kind in MOBILE_KINDS else "O"


def corpus(part):
    r = random.Random(SEEDS[part])
    out = []
    pools = T[part]
    for kind, svc, var, key, gen, form in K:
        n = r.randint(5, 8)
        for i in range(n):
            lang = "ko" if r.random() < 0.34 else "en"
            th = theme_of(kind)
            tpls = [t[2:] if t[1] == "|" else t for t in pools[form][lang] if t[1] != "|" or t[0] == th]
            tpl = tpls[(i + r.randrange(len(tpls))) % len(tpls)]
            val, secrets = gen(r)
            s = KO_SVC.get(svc, svc) if lang == "ko" else svc
            text = fill(tpl, r, s, var, key, val)
            out.append((text, kind, tuple(secrets), lang))
    npos = len(out)
    target = int(npos * 0.5)
    negs = NEG_T[part]
    seen = {t for t, _, _, _ in out}
    i = 0
    attempts = 0
    while len(out) - npos < target and attempts < target * 20:
        attempts += 1
        if i < len(negs):
            cat, lang, tpl = negs[i]
        else:
            want = "ko" if r.random() < 0.3 else "en"
            cat, lang, tpl = r.choice([n for n in negs if n[1] == want])
        i += 1
        x = NEG_GEN[cat](r) if cat in NEG_GEN else ""
        svc = r.choice(["Maps key", "API key", "token"])
        text = tpl.replace("@X@", x).replace("@SVC@", svc).replace("@P@", r.choice(["********", "<ask in #qa>", "(1Password: QA Shared)", "<PASSWORD>"]))
        if text in seen:
            continue
        seen.add(text)
        out.append((text, "neg:" + cat, (), lang))
    r.shuffle(out)
    return out


def _check():
    dev, held = corpus("dev"), corpus("heldout")
    for part, items in (("dev", dev), ("heldout", held)):
        for text, kind, secrets, lang in items:
            assert "[REDACTED]" not in text
            for s in secrets:
                assert s in text, (kind, s)
                assert len(s) >= 8, (kind, s)
            assert lang in ("en", "ko")
    all_dev = {t for f in T["dev"].values() for l in f.values() for t in l} | {t for _, _, t in NEG_T["dev"]}
    all_held = {t for f in T["heldout"].values() for l in f.values() for t in l} | {t for _, _, t in NEG_T["heldout"]}
    assert not (all_dev & all_held)
    return dev, held


if __name__ == "__main__":
    dev, held = _check()
    for part, items in (("dev", dev), ("heldout", held)):
        pos = [x for x in items if not x[1].startswith("neg:")]
        neg = [x for x in items if x[1].startswith("neg:")]
        kinds = {x[1] for x in pos}
        ko = sum(1 for x in items if x[3] == "ko") / len(items)
        print(f"{part}: positives={len(pos)} negatives={len(neg)} kinds={len(kinds)} ko_share={ko:.2f}")
        rr = random.Random(0)
        for x in rr.sample(items, 3):
            print("  ---", x[1], x[3], x[2])
            print("  " + x[0].replace("\n", "\n  "))
