"""A labelled corpus for the redaction benchmark: sentences a coding agent would write in a lesson.

Deterministic (seeded random). Every "secret" here is a fake built in code with the shape of the
real thing; prefixes are split from bodies so that secret scanners on the repository stay quiet.
No value was ever a real credential.

    corpus() -> list[Example]     positives (kind, secrets = the substrings that must disappear)
                                  and negatives (kind "neg:<category>", secrets = ())

The sentences were written first, as an agent would write them after a task, in English and
Korean; the fakes are then dropped into them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass

SEED = 20260227
LOWER, UPPER, DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits
ALNUM = LOWER + UPPER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Example:
    text: str
    kind: str  # the credential kind, or "neg:<category>" for a negative
    secrets: tuple[str, ...]  # substrings that must be gone after redaction; () for a negative
    lang: str  # "en" or "ko"

    @property
    def positive(self) -> bool:
        return bool(self.secrets)


class Fakes:
    """Shape-correct fake credentials from one seeded generator."""

    def __init__(self, rng: random.Random):
        self.r = rng

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def mixed(self, n: int) -> str:  # alphanumerics that surely contain upper, lower and digit
        while True:
            v = self.s(ALNUM, n)
            if any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v):
                return v

    # -- providers
    def aws_id(self):
        return self.r.choice(["AK", "AS"]) + "IA" + self.s(UPPER + DIGITS, 16)

    def aws_secret(self):
        return self.s(B64, 40)

    def gh(self, p):
        return "gh" + p + "_" + self.mixed(36)

    def gh_fine(self):
        return "github" + "_pat_" + "11" + self.s(UPPER + DIGITS, 20) + "_" + self.mixed(59)

    def gitlab(self):
        return self.r.choice(["gl" + "pat-", "gl" + "dt-", "gl" + "rt-"]) + self.s(B64URL[:-2] + "_-", 20)

    def slack(self):
        return "xox" + self.r.choice("bpa") + "-" + self.s(DIGITS, 11) + "-" + self.s(DIGITS, 12) + "-" + self.mixed(24)

    def slack_hook(self):
        return ("https://hooks.slack.com/services/", "T" + self.s(UPPER + DIGITS, 8) + "/B"
                + self.s(UPPER + DIGITS, 10) + "/" + self.mixed(24))

    def stripe(self, kind):
        return kind + "_" + self.r.choice(["live", "test"]) + "_" + self.mixed(self.r.choice([24, 99]))

    def openai(self):
        return "sk" + "-" + self.mixed(20) + "T3Blbk" + "FJ" + self.mixed(20)

    def openai_proj(self):
        return "sk" + "-proj-" + self.s(B64URL, 74) + "T3Blbk" + "FJ" + self.s(B64URL, 74)

    def anthropic(self):
        return "sk" + "-ant-" + "api03-" + self.s(B64URL, 93) + "AA"

    def google_api(self):
        return "AI" + "za" + "Sy" + self.s(B64URL, 33)

    def google_oauth(self):
        return "GOC" + "SPX-" + self.s(B64URL, 28)

    def pem_body(self, lines=5):
        return "\n".join(self.s(B64, 64) for _ in range(lines)) + "\n" + self.s(B64, 20) + "=="

    def pem(self, kind):
        tail = "PRIVATE KEY BLOCK" if kind == "PGP " else "PRIVATE KEY"
        return f"-----BEGIN {kind}{tail}-----\n{self.pem_body()}\n-----END {kind}{tail}-----"

    def jwt(self):
        def enc(obj):
            return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
        return ".".join([enc({"alg": "HS256", "typ": "JWT"}),
                         enc({"sub": self.s(DIGITS, 8), "role": "admin", "exp": 1767225600}),
                         self.s(B64URL, 43)])

    def npm(self):
        return "np" + "m_" + self.mixed(36)

    def pypi(self):
        return "py" + "pi-" + "AgEIcHlwaS5vcmc" + self.s(B64URL, 70)

    def twilio_key(self):
        return "S" + "K" + self.s(HEX, 32)

    def twilio_sid(self):
        return "A" + "C" + self.s(HEX, 32)

    def sendgrid(self):
        return "S" + "G." + self.s(B64URL, 22) + "." + self.s(B64URL, 43)

    def mailgun(self):
        return self.r.choice(["ke" + "y-" + self.s(HEX, 32),
                              self.s(HEX, 32) + "-" + self.s(HEX, 8) + "-" + self.s(HEX, 8)])

    def azure_key(self):
        return self.s(B64, 86) + "=="

    def azure_sig(self):
        return self.s(ALNUM, 30) + "%2B" + self.s(ALNUM, 10) + "%3D"

    def password(self):
        words = ["Summer", "Tiger", "Blue", "Orange", "Delta", "Maple", "Rocket", "Falcon"]
        return self.r.choice([
            self.r.choice(words) + self.s(DIGITS, 4) + self.r.choice("!#$%@"),
            self.mixed(self.r.randint(10, 16)),
            self.s(LOWER, 5) + self.s(DIGITS, 3) + self.s(LOWER, 3),
            self.r.choice(words).lower() + "-" + self.s(DIGITS, 2) + "-" + self.r.choice(words).lower(),
            self.s(ALNUM + "!#%^*", 14),
        ])

    def hf(self):
        return "h" + "f_" + self.mixed(34)

    def discord_bot(self):
        user = base64.b64encode(self.s(DIGITS, 18).encode()).decode().rstrip("=")
        return user + "." + self.s(B64URL, 6) + "." + self.s(B64URL, 38)

    def discord_hook(self):
        return ("https://discord.com/api/webhooks/" + self.s(DIGITS, 18) + "/", self.s(B64URL, 68))

    def telegram(self):
        return self.s(DIGITS, 10) + ":" + "AA" + self.s(B64URL, 33)

    def digitalocean(self):
        return "do" + "p_v1_" + self.s(HEX, 64)

    def heroku(self):
        return self.r.choice(["HR" + "KU-" + "AA" + self.s(B64URL, 58), str(uuid.UUID(int=self.r.getrandbits(128)))])

    def databricks(self):
        return "da" + "pi" + self.s(HEX, 32)

    def shopify(self):
        return "sh" + self.r.choice(["pat", "pss", "pca"]) + "_" + self.s(HEX, 32)

    def atlassian(self):
        return "ATA" + "TT3xFfGF0" + self.s(B64URL, 170) + "=" + self.s(HEX.upper(), 8)

    def linear(self):
        return "li" + "n_api_" + self.mixed(40)

    def notion(self):
        return self.r.choice(["sec" + "ret_" + self.mixed(43), "nt" + "n_" + self.s(DIGITS, 11) + self.mixed(35)])

    def doppler(self):
        return "dp" + "." + self.r.choice(["pt", "st", "sa"]) + "." + self.mixed(43)

    def vault(self):
        return "hv" + "s." + self.s(B64URL, 90)

    def hexs(self, n):
        return self.s(HEX, n)

    # -- further providers (the strict rules beyond the ones the issue of record names)
    def further(self) -> dict[str, str]:
        """One fresh fake per further provider format, by kind."""
        s, m = self.s, self.mixed
        return {
            "aws_session_token": "IQoJb3JpZ2luX2Vj" + s(B64, 300),
            "google_oauth_token": "ya" + "29." + s(B64URL, 150),
            "stripe_webhook_secret": "wh" + "sec_" + m(32),
            "slack_app_token": "xa" + "pp-1-A" + s(UPPER + DIGITS, 10) + "-" + s(DIGITS, 13) + "-" + s(HEX, 64),
            "postman": "PM" + "AK-" + s(HEX, 24) + "-" + s(HEX, 34),
            "grafana": "gl" + "sa_" + m(32) + "_" + s(HEX, 8),
            "sentry": "sn" + "trys_" + "eyJ" + s(B64, 60) + "_" + m(43),
            "supabase": "sb" + "p_" + s(HEX, 40),
            "planetscale": "pscale" + "_tkn_" + s(B64URL, 43),
            "replicate": "r8" + "_" + m(37),
            "groq": "gs" + "k_" + m(52),
            "xai": "xa" + "i-" + m(80),
            "perplexity": "pp" + "lx-" + m(48),
            "newrelic": "NR" + "AK-" + s(UPPER + DIGITS, 27),
            "square": "sq0" + "atp-" + s(B64URL, 22),
            "mapbox": "sk" + ".eyJ1Ijoi" + s(B64URL, 40) + "." + s(B64URL, 22),
            "pulumi": "pu" + "l-" + s(HEX, 40),
            "terraform_cloud": m(14) + ".atlas" + "v1." + s(B64URL, 67),
            "age": "AGE-SECRET" + "-KEY-1" + s(UPPER + DIGITS, 58),
            "firebase_fcm": "AAAA" + s(B64URL, 7) + ":APA91b" + s(B64URL, 134),
            "azure_ad_client_secret": m(3) + s(DIGITS, 1) + "Q~" + s(ALNUM + "_~.", 33) + s(ALNUM, 1),
            # added with the provider rules of issue 13 (shapes from the providers' documentation
            # and the public rule set of gitleaks; the fakes are our own)
            "gitlab_routable": "gl" + "pat-" + s(B64URL, 40) + ".01." + s(LOWER + DIGITS, 7),
            "gitlab_job_token": "gl" + "cbt-" + s(ALNUM, 3) + "_" + s(B64URL, 20),
            "stripe_prod": "rk" + "_prod_" + m(40),
            "openrouter": "sk" + "-or-v1-" + s(HEX, 64),
            "langfuse": "sk" + "-lf-" + str(uuid.UUID(int=self.r.getrandbits(128))),
            "google_refresh": "1/" + "/0" + s(B64URL, 90),
            "docker_hub": "dc" + "kr_pat_" + s(B64URL, 27),
            "bitbucket": "AT" + "BB" + m(40),
            "mailchimp": s(HEX, 32) + "-us" + str(self.r.randint(1, 20)),
            "newrelic_license": s(HEX, 36) + "NR" + "AL",
            "newrelic_insert": "NR" + "II-" + s(B64URL, 32),
            "airtable": "pa" + "t" + m(14) + "." + s(HEX, 64),
            "figma": "fi" + "gd_" + s(B64URL, 40),
            "hubspot": "pa" + "t-eu1-" + str(uuid.UUID(int=self.r.getrandbits(128))),
            "vercel": "vc" + "k_" + m(40),
            "netlify": "nf" + "p_" + m(40),
            "supabase_secret": "sb" + "_secret_" + s(B64URL, 32),
            "grafana_legacy": "eyJr" + "Ijoi" + m(72),
            "dropbox": "sl" + ".u." + s(B64URL, 150),
            "dropbox_long_lived": m(11) + "A" * 10 + s(B64URL, 43),
            "facebook": "EA" + "AB" + m(150),
            "braintree": "access_token" + "$sandbox$" + s(LOWER + DIGITS, 16) + "$" + s(HEX, 32),
            "alibaba": "LT" + "AI" + m(16),
            "tencent": "AK" + "ID" + m(32),
            "twitter_bearer": "A" * 21 + m(20) + "%2B" + m(60),
            "salesforce": "00D" + m(15) + "!" + s(ALNUM + "._", 100),
            "asana": "1/" + s(DIGITS, 16) + ":" + s(HEX, 32),
            "clickup": "pk" + "_" + s(DIGITS, 7) + "_" + s(UPPER + DIGITS, 32),
            "plaid": "access" + "-production-" + str(uuid.UUID(int=self.r.getrandbits(128))),
            "launchdarkly": "ap" + "i-" + str(uuid.UUID(int=self.r.getrandbits(128))),
            "jfrog": "AK" + "Cp" + m(70),
            "clojars": "CLO" + "JARS_" + s(LOWER + DIGITS, 60),
            "onepassword": "op" + "s_eyJ" + s(B64, 200),
            "harness": "sa" + "t." + s(B64URL, 22) + "." + m(24) + "." + m(20),
            "cloudflare_origin_ca": "v1" + ".0-" + s(HEX, 24) + "-" + s(HEX, 146),
            "dynatrace": "dt0" + "c01." + s(UPPER + DIGITS, 24) + "." + s(UPPER + DIGITS, 64),
            "easypost": "EZ" + "TK" + m(54),
            "flyio": "fm" + "2_" + s(B64, 140) + "==",
            "infracost": "ic" + "o-" + m(32),
            "readme": "rd" + "me_" + s(LOWER + DIGITS, 70),
            "typeform": "tf" + "p_" + s(B64URL, 44),
            "render": "rn" + "d_" + m(32),
            "rubygems": "ruby" + "gems_" + s(HEX, 48),
            "shippo": "shi" + "ppo_test_" + s(HEX, 40),
            "brevo": "xsmtp" + "sib-" + s(HEX, 64) + "-" + m(16),
            "prefect": "pn" + "u_" + m(36),
            "buildkite": "bk" + "ua_" + s(HEX, 40),
            "sonarqube": "sq" + "p_" + s(HEX, 40),
            "circleci": "CCI" + "PAT_" + m(24) + "_" + s(HEX, 40),
            "contentful": "CF" + "PAT-" + s(B64URL, 43),
            "langsmith": "lsv2" + "_sk_" + s(HEX, 32) + "_" + s(HEX, 10),
            "pinecone": "pc" + "sk_" + m(5) + "_" + m(50),
            "tavily": "tv" + "ly-dev-" + m(32),
            "elevenlabs": "sk" + "_" + s(HEX, 48),
            "deepl": str(uuid.UUID(int=self.r.getrandbits(128))) + ":f" + "x",
            "duffel": "duf" + "fel_test_" + s(B64URL, 43),
            "sourcegraph": "sg" + "p_" + s(HEX, 16) + "_" + s(HEX, 40),
            "openshift": "sha" + "256~" + s(B64URL, 43),
            "maxmind": m(6) + "_" + m(29) + "_m" + "mk",
            "adobe": "p8" + "e-" + m(32),
            "yandex": "AQ" + "VN" + s(B64URL, 36),
            "azure_devops": m(52) + "JQQJ99" + m(18) + "AZ" + "DO" + m(4),
            "teams_webhook": "https://acme.webhook.office.com/webhookb2/" + str(uuid.UUID(int=self.r.getrandbits(128))) + "@"
                             + str(uuid.UUID(int=self.r.getrandbits(128))) + "/IncomingWebhook/" + s(HEX, 32) + "/"
                             + str(uuid.UUID(int=self.r.getrandbits(128))),
        }


def further_kinds() -> tuple[str, ...]:
    """The kinds of Fakes.further: provider formats beyond the ones the product promises by name."""
    return tuple(Fakes(random.Random(0)).further())


# --- positive sentences -----------------------------------------------------------------------
# Each generator returns (text, [secret substrings], lang). {x} marks where a fake goes.

def _positives(f: Fakes):  # noqa: C901 - a table, not logic
    P = {}

    def add(kind, *makers):
        P[kind] = makers

    add("aws_access_key_id",
        lambda k=None: (lambda k: (f"The CI job used access key {k} which belongs to the old deploy user; use the OIDC role instead.", [k], "en"))(f.aws_id()),
        lambda k=None: (lambda k: (f"aws configure showed aws_access_key_id = {k} in ~/.aws/credentials, left over from onboarding.", [k], "en"))(f.aws_id()),
        lambda k=None: (lambda k: (f"S3 업로드가 403으로 실패함. 로그에 찍힌 키 {k}는 이미 비활성화된 키였다.", [k], "ko"))(f.aws_id()),
        lambda k=None: (lambda k: (f"boto3 error: The AWS Access Key Id {k} you provided does not exist in our records.", [k], "en"))(f.aws_id()),
    )
    add("aws_secret_access_key",
        lambda: (lambda s: (f"The .env had AWS_SECRET_ACCESS_KEY={s} committed by mistake; it must come from the vault.", [s], "en"))(f.aws_secret()),
        lambda: (lambda s: (f"aws_secret_access_key = {s}\nwas in the credentials file the user pasted.", [s], "en"))(f.aws_secret()),
        lambda: (lambda s: (f'terraform 변수에 "secret_key": "{s}" 가 하드코딩되어 있었음. 환경변수로 옮길 것.', [s], "ko"))(f.aws_secret()),
    )
    for code, label in (("p", "classic"), ("o", "oauth"), ("u", "app_user"), ("s", "app_server"), ("r", "refresh")):
        add(f"github_{label}",
            lambda code=code: (lambda t: (f"gh auth status printed the token {t}; the push failed because it lacked the workflow scope.", [t], "en"))(f.gh(code)),
            lambda code=code: (lambda t: (f"GITHUB_TOKEN={t} was hardcoded in the release script.", [t], "en"))(f.gh(code)),
            lambda code=code: (lambda t: (f"릴리스 스크립트에 토큰 {t} 이(가) 박혀 있었다. secrets.GITHUB_TOKEN을 쓸 것.", [t], "ko"))(f.gh(code)),
        )
    add("github_fine_grained",
        lambda: (lambda t: (f"Fine-grained PAT {t} only had read access to contents, so creating the release failed.", [t], "en"))(f.gh_fine()),
        lambda: (lambda t: (f"git clone https://{t}@github.com/acme/infra.git worked but leaked the PAT into shell history.", [t], "en"))(f.gh_fine()),
        lambda: (lambda t: (f"사용자가 준 PAT({t})는 acme 조직 저장소에 권한이 없었다.", [t], "ko"))(f.gh_fine()),
    )
    add("gitlab",
        lambda: (lambda t: (f"The runner used CI_JOB_TOKEN, but the clone URL still had {t} in it.", [t], "en"))(f.gitlab()),
        lambda: (lambda t: (f'curl --header "PRIVATE-TOKEN: {t}" https://gitlab.example.com/api/v4/projects worked.', [t], "en"))(f.gitlab()),
        lambda: (lambda t: (f"GitLab 토큰 {t} 은 만료일이 지나서 파이프라인이 멈췄다.", [t], "ko"))(f.gitlab()),
    )
    add("slack_token",
        lambda: (lambda t: (f"The alert bot posts with {t}; it needs chat:write in the new workspace.", [t], "en"))(f.slack()),
        lambda: (lambda t: (f"SLACK_BOT_TOKEN: {t} was found in values.yaml.", [t], "en"))(f.slack()),
        lambda: (lambda t: (f"슬랙 봇 토큰 {t} 을 config에 두지 말 것.", [t], "ko"))(f.slack()),
    )
    add("slack_webhook",
        lambda: (lambda h: (f"Deploy notifications go to {h[0]}{h[1]} (channel #deploys).", [h[1]], "en"))(f.slack_hook()),
        lambda: (lambda h: (f"웹훅 주소 {h[0]}{h[1]} 가 README에 노출되어 있었다.", [h[1]], "ko"))(f.slack_hook()),
    )
    add("stripe_secret",
        lambda: (lambda k: (f"Checkout failed in staging because STRIPE_SECRET_KEY was {k} from another account.", [k], "en"))(f.stripe("s" + "k")),
        lambda: (lambda k: (f"stripe.api_key = '{k}' was set at import time in payments/client.py.", [k], "en"))(f.stripe("s" + "k")),
        lambda: (lambda k: (f"결제 테스트에서 키 {k} 로 호출했더니 계정 불일치 오류.", [k], "ko"))(f.stripe("s" + "k")),
    )
    add("stripe_restricted",
        lambda: (lambda k: (f"The reporting job uses the restricted key {k}, which cannot create refunds.", [k], "en"))(f.stripe("r" + "k")),
        lambda: (lambda k: (f"제한 키 {k} 에 refunds 권한이 없었다.", [k], "ko"))(f.stripe("r" + "k")),
    )
    add("openai",
        lambda: (lambda k: (f"The notebook had openai.api_key = \"{k}\" in the first cell.", [k], "en"))(f.openai()),
        lambda: (lambda k: (f"Rate limit errors came from the shared key {k}; each service needs its own.", [k], "en"))(f.openai()),
        lambda: (lambda k: (f"OpenAI 키 {k} 가 노트북에 남아 있었음.", [k], "ko"))(f.openai()),
    )
    add("openai_project",
        lambda: (lambda k: (f"OPENAI_API_KEY={k} in docker-compose.override.yml must not be committed.", [k], "en"))(f.openai_proj()),
        lambda: (lambda k: (f"프로젝트 키 {k} 는 org 설정과 맞지 않아 401이 났다.", [k], "ko"))(f.openai_proj()),
    )
    add("anthropic",
        lambda: (lambda k: (f"The eval harness read ANTHROPIC_API_KEY but the test fixture hardcoded {k}.", [k], "en"))(f.anthropic()),
        lambda: (lambda k: (f"x-api-key: {k} header was logged by the debug middleware.", [k], "en"))(f.anthropic()),
        lambda: (lambda k: (f"Claude 호출용 키 {k} 가 로그에 찍힘. 미들웨어에서 헤더 마스킹 필요.", [k], "ko"))(f.anthropic()),
    )
    add("google_api_key",
        lambda: (lambda k: (f"The Maps embed used key={k} with no HTTP referrer restriction.", [k], "en"))(f.google_api()),
        lambda: (lambda k: (f"firebaseConfig had apiKey: \"{k}\"; that is public by design but still restrict it.", [k], "en"))(f.google_api()),
        lambda: (lambda k: (f"지도 API 키 {k} 에 리퍼러 제한이 없었다.", [k], "ko"))(f.google_api()),
    )
    add("google_oauth_secret",
        lambda: (lambda k: (f"client_secret {k} came from the old OAuth client; the redirect URI mismatch was the real issue.", [k], "en"))(f.google_oauth()),
        lambda: (lambda k: (f"OAuth 클라이언트 시크릿 {k} 을 프론트엔드 번들에 넣으면 안 된다.", [k], "ko"))(f.google_oauth()),
    )

    def gcp():
        kid, pem = f.hexs(40), f.pem("")
        doc = json.dumps({"type": "service_account", "project_id": "acme-prod", "private_key_id": kid,
                          "private_key": pem + "\n", "client_email": "ci@acme-prod.iam.gserviceaccount.com"})
        esc = json.dumps(pem + "\n")[1:-1]
        return [kid, esc], doc
    add("gcp_service_account",
        lambda: (lambda g: (f"The user pasted the whole key file: {g[1]} — it must live in Secret Manager.", g[0], "en"))(gcp()),
        lambda: (lambda g: (f"서비스 계정 JSON {g[1]} 이 저장소에 들어갈 뻔했다.", g[0], "ko"))(gcp()),
    )
    for kind in ("RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED ", "DSA ", "PGP "):
        label = "pem_" + (kind.strip().lower() or "pkcs8")
        add(label,
            lambda kind=kind: (lambda k: (f"deploy_key was checked in:\n{k}\nRegenerate it and use a deploy key secret.", [k], "en"))(f.pem(kind)),
            lambda kind=kind: (lambda k: (f"ssh 접속 키를 그대로 붙여넣음:\n{k}\n다음부터는 경로만 적을 것.", [k], "ko"))(f.pem(kind)),
        )
    add("jwt",
        lambda: (lambda t: (f"The integration test reused a captured session JWT {t}, which expired overnight.", [t], "en"))(f.jwt()),
        lambda: (lambda t: (f"Cookie: session={t}; Path=/ was copied from the browser.", [t], "en"))(f.jwt()),
        lambda: (lambda t: (f"만료된 JWT {t} 로 테스트해서 401이 났다.", [t], "ko"))(f.jwt()),
    )
    add("npm",
        lambda: (lambda t: (f".npmrc contained //registry.npmjs.org/:_authToken={t}", [t], "en"))(f.npm()),
        lambda: (lambda t: (f"npm publish failed: the automation token {t} was revoked.", [t], "en"))(f.npm()),
        lambda: (lambda t: (f"npm 배포 토큰 {t} 이 .npmrc에 커밋됨.", [t], "ko"))(f.npm()),
    )
    add("pypi",
        lambda: (lambda t: (f"twine upload -u __token__ -p {t} dist/* worked, but use trusted publishing.", [t], "en"))(f.pypi()),
        lambda: (lambda t: (f"~/.pypirc의 password = {t} 는 프로젝트 범위 토큰으로 바꿀 것.", [t], "ko"))(f.pypi()),
    )
    add("twilio",
        lambda: (lambda k, sid: (f"SMS sending used API key {k} on account {sid}; the subaccount was suspended.", [k, sid], "en"))(f.twilio_key(), f.twilio_sid()),
        lambda: (lambda k: (f"TWILIO_AUTH_TOKEN={k} was in the Procfile env.", [k], "en"))(f.hexs(32)),
        lambda: (lambda k: (f"트윌리오 API 키 {k} 는 테스트 계정 것이었다.", [k], "ko"))(f.twilio_key()),
    )
    add("sendgrid",
        lambda: (lambda k: (f"Password reset emails bounced; SENDGRID_API_KEY was {k}, a key with mail.send disabled.", [k], "en"))(f.sendgrid()),
        lambda: (lambda k: (f"메일 발송 키 {k} 권한 부족.", [k], "ko"))(f.sendgrid()),
    )
    add("mailgun",
        lambda: (lambda k: (f"Mailgun rejected requests signed with {k} because the domain was in sandbox mode.", [k], "en"))(f.mailgun()),
        lambda: (lambda k: (f"MAILGUN_API_KEY: {k} 가 staging 설정에 있었음.", [k], "ko"))(f.mailgun()),
    )
    add("azure_storage",
        lambda: (lambda k: (f"The function app used DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={k};EndpointSuffix=core.windows.net — switch to managed identity.", [k], "en"))(f.azure_key()),
        lambda: (lambda k: (f"스토리지 연결 문자열에 AccountKey={k} 가 포함되어 있었다.", [k], "ko"))(f.azure_key()),
    )
    add("azure_sas",
        lambda: (lambda s: (f"The upload used https://acme.blob.core.windows.net/builds/app.zip?sv=2022-11-02&ss=b&srt=o&sp=rw&se=2026-03-01T00:00:00Z&sig={s} which expired.", [s], "en"))(f.azure_sig()),
        lambda: (lambda s: (f"SAS URL의 sig={s} 값이 PR 설명에 노출됨.", [s], "ko"))(f.azure_sig()),
    )
    for scheme, host in (("postgres", "db.internal:5432/app"), ("postgresql", "10.0.3.7/orders"),
                         ("mysql", "mysql.staging:3306/shop"), ("mongodb+srv", "cluster0.ab12c.mongodb.net/prod"),
                         ("redis", "cache-1:6379/0"), ("amqp", "rabbit:5672/%2F"), ("rediss", "cache.example.com:6380")):
        add(f"url_{scheme.replace('+', '_')}",
            lambda scheme=scheme, host=host: (lambda p: (f"Migrations ran against {scheme}://app_user:{p}@{host} instead of the local database.", [p], "en"))(f.password()),
            lambda scheme=scheme, host=host: (lambda p: (f"DATABASE_URL={scheme}://admin:{p}@{host} 가 테스트 설정에 들어가 있었다.", [p], "ko"))(f.password()),
        )
    add("url_credentials",
        lambda: (lambda p: (f"The private index is https://ci:{p}@pypi.internal.example.com/simple/ in pip.conf.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"ftp://deploy:{p}@files.example.org/releases was used by the old script.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"SMTP_URL=smtp://noreply:{p}@smtp.example.com:587 이 하드코딩되어 있음.", [p], "ko"))(f.password()),
    )
    add("authorization_bearer",
        lambda: (lambda t: (f'curl -H "Authorization: Bearer {t}" https://api.example.com/v2/orders returned 403.', [t], "en"))(f.mixed(40)),
        lambda: (lambda t: (f"The request log showed Authorization: Bearer {t} for every call; mask headers in the logger.", [t], "en"))(f.s(B64URL, 32)),
        lambda: (lambda t: (f"헤더 Authorization: Bearer {t} 가 그대로 로그에 남음.", [t], "ko"))(f.mixed(32)),
    )
    add("authorization_basic",
        lambda: (lambda t: (f"The webhook receiver expects Authorization: Basic {t}, not a bearer token.", [t], "en"))(base64.b64encode(f"svc:{f.password()}".encode()).decode()),
        lambda: (lambda t: (f"프록시가 Authorization: Basic {t} 헤더를 벗겨내서 401.", [t], "ko"))(base64.b64encode(f"admin:{f.password()}".encode()).decode()),
    )
    add("env_assignment",
        lambda: (lambda p: (f"The .env.local file had DB_PASSWORD={p} and was not in .gitignore.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"export REDIS_PASSWORD={p} was added to ~/.bashrc by the setup script.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"docker run -e POSTGRES_PASSWORD={p} postgres:16 was in the README.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"로컬 실행 시 ADMIN_PASSWORD={p} 를 쓰고 있었다. 시드 스크립트에서 생성하도록 바꿀 것.", [p], "ko"))(f.password()),
    )
    add("yaml_assignment",
        lambda: (lambda p: (f"values.yaml had:\npostgresql:\n  auth:\n    password: {p}\nMove it to a sealed secret.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"application.yml contains `spring.datasource.password: {p}` for the dev profile.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"config.yaml에\n  api_token: {p}\n가 들어 있었음.", [p], "ko"))(f.mixed(24)),
    )
    add("json_assignment",
        lambda: (lambda p: (f'appsettings.Development.json had "ClientSecret": "{p}" under AzureAd.', [p], "en"))(f.mixed(34)),
        lambda: (lambda p: (f'The fixture {{"username": "qa", "password": "{p}"}} was reused in prod smoke tests.', [p], "en"))(f.password()),
        lambda: (lambda p: (f'설정 JSON의 "apiKey": "{p}" 를 환경변수로 뺄 것.', [p], "ko"))(f.mixed(32)),
    )
    add("toml_assignment",
        lambda: (lambda p: (f'In pyproject-local.toml: [tool.poetry.http-basic.internal] password = "{p}"', [p], "en"))(f.password()),
        lambda: (lambda p: (f'Cargo config had token = "{p}" under [registries.internal].', [p], "en"))(f.mixed(32)),
        lambda: (lambda p: (f'secrets.toml의 webhook_secret = "{p}" 는 커밋하면 안 된다.', [p], "ko"))(f.mixed(28)),
    )
    add("cli_flag",
        lambda: (lambda p: (f"The deploy step ran `mysql -u root --password {p} shop < dump.sql`.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"helm install with --set auth.password={p} leaks into the release history.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"docker login registry.example.com --username ci --password {p}", [p], "en"))(f.password()),
        lambda: (lambda p: (f"`vault login -method=userpass username=ops password={p}` 를 스크립트에 적지 말 것.", [p], "ko"))(f.password()),
    )
    add("keyword_prose",
        lambda: (lambda p: (f"The staging admin password is {p}; ask before rotating it.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"스테이징 DB 비밀번호는 {p} 이다. 바꾸기 전에 팀에 알릴 것.", [p], "ko"))(f.password()),
        lambda: (lambda p: (f"Use the API token {p} only for the nightly export.", [p], "en"))(f.mixed(32)),
    )
    add("huggingface",
        lambda: (lambda t: (f"Downloading the gated model needed HF_TOKEN; the script had {t} inline.", [t], "en"))(f.hf()),
        lambda: (lambda t: (f"허깅페이스 토큰 {t} 은 read 권한만 있었다.", [t], "ko"))(f.hf()),
    )
    add("discord_bot",
        lambda: (lambda t: (f"The moderation bot logged in with {t}; it needs the message content intent.", [t], "en"))(f.discord_bot()),
        lambda: (lambda t: (f"디스코드 봇 토큰 {t} 이 소스에 있었다.", [t], "ko"))(f.discord_bot()),
    )
    add("discord_webhook",
        lambda: (lambda h: (f"Build failures post to {h[0]}{h[1]} in the #ci channel.", [h[1]], "en"))(f.discord_hook()),
        lambda: (lambda h: (f"웹훅 {h[0]}{h[1]} 를 공개 저장소에 올리면 스팸이 온다.", [h[1]], "ko"))(f.discord_hook()),
    )
    add("telegram",
        lambda: (lambda t: (f"The on-call bot uses https://api.telegram.org/bot{t}/sendMessage; move the token to env.", [t], "en"))(f.telegram()),
        lambda: (lambda t: (f"텔레그램 봇 토큰 {t} 을 설정 파일에서 제거.", [t], "ko"))(f.telegram()),
    )
    add("digitalocean",
        lambda: (lambda t: (f"doctl auth init was given {t}, a token with write scope.", [t], "en"))(f.digitalocean()),
        lambda: (lambda t: (f"DigitalOcean 토큰 {t} 이 terraform.tfvars에 있었다.", [t], "ko"))(f.digitalocean()),
    )
    add("heroku",
        lambda: (lambda t: (f"HEROKU_API_KEY={t} was stored as a plain GitHub Actions variable, not a secret.", [t], "en"))(f.heroku()),
        lambda: (lambda t: (f"heroku 배포용 HEROKU_API_KEY: {t} 를 secrets로 옮길 것.", [t], "ko"))(f.heroku()),
    )
    add("databricks",
        lambda: (lambda t: (f"The notebook job authenticated with {t}; use a service principal.", [t], "en"))(f.databricks()),
        lambda: (lambda t: (f"DATABRICKS_TOKEN={t} 가 .databrickscfg 예시에 실제 값으로 들어감.", [t], "ko"))(f.databricks()),
    )
    add("shopify",
        lambda: (lambda t: (f"The storefront sync used the admin token {t} with write_products.", [t], "en"))(f.shopify()),
        lambda: (lambda t: (f"쇼피파이 토큰 {t} 은 앱 재설치 후 무효가 됨.", [t], "ko"))(f.shopify()),
    )
    add("atlassian",
        lambda: (lambda t: (f"The Jira sync script used the API token {t} of a former employee.", [t], "en"))(f.atlassian()),
        lambda: (lambda t: (f"Confluence API 토큰 {t} 을 개인 계정 대신 봇 계정으로 발급받을 것.", [t], "ko"))(f.atlassian()),
    )
    add("linear",
        lambda: (lambda t: (f"The issue importer had {t} hardcoded; use LINEAR_API_KEY.", [t], "en"))(f.linear()),
        lambda: (lambda t: (f"Linear 키 {t} 로 호출하면 워크스페이스가 달라 404.", [t], "ko"))(f.linear()),
    )
    add("notion",
        lambda: (lambda t: (f"The docs export used the integration token {t}, which had no access to the page.", [t], "en"))(f.notion()),
        lambda: (lambda t: (f"노션 통합 토큰 {t} 에 페이지 공유가 안 되어 있었다.", [t], "ko"))(f.notion()),
    )
    add("doppler",
        lambda: (lambda t: (f"doppler run worked locally only because {t} was exported in the shell profile.", [t], "en"))(f.doppler()),
        lambda: (lambda t: (f"DOPPLER_TOKEN={t} 을 CI 변수로 옮김.", [t], "ko"))(f.doppler()),
    )
    add("vault",
        lambda: (lambda t: (f"VAULT_TOKEN was {t}, a root token; create a scoped policy instead.", [t], "en"))(f.vault()),
        lambda: (lambda t: (f"볼트 토큰 {t} 이 스크립트 주석에 남아 있었다.", [t], "ko"))(f.vault()),
    )
    add("client_password_flag",
        lambda: (lambda p: (f"The health check ran redis-cli -h cache-1 -a {p} --no-auth-warning ping every minute.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"sshpass -p '{p}' rsync -e ssh build/ deploy@web-1:/srv/app was the whole deploy.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"The nightly backup runs mysqldump -u backup -p{p} --single-transaction shop > shop.sql.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"docker-compose.yml의 command: redis-server --requirepass {p} 를 secret 파일로 옮길 것.", [p], "ko"))(f.password()),
    )
    add("netrc",
        lambda: (lambda p: (f"~/.netrc had machine api.github.com login ci-bot password {p}; use a credential helper.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"CI 이미지의 .netrc 에 machine registry.example.com login deploy password {p} 가 남아 있었다.", [p], "ko"))(f.mixed(20)),
    )
    add("connection_string",
        lambda: (lambda p: (f"appsettings.json: Server=tcp:acme.database.windows.net,1433;Initial Catalog=orders;User ID=app;Password={p}; must move to Key Vault.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"application-dev.properties used jdbc:postgresql://db:5432/app?user=app&password={p}&ssl=false.", [p], "en"))(f.password()),
        lambda: (lambda p: (f"spring.datasource.password={p} 가 application-local.properties 에 커밋됨.", [p], "ko"))(f.password()),
    )
    add("keyword_prose_ko",
        lambda: (lambda p: (f"관리자 비번은 {p} 였다. 다음부터는 1Password에서 가져올 것.", [p], "ko"))(f.password()),
        lambda: (lambda p: (f"파트너 샌드박스 API 키는 {p} 이고 운영에서는 쓰면 안 된다.", [p], "ko"))(f.hexs(32)),
        lambda: (lambda p: (f"지갑 개인키 0x{p} 를 테스트 코드에 넣었다가 지웠다.", [p], "ko"))(f.hexs(64)),
        lambda: (lambda p: (f"액세스 키 {p} 는 지난주에 만료됐다.", [p], "ko"))(f.mixed(24)),
        lambda: (lambda p: (f"Redis 암호는 '{p}' 였고 compose 파일에 그대로 있었다.", [p], "ko"))(f.password()),
        lambda: (lambda p: (f"The partner said the API key is {p}; it only works in their sandbox.", [p], "en"))(f.hexs(32)),
    )
    add("aws_cli",
        lambda: (lambda k: (f"The bootstrap script ran aws configure set aws_secret_access_key {k} for the ci profile.", [k], "en"))(f.aws_secret()),
        lambda: (lambda k: (f"부트스트랩 스크립트가 aws configure set aws_secret_access_key {k} 를 실행하고 있었다.", [k], "ko"))(f.aws_secret()),
    )
    service_kv = (
        ("LD_SDK_KEY", lambda: "sd" + "k-" + str(uuid.UUID(int=f.r.getrandbits(128)))),
        ("SUPABASE_SERVICE_ROLE_KEY", lambda: f.mixed(40)),
        ("RECAPTCHA_SECRET_KEY", lambda: "6L" + f.s(B64URL, 38)),
        ("ONESIGNAL_REST_API_KEY", lambda: f.mixed(48)),
        ("MIXPANEL_API_SECRET", lambda: f.hexs(32)),
        ("FIREBASE_SERVER_KEY", lambda: f.s(B64URL, 39)),
        ("LICENSE_KEY", lambda: f.s(UPPER + DIGITS, 5) + "-" + f.s(UPPER + DIGITS, 5) + "-" + f.s(UPPER + DIGITS, 5)),
        ("RUDDERSTACK_WRITE_KEY", lambda: f.mixed(27)),
        ("PAGERDUTY_INTEGRATION_KEY", lambda: f.hexs(32)),
        ("TRELLO_DEV_KEY", lambda: f.hexs(32)),
        ("TWITTER_CONSUMER_KEY", lambda: f.mixed(25)),
        ("HMAC_KEY", lambda: f.s(B64, 43) + "="),
        ("ZOOM_CLIENT_SECRET", lambda: f.mixed(32)),
        ("STREAM_API_SECRET", lambda: f.s(LOWER + DIGITS, 64)),
        ("CLOUDINARY_API_SECRET", lambda: f.s(B64URL, 27)),
        ("SQUARE_ACCESS_TOKEN", lambda: f.mixed(30)),
    )
    add("service_kv",
        *[lambda name=name, make=make, i=i: (lambda k: (
            [f"The deploy notes listed {name}={k} for the worker.",
             f"{name.lower()}: \"{k}\" sat in config/production.yml.",
             f"스테이징 .env 의 {name}={k} 를 시크릿 매니저로 옮겼다."][i % 3], [k], "ko" if i % 3 == 2 else "en"))(make())
          for i, (name, make) in enumerate(service_kv)])
    add("header_kv",
        lambda: (lambda k: (f"The proxy logged X-Figma-Token: {k} with every request.", [k], "en"))(f.s(B64URL, 40)),
        lambda: (lambda k: (f"curl -H 'X-RapidAPI-Key: {k}' was copied into the wiki.", [k], "en"))(f.mixed(50)),
        lambda: (lambda k: (f"Authorization: GenieKey {k} is what the Opsgenie client sends.", [k], "en"))(str(uuid.UUID(int=f.r.getrandbits(128)))),
        lambda: (lambda k: (f"Authorization: DeepL-Auth-Key {k} 헤더가 로그에 남았다.", [k], "ko"))(f.mixed(30)),
        lambda: (lambda k: (f"The SDK sent apikey: {k} to the storage endpoint.", [k], "en"))(f.mixed(36)),
        lambda: (lambda k: (f'"X-Shopify-Access-Token": "{k}" was hardcoded in the sync job.', [k], "en"))(f.mixed(32)),
        lambda: (lambda k: (f"The docker config.json had \"auth\": \"{k}\" for ghcr.io.", [k], "en"))(base64.b64encode(f"ci:{f.password()}".encode()).decode()),
    )
    add("keyword_ko_more",
        lambda: (lambda k: (f"클라이언트 시크릿은 {k} 였고 콘솔에서 재발급했다.", [k], "ko"))(f.mixed(24)),
        lambda: (lambda k: (f"앱 키 {k} 를 모바일 빌드에 넣으면 안 된다.", [k], "ko"))(f.hexs(32)),
        lambda: (lambda k: (f"마스터 키: {k}", [k], "ko"))(f.mixed(32)),
        lambda: (lambda k: (f"DB 비밀 번호는 {k} 로 설정되어 있었다.", [k], "ko"))(f.password()),
        lambda: (lambda k: (f"서비스 키 값은 {k} 이다.", [k], "ko"))(f.mixed(40)),
        lambda: (lambda k: (f"라이선스 키는 {k} 였는데 만료됐다.", [k], "ko"))(f.mixed(20)),
    )
    add("url_special_password",
        lambda: (lambda p: (f"MONGO_URL=mongodb://app:{p}@mongo-0.mongo:27017/app was in the helm values.", [p], "en"))(f.s(ALNUM, 10) + "/" + f.s(ALNUM, 6) + "+=" ),
        lambda: (lambda p: (f"redis://:{p}@redis-master:6379/1 주소에 비밀번호가 그대로 있었다.", [p], "ko"))(f.s(ALNUM, 9) + "/" + f.s(ALNUM, 9)),
        lambda: (lambda p: (f"The SSO redirect logged returnTo=https%3A%2F%2Fsvc%3A{p}%40internal.acme.io%2F.", [p], "en"))(f.mixed(14)),
    )
    further_sentences = (
        ("The bot's config still held {k}; it was rotated after the audit.", "en"),
        ("설정 파일에 {k} 가 그대로 남아 있어서 감사 후 폐기했다.", "ko"),
        ("A teammate pasted {k} into the PR description while debugging.", "en"),
    )
    for kind in f.further():
        add(kind, *[lambda kind=kind, sentence=sentence, lang=lang: (lambda k: (sentence.format(k=k), [k], lang))(f.further()[kind])
                    for sentence, lang in further_sentences])
    return P


# --- negative sentences -----------------------------------------------------------------------

def _negatives(f: Fakes):
    r = f.r
    sha = lambda: f.hexs(40)  # noqa: E731
    short = lambda: f.hexs(7)  # noqa: E731
    uid = lambda: str(uuid.UUID(int=r.getrandbits(128)))  # noqa: E731
    ver = lambda: f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}"  # noqa: E731
    N = {}

    def add(cat, *makers):
        N[cat] = makers

    add("prose",
        lambda: ("The token value comes from the OIDC exchange, never from a file on disk.", "en"),
        lambda: ("redis requirepass is configured through the Helm chart's existingSecret.", "en"),
        lambda: ("The login form's password field must not allow browser autofill.", "en"),
        lambda: ("The secret is 32 random bytes from secrets.token_bytes, base64-encoded.", "en"),
        lambda: ("The password must be rotated every 90 days and never reused.", "en"),
        lambda: ("the token: expires soon, so refresh it before the batch starts.", "en"),
        lambda: ("Access tokens expire after an hour; the refresh token lasts thirty days.", "en"),
        lambda: ("Ask the user where the API key is stored before touching the deploy config.", "en"),
        lambda: ("The secret: never log request headers in the payment service.", "en"),
        lambda: ("password: required, at least 12 characters, checked by zxcvbn.", "en"),
        lambda: ("If the token is missing, the client falls back to anonymous mode.", "en"),
        lambda: ("Bearer authentication is required for every endpoint except /health.", "en"),
        lambda: ("The token bucket refills at 10 requests per second.", "en"),
        lambda: ("Secrets go in the vault; the password manager is only for humans.", "en"),
        lambda: ("api key: rotate quarterly and store in Secret Manager.", "en"),
        lambda: ("The session token is set as an HttpOnly cookie, never in localStorage.", "en"),
        lambda: ("max_tokens: 4096 is too high for the summariser; use 1024.", "en"),
        lambda: ("Use --password-stdin with docker login instead of passing the password on the command line.", "en"),
        lambda: ("The secret key rotation job runs on the first Monday of each month.", "en"),
        lambda: ("When the password is wrong the API returns 401, not 403.", "en"),
        lambda: ("CSRF token: generated per session and checked on every POST.", "en"),
        lambda: ("tokenizer: the model uses tiktoken cl100k_base, so count tokens before sending.", "en"),
    )
    add("prose_ko",
        lambda: ("API 키는 Secrets Manager에 두고 코드에는 이름만 적는다.", "ko"),
        lambda: ("개인 키 파일은 ~/.ssh 아래에만 두고 권한은 600으로 한다.", "ko"),
        lambda: ("비번 정책은 12자 이상, 유출 목록 대조다.", "ko"),
        lambda: ("토큰 값은 로그에 남기지 않고 마지막 네 글자만 보여준다.", "ko"),
        lambda: ("토큰이 3f9a2c1 커밋 이후로 쿠키에 저장된다.", "ko"),
        lambda: ("액세스 키 로테이션은 90일마다 자동으로 한다.", "ko"),
        lambda: ("비밀번호는 반드시 주기적으로 변경해야 한다.", "ko"),
        lambda: ("토큰이 만료되면 리프레시 토큰으로 재발급받을 것.", "ko"),
        lambda: ("API 키를 .env 파일에 넣지 말 것. 토큰: 만료되면 재발급.", "ko"),
        lambda: ("비밀번호: 12자 이상, 특수문자 포함이 정책이다.", "ko"),
        lambda: ("시크릿은 Vault에 두고, 애플리케이션은 시작할 때 읽는다.", "ko"),
        lambda: ("인증 토큰은 HttpOnly 쿠키로만 전달한다.", "ko"),
        lambda: ("배포 전에 사용자에게 어떤 자격 증명을 쓸지 물어볼 것.", "ko"),
        lambda: ("토큰 갱신 로직은 auth/refresh.py에 있다.", "ko"),
        lambda: ("패스워드 재설정 메일이 스팸함으로 가는 문제가 있었다.", "ko"),
        lambda: ("액세스 토큰 유효기간은 1시간, 리프레시 토큰은 30일이다.", "ko"),
    )
    add("git",
        lambda: (f"The regression came in with commit {sha()}; revert it before the release.", "en"),
        lambda: (f"git bisect pointed at {short()}, the refactor of the token cache.", "en"),
        lambda: (f"Merge {sha()} into main after the secrets rotation PR lands.", "en"),
        lambda: (f"커밋 {sha()} 에서 비밀번호 검증 로직이 바뀌었다.", "ko"),
        lambda: (f"git cherry-pick {short()} {short()} fixed the auth header bug.", "en"),
    )
    add("uuid",
        lambda: (f"The failing request id was {uid()}; search the logs for it.", "en"),
        lambda: (f"tenant_id {uid()} has the broken SSO config.", "en"),
        lambda: (f"요청 ID {uid()} 로 로그를 찾으면 토큰 만료 에러가 보인다.", "ko"),
        lambda: (f"The token's jti claim is a UUID like {uid()}, not a secret by itself.", "en"),
    )
    add("digest",
        lambda: (f"Pin the image by digest: python@sha256:{f.hexs(64)}", "en"),
        lambda: (f'package-lock.json has "integrity": "sha512-{base64.b64encode(hashlib.sha512(f.hexs(8).encode()).digest()).decode()}" for jsonwebtoken.', "en"),
        lambda: (f"The checksum of the release tarball is {f.hexs(64)} (sha256).", "en"),
        lambda: (f"pip hash: --hash=sha256:{f.hexs(64)} 를 requirements에 추가.", "ko"),
        lambda: (f"yarn.lock integrity sha1-{base64.b64encode(hashlib.sha1(f.hexs(8).encode()).digest()).decode()} mismatch after the registry change.", "en"),
        lambda: (f"The ETag was \"{f.hexs(32)}\" so the CDN served a stale bundle.", "en"),
    )
    add("version",
        lambda: (f"Upgrade fastmcp to {ver()} and filelock to >= {ver()}; python 3.12.{r.randint(0, 9)} is required.", "en"),
        lambda: (f"node v{ver()} broke the token refresh in jsonwebtoken {ver()}.", "en"),
        lambda: (f"버전 {ver()}-rc.{r.randint(1, 5)} 에서 비밀번호 해시가 bcrypt로 바뀌었다.", "ko"),
        lambda: (f"Docker image acme/api:{ver()}-alpine has the fix.", "en"),
    )
    add("path",
        lambda: ("토큰 캐시는 ~/.cache/acme/token.json 에 있고, 지우면 다시 로그인한다.", "ko"),
        lambda: ("비밀번호 검증은 src/auth/password_policy.py 의 validate() 에서 한다.", "ko"),
        lambda: ("Credentials live in ~/.aws/credentials and ~/.config/gcloud/application_default_credentials.json.", "en"),
        lambda: ("See src/auth/password_reset.py:42 and tests/test_token_refresh.py.", "en"),
        lambda: ("C:\\Users\\dev\\AppData\\Roaming\\npm\\.npmrc holds the registry token on Windows.", "en"),
        lambda: ("The SSH key is at ~/.ssh/id_ed25519; never copy it into the repo.", "en"),
        lambda: ("secrets/production.enc.yaml is encrypted with sops; decrypt with the KMS key.", "en"),
        lambda: ("설정 파일은 config/secrets.example.yaml 을 복사해서 만든다.", "ko"),
    )
    add("url",
        lambda: ("토큰 발급 엔드포인트는 https://auth.example.com/oauth2/token 이다.", "ko"),
        lambda: ("스테이징 DB 주소는 postgres://db.staging.internal:5432/orders 이고 비밀번호는 Vault에 있다.", "ko"),
        lambda: ("Docs: https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/managing-your-personal-access-tokens", "en"),
        lambda: ("The API base URL is https://api.example.com:8443/v2/ and the health check is /healthz.", "en"),
        lambda: ("Clone with git@github.com:acme/infra.git or ssh://git@github.com:22/acme/infra.git.", "en"),
        lambda: ("postgres://localhost:5432/app_test is the test database; no password locally.", "en"),
        lambda: ("redis://cache:6379/0 is shared by the worker and the web process.", "en"),
        lambda: ("https://github.com/acme/api/blob/main/core/token_store.py#L10-L40 explains the cache.", "en"),
        lambda: ("OAuth redirect: https://app.example.com/oauth/callback?state=xyz&code=returned-by-provider", "en"),
        lambda: ("mongodb+srv://cluster0.ab12c.mongodb.net/?retryWrites=true 는 Atlas 기본 URL이다.", "ko"),
    )
    add("env_name",
        lambda: ("로컬에서는 DATABASE_PASSWORD 와 JWT_SECRET 을 .env.local 에 설정한다.", "ko"),
        lambda: ("Set OPENAI_API_KEY in .env, never in code.", "en"),
        lambda: ("export GITHUB_TOKEN before running gh release create.", "en"),
        lambda: ("The app reads DATABASE_URL, REDIS_PASSWORD and STRIPE_SECRET_KEY from the environment.", "en"),
        lambda: ("AWS_SECRET_ACCESS_KEY 와 AWS_ACCESS_KEY_ID 는 OIDC로 대체할 것.", "ko"),
        lambda: ("Check that SLACK_BOT_TOKEN is defined in the CI secrets, not in the workflow file.", "en"),
        lambda: ("HF_TOKEN 환경변수가 없으면 gated 모델 다운로드가 실패한다.", "ko"),
    )
    add("placeholder",
        lambda: ("예시 설정의 api_key: <YOUR_API_KEY> 부분은 각자 채운다.", "ko"),
        lambda: ("docker-compose 에서는 POSTGRES_PASSWORD=${POSTGRES_PASSWORD} 로 호스트 값을 넘긴다.", "ko"),
        lambda: ("Use api_key = <YOUR_API_KEY> in the example config.", "en"),
        lambda: ("API_KEY=${API_KEY} in docker-compose.yml passes it through from the host.", "en"),
        lambda: ("The docs show sk-... as the key format; never paste the real one.", "en"),
        lambda: ("password: ${DB_PASSWORD} is resolved by the config loader.", "en"),
        lambda: ('"password": "<password>" in the template must be filled by the operator.', "en"),
        lambda: ("token=$GITHUB_TOKEN is expanded by the shell, so quote it.", "en"),
        lambda: ("Example: Authorization: Bearer <token>", "en"),
        lambda: ("password={{ vault_db_password }} comes from Ansible Vault.", "en"),
        lambda: ("postgres://user:<password>@localhost:5432/db is the template in .env.example.", "en"),
        lambda: ("예시 설정: SECRET_KEY=changeme 는 로컬 전용.", "ko"),
        lambda: ("Replace ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx with your token.", "en"),
        lambda: ("password = os.environ['DB_PASSWORD'] is the pattern to follow.", "en"),
        lambda: ("api_key=process.env.API_KEY in the Next.js route handler.", "en"),
        lambda: ("token: null means the client is anonymous.", "en"),
        lambda: ("예: 비밀번호=******** 처럼 마스킹해서 기록할 것.", "ko"),
    )
    add("placeholder_more",
        lambda: ("SECRET_KEY=your-secret-key-here is what the template says.", "en"),
        lambda: ("api_key: REPLACE_WITH_YOUR_KEY", "en"),
        lambda: ("DB_PASSWORD=change_me in .env.example.", "en"),
        lambda: ("token = \"dummy-token\" in the unit test fixture.", "en"),
        lambda: ("password: test", "en"),
        lambda: ("AWS_ACCESS_KEY_ID=" + "AKIA" + "XXXXXXXXXXXXXXXX" + " in the docs.", "en"),
        lambda: ("SENDGRID_API_KEY=" + "SG" + ".xxxx.yyyy is the documented shape.", "en"),
        lambda: ("SLACK_BOT_TOKEN=" + "xo" + "xb-your-bot-token", "en"),
        lambda: ("client_secret: <client-secret>", "en"),
        lambda: ("\"password\": \"<PASSWORD>\" in the request example.", "en"),
        lambda: ("Authorization: Bearer YOUR_ACCESS_TOKEN", "en"),
        lambda: ("X-API-Key: <api-key>", "en"),
        lambda: ("OPENAI_API_KEY=sk-xxxxxxxx", "en"),
        lambda: ("password=placeholder-password", "en"),
        lambda: ("secret: \"fake-secret-for-tests\"", "en"),
        lambda: ("비밀번호: <비밀번호>", "ko"),
        lambda: ("API_KEY=여기에_키_입력 처럼 적어 둔다.", "ko"),
        lambda: ("토큰=your-token 부분을 각자 바꿀 것.", "ko"),
        lambda: ("ADMIN_PASSWORD=admin is only the seed for the local container.", "en"),
        lambda: ("JWT_SECRET=secret in docker-compose.dev.yml.", "en"),
    )
    add("template_url",
        lambda: ("postgres://user:password@localhost:5432/dev is the default in .env.example.", "en"),
        lambda: ("mysql://root:root@127.0.0.1:3306/app 로 로컬 DB에 붙는다.", "ko"),
        lambda: ("https://user:pass@example.com is the format the proxy expects.", "en"),
        lambda: ("amqp://guest:guest@localhost:5672// is RabbitMQ's default login.", "en"),
        lambda: ("redis://default:password@localhost:6379 in the README.", "en"),
        lambda: ("postgresql://postgres:postgres@db:5432/postgres in docker-compose.", "en"),
        lambda: ("mongodb://user:secret@mongo.example.org:27017/db in the tutorial.", "en"),
        lambda: ("https://api.acme.io:8443/v1/users/@me returns the current user.", "en"),
        lambda: ("DATABASE_URL=postgres://<user>:<pass>@<host>/<db>", "en"),
        lambda: ("git clone https://oauth2:${CI_JOB_TOKEN}@gitlab.com/acme/app.git", "en"),
    )
    add("kv_ids",
        lambda: (f"SENTRY_RELEASE={f.hexs(40)} is set by the build.", "en"),
        lambda: (f"IDEMPOTENCY_KEY={uid()} prevents double charges.", "en"),
        lambda: (f"client_key: /etc/ssl/private/client.key and client_cert: /etc/ssl/certs/client.pem", "en"),
        lambda: (f"ssh_private_key: ~/.ssh/deploy_ed25519", "en"),
        lambda: (f"S3_OBJECT_KEY=uploads/2026/02/{f.hexs(8)}.png", "en"),
        lambda: (f"deploy_key: ./keys/deploy.pem 를 CI 에서 읽는다.", "ko"),
        lambda: (f"Authorization: required for every route except /healthz", "en"),
        lambda: (f"The license key check returned {r.randint(200, 499)} for build {r.randint(1000, 9999)}.", "en"),
        lambda: (f"라이선스 키는 매년 갱신한다.", "ko"),
        lambda: (f"클라이언트 시크릿은 콘솔에서만 확인할 수 있다.", "ko"),
        lambda: (f"앱 키는 카카오 개발자 콘솔의 앱 설정에 있다.", "ko"),
    )
    add("doc_example",
        lambda: ("The AWS docs use " + "AKIA" + "IOSFODNN7" + "EXAMPLE as the sample access key id.", "en"),
        lambda: ("Sample secret from the AWS docs: wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY.", "en"),
        lambda: ("AWS 문서의 예시 키 " + "AKIA" + "IOSFODNN7" + "EXAMPLE 를 테스트 픽스처에 썼다.", "ko"),
    )
    add("code",
        lambda: ("테스트에서는 password = getpass.getpass() 대신 monkeypatch 로 값을 넣는다.", "ko"),
        lambda: ("redis-cli -h cache -p 6379 info memory shows the eviction policy.", "en"),
        lambda: ("mysql -u app -p orders prompts for the password interactively, which CI cannot answer.", "en"),
        lambda: ("sshpass is banned in CI scripts; use ssh-agent forwarding instead.", "en"),
        lambda: ("redis-cli -a \"$REDIS_PASSWORD\" ping is how the health check reads the password.", "en"),
        lambda: ("def login(user: str, password: str) -> Token: should raise on an empty password.", "en"),
        lambda: ("password = getpass.getpass() prompts without echo.", "en"),
        lambda: ("token = request.headers.get('Authorization') returns None when the header is missing.", "en"),
        lambda: ("if token == expected: compare with hmac.compare_digest instead.", "en"),
        lambda: ("api_key: Optional[str] = None must be validated at startup.", "en"),
        lambda: ("self.secret = settings.SECRET_KEY is read once at import.", "en"),
        lambda: ("const token = await getToken({ req }) in the middleware.", "en"),
        lambda: ("password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())", "en"),
        lambda: ("코드에서 token = load_token(path) 로 읽고 있다.", "ko"),
        lambda: ("access_token: str and refresh_token: str are the response fields.", "en"),
    )
    add("ids",
        lambda: (f"The Stripe customer is cus_{f.mixed(14)} and the price is price_{f.mixed(24)}.", "en"),
        lambda: (f"Slack channel C{f.s(UPPER + DIGITS, 10)} gets the alerts; user U{f.s(UPPER + DIGITS, 10)} owns it.", "en"),
        lambda: (f"The Stripe publishable key pk_test_... is safe in the frontend; the account is acct_{f.mixed(16)}.", "en"),
        lambda: (f"EC2 instance i-{f.hexs(17)} in subnet subnet-{f.hexs(17)} lost its IAM role.", "en"),
        lambda: (f"GCP project acme-prod-{r.randint(100000, 999999)}, service account ci@acme-prod.iam.gserviceaccount.com.", "en"),
        lambda: (f"The AWS role is arn:aws:iam::{f.s(DIGITS, 12)}:role/deploy-ci; the account id is not a secret.", "en"),
        lambda: (f"Sentry issue {f.hexs(32)} groups the token refresh errors.", "en"),
        lambda: (f"Trace id {f.hexs(32)} span {f.hexs(16)} shows the slow password hash.", "en"),
        lambda: (f"Discord channel id {f.s(DIGITS, 18)} is where the bot posts.", "en"),
        lambda: (f"PR #{r.randint(100, 9999)} and issue #{r.randint(100, 9999)} track the token leak cleanup.", "en"),
        lambda: (f"키 ID kid={f.hexs(16)} 로 JWKS에서 공개키를 찾는다.", "ko"),
    )
    add("numbers",
        lambda: (f"Timeouts: connect 5s, read {r.randint(10, 60)}s; retries {r.randint(2, 5)}; the token TTL is {r.randint(5, 60)} minutes.", "en"),
        lambda: (f"Port {r.randint(1024, 65535)} was taken, so the dev server moved to 5173.", "en"),
        lambda: (f"The p99 latency of the password hash is {r.randint(80, 400)} ms with cost factor 12.", "en"),
        lambda: (f"토큰 만료 시간은 {r.randint(5, 60)}분, 재시도는 {r.randint(2, 5)}회.", "ko"),
    )
    add("public_material",
        lambda: ("-----BEGIN PUBLIC KEY-----\n" + f.pem_body(3) + "\n-----END PUBLIC KEY----- is the JWKS verification key.", "en"),
        lambda: ("The CA bundle starts with -----BEGIN CERTIFICATE----- and is safe to commit.", "en"),
        lambda: (f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{f.s(B64, 43)} deploy@ci is the public deploy key.", "en"),
        lambda: ("공개키(-----BEGIN PUBLIC KEY-----)는 저장소에 둬도 된다.", "ko"),
    )
    add("base64_data",
        lambda: (f"The fixture image is data:image/png;base64,{f.s(B64, 60)}== and renders a 1x1 pixel.", "en"),
        lambda: (f"테스트 픽스처 이미지 data:image/png;base64,{f.s(B64, 60)}== 는 1x1 픽셀이다.", "ko"),
        lambda: (f"The kubeconfig certificate-authority-data is public; cluster name gke_acme_{r.choice(['asia', 'us'])}-east1_prod.", "en"),
    )
    add("lessons",
        lambda: ("Before changing the auth flow, ask whether the mobile app still sends the legacy token header.", "en"),
        lambda: ("The user wanted passwords hashed with argon2id, not bcrypt; the instructions did not say so.", "en"),
        lambda: ("Rotating the signing secret invalidates every session, so schedule it outside business hours.", "en"),
        lambda: ("Never print the API key in error messages; print its last four characters at most.", "en"),
        lambda: ("The secret scanner in CI blocks pushes that contain private keys; do not disable it.", "en"),
        lambda: ("Token refresh failed because the clock on the runner was off by five minutes.", "en"),
        lambda: ("Password reset links must expire after 15 minutes and be single-use.", "en"),
        lambda: ("The webhook secret is verified with an HMAC over the raw body, not the parsed JSON.", "en"),
        lambda: ("Store only the hash of each API token; show the token once at creation.", "en"),
        lambda: ("Service accounts should use workload identity instead of downloaded key files.", "en"),
        lambda: ("The OAuth client secret belongs to the backend; the SPA uses PKCE without a secret.", "en"),
        lambda: ("Ask which environment (staging or production) the credentials are for before running migrations.", "en"),
        lambda: ("The password field must not be autocompleted on the admin login page.", "en"),
        lambda: ("Bearer tokens in query strings end up in proxy logs; send them in the header.", "en"),
        lambda: ("Secret values in GitHub Actions are masked in logs, but not when they are base64-encoded first.", "en"),
        lambda: ("Private keys must never be committed; the deploy key lives in the CI secret store.", "en"),
        lambda: ("The JWT audience claim must match the API identifier, otherwise validation fails with 401.", "en"),
        lambda: ("The tokens: field in the usage report counts prompt and completion tokens separately.", "en"),
        lambda: ("auth: handled by the gateway, so the service itself trusts the X-User-Id header.", "en"),
        lambda: ("password policy: minimum length 12, no composition rules, check against breached lists.", "en"),
        lambda: ("secret rotation: the Lambda rotator updates RDS and Secrets Manager together.", "en"),
        lambda: ("token: see the refresh section of docs/auth.md for the full lifecycle.", "en"),
        lambda: ("인증 실패 시 토큰을 재발급하기 전에 시계 동기화를 먼저 확인할 것.", "ko"),
        lambda: ("사용자는 비밀번호 해시에 argon2id를 원했는데 지시에 없었다.", "ko"),
        lambda: ("서명 시크릿을 바꾸면 모든 세션이 무효화되므로 업무 시간 외에 할 것.", "ko"),
        lambda: ("에러 메시지에 API 키를 출력하지 말 것. 필요하면 마지막 네 글자만.", "ko"),
        lambda: ("웹훅 시크릿 검증은 파싱된 JSON이 아니라 원본 바디의 HMAC으로 한다.", "ko"),
        lambda: ("토큰은 해시만 저장하고, 생성 시 한 번만 보여준다.", "ko"),
        lambda: ("개인 키는 절대 커밋하지 않는다. 배포 키는 CI 시크릿에 있다.", "ko"),
        lambda: ("마이그레이션 전에 어느 환경의 자격 증명인지 물어볼 것.", "ko"),
        lambda: ("JWT의 aud 클레임이 API 식별자와 다르면 401이 난다.", "ko"),
        lambda: ("비밀번호 정책: 최소 12자, 유출 목록 대조.", "ko"),
        lambda: ("토큰: 쿼리스트링으로 보내면 프록시 로그에 남는다.", "ko"),
        lambda: ("시크릿 로테이션은 Secrets Manager와 RDS를 함께 갱신한다.", "ko"),
        lambda: ("OAuth 클라이언트 시크릿은 백엔드에만 둔다. SPA는 PKCE를 쓴다.", "ko"),
        lambda: ("서비스 계정 키 파일 대신 워크로드 아이덴티티를 쓸 것.", "ko"),
    )
    add("mixed_tech",
        lambda: (f"Build {r.randint(1000, 9999)} failed at step 'test' after {r.randint(2, 59)}m; commit {short()} touched token_refresh.py.", "en"),
        lambda: (f"The migration 20{r.randint(20, 26)}_{r.randint(10, 12)}_{r.randint(10, 28)}_{r.randint(100000, 999999)}_add_password_reset_tokens.py must run first.", "en"),
        lambda: (f"Run pytest tests/test_auth.py::test_token_expiry -k refresh -x; it took {r.randint(2, 40)}.{r.randint(0, 9)}s.", "en"),
        lambda: (f"The cache key is user:{r.randint(1, 99999)}:session and the TTL is {r.randint(60, 3600)} seconds.", "en"),
        lambda: (f"Request {uid()} failed with 401 at {r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)} UTC; the token had expired.", "en"),
        lambda: (f"Lockfile drift: jsonwebtoken {ver()} vs {ver()}; commit {sha()} fixed it.", "en"),
        lambda: (f"빌드 {r.randint(1000, 9999)} 이 토큰 갱신 테스트에서 {r.randint(2, 59)}분 만에 실패, 커밋 {short()}.", "ko"),
        lambda: (f"이미지 acme/auth:{ver()} 의 digest는 sha256:{f.hexs(64)} 이다.", "ko"),
    )
    return N


# --- hostile inputs ------------------------------------------------------------------------------
# Texts of the maximum field size (1,024 UTF-8 bytes) built to make a regular expression backtrack:
# a rule's prefix repeated without the rest, unclosed quotes, long runs of one character class.

FIELD_BYTES = 1024


def _fill(unit: str, prefix: str = "") -> str:
    """prefix + unit repeated, cut at a character boundary to exactly FIELD_BYTES bytes or less."""
    text = prefix + unit * (FIELD_BYTES // max(1, len(unit.encode())) + 1)
    while len(text.encode()) > FIELD_BYTES:
        text = text[:-1]
    return text


def hostile() -> dict[str, str]:
    """Name -> a 1 KiB input built to make the redaction rules backtrack."""
    glued = ("AI" + "za" + "Sy" + "A1b2" * 8 + "C") + ("AK" + "IA" + "Q7RT2WXZ4N6P8L3M")
    return {
        "a*": _fill("a"),
        "underscores": _fill("_"),
        "hex": _fill("0123456789abcdef"),
        "base64": _fill("A1b2+/"),
        "hangul": _fill("토큰"),
        "password=": _fill("password="),
        "token: ": _fill("token: "),
        "token: expires ": _fill("token: expires "),
        "yaml lines": _fill("  password: a\n"),
        "password is ": _fill("password is "),
        "password is '": _fill("password is '"),
        "unclosed quote": _fill("a", 'password="'),
        "비밀번호는 ": _fill("비밀번호는 "),
        "API 키 값: ": _fill("API 키 값: "),
        "jwt dots": _fill("a.", "eyJ"),
        "jwt segments": _fill("eyJaaaaa."),
        "pem without end": _fill("A", "-----BEGIN PRIVATE KEY-----"),
        "pem false ends": _fill("-----END ", "-----BEGIN PRIVATE KEY-----"),
        "url colons": _fill("a:", "a://a:"),
        "url ats": _fill("@", "s://u:"),
        "url hashes": _fill("#", "a://u:"),
        "schemes": _fill("a://"),
        "url slashes": _fill("/+=", "a://u:"),
        "url ats and hosts": _fill("@a", "a://u:"),
        "url users": _fill("a://u:x@"),
        "encoded url": _fill("%2F", "a%3A%2F%2Fu%3A"),
        "encoded schemes": _fill("a%3A%2F%2Fu%3A"),
        "capital As": _fill("A"),
        "hex -us": _fill("0123456789abcdef" * 2 + "-u"),
        "pat prefixes": _fill("pat"),
        "sk-or-v1-": _fill("sk-or-v1-"),
        "1//0": _fill("1//0"),
        "AZDO runs": _fill("a" * 70 + "AZD"),
        "authorization words": _fill("authorization: x "),
        "placeholder words": _fill("your-", "password="),
        "key=": _fill("key="),
        "앱 키 ": _fill("앱 키 "),
        "x-a-key: ": _fill("x-a-b-key: "),
        "percent signs": _fill("%25", "a%3A%2F%2Fu%3A"),
        "sk-": _fill("sk-"),
        "bearer": _fill("a", "Bearer "),
        "authorization headers": _fill("authorization: bearer "),
        "flags": _fill("--a-"),
        "--password ": _fill("--password "),
        "curl -u": _fill("-u a:"),
        "mysql -u": _fill(" -u", "mysql"),
        "redis-cli": _fill("redis-cli x "),
        "netrc": _fill("machine a login b "),
        "aws secret": _fill("aws_secret="),
        "aws secret spaces": _fill(" ", "aws_secret_access_key"),
        "sig=": _fill("%2B", "sig="),
        "AccountKey=": _fill("AccountKey="),
        "discord dots": _fill("M" + "a" * 24 + "."),
        "telegram digits": _fill("1234567:A"),
        "azure ad": _fill("abc1Q~"),
        "fcm": _fill("AAAAaaaaaaa:APA91b"),
        "xml": _fill("a", "<password>"),
        "glued keys": _fill(glued),
        # the slowest units a random search over rule fragments found
        "search 1": _fill("AccountKey=AKIA\t://"),
        "search 2": _fill("비밀번호\t://-p-AAAA"),
        "search 3": _fill("-p` .\nmysql "),
        "search 4": _fill(":토큰="),
        # the forms of the external corpus's rules (bench/secrets_external.py)
        "reversed comparisons": _fill('"abcdefgh1" == '),
        "name: lines": _fill("- name: A_KEY\n  "),
        "xml key tags": _fill("<A_KEY>\n\t"),
        "set -x": _fill("set -x A_KEY "),
        "ENV": _fill("ENV A_TOKEN "),
        "token for a b c": _fill("token for a b c "),
        "key for a b c is": _fill("key for a b c is "),
        "NAME to": _fill("API_TOKEN to "),
        "table cells": _fill("| API_TOKEN | "),
        "gh secret set": _fill("gh secret set X -a b "),
        "calls": _fill('("api_token", '),
        "escaped json": _fill('api_key\\": \\"'),
        "yaml blocks": _fill("token: |\n  "),
        "KEY 에": _fill("A_KEY 에 "),
        "random key values": _fill("a_key=" + "ab12" * 4 + " "),
        "brackets before into": _fill("(", "") [:1017] + " into ",
        "words before to": _fill("(a")[:1016] + " to a",
        "url token users": _fill("a://" + "a" * 19),
        "pgpass fields": _fill("a:11:"),
        "oracle logins": _fill("sqlplus a/"),
        "labelled tokens": _fill("token (a) "),
        "key word suffixes": _fill("password_a_b_"),
        "suffixes and separators": _fill("token_aaaaaaaaaaaa-a: "),
    }


def corpus(seed: int = SEED, per_kind: int = 7, per_negative_category: int = 40) -> list[Example]:
    """The labelled corpus: every positive kind `per_kind` times, every negative category
    `per_negative_category` times (or once per sentence if it has more), cycling through each
    kind's sentences with fresh fakes."""
    rng = random.Random(seed)
    f = Fakes(rng)
    out: list[Example] = []
    seen: set[str] = set()
    for kind, makers in _positives(f).items():
        for i in range(max(per_kind, len(makers))):
            text, secrets, lang = makers[i % len(makers)]()
            assert all(s in text for s in secrets), (kind, text)
            out.append(Example(text, kind, tuple(secrets), lang))
    for cat, makers in _negatives(f).items():
        for i in range(max(per_negative_category, len(makers))):
            text, lang = makers[i % len(makers)]()
            if text not in seen:  # a fixed sentence counts once
                seen.add(text)
                out.append(Example(text, "neg:" + cat, (), lang))
    return out


if __name__ == "__main__":
    examples = corpus()
    pos = [e for e in examples if e.positive]
    neg = [e for e in examples if not e.positive]
    print(f"{len(pos)} positives in {len({e.kind for e in pos})} kinds, {len(neg)} negatives; "
          f"Korean: {sum(e.lang == 'ko' for e in examples)}")
