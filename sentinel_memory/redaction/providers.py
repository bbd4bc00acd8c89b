"""More strict provider formats: keys with a distinctive fixed prefix that the established scanners
(gitleaks, trufflehog, secretlint) find with no key word nearby and the main list in
redaction/formats.py does not hold. Each is a Format, the arguments of formats._provider, which
builds the rules; related providers share one rule, so that a text holding none of their prefixes
costs one test of the needles. The shapes are written here from the scanners' descriptions."""

from __future__ import annotations

from ..values import Value


class Format(Value):
    __slots__ = ("name", "body", "end", "needles")

    def __init__(self, name: str, body: str, end: str | None = None, needles: tuple[str, ...] | None = None) -> None:
        self.name = name
        self.body = body  # the key: its fixed prefix, then its shape
        self.end = end  # what must not follow it; None: no letter or digit
        self.needles = needles  # None: the literal prefixes of body


_HEX_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_LOWER_UUID = r"[a-z0-9]{8}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{12}"

MORE_FORMATS: tuple[Format, ...] = (
    # Amazon Bedrock API keys: long-lived ("ABSK" and base64) and short-lived (a fixed base64 of
    # the service's host, then the signed request).
    Format(
        "aws_bedrock_key",
        r"(?:ABSK[A-Za-z0-9+/]{109,}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%_\-]*)",
        r"(?![A-Za-z0-9+/=%_\-])",
    ),
    # Django's generated SECRET_KEY as `startproject` writes it: "django-insecure-" and 50 characters
    # of its alphabet (letters, digits and !@#$%^&*(-_=+)).
    Format("django_insecure_key", r"django-insecure-[a-z0-9!@#$%^&*(\-_=+)]{40,60}", r"(?![a-z0-9!@#$%^&*(\-_=+)])"),
    # Resend API keys (no scanner has them; read in its users' public code): "re_", an id of 8 to 12
    # characters, "_", and a secret of 20 to 32 letters and digits with both cases and a digit (so
    # that a name such as re_compile_... stays).
    Format(
        "resend_api_key",
        r"re_[A-Za-z0-9]{8,12}_(?=[A-Za-z0-9]{0,31}[0-9])(?=[A-Za-z0-9]{0,31}[A-Z])(?=[A-Za-z0-9]{0,31}[a-z])"
        r"[A-Za-z0-9]{20,32}",
    ),
    # Cloudflare account API keys and user/account tokens: 40 characters and an 8-hex checksum.
    Format("cloudflare_api_token", r"(?:cfk|cfut|cfat)_[A-Za-z0-9]{40}[a-f0-9]{8}"),
    # Salesforce connected-app consumer keys and refresh tokens; a sentence's full stop stays.
    Format(
        "salesforce_oauth_token",
        r"(?:3MVG9[A-Za-z0-9._+/=]{79,}|5AEP861[A-Za-z0-9._=]{79,})[A-Za-z0-9+/=_]",
        r"(?![A-Za-z0-9._+/=])",
    ),
    # ClickHouse Cloud API secrets; a run of lowercase hex after "4b1d" is a digest, not a key.
    Format("clickhouse_key", r"4b1d(?![0-9a-f]{38}(?![A-Za-z0-9]))[A-Za-z0-9]{38}"),
    # 42 School (intra) client secrets and user tokens.
    Format("intra42_secret", r"[su]-s4t2(?:ud|af)-[a-fA-F0-9]{64}", needles=("-s4t2",)),
    # Developer and operations platforms: Apify, Bitbucket Data Center, Endor Labs, Rootly,
    # SaladCloud, TruffleHog Enterprise, PostHog, NVIDIA, Teamwork, Azure API Management's
    # repository key, Nightfall.
    Format(
        "platform_token",
        r"(?:apify_api_[A-Za-z0-9\-]{36}"
        r"|BBDC-[A-Za-z0-9+/@_\-]{40,50}"
        r"|endr\+[A-Za-z0-9\-]{16}"
        r"|rootly_[a-f0-9]{64}"
        r"|salad_cloud_[A-Za-z0-9]{1,7}_[A-Za-z0-9]{7,235}"
        r"|thog-(?:key-[0-9a-f]{16}|secret-[0-9a-f]{32})"
        r"|phx_[A-Za-z0-9_]{43,48}"
        r"|nvapi-[A-Za-z0-9_\-]{64}"
        r"|tkn\.v1_[A-Za-z0-9]{71}="
        r"|git&[0-9]{12}&[A-Za-z0-9/+]{85}[A-Za-z0-9]=="
        r"|NF-[A-Za-z0-9]{32})",
        r"(?![A-Za-z0-9_\-+/@])",
    ),
    # Payments and commerce: Pagar.me, Razorpay, Ramp, Robinhood Crypto, Stripe payment-intent
    # client secrets, Ticket Tailor, Fleetbase, Flexport.
    Format(
        "commerce_token",
        r"(?:ak_live_[A-Za-z0-9]{30}"
        r"|rzp_(?:live|test)_[A-Za-z0-9]{14}"
        r"|ramp_(?:id_[A-Za-z0-9]{40}|sec_[A-Za-z0-9]{48})"
        r"|rh-api-" + _HEX_UUID + r"|pi_[A-Za-z0-9]{24}_secret_[A-Za-z0-9]{25}"
        r"|sk_[0-9]{4}_[0-9]{6}_[a-f0-9]{32}"
        r"|flb_live_[A-Za-z0-9]{20}"
        r"|shltm_[A-Za-z0-9_\-]{40})",
        r"(?![A-Za-z0-9_\-])",
    ),
    # Software services: Bannerbear, Ubidots, Voiceflow, FullStory, Zoho, PubNub, Adafruit IO
    # (whose keys always hold a digit).
    Format(
        "saas_token",
        r"(?:bb_(?:pr|ma)_[a-f0-9]{30}"
        r"|BBFF-[A-Za-z0-9]{30}"
        r"|VF\.(?:(?:DM|WS)\.)?[a-fA-F0-9]{24}\.[A-Za-z0-9]{16}"
        r"|na1\.[A-Za-z0-9+/]{100}={0,2}"
        r"|1000\.[a-f0-9]{32}\.[a-f0-9]{32}"
        r"|(?:pub-c-|sub-c-)" + _LOWER_UUID + r"|aio_(?=[A-Za-z]{0,27}[0-9])[A-Za-z0-9]{28})",
        r"(?![A-Za-z0-9_\-+/=])",
    ),
    # Webhook URLs whose path is the secret: Tines, Zapier.
    Format(
        "webhook_url",
        r"(?:https://[A-Za-z0-9_\-]+\.tines\.com/webhook/[a-z0-9]{32}/[a-z0-9]{32}"
        r"|https://hooks\.zapier\.com/hooks/catch/[A-Za-z0-9/]{12,})",
        r"(?![A-Za-z0-9/])",
        needles=(".tines.com/webhook/", "hooks.zapier.com/hooks/catch/"),
    ),
)
