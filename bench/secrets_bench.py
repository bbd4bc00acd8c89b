"""Recall, false positives and throughput of redaction.engine.redact, beside detect-secrets, on the
corpora of bench/corpora/ (one example a line; bench/fakes.py fills their fakes from one seed; each
corpus has a "dev" part, which rules may be tuned on, and a "held-out" part, which is only ever
scored): own (the tuning corpus, own.dev.jsonl, which the rules were fitted to, and the held-out
corpus, own.held-out.jsonl, written before a round of rules), external (built from what other
scanners' tests look for), forms (the ways people write a credential down), and seven corpora
written without sight of the rules: writer_a (lessons as an agent logs them), writer_b
(configuration and operations snippets), writer_c (chat, incidents and HTTP captures), writer_d
(long lessons with pasted snippets, shorthand notes, less common languages, Korean-dominant),
writer_e (QA accounts, data and mobile settings, runbooks with Korean headings), writer_f (a
team's file over months: terse notes, terminal output, JSON blobs, Slack-style Korean), writer_g
(a balanced mixture of all of these, written after the last rule); and the time of hostile inputs
of the maximum field size.

    python bench/secrets_bench.py [--kinds] [--repeat N]

Recall: a positive counts as caught when every labelled secret substring is gone from the output.
False positive: a negative whose text changed at all. detect-secrets (dev-only, see
requirements-bench.txt) runs in-process with its default plugins and filters over the same texts
(one temporary file each); a secret counts as found when any value it reports overlaps it, and any
report on a negative is a false positive. With detect-secrets missing only our column is shown.

Hostile inputs (bench/corpora/hostile.jsonl) are 1,024-byte texts built to make the patterns
backtrack; each is redacted --repeat times with all rules and with strict_only, and the median of
each is printed, slowest first. Then each at 16 and 64 KiB (a record written by hand has no field
limit; what the tools show of it is redacted): the time at 64 KiB and its ratio to 16 KiB, which
is about 4 for a rule whose time grows with the text and 16 for one whose time grows with its square.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import PARTS, Example, hostile, load  # noqa: E402

from sentinel_memory.record.records import normalize, prepare  # noqa: E402
from sentinel_memory.redaction.engine import redact  # noqa: E402

# The kinds of the tuning corpus beyond the ones the product promises by name (further providers).
FURTHER_KINDS = frozenset(
    """
    aws_session_token google_oauth_token stripe_webhook_secret slack_app_token postman grafana
    sentry supabase planetscale replicate groq xai perplexity newrelic square mapbox pulumi
    terraform_cloud age firebase_fcm azure_ad_client_secret gitlab_routable gitlab_job_token
    stripe_prod openrouter langfuse google_refresh docker_hub bitbucket mailchimp newrelic_license
    newrelic_insert airtable figma hubspot vercel netlify supabase_secret grafana_legacy dropbox
    dropbox_long_lived facebook braintree alibaba tencent twitter_bearer salesforce asana clickup
    plaid launchdarkly jfrog clojars onepassword harness cloudflare_origin_ca dynatrace easypost
    flyio infracost readme typeform render rubygems shippo brevo prefect buildkite sonarqube
    circleci contentful langsmith pinecone tavily elevenlabs deepl duffel sourcegraph openshift
    maxmind adobe yandex azure_devops teams_webhook
    """.split()
)


def _spans(text: str, needle: str) -> list[tuple[int, int]]:
    out, start = [], text.find(needle)
    while start != -1 and needle:
        out.append((start, start + len(needle)))
        start = text.find(needle, start + 1)
    return out


def ours(example: Example) -> tuple[bool, bool]:
    """(every secret gone, text changed)."""
    out, _ = redact(example.text)
    return all(s not in out for s in example.secrets), out != example.text


def logged(example: Example) -> tuple[bool, bool]:
    """(every secret gone, text changed) for the text as log_memory stores it: the lesson of a
    record prepared by sentinel_memory.record.records.prepare (trimmed, NFC, then redacted with all the rules)."""
    out = prepare("bench", "what the instructions lacked", example.text).lesson
    return all(s not in out for s in example.secrets), out != normalize(example.text)


def detect_secrets_runner(examples: list[Example]):
    """A function Example -> (every secret found, anything reported), or None if not installed.

    detect-secrets scans files, so each text is written to its own temporary .txt file and the
    whole set is scanned once, in-process, with the default plugins and filters (what
    `detect-secrets scan` does); the time of that scan is what the throughput row shows."""
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        return None
    import tempfile

    found: dict[int, list[tuple[int, int]]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, example in enumerate(examples):
            path = Path(tmp) / f"example_{i:04d}.txt"
            path.write_text(example.text, encoding="utf-8")
            paths.append(str(path))
        start = time.perf_counter()
        with default_settings():
            collection = SecretsCollection(root=tmp)
            collection.scan_files(*paths)
        elapsed = time.perf_counter() - start
        for filename, secret in collection:
            i = int(Path(filename).stem.split("_")[1])
            lines = examples[i].text.split("\n")
            offset = sum(len(line) + 1 for line in lines[: secret.line_number - 1])
            line = lines[secret.line_number - 1]
            value = secret.secret_value or ""
            spans = [(offset + a, offset + b) for a, b in _spans(line, value)]
            found[i] += spans or [(offset, offset + len(line))]  # no value: the whole line
    index = {id(e): i for i, e in enumerate(examples)}

    def run(example: Example) -> tuple[bool, bool]:
        hits = found.get(index[id(example)], [])
        caught = all(
            any(a < fb and fa < b for a, b in _spans(example.text, s) for fa, fb in hits) for s in example.secrets
        )
        return caught, bool(hits)

    run.elapsed = elapsed  # type: ignore[attr-defined]
    return run


def evaluate(run, examples: list[Example]) -> dict:
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    caught = fps = 0
    missed: list[Example] = []
    flagged: list[Example] = []
    start = time.perf_counter()
    results = [run(e) for e in examples]
    elapsed = getattr(run, "elapsed", None) or time.perf_counter() - start
    for example, (all_gone, changed) in zip(examples, results, strict=True):
        if example.positive:
            per_kind[example.kind][1] += 1
            if all_gone:
                caught += 1
                per_kind[example.kind][0] += 1
            else:
                missed.append(example)
        elif changed:
            fps += 1
            flagged.append(example)
    pos = sum(e.positive for e in examples)
    neg = len(examples) - pos
    size = sum(len(e.text.encode()) for e in examples)
    return {
        "recall": caught / pos,
        "fpr": fps / neg,
        "per_kind": per_kind,
        "missed": missed,
        "flagged": flagged,
        "per_sec": len(examples) / elapsed,
        "mb_s": size / elapsed / 1e6,
        "caught": caught,
        "fps": fps,
        "pos": pos,
        "neg": neg,
    }


def hostile_timings(repeat: int) -> list[tuple[str, int, float, float]]:
    """(name, bytes, median ms with all rules, median ms with strict_only), slowest first."""
    rows = []
    for name, text in hostile().items():
        medians = []
        for strict_only in (False, True):
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                redact(text, strict_only=strict_only)
                times.append(time.perf_counter() - start)
            medians.append(statistics.median(times) * 1000)
        rows.append((name, len(text.encode()), medians[0], medians[1]))
    return sorted(rows, key=lambda row: -row[2])


def hostile_growth() -> list[tuple[str, float, float]]:
    """(name, seconds at 16 KiB, seconds at 64 KiB) of each hostile input, all rules, the best of
    three runs, the slowest at 64 KiB first."""
    small, large = hostile(16 << 10), hostile(64 << 10)
    rows = []
    for name in small:
        best = []
        for text in (small[name], large[name]):
            runs = []
            for _ in range(3):
                start = time.perf_counter()
                redact(text)
                runs.append(time.perf_counter() - start)
            best.append(min(runs))
        rows.append((name, best[0], best[1]))
    return sorted(rows, key=lambda row: -row[2])


def _table(names: list[str], rows: list[tuple[str, list[str]]], first: str = "metric") -> None:
    widths = [max(18, len(n)) for n in names]
    print(f"| {first:<24} | " + " | ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True)) + " |")
    print(f"|{'-' * 26}|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for label, cells in rows:
        print(f"| {label:<24} | " + " | ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)) + " |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", action="store_true", help="also print recall per credential kind")
    parser.add_argument(
        "--repeat", type=int, default=21, metavar="N", help="runs per hostile input; the median is printed (default 21)"
    )
    args = parser.parse_args(argv)

    examples = load("own", "dev")
    columns = _columns(examples)
    first = next(iter(columns.values()))
    ko = [e for e in examples if e.lang == "ko"]
    print(
        f"TUNING corpus (bench/corpora/own.dev.jsonl): {first['pos']} positives ({len(first['per_kind'])} kinds), "
        f"{first['neg']} negatives; Korean: {sum(e.positive for e in ko)} positives, "
        f"{sum(not e.positive for e in ko)} negatives; seed fixed\n"
    )
    names = list(columns)
    further = FURTHER_KINDS

    def part_recall(c: dict, in_further: bool) -> str:
        got, total = (sum(v[i] for k, v in c["per_kind"].items() if (k in further) == in_further) for i in (0, 1))
        return f"{got / total:.3f} ({got}/{total})"

    cells = [
        ("recall", lambda c: f"{c['recall']:.3f} ({c['caught']}/{c['pos']})"),
        (f"  {len(first['per_kind']) - len(further)} main kinds", lambda c: part_recall(c, False)),
        (f"  {len(further)} further providers", lambda c: part_recall(c, True)),
        ("false-positive rate", lambda c: f"{c['fpr']:.3f} ({c['fps']}/{c['neg']})"),
        ("texts per second", lambda c: f"{c['per_sec']:,.0f}"),
        ("throughput", lambda c: f"{c['mb_s']:.2f} MB/s"),
    ]
    _table(names, [(label, [cell(columns[n]) for n in names]) for label, cell in cells])

    held = load("own", "held-out")
    held_columns = _columns(held)
    h = next(iter(held_columns.values()))
    hko = [e for e in held if e.lang == "ko"]
    print(
        f"\nHELD-OUT corpus (bench/corpora/own.held-out.jsonl, never tuned on): {h['pos']} positives "
        f"({len(h['per_kind'])} kinds), {h['neg']} negatives; Korean: {sum(e.positive for e in hko)} positives, "
        f"{sum(not e.positive for e in hko)} negatives; seed fixed\n"
    )
    _table(
        names,
        [
            (label, [cell(held_columns[n]) for n in names])
            for label, cell in cells
            if "kinds" not in label and "providers" not in label
        ],
    )

    if args.kinds:
        print()
        _table(
            names,
            [(kind, ["{}/{}".format(*columns[n]["per_kind"][kind]) for n in names]) for kind in first["per_kind"]],
            first="kind",
        )

    timings = hostile_timings(args.repeat)
    print(
        f"\nhostile inputs: {len(timings)} texts of {min(t[1] for t in timings)}-{max(t[1] for t in timings)} "
        f"bytes, median of {args.repeat} runs each; slowest first"
    )
    print(
        f"  all rules:   worst {timings[0][2]:.2f} ms ({timings[0][0]!r}), "
        f"median of the medians {statistics.median(t[2] for t in timings):.2f} ms"
    )
    strict = max(timings, key=lambda t: t[3])
    print(
        f"  strict_only: worst {strict[3]:.2f} ms ({strict[0]!r}), "
        f"median of the medians {statistics.median(t[3] for t in timings):.2f} ms"
    )
    for name, size, full, strict_ms in timings[:5]:
        print(f"    {name!r:<28} {size:>5} B  {full:6.2f} ms  (strict_only {strict_ms:.2f} ms)")

    growth = hostile_growth()
    print(
        "\nhostile inputs at 16 and 64 KiB, all rules, the slowest at 64 KiB first (ratio ~4: linear, ~16: quadratic)"
    )
    for name, small, large in growth[:5]:
        print(f"    {name!r:<34} {large * 1000:8.1f} ms  x{large / small:4.1f}")
    print(f"    the largest ratio: x{max(g[2] / g[1] for g in growth):.1f}")

    summary = [("tuning (own)", first, columns), ("held-out (own)", h, held_columns)]
    for label, name in SCORED:
        for part in PARTS:
            cols = _columns(load(name, part), logged)
            summary.append((f"{label} {part.replace('-', '')}", cols["sentinel-memory"], cols))
    ds_name = next((n for n in columns if n.startswith("detect-secrets")), None)
    print(
        "\nSUMMARY (external parts scored through sentinel_memory.record.records.prepare, as log_memory stores a lesson)\n"
    )
    head = ["corpus", "texts", "recall", "false positives"] + (
        [f"{ds_name} recall", f"{ds_name} FP"] if ds_name else []
    )
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for label, result, cols in summary:
        row = [
            label,
            f"{result['pos']} + {result['neg']}",
            f"{result['recall']:.3f} ({result['caught']}/{result['pos']})",
            f"{result['fpr']:.3f} ({result['fps']}/{result['neg']})",
        ]
        if ds_name:
            d = cols[ds_name]
            row += [f"{d['recall']:.3f}", f"{d['fpr']:.3f} ({d['fps']}/{d['neg']})"]
        print("| " + " | ".join(row) + " |")

    shown = [("tuning", first), ("held-out", h)] + [(label, r) for label, r, _ in summary[2:] if label.endswith(" dev")]
    for part, result in shown:
        for label, key in (("missed by sentinel-memory", "missed"), ("changed negatives", "flagged")):
            items = result[key]
            if items:
                print(f"\n{part}, {label}:")
                for e in items:
                    print(f"  [{e.kind}] {redact(e.text)[0][:200]!r}")
    return 0


# The corpora scored through prepare, as the summary names them: bench/corpora/NAME.PART.jsonl.
SCORED = [("external", "external"), ("forms", "forms")] + [(f"writer {w.upper()}", f"writer_{w}") for w in "abcdefg"]


def _columns(examples: list[Example], run=ours) -> dict[str, dict]:
    columns = {"sentinel-memory": evaluate(run, examples)}
    ds = detect_secrets_runner(examples)
    if ds is not None:
        columns[f"detect-secrets {version('detect-secrets')}"] = evaluate(ds, examples)
    return columns


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
