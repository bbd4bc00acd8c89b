"""The strict redaction rules: PEM blocks and provider formats with a fixed prefix and shape,
applied to every field (docs/security.md). Each is a Rule; `_provider` builds them and works out
their needles (literal prefixes every match holds); redaction/providers.py holds more providers'
formats, built here the same way. redaction/rules.py puts the key-word rules after them."""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable

from ..lazy import lazy
from ..values import Value
from .gates import (
    _words,
)
from .providers import MORE_FORMATS
from .values import (
    _UUID,
)

REDACTED = "[REDACTED]"


class Rule(Value):
    """One redaction rule, always built by keyword."""

    __slots__ = ("name", "pattern", "strict", "groups", "accept", "needles", "gate")

    def __init__(
        self,
        *,
        name: str,
        pattern: re.Pattern,
        strict: bool,
        groups: tuple[str, ...] = (),
        accept: Callable[[re.Match, str], bool] | None = None,
        needles: tuple[str, ...] = (),
        gate: Callable[[str], bool] | None = None,
    ) -> None:
        self.name = name
        self.pattern = pattern
        self.strict = strict  # applied even with strict_only=True
        self.groups = groups  # the first of these that matched is replaced; () = whole match
        self.accept = accept  # (match, value) -> is it a secret?
        # Strings of which every match holds at least one; a text with none of them is skipped
        # (a fast substring test instead of a regular-expression scan). () = always run.
        self.needles = needles
        # A quicker test on the lowercased text, true for every text the rule can match; None = none.
        self.gate = gate


# A token must not start in the middle of a longer word ("task-..." is not an "sk-..." key) nor
# run on into one.
_START = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"
# The UUID shape in any letters and digits, as some providers fill it.
_ALNUM_UUID = r"[A-Za-z0-9]{8}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{4}-[A-Za-z0-9]{12}"


def _decoded_start(value: str) -> bytes:
    """The first 48 bytes a base64 value decodes to (a PEM block's header fits), b"" if none."""
    try:
        return binascii.a2b_base64(value[:64])
    except binascii.Error:
        return b""


def _provider(name: str, body: str, end: str = _END, needles: tuple[str, ...] | None = None) -> Rule:
    """A strict rule for a key with a fixed prefix and shape; the whole match goes. Unless given,
    the literal prefixes of the body's alternatives become the rule's needles."""
    return Rule(
        name=name,
        pattern=lazy(_START + body + end),
        strict=True,
        needles=_literal_prefixes(body) if needles is None else needles,
    )


def _literal_prefixes(body: str) -> tuple[str, ...]:
    """The literal strings one of which starts every match of body, or () if some alternative
    starts with a class, a repeat or a case-insensitive group (or has a prefix of one character)."""
    from re import _constants as C, _parser  # type: ignore[attr-defined]  # the re module's parser: the same syntax

    def of(items) -> list[str]:
        prefixes = [""]
        for op, av in items:
            if op is C.LITERAL:
                prefixes = [p + chr(av) for p in prefixes]
                continue
            if op is C.SUBPATTERN and not (av[1] & C.SRE_FLAG_IGNORECASE):
                inner = of(av[3])
            elif op is C.BRANCH:
                alternatives = [of(branch) for branch in av[1]]
                inner = [x for a in alternatives for x in a]
            else:
                inner = [""]
            prefixes = [p + q for p in prefixes for q in inner]
            break
        return prefixes

    found = of(_parser.parse(body).data)
    return tuple(sorted(set(found))) if all(len(p) >= 2 for p in found) and len(found) <= 16 else ()


# --- the rules ----------------------------------------------------------------------------------

FORMAT_RULES: tuple[Rule, ...] = (
    # PEM blocks first: their base64 body must be gone before the token rules look at it.
    # An unterminated block is redacted to the end of the text. Inside JSON the newlines are
    # "\n" escapes, which the block swallows just the same.
    Rule(
        name="pem_private_key",
        pattern=lazy(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|.*)",
            re.DOTALL,
        ),
        strict=True,
        needles=("-----BEGIN",),
    ),
    # The same block base64-encoded, as Kubernetes secrets (tls.key: LS0tLS1CRUdJTi...) and CI
    # variables (SIGNING_KEY_BASE64=...) hold it: "-----BEGIN " encoded, then whatever it
    # decodes to names a private key. An encoded certificate stays.
    Rule(
        name="pem_private_key_base64",
        pattern=lazy(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{100,}={0,2}"),  # (a header alone, as a pattern quotes it, stays)
        strict=True,
        accept=lambda m, v: b"PRIVATE KEY" in _decoded_start(v),
        needles=("LS0tLS1CRUdJTi",),
    ),
    # A GCP service-account file: its private_key is a PEM block (above); its key id goes too.
    Rule(
        name="gcp_private_key_id",
        # also in JSON written inside a JSON string (an environment variable, a manifest): \"private_key_id\"
        pattern=lazy(r"""\\?"private_key_id\\?"[ \t]*:[ \t]*\\?"(?P<value>[0-9a-f]{40})\\?\""""),
        strict=True,
        groups=("value",),
        needles=('"private_key_id"', 'private_key_id\\"'),
    ),
    _provider("aws_access_key_id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    _provider("aws_session_token", r"(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdzE)[A-Za-z0-9/+=]{40,}", ""),
    # 40 base64 characters right after an "aws secret" keyword. Forty lowercase hex digits
    # (a git SHA) are never taken for one.
    Rule(
        name="aws_secret_access_key",
        pattern=lazy(
            r"(?i:aws[_\-. ]?secret(?:[_\-. ]?access)?(?:[_\-. ]?key)?|secret[_\-. ]?(?:access[_\-. ]?)?key)"
            r"""(?:["']?[ \t]*(?::=|=>|[:=])[ \t]*["']?|[ \t]+)"""
            r"(?P<value>(?![0-9a-f]{40}(?![A-Za-z0-9/+]))[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        strict=True,
        groups=("value",),
        gate=_words("secret"),
    ),
    # Each form ends where its own characters do: a hyphen after a classic token (ghp_...-ci) is no
    # part of it, as it is of the dotted ghs_ form.
    _provider(
        "github_token",
        r"(?:ghs_[0-9]{1,20}_[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+(?![A-Za-z0-9_\-])"
        r"|gh[pousr]_[A-Za-z0-9_]{36,}(?![A-Za-z0-9_])|github_pat_[A-Za-z0-9_]{22,}(?![A-Za-z0-9_]))",
        "",
    ),
    _provider(
        "gitlab_token",
        r"(?:gl(?:pat|dt|rt|ptt|soat|cbt|imt|agent|oas|ffct|ft|suat)-[A-Za-z0-9_\-=]{20,}(?:\.[0-9a-z]{2,12}){0,2}"
        r"|GR1348941[A-Za-z0-9_\-]{20,})",
        "",
    ),
    # GitLab's session cookie (a Cookie header, curl -b): the value goes, the name stays.
    Rule(
        name="gitlab_session_cookie",
        pattern=lazy(r"_gitlab_session=(?P<value>[0-9a-z]{32,})(?![A-Za-z0-9])"),
        strict=True,
        groups=("value",),
        needles=("_gitlab_session=",),
    ),
    # (xoxc- and the xoxd- cookie, percent-encoded, are a browser session's: slackdump and the like)
    _provider(
        "slack_token",
        r"(?:(?:xox[bposec]|xoxe\.xox[bp]|xapp)-[A-Za-z0-9\-]{10,}|xoxd-[A-Za-z0-9%+/=\-]{10,}|xox[ar]-[A-Za-z0-9\-]{8,})",
        "",
    ),
    Rule(
        name="slack_webhook",
        pattern=lazy(
            r"(?<![A-Za-z0-9.\-])(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"(?P<value>[A-Za-z0-9_+\-]+/[A-Za-z0-9_/+\-]{8,}|[A-Za-z0-9_+/\-]{43,})"
        ),
        strict=True,
        groups=("value",),
        needles=("hooks.slack.com/",),
    ),
    _provider(
        "stripe_key",
        r"(?:sk_live_[A-Za-z0-9\-]{93}|(?:sk|rk)_(?:live|test|prod)_(?:[A-Za-z0-9]{16,}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{10,15})"
        r"|whsec_[A-Za-z0-9]{24,})",
    ),
    # Anthropic before OpenAI: both start with "sk-".
    _provider("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", ""),
    _provider(
        "openai_key",
        r"sk-(?:(?:proj|svcacct|service|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]*T3BlbkFJ[A-Za-z0-9_\-]+"
        r"|[A-Za-z0-9]{20,})",
        "",
    ),
    _provider("google_api_key", r"AIza[A-Za-z0-9_\-]{35}", ""),
    _provider("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_\-]{20,}", ""),
    _provider("google_oauth_token", r"ya29\.[A-Za-z0-9_\-]{10,}", ""),
    _provider("npm_token", r"npm_(?![a-z]+_)[A-Za-z0-9_]{36,}"),  # not npm_config_..., npm_package_...
    _provider("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ""),
    _provider("huggingface_token", r"(?:hf_[A-Za-z0-9]{34,}|api_org_[A-Za-z0-9]{34,})"),
    _provider(
        "sendgrid_key",
        r"SG\.(?:[A-Za-z0-9_\-]{20,24}\.[A-Za-z0-9_\-]{39,50}|[A-Za-z0-9_\-=.]{66})",
        r"(?![A-Za-z0-9_\-=])",
    ),
    _provider("twilio_key", r"(?:SK(?=[A-Za-z]{0,31}[0-9])[A-Za-z0-9]{32}|AC[0-9a-f]{32})"),
    _provider("mailgun_key", r"(?:key-(?:[a-z0-9]{32}|[A-Za-z0-9]{64})|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})"),
    _provider("digitalocean_token", r"do[opr]_v1_[a-fA-F0-9]{64}"),
    _provider("heroku_key", r"HRKU-[A-Za-z0-9_\-]{58,}", ""),
    _provider("databricks_token", r"dapi[a-fA-F0-9]{32}(?:-\d+)?"),
    _provider("shopify_token", r"shp(?:at|ca|pa|ss)_[A-Za-z0-9]{32,64}"),
    _provider("atlassian_token", r"AT(?:ATT|CTT)[A-Za-z0-9_\-=+/]{60,}", ""),
    _provider("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9_]{32,}"),
    _provider("notion_token", r"(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})"),
    _provider("doppler_token", r"dp\.(?:pt|st(?:\.[a-z0-9_\-]{2,35})?|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    _provider("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", ""),
    _provider("postman_key", r"PMAK-[A-Za-z0-9\-]{59}"),
    _provider("grafana_token", r"(?:glsa_[A-Za-z0-9_]{41}|glc_[A-Za-z0-9+/=]{32,})"),
    _provider("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}", ""),
    _provider("supabase_token", r"(?:sbp_[a-z0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,})"),
    _provider("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}", ""),
    _provider("replicate_token", r"r8_[A-Za-z0-9_\-]{37}", r"(?![A-Za-z0-9_\-])"),
    _provider("groq_key", r"gsk_[A-Za-z0-9]{48,}"),
    _provider("xai_key", r"xai-[A-Za-z0-9_]{60,}"),
    _provider("perplexity_key", r"pplx-[A-Za-z0-9]{40,}"),
    _provider(
        "newrelic_key",
        r"(?:NRAK-[A-Z0-9]{27}|NRI[IQ]-[A-Za-z0-9_\-]{25,32}|NR(?:JS|BR)-[a-f0-9]{19}|[a-f0-9]{36}NRAL)",
        r"(?![A-Za-z0-9_\-])",
        needles=("NRAK-", "NRII-", "NRIQ-", "NRJS-", "NRBR-", "NRAL"),
    ),
    _provider(
        "square_token", r"(?:sq0(?:atp|csp|i[a-z]{2}|c[a-z]{2})-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-+=]{22,})", ""
    ),
    _provider("mapbox_secret_token", r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}", ""),
    _provider("pulumi_token", r"pul-[a-z0-9]{40}"),
    _provider("terraform_cloud_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", "", needles=(".atlasv1.",)),
    _provider("firebase_fcm_server_key", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}", "", needles=(":APA91b",)),
    # Entra ID (Azure AD) client secrets: three characters, a digit, "Q~", then 31-34 more.
    Rule(
        name="azure_ad_client_secret",
        pattern=lazy(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        strict=True,
        needles=("Q~",),
    ),
    _provider("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # Discord bot token: base64 of the bot's numeric id, a timestamp, an HMAC.
    _provider(
        "discord_bot_token", r"[MNO][A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}", r"(?![A-Za-z0-9_\-])"
    ),
    Rule(
        name="discord_webhook",
        pattern=lazy(
            r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,25}/"
            r"(?P<value>[A-Za-z0-9_\-]{30,})"
        ),
        strict=True,
        groups=("value",),
        needles=("/api/webhooks/",),
    ),
    # Telegram bot token: the bot id, a colon, 35 characters ("bot123:AA..." in API URLs).
    Rule(
        name="telegram_bot_token",
        pattern=lazy(r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_\-]{34}(?![A-Za-z0-9_\-])"),
        strict=True,
        needles=(":A",),
    ),
    # Azure: storage-account keys in connection strings, and the signature of a SAS URL.
    Rule(
        name="azure_storage_key",
        pattern=lazy(r"(?i:AccountKey|SharedAccessKey)=(?P<value>[A-Za-z0-9+/]{20,}={0,2})"),
        strict=True,
        groups=("value",),
        gate=_words("accountkey=", "sharedaccesskey="),
    ),
    Rule(
        name="azure_sas_signature",
        pattern=lazy(r"(?<![A-Za-z0-9_])sig=(?P<value>[A-Za-z0-9%+/]{20,}={0,2})"),
        strict=True,
        groups=("value",),
        needles=("sig=",),
    ),
    # Providers whose formats gitleaks' rule set and the providers' own
    # documentation describe; the shapes are written here from those descriptions.
    _provider("openrouter_key", r"sk-or-v1-[a-f0-9]{64}"),
    _provider("langfuse_key", r"sk-lf-" + _UUID),
    _provider("google_oauth_refresh_token", r"1//0[A-Za-z0-9_\-]{40,}", r"(?![A-Za-z0-9_\-])"),
    _provider("docker_hub_token", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{24,}", r"(?![A-Za-z0-9_\-])"),
    _provider("bitbucket_token", r"ATBB[A-Za-z0-9]{32,}"),
    _provider("mailchimp_key", r"[0-9a-f]{32}-us[0-9]{1,2}", needles=("-us",)),
    _provider("airtable_token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    _provider("figma_token", r"fig(?:[dpuorh]|[uo][rh])_[A-Za-z0-9_=\-]{30,}", r"(?![A-Za-z0-9_=\-])"),
    _provider("hubspot_token", r"pat-(?:na|eu|ap)[0-9]-" + _ALNUM_UUID),
    _provider("vercel_token", r"vc[pikar]_[A-Za-z0-9]{24,}"),
    _provider("netlify_token", r"(?:nfp_[A-Za-z0-9_]{30,}|nfc_[A-Za-z0-9]{30,})"),
    _provider("grafana_legacy_api_key", r"eyJrIjoi[A-Za-z0-9]{40,}={0,3}", ""),
    _provider(
        "dropbox_token",
        r"(?:sl\.(?:u\.)?[A-Za-z0-9_\-=]{100,}|(?=A{0,10}[B-Za-z0-9])[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_\-=]{43})",
        r"(?![A-Za-z0-9_\-=])",
        needles=("sl.", "A" * 10),
    ),
    _provider("facebook_token", r"EAA[B-Z][A-Za-z0-9]{80,}"),
    _provider("braintree_token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    _provider("alibaba_access_key_id", r"LTAI[A-Za-z0-9]{12,21}"),
    _provider("tencent_secret_id", r"AKID[A-Za-z0-9]{32,34}"),
    _provider("twitter_bearer_token", r"A{20,24}(?=[A-Z]*[a-z0-9%])[A-Za-z0-9%]{60,}", needles=("A" * 20,)),
    _provider("salesforce_token", r"00[A-Za-z0-9]{13,16}![A-Za-z0-9._]{60,}", ""),
    _provider("asana_token", r"[0-9]/[0-9]{10,}(?:/[0-9]{10,})?:[a-f0-9]{32}", needles=(":",)),
    _provider("clickup_token", r"pk_[0-9]{6,10}_[A-Z0-9]{32}"),
    _provider("plaid_token", r"access-(?:sandbox|development|production)-" + _UUID),
    _provider("launchdarkly_key", r"(?<!rh-)(?:sdk|api)-" + _ALNUM_UUID, needles=("sdk-", "api-")),  # not rh-api-
    _provider("jfrog_token", r"(?:AKCp[A-Za-z0-9]{60,}|cmVmd[A-Za-z0-9]{59})"),
    _provider("clojars_token", r"CLOJARS_[A-Za-z0-9]{60}"),
    _provider(
        "onepassword_token",
        r"(?:ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"
        r"|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})",
        "",
    ),
    _provider("harness_token", r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    _provider("cloudflare_origin_ca_key", r"v1\.0-[A-Za-z0-9\-]{171}", r"(?![A-Za-z0-9\-])"),
    _provider("dynatrace_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    _provider("easypost_key", r"EZ[AT]K[A-Za-z0-9]{54}"),
    _provider(
        "flyio_token",
        r"(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3}|FlyV1 fm[0-9]+_[A-Za-z0-9+/=,_\-]{100,})",
        "",
        needles=("fo1_", "fm1", "fm2_", "FlyV1 "),
    ),
    _provider("infracost_key", r"ico-[A-Za-z0-9]{32}"),
    _provider("readme_key", r"rdme_[a-z0-9]{70}"),
    _provider("typeform_token", r"tfp_[A-Za-z0-9_\-.=]{40,}", ""),
    _provider("render_key", r"rnd_[A-Za-z0-9]{32,}"),
    _provider("rubygems_key", r"rubygems_[A-Za-z0-9]{48}"),
    _provider("shippo_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    _provider("brevo_key", r"x(?:keysib|smtpsib)-[A-Za-z0-9_\-]{81}", r"(?![A-Za-z0-9_\-])"),
    _provider("prefect_key", r"pnu_[A-Za-z0-9]{36}"),
    _provider("buildkite_token", r"bkua_[a-z0-9]{40}"),
    _provider("sonarqube_token", r"(?:sq[pau]_[a-f0-9]{40}|sqco_[A-Za-z0-9]{59})"),
    _provider("circleci_token", r"CCIPAT_[A-Za-z0-9]{20,}_[a-fA-F0-9]{40}"),
    _provider("contentful_token", r"CFPAT-[A-Za-z0-9_\-]{43}", r"(?![A-Za-z0-9_\-])"),
    _provider("langsmith_key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    _provider("pinecone_key", r"pcsk_[A-Za-z0-9_]{40,}"),
    _provider("tavily_key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"),
    _provider("elevenlabs_key", r"sk_[a-f0-9]{48}"),
    _provider("deepl_key", _UUID + ":fx", needles=(":fx",)),
    _provider("duffel_token", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}", ""),
    _provider("frameio_token", r"fio-u-[A-Za-z0-9_\-=]{64}", ""),
    _provider("scalingo_token", r"tk-us-[A-Za-z0-9_\-]{48}", ""),
    _provider("sourcegraph_token", r"(?:sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}|slk_[a-f0-9]{64})"),
    _provider("openshift_token", r"sha256~[A-Za-z0-9_\-]{43}", r"(?![A-Za-z0-9_\-])"),
    _provider("maxmind_key", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", needles=("_mmk",)),
    _provider("adobe_client_secret", r"p8e-[A-Za-z0-9]{32}"),
    _provider("yandex_token", r"(?:AQVN[A-Za-z0-9_\-]{35,38}|y0_Ag[A-Za-z0-9_\-]{40,})", r"(?![A-Za-z0-9_\-])"),
    _provider("azure_devops_pat", r"[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}", needles=("AZDO",)),
    # Formats that the tests of other scanners (gitleaks, trufflehog, secretlint) look for: Tailscale,
    # Flutterwave, Octopus Deploy, SettleMint, Defined Networking, Intercom, Authress. One rule, so
    # that a text holding none of their prefixes costs one test of the needles, not seven.
    _provider(
        "service_token",
        r"(?:tskey-[a-z]{2,20}-[A-Za-z0-9_]{6,}-[A-Za-z0-9_]{16,}"
        r"|FLW(?:SECK|PUBK)(?:_TEST)?-?(?:[A-Za-z0-9]{32}-X|[a-hA-H0-9]{12})"
        r"|API-[A-Z0-9]{26}"
        r"|sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}"
        r"|dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}"
        r"|dG9rOj[A-Za-z0-9+/]{40,}={0,2}"
        r"|(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_\-][A-Za-z0-9\-]{10,32}"
        r"\.[A-Za-z0-9+/_=\-]{30,120})",
        r"(?![A-Za-z0-9+/_=\-])",
        needles=("tskey-", "FLW", "API-", "sm_", "dnkey-", "dG9rOj", ".acc"),
    ),
    # The providers of redaction/providers.py.
    *(_provider(f.name, f.body, _END if f.end is None else f.end, f.needles) for f in MORE_FORMATS),
    Rule(
        name="teams_webhook",
        pattern=lazy(r"https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/(?P<value>[A-Za-z0-9@/\-]{40,})"),
        strict=True,
        groups=("value",),
        needles=(".webhook.office.com/",),
    ),
    # header.payload.signature, base64url; the header is JSON, so it starts with "eyJ" ('{"'), or
    # with "eyA", "ewo", "ew0", "ewk" ("{ ", "{\n", "{\r", "{\t") when the JSON was written with
    # spaces, and then both parts are long.
    Rule(
        name="jwt",
        pattern=lazy(
            r"(?<![A-Za-z0-9_\-])(?:eyJ[A-Za-z0-9_\-]{5,}={0,2}\.[A-Za-z0-9_\-]{5,}={0,2}\.[A-Za-z0-9_\-]*"
            r"|(?:eyA|ew[o0k])[A-Za-z0-9_\-]{12,}={0,2}\.e[yw][A-Za-z0-9_\-]{12,}={0,2}\.[A-Za-z0-9_\-]*)"
        ),
        strict=True,
        needles=("eyJ", "eyA", "ewo", "ew0", "ewk"),
    ),
)
