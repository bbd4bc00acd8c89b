"""A redaction corpus of the ways people write a credential down, beside bench/secrets_external.py.

secrets_external.py asks whether the rules know the formats other scanners know; this file asks
whether they know the forms: the same 92 kinds of value (its generators), written as people write
them in notes, commit messages, log lines that echo the environment, curl/httpie/wget commands,
docker-compose, Kubernetes, Terraform, Helm and Ansible files, .npmrc/.pypirc/.netrc/
.git-credentials/pip.conf lines, connection strings of many databases, JSON/TOML/INI/properties/
env files, code in ten languages, Markdown tables and lists, and Korean sentences with their
particles (은/는/이/가/을/를/로/으로) and mixed Korean-English: values before and after their names,
quoted and bare, with trailing punctuation, in parentheses, after a colon in prose. Every sentence
is our own; every value is drawn fresh from a seeded generator.

Two parts with their own seeds and their own templates (even entries dev, odd entries held-out):

    forms("dev")       the part the rules may be tuned on
    forms("heldout")   never tuned on: run to report a figure; its misses are not printed

Negatives, at least as many as positives, in the same forms: placeholders (<YOUR_KEY>, xxx,
****, changeme), hashes, UUIDs, commit SHAs, versions, base64 of ordinary text, identifiers, file
paths, URLs without passwords.

    python bench/secrets_forms.py      # counts per part
"""

from __future__ import annotations

import base64
import hashlib
import random

try:
    from secrets_corpus import ALNUM, DIGITS, HEX, LOWER, Example
    from secrets_external import _F, _kinds
except ImportError:  # imported as bench.secrets_forms (the tests)
    from bench.secrets_corpus import ALNUM, DIGITS, HEX, LOWER, Example
    from bench.secrets_external import _F, _kinds

SEEDS = {"dev": 7321, "heldout": 55012}

# {k} snake key, {K} UPPER_SNAKE key, {c} camelCase key, {v} value, {s} service, {S} Service,
# {w} a prose word for the secret. (template, lang)
_FORMS = [
    # chat-style notes
    ("fyi the {s} {w} is {v} - dont paste it anywhere pls", "en"),
    ("heads up: {s} {w} -> {v} (expires friday)", "en"),
    ("ok so I used {v} as the {s} {w} and it worked", "en"),
    ("new {s} {w}? here: {v}", "en"),
    ("@ops can you rotate {v}? it's the {s} {w} from staging", "en"),
    ("pinging re {s}: {w}={v}, still valid?", "en"),
    # commit-message style
    ("fix(ci): stop leaking {K}={v} in job output", "en"),
    ("chore: remove hardcoded {s} {w} ({v}) from tests", "en"),
    ("Revert \"add {k}\"\n\nThis reverts the commit that set {k} to {v}.", "en"),
    ("feat: read {K} from env instead of \"{v}\"", "en"),
    # log lines / stack traces echoing env vars
    ("2024-03-02T10:11:12Z INFO  worker: env {K}={v} loaded", "en"),
    ("DEBUG config resolved: {{'{k}': '{v}', 'debug': True}}", "en"),
    ("Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n    client = Client({k}='{v}')\nValueError: bad region", "en"),
    ("[warn] using {K}=\"{v}\" from environment", "en"),
    ("environ({{'HOME': '/root', '{K}': '{v}', 'LANG': 'C.UTF-8'}})", "en"),
    ("time=\"2024-01-01\" level=error msg=\"auth failed\" {k}={v}", "en"),
    # curl / httpie / wget
    ("curl -s https://api.{s}.internal/v2/items -H \"X-API-Key: {v}\"", "en"),
    ("curl -X POST https://api.{s}.internal/v1/send -d {k}={v}", "en"),
    ("http GET api.{s}.internal/me Authorization:\"Bearer {v}\"", "en"),
    ("wget --header=\"Authorization: Token {v}\" https://api.{s}.internal/export.csv", "en"),
    ("curl 'https://api.{s}.internal/v1/data?{k}={v}&limit=10'", "en"),
    ("wget -q \"https://api.{s}.internal/feed?token={v}\"", "en"),
    # docker-compose / k8s / terraform / helm / ansible
    ("services:\n  api:\n    environment:\n      - {K}={v}", "en"),
    ("services:\n  api:\n    environment:\n      {K}: {v}", "en"),
    ("apiVersion: v1\nkind: Secret\nstringData:\n  {k}: {v}", "en"),
    ("env:\n  - name: {K}\n    value: {v}", "en"),
    ("resource \"{s}_integration\" \"main\" {{\n  {k} = \"{v}\"\n}}", "en"),
    ("variable \"{k}\" {{\n  default = \"{v}\"\n}}", "en"),
    ("helm upgrade api ./chart --set {s}.{c}={v}", "en"),
    ("helm install api ./chart --set-string secrets.{k}=\"{v}\"", "en"),
    ("- name: configure {s}\n  vars:\n    {k}: \"{v}\"", "en"),
    ("ansible-playbook site.yml -e {k}={v}", "en"),
    # package manager / credential files
    ("//npm.{s}.internal/:_authToken={v}", "en"),
    ("[server-login]\nusername = __token__\npassword = {v}", "en"),
    ("machine api.{s}.internal login deploy password {v}", "en"),
    ("https://deploy:{v}@git.{s}.internal", "en"),
    ("[global]\nindex-url = https://ci:{v}@pypi.{s}.internal/simple", "en"),
    ("echo \"//registry.{s}.internal/:_authToken={v}\" >> ~/.npmrc", "en"),
    # connection strings
    ("postgresql://app:{v}@db.{s}.internal:5432/main?sslmode=require", "en"),
    ("Server=db.{s}.internal;Database=app;User Id=sa;Password={v};", "en"),
    ("mysql://root:{v}@10.0.3.7:3306/shop", "en"),
    ("Data Source=db.{s}.internal;Initial Catalog=app;User ID=app;Pwd={v}", "en"),
    ("mongodb+srv://svc:{v}@cluster0.{s}.mongodb.net/app?retryWrites=true", "en"),
    ("redis://:{v}@cache.{s}.internal:6379/0", "en"),
    ("amqp://worker:{v}@mq.{s}.internal:5672/vhost", "en"),
    ("jdbc:sqlserver://db.{s}.internal:1433;databaseName=app;user=app;password={v}", "en"),
    ("DSN=\"host=db.{s}.internal user=app password={v} dbname=app\"", "en"),
    ("clickhouse://default:{v}@ch.{s}.internal:9000/logs", "en"),
    # JSON / TOML / INI / properties / env
    ("{{\n  \"{s}\": {{\n    \"{c}\": \"{v}\"\n  }}\n}}", "en"),
    ("[{s}]\n{k} = \"{v}\"", "en"),
    ("[{s}]\n{k}={v}\nregion=eu", "en"),
    ("{s}.{c}={v}", "en"),
    ("{s}.api.{k} = {v}", "en"),
    ("# .env.production\n{K}={v}\nLOG_LEVEL=info", "en"),
    ("{K}='{v}'", "en"),
    ("\"{k}\":\"{v}\"", "en"),
    # code
    ("client = {S}Client(api_key=\"{v}\")", "en"),
    ("os.environ.setdefault(\"{K}\", \"{v}\")", "en"),
    ("const {c} = '{v}';", "en"),
    ("process.env.{K} = \"{v}\";", "en"),
    ("{c} := os.Getenv(\"{K}\") // was \"{v}\"", "en"),
    ("cfg := Config{{{S}Key: \"{v}\"}}", "en"),
    ("private static final String {K} = \"{v}\";", "en"),
    ("var {c} = Environment.GetEnvironmentVariable(\"{K}\") ?? \"{v}\";", "en"),
    ("config.{k} = ENV.fetch(\"{K}\", \"{v}\")", "en"),
    ("$client = new {S}Client(['{c}' => '{v}']);", "en"),
    ("let {k} = \"{v}\";", "en"),
    ("const {K}: &str = \"{v}\";", "en"),
    ("{S}.configure {{ |c| c.{k} = '{v}' }}", "en"),
    ("new {S}Client(\"{v}\")", "en"),
    # Markdown
    ("| Service | Key |\n|---|---|\n| {s} | {v} |", "en"),
    ("- **{s} {w}**: {v}", "en"),
    ("* {s}: `{v}`", "en"),
    ("1. Set `{K}` to `{v}`", "en"),
    ("> {s} {w} (prod): {v}", "en"),
    ("| {k} | `{v}` |", "en"),
    # prose: value before name, parentheses, trailing punctuation, colon
    ("{v} is the {s} {w}.", "en"),
    ("The staging {s} {w} ({v}) was shared in the channel.", "en"),
    ("We rotated the {s} {w}: {v}.", "en"),
    ("Use this {s} {w} for now: \"{v}\"!", "en"),
    ("{v} <- {s} {w}, revoke after the demo", "en"),
    ("Got the {w} from {s}; it's {v}; saved in 1Password too.", "en"),
    # Korean
    ("{s} {w}은 {v}입니다.", "ko"),
    ("{s} {w}는 {v}로 바꿨어요", "ko"),
    ("{s} {w}가 {v}으로 설정돼 있음", "ko"),
    ("{s} {w}를 {v}로 교체함", "ko"),
    ("{v}을 {s} {w}로 쓰면 됩니다", "ko"),
    ("{v}를 {K}에 넣어주세요", "ko"),
    ("{K} 값: {v}", "ko"),
    ("{s} 키 {v} 는 만료됨", "ko"),
    ("{s} 토큰이 {v}인데 권한이 부족함", "ko"),
    ("운영 {s} 비밀번호: {v} (절대 공유 금지)", "ko"),
    ("curl 로 {s} 호출할 때 헤더에 X-API-Key: {v} 넣었음", "ko"),
    ("{s} {w} 재발급 완료 → {v}", "ko"),
    ("docker-compose.yml 에 {K}={v} 로 박혀 있었음", "ko"),
    ("{s}의 {w}({v})가 로그에 찍혔다", "ko"),
    ("새 {w}는 `{v}` 이고 {s} 콘솔에서 확인 가능", "ko"),
    ("{K}={v} 를 .env 에 추가했습니다.", "ko"),
]

# Further forms, in the dev part only (the held-out part's templates are unchanged): a value
# with its name after it in brackets, HTTP headers and query strings, inline tables, CSV, YAML
# lists, the possessive, arrows, and more Korean word orders.
_FORMS_DEV = [
    ("{v} ({s} {w})", "en"),
    ("the {s} account's {w}: {v}", "en"),
    ("{w} for {s} -> {v}", "en"),
    ("curl -H \"PRIVATE-TOKEN: {v}\" https://git.{s}.internal/api/v4/projects", "en"),
    ("GET /v1/export?access_token={v} HTTP/1.1", "en"),
    ("X-Auth-Token: {v}", "en"),
    ("{s} = {{ {k} = \"{v}\", region = \"eu\" }}", "en"),
    ("service,{k},owner\n{s},{v},ops", "en"),
    ("- {k}: {v}\n- region: eu", "en"),
    ("{s}.api.key: {v}", "en"),
    ("here's the {s} key `{v}` - keep it safe", "en"),
    ("Rotated {s} {w} {v} today; the old one is revoked.", "en"),
    ("{s} {w} = {v}", "en"),
    ("requests.post(url, auth=(\"api\", \"{v}\"))", "en"),
    ("{s} API 키 → {v}", "ko"),
    ("{s} 토큰 = {v}", "ko"),
    ("{s} {w} 값은 {v} 입니다", "ko"),
    ("{v} 이게 {s} {w}임", "ko"),
    ("{s} 비번 {v} 으로 로그인 성공", "ko"),
    ("{s}용 {w}: `{v}`", "ko"),
    ("INSERT INTO api_keys (service, {k}) VALUES ('{s}', '{v}');", "en"),
    ("UPDATE settings SET value = '{v}' WHERE name = '{k}';", "en"),
    ("client.setApiKey(\"{v}\");", "en"),
    ("let client = Client::new().bearer_auth(\"{v}\");", "en"),
    ("{s}.with_token('{v}')", "en"),
    ("new NetworkCredential(\"svc-{s}\", \"{v}\")", "en"),
    ("{{\"{S} API Key\": \"{v}\"}}", "en"),
    ("Access key ID,Secret access key\nAKIA{K},{v}", "en"),
    ("{s} pw: {v}", "en"),
    ("{S} {w}\n{v}\nCopy this now; it will not be shown again.", "en"),
    ("with:\n  {s}-api-key: {v}", "en"),
    ("set {K}={v}", "en"),
    ("{s} 비밀번호를 {v}로 변경했습니다", "ko"),
    ("{s}에서 받은 키: {v}", "ko"),
    ("{v} ← {s} {w}", "ko"),
    ("{s} {w}\n{v}\n(다시 표시되지 않음)", "ko"),
    ("aws configure set {k} {v}", "en"),
    ("git config --global {s}.token {v}", "en"),
    ("yarn config set npmAuthToken {v}", "en"),
    ("npm config set //registry.{s}.internal/:_authToken {v}", "en"),
    ("firebase functions:config:set {s}.key=\"{v}\"", "en"),
    ("docker run --rm -e \"{K}={v}\" api:latest", "en"),
    ("vault kv put secret/{s} {k}={v}", "en"),
    ("{s}: {{ token: {v} }}", "en"),
    ("the {s} key's {v}", "en"),
    ("GET https://maps.{s}.internal/api/geocode?address=x&key={v}&format=json", "en"),
    ("{s}.secret : {v}", "en"),
    ("level=info msg=\"request\" headers=\"map[Authorization:[Bearer {v}]]\"", "en"),
    ("{s} 토큰 알려드립니다: {v}", "ko"),
    ("{s} API 키를 {v}로 설정", "ko"),
    ("{s} 비번은 {v}", "ko"),
    ("키 값 {v} ({s})", "ko"),
    ("http POST api.{s}.internal/v1/jobs x-api-key:{v}", "en"),
    ("ansible_password: {v}", "en"),
    ("TF_VAR_{k}={v} terraform apply", "en"),
    ("const string {S}ApiKey = \"{v}\";", "en"),
    ("ENV['{K}'] ||= '{v}'", "en"),
    ("$_ENV['{K}'] = '{v}';", "en"),
    ("putenv(\"{K}={v}\");", "en"),
    ("std::env::set_var(\"{K}\", \"{v}\");", "en"),
    ("props.put(\"{s}.{c}\", \"{v}\");", "en"),
    ("**{S} token:** {v}", "en"),
    ("| {S} {w} | {v} |", "en"),
    ("| **{w}** | `{v}` |", "en"),
    ("{s} 시크릿을 {v}으로 교체", "ko"),
    ("{s} 키는 {v}(으)로 설정", "ko"),
    ("{s} 인증 토큰: {v}", "ko"),
    ("{K} 는 {v}", "ko"),
]

_WORDS_EN = ["api key", "token", "secret", "key", "password", "access token", "API key", "secret key"]
_WORDS_KO = ["API 키", "토큰", "시크릿", "키", "비밀번호", "액세스 토큰", "인증키", "시크릿 키"]
_SUFFIXES = ["api_key", "token", "secret", "key", "access_token", "secret_key", "apikey", "auth_token"]


def _positives(f: _F, part: int) -> list[Example]:
    forms = _FORMS[part::2] + (_FORMS_DEV if part == 0 else [])
    out = []
    for kind, svc, value, _ in _kinds(f):
        for _ in range(6):
            v = value()
            template, lang = forms[f.r.randrange(len(forms))]
            pw = svc in ("db", "smtp", "redis")
            suffix = f.r.choice(["password", "pass", "pwd"] if pw else _SUFFIXES)
            words = svc.split("_") + suffix.split("_")
            k = "_".join(words)
            c = words[0] + "".join(x.capitalize() for x in words[1:])
            w = f.r.choice(_WORDS_KO if lang == "ko" else _WORDS_EN)
            if pw:
                w = "비밀번호" if lang == "ko" else "password"
            name = svc.replace("_", " ")
            text = template.format(k=k, K=k.upper(), c=c, v=v, s=name, S=name.title().replace(" ", ""), w=w)
            out.append(Example(text, kind, (v,), lang))
    return out


_NEG_FORMS = [
    # (template, lang); {v} a non-secret value, {k}/{K}/{c}/{s} as above
    ("{K}=<YOUR_{S}_KEY>", "en"),
    ("{k}: \"<your-{s}-token>\"", "en"),
    ("{K}=xxx", "en"),
    ("{K}=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "en"),
    ("\"{k}\": \"********\"", "en"),
    ("{K}=changeme", "en"),
    ("{k} = \"CHANGE_ME\"", "en"),
    ("{K}=${{{K}}}", "en"),
    ("{K}: {{{{ .Values.{c} }}}}", "en"),
    ("{c} = os.getenv(\"{K}\")", "en"),
    ("const {c} = process.env.{K};", "en"),
    ("{s} {w}은 <발급받은 값>으로 채워 주세요", "ko"),
    ("{K} 값은 비워 두세요 (로컬은 changeme)", "ko"),
    ("curl -H \"Authorization: Bearer $TOKEN\" https://api.{s}.internal/v1/me", "en"),
    ("curl -H 'X-API-Key: <api-key>' https://api.{s}.internal/", "en"),
    ("postgresql://app@db.{s}.internal:5432/main", "en"),
    ("https://{s}.internal/docs/api-keys#rotate", "en"),
    ("see https://github.com/{s}/sdk/blob/main/README.md", "en"),
    ("mysql://root:${{DB_PASSWORD}}@db:3306/shop", "en"),
    ("password: \"{{{{ vault_db_password }}}}\"", "en"),
    ("- name: {K}\n  valueFrom:\n    secretKeyRef:\n      name: {s}\n      key: {k}", "en"),
    ("{k}_file = \"/run/secrets/{k}\"", "en"),
    ("| {k} | string | the {s} {w}, from the console |", "en"),
    ("- **{k}**: required; see the {s} dashboard", "en"),
    ("fix(auth): refresh the {s} {w} before it expires", "en"),
    ("{s} {w} 만료 시간을 3600초로 늘림", "ko"),
    ("{s} {w}을 환경 변수로 옮김 (코드에서 제거)", "ko"),
]


def _negatives(f: _F, part: int, count: int) -> list[Example]:
    s, r, uid = f.s, f.r, f.uid
    sha1 = lambda: hashlib.sha1(s(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    sha256 = lambda: hashlib.sha256(s(ALNUM, 12).encode()).hexdigest()  # noqa: E731
    plain = [b"hello world, this is a test", b"user@example.com", b"the quick brown fox jumps",
             b"{\"a\": 1}", b"Lorem ipsum dolor sit amet", b"admin:role:read-only"]
    b64text = lambda: base64.b64encode(r.choice(plain)).decode()  # noqa: E731
    svc = lambda: r.choice(["stripe", "datadog", "algolia", "slack", "sendgrid", "heroku", "okta", "snyk"])  # noqa: E731
    ver = lambda: f"{r.randint(0, 9)}.{r.randint(0, 40)}.{r.randint(0, 20)}"  # noqa: E731
    valued = [  # a non-secret value in a named or written form
        lambda: (f"commit {sha1()} fixes the {svc()} token refresh", "en"),
        lambda: (f"Merge {sha1()[:7]} into main", "en"),
        lambda: (f"git checkout {sha1()}", "en"),
        lambda: (f"sha256sum: {sha256()}  dist/app.tar.gz", "en"),
        lambda: (f"request_id={uid()}", "en"),
        lambda: (f"2024-03-02T10:11:12Z INFO trace_id={s(HEX, 32)} span_id={s(HEX, 16)}", "en"),
        lambda: (f"\"version\": \"{ver()}\"", "en"),
        lambda: (f"{svc()}-sdk=={ver()}", "en"),
        lambda: (f"image: ghcr.io/acme/api:{ver()}", "en"),
        lambda: (f"FROM python:3.{r.randint(8, 13)}-slim", "en"),
        lambda: (f"payload = \"{b64text()}\"", "en"),
        lambda: (f"echo {b64text()} | base64 -d", "en"),
        lambda: (f"user_id: {uid()}", "en"),
        lambda: (f"order {s(DIGITS, 10)} shipped", "en"),
        lambda: (f"path: /var/lib/{svc()}/{s(LOWER, 6)}/data.db", "en"),
        lambda: (f"see https://docs.{svc()}.com/reference/authentication", "en"),
        lambda: (f"curl https://api.{svc()}.internal/v1/status", "en"),
        lambda: (f"git clone https://github.com/acme/{s(LOWER, 6)}.git", "en"),
        lambda: (f"const userId = \"{uid()}\";", "en"),
        lambda: (f"| build | {sha1()[:10]} | passed |", "en"),
        lambda: (f"- fixed in `{sha1()[:12]}`", "en"),
        lambda: (f"커밋 {sha1()[:10]} 에서 {svc()} 연동 수정", "ko"),
        lambda: (f"요청 ID는 {uid()}입니다", "ko"),
        lambda: (f"버전은 {ver()}로 올렸음", "ko"),
        lambda: (f"파일 경로: /etc/{svc()}/config.yaml", "ko"),
        lambda: (f"{svc()} 문서 https://docs.{svc()}.com/keys 참고", "ko"),
        lambda: (f"class {svc().capitalize()}TokenProvider(BaseProvider):", "en"),
        lambda: (f"def get_{svc()}_api_key(self) -> str:", "en"),
        lambda: (f"checksum: md5:{s(HEX, 32)}", "en"),
        lambda: (f"etag \"{s(HEX, 32)}\" changed", "en"),
        lambda: (f"DEPLOY_SHA={sha1()}", "en"),
        lambda: (f"BUILD_ID={uid()}", "en"),
        lambda: (f"database_url = \"postgresql://localhost:5432/{s(LOWER, 5)}\"", "en"),
        lambda: (f"redis://cache.{svc()}.internal:6379/0", "en"),
        lambda: (f"jdbc:postgresql://db.internal:5432/{s(LOWER, 5)}?user=app", "en"),
        lambda: (f"wget https://releases.{svc()}.com/v{ver()}/cli.tar.gz", "en"),
        lambda: (f"npm install @{svc()}/sdk@{ver()}", "en"),
        lambda: (f"registry=https://npm.{svc()}.internal/", "en"),
        lambda: ("[pypi]\nrepository = https://upload.pypi.org/legacy/\nusername = __token__", "en"),
        lambda: (f"machine api.{svc()}.internal login deploy", "en"),
    ]
    named = _NEG_FORMS[part::2] + _NEG_FORMS  # the held-out part sees every negative form too
    out, seen = [], set()
    while len(out) < count:
        if r.random() < 0.6:
            text, lang = r.choice(valued)()
        else:
            template, lang = r.choice(named)
            sv = svc()
            suffix = r.choice(_SUFFIXES)
            words = [sv] + suffix.split("_")
            k = "_".join(words)
            c = words[0] + "".join(x.capitalize() for x in words[1:])
            w = r.choice(_WORDS_KO if lang == "ko" else _WORDS_EN)
            text = template.format(k=k, K=k.upper(), c=c, s=sv, S=sv.upper(), w=w)
        if text not in seen:
            seen.add(text)
            out.append(Example(text, "neg:forms", (), lang))
    return out


def forms(part: str) -> list[Example]:
    """The labelled examples of one part: "dev" (may be tuned on) or "heldout" (never)."""
    index = ("dev", "heldout").index(part)
    f = _F(random.Random(SEEDS[part]))
    positives = _positives(f, index)
    examples = positives + _negatives(f, index, len(positives) + 20)
    for e in examples:
        assert all(secret in e.text for secret in e.secrets), e
    return examples


if __name__ == "__main__":
    for name in ("dev", "heldout"):
        ex = forms(name)
        pos = [e for e in ex if e.positive]
        print(f"{name}: {len(pos)} positives in {len({e.kind for e in pos})} kinds, "
              f"{len(ex) - len(pos)} negatives; Korean: {sum(e.lang == 'ko' for e in ex)}")
