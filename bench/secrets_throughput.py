"""Throughput of the redaction path of log_memory, this checkout beside another one.

    python bench/secrets_throughput.py --against DIR [--rounds 11] [--passes 5] [--mode prepare|log]

DIR holds another checkout's `sentinel_memory` package (for example `git archive <commit>
sentinel_memory | tar -x -C DIR`). Each round starts one fresh process per checkout, in
alternating order so that the machine's slow spells hit both alike; each process runs
`sentinel_memory.record.records.prepare` (trim, NFC, redaction with every rule, id: what log_memory
does before it writes) over every text of four corpus parts (bench/corpora/own.dev.jsonl,
own.held-out.jsonl, external.dev.jsonl and external.held-out.jsonl), --passes times, and reports its median
pass in CPU time (process_time: on a shared machine the wall clock mostly measures the others). With --mode log each pass instead calls log_memory in-process (tools.answers.log: the lock,
the redaction, the atomic write) for about 200 of those texts, each a new record in a fresh
memory file. Printed: the median over the rounds of each side's texts per second, and the ratio
(time here / time there; above 1 means slower here), of the medians and round by round.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import json, statistics, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2])
from fakes import load
from sentinel_memory.record.records import prepare
from sentinel_memory.tools.answers import log
texts = [e.text for name in ("own", "external") for part in ("dev", "held-out") for e in load(name, part)]
prepare("warm", "up", texts[0])
mode, passes = sys.argv[3], int(sys.argv[4])
times = []
if mode == "prepare":  # CPU time of this process: the other processes of a busy machine count less
    for _ in range(passes):
        start = time.process_time()
        for t in texts:
            prepare("bench", "what the instructions lacked", t)
        times.append(time.process_time() - start)
else:  # log: log_memory in-process, each text a new record, into a fresh memory file per pass
    texts = texts[:: max(1, len(texts) // 200)]
    for _ in range(passes):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / ".context" / "memory_log.jsonl"
            path.parent.mkdir()
            start = time.perf_counter()
            for i, t in enumerate(texts):
                log(path, "bench", f"what the instructions lacked {i}", t)
            times.append(time.perf_counter() - start)
print(json.dumps({"texts": len(texts), "median": statistics.median(times)}))
"""


def _run(root: Path, mode: str, passes: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(root), str(HERE), mode, str(passes)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, type=Path, help="a directory holding another sentinel_memory")
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument(
        "--mode",
        choices=("prepare", "log"),
        default="prepare",
        help="prepare: the redaction path alone; log: log_memory in-process "
        "(about 200 texts, each a new record in a fresh memory file)",
    )
    args = parser.parse_args(argv)
    sides = {"this checkout": HERE.parent, str(args.against): args.against.resolve()}
    if not (args.against / "sentinel_memory").is_dir():
        print(f"{args.against} holds no sentinel_memory package; give the root of another checkout.")
        return 2
    medians: dict[str, list[float]] = {name: [] for name in sides}
    texts = 0
    for i in range(args.rounds):
        order = list(sides.items()) if i % 2 == 0 else list(reversed(sides.items()))
        for name, root in order:
            result = _run(root, args.mode, args.passes)
            texts = result["texts"]
            medians[name].append(result["median"])
    for name, values in medians.items():
        m = statistics.median(values)
        print(
            f"{name:<40} {texts / m:>9,.0f} texts/s  (median pass {m * 1000:.1f} ms over {texts} texts; "
            f"rounds {min(values) * 1000:.1f}-{max(values) * 1000:.1f} ms)"
        )
    here, there = (statistics.median(v) for v in medians.values())
    paired = sorted(a / b for a, b in zip(*medians.values(), strict=True))
    print(
        f"ratio (time here / time there): {here / there:.3f} of the medians; per round "
        f"{statistics.median(paired):.3f} median, {paired[0]:.3f}-{paired[-1]:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
