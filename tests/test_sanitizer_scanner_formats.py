"""Provider formats as wide as the established scanners' own patterns (gitleaks, trufflehog,
secretlint): every key of a shape one of them looks for goes whole, with no key word nearby, and
the words and short values that only share a prefix stay. Every fake is assembled at run time from
a split prefix and a seeded random body; none is a real credential."""

from __future__ import annotations

import random
import string

import pytest

from sentinel_memory.redaction.engine import REDACTED, redact, rules_hit

_R = random.Random(20261125)

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
ALNUM = string.ascii_letters + DIGITS
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
B64 = ALNUM + "+/"


def rand(alphabet: str, n: int, *, must: str = "") -> str:
    """n characters of alphabet with a digit and a letter (when the alphabet has both) and every
    character of must somewhere inside, never at either end."""
    while True:
        v = "".join(_R.choice(alphabet) for _ in range(n))
        for i, c in enumerate(must):
            at = 1 + (i * 7 + 3) % (n - 2)
            v = v[:at] + c + v[at + 1 :]
        has_digit = any(c.isdigit() for c in v) or not any(c.isdigit() for c in alphabet)
        has_alpha = any(c.isalpha() for c in v) or not any(c.isalpha() for c in alphabet)
        if has_digit and has_alpha:
            return v


def alnum_uuid(alphabet: str) -> str:
    return "-".join(rand(alphabet, n) for n in (8, 4, 4, 4, 12))


# (rule, fake key) in the scanners' shapes that the narrower formats missed.
WIDENED = [
    ("aws_access_key_id", "A3" + "T" + rand(UPPER + "234567", 17)),
    ("github_token", "gh" + "p_" + rand(ALNUM, 12) + "_" + rand(ALNUM, 23)),
    ("github_token", "gh" + "s_" + rand(DIGITS, 7) + "_" + ".".join(rand(ALNUM + "_-", n) for n in (20, 40, 30))),
    ("gitlab_token", "glp" + "at-" + rand(ALNUM, 6) + "=" + rand(ALNUM + "_-", 13)),
    ("slack_token", "xo" + "xa-" + rand(ALNUM, 8)),
    ("stripe_key", "sk" + "_test_" + rand(ALNUM, 12)),
    ("stripe_key", "sk" + "_live_" + rand(ALNUM + "-", 93, must="--")),
    ("openai_key", "sk" + "-" + rand(ALNUM, 20) + "T3Blbk" + "FJ" + rand(ALNUM + "_-", 20, must="-")),
    ("openai_key", "sk" + "-service-" + rand(ALNUM + "_-", 40)),
    ("google_oauth_token", "ya" + "29." + rand(ALNUM + "_-", 12)),
    ("npm_token", "np" + "m_" + rand(UPPER + DIGITS, 4) + "_" + rand(ALNUM, 31)),
    ("sendgrid_key", "S" + "G." + rand(ALNUM + "_-", 21) + "." + rand(ALNUM + "_-", 45)),
    ("sendgrid_key", "S" + "G." + rand(ALNUM + "_-", 30) + "=" + rand(ALNUM, 10) + "." + rand(ALNUM, 24)),
    ("twilio_key", "S" + "K" + rand(ALNUM, 32, must="Zq")),
    ("mailgun_key", "ke" + "y-" + rand(LOWER + DIGITS, 32, must="xz")),
    ("mailgun_key", "ke" + "y-" + rand(ALNUM, 64)),
    ("digitalocean_token", "do" + "r_v1_" + rand(UHEX, 64)),
    ("databricks_token", "da" + "pi" + rand(UHEX, 32)),
    ("shopify_token", "sh" + "pat_" + rand(ALNUM, 40, must="Zz")),
    ("atlassian_token", "ATA" + "TT" + rand(B64 + "_-=", 120, must="+/")),
    ("linear_key", "lin" + "_api_" + rand(ALNUM, 20) + "_" + rand(ALNUM, 19)),
    ("doppler_token", "dp" + ".st.prd_eu." + rand(ALNUM, 42)),
    ("postman_key", "PM" + "AK-" + rand(ALNUM, 59, must="Zz")),
    ("grafana_token", "gl" + "sa_" + rand(ALNUM + "_", 41, must="_")),
    ("grafana_token", "gl" + "c_" + rand(B64, 40) + "==="),
    ("supabase_token", "sb" + "p_" + rand(LOWER + DIGITS, 40, must="xyz")),
    ("replicate_token", "r" + "8_" + rand(ALNUM + "_-", 37, must="-_")),
    ("xai_key", "xa" + "i-" + rand(ALNUM, 40) + "_" + rand(ALNUM, 39)),
    ("newrelic_key", "NR" + "II-" + rand(ALNUM + "_-", 25)),
    ("newrelic_key", "NR" + "BR-" + rand(HEX, 19)),
    ("square_token", "sq0" + "idp-" + rand(ALNUM + "_-", 22)),
    ("square_token", "EA" + "AA" + rand(ALNUM + "_-", 30)),
    ("pulumi_token", "pu" + "l-" + rand(LOWER + DIGITS, 40, must="xyz")),
    ("hubspot_token", "pat" + "-na1-" + alnum_uuid(ALNUM)),
    ("salesforce_token", "00" + "E" + rand(ALNUM, 14) + "!" + rand(ALNUM + "._", 96)),
    ("launchdarkly_key", "sd" + "k-" + alnum_uuid(LOWER + DIGITS)),
    ("clojars_token", "CLO" + "JARS_" + rand(ALNUM, 60, must="AZ")),
    ("cloudflare_origin_ca_key", "v1" + ".0-" + rand(ALNUM + "-", 171, must="Zz")),
    ("dynatrace_token", "dt0" + "c01." + rand(ALNUM, 24, must="ab") + "." + rand(ALNUM, 64, must="cd")),
    ("flyio_token", "Fly" + "V1 fm3_" + rand(B64 + ",_-=", 140, must=",_-")),
    ("rubygems_key", "ruby" + "gems_" + rand(ALNUM, 48, must="Zz")),
    ("shippo_token", "shi" + "ppo_live_" + rand(UHEX, 40)),
    ("brevo_key", "xkey" + "sib-" + rand(ALNUM + "_-", 81, must="_-")),
    ("buildkite_token", "bk" + "ua_" + rand(LOWER + DIGITS, 40, must="xyz")),
    ("sonarqube_token", "sq" + "co_" + rand(ALNUM, 59)),
    ("circleci_token", "CCI" + "PAT_" + rand(ALNUM, 22) + "_" + rand(UHEX, 40)),
    ("sourcegraph_token", "sg" + "p_" + rand(UHEX, 16) + "_" + rand(UHEX, 40)),
    ("sourcegraph_token", "sl" + "k_" + rand(HEX, 64)),
    ("figma_token", "fi" + "gp_" + rand(ALNUM + "_=-", 44)),
    ("figma_token", "fi" + "gu_" + rand(ALNUM + "_-", 40)),
    ("netlify_token", "nf" + "p_" + rand(ALNUM, 12) + "_" + rand(ALNUM, 23)),
    ("alibaba_access_key_id", "LT" + "AI" + rand(ALNUM, 21)),
    ("service_token", "tsk" + "ey-ab-" + rand(ALNUM, 10, must="_") + "-" + rand(ALNUM + "_", 20)),
    ("service_token", "FLW" + "PUBK_TEST-" + rand(ALNUM, 32) + "-X"),
    ("service_token", "FLW" + "SECK_TEST-" + rand("abcdefghABCDEFGH" + DIGITS, 12, must="G")),
    ("service_token", "sm" + "_pat_" + rand(ALNUM, 16, must="Q")),
    ("service_token", "ext" + "_" + rand(ALNUM, 12, must="Q") + "." + rand(ALNUM, 5) + ".acc_" + rand(ALNUM, 20)
     + "." + rand(B64 + "_=-", 60)),
    ("jwt", "ew" + "o" + rand(ALNUM + "_-", 30) + ".ew" + rand(ALNUM + "_-", 40) + "." + rand(ALNUM + "_-", 43)),
    ("jwt", "ey" + "A" + rand(ALNUM + "_-", 30) + ".ey" + rand(ALNUM + "_-", 40) + "." + rand(ALNUM + "_-", 43)),
]


@pytest.mark.parametrize(("rule", "key"), WIDENED, ids=[f"{r}-{i}" for i, (r, _) in enumerate(WIDENED)])
def test_a_key_of_a_scanners_shape_goes_whole(rule, key):
    """A key in any shape a scanner's pattern for its prefix allows is replaced whole by its
    provider rule, even with only the strict rules, and the sentence around it stays."""
    text = f"The deploy failed because {key} was revoked; ask for a new one."
    expected = f"The deploy failed because {REDACTED} was revoked; ask for a new one."
    assert redact(text, strict_only=True) == (expected, 1)
    assert redact(text) == (expected, 1)
    assert rules_hit(text, strict_only=True) == [rule]


def test_a_slack_webhook_written_without_its_scheme_loses_its_path():
    """A Slack webhook written without https://, its path one run of characters with '+', keeps
    its host and loses the path."""
    path = rand(ALNUM + "+", 44, must="+")
    text = f"posting to hooks.slack.com/services/{path} from the release job"
    assert redact(text, strict_only=True) == (
        f"posting to hooks.slack.com/services/{REDACTED} from the release job", 1)


def test_a_gitlab_session_cookie_loses_its_value_and_keeps_its_name():
    """GitLab's session cookie in a curl command: the value goes, the cookie's name stays."""
    value = rand(LOWER + DIGITS, 32)
    text = f"curl -b '_gitlab_session={value}' https://gitlab.example.com/api/v4/user"
    assert redact(text, strict_only=True) == (
        f"curl -b '_gitlab_session={REDACTED}' https://gitlab.example.com/api/v4/user", 1)


# (rule, fake key) for providers with a distinctive prefix that no format held before.
ADDED = [
    ("aws_bedrock_key", "AB" + "SK" + rand(B64, 130) + "="),
    ("aws_bedrock_key", "bedrock-api-key-" + "YmVkcm9jay5hbWF6b25hd3MuY29t" + rand(B64, 60) + "%3D"),
    ("cloudflare_api_token", "cf" + "ut_" + rand(ALNUM, 40) + rand(HEX, 8)),
    ("cloudflare_api_token", "cf" + "k_" + rand(ALNUM, 40) + rand(HEX, 8)),
    ("salesforce_oauth_token", "3MV" + "G9" + rand(ALNUM + "._", 90) + "Q"),
    ("salesforce_oauth_token", "5AE" + "P861" + rand(ALNUM + "._=", 90) + "Q"),
    ("clickhouse_key", "4b" + "1d" + rand(ALNUM, 38, must="Qz")),
    ("intra42_secret", "s-s4" + "t2ud-" + rand(HEX, 64)),
    ("intra42_secret", "u-s4" + "t2af-" + rand(HEX, 64)),
    ("platform_token", "apify" + "_api_" + rand(ALNUM, 36)),
    ("platform_token", "BB" + "DC-" + rand(ALNUM + "+/@_-", 44)),
    ("platform_token", "en" + "dr+" + rand(ALNUM, 16)),
    ("platform_token", "roo" + "tly_" + rand(HEX, 64)),
    ("platform_token", "salad" + "_cloud_" + rand(ALNUM, 5) + "_" + rand(ALNUM, 60)),
    ("platform_token", "thog" + "-secret-" + rand(HEX, 32)),
    ("platform_token", "ph" + "x_" + rand(ALNUM + "_", 45)),
    ("platform_token", "nv" + "api-" + rand(ALNUM + "_-", 64)),
    ("platform_token", "tkn" + ".v1_" + rand(ALNUM, 71) + "="),
    ("platform_token", "git" + "&" + rand(DIGITS, 12) + "&" + rand(B64, 85) + _R.choice(ALNUM) + "=="),
    ("platform_token", "N" + "F-" + rand(ALNUM, 32)),
    ("commerce_token", "ak" + "_live_" + rand(ALNUM, 30)),
    ("commerce_token", "rz" + "p_live_" + rand(ALNUM, 14)),
    ("commerce_token", "ramp" + "_sec_" + rand(ALNUM, 48)),
    ("commerce_token", "rh" + "-api-" + alnum_uuid(HEX)),
    ("commerce_token", "p" + "i_" + rand(ALNUM, 24) + "_secret_" + rand(ALNUM, 25)),
    ("commerce_token", "s" + "k_" + rand(DIGITS, 4) + "_" + rand(DIGITS, 6) + "_" + rand(HEX, 32)),
    ("commerce_token", "flb" + "_live_" + rand(ALNUM, 20)),
    ("commerce_token", "shl" + "tm_" + rand(ALNUM + "_-", 40)),
    ("saas_token", "bb" + "_pr_" + rand(HEX, 30)),
    ("saas_token", "BB" + "FF-" + rand(ALNUM, 30)),
    ("saas_token", "V" + "F.DM." + rand(HEX, 24) + "." + rand(ALNUM, 16)),
    ("saas_token", "na" + "1." + rand(B64, 100)),
    ("saas_token", "10" + "00." + rand(HEX, 32) + "." + rand(HEX, 32)),
    ("saas_token", "su" + "b-c-" + alnum_uuid(LOWER + DIGITS)),
    ("saas_token", "ai" + "o_" + rand(ALNUM, 28)),
    ("webhook_url", "https://acme-corp.tines" + ".com/webhook/" + rand(LOWER + DIGITS, 32) + "/"
     + rand(LOWER + DIGITS, 32)),
    ("webhook_url", "https://hooks.zapier" + ".com/hooks/catch/" + rand(DIGITS, 7) + "/" + rand(LOWER + DIGITS, 6) + "/"),
]


@pytest.mark.parametrize(("rule", "key"), ADDED, ids=[f"{r}-{i}" for i, (r, _) in enumerate(ADDED)])
def test_a_key_with_a_distinctive_prefix_goes_with_no_key_word_nearby(rule, key):
    """A key whose prefix alone names its provider is replaced whole, with no key word nearby,
    even with only the strict rules."""
    test_a_key_of_a_scanners_shape_goes_whole(rule, key)


# Words and values that only share a prefix with a widened format, or are too short for it.
LOOKALIKES = [
    "npm_package_dependencies_left_pad_version_number_xy",
    "npm_config_registry_https_registry_npmjs_org_mirror",
    "sk_test_placeholder",
    "rk_live_productionmode",
    "xoxo-goodnight",
    "xoxa-hello",
    "ya29.short",
    "SKELETONKEYSFORTHEWHOLEAPPLICATIONS",
    "key-value-store",
    "v1.0-beta",
    "sdk-integration-guide-v2-final-draft",
    "nfc_adapter_default_configuration_value_name",
    "dt0c01.short",
    "FlyV1 fm2_short",
    "_gitlab_session=<session>",
    "hooks.slack.com/services/",
    "ewok.ewok.ewok",
    "eyAbout.eyeglasses.everything",
    "figure_1_caption_for_the_results_section_x",
    "glsa_short_token",
    "lin_api_docs",
    "tskey-auth-short",
    "SG.x.y",
    "pul-request",
    "EAAA",
    "PMAK-short",
    "ABSK-1234",
    "bedrock-api-key",
    "3MVG9 is the consumer key prefix",
    "4b1d" + "0123456789abcdef0123456789abcdef012345",
    "s-s4t2ud-",
    "phx_short",
    "NF-123",
    "sk_2024_release",
    "pi_approximation_secret_sauce",
    "ramp_id_column",
    "1000.50 EUR",
    "na1.example",
    "aio_" + "connectionpoolmanagerinstancex",
    "aio_http_session",
    "sub-c-section",
    "https://hooks.zapier.com/hooks/catch/",
    "VF.DM.short",
    "BBFF-ff",
]


@pytest.mark.parametrize("word", LOOKALIKES)
def test_words_and_short_values_sharing_a_prefix_stay(word):
    """A word or short value that only shares a provider prefix is not a key: nothing changes."""
    text = f"See {word} in the notes; it explains the setting."
    assert redact(text) == (text, 0)
